"""The split of one plan's budget over several statistics (dpgui.core.plan_split): the closed form against a
brute-force grid, never worse than the equal split, weights and locks honoured, the charge composed as the
ledger composes it (checked against sums and a conversion computed here), a bounded number of rounds, and
every bad input refused with a problem and a fix."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable

import pytest
from scipy.optimize import minimize_scalar

from dpgui.core.accounting import Accounting, compose, zcdp_epsilon, zcdp_rho
from dpgui.core.plan_split import MAX_FIT_ROUNDS, SplitChoice, SplitPart, plan_point, split_budget
from dpgui.errors import DpguiError, ParameterError
from dpgui.vocabulary import Noise

DELTA = 1e-6


def _laplace(a: float, weight: float = 1.0, lock: float | None = None, name: str = "part") -> SplitPart:
    """A part whose margin is exactly a/ε (a fixed plan shape under Laplace noise)."""
    return SplitPart(name, lambda eps: a / eps, Noise.LAPLACE, weight, lock)


def _gaussian(b: float, weight: float = 1.0, lock: float | None = None) -> SplitPart:
    """A part whose margin is exactly b/√ρ (a fixed plan shape under Gaussian noise)."""
    return SplitPart("part", lambda rho: b / math.sqrt(rho), Noise.GAUSSIAN, weight, lock)


def _objective(weights: list[float], coefficients: list[float], budgets: tuple[float, ...], power: float) -> float:
    return math.fsum(w * c / b**power for w, c, b in zip(weights, coefficients, budgets))


@pytest.mark.parametrize("noise", [Noise.LAPLACE, Noise.GAUSSIAN])
def test_the_closed_form_is_the_best_point_of_a_brute_force_grid(noise: Noise) -> None:
    coefficients, weights = [30.0, 7.0, 2.0], [1.0, 2.0, 5.0]
    make = _laplace if noise is Noise.LAPLACE else _gaussian
    parts = [make(c, w) for c, w in zip(coefficients, weights)]
    delta = 0.0 if noise is Noise.LAPLACE else DELTA
    found = split_budget(parts, 1.0, delta)
    power = 1.0 if noise is Noise.LAPLACE else 0.5
    total = 1.0 if noise is Noise.LAPLACE else zcdp_rho(1.0, DELTA)
    assert found.chosen is SplitChoice.OPTIMISED and found.optimised is not None
    step = total / 400
    grid = ((i * step, j * step, total - (i + j) * step) for i, j in itertools.product(range(1, 400), repeat=2)
            if i + j < 400)
    best = min(grid, key=lambda budgets: _objective(weights, coefficients, budgets, power))
    mine = found.split.budgets
    assert all(abs(x - y) <= step for x, y in zip(mine, best)), (mine, best)
    assert found.split.weighted_margin <= _objective(weights, coefficients, best, power) * (1 + 1e-12)
    # the optimum's value (Cauchy–Schwarz / Hölder), computed here from the coefficients alone
    bound = math.fsum((w * c) ** (1 / (1 + power)) for w, c in zip(weights, coefficients)) ** (1 + power) / total**power
    assert found.split.weighted_margin == pytest.approx(bound, rel=1e-9)
    assert found.split.weighted_margin < found.equal.weighted_margin


def _shape_changing(a: float, rng: random.Random) -> Callable[[float], float]:
    """A margin like a planner's: the best of a few plan shapes (each a_s/ε + f_s), rounded up to whole records."""
    shapes = [(a * rng.uniform(0.6, 1.4), a * rng.uniform(0.0, 2.0)) for _ in range(3)]
    return lambda eps: float(math.ceil(min(slope / eps + floor for slope, floor in shapes)))


