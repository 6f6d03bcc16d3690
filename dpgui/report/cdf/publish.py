"""A CDF release recorded in the budget ledger before its noise exists, and its signing.

:func:`spend_and_release` is where the app and the CLI draw a CDF's noise for publication, through the
shared :func:`dpgui.report.publish.spend_then_release` (spend, then noise, then the output recorded);
:func:`sign_release` is where a CDF release becomes a signed bundle, only once the ledger confirms it
(:func:`authenticate_release`), whether it was made in this session or read back from a project file.
The rule is in docs/privacy-model.md, "Signing and the ledger". Confidential data: the histogram goes only
into the engine's release inside the spend; the ledger and the bundle get public values.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

import numpy as np

from dpgui.core.mechanism import Release, release
from dpgui.core.missing import MISSING_AUTO, MISSING_RULE_TEXT, MISSING_RULES
from dpgui.core.noise import RandomSource
from dpgui.core.plan import Plan
from dpgui.core.projection import has_padding
from dpgui.core.quantiles import WholeNumbers
from dpgui.errors import ParameterError
from dpgui.report.bundle import BundlePaths
from dpgui.report.cdf.bundle import ReleaseInfo, write_bundle
from dpgui.report.ledger import Ledger, new_release_id
from dpgui.report.ledger.records import ReleaseRecords
from dpgui.report.migrations import PADDING_KNOWN_ZEROS, PADDING_UNKNOWN
from dpgui.report.publish import (
    check_row_count_public, check_signed_row_count, confirm_recorded_release, levels_sha256, spend_then_release,
    write_and_record_bundle,
)
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import CdfConsistency, Estimator, Noise, StatisticKind
MECHANISM = "discrete_laplace_tree"  # the ledger's mechanism name of a Laplace release
MECHANISMS: dict[str, str] = {Noise.LAPLACE: MECHANISM, Noise.GAUSSIAN: "discrete_gaussian_tree"}


def mechanism_name(plan: Plan) -> str:
    """The ledger's name of the mechanism: ``discrete_laplace_tree`` or ``discrete_gaussian_tree``."""
    return MECHANISMS[plan.noise]


def check_missing_rule(plan: Plan, missing: str = MISSING_AUTO) -> str:
    """The missing-value rule a release with ``plan`` applies (docs/privacy-model.md "Missing values"), or a
    ParameterError before anything is spent.

    The rule is the neighbour model's (``"bucket"`` under change, ``"drop"`` under add/remove), never
    the caller's or the data's. ``missing`` is what the caller asked for: "auto" or the name of a rule
    (:data:`~dpgui.core.missing.MISSING_RULES`; the neighbour model's rule applies); any other word
    (such as "error", stopping at a missing value, which would make publishing depend on the data) is
    refused.
    """
    if missing != MISSING_AUTO and missing not in MISSING_RULES:
        raise ParameterError(
            f"{str(missing)[:40]!r} is not a missing-value rule (a release applies its neighbour model's)",
            "leave it out: missing values are " + MISSING_RULE_TEXT[plan.privacy.missing_rule],
        )
    if plan.missing_rule != plan.privacy.missing_rule:
        raise ParameterError(
            "this plan was made before missing values had a leaf of their own in the tree (under change, dropping "
            "them would change the public N)",
            "make the plan again (auto, or a branching that covers K + 1 leaves)",
        )
    return plan.privacy.missing_rule


def spend_and_release(ledger: ReleaseRecords, dataset: str, column: str, missing: str, counts: np.ndarray, plan: Plan,
                      source: RandomSource, lower: float, upper: float, consistency: str,
                      *, n_missing: int, release_id: str | None = None,
                      source_record: dict[str, Any] | None = None,
                      whole_numbers: WholeNumbers | None = None) -> tuple[Release, ReleaseInfo]:
    """Record the plan's (ε, δ, ρ) for ``dataset`` in the ledger (:meth:`Plan.ledger_charge`), then release
    the histogram's CDF (ε-DP with discrete Laplace noise, or (ε, δ)-DP and ρ-zCDP with discrete
    Gaussian noise, as ``plan.noise`` says).

    ``counts``: the confidential histogram (K bins); ``n_missing``: its number of missing values,
    counted in the tree's missing leaf under change and dropped under add/remove
    (:func:`check_missing_rule`; ``missing`` is checked there; required, so that no caller forgets it:
    under change, leaving them out would publish the number of non-missing values as N).
    Only public plan parameters go to the ledger.
    ``release_id``: the ledger id to record (default: a new random one); a caller that passes it can
    ask the ledger afterwards whether the spend was recorded (``Ledger.release``).
    ``source_record``: where the data was read and who counted it
    (:meth:`dpgui.data.source.DataSource.public_record`; no secret in it), recorded in the ledger's description
    and parameters and in the manifest; None: not recorded. ``whole_numbers``: why the column is known
    to hold whole numbers (public), recorded with the output and stated in the manifest; None: not known.
    Raises the ledger's refusal (cap exceeded / no cap) and :func:`check_row_count_public`'s before any noise
    is drawn. Every limit of the noise sampler is checked when the :class:`Plan` is built; should the release
    still fail after the spend, the error is a DpguiError that says the budget was spent and under which
    ledger id. After the noise, the release's output is recorded in the ledger (what :func:`authenticate_release` checks).
    """
    if consistency not in tuple(CdfConsistency):  # checked before spending, not after
        raise ParameterError(f"unknown consistency {consistency!r}", "use l2, l1 or none")
    rule = check_missing_rule(plan, missing)
    check_row_count_public(plan.privacy, source_record)
    release_id = release_id or new_release_id()
    description = {
        "kind": str(StatisticKind.CDF), "column": column, "bins": plan.shape.bins, "bounds": [lower, upper],
        "branching": list(plan.shape.branching), "estimator": plan.estimator, "consistency": consistency,
        "neighbours": plan.privacy.neighbours, "records_per_person": plan.privacy.records_per_person,
        "secure_noise": bool(source.secure), "noise": plan.noise, "delta": plan.privacy.delta,
    }
    if source_record is not None:
        description["source"] = dict(source_record)

    def draw() -> tuple[Release, ReleaseInfo]:
        created = datetime.now(timezone.utc)
        result = release(counts, plan, source, lower, upper, consistency, missing=n_missing)
        return result, ReleaseInfo(dataset, column, release_id, created, rule,
                                   None if source_record is None else dict(source_record), whole_numbers)

    return spend_then_release(ledger, dataset, release_id, plan, mechanism_name(plan), description, draw,
                              lambda out: (levels_sha256(out[0].levels), release_params(*out), out[0].secure))


