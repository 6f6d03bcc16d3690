"""The projected-error curves of the plan page's plots (dpgui.core.projection_curves) are the
engine's numbers; the thinning of long curves (dpgui.core.thinning) never changes what is drawn."""

from __future__ import annotations


import numpy as np
import pytest

from dpgui.core.noise import laplace_scale, laplace_scale_float
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets, split_budget
from dpgui.core.level_budgets import optimise_budgets
from dpgui.core.planner import (
    auto_plan, average_margin95, margin95, paper_best_shape, paper_error, plan_error,
)
from dpgui.core.projection import (
    prefix_basis, prefix_variances, prefix_variances_from_basis, total_coefficients,
    total_from_coefficients, total_sq_error,
)
from dpgui.core.projection_curves import (
    BASELINES, ProjectionCache, draw_prefixes, effective_branching, epsilon_grid, log_spaced_subset, uniform_branchings,
)
from dpgui.core.thinning import band_envelope, peak_envelope, polyline_envelope
from dpgui.core.tree import TreeShape
from dpgui.errors import Cancelled

from projection_helpers import band_margin, rms




# ---------------------------------------------------------------- the engine's two-part formulas
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
@pytest.mark.parametrize("estimator", ["gls", "covering"])
def test_tree_part_and_noise_part_give_the_engines_variances(neighbours, estimator):
    privacy = PrivacySpec(1.3, neighbours)
    shape = TreeShape(777, (3, 16, 17), privacy.missing_leaf)
    budgets = list(equal_budgets(shape, privacy))
    if estimator == "gls":  # an unreleased internal level (budget 0) too
        budgets[-2], budgets[-1] = 0.0, budgets[-1] + budgets[-2]
    plan = Plan(shape, privacy, split_budget(1.3, budgets), estimator)
    j = np.arange(1, shape.leaves + 1, dtype=np.int64)
    basis = prefix_basis(shape, estimator, plan.released(), j)
    variances = prefix_variances_from_basis(shape, estimator, basis, plan.level_variances(), j, privacy.root_public)
    np.testing.assert_array_equal(variances, prefix_variances(plan, j))
    # a release's standard errors (every prefix at once, by tables: the same figures up to rounding)
    np.testing.assert_allclose(prefix_variances(plan), variances, rtol=1e-12, atol=1e-12 * float(variances.max()))
    coefficients = total_coefficients(shape, estimator, plan.released(), privacy.root_public)
    total = total_from_coefficients(shape, estimator, coefficients, plan.level_variances())
    assert total == total_sq_error(plan) == pytest.approx(float(prefix_variances(plan).sum()), rel=1e-9)
    assert average_margin95(total, shape, privacy.root_public) == margin95(plan, "average") == pytest.approx(rms(plan))


def test_paper_error_is_what_paper_best_shape_minimises():
    privacy = PrivacySpec(0.5, "addremove", 2)
    shape, value = paper_best_shape(4096, privacy)
    assert paper_error(shape, privacy) == value
    assert value == pytest.approx(plan_error(Plan(shape, privacy, equal_budgets(shape, privacy), "covering"), "total"),
                                  rel=1e-3)  # the planner's unrounded variances; the plan's scales are rounded up


# ---------------------------------------------------------------- the projection of plots (a)–(c)
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_project_gives_the_engines_numbers(neighbours):
    privacy = PrivacySpec(0.7, neighbours)
    plan = auto_plan(3000, privacy)
    curves = ProjectionCache().project(plan, 0.0, 300.0)
    assert curves.rms == pytest.approx(rms(plan), rel=1e-12) and curves.worst == margin95(plan, "every")
    x, y = curves.a["plan"]
    j = np.rint(x / 0.1).astype(np.int64)
    np.testing.assert_allclose(y, band_margin(np.sqrt(prefix_variances(plan, j))), rtol=1e-12)
    assert set(curves.a) == set(curves.b) == {"plan", *BASELINES}
    grid, values = curves.b["plan"]
    assert values[np.flatnonzero(grid == 0.7)[0]] == pytest.approx(rms(plan), rel=1e-12)
    bs, equal = curves.c["equal"]
    assert list(bs) == uniform_branchings(3000 + int(privacy.missing_leaf)) == curves.allowed
    shape = TreeShape.uniform(3000, int(bs[0]), privacy.missing_leaf)
    assert equal[0] == pytest.approx(rms(Plan(shape, privacy, equal_budgets(shape, privacy), "covering")), rel=1e-12)
    assert curves.pending  # nothing tuned yet at this ε


