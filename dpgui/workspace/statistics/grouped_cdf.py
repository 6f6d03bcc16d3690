"""The CDF of a numeric column for each group of a categorical column as a
:class:`~dpgui.workspace.statistic.Statistic`: one tree plan shared by every group of a public list, every
group's size noised (:mod:`dpgui.core.grouped_cdf`; docs/privacy-model.md, "A CDF for each group"), its
counting one grouped count of (group, bin) put on the list (:func:`dpgui.data.group_histograms.group_histograms`),
its report code in :mod:`dpgui.report.grouped_cdf`, to which every method delegates. Never imports another
statistic.

The charge is the shared plan's, once (the groups compose in parallel); the 95 % margin is the shared plan's
at its worst CDF point, which is every group's worst point (one plan, the same noise for each group).

Cost: counting O(rows); the release O(groups × K·h); the CSV and the digest O(groups × nodes). Confidential
data: only :meth:`GroupedCdfStatistic.count` reads the columns (the histograms, for the release only); no Qt,
any thread.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dpgui.core.grouped_cdf import GroupedPlan, GroupedRelease, GroupList, plan_grouped
from dpgui.core.noise import RandomSource
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import margin95
from dpgui.core.privacy_unit import PrivacyUnit, with_privacy_unit
from dpgui.data.group_histograms import GroupHistograms, group_histograms
from dpgui.data.source import DataSource
from dpgui.report.bundle import BundlePaths
from dpgui.report.grouped_cdf.bundle import (
    GROUPED_CDF_SCHEMA, GroupedReleaseInfo, build_grouped_cdf_manifest, default_grouped_cdf_bundle_name,
    grouped_cdf_csv_text,
)
from dpgui.report.grouped_cdf.project import ProjectGroupedRelease
from dpgui.report.grouped_cdf.publish import (
    authenticate_grouped_cdf_release, grouped_cdf_digest, grouped_cdf_params, sign_grouped_cdf_release,
    spend_and_release_grouped_cdf,
)
from dpgui.report.ledger import Ledger
from dpgui.report.ledger.records import ReleaseRecords
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import AccuracyWhere, CdfConsistency, Charge, Noise, StatisticKind
from dpgui.workspace.statistic import (
    Alternative, Planned, PlanProgress, Progress, ShouldCancel, bounding_of, check_privacy_unit,
)

__all__ = ["GROUPED_CDF", "GroupedCdfPlanRequest", "GroupedCdfSpend", "GroupedCdfStatistic"]


@dataclass(frozen=True)
class GroupedCdfSpend:
    """What a grouped CDF release publishes besides its values, all public: the numeric and the group column,
    the public bounds, the shared plan (its groups and bins), the consistency step and the privacy unit (None:
    records per person declared; else checked against the plan's privacy here)."""

    column: str
    group_column: str
    lower: float
    upper: float
    plan: GroupedPlan
    consistency: str = CdfConsistency.L2
    privacy_unit: PrivacyUnit | None = None

    def __post_init__(self) -> None:
        check_privacy_unit(self.privacy_unit, self.plan.tree.privacy)


@dataclass(frozen=True)
class GroupedCdfPlanRequest:
    """What a grouped plan is made of, all public: the groups, the number of value bins K, the privacy (ε, δ,
    the neighbour model, records per person) and the noise (``laplace``, ``gaussian`` or ``auto``)."""

    groups: GroupList
    bins: int
    privacy: PrivacySpec
    noise: str = Noise.LAPLACE

    def at_budget(self, epsilon: float, delta: float) -> GroupedCdfPlanRequest:
        """The same request at (ε, δ), the rest of the privacy unchanged (every plan request's rule). O(1)."""
        p = self.privacy
        return replace(self, privacy=PrivacySpec(epsilon, p.neighbours, p.records_per_person, delta, p.impute))

    def plan_now(self) -> GroupedPlan:
        """The grouped plan of the request (:func:`plan_grouped`; ParameterError for choices no plan can have).
        The planner's time; nothing read."""
        return plan_grouped(self.groups, self.bins, self.privacy, noise=self.noise)


def _margin95(plan: GroupedPlan) -> float:
    """The 95 % margin in records of the worst group's worst CDF point: the shared plan's at its worst point
    (:func:`dpgui.core.planner.margin95`, every group's root noised). Exact; O(K̄ + h³)."""
    return margin95(plan.tree, AccuracyWhere.EVERY)


@dataclass(frozen=True)
class GroupedCdfStatistic:
    """The grouped CDF's answers to the statistic protocol (stateless; :data:`GROUPED_CDF` is the one instance)."""

    kind: StatisticKind = StatisticKind.GROUPED_CDF
    title: str = "CDF of a numeric column for each group"
    manifest_schema: Path = GROUPED_CDF_SCHEMA

    def release_title(self, subject: str) -> str:
        return f"CDF of {subject}"  # the subject: "dep_delay for each carrier"

    def bundle_name(self, release: GroupedRelease, info: GroupedReleaseInfo) -> str:
        return default_grouped_cdf_bundle_name(info)

    def plan(self, request: GroupedCdfPlanRequest, progress: PlanProgress | None = None,
             should_cancel: ShouldCancel | None = None) -> Planned[GroupedPlan, GroupedPlan]:
        """The shared plan the CDF planner makes with every group's root noised, its margin at the worst CDF
        point; offered beside it, the other noise's plan when the planner made one (δ > 0, automatic noise).
        The planner cannot stop midway (``should_cancel`` is not asked). Nothing read, nothing spent."""
        plan = request.plan_now()
        choice = plan.tree.noise_choice
        alternatives: tuple[Alternative[GroupedPlan], ...] = ()
        if choice is not None and choice.alternative is not None:
            other = GroupedPlan(plan.groups, choice.alternative)
            alternatives = (Alternative(f"{Noise(other.tree.noise).words} noise", other, _margin95(other)),)
        return Planned(plan, _margin95(plan), plan, alternatives)

    def margin_at(self, request: GroupedCdfPlanRequest, epsilon: float, delta: float) -> float:
        return _margin95(request.at_budget(epsilon, delta).plan_now())

    def plan_of(self, spend: GroupedCdfSpend) -> GroupedPlan:
        return spend.plan

    def plan_from_json(self, data: dict[str, Any]) -> GroupedPlan:
        return GroupedPlan.from_json(data)

    def from_record(self, record: ProjectGroupedRelease, dataset: str
                    ) -> tuple[GroupedRelease, GroupedReleaseInfo]:
        """The record's release; it names its own dataset (``dataset`` is the one that paid, the same)."""
        return record.to_release()

    def charge(self, plan: GroupedPlan) -> Charge:
        """The shared plan's charge, once for every group (:meth:`GroupedPlan.ledger_charge`)."""
        return Charge(*plan.ledger_charge())

    def count(self, source: DataSource, spend: GroupedCdfSpend, progress: Progress | None = None,
              should_cancel: ShouldCancel | None = None) -> GroupHistograms:
        """The histogram of the column for each released group, in the plan's order (CONFIDENTIAL); with a privacy
        unit, of the rows it keeps (at most L a person in the whole table, ordered by the public group list)."""
        tree = spend.plan.tree
        bounding = bounding_of(spend.privacy_unit, {spend.group_column: spend.plan.groups.labels})
        return group_histograms(source, spend.group_column, spend.column, spend.lower, spend.upper, tree.shape.bins,
                                spend.plan.groups, bounding=bounding, progress=progress, should_cancel=should_cancel)

    def release(self, ledger: ReleaseRecords, dataset: str, spend: GroupedCdfSpend, counts: GroupHistograms,
                noise: RandomSource, *, release_id: str | None = None, source_record: dict[str, Any] | None = None
                ) -> tuple[GroupedRelease, GroupedReleaseInfo]:
        if counts.labels != spend.plan.labels:  # a bug: histograms counted for another list of groups
            raise ValueError("the histograms are not those of the plan's groups")
        return spend_and_release_grouped_cdf(ledger, dataset, spend.column, spend.group_column, counts.counts,
                                             counts.n_missing, spend.plan, noise, spend.lower, spend.upper,
                                             spend.consistency, release_id=release_id,
                                             source_record=with_privacy_unit(source_record, spend.privacy_unit))

    def parameters(self, release: GroupedRelease, info: GroupedReleaseInfo) -> dict[str, Any]:
        return grouped_cdf_params(release, info)

    def digest(self, release: GroupedRelease) -> str:
        return grouped_cdf_digest(release)

    def csv_text(self, release: GroupedRelease) -> str:
        return grouped_cdf_csv_text(release)

    def manifest(self, release: GroupedRelease, info: GroupedReleaseInfo, name: str, csv_bytes: bytes,
                 pdf_bytes: bytes, key_id: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        _no_extra(extra)
        return build_grouped_cdf_manifest(release, info, name, csv_bytes, pdf_bytes, key_id)

    def authenticate(self, ledger: ReleaseRecords, release: GroupedRelease, info: GroupedReleaseInfo
                     ) -> tuple[GroupedRelease, GroupedReleaseInfo]:
        return release, authenticate_grouped_cdf_release(ledger, release, info)

    def sign(self, ledger: Ledger, folder: str | Path, name: str, release: GroupedRelease, info: GroupedReleaseInfo,
             pdf: bytes, key: SecretKey, extra: dict[str, Any] | None = None) -> BundlePaths:
        _no_extra(extra)
        return sign_grouped_cdf_release(ledger, folder, name, release, info, pdf, key)

    def ledger_words(self, description: dict[str, Any]) -> str:
        return (f"CDF of column {str(description.get('column'))!r} for each group of column "
                f"{str(description.get('group_column'))!r}")


def _no_extra(extra: dict[str, Any] | None) -> None:
    if extra is not None:  # a bug: a grouped CDF's manifest has no optional section of its own
        raise TypeError("a grouped CDF manifest takes no extra section")


#: The grouped CDF statistic (registered in :data:`dpgui.workspace.statistics.STATISTICS`).
GROUPED_CDF = GroupedCdfStatistic()
