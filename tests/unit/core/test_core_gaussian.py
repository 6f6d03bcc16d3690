"""Gaussian trees under (ε, δ): sensitivity, accounting, Monte Carlo, and the planner.

Every privacy figure is checked by a computation of its own here:

* the L2 sensitivity of a tree level by enumerating *all* neighbouring datasets of small data;
* ρ spent by summing Δ₂²/(2σ_l²) over the plan's exact rational σ_l², ε spent by OpenDP's conversion;
* the exact per-prefix variances of Gaussian plans by Monte Carlo of the real pipeline (2,000 trials,
  seeded), with a test proving that check would notice a factor 2 in one level's σ;
* the planner's Gaussian closed form by random perturbation, judged by the exact projected error.

The Monte Carlo standard error is the empirical one, SD(e²)/√n of the per-trial squared errors: at
small σ the discrete Gaussian is far from normal (at σ² = 0.2 nearly all mass is on {−1, 0, 1}, kurtosis
≈ 7), so the normal-theory SE var·√(2/(n−1)) would understate the spread of a prefix covered by one node
(observed: up to 1.8× smaller). Plans with every σ ≥ 2 must pass the normal-theory check as well.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import opendp.prelude as dp
import pytest

import dpgui.core.noise_mechanisms as noise_mechanisms
from dpgui.core.accounting import cdp_delta, zcdp_epsilon, zcdp_rho
from dpgui.core.mechanism import add_noise, estimate_cumulative
from dpgui.core.noise import SeededRandom
from dpgui.core.noise_moments import discrete_gaussian_variance
from dpgui.core.plan import Plan, PrivacySpec, check_delta, equal_budgets, split_budget
from dpgui.core.level_budgets import optimise_budgets
from dpgui.core.planner import auto_plan, margin95, plan_error, plan_for_accuracy
from dpgui.core.projection import prefix_basis, prefix_variances, prefix_variances_from_basis
from dpgui.core.tree import TreeShape
from dpgui.errors import ParameterError


def _l2sq(neighbours: str, records: int) -> int:
    """Δ₂² of one level, from the derivation (not from the code under test): change moves L records out
    of one node and into another, (−L)² + L²; add/remove adds L records to one node, L²."""
    return 2 * records**2 if neighbours == "change" else records**2


# ---------------------------------------------------------------- 3. L2 sensitivity by enumeration
SENSITIVITY_SHAPES = [
    TreeShape(6, (2, 3)), TreeShape(6, (3, 2)),
    TreeShape(5, (2, 3), missing_leaf=True), TreeShape(5, (3, 2), missing_leaf=True),
    TreeShape(6, (2, 4), missing_leaf=True),  # padding after the missing leaf
    TreeShape(7, (2, 2, 2)),
]


def _level_deltas(shape: TreeShape, base: np.ndarray, before: Sequence[int], after: Sequence[int]) -> list[np.ndarray]:
    """Per level, the change of the node counts between dataset ``base + before`` and ``base + after``
    (records given as real-leaf indices; index K is the missing leaf when the tree has one)."""
    def levels(records: Sequence[int]) -> list[np.ndarray]:
        leaves = base + np.bincount(np.asarray(records, dtype=np.int64), minlength=shape.leaves)
        missing = int(leaves[shape.bins]) if shape.missing_leaf else 0
        return shape.level_counts(leaves[: shape.bins], missing)

    return [b - a for a, b in zip(levels(before), levels(after))]


SENSITIVITY_CASES = [(shape, neighbours) for shape in SENSITIVITY_SHAPES for neighbours in ("change", "addremove")
                     if not (shape.missing_leaf and neighbours == "addremove")]  # add/remove drops missing values


@pytest.mark.slow
@pytest.mark.parametrize("shape,neighbours", SENSITIVITY_CASES,
                         ids=[f"{s.bins}-{s.label}{'-missing' if s.missing_leaf else ''}-{n}" for s, n in SENSITIVITY_CASES])
@pytest.mark.parametrize("records", [1, 2, 3])
def test_level_l2_sensitivity_by_enumerating_every_neighbour(shape, neighbours, records):
    """One person with L records. change: the L records sit in any real leaves (missing leaf included)
    and move to any real leaves; addremove: L records are added anywhere. Over all such neighbours the
    largest squared L2 (and L1) change of each noised level equals Δ₂² (Δ₁) of the privacy spec, and is
    attained; the public root (change) never changes."""
    privacy = PrivacySpec(1.0, neighbours, records, 1e-6)
    base = np.random.default_rng(shape.bins * 10 + records).integers(0, 3, shape.leaves)
    multisets = list(itertools.combinations_with_replacement(range(shape.leaves), records))
    pairs: list[tuple[tuple[int, ...], tuple[int, ...]]] = (
        list(itertools.product(multisets, multisets)) if neighbours == "change" else [((), m) for m in multisets])
    max_l2 = np.zeros(shape.height + 1, dtype=np.int64)
    max_l1 = np.zeros(shape.height + 1, dtype=np.int64)
    count = 0
    for before, after in pairs:
        for level, delta in enumerate(_level_deltas(shape, base, before, after)):
            max_l2[level] = max(max_l2[level], int(delta @ delta))
            max_l1[level] = max(max_l1[level], int(np.abs(delta).sum()))
        count += 1
    assert count == len(multisets) ** (2 if neighbours == "change" else 1)
    first = privacy.first_noised_level()
    assert privacy.level_l2_sensitivity_squared == _l2sq(neighbours, records)
    for level in range(first, shape.height + 1):
        assert max_l2[level] == privacy.level_l2_sensitivity_squared, (level, max_l2)
        assert max_l1[level] == privacy.level_sensitivity, (level, max_l1)
    if neighbours == "change":
        assert max_l2[0] == 0  # N (all rows, missing included) is the same in both datasets


# ---------------------------------------------------------------- 4. plan accounting
def _gaussian_plans() -> dict[str, Plan]:
    change = PrivacySpec(1.0, "change", 1, 1e-6)
    addremove2 = PrivacySpec(0.5, "addremove", 2, 1e-9)
    shape_c = TreeShape(200, (3, 3, 3, 3, 3), missing_leaf=True)
    shape_a = TreeShape(100, (4, 5, 5))
    big = PrivacySpec(8.0, "change", 3, 1e-3)
    return {
        "equal-change": Plan(shape_c, change, equal_budgets(shape_c, change, "gaussian"), "gls", "gaussian"),
        "covering-optimal-addremove-L2": Plan(
            shape_a, addremove2, optimise_budgets(shape_a, addremove2, "covering", noise="gaussian"), "covering",
            "gaussian"),
        "zero-level-gls-L3": Plan(TreeShape(64, (4, 4, 5), True), big,
                                  split_budget(big.rho or 0.0, [1.0, 0.0, 3.0]), "gls", "gaussian"),
        "auto-gaussian-addremove": auto_plan(300, PrivacySpec(2.0, "addremove", 1, 1e-5), noise="gaussian"),
        "auto-gaussian-change-L2-max": auto_plan(500, PrivacySpec(1.0, "change", 2, 1e-8), noise="gaussian",
                                                  objective="max"),
    }


GAUSSIAN_PLANS = _gaussian_plans()


@pytest.mark.parametrize("name", list(GAUSSIAN_PLANS))
def test_gaussian_plan_spends_at_most_its_budget(name):
    """ρ spent = Σ Δ₂²/(2σ_l²) over the plan's exact σ_l² (recomputed here), ≤ ρ = zcdp_rho(ε, δ) and
    within 1e-4 of it; each level's σ_l² covers its ρ_l; ε spent ≤ ε by our conversion and OpenDP's."""
    dp.enable_features("contrib")
    plan = GAUSSIAN_PLANS[name]
    privacy = plan.privacy
    l2sq = _l2sq(privacy.neighbours, privacy.records_per_person)
    rho = zcdp_rho(privacy.epsilon, privacy.delta)
    assert privacy.rho == rho and plan.budget_total == rho and plan.budget_name == "ρ"
    assert math.fsum(plan.level_budgets) == pytest.approx(rho, rel=1e-12)
    first = privacy.first_noised_level()
    recomputed = Fraction(0)
    for offset, rho_l in enumerate(plan.level_budgets):
        sigma2 = plan.scales[first + offset]
        if rho_l == 0:
            assert sigma2 is None
            continue
        assert isinstance(sigma2, Fraction)
        assert Fraction(l2sq) / (2 * sigma2) <= Fraction(rho_l)  # level l is ρ_l-zCDP
        assert float(Fraction(l2sq) / (2 * sigma2)) == pytest.approx(rho_l, rel=1e-4)  # rounding is small
        recomputed += Fraction(l2sq) / (2 * sigma2)
    assert all(s is None for s in plan.scales[:first])
    spent = plan.rho_spent()
    assert spent == recomputed  # exact rationals
    assert spent <= Fraction(rho)
    assert float(spent) == pytest.approx(rho, rel=1e-4)
    eps_spent = plan.epsilon_spent()
    assert eps_spent <= Fraction(privacy.epsilon)
    assert float(eps_spent) == pytest.approx(zcdp_epsilon(float(spent), privacy.delta), rel=1e-15)
    assert cdp_delta(float(spent), float(eps_spent)) <= privacy.delta * (1 + 1e-12)
    # independent: OpenDP's conversion of the spent ρ
    meas = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0)
    d_in = math.sqrt(2.0 * float(spent))
    od_eps = dp.c.make_zCDP_to_approxDP(meas).map(d_in).epsilon(privacy.delta)
    assert od_eps == pytest.approx(float(eps_spent), rel=1e-9)
    assert od_eps <= privacy.epsilon * (1 + 1e-12)
    assert plan.delta_spent == privacy.delta
    # the ledger charges the planned figures, each at least the spent one
    eps_c, delta_c, rho_c = plan.ledger_charge()
    assert (eps_c, delta_c, rho_c) == (privacy.epsilon, privacy.delta, rho)
    assert rho_c >= float(spent) and zcdp_epsilon(rho_c, delta_c) <= eps_c


def test_laplace_plan_ledger_charge_and_delta_unused():
    """A Laplace plan spends ε (δ unused, even with δ > 0 in the spec) and charges ε²/2 as zCDP ρ."""
    for delta in (0.0, 1e-6):
        privacy = PrivacySpec(0.8, "addremove", 2, delta)
        shape = TreeShape(100, (10, 10))
        plan = Plan(shape, privacy, equal_budgets(shape, privacy), "gls", "laplace")
        assert plan.ledger_charge() == (0.8, 0.0, 0.8**2 / 2)
        assert plan.delta_spent == 0.0 and plan.level_rhos is None and plan.budget_name == "ε"
        spent = plan.epsilon_spent()
        assert spent == sum(Fraction(2) / s for s in plan.scales if s is not None)  # Δ₁ = L = 2 (add/remove)
        assert spent <= Fraction(0.8)
        assert plan.rho_spent() == spent * spent / 2


@pytest.mark.parametrize("name", list(GAUSSIAN_PLANS))
def test_gaussian_plan_json_round_trip(name):
    plan = GAUSSIAN_PLANS[name]
    data = json.loads(json.dumps(plan.to_json()))
    again = Plan.from_json(data)
    assert again == plan
    assert again.scales == plan.scales
    assert data["noise"] == "discrete_gaussian" and data["level_epsilons"] is None
    assert data["level_rhos"] == list(plan.level_budgets)
    first = plan.privacy.first_noised_level()
    assert data["level_sigma2"] == [None if s is None else float(s) for s in plan.scales[first:]]
    assert data["rho"] == plan.privacy.rho and data["rho_spent"] == float(plan.rho_spent())
    assert data["delta"] == plan.privacy.delta == data["delta_spent"]
    assert data["l2_sensitivity_squared_per_level"] == _l2sq(plan.privacy.neighbours, plan.privacy.records_per_person)


@pytest.mark.slow
@pytest.mark.parametrize("delta", [0.0, 1e-9])
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_laplace_plan_json_round_trip(delta, neighbours):
    plan = auto_plan(150, PrivacySpec(0.7, neighbours, 2, delta), noise="laplace")
    data = json.loads(json.dumps(plan.to_json()))
    again = Plan.from_json(data)
    assert again == plan and again.scales == plan.scales and again.noise == "laplace"
    assert data["noise"] == "discrete_laplace"
    if delta > 0:
        assert data["delta"] == delta and data["delta_spent"] == 0.0 and data["level_rhos"] is None
    else:
        assert "delta" not in data  # a pure ε-DP plan's JSON is what it was before δ existed


@pytest.mark.parametrize("bad", [-1e-9, -1.0, 1.0, 1.5, float("nan"), float("inf"), "abc", "", "  ", None])
def test_bad_delta_is_refused(bad):
    with pytest.raises(ParameterError) as info:
        check_delta(bad)
    assert info.value.fix
    with pytest.raises(ParameterError):
        PrivacySpec(1.0, "change", 1, bad)


def test_gaussian_needs_delta():
    privacy = PrivacySpec(1.0)
    assert privacy.delta == 0.0 and privacy.rho is None
    shape = TreeShape(64, (8, 9), missing_leaf=True)
    with pytest.raises(ParameterError) as info:
        Plan(shape, privacy, (0.5, 0.5), "gls", "gaussian")
    assert "δ" in str(info.value) and info.value.fix
    with pytest.raises(ParameterError):
        auto_plan(64, privacy, noise="gaussian")
    with pytest.raises(ParameterError):
        plan_for_accuracy(64, privacy, 50.0, noise="gaussian")
    with pytest.raises(ParameterError):
        equal_budgets(shape, privacy, "gaussian")
    with pytest.raises(ParameterError):
        optimise_budgets(shape, privacy, noise="gaussian")
    # δ given as text is read as a number
    assert PrivacySpec(1.0, "change", 1, "1e-6").delta == 1e-6  # type: ignore[arg-type]


# ---------------------------------------------------------------- 5./6. Monte Carlo vs exact projections
MC_TRIALS = 2000
MC_Z = 4.0


@dataclass(frozen=True)
class MonteCarloCheck:
    """Per prefix j: the Monte Carlo mean squared error of Ĉ_j, its standard error, the expected
    variance, and z = (MC − expected)/SE. ``agrees``: every |z| < 4 and public prefixes exact."""

    mean_sq: np.ndarray
    se: np.ndarray
    expected: np.ndarray
    z: np.ndarray
    exact_where_public: bool
    summed_bias_z: float
    z_normal: np.ndarray  # the same with the normal-theory SE, expected·√(2/(n−1)) (valid for σ ≥ 2)

    @property
    def max_abs_z(self) -> float:
        return float(np.abs(self.z).max())

    @property
    def agrees(self) -> bool:
        return self.exact_where_public and self.max_abs_z < MC_Z

    def describe(self) -> str:
        worst = int(np.argmax(np.abs(self.z)))
        return (f"max |z| = {self.max_abs_z:.2f} at prefix {worst + 1}: MC {self.mean_sq[worst]:.4g} ± "
                f"{self.se[worst]:.2g} vs expected {self.expected[worst]:.4g}; summed-error bias z = "
                f"{self.summed_bias_z:+.2f}")


def monte_carlo_check(plan: Plan, seed: int, expected: np.ndarray | None = None,
                      trials: int = MC_TRIALS) -> MonteCarloCheck:
    """Release ``trials`` times through the real pipeline (``add_noise`` drawing all trials' node noise
    from one seeded source, then ``estimate_cumulative`` per trial) on a fixed random dataset, and
    compare the per-prefix squared errors of Ĉ_j (j over the real leaves) with ``expected`` (default:
    the exact projection ``prefix_variances(plan)``)."""
    shape = plan.shape
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(40 * shape.bins, rng.dirichlet(np.ones(shape.bins)))
    missing = int(rng.integers(0, 30)) if shape.missing_leaf else 0
    true_levels = shape.level_counts(counts, missing)
    truth = np.cumsum(true_levels[-1][: shape.leaves]).astype(float)
    noisy = add_noise(plan, [np.tile(level, trials) for level in true_levels], SeededRandom(seed))
    sizes = [level.size for level in true_levels]
    errors = np.empty((trials, shape.leaves))
    for t in range(trials):
        levels = [None if a is None else a[t * n:(t + 1) * n] for a, n in zip(noisy, sizes)]
        errors[t] = estimate_cumulative(plan, levels) - truth
    exp = prefix_variances(plan) if expected is None else np.asarray(expected, dtype=float)
    sq = errors**2
    mean_sq = sq.mean(axis=0)
    se = sq.std(axis=0, ddof=1) / math.sqrt(trials)
    public = exp == 0
    exact = bool(np.all(errors[:, public] == 0))
    noised = ~public
    z = (mean_sq[noised] - exp[noised]) / np.where(se[noised] > 0, se[noised], np.inf)
    z = np.where(se[noised] > 0, z, np.where(mean_sq[noised] == exp[noised], 0.0, np.inf))
    z_normal = (mean_sq[noised] - exp[noised]) / (exp[noised] * math.sqrt(2.0 / (trials - 1)))
    summed = errors.sum(axis=1)
    bias_z = float(summed.mean() / (summed.std(ddof=1) / math.sqrt(trials)))
    return MonteCarloCheck(mean_sq[noised], se[noised], exp[noised], z, exact, bias_z, z_normal)


def _spec_for_rho(rho: float, neighbours: str, records: int, delta: float) -> PrivacySpec:
    """The spec whose ρ = zcdp_rho(ε, δ) is ``rho`` (ε = zcdp_epsilon(ρ, δ))."""
    return PrivacySpec(zcdp_epsilon(rho, delta), neighbours, records, delta)


def _mc_plans() -> dict[str, Plan]:
    small_c = _spec_for_rho(15.0, "change", 1, 1e-6)  # ρ_l = 5 on 3 levels: σ² = 2/10 = 0.2 (σ ≈ 0.45)
    shape64 = TreeShape(64, (4, 4, 5), missing_leaf=True)
    addremove = PrivacySpec(1.0, "addremove", 1, 1e-6)
    shape100 = TreeShape(100, (5, 5, 4))
    change2 = PrivacySpec(2.0, "change", 2, 1e-6)
    shape150 = TreeShape(150, (4, 4, 10), missing_leaf=True)
    change2b = PrivacySpec(1.0, "change", 2, 1e-9)
    shape200 = TreeShape(200, (3, 3, 3, 3, 3), missing_leaf=True)
    small_a2 = PrivacySpec(12.0, "addremove", 2, 1e-6)  # σ_l ≈ 1.3–1.9 (< 2)
    shape64a = TreeShape(64, (8, 8))
    return {
        "gls-change-L1-sigma2-0.2": Plan(shape64, small_c, equal_budgets(shape64, small_c, "gaussian"), "gls",
                                         "gaussian"),
        "covering-change-L1-sigma2-0.2": Plan(shape64, small_c, equal_budgets(shape64, small_c, "gaussian"),
                                              "covering", "gaussian"),
        "gls-addremove-L1-optimised": Plan(shape100, addremove, optimise_budgets(shape100, addremove, "gls",
                                                                                 noise="gaussian"), "gls", "gaussian"),
        "covering-addremove-L1-equal": Plan(TreeShape(100, (10, 10)), addremove,
                                            equal_budgets(TreeShape(100, (10, 10)), addremove, "gaussian"),
                                            "covering", "gaussian"),
        "gls-change-L2-zero-level": Plan(shape150, change2, split_budget(change2.rho or 0.0, [1.0, 0.0, 2.0]),
                                         "gls", "gaussian"),
        "covering-change-L2-optimised": Plan(shape200, change2b, optimise_budgets(shape200, change2b, "covering",
                                                                                  noise="gaussian"),
                                             "covering", "gaussian"),
        "gls-addremove-L2-auto": auto_plan(128, PrivacySpec(0.5, "addremove", 2, 1e-6), noise="gaussian"),
        "covering-addremove-L2-small-sigma": Plan(shape64a, small_a2, split_budget(small_a2.rho or 0.0, [1, 2, 3]),
                                                  "covering", "gaussian"),
    }


MC_PLANS = _mc_plans()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MC_PLANS))
def test_monte_carlo_matches_exact_gaussian_projection_per_prefix(name):
    """2,000 seeded releases: every prefix's mean squared error within 4 SE of the exact projection
    (the discrete Gaussian's exact variance per level, not σ²); Ĉ_{K+1} = N exact under change; the
    summed error unbiased (|z| < 4)."""
    plan = MC_PLANS[name]
    assert plan.noise == "gaussian"
    check = monte_carlo_check(plan, seed=sum(map(ord, name)))
    print(f"{name} ({plan.shape.label}, {plan.privacy.neighbours}, L = {plan.privacy.records_per_person}, "
          f"σ² = {[round(float(s), 3) for s in plan.scales if s is not None]}): {check.describe()}")
    assert check.exact_where_public, name
    assert check.agrees, f"{name}: {check.describe()}"
    assert abs(check.summed_bias_z) < MC_Z, f"{name}: {check.describe()}"
    if min(float(s) for s in plan.scales if s is not None) >= 4.0:  # σ ≥ 2: errors are close to normal
        assert np.abs(check.z_normal).max() < MC_Z, f"{name}: normal-theory max |z| = {np.abs(check.z_normal).max():.2f}"


def _projection_with_variances(plan: Plan, variances: np.ndarray) -> np.ndarray:
    """What the exact projection would say if the per-level noise variances were ``variances``."""
    j = np.arange(1, plan.shape.leaves + 1, dtype=np.int64)
    basis = prefix_basis(plan.shape, plan.estimator, plan.released(), j)
    return prefix_variances_from_basis(plan.shape, plan.estimator, basis, variances, j, plan.privacy.root_public)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gls-change-L1-sigma2-0.2", "covering-change-L1-sigma2-0.2"])
def test_monte_carlo_tells_the_exact_variance_from_sigma2(name):
    """At σ² = 0.2 the discrete Gaussian's variance is ~0.71 σ²: the projection that (wrongly) used σ²
    is rejected by the same Monte Carlo that accepts the exact one."""
    plan = MC_PLANS[name]
    sigma2 = np.array([0.0 if s is None else float(s) for s in plan.scales])
    assert sigma2[1:].max() < 4.0  # σ < 2
    exact = plan.level_variances()
    assert np.all(exact[1:] < 0.75 * sigma2[1:])
    naive = _projection_with_variances(plan, np.where(np.arange(sigma2.size) == 0, exact, sigma2))
    np.testing.assert_allclose(_projection_with_variances(plan, exact), prefix_variances(plan), rtol=1e-12)
    check = monte_carlo_check(plan, seed=sum(map(ord, name)), expected=naive)
    assert not check.agrees, check.describe()
    assert check.max_abs_z > 2 * MC_Z, check.describe()


def _halving_patch(level_index: int) -> Callable[..., list[np.ndarray]]:
    """A stand-in for the mechanism's Gaussian sampler that draws noised level ``level_index`` (0 = the
    first noised level) at σ²/4, i.e. half the planned σ; every other level as planned."""
    real = noise_mechanisms.sample_discrete_gaussian_levels

    def sample(src, sigma2s, sizes):  # type: ignore[no-untyped-def]
        sigma2s = list(sigma2s)
        sigma2s[level_index] = sigma2s[level_index] / 4
        return real(src, sigma2s, sizes)

    return sample


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gls-change-L1-sigma2-0.2", "gls-addremove-L1-optimised",
                                  "covering-change-L2-optimised"])
def test_halving_one_levels_sigma_fails_the_monte_carlo_check(name, monkeypatch):
    """The power of the check above: drawing any one noised level at half its σ (everything else,
    including the projection, unchanged) makes :func:`monte_carlo_check` report disagreement."""
    plan = MC_PLANS[name]
    noised = [lvl for lvl, s in enumerate(plan.scales) if s is not None]
    zs = []
    for index, level in enumerate(noised):
        monkeypatch.setattr(noise_mechanisms, "sample_discrete_gaussian_levels", _halving_patch(index))
        check = monte_carlo_check(plan, seed=sum(map(ord, name)))
        zs.append(round(check.max_abs_z, 1))
        assert not check.agrees, f"{name}: halving σ of level {level} went unnoticed: {check.describe()}"
    monkeypatch.undo()
    assert monte_carlo_check(plan, seed=sum(map(ord, name))).agrees  # and unpatched it agrees again
    print(f"{name}: max |z| with level {noised} at half σ: {zs}")


# ---------------------------------------------------------------- 7. the planner
def _covering_totals(shape: TreeShape, root_public: bool) -> np.ndarray:
    """D_l = Σ_j d_l(j): how many level-l nodes the coverings of all noised prefixes use, counted here
    by walking each prefix's covering from the root down (independent of the engine's digit formula)."""
    sizes = shape.leaves_per_node
    last = shape.leaves - 1 if root_public else shape.leaves
    totals = np.zeros(shape.height + 1)
    for j in range(1, last + 1):
        start = 0
        for level in range(shape.height + 1):
            while start + sizes[level] <= j:
                totals[level] += 1
                start += sizes[level]
    return totals


@pytest.mark.slow
@pytest.mark.parametrize("bins,branching,neighbours,records", [
    (200, (3, 3, 3, 3, 3), "change", 1), (100, (10, 10), "addremove", 2), (1000, (10, 10, 10), "addremove", 1),
    (500, (2, 4, 8, 8), "change", 2), (90, (10, 10), "addremove", 1),  # padded: no prefix uses the root
])
def test_gaussian_covering_closed_form_is_optimal(bins, branching, neighbours, records):
    """Covering sum + total objective: ρ_l ∝ √D_l (D_l counted independently), and no random feasible
    split beats it: strictly on Σ_l D_l σ_l² with unrounded σ_l², and on the exact projected total
    (plan_error) up to 3e-5 relative, the effect of rounding each σ_l² up to 16 significant bits."""
    privacy = PrivacySpec(1.0, neighbours, records, 1e-6)
    shape = TreeShape(bins, branching, missing_leaf=privacy.missing_leaf)
    best = np.asarray(optimise_budgets(shape, privacy, "covering", "total", noise="gaussian"))
    first = privacy.first_noised_level()
    d = _covering_totals(shape, privacy.root_public)[first:]
    np.testing.assert_allclose(best, privacy.rho * np.sqrt(d) / np.sqrt(d).sum(), rtol=1e-9)
    best_plan = Plan(shape, privacy, tuple(best), "covering", "gaussian")
    assert min(float(s) for s in best_plan.scales if s is not None) > 4.0  # σ > 2: variance = σ² here
    best_value = plan_error(best_plan, "total")
    l2sq = _l2sq(neighbours, records)

    def continuous(rhos: np.ndarray) -> float:  # Σ_l D_l σ_l² with the unrounded σ_l² = Δ₂²/(2ρ_l)
        used = d > 0  # a level no prefix uses gets ρ_l = 0 and costs nothing
        return float(np.sum(d[used] * l2sq / (2.0 * rhos[used])))

    rng = np.random.default_rng(bins)
    worst_gain = -math.inf
    for spread in (0.02, 0.1, 0.5, 2.0):
        for _ in range(40):
            weights = best * np.exp(rng.normal(0.0, spread, best.size))
            budgets = split_budget(privacy.rho or 0.0, weights)
            assert continuous(np.asarray(budgets)) > continuous(best) * (1 - 1e-12)
            other = Plan(shape, privacy, budgets, "covering", "gaussian")
            gain = 1.0 - plan_error(other, "total") / best_value
            worst_gain = max(worst_gain, gain)
            assert gain < 3e-5, (spread, weights)
    # equal budgets are a feasible split too, and worse unless D is flat
    equal = Plan(shape, privacy, equal_budgets(shape, privacy, "gaussian"), "covering", "gaussian")
    assert plan_error(equal, "total") >= best_value * (1 - 3e-5)
    print(f"{shape.label} {neighbours} L={records}: best random perturbation gains {worst_gain:.2e}")


@pytest.mark.slow
@pytest.mark.parametrize("bins,branching,neighbours,objective", [
    (256, (3, 3, 2, 2, 2, 2, 2), "change", "total"), (300, (3, 3, 3, 3, 3, 3), "addremove", "max"),
    (255, (4, 4, 4, 4), "change", "max"),
])
def test_gaussian_gls_budgets_are_not_beaten_by_random_splits(bins, branching, neighbours, objective):
    """GLS has no closed form: the numerical ρ split must still beat random feasible perturbations of it on
    the exact objective (up to 1e-4 relative: the optimiser's tolerance and σ² rounding; observed ≤ 2e-6)."""
    privacy = PrivacySpec(1.0, neighbours, 1, 1e-6)
    shape = TreeShape(bins, branching, missing_leaf=privacy.missing_leaf)
    best = np.asarray(optimise_budgets(shape, privacy, "gls", objective, noise="gaussian"))
    best_value = plan_error(Plan(shape, privacy, tuple(best), "gls", "gaussian"), objective)
    floor = np.maximum(best, 1e-3 * best.sum() / best.size)  # lets a dropped level come back
    rng = np.random.default_rng(bins + len(branching))
    for spread in (0.01, 0.05, 0.2):
        for _ in range(20):
            budgets = split_budget(privacy.rho or 0.0, floor * np.exp(rng.normal(0.0, spread, best.size)))
            value = plan_error(Plan(shape, privacy, budgets, "gls", "gaussian"), objective)
            assert value >= best_value * (1 - 1e-4), (spread, budgets)


AUTO_CASES = [
    (512, "change", 2.0, 1e-4, "total"),
    (512, "change", 2.0, 1e-4, "max"),  # same (ε, δ): the worst-point objective favours Gaussian here
    (300, "addremove", 1.0, 1e-9, "total"),
    (256, "addremove", 0.5, 1e-3, "total"),
]


@functools.cache
def _auto(bins: int, neighbours: str, epsilon: float, delta: float, objective: str, noise: str) -> Plan:
    return auto_plan(bins, PrivacySpec(epsilon, neighbours, 1, delta), objective=objective, noise=noise)


@pytest.mark.slow
@pytest.mark.parametrize("bins,neighbours,epsilon,delta,objective", AUTO_CASES)
def test_auto_noise_picks_the_lower_exact_objective(bins, neighbours, epsilon, delta, objective):
    """``noise="auto"`` returns the noise whose best plan has the lower exact projected objective, and its
    noise_choice figures are the exact (total, max) of the separately planned Laplace and Gaussian plans."""
    case = (bins, neighbours, epsilon, delta, objective)
    plan = _auto(*case, "auto")
    separate = {kind: _auto(*case, kind) for kind in ("laplace", "gaussian")}
    figures = {kind: (plan_error(p, "total"), plan_error(p, "max")) for kind, p in separate.items()}
    index = 0 if objective == "total" else 1
    expected = "laplace" if figures["laplace"][index] <= figures["gaussian"][index] else "gaussian"
    assert plan.noise == expected
    assert plan == separate[expected]
    choice = plan.noise_choice
    assert choice is not None
    assert (choice.requested, choice.chosen, choice.objective) == ("auto", expected, objective)
    for kind in ("laplace", "gaussian"):
        got = getattr(choice, kind)
        assert got is not None
        assert got == pytest.approx(figures[kind], rel=1e-12), kind
        assert separate[kind].noise_choice is not None and getattr(separate[kind].noise_choice, kind) == got
    assert plan.to_json()["noise_choice"]["chosen"] == expected
    print(f"K={bins} {neighbours} ε={epsilon} δ={delta} {objective}: {expected}; laplace {figures['laplace']}, "
          f"gaussian {figures['gaussian']}")


@pytest.mark.slow
def test_auto_noise_chooses_both_ways_across_the_cases():
    """The cases above are not one-sided: each noise wins somewhere, under both neighbour models, and the
    objective alone can flip the choice (K = 512, ε = 2, δ = 1e-4)."""
    chosen = {case: _auto(*case, "auto").noise for case in AUTO_CASES}
    for neighbours in ("change", "addremove"):
        assert {noise for case, noise in chosen.items() if case[1] == neighbours} == {"laplace", "gaussian"}, chosen
    assert chosen[(512, "change", 2.0, 1e-4, "total")] != chosen[(512, "change", 2.0, 1e-4, "max")], chosen


def test_auto_noise_without_delta_is_laplace():
    privacy = PrivacySpec(1.0, "addremove", 1, 0.0)
    plan = auto_plan(200, privacy, noise="auto")
    assert plan.noise == "laplace"
    choice = plan.noise_choice
    assert choice is not None and choice.gaussian is None and choice.chosen == "laplace"
    alone = auto_plan(200, privacy, noise="laplace")
    assert plan == alone
    assert choice.laplace == pytest.approx((plan_error(alone, "total"), plan_error(alone, "max")), rel=1e-12)


def _independent_margin(plan: Plan, where: str) -> float:
    """Half-width of the 95 % band, 2.2·SE + 1, at the worst noised CDF point or at the RMS SE."""
    v = prefix_variances(plan)
    if plan.privacy.root_public:
        v = v[:-1]  # C_{K+1} = N is public under change
    return 2.2 * math.sqrt(v.max() if where == "every" else v.mean()) + 1.0


@pytest.mark.slow
@pytest.mark.parametrize("bins,where,neighbours", [(100, "every", "change"), (997, "average", "addremove"),
                                                   (400, "every", "addremove")])
def test_plan_for_accuracy_gaussian_smallest_epsilon(bins, where, neighbours):
    """The Gaussian plan meets the margin at its ε (3 significant digits) and δ; the next smaller ε with
    the same shape and ρ shares does not."""
    target, delta = 50.0, 1e-6
    plan = plan_for_accuracy(bins, PrivacySpec(1.0, neighbours, 1, delta), target, where, noise="gaussian")
    assert plan.noise == "gaussian" and plan.privacy.delta == delta
    eps = plan.privacy.epsilon
    assert float(f"{eps:.3g}") == eps
    assert _independent_margin(plan, where) <= target
    assert margin95(plan, where) == pytest.approx(_independent_margin(plan, where), rel=1e-9)
    assert plan.rho_spent() <= Fraction(zcdp_rho(eps, delta))
    step = 10.0 ** (math.floor(math.log10(eps)) - 2)
    smaller = plan.privacy.with_epsilon(round(eps - step, 12))
    shares = np.asarray(plan.level_budgets)
    worse = Plan(plan.shape, smaller, split_budget(smaller.rho or 0.0, shares), plan.estimator, "gaussian")
    assert _independent_margin(worse, where) > target, (eps, smaller.epsilon)


@pytest.mark.slow
@pytest.mark.parametrize("bins", [256, 4096])
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_gaussian_gls_branching_is_small(bins, neighbours):
    """Under GLS the best Gaussian tree is deep: branching factors 2–4, and it
    beats the best Laplace tree's shape (much flatter) when that shape is given Gaussian noise."""
    privacy = PrivacySpec(1.0, neighbours, 1, 1e-6)
    plan = _auto(bins, neighbours, 1.0, 1e-6, "total", "gaussian")
    assert plan.estimator == "gls" and plan.noise == "gaussian"
    assert max(plan.shape.branching) <= 4 and min(plan.shape.branching) >= 2, plan.shape.branching
    laplace_shape = _auto(bins, neighbours, 1.0, 1e-6, "total", "laplace").shape
    assert max(laplace_shape.branching) > 4
    flat = Plan(laplace_shape, privacy, optimise_budgets(laplace_shape, privacy, "gls", noise="gaussian"), "gls",
                "gaussian")
    assert plan_error(plan, "total") < plan_error(flat, "total")
    print(f"K={bins} {neighbours}: Gaussian GLS branching {plan.shape.branching}; Laplace {laplace_shape.branching}")


def test_discrete_gaussian_variance_is_what_gaussian_plans_project():
    """A Gaussian plan's level variances are the discrete Gaussian's exact ones at the plan's σ_l²."""
    plan = MC_PLANS["gls-change-L1-sigma2-0.2"]
    v = plan.level_variances()
    assert v[0] == 0.0
    for level in range(1, plan.shape.height + 1):
        sigma2 = plan.scales[level]
        assert sigma2 is not None
        assert v[level] == float(discrete_gaussian_variance(float(sigma2)))


def test_requested_noise_with_explicit_or_locked_budgets_still_shows_the_other_noise():
    """With δ > 0, explicit or locked budgets are in the requested noise's unit (ε for Laplace, ρ for
    Gaussian): they are kept for that noise, and the other noise's figures are those of its own best plan
    on the same shape (a regression: the other noise used to be planned with the same numbers, so a
    Laplace plan with explicit ε budgets failed with "level budgets sum to ρ = 1")."""
    privacy = PrivacySpec(1.0, "change", 1, 1e-6)
    shape = TreeShape(99, (10, 10), missing_leaf=True)
    best = {kind: auto_plan(99, privacy, shape=shape, noise=kind) for kind in ("laplace", "gaussian")}
    exact = {kind: (plan_error(p, "total"), plan_error(p, "max")) for kind, p in best.items()}
    rho = privacy.rho or 0.0
    for noise, kwargs in (("laplace", {"budgets": [0.4, 0.6]}), ("laplace", {"locked": {1: 0.3}}),
                          ("gaussian", {"budgets": [0.3 * rho, 0.7 * rho]}), ("gaussian", {"locked": {2: 0.5 * rho}})):
        plan = auto_plan(99, privacy, shape=shape, noise=noise, **kwargs)  # type: ignore[arg-type]
        assert plan.noise == noise
        if "budgets" in kwargs:
            assert plan.level_budgets == pytest.approx(kwargs["budgets"], rel=1e-12)
        else:
            (level, value), = kwargs["locked"].items()  # type: ignore[union-attr]
            assert plan.level_budgets[level - 1] == pytest.approx(value, rel=1e-12)
        other = "gaussian" if noise == "laplace" else "laplace"
        choice = plan.noise_choice
        assert choice is not None
        assert getattr(choice, other) == pytest.approx(exact[other], rel=1e-12), (noise, kwargs)
        assert getattr(choice, noise) == pytest.approx((plan_error(plan, "total"), plan_error(plan, "max")), rel=1e-12)


@pytest.mark.slow
def test_gaussian_beyond_the_sampler_leaves_laplace_plannable():
    """At ε = 1e-9, δ = 1e-12 no level's Gaussian noise can be drawn (σ > 2.1e9 records) while Laplace can:
    Laplace and auto plans are made (Gaussian figures None), a Gaussian request is refused with the fix
    (a regression: the Laplace request used to fail on the Gaussian side plan)."""
    privacy = PrivacySpec(1e-9, "change", 1, 1e-12)
    for noise in ("laplace", "auto"):
        plan = auto_plan(200, privacy, noise=noise)
        assert plan.noise == "laplace"
        assert plan.noise_choice is not None and plan.noise_choice.gaussian is None
        assert plan.epsilon_spent() <= Fraction(1e-9)
    with pytest.raises(ParameterError) as info:
        auto_plan(200, privacy, noise="gaussian")
    assert "beyond the noise sampler" in str(info.value) and "raise ε" in (info.value.fix or "")


@pytest.mark.slow
def test_plan_for_accuracy_auto_takes_the_noise_needing_less_epsilon():
    """Accuracy first with noise "auto": the returned plan is the separately found Laplace or Gaussian plan
    with the smaller ε (Gaussian at K = 1000, δ = 1e-3); where only Laplace can meet the target at ε ≤ 100
    (±1.2 records at every point of K = 100: Gaussian noise shrinks only like 1/√ε at large ε), auto still
    returns it (a regression: auto used to fail with "would need ε > 100")."""
    winners = []
    for bins, delta, margin, where in ((1000, 1e-3, 30.0, "average"), (100, 1e-9, 1.2, "every")):
        privacy = PrivacySpec(1.0, "change", 1, delta)
        laplace = plan_for_accuracy(bins, privacy, margin, where, noise="laplace")
        auto = plan_for_accuracy(bins, privacy, margin, where, noise="auto")
        try:
            gaussian: Plan | None = plan_for_accuracy(bins, privacy, margin, where, noise="gaussian")
        except ParameterError:
            gaussian = None
        winner = laplace if gaussian is None or laplace.privacy.epsilon <= gaussian.privacy.epsilon else gaussian
        assert auto == winner and auto.privacy.epsilon == winner.privacy.epsilon
        choice = auto.noise_choice
        assert choice is not None and choice.chosen == winner.noise
        assert (choice.gaussian is None) == (gaussian is None)
        assert choice.objective == "epsilon" and choice.laplace_epsilon == laplace.privacy.epsilon
        assert choice.gaussian_epsilon == (None if gaussian is None else gaussian.privacy.epsilon)
        assert _independent_margin(auto, where) <= margin
        winners.append((winner.noise, gaussian is None))
    assert winners == [("gaussian", False), ("laplace", True)]