def test_refine_tunes_every_pending_factor_and_project_stops_when_asked():
    cache = ProjectionCache()
    privacy = PrivacySpec(1.0)
    curves = cache.project(auto_plan(500, privacy), 0.0, 1.0)
    pending = curves.pending
    while pending:
        pending, (bs, values) = cache.refine(500, privacy, pending, budget_ms=1e9)
    assert list(bs) == cache.optimised_branchings(500, privacy.missing_leaf) and not cache.missing_optimisations(500, privacy)
    shape = TreeShape.uniform(500, int(bs[0]), privacy.missing_leaf)
    assert values[0] == pytest.approx(rms(Plan(shape, privacy, cache.optimised_budgets(500, int(bs[0]), privacy), "gls")))
    with pytest.raises(Cancelled):
        cache.project(auto_plan(500, privacy), 0.0, 1.0, should_cancel=lambda: True)


def test_log_spaced_subset_keeps_the_ends():
    values = list(range(2, 1001))
    picked = log_spaced_subset(values, 10)
    assert picked[0] == 2 and picked[-1] == 1000 and len(picked) <= 10 and picked == sorted(picked)
    assert log_spaced_subset([2, 3], 10) == [2, 3]


@pytest.mark.parametrize("bins", [2, 256, 1000, 4096, 65536])
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_fast_paper_best_shape_is_the_planners(bins, neighbours):
    cache = ProjectionCache()
    for eps in (0.05, 1.0, 7.0):
        privacy = PrivacySpec(eps, neighbours)
        assert cache.paper_best_shape(bins, privacy) == paper_best_shape(bins, privacy)[0]


def test_cached_projections_equal_the_engine():
    cache = ProjectionCache()
    for neighbours in ("change", "addremove"):
        privacy = PrivacySpec(0.8, neighbours, 3)
        for shape in (TreeShape(1000, (10, 10, 10)), TreeShape(777, (3, 16, 17)), TreeShape(64, (64,))):
            for estimator in ("gls", "covering"):
                for eps in (equal_budgets(shape, privacy), optimise_budgets(shape, privacy, estimator)):
                    plan = Plan(shape, privacy, eps, estimator)
                    assert cache.total_sq_error(shape, privacy, eps, estimator) == pytest.approx(total_sq_error(plan), rel=1e-12)
                    j = draw_prefixes(shape.bins)
                    np.testing.assert_allclose(cache.prefix_margins(plan, j), band_margin(np.sqrt(prefix_variances(plan, j))),
                                               rtol=1e-9, atol=1e-12)


def test_peak_envelope_keeps_each_slices_lowest_and_highest_point():
    rng = np.random.default_rng(3)
    values = rng.standard_normal(10_007)
    picked = peak_envelope(values, slices=100)
    assert np.all(np.diff(picked) > 0) and 100 <= picked.size <= 200
    edges = np.arange(values.size) * 100 // values.size
    for s in range(100):
        members = np.flatnonzero(edges == s)
        chosen = set(picked.tolist()) & set(members.tolist())
        assert members[np.argmin(values[members])] in chosen and members[np.argmax(values[members])] in chosen
        assert len(chosen) <= 2
    assert peak_envelope(values[:150], slices=100).tolist() == list(range(150))  # few points: all of them


def test_laplace_scale_float_is_exact():
    rng = np.random.default_rng(1)
    for eps in list(10 ** rng.uniform(-4, 2, 500)) + [0.1, 1 / 3, 1.0, 2.0, 100.0]:
        for delta in (1, 2, 6):
            assert laplace_scale_float(delta, float(eps)) == float(laplace_scale(delta, float(eps)))


def test_helpers():
    grid = epsilon_grid(1.0)
    assert 1.0 in grid and grid.min() == pytest.approx(0.1) and grid.max() == pytest.approx(10.0)
    assert 25 <= grid.size <= 35
    assert epsilon_grid(50.0).max() <= 100.0
    assert set(epsilon_grid(0.9)) & set(epsilon_grid(1.1))  # a fixed lattice: neighbours share (cached) points
    j = draw_prefixes(10**6)
    assert j[0] == 1 and j[-1] == 10**6 and np.all(np.diff(j) > 0) and j.size > 30_000
    assert np.unique(j % 16).size == 16  # no aliasing with the tree's periods
    for bins in (3, 1000, 65536):
        for b in uniform_branchings(bins):
            assert TreeShape.uniform(bins, b).padded_bins <= 2 * bins and b <= min(bins, 1024)
    assert effective_branching(TreeShape(4096, (16, 16, 16))) == 16.0


# ---------------------------------------------------------------- thinning
def test_band_and_polyline_envelopes_keep_what_is_drawn():
    rng = np.random.default_rng(7)
    x = np.linspace(0.0, 1.0, 100_001)
    y = np.cumsum(rng.integers(-3, 5, x.size)).astype(float)
    low, high = y - rng.uniform(0, 20, x.size), y + rng.uniform(0, 20, x.size)
    xb, lb, hb = band_envelope(x, low, high, 1000)
    assert xb.size <= 1_002 and np.all(np.interp(x, xb, lb) <= low + 1e-9) and np.all(np.interp(x, xb, hb) >= high - 1e-9)
    xc, yc = polyline_envelope(x, y, 500)
    assert xc.size <= 1_002 and yc.min() == y.min() and yc.max() == y.max() and np.all(np.diff(xc) >= 0)
    small = np.arange(10.0)
    assert band_envelope(small, small, small, 1000)[0] is small and polyline_envelope(small, small, 500)[0] is small


