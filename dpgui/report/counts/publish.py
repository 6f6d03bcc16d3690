"""A counts release recorded in the budget ledger before its noise exists
(:func:`dpgui.report.publish.spend_then_release`), and its signing once the ledger confirms it
(:func:`dpgui.report.publish.confirm_recorded_release`). Confidential: the true counts go only into the
release inside the spend; the ledger gets public values. O(categories).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

import numpy as np

from dpgui.core.counts import CountsPlan, CountsRelease, release_counts
from dpgui.core.noise import RandomSource
from dpgui.report.bundle import BundlePaths
from dpgui.report.counts.bundle import MECHANISM, CountsReleaseInfo, write_counts_bundle
from dpgui.report.ledger import Ledger
from dpgui.report.ledger.records import ReleaseRecords
from dpgui.report.publish import (
    check_row_count_public, check_signed_row_count, confirm_recorded_release, levels_sha256, spend_then_release,
    write_and_record_bundle,
)
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import StatisticKind

__all__ = ["authenticate_counts_release", "counts_params", "sign_counts_release", "spend_and_release_counts"]


def counts_params(release: CountsRelease, info: CountsReleaseInfo) -> dict[str, Any]:
    """What the bundle states besides the counts: recorded at release time, compared before signing."""
    return {"column": info.column, "created_utc": info.created_utc.astimezone(timezone.utc).isoformat(),
            "plan": release.plan.to_json(), "source": None if info.source is None else dict(info.source)}


def spend_and_release_counts(ledger: ReleaseRecords, dataset: str, column: str, true_counts: np.ndarray, plan: CountsPlan,
                             source: RandomSource, *, release_id: str | None = None,
                             source_record: dict[str, Any] | None = None) -> tuple[CountsRelease, CountsReleaseInfo]:
    """Record the plan's charge for ``dataset``, then release the counts (the ledger's refusal first)."""
    check_row_count_public(plan.privacy, source_record)
    release_id = release_id or uuid.uuid4().hex
    description: dict[str, Any] = {"kind": str(StatisticKind.COUNTS), "column": column,
                                   "categories": list(plan.categories), "secure_noise": bool(source.secure)}
    if source_record is not None:
        description["source"] = dict(source_record)

    def draw() -> tuple[CountsRelease, CountsReleaseInfo]:
        created = datetime.now(timezone.utc)
        return release_counts(true_counts, plan, source), CountsReleaseInfo(
            dataset, column, release_id, created, bool(source.secure),
            None if source_record is None else dict(source_record))

    return spend_then_release(ledger, dataset, release_id, plan, MECHANISM, description, draw,
                              lambda r: (levels_sha256(r[0].levels), counts_params(*r), r[0].secure))


def authenticate_counts_release(ledger: ReleaseRecords, release: CountsRelease, info: CountsReleaseInfo) -> CountsReleaseInfo:
    """The info with ``secure`` from the ledger, if the ledger confirms the release (DataError otherwise)."""
    confirm_recorded_release(ledger, info.release_id, info.dataset, counts_params(release, info),
                             levels_sha256(release.levels))
    check_signed_row_count(info.release_id, release.plan.privacy, info.source)
    return info if info.secure else replace(info, secure=True)


def sign_counts_release(ledger: Ledger, directory: str | os.PathLike[str], name: str, release: CountsRelease,
                        info: CountsReleaseInfo, pdf_bytes: bytes, key: SecretKey) -> BundlePaths:
    """The signed bundle of a ledger-confirmed counts release, its ledger entry pointing at it."""
    confirmed = authenticate_counts_release(ledger, release, info)
    return write_and_record_bundle(ledger, info.release_id, directory, name,
                                   lambda: write_counts_bundle(directory, name, release, confirmed, pdf_bytes, key))