def padding_param(result: Release) -> str | None:
    """How the release's estimate treated the tree's padding leaves, as the ledger records it:
    ``"known_zeros"`` (every release since GLS used them as zeros) or ``"unknown"`` (a release made
    before, recomputed as it was published); None when that changes nothing the bundle states (no
    padding leaves, or the covering estimator, which never reads them)."""
    if result.plan.estimator != Estimator.GLS or not has_padding(result.plan.shape):
        return None
    return PADDING_KNOWN_ZEROS if result.padding_known else PADDING_UNKNOWN


def release_params(result: Release, info: ReleaseInfo) -> dict[str, Any]:
    """Everything a bundle states about a release besides its levels (see
    :func:`dpgui.report.cdf.bundle.build_manifest`, the CSV and the PDF), or what it is recomputed from:
    recorded in the ledger at release time, compared field by field before signing
    (:func:`confirm_recorded_release`). ``source`` is None when the release records none;
    ``padding``: :func:`padding_param`."""
    params: dict[str, Any] = {
        "column": info.column,
        "missing": info.missing,
        "created_utc": info.created_utc.astimezone(timezone.utc).isoformat(),
        "lower": float(result.lower),
        "upper": float(result.upper),
        "consistency": result.consistency,
        "plan": result.plan.to_json(),
        "padding": padding_param(result),
        "source": None if info.source is None else dict(info.source),
    }
    if info.whole_numbers is not None:
        params["whole_numbers"] = str(info.whole_numbers)
    return params


def authenticate_release(ledger: ReleaseRecords, result: Release, info: ReleaseInfo) -> Release:
    """The release confirmed by the ledger, with its ``secure`` flag taken from the ledger's record.

    Signing needs all of: the ledger holds ``info.release_id`` for ``info.dataset``; it recorded
    the release's output at release time; the parameters and the SHA-256 of the released levels
    are the ones recorded; the noise was drawn from the secure source. The ``secure`` flag of
    ``result`` is not trusted (a release read from a file has none). Anything else raises
    :class:`DataError` saying why. Reads only. O(#nodes).
    """
    output = confirm_recorded_release(ledger, info.release_id, info.dataset, release_params(result, info),
                                      levels_sha256(result.levels),
                                      dataset_fix="name the dataset {recorded!r} in step 1, or release the data again")
    check_signed_row_count(info.release_id, result.plan.privacy, info.source)
    recorded_plan = output.params["plan"]
    if result.plan.noise_choice is None and isinstance(recorded_plan, dict) and "noise_choice" in recorded_plan:
        result = replace(result, plan=Plan.from_json(recorded_plan))  # the reasons the planner gave, as recorded
    return result if result.secure else replace(result, secure=True)


def sign_release(ledger: Ledger, directory: str | os.PathLike[str], name: str, result: Release, info: ReleaseInfo,
                 pdf_bytes: bytes, key: SecretKey) -> BundlePaths:
    """Write the signed bundle of a ledger-confirmed release and point its ledger entry at it.

    The one way a release becomes a signed bundle (the window, the CLI and the self-test use it):
    :func:`authenticate_release` first, then a trial of the ledger's bundle pointer, then
    :func:`~dpgui.report.cdf.bundle.write_bundle`, then the pointer. If the pointer still cannot be
    recorded, the written files are removed and :class:`DataError` says so: no signed bundle
    exists that its ledger does not point to. ``pdf_bytes`` should be rendered from the release
    this function would sign (:func:`authenticate_release`'s result).
    """
    confirmed = authenticate_release(ledger, result, info)
    return write_and_record_bundle(ledger, info.release_id, directory, name,
                                   lambda: write_bundle(directory, name, confirmed, info, pdf_bytes, key))
