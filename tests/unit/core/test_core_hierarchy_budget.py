"""Ko, Ziani & Fioretto's error model of a clamped count (Props 1–2, eq. 3) and its exact discrete versions.

Each closed form is checked twice: against a 20,000-trial Monte Carlo within 3 standard errors (the
paper's continuous forms with numpy's Laplace as the reference; the discrete forms with our exact
samplers), and against brute-force sums over the noise's pmf. The (count, scale) pairs have n/b ≤ 2,
where the clamp's bias is many standard errors large, so a factor-of-2 error in it is caught.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgui.core import hierarchy_budget as hb
from dpgui.core.hierarchy_budget import (
    clamped_discrete_gaussian_moments, clamped_discrete_laplace_moments, clamped_laplace_bias, clamped_laplace_mse,
    clamped_laplace_variance, level_mse, level_mse_slope,
)
from dpgui.core.noise import SeededRandom, sample_discrete_gaussian, sample_discrete_laplace
from dpgui.core.noise_moments import discrete_gaussian_pmf
from dpgui.core.plan import PrivacySpec
from fractions import Fraction

TRIALS = 20_000
# (count n, scale b): n/b ≤ 2 so that the bias is ≥ 0.07 b, about 9 standard errors of the mean.
PAIRS = [(0, 1.0), (0, 5.0), (1, 1.0), (2, 1.0), (3, 2.0), (10, 5.0)]


def _z_scores(sample: np.ndarray, n: int, bias: float, variance: float) -> tuple[float, float, float]:
    """z of the empirical bias, variance and MSE of ``sample`` (the released values) against the forms."""
    err = sample.astype(np.float64) - n
    r = err.size
    mean = err.mean()
    z_bias = (mean - bias) / (err.std() / math.sqrt(r))
    centred = (err - mean) ** 2
    z_var = (centred.mean() - variance) / (centred.std() / math.sqrt(r))
    sq = err**2
    z_mse = (sq.mean() - (variance + bias * bias)) / (sq.std() / math.sqrt(r))
    return float(z_bias), float(z_var), float(z_mse)


@pytest.mark.parametrize(("n", "b"), PAIRS)
def test_paper_closed_forms_match_laplace_monte_carlo(n, b):
    rng = np.random.default_rng(1000 + 10 * n + int(b))
    released = np.maximum(0.0, n + rng.laplace(0.0, b, TRIALS))
    bias, var, mse = (float(f(n, b)) for f in (clamped_laplace_bias, clamped_laplace_variance, clamped_laplace_mse))
    assert mse == pytest.approx(bias * bias + var, rel=1e-12)  # eq. (3) = Prop 1² + Prop 2
    for z in _z_scores(released, n, bias, var):
        assert abs(z) < 3.0


@pytest.mark.parametrize(("n", "b"), PAIRS)
def test_discrete_laplace_moments_match_the_exact_sampler(n, b):
    scale = Fraction(b)
    released = np.maximum(0, n + sample_discrete_laplace(SeededRandom(2000 + 10 * n + int(b)), scale, TRIALS))
    bias, var = (float(a) for a in clamped_discrete_laplace_moments(n, b))
    for z in _z_scores(released, n, bias, var):
        assert abs(z) < 3.0


@pytest.mark.parametrize(("n", "sigma2"), [(0, 1.0), (0, 25.0), (1, 1.0), (2, 1.0), (3, 4.0), (10, 25.0)])
def test_discrete_gaussian_moments_match_the_exact_sampler(n, sigma2):
    released = np.maximum(0, n + sample_discrete_gaussian(SeededRandom(3000 + 10 * n + int(sigma2)), Fraction(sigma2), TRIALS))
    bias, var = (float(a) for a in clamped_discrete_gaussian_moments(n, sigma2))
    for z in _z_scores(released, n, bias, var):
        assert abs(z) < 3.0


def _brute(n: int, k: np.ndarray, pmf: np.ndarray) -> tuple[float, float]:
    """(bias, variance) of max(0, n + Z) by direct summation over the support k (with pmf)."""
    err = (np.maximum(0, n + k) - n).astype(np.float64)
    bias = math.fsum((err * pmf).tolist())
    return bias, math.fsum(((err - bias) ** 2 * pmf).tolist())


@pytest.mark.parametrize("t", [0.05, 0.3, 1.0, 2.5, 7.0, 40.0])
def test_discrete_laplace_moments_match_brute_force_sums(t):
    half = int(60 * t) + 60
    k = np.arange(-half, half + 1)
    q = math.exp(-1 / t)
    pmf = (1 - q) / (1 + q) * q ** np.abs(k).astype(np.float64)
    counts = np.array([0, 1, 2, 5, 17, int(3 * t), int(12 * t) + 1])
    bias, var = clamped_discrete_laplace_moments(counts, t)
    for i, n in enumerate(counts):
        b_ref, v_ref = _brute(int(n), k, pmf)
        assert bias[i] == pytest.approx(b_ref, rel=1e-9, abs=1e-12 * t * t)
        assert var[i] == pytest.approx(v_ref, rel=1e-9, abs=1e-12 * t * t)


@pytest.mark.parametrize("sigma2", [0.04, 0.5, 1.0, 3.0, 20.0, 400.0])
def test_discrete_gaussian_moments_match_brute_force_sums(sigma2):
    half = int(40 * math.sqrt(sigma2)) + 50
    k = np.arange(-half, half + 1)
    pmf = discrete_gaussian_pmf(k, sigma2)
    sigma = math.sqrt(sigma2)
    counts = np.array([0, 1, 2, 7, int(sigma), int(3 * sigma), int(20 * sigma) + 3])
    bias, var = clamped_discrete_gaussian_moments(counts, sigma2)
    for i, n in enumerate(counts):
        b_ref, v_ref = _brute(int(n), k, pmf)
        assert bias[i] == pytest.approx(b_ref, rel=1e-9, abs=1e-12 * sigma2)
        assert var[i] == pytest.approx(v_ref, rel=1e-9, abs=1e-12 * sigma2)


def test_discrete_laplace_tends_to_the_paper_forms_for_large_scales():
    """q = e^{−1/t}: the discrete moments are the continuous ones at b = t up to O(1) in t² units."""
    t = 500.0
    n = np.array([0.0, 100.0, 500.0, 1500.0])
    bias, var = clamped_discrete_laplace_moments(n, t)
    assert np.allclose(bias, clamped_laplace_bias(n, t), rtol=2e-3)
    assert np.allclose(var, clamped_laplace_variance(n, t), rtol=2e-3)


def test_the_clamped_normal_takes_over_smoothly_above_the_grid(monkeypatch):
    """Above σ = 20,000 the clamped normal's moments are used; at a σ where both apply they agree."""
    sigma2 = 3000.0**2
    n = np.array([0, 100, 3000, 9000, 30000])
    grid = clamped_discrete_gaussian_moments(n, sigma2)
    monkeypatch.setattr(hb, "_GAUSS_GRID_MAX_SIGMA", 100.0)
    normal = clamped_discrete_gaussian_moments(n, sigma2)
    assert np.allclose(grid[0], normal[0], rtol=1e-6, atol=1e-6)
    assert np.allclose(grid[1], normal[1], rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_level_mse_slope_is_the_derivative_and_the_mse_is_convex(noise, neighbours):
    privacy = PrivacySpec(1.0, neighbours, 2, delta=1e-6)
    counts = np.array([0, 0, 1, 3, 8, 20, 150, 4000])
    budgets = np.geomspace(0.01, 30.0, 25)
    mse = np.array([level_mse(counts, x, privacy, noise) for x in budgets])
    for x in budgets:
        h = 1e-5 * x
        numeric = (level_mse(counts, x + h, privacy, noise) - level_mse(counts, x - h, privacy, noise)) / (2 * h)
        assert level_mse_slope(counts, x, privacy, noise) == pytest.approx(numeric, rel=1e-5)
    assert np.all(np.diff(mse) < 0)  # decreasing in the budget
    # convex: on the geometric grid, the secant slopes increase
    slopes = np.diff(mse) / np.diff(budgets)
    assert np.all(np.diff(slopes) > 0)


def test_bad_inputs_are_refused_with_a_fix():
    from dpgui.errors import ParameterError

    with pytest.raises(ParameterError, match="≥ 0"):
        clamped_laplace_mse([-1], 1.0)
    with pytest.raises(ParameterError, match="scale"):
        clamped_discrete_laplace_moments([1], 0.0)
    with pytest.raises(ParameterError, match="whole"):
        clamped_discrete_gaussian_moments([1.5], 1.0)
    with pytest.raises(ParameterError, match="δ > 0"):
        level_mse([1], 1.0, PrivacySpec(1.0), "gaussian")
