"""Ko, Ziani & Fioretto's programs (6) and (7), solved to optimality: KKT conditions, tight constraints, the
independent check that no feasible perturbation does better, and Theorem 3 (equal weights: the
optimal budgets do not decrease down the levels) on many random prior trees."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgui.core.accounting import zcdp_epsilon
from dpgui.core.hierarchy import Hierarchy, plan_hierarchy, project_hierarchy
from dpgui.core.hierarchy_budget import least_budget_for_target, level_mse, level_mse_slope, optimal_allocation, weighted_mse
from dpgui.core.plan import PrivacySpec
from dpgui.errors import ParameterError


def random_prior(rng: np.random.Generator, depth: int | None = None) -> tuple[np.ndarray, ...]:
    """Counts per level (root first) of a random tree: 2–4 levels, fan-out 1–8, leaf counts from a
    mix of empty, small and large nodes (geometric with a random mean per subtree)."""
    depth = int(rng.integers(2, 5)) if depth is None else depth
    sizes = [1]
    parents = []
    for _ in range(depth):
        fan = rng.integers(1, 9, size=sizes[-1])
        parents.append(np.repeat(np.arange(sizes[-1]), fan))
        sizes.append(int(fan.sum()))
    mean = rng.choice([0.3, 3.0, 30.0, 300.0], size=sizes[-1])
    leaves = rng.geometric(1.0 / (1.0 + mean)) - 1
    levels = [leaves.astype(np.int64)]
    for p in reversed(parents):
        levels.append(np.bincount(p, weights=levels[-1], minlength=int(p.max()) + 1).astype(np.int64))
    return tuple(reversed(levels))


def _slopes(budgets, prior, weights, privacy, noise):
    first = privacy.first_noised_level()
    return np.array([weights[ell] * level_mse_slope(prior[ell], budgets[ell], privacy, noise)
                     for ell in range(first, len(prior))])


CASES = [("laplace", "change"), ("laplace", "addremove"), ("gaussian", "change"), ("gaussian", "addremove")]


@pytest.mark.slow
@pytest.mark.parametrize(("noise", "neighbours"), CASES)
def test_program_6_meets_its_kkt_conditions(noise, neighbours):
    rng = np.random.default_rng(6)
    privacy = PrivacySpec(0.7, neighbours, 2, delta=1e-7)
    total = privacy.epsilon if noise == "laplace" else privacy.rho
    for _ in range(10):
        prior = random_prior(rng)
        weights = rng.uniform(0.2, 3.0, size=len(prior))
        budgets = optimal_allocation(prior, privacy, weights, noise)
        first = privacy.first_noised_level()
        assert len(budgets) == len(prior)
        if first == 1:
            assert budgets[0] == 0.0  # the public root takes no budget and is not in the program
        noised = np.array(budgets[first:])
        assert np.all(noised > 0)  # x_ℓ > 0: the multipliers of x ≥ 0 vanish (complementary slackness)
        assert math.fsum(budgets) == pytest.approx(total, rel=1e-12)  # the budget constraint is tight
        g = _slopes(budgets, prior, weights, privacy, noise)
        assert np.all(g < 0)  # λ = −g > 0: the constraint's multiplier is positive, and it is tight
        assert np.ptp(g) <= 1e-7 * abs(g.mean())  # stationarity: w_ℓ ∂MSE_ℓ/∂x_ℓ = −λ on every level


@pytest.mark.slow
@pytest.mark.parametrize(("noise", "neighbours"), CASES)
def test_program_6_no_feasible_move_lowers_the_weighted_mse(noise, neighbours):
    """Independent of the KKT algebra: moving budget between any two levels, or to a random feasible
    point nearby, never lowers the objective."""
    rng = np.random.default_rng(66)
    privacy = PrivacySpec(1.3, neighbours, 1, delta=1e-8)
    for _ in range(4):
        prior = random_prior(rng)
        weights = rng.uniform(0.2, 3.0, size=len(prior))
        best = np.array(optimal_allocation(prior, privacy, weights, noise))
        f0 = weighted_mse(best, prior, weights, privacy, noise)
        first = privacy.first_noised_level()
        for i in range(first, len(prior)):
            for j in range(first, len(prior)):
                if i != j:
                    moved = best.copy()
                    step = 1e-3 * best[i]
                    moved[i] -= step
                    moved[j] += step
                    assert weighted_mse(moved, prior, weights, privacy, noise) >= f0 * (1 - 1e-12)
        for _ in range(20):
            d = rng.normal(size=len(prior))
            d[:first] = 0
            d[first:] -= d[first:].mean()
            moved = best + 0.05 * best.min() * d / np.abs(d).max()
            assert weighted_mse(moved, prior, weights, privacy, noise) >= f0 * (1 - 1e-12)


@pytest.mark.slow
@pytest.mark.parametrize(("noise", "neighbours"), CASES)
def test_program_7_meets_its_kkt_conditions_and_is_the_least_budget(noise, neighbours):
    rng = np.random.default_rng(7)
    privacy = PrivacySpec(1.0, neighbours, 1, delta=1e-7)
    for _ in range(8):
        prior = random_prior(rng)
        weights = rng.uniform(0.2, 3.0, size=len(prior))
        uniform_total = privacy.epsilon if noise == "laplace" else privacy.rho
        first = privacy.first_noised_level()
        k = len(prior) - first
        uniform = [0.0] * first + [uniform_total / k] * k
        tau = weighted_mse(uniform, prior, weights, privacy, noise) * rng.uniform(0.3, 3.0)
        budgets = least_budget_for_target(prior, privacy, weights, tau, noise)
        assert all(b > 0 for b in budgets[first:])
        if first == 1:
            assert budgets[0] == 0.0
        # the MSE constraint is tight, and the gradients are parallel (stationarity)
        assert weighted_mse(budgets, prior, weights, privacy, noise) == pytest.approx(tau, rel=1e-9)
        g = _slopes(budgets, prior, weights, privacy, noise)
        assert np.ptp(g) <= 1e-7 * abs(g.mean())
        # duality with program (6): at the total that program (7) found, program (6) gives the same budgets
        total = math.fsum(budgets)
        again_privacy = PrivacySpec(total, neighbours, 1) if noise == "laplace" else \
            PrivacySpec(zcdp_epsilon(total, 1e-7), neighbours, 1, delta=1e-7)
        again = optimal_allocation(prior, again_privacy, weights, noise)
        scale = total / math.fsum(again)
        assert np.allclose(np.array(again) * scale, budgets, rtol=1e-6)
        # and the uniform split of 99.9 % of that total misses the target (it is the least budget)
        lesser = [0.0] * first + [0.999 * total / k] * k
        assert weighted_mse(lesser, prior, weights, privacy, noise) > tau


@pytest.mark.slow
@pytest.mark.parametrize(("noise", "neighbours"), CASES)
def test_theorem_3_equal_weights_give_non_decreasing_budgets_down_the_levels(noise, neighbours):
    rng = np.random.default_rng(3)
    privacy = PrivacySpec(float(rng.uniform(0.1, 4.0)), neighbours, 1, delta=1e-9)
    checked = 0
    for trial in range(60):
        prior = random_prior(rng)
        eps = float(rng.choice([0.05, 0.3, 1.0, 5.0]))
        pr = PrivacySpec(eps, neighbours, int(rng.integers(1, 4)), delta=1e-9)
        budgets = optimal_allocation(prior, pr, None, noise)
        noised = np.array(budgets[pr.first_noised_level():])
        assert np.all(np.diff(noised) >= -1e-9 * noised.max()), (trial, budgets)
        checked += 1
    assert checked == 60
    assert privacy.epsilon > 0


def test_optimal_beats_uniform_and_the_plan_records_it():
    rng = np.random.default_rng(11)
    prior = random_prior(rng, depth=3)
    privacy = PrivacySpec(1.0, "change")
    uniform = plan_hierarchy(tuple(a.size for a in prior), privacy, noise="laplace", consistency="none")
    optimal = plan_hierarchy(tuple(a.size for a in prior), privacy, noise="laplace", allocation="optimal",
                             consistency="none", prior_levels=prior)
    assert optimal.allocation == "optimal" and optimal.prior_source == "prior file"
    u = project_hierarchy(uniform, prior).weighted_mse
    o = project_hierarchy(optimal, prior).weighted_mse
    assert o < u
    # the plan's budgets are program (6)'s
    assert optimal.level_budgets == pytest.approx(optimal_allocation(prior, privacy, None, "laplace"), rel=1e-12)


@pytest.mark.slow
def test_the_target_plan_meets_tau_at_its_rounded_scales():
    """Program (7) through the planner: the least ε, and the release's own (rounded-up) noise meets τ."""
    rng = np.random.default_rng(12)
    prior = random_prior(rng, depth=3)
    sizes = tuple(a.size for a in prior)
    for noise, privacy in [("laplace", PrivacySpec(5.0)), ("gaussian", PrivacySpec(5.0, delta=1e-6))]:
        base = plan_hierarchy(sizes, privacy.with_epsilon(0.5), noise=noise, consistency="none")
        tau = project_hierarchy(base, prior).weighted_mse
        plan = plan_hierarchy(sizes, privacy, noise=noise, allocation="target", target_mse=tau, consistency="none",
                              prior_levels=prior)
        assert plan.privacy.epsilon < 0.5  # optimal needs less than uniform at 0.5
        assert project_hierarchy(plan, prior).weighted_mse <= tau
        with pytest.raises(ParameterError, match="raise ε or the target"):
            plan_hierarchy(sizes, privacy.with_epsilon(0.2), noise=noise, allocation="target", target_mse=tau,
                           consistency="none", prior_levels=prior)


