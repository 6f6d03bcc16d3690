"""A release that is recorded in the budget ledger before its noise exists.

This is the one place where the app and the CLI draw noise for publication: the spend is
committed (one SQLite transaction, durable) first, then the noise is drawn. If the program dies
in between, the budget is wasted but nothing was released unrecorded; a refused spend (cap
reached, no cap set) raises before any noise is drawn.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

import numpy as np

from dpgui.core.mechanism import CONSISTENCY_METHODS, Release, release
from dpgui.core.noise import RandomSource
from dpgui.core.plan import MISSING_RULE_TEXT, Plan
from dpgui.errors import ParameterError
from dpgui.report.bundle import ReleaseInfo
from dpgui.report.ledger import Ledger

MECHANISM = "discrete_laplace_tree"


def check_missing_rule(plan: Plan, missing: str = "auto") -> str:
    """The missing-value rule a release with ``plan`` applies (docs/design.md "Missing values"), or a
    ParameterError before anything is spent.

    The rule is the neighbour model's (``"bucket"`` under change, ``"drop"`` under add/remove), never
    the caller's or the data's. ``missing`` is what an older caller asked for: ``"error"`` (stop at a
    missing value) is refused, because whether the release happens would then depend on the data;
    other values ("auto", "drop", "bucket") are accepted and the neighbour model's rule applies.
    """
    if missing == "error":
        raise ParameterError(
            "the missing-value policy 'error' is retired: stopping at a missing value makes publishing depend on the data",
            "leave it out: missing values are " + MISSING_RULE_TEXT[plan.privacy.missing_rule],
        )
    if plan.missing_rule != plan.privacy.missing_rule:
        raise ParameterError(
            "this plan was made before missing values had a leaf of their own in the tree (under change, dropping "
            "them would change the public N)",
            "make the plan again (auto, or a branching that covers K + 1 leaves)",
        )
    return plan.privacy.missing_rule


def spend_and_release(ledger: Ledger, dataset: str, column: str, missing: str, counts: np.ndarray, plan: Plan,
                      source: RandomSource, lower: float, upper: float, consistency: str,
                      n_missing: int = 0) -> tuple[Release, ReleaseInfo]:
    """Record ε for ``dataset`` in the ledger, then release the histogram's CDF (ε-DP, discrete Laplace).

    ``counts``: the confidential histogram (K bins); ``n_missing``: its number of missing values,
    counted in the tree's missing leaf under change and dropped under add/remove
    (:func:`check_missing_rule`; ``missing`` is checked there). Only public plan parameters go to
    the ledger. Raises the ledger's refusal (cap exceeded / no cap) before any noise is drawn.
    """
    if consistency not in CONSISTENCY_METHODS:  # checked before spending, not after
        raise ParameterError(f"unknown consistency {consistency!r}", "use l2, l1 or none")
    rule = check_missing_rule(plan, missing)
    release_id = uuid.uuid4().hex
    description = {
        "kind": "cdf", "column": column, "bins": plan.shape.bins, "bounds": [lower, upper],
        "branching": list(plan.shape.branching), "estimator": plan.estimator, "consistency": consistency,
        "neighbours": plan.privacy.neighbours, "records_per_person": plan.privacy.records_per_person,
        "secure_noise": bool(source.secure),
    }
    ledger.spend(dataset, release_id, epsilon=plan.privacy.epsilon, delta=0.0, rho=None, mechanism=MECHANISM,
                 description=description)
    created = datetime.now(timezone.utc)
    result = release(counts, plan, source, lower, upper, consistency, missing=n_missing)
    return result, ReleaseInfo(dataset, column, release_id, created, rule)
