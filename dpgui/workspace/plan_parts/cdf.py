"""The CDF of a numeric column as a part of a release plan file: ``column``, the public bounds ``lower`` <
``upper``, ``bins`` (K), optional ``noise`` (laplace, gaussian or auto) and ``consistency`` (l2, l1, none)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpgui.core.plan import Plan
from dpgui.core.mechanism import leaf_counts, release
from dpgui.core.noise import RandomSource
from dpgui.data.source import DataSource
from dpgui.workspace.statistic import Planned
import numpy as np
from dpgui.errors import ParameterError
from dpgui.vocabulary import CdfConsistency, Noise, StatisticKind
from dpgui.workspace.plan_parts.common import FIX, PartPrivacy, bounds_of, check_keys, column_of, plan_part, whole_of
from dpgui.workspace.planning import PlanRequest
from dpgui.workspace.release_plan import PlanItem
from dpgui.workspace.statistics.cdf import CDF, CdfSpend

_KEYS = frozenset({"column", "lower", "upper", "bins", "noise", "consistency"})
_NOISES = (*Noise.__members__.values(), "auto")


@dataclass(frozen=True)
class CdfPartCodec:
    kind: StatisticKind = StatisticKind.CDF

    def check(self, settings: Mapping[str, Any], where: str, privacy: PartPrivacy) -> None:
        check_keys(settings, where, _KEYS)
        column_of(settings, where, "column")
        bounds_of(settings, where)
        whole_of(settings, where, "bins")
        if settings.get("noise", "auto") not in ("auto", Noise.LAPLACE, Noise.GAUSSIAN):
            raise ParameterError(f"{where}: 'noise' must be laplace, gaussian or auto", FIX)
        if settings.get("consistency", CdfConsistency.L2) not in tuple(CdfConsistency):
            raise ParameterError(f"{where}: 'consistency' must be {' or '.join(CdfConsistency)}", FIX)

    def subject(self, settings: Mapping[str, Any]) -> str:
        return str(settings["column"])

    def trial_errors(self, spend: CdfSpend, counts: Any, planned: Planned[Any, Any], random: RandomSource) -> np.ndarray:
        """One seeded release's error at the worst CDF point, of the estimate the 95 % margin is of (before
        consistency: the margin is the unbiased estimate's)."""
        result = release(counts.counts, spend.plan, random, spend.lower, spend.upper, CdfConsistency.NONE,
                         missing=counts.n_missing)
        truth = np.cumsum(leaf_counts(np.asarray(counts.counts, dtype=np.int64), spend.plan, counts.n_missing,
                                      spend.lower, spend.upper)[0]).astype(np.float64)
        worst = int(np.argmax(result.std_error))
        return np.array([result.cumulative[worst] - truth[worst]])

    def numeric_columns(self, settings: Mapping[str, Any]) -> tuple[str, ...]:
        return (str(settings["column"]),)

    def columns(self, settings: Mapping[str, Any]) -> tuple[str, ...]:
        return (str(settings["column"]),)

    def item(self, settings: Mapping[str, Any], privacy: PartPrivacy, data: DataSource | None, where: str) -> PlanItem:
        self.check(settings, where, privacy)
        column, bins = str(settings["column"]), int(settings["bins"])
        lower, upper = bounds_of(settings, where)
        consistency = str(settings.get("consistency", CdfConsistency.L2))
        request = PlanRequest(bins, privacy.spec(), noise=str(settings.get("noise", "auto")))
        unit = privacy.unit()

        def spend_of(plan: Plan) -> CdfSpend:
            return CdfSpend(column, lower, upper, bins, plan, consistency, privacy_unit=unit)

        part = plan_part(CDF, request, settings)
        return PlanItem(part, spend_of, column)


CDF_PART = CdfPartCodec()
