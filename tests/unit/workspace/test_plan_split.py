"""One budget over the bundled samples' three statistics (dpgui.workspace.plan_split): the CDF of the flights'
``distance``, counts over the flight routes' ``dest_tzone → dest`` and the counts of ``dest_tzone``, at ε = 1
with equal weights and 1:4:1 — the split's weighted margin is below the equal split's, each part's margin is
its statistic's margin_at called here, and the parts' charges fit the officer's cap in a real ledger and add
up to sums computed here; with Gaussian noise the ρ add up within the cap; what cannot share a budget is
refused before anything is planned at a share."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import pytest

from dpgui.core.accounting import zcdp_epsilon, zcdp_rho
from dpgui.core.plan import PrivacySpec
from dpgui.data.hierarchy import hierarchy_sample_path
from dpgui.errors import Cancelled, DpguiError, ParameterError
from dpgui.report.ledger import Ledger
from dpgui.report.ledger.store import BudgetExceeded
from dpgui.vocabulary import Charge, Noise, StatisticKind
from dpgui.workspace.hierarchy import load_hierarchy
from dpgui.workspace.hierarchy_planning import HierarchyChoice, HierarchyPlanRequest
from dpgui.workspace.plan_split import PlanPart, PlanSplit, request_at, split_plan
from dpgui.workspace.planning import PlanRequest
from dpgui.workspace.statistic import Planned
from dpgui.workspace.statistics import STATISTICS
from dpgui.workspace.statistics.counts import CountsPlanRequest

DELTA = 1e-6
#: the public list of the destinations' time zones (as an officer would type it)
TIME_ZONES = ("America/New_York", "America/Chicago", "America/Los_Angeles", "America/Denver", "America/Puerto_Rico",
              "America/Phoenix", "Pacific/Honolulu", "America/St_Thomas", "America/Anchorage")


@pytest.fixture(scope="module")
def routes() -> HierarchyPlanRequest:
    choice = HierarchyChoice(levels=("dest_tzone", "dest"), epsilon=1.0, categories_public=True)
    return HierarchyPlanRequest(load_hierarchy(hierarchy_sample_path(), choice), choice)


def _parts(routes: HierarchyPlanRequest, weights: tuple[float, float, float],
           lock: float | None = None) -> list[PlanPart]:
    return [PlanPart(STATISTICS[StatisticKind.CDF], PlanRequest(1000, PrivacySpec(1.0)), weights[0],
                     name="CDF of distance"),
            PlanPart(STATISTICS[StatisticKind.HIERARCHY], routes, weights[1], name="counts over dest_tzone → dest"),
            PlanPart(STATISTICS[StatisticKind.COUNTS], CountsPlanRequest(TIME_ZONES, 1.0), weights[2], lock,
                     name="counts of dest_tzone")]


def _print(found: PlanSplit, title: str) -> None:
    for name, split in (("used", found.used), ("equal", found.equal)):
        print(f"{title} {name}: budgets = {[round(b, 4) for b in split.budgets]}, margins = "
              f"{[round(m, 1) for m in split.margins]}, weighted = {split.weighted_margin:.1f}")


@pytest.mark.parametrize("weights", [(1.0, 1.0, 1.0), (1.0, 4.0, 1.0)])
def test_three_statistics_of_the_samples_share_one_epsilon(routes: HierarchyPlanRequest,
                                                           weights: tuple[float, float, float]) -> None:
    parts = _parts(routes, weights)
    found = split_plan(parts, 1.0)
    _print(found, f"weights {weights}")
    assert found.weighted_margin < found.equal.weighted_margin
    # each part's margin at its share is its statistic's margin_at asked here, and so is the equal split's
    for part, planned in zip(parts, found.parts):
        assert (planned.noise, planned.epsilon, planned.delta) == (Noise.LAPLACE, planned.budget, 0.0)
        assert planned.margin95 == part.statistic.margin_at(part.request, planned.budget, 0.0)
        assert planned.planned.margin95 == planned.margin95
        assert planned.charge == part.statistic.charge(planned.planned.plan)
    for part, budget, margin in zip(parts, found.equal.budgets, found.equal.margins):
        assert budget == pytest.approx(1 / 3, rel=1e-12)
        assert margin == part.statistic.margin_at(part.request, budget, 0.0)
    assert found.equal.weighted_margin == pytest.approx(sum(w * m for w, m in zip(weights, found.equal.margins)))
    assert found.weighted_margin == pytest.approx(sum(w * p.margin95 for w, p in zip(weights, found.parts)))
    # the charge: the parts' ε add up to at most the plan's, their ρ = ε²/2 too, summed here
    epsilons = [p.charge.epsilon for p in found.parts]
    assert found.charge == Charge(math.fsum(epsilons), 0.0, found.charge.rho)
    assert math.fsum(epsilons) <= 1.0 and math.fsum(epsilons) == pytest.approx(1.0, rel=1e-12)
    assert found.charge.rho == pytest.approx(math.fsum(e * e / 2 for e in epsilons), rel=1e-12)
    _spend_in_a_ledger([p.charge for p in found.parts], 1.0, 0.0)


def _spend_in_a_ledger(charges: list[Charge], epsilon: float, delta: float) -> None:
    """Each charge recorded in a real ledger whose cap is the plan's: all fit, and nothing more does."""
    with Ledger() as ledger:
        ledger.set_cap("flights", epsilon, delta)
        for i, charge in enumerate(charges):
            ledger.spend("flights", f"part-{i}", charge)
        with pytest.raises(BudgetExceeded):
            ledger.check_spend("flights", Charge(1e-3 * epsilon, delta, 1e-3 * epsilon))


