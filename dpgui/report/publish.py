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
from dpgui.core.plan import Plan
from dpgui.errors import DpguiError, ParameterError
from dpgui.report.bundle import ReleaseInfo
from dpgui.report.ledger import Ledger

MECHANISM = "discrete_laplace_tree"


def spend_and_release(ledger: Ledger, dataset: str, column: str, missing: str, counts: np.ndarray, plan: Plan,
                      source: RandomSource, lower: float, upper: float, consistency: str,
                      release_id: str | None = None) -> tuple[Release, ReleaseInfo]:
    """Record ε for ``dataset`` in the ledger, then release the histogram's CDF (ε-DP, discrete Laplace).

    ``counts``: the confidential histogram (K bins); only public plan parameters go to the ledger.
    ``release_id``: the ledger id to record (default: a new random one); a caller that passes it can
    ask the ledger afterwards whether the spend was recorded (``Ledger.release``).
    Raises the ledger's refusal (cap exceeded / no cap) before any noise is drawn. Every limit of the
    noise sampler is checked when the :class:`Plan` is built; should the release still fail after the
    spend, the error is a DpguiError that says the budget was spent and under which ledger id.
    """
    if consistency not in CONSISTENCY_METHODS:  # checked before spending, not after
        raise ParameterError(f"unknown consistency {consistency!r}", "use l2, l1 or none")
    release_id = release_id or uuid.uuid4().hex
    description = {
        "kind": "cdf", "column": column, "bins": plan.shape.bins, "bounds": [lower, upper],
        "branching": list(plan.shape.branching), "estimator": plan.estimator, "consistency": consistency,
        "neighbours": plan.privacy.neighbours, "records_per_person": plan.privacy.records_per_person,
        "secure_noise": bool(source.secure),
    }
    ledger.spend(dataset, release_id, epsilon=plan.privacy.epsilon, delta=0.0, rho=None, mechanism=MECHANISM,
                 description=description)
    created = datetime.now(timezone.utc)
    try:
        result = release(counts, plan, source, lower, upper, consistency)
    except Exception as err:  # a bug past the point of no return: never let it pass as "nothing spent"
        raise DpguiError(f"ε = {plan.privacy.epsilon:g} was spent (ledger release {release_id}) but the release "
                         f"failed: {type(err).__name__}: {err}", "nothing was published; please report this") from err
    return result, ReleaseInfo(dataset, column, release_id, created, missing)