@pytest.mark.parametrize("seed", range(12))
def test_the_split_is_never_worse_than_the_equal_split(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 6)
    exact = [_laplace(rng.uniform(1, 100), rng.choice([1.0, 1.0, 2.0, 4.0, 0.5])) for _ in range(n)]
    found = split_budget(exact, rng.uniform(0.1, 3.0))
    assert found.optimised is not None and found.optimised.weighted_margin <= found.equal.weighted_margin
    real = [SplitPart(f"s{i}", _shape_changing(rng.uniform(1, 100), rng), Noise.LAPLACE, rng.choice([1.0, 4.0]))
            for i in range(n)]
    found = split_budget(real, rng.uniform(0.1, 3.0))
    assert found.split.weighted_margin <= found.equal.weighted_margin
    assert found.split.weighted_margin == min(found.equal.weighted_margin,
                                              found.optimised.weighted_margin if found.optimised else math.inf)
    # each figure is the real margin at the budget shown
    for part, share in zip(real, found.split.shares):
        assert share.margin95 == part.margin(share.budget)
    gaussian = [SplitPart(f"g{i}", (lambda b: lambda rho: math.ceil(b / math.sqrt(rho)))(rng.uniform(1, 50)),
                          Noise.GAUSSIAN, rng.choice([1.0, 4.0])) for i in range(n)]
    found = split_budget(gaussian, 1.0, DELTA)
    assert found.split.weighted_margin <= found.equal.weighted_margin


def test_weights_move_budget_toward_the_heavy_part() -> None:
    laplace = split_budget([_laplace(10.0), _laplace(10.0, 4.0), _laplace(10.0)], 1.0).split.budgets
    assert laplace[1] == pytest.approx(2 * laplace[0], rel=1e-12) and laplace[0] == pytest.approx(laplace[2], rel=1e-12)
    assert math.fsum(laplace) == pytest.approx(1.0, rel=1e-12)
    gaussian = split_budget([_gaussian(10.0), _gaussian(10.0, 4.0), _gaussian(10.0)], 1.0, DELTA).split.budgets
    assert gaussian[1] == pytest.approx(4 ** (2 / 3) * gaussian[0], rel=1e-9)
    # equal weights and equal margins: the closed form is the equal split, and the tie keeps the equal split
    same = split_budget([_laplace(10.0), _laplace(10.0), _laplace(10.0)], 1.0)
    assert same.chosen is SplitChoice.EQUAL and same.split.budgets == pytest.approx((1 / 3,) * 3, rel=1e-12)


@pytest.mark.parametrize("noise", [Noise.LAPLACE, Noise.GAUSSIAN])
def test_locks_are_kept_exactly_and_the_rest_is_split(noise: Noise) -> None:
    make = _laplace if noise is Noise.LAPLACE else _gaussian
    delta = 0.0 if noise is Noise.LAPLACE else DELTA
    total = 1.0 if noise is Noise.LAPLACE else zcdp_rho(1.0, DELTA)
    lock = total * 0.3
    found = split_budget([make(40.0), make(5.0, lock=lock), make(10.0)], 1.0, delta)
    for split in (found.split, found.equal):
        assert split.budgets[1] == lock
        assert math.fsum(split.budgets) <= total and math.fsum(split.budgets) == pytest.approx(total, rel=1e-12)
    free = found.split.budgets[0], found.split.budgets[2]
    exponent = 0.5 if noise is Noise.LAPLACE else 2 / 3
    assert free[0] / free[1] == pytest.approx(4.0**exponent, rel=1e-9)
    assert found.equal.budgets[0] == found.equal.budgets[2]
    # every part locked: the locks are the split, even when they leave budget unspent
    locked = split_budget([make(1.0, lock=total * 0.5), make(2.0, lock=total * 0.2)], 1.0, delta)
    assert locked.split.budgets == (total * 0.5, total * 0.2) and locked.optimised is None


def test_a_laplace_plan_is_charged_the_sum_of_its_parts() -> None:
    found = split_budget([_laplace(30.0), _laplace(10.0, 3.0), _laplace(2.0, lock=0.1)], 0.9)
    split = found.split
    assert found.accounting is Accounting.BASIC
    epsilons = [share.budget for share in split.shares]
    for share in split.shares:  # each part as the ledger charges a Laplace release planned at its ε
        assert (share.epsilon, share.delta) == (share.budget, 0.0)
        assert (share.charge.epsilon, share.charge.delta, share.charge.rho) == (share.budget, 0.0, share.budget**2 / 2)
    assert split.charge.epsilon == math.fsum(epsilons) and math.fsum(epsilons) <= 0.9
    assert split.charge.delta == 0.0
    assert split.charge.rho == pytest.approx(math.fsum(e * e / 2 for e in epsilons), rel=1e-15)
    assert compose([s.charge for s in split.shares], 0.9, 0.0).fits