def test_weights_move_budget_to_the_heavy_statistic(routes: HierarchyPlanRequest) -> None:
    even = split_plan(_parts(routes, (1.0, 1.0, 1.0)), 1.0)
    heavy = split_plan(_parts(routes, (1.0, 4.0, 1.0)), 1.0)
    assert heavy.parts[1].budget > even.parts[1].budget and heavy.parts[1].margin95 < even.parts[1].margin95


def test_a_locked_statistic_keeps_its_budget(routes: HierarchyPlanRequest) -> None:
    found = split_plan(_parts(routes, (1.0, 1.0, 1.0), lock=0.1), 1.0)
    counts = found.parts[2]
    assert counts.budget == 0.1 and counts.charge.epsilon == 0.1 and counts.planned.plan.privacy.epsilon == 0.1
    assert found.equal.budgets[2] == 0.1 and found.equal.budgets[0] == found.equal.budgets[1] == pytest.approx(0.45)
    assert math.fsum(p.budget for p in found.parts) <= 1.0


def test_gaussian_statistics_share_rho_within_the_cap(routes: HierarchyPlanRequest) -> None:
    gaussian_routes = replace(routes, choice=replace(routes.choice, delta=DELTA, noise=Noise.GAUSSIAN))
    parts = [PlanPart(STATISTICS[StatisticKind.CDF], PlanRequest(200, PrivacySpec(1.0, delta=DELTA),
                                                                 noise=Noise.GAUSSIAN), 1.0),
             PlanPart(STATISTICS[StatisticKind.HIERARCHY], gaussian_routes, 4.0)]
    found = split_plan(parts, 1.0, DELTA)
    _print(found, "Gaussian, weights (1, 4)")
    assert found.weighted_margin <= found.equal.weighted_margin
    for part, planned in zip(parts, found.parts):
        assert planned.noise is Noise.GAUSSIAN and planned.delta == DELTA
        # the ρ of its (ε, δ), converted here, within its budget
        assert planned.charge.rho == zcdp_rho(planned.epsilon, DELTA) <= planned.budget
        assert planned.margin95 == part.statistic.margin_at(part.request, planned.epsilon, DELTA)
        assert planned.planned.margin95 == planned.margin95
    total = math.fsum(p.charge.rho or 0.0 for p in found.parts)
    assert found.charge.rho == total <= zcdp_rho(1.0, DELTA)
    assert found.charge.epsilon == zcdp_epsilon(total, DELTA) <= 1.0 * (1 + 1e-9)
    _spend_in_a_ledger([p.charge for p in found.parts], 1.0, DELTA)


