"""One budget for several statistics of one table: the split of the plan's (ε, δ) over its parts that
makes the weighted sum of their projected errors least, and what the ledger charges for it.

The parts
---------
A :class:`SplitPart` is one statistic of the plan, seen only through public numbers: its margin function
m(b) — the 95 % margin in records of that statistic's plan at the budget b (a published value lies within
± the margin of its true value in about 95 of 100 releases) —, its weight w > 0, an optional lock (a budget
the officer fixed) and its noise, which sets the unit of its budget b:

* **Laplace** (pure ε-DP): b is the part's ε; the part is planned at (ε, 0).
* **Gaussian** (ρ-zCDP): b is the part's ρ; the part is planned at (ε_b, δ), ε_b the ε whose ρ at the plan's
  δ (Canonne, Kamath & Steinke 2020, Cor. 13: :func:`~dpgui.core.accounting.zcdp_rho`) is b, rounded down
  to at most b (:func:`plan_point`), so that its plan spends at most b.

The scale of the error is the record: every part is of the same table, so "the margin over N" would divide
every term by the same N (and N is private under add/remove); weights say how much each statistic's
records of error matter to the officer.

Composition, as the ledger counts it
-------------------------------------
Each part's charge is the ledger's one rule for a release planned at its (ε, δ)
(:func:`~dpgui.core.noise_mechanisms.ledger_charge`): Laplace (ε_i, 0, ε_i²/2) — pure ε-DP is ε²/2-zCDP
(Bun & Steinke 2016, Prop. 1.4) —, Gaussian (ε_i, δ, ρ_i). The plan's charge is these charges composed by
:func:`~dpgui.core.accounting.compose` against the officer's cap (ε, δ), the ledger's own rule:

* **every part Laplace** (any δ; δ is then unused): budgets add as ε, Σ ε_i ≤ ε (basic composition); the
  plan is charged (Σ ε_i, 0, Σ ε_i²/2), as one Laplace release of Σ ε_i would be, spending no δ. (With
  δ > 0 and many parts, zCDP composition would give each part more ε — k equal parts get √(2ρ/k) against
  ε/k past k = ε²/(2ρ), about 20 parts at ε = 1, δ = 10⁻⁶ —; the split does not use it.)
* **every part Gaussian** (δ > 0): budgets add as ρ, Σ ρ_i ≤ ρ = zcdp_rho(ε, δ) (zCDP composition, Bun &
  Steinke 2016); the plan is charged (zcdp_epsilon(Σ ρ_i, δ), δ, Σ ρ_i) — what one Gaussian
  release at (ε, δ) charges.

A plan with both noises is refused. Under the ledger's rule it could fit only by zCDP composition (the δ of
several Gaussian parts adds past the cap under basic composition), where a Laplace part costs ε_i²/2: at
ε = 1, δ = 10⁻⁶ the whole plan has ρ ≈ 0.024, so a Laplace part alone could have ε ≤ 0.22 instead of 1.
Naming one noise for every part (Laplace, or Gaussian with δ > 0) is never worse, and the refusal says so.
The split never charges more than the cap: budgets are rounded down so that they sum to at most the total
in floating point, and the composed charges are checked to fit by :func:`compose` before they are returned
(:func:`plan_charge`).

How the split is chosen
-----------------------
For a fixed plan shape a Laplace part's margin is a/ε and a Gaussian part's b/√ρ, i.e. m_i(b) = c_i·b^(−p)
with p = 1 (ε) or ½ (ρ). Minimising Σ w_i c_i b_i^(−p) subject to Σ b_i = B (the budget left after the locks)
is a convex problem whose Lagrange condition p·w_i c_i b_i^(−p−1) = λ gives the closed form
b_i ∝ (w_i c_i)^(1/(1+p)): ε_i ∝ √(w_i a_i) and ρ_i ∝ (w_i b_i)^(2/3); its value
(Σ (w_i c_i)^(1/(1+p)))^(1+p) / B^p is the lower bound of Cauchy–Schwarz (p = 1) or Hölder's inequality
(p = ½), met with equality there.

A statistic's planner may change its plan's shape with its budget (a CDF's tree, a hierarchy's consistency
step), and margins of discrete noise are whole numbers, so c_i is fitted from the real m_i: first at the
equal split (locks kept, the rest shared equally), then — for at most :data:`MAX_FIT_ROUNDS` rounds — at the
last closed-form split, each round evaluating Σ w_i m_i at the new split with the real m_i and stopping when
it no longer improves or the split stops moving. The result is the better of the best closed-form split and
the equal split, by their real weighted margins (a tie, up to rounding, keeps the equal split); both are
returned with their figures. Each part's m_i is called at most 1 + :data:`MAX_FIT_ROUNDS` times (a locked
part once).

Public numbers only (budgets, margins, weights); no I/O, no Qt, any thread. The cost is that of the margin
calls, plus a few milliseconds per Gaussian part and split for the (ε, δ) conversions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from dpgui.core.accounting import Accounting, Composition, compose, within_cap, zcdp_epsilon, zcdp_rho
from dpgui.core.noise_mechanisms import ledger_charge, mechanism_for
from dpgui.errors import ParameterError
from dpgui.vocabulary import Charge, Name, Noise

__all__ = [
    "MAX_FIT_ROUNDS", "BudgetSplit", "PartShare", "Split", "SplitChoice", "SplitPart", "check_budget", "plan_charge",
    "plan_point", "split_budget",
]

#: The most closed-form rounds (each fits c_i at the last split and evaluates the new one once per part).
MAX_FIT_ROUNDS = 4
#: A closed-form split whose budgets all moved less than this (relative) from the last one ends the rounds.
_SETTLED = 1e-6
#: Weighted margins within this (relative) of each other are a tie (rounding), which keeps the equal split.
_TIE = 1e-12
_NUDGE_STEPS = 200  # a guard: each step down doubles, so a few steps reach the target


class SplitChoice(Name):
    """Which split the plan uses."""

    OPTIMISED = "optimised"  # the closed-form split, fitted to the real margins
    EQUAL = "equal"  # locks kept, the rest of the budget shared equally


@dataclass(frozen=True)
class SplitPart:
    """One statistic of the plan (module docstring): ``name`` for messages ("CDF of distance"); ``margin``
    maps a budget in the part's unit (ε for Laplace, ρ for Gaussian) to its 95 % margin in records (finite,
    ≥ 0; a ParameterError where no plan exists at that budget); ``weight`` > 0; ``lock``: the budget the
    officer fixed, in the same unit (None: the split decides)."""

    name: str
    margin: Callable[[float], float]
    noise: Noise = Noise.LAPLACE
    weight: float = 1.0
    lock: float | None = None


@dataclass(frozen=True)
class PartShare:
    """One part's share of a split: its ``budget`` (ε for Laplace, ρ for Gaussian), the (``epsilon``,
    ``delta``) its statistic is planned at (:func:`plan_point`), its 95 % margin there (records) and what
    the ledger charges for it."""

    budget: float
    epsilon: float
    delta: float
    margin95: float
    charge: Charge


@dataclass(frozen=True)
class Split:
    """A split of the plan's budget: one share per part (in the parts' order), Σ w_i m_i (records) and the
    plan's charge — its parts' charges composed as the ledger composes them (``composition``: against the
    officer's cap; it fits)."""

    shares: tuple[PartShare, ...]
    weighted_margin: float
    charge: Charge
    composition: Composition

    @property
    def budgets(self) -> tuple[float, ...]:
        return tuple(share.budget for share in self.shares)

    @property
    def margins(self) -> tuple[float, ...]:
        return tuple(share.margin95 for share in self.shares)


@dataclass(frozen=True)
class BudgetSplit:
    """The answer of :func:`split_budget`: the split to use (``chosen``: which one it is) and beside it the
    equal split and the best closed-form split (None when none was formed: every part locked, or a fitted
    margin of 0 — ``note`` says why); ``accounting``: BASIC (budgets are ε) or ZCDP (budgets are ρ);
    ``rounds``: closed-form rounds run (≤ :data:`MAX_FIT_ROUNDS`); ``evaluations``: margin calls made."""

    chosen: SplitChoice
    equal: Split
    optimised: Split | None
    accounting: Accounting
    rounds: int
    evaluations: int
    note: str = ""

    @property
    def split(self) -> Split:
        """The split the plan uses."""
        if self.chosen is SplitChoice.OPTIMISED and self.optimised is not None:
            return self.optimised
        return self.equal


def plan_point(noise: Noise, budget: float, delta: float) -> tuple[float, float]:
    """The (ε, δ) a part with ``budget`` (ε for Laplace, ρ for Gaussian, > 0) is planned at: Laplace (ε, 0);
    Gaussian (ε, ``delta``) with ε the conversion of ρ = ``budget`` at δ (:func:`zcdp_epsilon`), lowered by a
    few ulps where needed so that zcdp_rho(ε, δ) ≤ ``budget``: the part's plan — and its ledger charge, which
    records that ρ — spends at most its budget. A few milliseconds for Gaussian (conversions by bisection)."""
    if noise is Noise.LAPLACE:
        return budget, 0.0
    if noise is not Noise.GAUSSIAN:
        raise ParameterError(f"{noise.words} noise cannot be part of a split plan", "use Laplace or Gaussian noise")
    start = zcdp_epsilon(budget, delta)  # errs towards more ε: zcdp_rho(ε, δ) may be a few ulps above budget
    return _lowered(start, lambda epsilon: zcdp_rho(epsilon, delta) <= budget), delta


def split_budget(parts: Sequence[SplitPart], epsilon: float, delta: float = 0.0) -> BudgetSplit:
    """The split of the plan's (``epsilon``, ``delta``) over ``parts`` with the least weighted margin
    Σ w_i m_i, beside the equal split (module docstring). ParameterError (problem and fix) for ε ≤ 0, δ
    outside [0, 1), no parts, a weight ≤ 0 or not finite, a lock ≤ 0, locks that leave no budget for the
    parts not locked (or, all locked, exceed the total), both noises in one plan, a Gaussian part at δ = 0,
    or a margin that is not a finite number ≥ 0; a part's own ParameterError where its equal share has no
    plan. Cost: at most 1 + :data:`MAX_FIT_ROUNDS` margin calls per part."""
    _check_plan(parts, epsilon, delta)
    accounting = Accounting.ZCDP if parts[0].noise is Noise.GAUSSIAN else Accounting.BASIC
    total = zcdp_rho(epsilon, delta) if accounting is Accounting.ZCDP else float(epsilon)
    locked = [part.lock for part in parts if part.lock is not None]
    free = [i for i, part in enumerate(parts) if part.lock is None]
    left = total - math.fsum(locked)
    if free and left <= total * 1e-12:
        raise ParameterError(f"the locked budgets ({_figures(locked)}) leave nothing of the plan's "
                             f"{_unit(accounting)} = {total:.6g} for the {len(free)} statistic(s) not locked",
                             "lower a lock, or unlock a statistic")
    if not free and not within_cap(math.fsum(locked), total):
        raise ParameterError(f"the locked budgets add up to {math.fsum(locked):.6g}, more than the plan's "
                             f"{_unit(accounting)} = {total:.6g}", "lower a lock, or raise the plan's budget")
    evaluate = _Evaluator(parts, epsilon, delta)
    if not free:
        return BudgetSplit(SplitChoice.EQUAL, evaluate([float(lock) for lock in locked]), None, accounting, 0,
                           evaluate.calls, "every statistic is locked: the split is the locks")
    equal = evaluate(_round_down([left / len(free) if part.lock is None else part.lock for part in parts],
                                 parts, total))
    best, rounds, note = _closed_form_rounds(parts, equal, left, total, accounting, evaluate)
    better = best is not None and best.weighted_margin < equal.weighted_margin * (1.0 - _TIE)
    chosen = SplitChoice.OPTIMISED if better else SplitChoice.EQUAL
    return BudgetSplit(chosen, equal, best, accounting, rounds, evaluate.calls, note)


def _closed_form_rounds(parts: Sequence[SplitPart], equal: Split, left: float, total: float,
                        accounting: Accounting, evaluate: _Evaluator) -> tuple[Split | None, int, str]:
    """The best closed-form split over at most :data:`MAX_FIT_ROUNDS` rounds, the rounds run, and why no
    split was formed ("" when one was)."""
    power = 0.5 if accounting is Accounting.ZCDP else 1.0
    best: Split | None = None
    last = equal
    for rounds in range(1, MAX_FIT_ROUNDS + 1):
        coefficients = [part.weight * share.margin95 * share.budget**power for part, share in zip(parts, last.shares)]
        flat = [part.name for part, c in zip(parts, coefficients) if part.lock is None and not c > 0]
        if flat:
            return best, rounds - 1, (f"the margin of {flat[0]} is 0 at its share, so it does not fall with its "
                                      "budget: no closed-form split")
        budgets = _round_down(_closed_form(parts, coefficients, left, power), parts, total)
        try:
            candidate = evaluate(budgets)
        except ParameterError as err:  # a part has no plan at its closed-form share: keep what was found
            return best, rounds, f"the closed-form split of round {rounds} has no plan ({err.problem})"
        moved = max(abs(new - old) / old for new, old in zip(candidate.budgets, last.budgets))
        if best is not None and candidate.weighted_margin >= best.weighted_margin:
            return best, rounds, ""
        best = last = candidate
        if moved < _SETTLED:
            break
    return best, rounds, ""


def _closed_form(parts: Sequence[SplitPart], coefficients: Sequence[float], left: float, power: float) -> list[float]:
    """b_i = left · (w_i c_i)^(1/(1+p)) / Σ_j (w_j c_j)^(1/(1+p)) for the parts not locked (``coefficients``
    are w_i c_i), the locks for the rest."""
    exponent = 1.0 / (1.0 + power)
    roots = [c**exponent if part.lock is None else 0.0 for part, c in zip(parts, coefficients)]
    scale = left / math.fsum(roots)
    return [root * scale if part.lock is None else float(part.lock) for part, root in zip(parts, roots)]


def _round_down(budgets: list[float], parts: Sequence[SplitPart], total: float) -> list[float]:
    """``budgets`` with those not locked scaled down by a few ulps until their float sum is at most ``total``
    (the budgets never add up to more than the plan's, even by rounding)."""
    def scaled(factor: float) -> list[float]:
        return [b * factor if part.lock is None else b for b, part in zip(budgets, parts)]
    return scaled(_lowered(1.0, lambda factor: math.fsum(scaled(factor)) <= total))


def _lowered(value: float, fits: Callable[[float], bool]) -> float:
    """``value`` if it ``fits``, else the first that fits of value·(1 − 4u), then steps down that double
    (u = 2⁻⁵²): a few steps for a value that is off by rounding. A ParameterError (a bug) if none fits."""
    step = 4.0 * 2.0**-52
    for _ in range(_NUDGE_STEPS):
        if fits(value):
            return value
        value *= 1.0 - step
        step = min(2.0 * step, 0.5)
    raise ParameterError(f"no budget below {value!r} fits the plan", "report this as a bug")


class _Evaluator:
    """A split of given budgets with the real margins, each margin call cached per part and budget."""

    def __init__(self, parts: Sequence[SplitPart], epsilon: float, delta: float) -> None:
        self.parts, self.epsilon, self.delta = parts, epsilon, delta
        self.cache: list[dict[float, float]] = [{} for _ in parts]
        self.calls = 0

    def margin(self, index: int, budget: float) -> float:
        known = self.cache[index].get(budget)
        if known is not None:
            return known
        part = self.parts[index]
        self.calls += 1
        value = part.margin(budget)
        try:
            records = float(value)
        except (TypeError, ValueError):
            records = math.nan
        if not (math.isfinite(records) and records >= 0):
            raise ParameterError(f"the margin of {part.name} at {_budget_words(part.noise, budget)} is {value!r}, "
                                 "not a finite number of records ≥ 0", "check that statistic's plan")
        self.cache[index][budget] = records
        return records

    def __call__(self, budgets: Sequence[float]) -> Split:
        shares = []
        for index, (part, budget) in enumerate(zip(self.parts, budgets)):
            point = plan_point(part.noise, budget, self.delta)
            mechanism = mechanism_for(part.noise)
            charge = ledger_charge(mechanism, point[0], point[1], Fraction(mechanism.budget_total(*point)))
            shares.append(PartShare(budget, point[0], point[1], self.margin(index, budget), charge))
        weighted = math.fsum(part.weight * share.margin95 for part, share in zip(self.parts, shares))
        charge, composition = plan_charge([share.charge for share in shares], self.epsilon, self.delta)
        return Split(tuple(shares), weighted, charge, composition)


def plan_charge(charges: Sequence[Charge], epsilon: float, delta: float) -> tuple[Charge, Composition]:
    """The plan's charge from its parts' ``charges``, composed by the ledger's rule against the officer's cap
    (``epsilon``, ``delta``) (:func:`~dpgui.core.accounting.compose`), and the composition. Pure ε-DP parts
    (no δ) within basic composition: (Σ ε_i, 0, Σ ρ_i), spending no δ, as one Laplace release would; else,
    where zCDP composition fits: (Σ ρ_i converted to ε at the cap's δ, the cap's δ, Σ ρ_i), as one Gaussian
    release at the cap would; else (Σ ε_i, Σ δ_i, Σ ρ_i). A ParameterError when the charges do not fit the
    cap (a split made here always fits: its budgets are rounded down). O(parts), a conversion of Σ ρ where
    δ > 0."""
    composition = compose(charges, epsilon, delta)
    if not composition.fits:
        raise ParameterError(f"the parts' charges (Σε = {composition.epsilon:.9g}, Σρ = {composition.rho!r}) "
                             f"do not fit the plan's (ε, δ) = ({epsilon}, {delta})",
                             "lower a part's budget, or raise the plan's")
    pure = composition.basic_fits and composition.delta == 0
    if not pure and composition.zcdp_fits and composition.zcdp_epsilon is not None:
        return Charge(composition.zcdp_epsilon, composition.cap_delta, composition.rho), composition
    return Charge(composition.epsilon, composition.delta, composition.rho), composition


def check_budget(epsilon: float, delta: float) -> None:
    """ParameterError (problem and fix) unless the plan's ε is a finite number > 0 and its δ is in [0, 1)."""
    if isinstance(epsilon, bool) or not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise ParameterError(f"the plan's ε must be a finite number > 0, not {epsilon!r}", "give ε such as 1")
    if isinstance(delta, bool) or not (isinstance(delta, (int, float)) and 0 <= delta < 1):
        raise ParameterError(f"the plan's δ must be a probability in [0, 1), not {delta!r}",
                             "give δ = 0 for pure ε-DP, or a small probability such as 1e-6")


def _check_plan(parts: Sequence[SplitPart], epsilon: float, delta: float) -> None:
    """ParameterError for what :func:`split_budget` refuses (its docstring)."""
    check_budget(epsilon, delta)
    if not parts:
        raise ParameterError("the plan has no statistics", "add at least one statistic to the plan")
    noises = {Noise(part.noise) for part in parts}
    if len(noises) > 1:
        raise ParameterError(
            "the plan mixes Laplace and Gaussian noise: they compose only under zCDP, where a Laplace part costs "
            "ε²/2 and gets far less ε than with Laplace alone",
            "name one noise for every statistic: Laplace (any δ), or Gaussian with δ > 0")
    noise = noises.pop()
    if noise not in (Noise.LAPLACE, Noise.GAUSSIAN):
        raise ParameterError(f"{noise.words} noise cannot be part of a split plan", "use Laplace or Gaussian noise")
    if noise is Noise.GAUSSIAN and delta <= 0:
        raise ParameterError("Gaussian noise needs δ > 0 (with δ = 0 only pure ε-DP Laplace noise is possible)",
                             "give δ such as 1e-6, or use Laplace noise")
    for part in parts:
        if isinstance(part.weight, bool) or not (isinstance(part.weight, (int, float)) and math.isfinite(part.weight)
                                                 and part.weight > 0):
            raise ParameterError(f"the weight of {part.name} must be a finite number > 0, not {part.weight!r}",
                                 "give a weight such as 1 (equal) or 4 (four times as important)")
        lock = part.lock
        if lock is not None and not (isinstance(lock, (int, float)) and math.isfinite(lock) and lock > 0):
            raise ParameterError(f"the locked budget of {part.name} must be a finite number > 0, not {lock!r}",
                                 "give a positive budget, or unlock it")


def _unit(accounting: Accounting) -> str:
    return "ρ" if accounting is Accounting.ZCDP else "ε"


def _budget_words(noise: Noise, budget: float) -> str:
    return f"{'ρ' if noise is Noise.GAUSSIAN else 'ε'} = {budget:.6g}"


def _figures(values: Sequence[float]) -> str:
    return ", ".join(f"{v:.6g}" for v in values)