def test_programs_refuse_bad_weights_and_targets():
    prior = random_prior(np.random.default_rng(1), depth=2)
    privacy = PrivacySpec(1.0)
    with pytest.raises(ParameterError, match="weight"):
        optimal_allocation(prior, privacy, [1.0, 0.0, 1.0])
    with pytest.raises(ParameterError, match="one weight per level"):
        optimal_allocation(prior, privacy, [1.0, 1.0])
    with pytest.raises(ParameterError, match="target"):
        least_budget_for_target(prior, privacy, None, -1.0)
    with pytest.raises(ParameterError, match="needs node counts"):
        plan_hierarchy((1, 2, 3), privacy, allocation="optimal")
    assert level_mse(prior[1], 0.5, privacy) > level_mse(prior[1], 1.0, privacy)


def test_uniform_plans_need_no_counts():
    h = Hierarchy.from_paths(["a", "b"], [("x", "x1"), ("y", "y1"), ("y", "y2")])
    plan = plan_hierarchy(h.level_sizes, PrivacySpec(1.0, "addremove"), noise="laplace", consistency="none")
    assert plan.level_budgets == pytest.approx((1 / 3, 1 / 3, 1 / 3))


@pytest.mark.slow
def test_auto_noise_with_a_target_takes_the_noise_needing_less_epsilon():
    rng = np.random.default_rng(13)
    prior = random_prior(rng, depth=3)
    sizes = tuple(a.size for a in prior)
    privacy = PrivacySpec(8.0, "addremove", delta=1e-6)
    base = plan_hierarchy(sizes, privacy.with_epsilon(1.0), noise="laplace", consistency="none")
    tau = project_hierarchy(base, prior).weighted_mse
    need = {nz: plan_hierarchy(sizes, privacy, noise=nz, allocation="target", target_mse=tau, consistency="none",
                               prior_levels=prior).privacy.epsilon for nz in ("laplace", "gaussian")}
    auto = plan_hierarchy(sizes, privacy, noise="auto", allocation="target", target_mse=tau, consistency="none",
                          prior_levels=prior)
    assert auto.noise == min(need, key=need.__getitem__)
    assert auto.privacy.epsilon == pytest.approx(min(need.values()))
    # with a cap between the two needs, the cheaper noise is still chosen, the other said to need more
    cap = 0.5 * (need["laplace"] + need["gaussian"])
    capped = plan_hierarchy(sizes, privacy.with_epsilon(cap), noise="auto", allocation="target", target_mse=tau,
                            consistency="none", prior_levels=prior)
    assert capped.noise == auto.noise and any("need more than" in n for n in capped.notes)
