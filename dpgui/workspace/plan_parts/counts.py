"""The counts of one categorical column as a part of a release plan file: ``column`` and its public list of
``categories`` (a value not in the list is counted in none; Laplace noise only)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpgui.core.counts import release_counts
from dpgui.core.noise import RandomSource
from dpgui.data.source import DataSource
from dpgui.workspace.statistic import Planned
import numpy as np
from dpgui.vocabulary import StatisticKind
from dpgui.workspace.plan_parts.common import PartPrivacy, check_keys, column_of, plan_part, texts_of
from dpgui.workspace.release_plan import PlanItem
from dpgui.workspace.statistics.counts import COUNTS, CountsPlanRequest, CountsSpend

_KEYS = frozenset({"column", "categories"})


@dataclass(frozen=True)
class CountsPartCodec:
    kind: StatisticKind = StatisticKind.COUNTS

    def check(self, settings: Mapping[str, Any], where: str, privacy: PartPrivacy) -> None:
        check_keys(settings, where, _KEYS)
        column_of(settings, where, "column")
        texts_of(settings, where, "categories")

    def subject(self, settings: Mapping[str, Any]) -> str:
        return str(settings["column"])

    def trial_errors(self, spend: CountsSpend, counts: Any, planned: Planned[Any, Any],
                     random: RandomSource) -> np.ndarray:
        """One seeded release's error of every category's count (each has the same margin)."""
        truth = np.asarray(counts, dtype=np.int64)
        return (release_counts(truth, spend.plan, random).counts - truth).astype(np.float64)

    def numeric_columns(self, settings: Mapping[str, Any]) -> tuple[str, ...]:
        return ()

    def columns(self, settings: Mapping[str, Any]) -> tuple[str, ...]:
        return (str(settings["column"]),)

    def item(self, settings: Mapping[str, Any], privacy: PartPrivacy, data: DataSource | None, where: str) -> PlanItem:
        self.check(settings, where, privacy)
        column = str(settings["column"])
        request = CountsPlanRequest(texts_of(settings, where, "categories"), privacy.epsilon, privacy.neighbours,
                                    privacy.records_per_person)
        part = plan_part(COUNTS, request, settings)
        unit = privacy.unit()
        return PlanItem(part, lambda plan: CountsSpend(column, plan, privacy_unit=unit), column)


COUNTS_PART = CountsPartCodec()
