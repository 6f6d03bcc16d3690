"""The CDF of a numeric column for each group as a part of a release plan file: ``column``, ``group_column``,
the public list of ``groups`` (or ``groups = "data"``: the group column's own values, which the officer declares
public, as a hierarchy's categories may be), ``other`` (drop or other: what happens to a row whose group is not listed —
decided by the officer, never by the data), the public bounds ``lower`` < ``upper``, ``bins`` and an optional
``noise``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpgui.core.grouped_cdf import GroupedPlan, GroupList
from dpgui.vocabulary import CdfConsistency, Noise, OtherGroups, StatisticKind
from dpgui.core.hierarchy import label_order_key
from dpgui.core.mechanism import leaf_counts, release
from dpgui.core.noise import RandomSource
from dpgui.data.source import DataSource
from dpgui.workspace.statistic import Planned
import numpy as np
from dpgui.errors import DataError, ParameterError
from dpgui.workspace.plan_parts.common import (
    FIX, PartPrivacy, bounds_of, check_keys, column_of, plan_part, texts_of, whole_of,
)
from dpgui.workspace.release_plan import PlanItem
from dpgui.workspace.statistics.grouped_cdf import GROUPED_CDF, GroupedCdfPlanRequest, GroupedCdfSpend

_KEYS = frozenset({"column", "group_column", "groups", "other", "lower", "upper", "bins", "noise"})


@dataclass(frozen=True)
class GroupedCdfPartCodec:
    kind: StatisticKind = StatisticKind.GROUPED_CDF

    def check(self, settings: Mapping[str, Any], where: str, privacy: PartPrivacy) -> None:
        check_keys(settings, where, _KEYS)
        column_of(settings, where, "column")
        column_of(settings, where, "group_column")
        if settings.get("groups") != "data":
            texts_of(settings, where, "groups")
        if settings.get("other", OtherGroups.DROP) not in tuple(OtherGroups):
            raise ParameterError(f"{where}: 'other' must be {' or '.join(OtherGroups)}", FIX)
        bounds_of(settings, where)
        whole_of(settings, where, "bins")
        if settings.get("noise", Noise.LAPLACE) not in ("auto", Noise.LAPLACE, Noise.GAUSSIAN):
            raise ParameterError(f"{where}: 'noise' must be laplace, gaussian or auto", FIX)

    def subject(self, settings: Mapping[str, Any]) -> str:
        return f"{settings['column']} for each {settings['group_column']}"

    def trial_errors(self, spend: GroupedCdfSpend, counts: Any, planned: Planned[Any, Any],
                     random: RandomSource) -> np.ndarray:
        """One seeded release's error at the shared plan's worst CDF point, in every released group, of the
        estimate the 95 % margin is of (before consistency)."""
        errors = []
        tree = spend.plan.tree
        for histogram, missing in zip(counts.counts, counts.n_missing):
            result = release(histogram, tree, random, spend.lower, spend.upper, CdfConsistency.NONE, missing=missing)
            truth = np.cumsum(leaf_counts(np.asarray(histogram, dtype=np.int64), tree, missing, spend.lower,
                                          spend.upper)[0]).astype(np.float64)
            worst = int(np.argmax(result.std_error))
            errors.append(result.cumulative[worst] - truth[worst])
        return np.asarray(errors)

    def numeric_columns(self, settings: Mapping[str, Any]) -> tuple[str, ...]:
        return (str(settings["column"]),)

    def columns(self, settings: Mapping[str, Any]) -> tuple[str, ...]:
        return (str(settings["column"]), str(settings["group_column"]))

    def item(self, settings: Mapping[str, Any], privacy: PartPrivacy, data: DataSource | None, where: str) -> PlanItem:
        self.check(settings, where, privacy)
        column, group_column, bins = str(settings["column"]), str(settings["group_column"]), int(settings["bins"])
        lower, upper = bounds_of(settings, where)
        groups = _groups(settings, where, data)
        request = GroupedCdfPlanRequest(groups, bins, privacy.spec(), str(settings.get("noise", Noise.LAPLACE)))
        unit = privacy.unit()

        def spend_of(plan: GroupedPlan) -> GroupedCdfSpend:
            return GroupedCdfSpend(column, group_column, lower, upper, plan, privacy_unit=unit)

        part = plan_part(GROUPED_CDF, request, settings)
        return PlanItem(part, spend_of, f"{column} for each {group_column}")


def _groups(settings: Mapping[str, Any], where: str, data: DataSource | None) -> GroupList:
    """The public groups: the list the plan states, or with ``groups = "data"`` the group column's own values in
    the data (read here: CONFIDENTIAL counts, of which only the values are used, which the officer declares
    public), in the order dpgui sorts labels."""
    other = OtherGroups(settings.get("other", OtherGroups.DROP))
    if settings.get("groups") != "data":
        return GroupList(texts_of(settings, where, "groups"), other)
    if data is None:
        raise DataError(f"{where}: its groups are read from the data, which is not open", "plan it with the data open")
    column = str(settings["group_column"])
    paths = data.path_counts([column], min_levels=1)  # the values only; a missing value is in no path
    labels = sorted({str(path[0]) for path in paths.paths}, key=label_order_key)
    if not labels:
        raise DataError(f"{where}: the group column {column[:60]!r} holds no value", "choose the group column")
    return GroupList(tuple(labels), other, from_data=True)


GROUPED_CDF_PART = GroupedCdfPartCodec()
