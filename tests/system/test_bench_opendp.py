"""The machinery of benchmarks/bench_opendp.py (our engine beside OpenDP's consistent b-ary tree), at tiny K.

OpenDP's noise comes from its own secure generator (it cannot be seeded): the statistical check uses
a 5-standard-error band; the other checks hold for any draw.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest

from dpgui.core.estimators import gls_estimate
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.projection import prefix_variances
from dpgui.core.tree import TreeShape
from script_modules import script_module

dp = pytest.importorskip("opendp.prelude")

BENCH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench_opendp.py"


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    with script_module(BENCH) as module:
        yield module


def _levels_from_breadth_first(tree: list[int], bins: int, branching: int) -> list[np.ndarray]:
    """Split OpenDP's breadth-first node vector of a complete tree (K = b^h) into levels, root first."""
    out, start, size = [], 0, 1
    while start < len(tree):
        out.append(np.asarray(tree[start:start + size], dtype=float))
        start, size = start + size, size * branching
    assert out[-1].size == bins
    return out


@pytest.mark.parametrize("neighbours", ["change", "addremove"])
@pytest.mark.parametrize("bins, branching, levels", [(16, 2, 5), (64, 4, 4), (100, 8, 4)])
def test_calibration_gives_epsilon_by_opendps_own_map_and_from_records(bench, neighbours, bins, branching, levels):
    epsilon = 0.7
    tree = bench.opendp_tree(bins, branching, epsilon, neighbours)
    d_in = 2 if neighbours == "change" else 1  # a changed record moves two counts by 1; an added one, one
    assert tree.levels == levels  # ⌈log_b K⌉ + 1, the root included
    assert tree.scale == pytest.approx(d_in * levels / epsilon, rel=1e-12)
    assert epsilon * (1 - 1e-9) <= tree.map_epsilon <= epsilon
    # The same tree and scale built from the records, whose distance is the symmetric one: a change of
    # value is one removal and one addition (distance 2), as our `change` model; add/remove is 1.
    records = dp.vector_domain(dp.atom_domain(T=dp.i32))
    from_records = (dp.t.make_count_by_categories(records, dp.symmetric_distance(), categories=list(range(bins)),
                                                  null_category=False, TOA=dp.i32)
                    >> dp.t.then_b_ary_tree(leaf_count=bins, branching_factor=branching)
                    >> dp.m.then_laplace(scale=tree.scale))
    assert float(from_records.map(d_in)) == pytest.approx(epsilon, rel=1e-9)
    assert float(from_records.map(d_in)) <= epsilon


@pytest.mark.parametrize("bins, branching", [(64, 4), (32, 2), (256, 16)])
def test_opendps_consistent_tree_is_our_gls_with_equal_variances_on_a_complete_tree(bench, bins, branching):
    """On a complete tree (K = b^h, no padding) with equal noise on every node, HRMS09's consistent
    estimate is the BLUE, i.e. our two-pass GLS: the same cumulative counts from the same noisy tree."""
    tree = bench.opendp_tree(bins, branching, 1.0, "addremove")
    counts = np.random.default_rng(bins).integers(0, 50, bins)
    noisy = tree.measurement(counts.tolist())
    theirs = np.cumsum(np.asarray(tree.consistent(noisy), dtype=float))
    shape = TreeShape(bins, (branching,) * (tree.levels - 1))
    levels = _levels_from_breadth_first(noisy, bins, branching)
    ours = gls_estimate(shape, levels, np.ones(tree.levels))
    np.testing.assert_allclose(theirs, ours, rtol=1e-9, atol=1e-7)
    assert not np.allclose(theirs, np.cumsum(counts))  # noise was added


@pytest.mark.parametrize("neighbours", ["addremove", "change"])
def test_opendps_measured_final_error_matches_the_exact_blue_variance(bench, neighbours):
    """OpenDP's mean Σ_j (Ĉ_j − C_j)² over trials is within 5 standard errors of Σ_j Var Ĉ_j of the
    equal-budget plan on the same complete tree (the scale d_in·levels/ε on every level, root included)."""
    bins, branching, epsilon, trials = 64, 4, 1.0, 400
    tree = bench.opendp_tree(bins, branching, epsilon, neighbours)
    expected = bench.opendp_exact_error(bins, branching, epsilon, neighbours)
    d_in = 2 if neighbours == "change" else 1
    plan = auto_plan(bins, PrivacySpec(epsilon / d_in, "addremove"), shape=TreeShape.uniform(bins, branching),
                     budgets="equal")
    assert all(float(s) == pytest.approx(tree.scale, rel=1e-4) for s in plan.scales)  # every level, root too
    assert expected == pytest.approx(float(np.sum(prefix_variances(plan))))
    counts = np.random.default_rng(1).integers(0, 30, bins)
    errors, _ = bench.theirs(tree, counts, 0.0, 1.0, trials)
    assert abs(errors.mean - expected) <= 5 * errors.se
    assert errors.se <= 0.1 * expected  # the band is narrow enough to mean something
    assert bench.opendp_exact_error(bins, 16, epsilon, neighbours) is None  # 64 leaves pad a 16-ary tree