def test_many_laplace_parts_at_a_delta_spend_no_delta() -> None:
    # 40 parts of ε = 1/40: their Σρ = 1/80 converted at δ = 10⁻⁶ is below 1, yet pure ε-DP parts spend no δ
    found = split_budget([_laplace(5.0) for _ in range(40)], 1.0, DELTA)
    assert found.split.composition.zcdp_epsilon is not None and found.split.composition.zcdp_epsilon < 0.9
    assert found.split.charge.delta == 0.0
    assert found.split.charge.epsilon == math.fsum(share.budget for share in found.split.shares)
    assert all(share.delta == 0.0 and share.charge.delta == 0.0 for share in found.split.shares)


def _cks_delta(rho: float, epsilon: float) -> float:
    """δ(ε) of ρ-zCDP (Canonne, Kamath & Steinke 2020, Cor. 13), minimised over α here by scipy."""
    def log_delta(log_am1: float) -> float:
        alpha = 1.0 + math.exp(log_am1)
        return (alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1 / alpha) - math.log(alpha - 1)
    best = minimize_scalar(log_delta, bounds=(-30.0, 10.0), method="bounded", options={"xatol": 1e-12})
    return math.exp(best.fun)


def test_a_gaussian_plan_adds_rho_and_fits_the_cap() -> None:
    found = split_budget([_gaussian(30.0), _gaussian(10.0, 3.0), _gaussian(2.0, lock=0.002)], 1.0, DELTA)
    split = found.split
    assert found.accounting is Accounting.ZCDP
    rhos = []
    for share in split.shares:
        # planned at (ε_i, δ), charged the ρ of that point, never more than the part's budget
        assert share.delta == DELTA and share.charge.delta == DELTA and share.charge.epsilon == share.epsilon
        assert share.charge.rho == zcdp_rho(share.epsilon, DELTA) and share.charge.rho <= share.budget
        assert share.charge.rho == pytest.approx(share.budget, rel=1e-9)
        rhos.append(share.charge.rho)
    total = math.fsum(rhos)
    assert split.charge.rho == total and total <= zcdp_rho(1.0, DELTA)
    assert split.charge.delta == DELTA and split.charge.epsilon == zcdp_epsilon(total, DELTA) <= 1.0 * (1 + 1e-9)
    # the same conversion computed here: Σρ-zCDP is (1, δ)-DP up to the optimiser's tolerance
    assert _cks_delta(total, 1.0) <= DELTA * (1 + 1e-6)
    assert compose([s.charge for s in split.shares], 1.0, DELTA).fits


def test_plan_point_plans_a_gaussian_part_within_its_rho() -> None:
    for rho in (1e-5, 3.7e-3, 0.02, 0.5):
        epsilon, delta = plan_point(Noise.GAUSSIAN, rho, DELTA)
        assert delta == DELTA and zcdp_rho(epsilon, DELTA) <= rho
        assert zcdp_rho(epsilon, DELTA) == pytest.approx(rho, rel=1e-9)
    assert plan_point(Noise.LAPLACE, 0.25, DELTA) == (0.25, 0.0)


def test_the_rounds_are_bounded_and_each_margin_is_asked_a_bounded_number_of_times() -> None:
    calls = [0, 0, 0, 0]

    def restless(index: int, a: float) -> Callable[[float], float]:
        def margin(eps: float) -> float:  # a planner whose shape keeps changing: the fit never settles
            calls[index] += 1
            return a / eps * (1.0 + 0.3 * math.sin(40.0 * eps + index))
        return margin

    parts = [SplitPart(f"s{i}", restless(i, a), Noise.LAPLACE, w) for i, (a, w) in enumerate([(9, 1), (3, 4), (1, 1)])]
    parts.append(SplitPart("locked", restless(3, 5.0), Noise.LAPLACE, 1.0, lock=0.2))
    found = split_budget(parts, 2.0)
    assert found.rounds == MAX_FIT_ROUNDS  # this fit never settles: the bound ends it
    assert calls[3] == 1 and all(n <= 1 + MAX_FIT_ROUNDS for n in calls[:3])
    assert found.evaluations == sum(calls) <= 3 * (1 + MAX_FIT_ROUNDS) + 1
    assert found.split.weighted_margin <= found.equal.weighted_margin


