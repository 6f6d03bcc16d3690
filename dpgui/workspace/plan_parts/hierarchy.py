"""Counts over a hierarchy of categorical columns as a part of a release plan file: ``levels`` (2 to 4 level
columns, top first), ``nodes = "data"`` (the officer declares the data's own categories public: the node list
is read from the data and published, as for a release of its own without a prior file), under add/remove
``records_estimate`` (a published estimate of N at which the errors are projected, never the data's count),
and optional ``noise``, ``allocation`` and ``consistency`` as the hierarchy's own release takes them.

Reading the node list needs the open data (:func:`dpgui.workspace.plan_spec.plan_items`): the paths of the
level columns are counted (CONFIDENTIAL counts: only the node list and, under change, the public N are used;
the release counts again)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpgui.core.hierarchy import HierarchyPlan
from dpgui.core.hierarchy import HierarchyRelease, release_hierarchy
from dpgui.core.hierarchy_errors import plan_errors
from dpgui.core.noise import RandomSource
from dpgui.data.source import DataSource
from dpgui.workspace.statistic import Planned
from dpgui.errors import DataError, ParameterError
from dpgui.report.hierarchy.bundle import errors_json
from dpgui.vocabulary import Neighbours, StatisticKind
from dpgui.workspace.hierarchy_planning import HierarchyChoice, HierarchyPlanRequest, LoadedHierarchy
from dpgui.workspace.plan_parts.common import FIX, PartPrivacy, check_keys, plan_part, texts_of, whole_of
from dpgui.workspace.release_plan import PlanItem
from dpgui.workspace.statistics.hierarchy import HIERARCHY, HierarchySpend

_KEYS = frozenset({"levels", "nodes", "records_estimate", "noise", "allocation", "consistency"})


@dataclass(frozen=True)
class HierarchyPartCodec:
    kind: StatisticKind = StatisticKind.HIERARCHY

    def check(self, settings: Mapping[str, Any], where: str, privacy: PartPrivacy) -> None:
        check_keys(settings, where, _KEYS)
        levels = texts_of(settings, where, "levels")
        if not 1 <= len(levels) <= 4:
            raise ParameterError(f"{where}: 'levels' must name 1 to 4 columns", FIX)
        if settings.get("nodes") != "data":
            raise ParameterError(f"{where}: 'nodes' must be \"data\" (the data's categories, declared public)",
                                 "write nodes = \"data\" if the level columns' categories are public (e.g. an "
                                 "official list); a prior file is not read in a plan file yet")
        if privacy.neighbours is Neighbours.ADDREMOVE:
            whole_of(settings, where, "records_estimate")
        self._choice(settings, privacy)  # the hierarchy's own checks of noise, allocation, consistency

    def subject(self, settings: Mapping[str, Any]) -> str:
        return " → ".join(str(level) for level in settings["levels"])

    def trial_errors(self, spend: HierarchySpend, counts: Any, planned: Planned[Any, Any],
                     random: RandomSource) -> np.ndarray:
        """One seeded release's error of every count of the level whose projected 95 % margin is the plan's (its
        worst level), as released (clamped or consistent)."""
        levels = planned.detail.errors.projection.levels
        worst = max(range(len(levels)), key=lambda i: levels[i].margin95)
        truth = spend.hierarchy.aggregate(np.asarray(counts, dtype=np.int64))[worst]
        released: np.ndarray = np.asarray(release_hierarchy(spend.hierarchy, counts, spend.plan, random).counts[worst],
                                          dtype=np.float64)
        return released - np.asarray(truth, dtype=np.float64)

    def numeric_columns(self, settings: Mapping[str, Any]) -> tuple[str, ...]:
        return ()

    def columns(self, settings: Mapping[str, Any]) -> tuple[str, ...]:
        return tuple(str(level) for level in settings["levels"])

    @staticmethod
    def _choice(settings: Mapping[str, Any], privacy: PartPrivacy) -> HierarchyChoice:
        estimate = settings.get("records_estimate")
        return HierarchyChoice(levels=tuple(settings["levels"]), epsilon=privacy.epsilon, delta=privacy.delta,
                               neighbours=privacy.neighbours, records_per_person=privacy.records_per_person,
                               noise=str(settings.get("noise", "auto")),
                               allocation=str(settings.get("allocation", "uniform")),
                               consistency=str(settings.get("consistency", "auto")), categories_public=True,
                               records_estimate=None if estimate is None else int(estimate))

    def item(self, settings: Mapping[str, Any], privacy: PartPrivacy, data: DataSource | None, where: str) -> PlanItem:
        self.check(settings, where, privacy)
        if data is None:
            raise DataError(f"{where}: its node list is read from the data, which is not open",
                            "plan it with the data source open")
        choice = self._choice(settings, privacy)
        levels = choice.levels
        paths = data.path_counts(list(levels))  # CONFIDENTIAL counts: the node list (declared public) and N only
        hierarchy = paths.hierarchy  # a value under two parents is a DataError
        loaded = LoadedHierarchy(data.spec, levels, None, False, hierarchy,
                                 np.asarray(paths.counts, dtype=np.int64).copy(), int(paths.rows), None,
                                 tuple(paths.notes), None, data.public_record())
        request = HierarchyPlanRequest(loaded, choice)
        unit = privacy.unit()

        def spend_of(plan: HierarchyPlan) -> HierarchySpend:
            return HierarchySpend(hierarchy, plan, False, False, None, None, loaded.notes, privacy_unit=unit)

        part = plan_part(HIERARCHY, request, settings)
        return PlanItem(part, spend_of, " → ".join(levels), extra_of=_stated_errors)


def _stated_errors(release: HierarchyRelease) -> dict[str, Any]:
    """A hierarchy part's stated errors, its manifest's ``projection`` and its PDF's: its plan's at the plan's
    assumed records (a plan file reads no prior: never at the data's counts)."""
    return errors_json(plan_errors(release.plan, release.hierarchy))


HIERARCHY_PART = HierarchyPartCodec()