def test_both_noises_in_one_plan_are_refused(routes: HierarchyPlanRequest) -> None:
    parts = [PlanPart(STATISTICS[StatisticKind.CDF], PlanRequest(200, PrivacySpec(1.0, delta=DELTA),
                                                                 noise=Noise.GAUSSIAN)),
             PlanPart(STATISTICS[StatisticKind.COUNTS], CountsPlanRequest(TIME_ZONES, 1.0))]
    with pytest.raises(ParameterError, match="mixes Laplace and Gaussian"):
        split_plan(parts, 1.0, DELTA)


@dataclass(frozen=True)
class _Point:
    """A fake plan: the budget it was made at."""

    epsilon: float
    delta: float


@dataclass(frozen=True)
class _Request:
    epsilon: float = 1.0
    delta: float = DELTA

    def at_budget(self, epsilon: float, delta: float) -> _Request:
        return _Request(epsilon, delta)


@dataclass(frozen=True)
class _Fickle:
    """A statistic whose automatic noise is Gaussian above ε = 0.9 and Laplace below, or has no ρ at all."""

    no_rho: bool = False
    title: str = "a fickle statistic"

    def plan(self, request: _Request, progress: Any = None, should_cancel: Any = None) -> Planned[_Point, None]:
        return Planned(_Point(request.epsilon, request.delta), 10 / request.epsilon, None)

    def margin_at(self, request: _Request, epsilon: float, delta: float) -> float:
        return 10 / epsilon

    def charge(self, plan: _Point) -> Charge:
        if self.no_rho:
            return Charge(plan.epsilon, plan.delta, None)
        if plan.epsilon > 0.9:
            return Charge(plan.epsilon, plan.delta, zcdp_rho(plan.epsilon, plan.delta))
        return Charge(plan.epsilon, 0.0, plan.epsilon**2 / 2)


def test_a_noise_the_planner_changes_at_a_share_is_refused_with_the_part_named() -> None:
    fickle: Any = _Fickle()
    with pytest.raises(ParameterError, match="chose Laplace noise for the fickle one") as refused:
        split_plan([PlanPart(fickle, _Request(), name="the fickle one"), PlanPart(fickle, _Request())], 1.0, DELTA)
    assert "name the noise" in refused.value.fix
    no_rho: Any = _Fickle(no_rho=True)
    with pytest.raises(ParameterError, match="no zCDP figure"):
        split_plan([PlanPart(no_rho, _Request())], 1.0, DELTA)


def test_the_split_tells_its_progress_and_stops_when_cancelled() -> None:
    fickle: Any = _Fickle()
    parts = [PlanPart(fickle, _Request(), weight) for weight in (1.0, 4.0, 1.0)]
    told: list[tuple[float, str]] = []
    found = split_plan(parts, 1.0, progress=lambda fraction, words: told.append((fraction, words)))
    fractions = [fraction for fraction, _ in told]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert sum("the margin of" in words for _, words in told) == found.split.evaluations
    assert sum("the plan of" in words for _, words in told) == 3
    asked = [0]

    def cancel_after_four() -> bool:
        asked[0] += 1
        return asked[0] > 4
    with pytest.raises(Cancelled):
        split_plan(parts, 1.0, should_cancel=cancel_after_four)
    assert asked[0] == 5  # asked before each step, and nothing planned after the answer


def test_a_request_is_planned_at_another_budget_by_its_own_rule() -> None:
    assert request_at(_Request(), 0.3, 0.0) == _Request(0.3, 0.0)
    counts = request_at(CountsPlanRequest(TIME_ZONES, 1.0), 0.25, 0.0)
    assert counts == CountsPlanRequest(TIME_ZONES, 0.25)
    with pytest.raises(TypeError):
        request_at(object(), 0.3, 0.0)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.0, 0.0), (1.0, 1.0), (1.0, -0.1), (math.nan, 0.0)])
def test_a_bad_budget_is_refused_before_any_part_is_planned(epsilon: float, delta: float) -> None:
    fickle: Any = _Fickle()
    with pytest.raises(DpguiError) as refused:
        split_plan([PlanPart(fickle, _Request())], epsilon, delta)
    assert "plan's" in refused.value.problem and refused.value.fix