def test_a_misleading_fit_keeps_the_equal_split() -> None:
    # the light part's margin jumps below ε = 0.5 (its plan fails there); the fit cannot see the jump
    step = SplitPart("stepped", lambda eps: 1 / eps if eps >= 0.5 else 1e6, Noise.LAPLACE, 1.0)
    found = split_budget([_laplace(1.0, 4.0), step], 1.0)
    assert found.chosen is SplitChoice.EQUAL and found.split is found.equal
    assert found.optimised is not None and found.optimised.weighted_margin > found.equal.weighted_margin
    assert found.equal.weighted_margin == pytest.approx(4 * 2 + 2)


def test_a_part_without_a_plan_at_its_closed_form_share_keeps_what_was_found() -> None:
    def fussy(eps: float) -> float:
        if eps < 0.45:
            raise ParameterError("the budget is too small for this plan", "give more")
        return 1 / eps
    found = split_budget([_laplace(1.0, 4.0), SplitPart("fussy", fussy, Noise.LAPLACE)], 1.0)
    assert found.chosen is SplitChoice.EQUAL and "has no plan" in found.note
    zero = split_budget([_laplace(1.0), SplitPart("exact", lambda eps: 0.0, Noise.LAPLACE)], 1.0)
    assert zero.chosen is SplitChoice.EQUAL and zero.optimised is None and "is 0" in zero.note


BAD_PLANS: list[tuple[str, list[SplitPart], float, float]] = [
    ("ε ≤ 0", [_laplace(1.0)], 0.0, 0.0),
    ("ε negative", [_laplace(1.0)], -1.0, 0.0),
    ("ε not finite", [_laplace(1.0)], math.inf, 0.0),
    ("δ < 0", [_laplace(1.0)], 1.0, -1e-9),
    ("δ = 1", [_laplace(1.0)], 1.0, 1.0),
    ("no parts", [], 1.0, 0.0),
    ("weight 0", [_laplace(1.0, 0.0)], 1.0, 0.0),
    ("weight negative", [_laplace(1.0, -2.0)], 1.0, 0.0),
    ("weight NaN", [_laplace(1.0, math.nan)], 1.0, 0.0),
    ("weight inf", [_laplace(1.0, math.inf)], 1.0, 0.0),
    ("lock 0", [_laplace(1.0, lock=0.0), _laplace(1.0)], 1.0, 0.0),
    ("lock negative", [_laplace(1.0, lock=-0.1), _laplace(1.0)], 1.0, 0.0),
    ("locks are the whole budget", [_laplace(1.0, lock=0.5), _laplace(1.0, lock=0.5), _laplace(1.0)], 1.0, 0.0),
    ("locks exceed the budget", [_laplace(1.0, lock=0.8), _laplace(1.0)], 0.5, 0.0),
    ("all locked, over the budget", [_laplace(1.0, lock=0.8), _laplace(1.0, lock=0.8)], 1.0, 0.0),
    ("Gaussian at δ = 0", [_gaussian(1.0)], 1.0, 0.0),
    ("mixed noises", [_laplace(1.0), _gaussian(1.0)], 1.0, DELTA),
    ("multiplicative", [SplitPart("m", lambda b: 1.0, Noise.MULTIPLICATIVE)], 1.0, DELTA),
    ("margin NaN", [SplitPart("nan", lambda b: math.nan)], 1.0, 0.0),
    ("margin negative", [SplitPart("neg", lambda b: -1.0)], 1.0, 0.0),
    ("margin not a number", [SplitPart("text", lambda b: "many")], 1.0, 0.0),  # type: ignore[arg-type, return-value]
]


@pytest.mark.parametrize(("why", "parts", "epsilon", "delta"), BAD_PLANS, ids=[b[0] for b in BAD_PLANS])
def test_bad_plans_are_refused_with_a_fix(why: str, parts: list[SplitPart], epsilon: float, delta: float) -> None:
    with pytest.raises(DpguiError) as refused:
        split_budget(parts, epsilon, delta)
    assert refused.value.problem and refused.value.fix