def test_our_consistency_follows_the_very_releases_opendp_made(bench, monkeypatch):
    """"OpenDP + our consistency" is our ℓ2 step (total rounded, ≥ 0) on each of OpenDP's own releases, not
    on fresh ones: with OpenDP's release replaced by known cumulative counts, both columns follow them."""
    tree = bench.opendp_tree(8, 2, 1.0, "addremove")
    counts = np.array([3, 0, 1, 0, 0, 2, 0, 1])
    truth = np.cumsum(counts).astype(float)
    releases = [np.array([4.2, 2.9, 4.6, 3.8, 5.1, 7.4, 6.8, 6.6]), np.array([-1.7, 3.2, 3.1, 4.0, 4.2, 5.9, 6.1, 9.4])]
    queue = list(releases)
    monkeypatch.setattr(bench.OpenDPTree, "release", lambda self, c: queue.pop(0))
    raw, consistent = bench.theirs(tree, counts, 0.0, 8.0, len(releases))
    assert not queue
    for cumulative, raw_error, final_error in zip(releases, raw.squared, consistent.squared):
        final = bench.our_consistency(cumulative)
        assert np.all(np.diff(final) >= 0) and final[0] >= 0 and np.all(final == np.round(final))
        assert final[-1] == max(0, math.floor(cumulative[-1] + 0.5))
        assert raw_error == pytest.approx(np.sum((cumulative - truth) ** 2))
        assert final_error == pytest.approx(np.sum((final - truth) ** 2))
    # monotone and ≥ 0: -1.7 is lifted to 0, and 3.2 > 3.1 pool to 3.15, rounded to 3
    np.testing.assert_array_equal(bench.our_consistency(releases[1])[:2], [0.0, 3.0])
    assert consistent.squared != raw.squared


def test_ratio_standard_error_is_the_delta_method(bench):
    a = bench.Errors([1.0, 3.0, 2.0, 2.0], [])
    b = bench.Errors([4.0, 6.0, 5.0, 5.0], [])
    r, se = bench.ratio_se(a, b)
    assert r == pytest.approx(2.0 / 5.0)
    sa, sb = np.std([1, 3, 2, 2], ddof=1) / 2, np.std([4, 6, 5, 5], ddof=1) / 2
    assert se == pytest.approx(r * math.sqrt((sa / 2.0) ** 2 + (sb / 5.0) ** 2))


def test_a_cell_runs_end_to_end_and_prints_a_row(bench):
    counts = np.random.default_rng(2).integers(0, 40, 32)
    cell = bench.run_cell("tiny", counts, 0.0, 1.0, "change", 1.0, trials=5, seed=3)
    assert set(cell.theirs) >= set(bench.BRANCHINGS) and cell.own_b in cell.theirs
    assert cell.best_b == min(bench.BRANCHINGS, key=lambda b: cell.theirs[b].mean)
    assert cell.best_b_ours == min(bench.BRANCHINGS, key=lambda b: cell.theirs_ours[b].mean)
    assert all(len(e.squared) == 5 for e in cell.theirs_ours.values())
    assert all(len(e.squared) == 5 for e in cell.theirs.values()) and len(cell.ours.squared) == 5
    assert cell.ours.quantile_mean.shape == (len(bench.PROBABILITIES),)
    text, passed = bench.row(cell, "unit")
    assert text.count("|") == bench.HEADER.count("|") and ("PASS" in text) == passed
    assert passed == (bench.ratio_se(cell.ours, cell.theirs_ours[cell.best_b_ours])[0] <= bench.TARGET)


def test_quantile_error_ratio_is_over_the_per_trial_mean_of_the_probabilities(bench):
    errors = bench.Errors([1.0, 1.0], [np.array([1.0, 3.0, 2.0, 0.0, 4.0]), np.array([0.0, 0.0, 5.0, 0.0, 0.0])])
    assert errors.quantile_overall().squared == [2.0, 1.0]
