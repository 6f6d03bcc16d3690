"""One budget for several statistics of one table, through the statistic seam: each part of a release plan
is a registered :class:`~dpgui.workspace.statistic.Statistic` with its own plan request, a weight and an
optional lock, and :func:`split_plan` gives each part its share of the plan's (ε, δ) with the least weighted
sum of the parts' 95 % margins (:func:`dpgui.core.plan_split.split_budget`: the closed form fitted to the
real margins, kept only where it beats the equal split), each part's plan at its share and what the plan is
charged, with the equal split's figures beside.

A part's margin at a budget is :meth:`Statistic.margin_at` at the (ε, δ) the budget is planned at
(:func:`~dpgui.core.plan_split.plan_point`): a Laplace part's budget is its ε, planned at (ε, 0); a Gaussian
part's is its ρ, planned at the (ε, δ) whose ρ is at most that. Its noise is the one its plan has at the
plan's whole budget (at δ = 0 always Laplace): a request that names its noise keeps it at every budget; one
that leaves the noise to the planner (``auto``) at δ > 0 may get another noise at its share, which is
refused with the part named (its charge would not be the one the split counted). Margins are in records:
every part is of the same table, so a scale "over N" would be one common factor, and N is private under
add/remove (docs/privacy-model.md, "Several statistics under one budget").

The plan's charge is composed from each part's own :meth:`Statistic.charge` of its plan, by the ledger's rule
(:func:`dpgui.core.plan_split.plan_charge`): Laplace parts add ε (and ε²/2 as ρ), Gaussian parts add ρ; it
never exceeds the officer's (ε, δ), and each part's charge is checked to be the one the split counted.

Public values only go in and out: the plan requests (a hierarchy's request holds the tree read for it, whose
leaf counts are never read here: :meth:`Statistic.margin_at` and :meth:`Statistic.plan` plan from public
settings and public or opted-in prior counts), the weights and locks, plans and margins; no count. Nothing
is read from a data source and nothing is spent. No Qt; any one thread per call (the window's worker thread,
the command line's), told of each planning step and cancellable between them.

Cost: at most 1 + :data:`~dpgui.core.plan_split.MAX_FIT_ROUNDS` calls of each part's
:meth:`Statistic.margin_at` (a locked part's once), one :meth:`Statistic.plan` per part at its share, and at
δ > 0 one more at the whole budget to read its noise: milliseconds for a CDF at δ = 0 or the counts of a
column, about a second for a CDF with Gaussian noise (its planner's level budgets), up to seconds for a
large hierarchy whose projection is by Monte Carlo.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dpgui.core.plan_split import (
    MAX_FIT_ROUNDS, BudgetSplit, PartShare, Split, SplitChoice, SplitPart, check_budget, plan_charge, plan_point,
    split_budget,
)
from dpgui.errors import Cancelled, ParameterError
from dpgui.vocabulary import Charge, Noise
from dpgui.workspace.statistic import Planned, PlanProgress, ShouldCancel, Statistic

__all__ = ["PlanPart", "PlanSplit", "PlannedPart", "request_at", "split_plan"]

_SAME_CHARGE = 1e-9  # a part's own charge and the split's may differ by the float rounding of its level budgets


@dataclass(frozen=True, eq=False)  # a request may hold numpy arrays
class PlanPart:
    """One statistic of a plan: the registered ``statistic``, its own plan ``request`` (a CDF's
    :class:`~dpgui.workspace.planning.PlanRequest`, a hierarchy's
    :class:`~dpgui.workspace.hierarchy_planning.HierarchyPlanRequest`, the counts'
    :class:`~dpgui.workspace.statistics.counts.CountsPlanRequest`; its own budget is replaced by the part's
    share), its ``weight`` > 0, its ``lock`` (a budget in its noise's unit, ε or ρ; None: the split decides)
    and ``name``, the words of messages ("CDF of distance"; "": the statistic's title)."""

    statistic: Statistic[Any, Any, Any, Any, Any]
    request: Any
    weight: float = 1.0
    lock: float | None = None
    name: str = ""

    @property
    def words(self) -> str:
        return self.name or self.statistic.title


@dataclass(frozen=True, eq=False)
class PlannedPart:
    """One part at its share of the split used: its ``budget`` (ε for Laplace, ρ for Gaussian ``noise``),
    the (``epsilon``, ``delta``) its statistic is planned at, its plan there (``planned``:
    :meth:`Statistic.plan`), its 95 % margin (records, :meth:`Statistic.margin_at` at that point) and the
    statistic's own charge of that plan."""

    part: PlanPart
    noise: Noise
    budget: float
    epsilon: float
    delta: float
    planned: Planned[Any, Any]
    margin95: float
    charge: Charge


@dataclass(frozen=True, eq=False)
class PlanSplit:
    """The plan's split: each part at its share (``parts``, in the order given), the plan's ``charge`` (the
    parts' own charges composed by the ledger's rule; it fits the officer's cap) and the split's figures
    (``split``: which split is used, the equal split's and the closed-form split's budgets, margins and
    weighted margins, the rounds run)."""

    parts: tuple[PlannedPart, ...]
    charge: Charge
    split: BudgetSplit

    @property
    def chosen(self) -> SplitChoice:
        return self.split.chosen

    @property
    def used(self) -> Split:
        """The figures of the split the parts are planned at."""
        return self.split.split

    @property
    def equal(self) -> Split:
        """The equal split's figures (locks kept, the rest shared equally), for comparison."""
        return self.split.equal

    @property
    def weighted_margin(self) -> float:
        """Σ w_i m_i of the split used, records."""
        return self.split.split.weighted_margin


def split_plan(parts: Sequence[PlanPart], epsilon: float, delta: float = 0.0, progress: PlanProgress | None = None,
               should_cancel: ShouldCancel | None = None) -> PlanSplit:
    """Each of ``parts`` at its share of the plan's (``epsilon``, ``delta``), split for the least weighted
    95 % margin, with the equal split beside (module docstring). ParameterError (problem and fix) for what
    :func:`~dpgui.core.plan_split.split_budget` refuses (bad ε or δ, no parts, bad weights or locks, Laplace
    and Gaussian parts in one plan), for a part whose noise has no ρ (multiplicative), for a part whose noise
    left to the planner changes at its share, and a part's own where it has no plan at its share.
    ``progress(fraction, words)`` is told before each planning step (a part's noise, a margin, a part's
    plan); Cancelled before the next step once ``should_cancel`` says so."""
    check_budget(epsilon, delta)  # before any part is planned at it
    free = sum(1 for part in parts if part.lock is None)
    most = (len(parts) if delta > 0 else 0) + free * (1 + MAX_FIT_ROUNDS) + (len(parts) - free) + len(parts)
    steps = _Steps(most, progress, should_cancel)  # the noises read, the margins asked at most, the plans
    noises = [_noise_of(part, epsilon, delta, steps) for part in parts]
    split = split_budget([_split_part(part, noise, delta, steps) for part, noise in zip(parts, noises)], epsilon,
                         delta)
    steps.total = steps.done + len(parts)  # the margins asked are known now: one plan per part is left
    planned_parts = tuple(_planned_part(part, noise, share, steps)
                          for part, noise, share in zip(parts, noises, split.split.shares))
    charge, _ = plan_charge([planned.charge for planned in planned_parts], epsilon, delta)
    if progress is not None:
        progress(1.0, "the budget is split")
    return PlanSplit(planned_parts, charge, split)


class _Steps:
    """The planning steps of one split: ``progress`` told before each, Cancelled once ``should_cancel`` says so."""

    def __init__(self, total: int, progress: PlanProgress | None, should_cancel: ShouldCancel | None) -> None:
        self.total, self.progress, self.should_cancel = max(total, 1), progress, should_cancel
        self.done = 0

    def __call__(self, words: str) -> None:
        if self.should_cancel is not None and self.should_cancel():
            raise Cancelled("splitting the plan's budget was cancelled", "change a setting to plan again")
        if self.progress is not None:
            self.progress(min(1.0, self.done / self.total), words)
        self.done += 1


def _split_part(part: PlanPart, noise: Noise, delta: float, steps: _Steps) -> SplitPart:
    """The core's view of ``part``: its margin at a budget in its noise's unit is the statistic's at the
    (ε, δ) that budget is planned at."""
    statistic, request = part.statistic, part.request

    def margin(budget: float) -> float:
        steps(f"the margin of {part.words} at {'ρ' if noise is Noise.GAUSSIAN else 'ε'} = {budget:.4g}")
        return statistic.margin_at(request, *plan_point(noise, budget, delta))

    return SplitPart(part.words, margin, noise, part.weight, part.lock)


def _noise_of(part: PlanPart, epsilon: float, delta: float, steps: _Steps) -> Noise:
    """The noise of ``part``'s plan at the plan's whole (ε, δ), read from the statistic's charge of it: δ > 0
    with a ρ is Gaussian, δ = 0 Laplace; no ρ (the multiplicative noise) is refused. At δ = 0 only Laplace
    noise is possible, so nothing is planned."""
    if delta == 0:
        return Noise.LAPLACE
    steps(f"the noise of {part.words}")
    planned = part.statistic.plan(request_at(part.request, epsilon, delta))
    charge = part.statistic.charge(planned.plan)
    if charge.rho is None:
        raise ParameterError(f"the noise of {part.words} has no zCDP figure, so its budget cannot be shared with the "
                             "plan's other statistics", "choose Laplace or Gaussian noise for it")
    return Noise.GAUSSIAN if charge.delta > 0 else Noise.LAPLACE


def _planned_part(part: PlanPart, noise: Noise, share: PartShare, steps: _Steps) -> PlannedPart:
    """``part`` planned at its ``share``'s (ε, δ), its statistic's charge checked against the one the split
    counted: the same noise (else the planner chose another noise at this share) and the same figures."""
    steps(f"the plan of {part.words}")
    planned = part.statistic.plan(request_at(part.request, share.epsilon, share.delta))
    counted = share.charge
    charge = part.statistic.charge(planned.plan)
    if (charge.delta > 0) != (noise is Noise.GAUSSIAN):
        got = Noise.GAUSSIAN if charge.delta > 0 else Noise.LAPLACE
        raise ParameterError(f"the planner chose {got.words} noise for {part.words} at its share of the budget and "
                             f"{noise.words} noise at the whole budget, so its charge is not the one the split "
                             "counted", "name the noise of that statistic (Laplace or Gaussian) instead of automatic")
    if not (_close(charge.epsilon, counted.epsilon) and _close(charge.rho, counted.rho)):
        raise ParameterError(f"{part.words} is charged (ε {charge.epsilon!r}, ρ {charge.rho!r}) at its share, not "
                             f"the (ε {counted.epsilon!r}, ρ {counted.rho!r}) the split counted",
                             "report this as a bug")
    return PlannedPart(part, noise, share.budget, share.epsilon, share.delta, planned, share.margin95, charge)


def _close(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and math.isclose(a, b, rel_tol=_SAME_CHARGE)


def request_at(request: Any, epsilon: float, delta: float) -> Any:
    """``request`` at the budget (ε, δ), by its own rule: every statistic's plan request offers
    ``at_budget(ε, δ)`` (the CDF's, the hierarchy's, the counts'). A TypeError for one without it (a bug)."""
    at_budget = getattr(request, "at_budget", None)
    if not callable(at_budget):
        raise TypeError(f"a {type(request).__name__} cannot be planned at another budget (it has no at_budget)")
    return at_budget(epsilon, delta)