# ---------------------------------------------------------------- (ε, δ): Gaussian plans and curves
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_fast_level_variances_equal_the_plans_for_both_noises(neighbours, noise):
    cache = ProjectionCache()
    privacy = PrivacySpec(0.8, neighbours, 2, delta=1e-9)
    for shape in (TreeShape(999, (10, 10, 10), privacy.missing_leaf), TreeShape(777, (3, 16, 17), privacy.missing_leaf)):
        for estimator in ("gls", "covering"):
            budgets = optimise_budgets(shape, privacy, estimator, noise=noise)
            plan = Plan(shape, privacy, budgets, estimator, noise)
            np.testing.assert_array_equal(cache.level_variances(shape, privacy, budgets, noise), plan.level_variances())
            assert cache.total_sq_error(shape, privacy, budgets, estimator, noise) == pytest.approx(
                total_sq_error(plan), rel=1e-12)
            assert cache.rms(shape, privacy, budgets, estimator, noise) == pytest.approx(rms(plan), rel=1e-12)


@pytest.mark.slow
def test_a_laplace_plan_at_delta_gets_a_gaussian_alternative_in_every_plot():
    privacy = PrivacySpec(0.5, delta=1e-6)
    plan = auto_plan(2000, privacy, noise="laplace")
    gaussian = auto_plan(2000, privacy, noise="gaussian")
    curves = ProjectionCache().project(plan, 0.0, 200.0, alternative=gaussian)
    assert set(curves.a) == set(curves.b) == {"plan", "alternative", *BASELINES}
    assert curves.alternative is gaussian and "gaussian" in curves.c
    # (a): the Gaussian plan's own exact margins, independently of the cache
    x, y = curves.a["alternative"]
    j = np.rint(x / 0.1).astype(np.int64)
    np.testing.assert_allclose(y, band_margin(np.sqrt(prefix_variances(gaussian, j))), rtol=1e-12)
    assert curves.alternative_worst == pytest.approx(float(band_margin(np.sqrt(prefix_variances(gaussian).max()))))
    # (b): at the plan's ε the Gaussian curve is the Gaussian plan's RMS margin; at 2ε it is the same ρ
    # shares of ρ(2ε, δ), and it falls with ε
    grid, values = curves.b["alternative"]
    assert values[np.flatnonzero(grid == 0.5)[0]] == pytest.approx(rms(gaussian), rel=1e-12)
    assert curves.alternative_rms == pytest.approx(rms(gaussian), rel=1e-12)
    i = int(np.argmin(np.abs(grid - 1.0)))
    doubled = privacy.with_epsilon(float(grid[i]))
    again = Plan(gaussian.shape, doubled, split_budget(doubled.rho, gaussian.level_budgets), "gls", "gaussian")
    assert values[i] == pytest.approx(rms(again), rel=1e-12)
    assert np.all(np.diff(values) < 0)
    # (c): uniform Gaussian trees, GLS, ρ split by the covering closed form
    bs, ys = curves.c["gaussian"]
    assert list(bs) == curves.allowed
    shape = TreeShape.uniform(2000, int(bs[1]), privacy.missing_leaf)
    reference = Plan(shape, privacy, optimise_budgets(shape, privacy, "covering", noise="gaussian"), "gls", "gaussian")
    assert ys[1] == pytest.approx(rms(reference), rel=1e-12)
    # the baselines are the paper's Laplace trees, whatever δ
    pure = PrivacySpec(0.5)
    assert curves.b["binary"][1][np.flatnonzero(grid == 0.5)[0]] == pytest.approx(
        rms(Plan(TreeShape.uniform(2000, 2), pure, equal_budgets(TreeShape.uniform(2000, 2), pure), "covering")), rel=1e-12)


@pytest.mark.slow
def test_a_gaussian_plan_is_projected_exactly_and_pure_dp_has_no_gaussian_curve():
    privacy = PrivacySpec(0.3, "addremove", delta=1e-9)
    gaussian = auto_plan(500, privacy, noise="gaussian")
    curves = ProjectionCache().project(gaussian, 0.0, 1.0)
    assert curves.rms == pytest.approx(rms(gaussian), rel=1e-12) and curves.worst == margin95(gaussian, "every")
    assert "alternative" not in curves.a and "gaussian" in curves.c
    laplace = auto_plan(500, PrivacySpec(0.3, "addremove"))
    curves = ProjectionCache().project(laplace, 0.0, 1.0, alternative=gaussian)  # other δ: ignored
    assert curves.alternative is None and set(curves.a) == {"plan", *BASELINES} and "gaussian" not in curves.c
