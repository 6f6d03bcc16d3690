"""The machinery of benchmarks/bench_strategy_bound.py (the best linear strategy for the CDF beside OpenDP's tree)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from script_modules import script_module

BENCH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench_strategy_bound.py"


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    with script_module(BENCH) as module:
        yield module


@pytest.mark.parametrize("name", ["tree b=2", "identity"])
def test_total_squared_error_formula_matches_monte_carlo(bench, name):
    """Σ_j (Ĉ_j − C_j)² of least squares on A·x + Laplace(Δ/ε): mean of 100,000 seeded draws within 4 SE."""
    bins, epsilon, draws = 8, 1.0, 100_000
    strategy = bench.tree_strategy(bins, 2) if name == "tree b=2" else np.eye(bins)
    assert bench.sensitivity(strategy) == (4.0 if name == "tree b=2" else 1.0)
    estimator = np.tril(np.ones((bins, bins))) @ np.linalg.solve(strategy.T @ strategy, strategy.T)
    noise = np.random.default_rng(17).laplace(0.0, bench.sensitivity(strategy) / epsilon,
                                              (draws, strategy.shape[0]))
    squared = ((noise @ estimator.T) ** 2).sum(axis=1)  # the data cancels: Ĉ − C = estimator · η
    se = squared.std(ddof=1) / np.sqrt(draws)
    assert abs(squared.mean() - bench.total_squared_error(strategy, epsilon)) <= 4 * se


def test_p_identity_gradient_matches_finite_differences(bench):
    bins, rows, step = 16, 4, 1e-6
    theta = np.random.default_rng(3).uniform(0.0, 1.0, rows * bins)
    g = bench.gram(bins)
    value, gradient = bench.p_identity_objective(theta, rows, g)
    assert 2 * value == pytest.approx(bench.total_squared_error(bench.p_identity_strategy(theta.reshape(rows, bins))))
    numeric = np.empty_like(theta)
    for i in range(theta.size):
        up, down = theta.copy(), theta.copy()
        up[i] += step
        down[i] -= step
        numeric[i] = (bench.p_identity_objective(up, rows, g)[0] - bench.p_identity_objective(down, rows, g)[0])
    numeric /= 2 * step
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6 * np.abs(gradient).max())


def test_opendp_tree_error_is_bench_opendps_exact_error(bench):
    """The tree as a matrix, discrete Laplace at the engine's scales, GLS = opendp_exact_error's projection."""
    from bench_opendp import opendp_exact_error

    exact = opendp_exact_error(256, 16, 1.0, "addremove")
    assert exact is not None
    assert bench.discrete_tree_error(256, 16) == pytest.approx(exact, rel=1e-6)
    tree = bench.tree_strategy(256, 16)
    assert tree.shape == (1 + 16 + 256, 256) and bench.sensitivity(tree) == 3.0
    # Continuous Laplace at exactly levels/ε is within 1 % of it (discrete Laplace's variance is the smaller).
    assert 1.0 < bench.total_squared_error(tree) / exact < 1.01
