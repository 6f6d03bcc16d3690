"""Optimisers: Theorem IV.2, β*, the §V integer search, budget optimisation and the auto-planner."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from dpgui.core.plan import Plan, PrivacySpec, equal_budgets, split_budget
from dpgui.core.level_budgets import _Objective, optimise_budgets
from dpgui.core.planner import (
    auto_plan, baselines, candidate_shapes, paper_best_shape, theorem_iv2_branching, theorem_iv2_budgets,
)
from dpgui.core.projection import prefix_variances, total_sq_error
from dpgui.core.tree import TreeShape, beta_star
from dpgui.errors import ParameterError


@functools.lru_cache(None)
def ordered_factorizations(n: int) -> list[tuple[int, ...]]:
    out = [(n,)]
    for d in range(2, n):
        if n % d == 0:
            out.extend((d,) + rest for rest in ordered_factorizations(n // d))
    return out


def brute_force_best(bins: int, privacy: PrivacySpec, estimator: str) -> float:
    """Least exact error over every ordered factorisation of every K̄ in [K, 2K], equal budgets."""
    best = math.inf
    for padded in range(bins, 2 * bins + 1):
        for factors in ordered_factorizations(padded):
            shape = TreeShape(bins, factors)
            best = min(best, _Objective(shape, privacy, estimator, "total")(np.asarray(equal_budgets(shape, privacy))))
    return best


def test_beta_star_and_integer_17():
    beta = beta_star()
    assert abs(math.log(beta) - 3 * (beta - 1) / beta) < 1e-12
    assert 16.7 < beta < 16.9
    f = lambda b: (b - 1) / math.log(b) ** 3  # noqa: E731
    assert min(range(2, 200), key=f) == 17


@pytest.mark.parametrize("branching", [(2, 5, 9), (16, 16, 16), (3, 30), (7, 2, 2, 11)])
def test_theorem_iv2_budgets_minimise_the_covering_error(branching):
    eps = 1.3
    opt = np.array(theorem_iv2_budgets(branching, eps))
    assert abs(opt.sum() - eps) < 1e-12
    cost = lambda e: sum((n - 1) / x**2 for n, x in zip(branching, e))  # noqa: E731
    rng = np.random.default_rng(0)
    for _ in range(200):
        other = opt * np.exp(rng.normal(0, 0.2, opt.size))
        other *= eps / other.sum()
        assert cost(opt) <= cost(other) + 1e-12


def test_theorem_iv2_branching_minimises_for_fixed_budgets():
    eps = np.array([0.2, 0.5, 0.3])
    bins = 4096
    n = theorem_iv2_branching(eps, bins)
    assert abs(np.prod(n) - bins) < 1e-6 * bins
    cost = lambda r: float(np.sum((np.exp(r) - 1) / eps**2))  # noqa: E731
    result = minimize(cost, np.full(3, math.log(bins) / 3), method="SLSQP",
                      constraints=[{"type": "eq", "fun": lambda r: r.sum() - math.log(bins)}], options={"ftol": 1e-14})
    assert np.allclose(np.exp(result.x), n, rtol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("bins", list(range(2, 70)) + [97, 128])
def test_paper_best_matches_brute_force_over_all_factorisations(bins):
    privacy = PrivacySpec(1.0)
    _shape, value = paper_best_shape(bins, privacy)
    assert value <= brute_force_best(bins, privacy, "covering") * (1 + 1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("bins", list(range(2, 90, 3)))
def test_gls_candidates_match_brute_force(bins):
    privacy = PrivacySpec(1.0)
    best_candidate = min(_Objective(s, privacy, "gls", "total")(np.asarray(equal_budgets(s, privacy)))
                         for s in candidate_shapes(bins))
    assert best_candidate <= brute_force_best(bins, privacy, "gls") * (1 + 1e-12)


@pytest.mark.parametrize("neighbours", ["change", "addremove"])
@pytest.mark.parametrize("estimator", ["gls", "covering"])
def test_optimised_budgets_beat_equal_and_sum_to_epsilon(neighbours, estimator):
    privacy = PrivacySpec(0.7, neighbours, 2)
    for shape in (TreeShape(1000, (4, 10, 25)), TreeShape.uniform(4096, 2), TreeShape.uniform(300, 16)):
        eps = optimise_budgets(shape, privacy, estimator)
        assert abs(math.fsum(eps) - 0.7) < 1e-12 and min(eps) >= 0
        optimised = total_sq_error(Plan(shape, privacy, eps, estimator))
        equal = total_sq_error(Plan(shape, privacy, equal_budgets(shape, privacy), estimator))
        assert optimised <= equal * (1 + 1e-9)


def test_covering_budgets_reduce_to_theorem_iv2_without_padding():
    shape = TreeShape(4 * 9 * 25, (4, 9, 25))
    privacy = PrivacySpec(2.0)
    assert np.allclose(optimise_budgets(shape, privacy, "covering"), theorem_iv2_budgets(shape.branching, 2.0), rtol=1e-9)


def test_binary_tree_gls_drops_levels_or_moves_budget():
    """With GLS and Laplace noise the optimum moves budget between levels (research §5: −60 %)."""
    shape = TreeShape.uniform(4096, 2)
    privacy = PrivacySpec(1.0)
    opt = Plan(shape, privacy, optimise_budgets(shape, privacy, "gls"), "gls")
    equal = Plan(shape, privacy, equal_budgets(shape, privacy), "gls")
    assert total_sq_error(opt) < 0.6 * total_sq_error(equal)


def test_locked_levels_are_kept():
    shape = TreeShape.uniform(4096, 16)
    privacy = PrivacySpec(1.0)
    eps = optimise_budgets(shape, privacy, "gls", locked={1: 0.5})
    assert eps[0] == 0.5 and abs(sum(eps) - 1.0) < 1e-12
    with pytest.raises(ParameterError):
        optimise_budgets(shape, privacy, "gls", locked={1: 1.5})
    with pytest.raises(ParameterError):
        optimise_budgets(shape, privacy, "gls", locked={0: 0.1})  # the public root is not noised


def test_max_objective_lowers_the_worst_prefix():
    privacy = PrivacySpec(1.0)
    by_total = auto_plan(1000, privacy, objective="total")
    by_max = auto_plan(1000, privacy, objective="max")
    assert prefix_variances(by_max).max() <= prefix_variances(by_total).max() * (1 + 1e-9)
    assert prefix_variances(by_total).sum() <= prefix_variances(by_max).sum() * (1 + 1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("bins", [256, 4096, 65536])
@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_auto_plan_beats_paper_best_by_the_target(bins, epsilon):
    privacy = PrivacySpec(epsilon)
    plan = auto_plan(bins, privacy)
    ratio = total_sq_error(plan) / baselines(bins, privacy)["paper_best"]["total_sq_error"]
    assert ratio <= 0.36, ratio


@pytest.mark.slow
@pytest.mark.parametrize("bins, branching, neighbours, epsilon", [
    (65536, 2, "change", 0.05), (1000, 2, "addremove", 0.1), (4096, 4, "change", 0.01)])
def test_budget_optimisation_does_not_depend_on_the_scale_of_epsilon(bins, branching, neighbours, epsilon):
    """Shares optimal at ε = 1 stay optimal at any ε (variances ∝ 1/ε²); SLSQP once stopped at 2.5×."""
    from dpgui.core.level_budgets import _Objective, optimise_budgets

    shape = TreeShape.uniform(bins, branching)
    small = np.asarray(optimise_budgets(shape, PrivacySpec(epsilon, neighbours), "gls"))
    unit = np.asarray(optimise_budgets(shape, PrivacySpec(1.0, neighbours), "gls")) * epsilon
    judge = _Objective(shape, PrivacySpec(epsilon, neighbours), "gls", "total")
    assert judge(small) <= judge(unit) * (1 + 1e-6)
    assert math.fsum(small) == pytest.approx(epsilon, rel=1e-12)


@pytest.mark.parametrize("branching, neighbours, estimator", [
    ((3, 5, 7), "change", "gls"), ((4, 4, 4, 4), "addremove", "gls"), ((10, 11), "addremove", "gls"),
    ((3, 5, 7), "change", "covering"), ((6, 6, 6), "addremove", "covering")])
def test_the_planner_objective_is_the_projection_of_the_plan_for_random_budgets(branching, neighbours, estimator):
    """_Objective (the planner's view) evaluated at a plan's exact level variances equals the projection of
    that plan (dpgui.core.projection) over the whole range and over spans, per prefix, total and max; and
    its own unrounded variances are the plan's up to the rounding of the noise scales."""
    from dpgui.core.level_budgets import level_variance

    rng = np.random.default_rng(sum(branching) + len(neighbours))
    privacy = PrivacySpec(0.7, neighbours)
    missing = privacy.missing_leaf
    shape = TreeShape(math.prod(branching) - 3 - int(missing), branching, missing)
    count = shape.height + 1 - privacy.first_noised_level()
    for _ in range(5):
        weights = rng.uniform(0.05, 1.0, count)
        if estimator == "gls" and count > 2:
            weights[rng.integers(0, count - 1)] = 0.0  # an internal level left out
        budgets = np.asarray(split_budget(0.7, weights))
        plan = Plan(shape, privacy, tuple(budgets), estimator)
        exact = prefix_variances(plan)
        planned = level_variance(budgets, privacy, "laplace")
        released = np.isfinite(plan.level_variances()[privacy.first_noised_level():])
        assert planned[released] == pytest.approx(plan.level_variances()[privacy.first_noised_level():][released],
                                                  rel=2e-3)
        last = shape.leaves - 1 if privacy.root_public else shape.leaves
        first_j = int(rng.integers(1, last + 1))
        last_j = int(rng.integers(first_j, last + 1))
        for span in (None, (first_j, last_j), (first_j, first_j)):
            lo, hi = span if span is not None else (1, last)
            for objective in ("total", "max"):
                judge = _Objective(shape, privacy, estimator, objective, span=span)
                judge.variances = lambda _eps: plan.level_variances()  # type: ignore[method-assign]
                region = exact[lo - 1:hi]
                expected = region.sum() if objective == "total" else region.max()
                assert judge(budgets) == pytest.approx(float(expected), rel=1e-10, abs=1e-9)
            per = _Objective(shape, privacy, estimator, "max", span=span)
            per.variances = lambda _eps: plan.level_variances()  # type: ignore[method-assign]
            assert np.allclose(per.per_prefix(budgets), exact[lo - 1:hi], rtol=1e-10, atol=1e-9)
