"""Counts over a categorical hierarchy as a :class:`~dpgui.workspace.statistic.Statistic`: noisy counts of
every node of a tree of 2 to 4 level columns, made consistent (Ko, Ziani & Fioretto's budget allocation
and top-down step; Ghazi, Kamath, Kumar, Manurangsi & Wu's multiplicative noise), its planning in
:mod:`dpgui.workspace.hierarchy_planning`, its engine in :mod:`dpgui.core.hierarchy` and its report code
in :mod:`dpgui.report.hierarchy`, to which every method delegates. Never imports another statistic.

Cost: counting O(rows) (one GROUP BY where a database or Spark counts); the release O(nodes) besides the
engine's consistency step. Confidential data: only :meth:`HierarchyStatistic.count` reads the data (the
leaf counts, for the release only); the node list is public (a prior file, or categories the officer
declared public). No Qt, any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpgui.core.hierarchy import Hierarchy, HierarchyPlan, HierarchyProjection, HierarchyRelease
from dpgui.core.noise import RandomSource
from dpgui.core.privacy_unit import PrivacyUnit, with_privacy_unit
from dpgui.data.source import DataSource
from dpgui.report.bundle import SCHEMA_PATH, BundlePaths
from dpgui.report.hierarchy.bundle import (
    NODE_LIST_FROM_DATA, NODE_LIST_FROM_PRIOR, HierarchyReleaseInfo, build_hierarchy_manifest,
    default_hierarchy_bundle_name, hierarchy_csv_text,
)
from dpgui.report.hierarchy.publish import (
    authenticate_hierarchy_release, hierarchy_mechanism_name, hierarchy_release_params, sign_hierarchy_release,
    spend_and_release_hierarchy,
)
from dpgui.report.hierarchy.project import ProjectHierarchyRelease
from dpgui.report.ledger import Ledger
from dpgui.report.ledger.records import ReleaseRecords
from dpgui.report.publish import levels_sha256
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import Charge, Noise, StatisticKind
from dpgui.workspace.hierarchy_planning import HierarchyPlanRequest, PlannedHierarchy, plan_and_project
from dpgui.workspace.statistic import (
    Alternative, Planned, PlanProgress, Progress, ShouldCancel, bounding_of, check_privacy_unit,
)

__all__ = ["HIERARCHY", "HierarchySpend", "HierarchyStatistic"]


@dataclass(frozen=True)
class HierarchySpend:
    """What a hierarchy release publishes besides its counts, all public: the tree (its node list), the
    plan, where the node list comes from (a public prior file, or the data's categories declared public),
    whether the optimiser had the data's own counts (opted in), the prior's name and SHA-256, the notes, and the
    privacy unit (None: records per person declared; else checked against the plan's privacy here)."""

    hierarchy: Hierarchy
    plan: HierarchyPlan
    node_list_from_prior: bool
    counts_from_data: bool = False
    prior_name: str | None = None
    prior_sha256: str | None = None
    notes: tuple[str, ...] = ()
    privacy_unit: PrivacyUnit | None = None

    def __post_init__(self) -> None:
        check_privacy_unit(self.privacy_unit, self.plan.privacy)


@dataclass(frozen=True)
class HierarchyStatistic:
    """The hierarchy's answers to the statistic protocol (stateless; :data:`HIERARCHY` is the one instance)."""

    kind: StatisticKind = StatisticKind.HIERARCHY
    title: str = "counts over a hierarchy of categories"
    manifest_schema: Path = SCHEMA_PATH

    def release_title(self, subject: str) -> str:
        return f"Counts over {subject}"

    def bundle_name(self, release: HierarchyRelease, info: HierarchyReleaseInfo) -> str:
        return default_hierarchy_bundle_name(info, release.hierarchy.level_names)

    def plan(self, request: HierarchyPlanRequest, progress: PlanProgress | None = None,
             should_cancel: ShouldCancel | None = None) -> Planned[HierarchyPlan, PlannedHierarchy]:
        """:func:`~dpgui.workspace.hierarchy_planning.plan_and_project`; the margin of its worst level; offered
        beside it, with δ > 0, the other noises' plans it projected."""
        planned = plan_and_project(request.loaded, request.choice, progress, should_cancel, request.trials)
        others = tuple(Alternative(f"{Noise(noise).words} noise", projection.plan, _margin95(projection))
                       for noise, projection in planned.alternatives.items() if noise != planned.plan.noise)
        return Planned(planned.plan, _planned_margin95(planned), planned, others)

    def margin_at(self, request: HierarchyPlanRequest, epsilon: float, delta: float) -> float:
        at = request.at_budget(epsilon, delta)
        return _planned_margin95(plan_and_project(at.loaded, at.choice, trials=at.trials, compare=False))

    def plan_of(self, spend: HierarchySpend) -> HierarchyPlan:
        return spend.plan

    def plan_from_json(self, data: dict[str, Any]) -> HierarchyPlan:
        return HierarchyPlan.from_json(data)

    def from_record(self, record: ProjectHierarchyRelease, dataset: str) -> tuple[HierarchyRelease, HierarchyReleaseInfo]:
        """The record's release; it names its own dataset (``dataset`` is the one that paid, the same)."""
        return record.to_release()

    def charge(self, plan: HierarchyPlan) -> Charge:
        return Charge(*plan.ledger_charge())

    def count(self, source: DataSource, spend: HierarchySpend, progress: Progress | None = None,
              should_cancel: ShouldCancel | None = None) -> np.ndarray:
        """The count of every leaf of ``spend.hierarchy``, in its leaf order (a path of the data that is
        not in the tree is a DataError naming the first few). With a privacy unit, of the rows it keeps (at most L
        a person, ordered by the node labels of each level)."""
        hierarchy = spend.hierarchy
        bounding = bounding_of(spend.privacy_unit, dict(zip(hierarchy.level_names, hierarchy.labels, strict=True)))
        paths = source.path_counts(list(hierarchy.level_names), bounding=bounding, progress=progress,
                                   should_cancel=should_cancel)
        leaf_counts = np.zeros(hierarchy.level_sizes[-1], dtype=np.int64)
        if paths.paths:
            np.add.at(leaf_counts, hierarchy.leaf_index(paths.paths), np.asarray(paths.counts, dtype=np.int64))
        return leaf_counts

    def release(self, ledger: ReleaseRecords, dataset: str, spend: HierarchySpend, counts: np.ndarray, noise: RandomSource, *,
                release_id: str | None = None, source_record: dict[str, Any] | None = None
                ) -> tuple[HierarchyRelease, HierarchyReleaseInfo]:
        return spend_and_release_hierarchy(
            ledger, dataset, spend.hierarchy, counts, spend.plan, noise,
            node_list_source=NODE_LIST_FROM_PRIOR if spend.node_list_from_prior else NODE_LIST_FROM_DATA,
            counts_from_data=spend.counts_from_data, prior_name=spend.prior_name, prior_sha256=spend.prior_sha256,
            notes=spend.notes, release_id=release_id,
            source_record=with_privacy_unit(source_record, spend.privacy_unit))

    def parameters(self, release: HierarchyRelease, info: HierarchyReleaseInfo) -> dict[str, Any]:
        return hierarchy_release_params(release, info)

    def digest(self, release: HierarchyRelease) -> str:
        return levels_sha256(release.counts)

    def csv_text(self, release: HierarchyRelease) -> str:
        return hierarchy_csv_text(release)

    def manifest(self, release: HierarchyRelease, info: HierarchyReleaseInfo, name: str, csv_bytes: bytes,
                 pdf_bytes: bytes, key_id: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        return build_hierarchy_manifest(release, info, hierarchy_mechanism_name(release.plan), name, csv_bytes,
                                        pdf_bytes, key_id, extra)

    def authenticate(self, ledger: ReleaseRecords, release: HierarchyRelease, info: HierarchyReleaseInfo
                     ) -> tuple[HierarchyRelease, HierarchyReleaseInfo]:
        return release, authenticate_hierarchy_release(ledger, release, info)

    def sign(self, ledger: Ledger, folder: str | Path, name: str, release: HierarchyRelease, info: HierarchyReleaseInfo,
             pdf: bytes, key: SecretKey, extra: dict[str, Any] | None = None) -> BundlePaths:
        """``extra``: the plan's stated errors for the manifest's ``projection``
        (:func:`~dpgui.report.hierarchy.bundle.errors_json`), None for none."""
        return sign_hierarchy_release(ledger, folder, name, release, info, pdf, key, extra)

    def ledger_words(self, description: dict[str, Any]) -> str:
        levels = description.get("levels")
        return ("hierarchy counts over " + " > ".join(repr(str(level)) for level in levels)
                if isinstance(levels, list) and levels else "hierarchy counts")


def _margin95(projection: HierarchyProjection) -> float:
    """The 95 % margin of the projection's worst level, records (0 when every level is exact)."""
    return max((level.margin95 for level in projection.levels), default=0.0)


def _planned_margin95(planned: PlannedHierarchy) -> float:
    """The plan's stated margin (:attr:`PlannedHierarchy.errors`, the figures the window, the CLI and the PDF
    state: at public counts, the assumed records, or the noise alone)."""
    if planned.errors is None:  # a bug: plan_and_project states the errors of every plan it makes
        raise TypeError("the planned hierarchy has no stated errors")
    return _margin95(planned.errors.projection)


#: The hierarchy statistic (registered in :data:`dpgui.workspace.statistics.STATISTICS`).
HIERARCHY = HierarchyStatistic()
