"""The CDF of a numeric column as a :class:`~dpgui.workspace.statistic.Statistic`: a tree of noisy bin
counts over the column's public bounds (Rameshwar, Tandon & Sharma; Smith & Ullman's binary tree
mechanism), its planning in :mod:`dpgui.workspace.planning`, its engine in :mod:`dpgui.core` (plan,
mechanism) and its report code in :mod:`dpgui.report.cdf`, to which every method delegates. Never imports
another statistic.

Cost: counting O(rows); the release O(K·h) for K bins in a tree of height h; the CSV and the digest
O(nodes). Confidential data: only :meth:`CdfStatistic.count` reads the column (the histogram, for the
release only); no Qt, any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpgui.core.mechanism import Release
from dpgui.core.missing import MISSING_AUTO
from dpgui.core.noise import RandomSource
from dpgui.core.plan import Plan
from dpgui.core.planner import margin95
from dpgui.core.privacy_unit import PrivacyUnit, with_privacy_unit
from dpgui.core.quantiles import WholeNumbers
from dpgui.data.histogram import ColumnHistogram
from dpgui.data.source import DataSource
from dpgui.report.bundle import SCHEMA_PATH, BundlePaths
from dpgui.report.cdf.bundle import ReleaseInfo, build_manifest, default_bundle_name
from dpgui.report.cdf.csv_export import release_csv_text
from dpgui.report.cdf.publish import authenticate_release, release_params, sign_release, spend_and_release
from dpgui.report.ledger import Ledger
from dpgui.report.ledger.records import ReleaseRecords
from dpgui.report.project_file import ProjectRelease
from dpgui.report.publish import levels_sha256
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import AccuracyWhere, Charge, Noise, StatisticKind
from dpgui.workspace.planning import PlannedCdf, PlanRequest, plan_cdf
from dpgui.workspace.statistic import (
    Alternative, Planned, PlanProgress, Progress, ShouldCancel, bounding_of, check_privacy_unit,
)

__all__ = ["CDF", "CdfSpend", "CdfStatistic"]


@dataclass(frozen=True)
class CdfSpend:
    """What a CDF release publishes, all public: the column, its public bounds and K (the plan's), the
    consistency step, the missing-value rule, why the column holds whole numbers (None: unknown) and the
    privacy unit (None: records per person declared; else checked against the plan's privacy here)."""

    column: str
    lower: float
    upper: float
    bins: int
    plan: Plan
    consistency: str
    missing: str = MISSING_AUTO
    whole_numbers: WholeNumbers | None = None
    privacy_unit: PrivacyUnit | None = None

    def __post_init__(self) -> None:
        check_privacy_unit(self.privacy_unit, self.plan.privacy)


@dataclass(frozen=True)
class CdfStatistic:
    """The CDF's answers to the statistic protocol (stateless; :data:`CDF` is the one instance)."""

    kind: StatisticKind = StatisticKind.CDF
    title: str = "CDF of a numeric column"
    manifest_schema: Path = SCHEMA_PATH

    def release_title(self, subject: str) -> str:
        return f"CDF of {subject}"

    def bundle_name(self, release: Release, info: ReleaseInfo) -> str:
        return default_bundle_name(info)

    def plan(self, request: PlanRequest, progress: PlanProgress | None = None,
             should_cancel: ShouldCancel | None = None) -> Planned[Plan, PlannedCdf]:
        """:func:`~dpgui.workspace.planning.plan_cdf` (the planner cannot stop midway: ``should_cancel`` is
        not asked); the margin at the worst CDF point; offered beside it, the other noise's plan when the
        planner made it (``noise_choice.alternative``) and, with a region, the plan not taken."""
        planned = plan_cdf(request, progress)
        return Planned(planned.plan, _margin95(planned.plan), planned, _alternatives(planned))

    def margin_at(self, request: PlanRequest, epsilon: float, delta: float) -> float:
        return _margin95(plan_cdf(request.at_budget(epsilon, delta)).plan)

    def plan_of(self, spend: CdfSpend) -> Plan:
        return spend.plan

    def plan_from_json(self, data: dict[str, Any]) -> Plan:
        return Plan.from_json(data)

    def from_record(self, record: ProjectRelease, dataset: str) -> tuple[Release, ReleaseInfo]:
        release = record.to_release()
        return release, ReleaseInfo(dataset, record.column or "value", record.release_id, record.created,
                                    record.missing or release.missing_rule, record.source, record.whole_numbers)

    def charge(self, plan: Plan) -> Charge:
        return Charge(*plan.ledger_charge())

    def count(self, source: DataSource, spend: CdfSpend, progress: Progress | None = None,
              should_cancel: ShouldCancel | None = None) -> ColumnHistogram:
        """The column's histogram (CONFIDENTIAL); with a privacy unit, of the rows it keeps (at most L a person)."""
        return source.histogram(spend.column, spend.lower, spend.upper, spend.bins,
                                bounding=bounding_of(spend.privacy_unit), progress=progress,
                                should_cancel=should_cancel)

    def release(self, ledger: ReleaseRecords, dataset: str, spend: CdfSpend, counts: ColumnHistogram, noise: RandomSource, *,
                release_id: str | None = None, source_record: dict[str, Any] | None = None) -> tuple[Release, ReleaseInfo]:
        return spend_and_release(ledger, dataset, spend.column, spend.missing, counts.counts, spend.plan, noise,
                                 spend.lower, spend.upper, spend.consistency, n_missing=counts.n_missing,
                                 release_id=release_id,
                                 source_record=with_privacy_unit(source_record, spend.privacy_unit),
                                 whole_numbers=spend.whole_numbers)

    def parameters(self, release: Release, info: ReleaseInfo) -> dict[str, Any]:
        return release_params(release, info)

    def digest(self, release: Release) -> str:
        return levels_sha256(release.levels)

    def csv_text(self, release: Release) -> str:
        return release_csv_text(release)

    def manifest(self, release: Release, info: ReleaseInfo, name: str, csv_bytes: bytes, pdf_bytes: bytes,
                 key_id: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        _no_extra(extra)
        return build_manifest(release, info, name, csv_bytes, pdf_bytes, key_id)

    def authenticate(self, ledger: ReleaseRecords, release: Release, info: ReleaseInfo) -> tuple[Release, ReleaseInfo]:
        return authenticate_release(ledger, release, info), info

    def sign(self, ledger: Ledger, folder: str | Path, name: str, release: Release, info: ReleaseInfo, pdf: bytes,
             key: SecretKey, extra: dict[str, Any] | None = None) -> BundlePaths:
        _no_extra(extra)
        return sign_release(ledger, folder, name, release, info, pdf, key)

    def ledger_words(self, description: dict[str, Any]) -> str:
        return f"CDF of column {str(description['column'])!r}" if "column" in description else "CDF"


def _margin95(plan: Plan) -> float:
    """The plan's 95 % margin at its least precise CDF point, records (:func:`dpgui.core.margins.cdf_margins`'s
    ``worst``). Exact; O(K̄ + h³)."""
    return margin95(plan, AccuracyWhere.EVERY)


def _alternatives(planned: PlannedCdf) -> tuple[Alternative[Plan], ...]:
    offered: list[tuple[str, Plan]] = []
    choice = planned.plan.noise_choice
    if choice is not None and choice.alternative is not None:
        offered.append((f"{Noise(choice.alternative.noise).words} noise", choice.alternative))
    offer = planned.offer
    if offer is not None:
        offered.append(("the plan for the whole range", offer.default_plan) if offer.worth_it
                       else ("the plan for the region", offer.focused_plan))
    return tuple(Alternative(what, plan, _margin95(plan)) for what, plan in offered)


def _no_extra(extra: dict[str, Any] | None) -> None:
    if extra is not None:  # a bug: a CDF's manifest has no optional section of its own
        raise TypeError("a CDF manifest takes no extra section")


#: The CDF statistic (registered in :data:`dpgui.workspace.statistics.STATISTICS`).
CDF = CdfStatistic()
