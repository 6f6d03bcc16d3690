"""A grouped CDF release recorded in the budget ledger before its noise exists
(:func:`dpgui.report.publish.spend_then_release`), and its signing once the ledger confirms it
(:func:`dpgui.report.publish.confirm_recorded_release`). The ledger is charged the shared plan's (ε, δ, ρ)
once (:meth:`dpgui.core.grouped_cdf.GroupedPlan.ledger_charge`: the groups compose in parallel).
Confidential: the true histograms go only into the release inside the spend; the ledger gets public values.
O(groups × K).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

import numpy as np

from dpgui.core.grouped_cdf import GroupedPlan, GroupedRelease, release_grouped
from dpgui.core.noise import RandomSource
from dpgui.report.bundle import BundlePaths
from dpgui.report.grouped_cdf.bundle import (
    MECHANISM, GroupedReleaseInfo, released_levels, write_grouped_cdf_bundle,
)
from dpgui.report.ledger import Ledger
from dpgui.report.ledger.records import ReleaseRecords
from dpgui.report.publish import (
    check_row_count_public, check_signed_row_count, confirm_recorded_release, levels_sha256, spend_then_release,
    write_and_record_bundle,
)
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import StatisticKind

__all__ = ["authenticate_grouped_cdf_release", "grouped_cdf_digest", "grouped_cdf_params",
           "sign_grouped_cdf_release", "spend_and_release_grouped_cdf"]


def grouped_cdf_params(release: GroupedRelease, info: GroupedReleaseInfo) -> dict[str, Any]:
    """What the bundle states besides the released values: recorded at release time, compared before signing."""
    first = release.releases[0]
    return {"column": info.column, "group_column": info.group_column,
            "created_utc": info.created_utc.astimezone(timezone.utc).isoformat(), "plan": release.plan.to_json(),
            "bounds": {"lower": first.lower, "upper": first.upper}, "consistency": str(first.consistency),
            "source": None if info.source is None else dict(info.source)}


def grouped_cdf_digest(release: GroupedRelease) -> str:
    """The SHA-256 of every group's released levels, level by level (:func:`released_levels`)."""
    return levels_sha256(released_levels(release))


def spend_and_release_grouped_cdf(ledger: ReleaseRecords, dataset: str, column: str, group_column: str,
                                  counts: np.ndarray, n_missing: Sequence[int], plan: GroupedPlan,
                                  source: RandomSource, lower: float, upper: float, consistency: str, *,
                                  release_id: str | None = None, source_record: dict[str, Any] | None = None
                                  ) -> tuple[GroupedRelease, GroupedReleaseInfo]:
    """Record the shared plan's charge for ``dataset`` once, then release every group's CDF (the ledger's
    refusal first). ``counts``: the (groups × K) confidential histograms in the plan's group order;
    ``n_missing``: each group's missing values (:func:`dpgui.core.grouped_cdf.release_grouped`)."""
    check_row_count_public(plan.tree.privacy, source_record)
    release_id = release_id or uuid.uuid4().hex
    description: dict[str, Any] = {"kind": str(StatisticKind.GROUPED_CDF), "column": column,
                                   "group_column": group_column, "groups": list(plan.labels),
                                   "secure_noise": bool(source.secure)}
    if source_record is not None:
        description["source"] = dict(source_record)

    def draw() -> tuple[GroupedRelease, GroupedReleaseInfo]:
        created = datetime.now(timezone.utc)
        release = release_grouped(counts, plan, source, lower, upper, consistency, list(n_missing))
        return release, GroupedReleaseInfo(dataset, column, group_column, release_id, created, bool(source.secure),
                                           None if source_record is None else dict(source_record))

    return spend_then_release(ledger, dataset, release_id, plan, MECHANISM, description, draw,
                              lambda r: (grouped_cdf_digest(r[0]), grouped_cdf_params(*r), r[0].secure))


def authenticate_grouped_cdf_release(ledger: ReleaseRecords, release: GroupedRelease, info: GroupedReleaseInfo
                                     ) -> GroupedReleaseInfo:
    """The info with ``secure`` from the ledger, if the ledger confirms the release (DataError otherwise)."""
    confirm_recorded_release(ledger, info.release_id, info.dataset, grouped_cdf_params(release, info),
                             grouped_cdf_digest(release))
    check_signed_row_count(info.release_id, release.plan.tree.privacy, info.source)
    return info if info.secure else replace(info, secure=True)


def sign_grouped_cdf_release(ledger: Ledger, directory: str | os.PathLike[str], name: str, release: GroupedRelease,
                             info: GroupedReleaseInfo, pdf_bytes: bytes, key: SecretKey) -> BundlePaths:
    """The signed bundle of a ledger-confirmed grouped CDF release, its ledger entry pointing at it."""
    confirmed = authenticate_grouped_cdf_release(ledger, release, info)
    return write_and_record_bundle(
        ledger, info.release_id, directory, name,
        lambda: write_grouped_cdf_bundle(directory, name, release, confirmed, pdf_bytes, key))
