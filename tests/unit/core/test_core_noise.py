"""Tests for dpgui.core.noise: exact integer samplers (CKS 2020) vs exact pmfs and OpenDP.

Statistical tests use SeededRandom with fixed seeds, so they are deterministic; the one
SecureRandom test uses a looser threshold (p > 1e-6).
"""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpgui.core import noise
from dpgui.core.noise import (
    RandomSource, SecureRandom, SeededRandom, bernoulli_exp, laplace_scale, sample_discrete_gaussian,
    sample_discrete_laplace, sample_discrete_laplace_levels, uniform_below,
)
from dpgui.core.noise_moments import (
    discrete_gaussian_pmf, discrete_gaussian_variance, discrete_laplace_pmf, discrete_laplace_variance,
)
from dpgui.errors import ParameterError

P_MIN = 1e-4


class CountingSource:
    """Wraps a source and counts the words drawn."""

    secure = False

    def __init__(self, inner: RandomSource) -> None:
        self.inner = inner
        self.words = 0

    def uint64(self, n: int) -> np.ndarray:
        self.words += n
        return self.inner.uint64(n)


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def _support_half_width(pmf, n: int, min_expected: float = 5.0) -> int:
    """Largest L with n*pmf(L) >= min_expected and both pooled tails >= min_expected."""
    xs = np.arange(0, 200_001)
    p = pmf(xs)
    big = np.flatnonzero(n * p >= min_expected)
    assert big.size, "no bin reaches the minimum expected count"
    L = int(big[-1])
    while L > 0:
        central = math.fsum(pmf(np.arange(-L, L + 1)).tolist())
        if n * (1.0 - central) / 2.0 >= min_expected:
            break
        L -= 1
    return L


def _binned(x: np.ndarray, L: int) -> np.ndarray:
    """Counts for bins (-inf, -L-1], -L, ..., L, [L+1, inf)."""
    return np.bincount(np.clip(x, -L - 1, L + 1) + (L + 1), minlength=2 * L + 3)


def _chi2_gof_symmetric(x: np.ndarray, pmf) -> float:
    """p-value of a chi-square goodness-of-fit test of integer samples against a symmetric
    pmf, pooling the tail bins whose expected count is < 5."""
    n = x.size
    L = _support_half_width(pmf, n)
    central = pmf(np.arange(-L, L + 1)) * n
    tail = (n - math.fsum(central.tolist())) / 2.0
    expected = np.concatenate([[tail], central, [tail]])
    observed = _binned(x, L)
    if tail < 5.0:  # only when L == 0 would remain; fold tails in
        raise AssertionError("tail too small")
    return float(stats.chisquare(observed, expected).pvalue)


def _lap_pmf(scale):
    return lambda xs: discrete_laplace_pmf(xs, float(scale))


def _moment(pmf, k: int, half: int) -> float:
    xs = np.arange(-half, half + 1)
    return math.fsum((pmf(xs) * xs.astype(np.float64) ** k).tolist())


def _var_se(scale, n: int) -> tuple[float, float]:
    """Exact variance of the discrete Laplace and the standard error of a sample variance."""
    var = discrete_laplace_variance(float(scale))
    half = int(60 * float(scale)) + 60
    m4 = _moment(_lap_pmf(scale), 4, half)
    return var, math.sqrt((m4 - var * var) / n)


# ---------------------------------------------------------------------------------------
# Discrete Laplace: goodness of fit, variance
# ---------------------------------------------------------------------------------------

LAPLACE_SCALES = [
    (Fraction(1, 2), 101),
    (Fraction(1), 102),
    (Fraction(2, 1), 103),
    (Fraction(7, 3), 104),
    (Fraction(20), 105),
    (Fraction(1000), 106),
]


@pytest.mark.slow
@pytest.mark.parametrize("scale,seed", LAPLACE_SCALES, ids=[str(s) for s, _ in LAPLACE_SCALES])
def test_laplace_chi_square(scale: Fraction, seed: int) -> None:
    x = sample_discrete_laplace(SeededRandom(seed), scale, 200_000)
    assert x.dtype == np.int64 and x.shape == (200_000,)
    p = _chi2_gof_symmetric(x, _lap_pmf(scale))
    assert p > P_MIN, f"scale {scale}: chi-square p = {p}"


def test_laplace_chi_square_non_integer_scale_from_epsilon() -> None:
    # t/s with s = 2**15: exercises Y = floor(X / s) with a large s.
    scale = laplace_scale(1, 0.3)
    assert scale.denominator > 1
    x = sample_discrete_laplace(SeededRandom(107), scale, 200_000)
    assert _chi2_gof_symmetric(x, _lap_pmf(scale)) > P_MIN


def test_laplace_chi_square_secure_random() -> None:
    src = SecureRandom()
    x = sample_discrete_laplace(src, Fraction(7, 3), 200_000)
    p = _chi2_gof_symmetric(x, _lap_pmf(Fraction(7, 3)))
    assert p > 1e-6, f"SecureRandom chi-square p = {p}"


@pytest.mark.slow
@pytest.mark.parametrize("scale", [0.05, 0.3, 1.0, 7 / 3, 20.0, 1000.0, 12345.0])
def test_variance_formula_matches_pmf_sum(scale: float) -> None:
    half = int(80 * scale) + 80
    xs = np.arange(-half, half + 1)
    pmf = discrete_laplace_pmf(xs, scale)
    assert math.fsum(pmf.tolist()) == pytest.approx(1.0, rel=1e-12)
    numeric = math.fsum((pmf * xs.astype(np.float64) ** 2).tolist())
    assert discrete_laplace_variance(scale) == pytest.approx(numeric, rel=1e-12)


@pytest.mark.parametrize("scale", [10.0, 1e3, 1e5, 1e7])
def test_variance_asymptotics_and_closed_form(scale: float) -> None:
    v = discrete_laplace_variance(scale)
    # 1/(2 sinh^2(1/(2t))) = 2t^2 - 1/6 + 1/(120 t^2) + O(t^-4)
    ulp_slack = 8 * np.finfo(float).eps * 2 * scale**2
    assert abs(v - (2 * scale**2 - 1 / 6)) <= 1 / scale**2 + ulp_slack
    # next term is O(t^-4): -> relative error 1e-12 is attainable from t = 100 on
    rel = 1e-9 if scale < 100 else 1e-12
    assert v == pytest.approx(2 * scale**2 - 1 / 6 + 1 / (120 * scale**2), rel=rel)
    p = math.exp(-1 / scale)
    assert v == pytest.approx(2 * p / (1 - p) ** 2, rel=1e-6)  # naive form loses digits
    assert math.isfinite(discrete_laplace_variance(1e-3))


def test_sample_variance_scale_10_within_4_se() -> None:
    n = 400_000
    x = sample_discrete_laplace(SeededRandom(201), Fraction(10), n)
    var, se = _var_se(10, n)
    assert abs(float(np.var(x)) - var) < 4 * se
    assert abs(float(np.mean(x))) < 4 * math.sqrt(var / n)
    # A factor-2 error in the scale (variance ~x4 or ~/4) is far outside 4 SE.
    assert 4 * se < 0.05 * var


def test_sample_variance_fractional_scale_within_4_se() -> None:
    n = 200_000
    scale = laplace_scale(3, 0.7)  # 3/0.7 rounded up to a multiple of 2**-16
    x = sample_discrete_laplace(SeededRandom(202), scale, n)
    var, se = _var_se(scale, n)
    assert abs(float(np.var(x)) - var) < 4 * se


def test_laplace_pmf_normalised_and_symmetric() -> None:
    xs = np.arange(-200, 201)
    p = discrete_laplace_pmf(xs, 7 / 3)
    assert math.fsum(p.tolist()) == pytest.approx(1.0, rel=1e-12)
    np.testing.assert_allclose(p, p[::-1], rtol=0)
    q = math.exp(-3 / 7)
    assert p[200] == pytest.approx((1 - q) / (1 + q), rel=1e-14)


# ---------------------------------------------------------------------------------------
# Multi-level sampler
# ---------------------------------------------------------------------------------------


def test_levels_shapes_and_distributions() -> None:
    scales = [Fraction(20), Fraction(7, 3), laplace_scale(1, 0.3), Fraction(1, 2), Fraction(5)]
    sizes = [200_000, 150_000, 100_000, 0, 1]
    out = sample_discrete_laplace_levels(SeededRandom(301), scales, sizes)
    assert [a.size for a in out] == sizes
    assert all(a.dtype == np.int64 for a in out)
    for a, sc in zip(out[:3], scales[:3]):
        assert _chi2_gof_symmetric(a, _lap_pmf(sc)) > P_MIN, sc


def test_levels_chunked_matches_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(noise, "_CHUNK", 1000)
    out = sample_discrete_laplace_levels(SeededRandom(302), [Fraction(3), Fraction(1)], [25_000, 20_001])
    assert [a.size for a in out] == [25_000, 20_001]
    assert _chi2_gof_symmetric(out[0], _lap_pmf(3)) > P_MIN
    assert _chi2_gof_symmetric(out[1], _lap_pmf(1)) > P_MIN


def test_levels_rejects_mismatched_lengths() -> None:
    with pytest.raises(ValueError):
        sample_discrete_laplace_levels(SeededRandom(1), [Fraction(1)], [1, 2])
    assert sample_discrete_laplace_levels(SeededRandom(1), [], []) == []


def test_scale_validation() -> None:
    src = SeededRandom(1)
    for bad in (0, -1, Fraction(-1, 2), float("nan"), float("inf")):
        with pytest.raises(ParameterError):
            sample_discrete_laplace(src, bad, 10)
    with pytest.raises(OverflowError):
        sample_discrete_laplace(src, Fraction(2**63), 10)
    assert sample_discrete_laplace(src, Fraction(3), 0).shape == (0,)


# ---------------------------------------------------------------------------------------
# OpenDP comparison
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_matches_opendp_discrete_laplace() -> None:
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    meas = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=3.0
    )
    n = 100_000
    theirs = np.asarray(meas([0] * n), dtype=np.int64)
    ours = sample_discrete_laplace(SeededRandom(401), Fraction(3), n)

    L = _support_half_width(_lap_pmf(3), n)
    table = np.vstack([_binned(theirs, L), _binned(ours, L)])
    p = float(stats.chi2_contingency(table).pvalue)
    assert p > P_MIN, f"homogeneity vs OpenDP: p = {p}"

    # OpenDP cannot be seeded, so this part is not deterministic (the sample variance of
    # Laplace draws is right-skewed; a 4-SE excursion happens rarely but can happen).
    var, se = _var_se(3, n)
    assert abs(float(np.var(theirs)) - var) < 4 * se, "OpenDP variance"
    assert abs(float(np.var(ours)) - var) < 4 * se, "our variance"


# ---------------------------------------------------------------------------------------
# Discrete Gaussian
# ---------------------------------------------------------------------------------------

# Six variance parameters from below the lattice spacing (σ² = 0.3: the variance is clearly below σ²) to
# σ = 100; the acceptance threshold is p > 1e-3 at each.
GAUSS = [(Fraction(3, 10), 511), (Fraction(1), 512), (Fraction(5, 2), 513), (Fraction(10), 514),
         (Fraction(100), 515), (Fraction(10**4), 516)]
GAUSS_P_MIN = 1e-3


def _brute_gaussian_moments(sigma2: float) -> tuple[float, float]:
    """(E x², E x⁴) of P(x) ∝ exp(−x²/(2σ²)) by direct summation over |x| ≤ 40σ + 60 (fsum; the tail
    beyond is below e^{−800}). Independent of dpgui.core.noise."""
    half = int(40 * math.sqrt(sigma2)) + 60
    xs = [float(k) for k in range(-half, half + 1)]
    weights = [math.exp(-(x * x) / (2.0 * sigma2)) for x in xs]
    z = math.fsum(weights)
    m2 = math.fsum(w * x * x for w, x in zip(weights, xs)) / z
    m4 = math.fsum(w * x**4 for w, x in zip(weights, xs)) / z
    return m2, m4


@pytest.mark.slow
@pytest.mark.parametrize("sigma2,seed", GAUSS, ids=[str(s) for s, _ in GAUSS])
def test_gaussian_chi_square_and_sample_variance(sigma2: Fraction, seed: int) -> None:
    """Chi-square goodness of fit against the exact pmf (tails with expected < 5 pooled), and the sample
    mean and variance within 4 SE of 0 and of the exact variance (SE from the brute-force 4th moment)."""
    n = 200_000
    x = sample_discrete_gaussian(SeededRandom(seed), sigma2, n)
    assert x.dtype == np.int64 and x.shape == (n,)
    p = _chi2_gof_symmetric(x, lambda xs: discrete_gaussian_pmf(xs, float(sigma2)))
    assert p > GAUSS_P_MIN, f"sigma2 {sigma2}: chi-square p = {p}"
    var = float(discrete_gaussian_variance(float(sigma2)))
    _, m4 = _brute_gaussian_moments(float(sigma2))
    se = math.sqrt((m4 - var * var) / n)
    assert abs(float(np.mean(x))) < 4 * math.sqrt(var / n)
    assert abs(float(np.var(x)) - var) < 4 * se, f"sigma2 {sigma2}: sample var {np.var(x)} vs {var} ± {se}"
    assert 4 * se < 0.05 * var  # a factor-2 error in σ (variance ×4 or ÷4) would be far outside


@pytest.mark.slow
@pytest.mark.parametrize("sigma2", [0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 2.5, 4.0, 10.0, 15.99, 16.0, 16.01,
                                    100.0, 1e4, 1e6])
def test_discrete_gaussian_variance_matches_brute_force_sum(sigma2: float) -> None:
    m2, _ = _brute_gaussian_moments(sigma2)
    got = float(discrete_gaussian_variance(sigma2))
    assert got == pytest.approx(m2, rel=1e-12)
    assert got <= sigma2 * (1 + 1e-15)  # the discrete Gaussian's variance is below σ²
    # vectorised, with σ² on both sides of the direct-sum / Poisson-summation switch in one array
    mixed = discrete_gaussian_variance(np.array([[sigma2, 1.0, 1e4]]))
    assert mixed.shape == (1, 3)
    np.testing.assert_allclose(mixed[0], [m2, _brute_gaussian_moments(1.0)[0], _brute_gaussian_moments(1e4)[0]],
                               rtol=1e-12)


def test_discrete_gaussian_variance_is_below_sigma2_for_small_sigma() -> None:
    """The projections use the exact variance, not σ²: at σ² = 0.2 it is ~30 % lower, at σ ≥ 2 equal."""
    assert float(discrete_gaussian_variance(0.2)) == pytest.approx(0.2 * 0.7066, rel=1e-3)
    assert float(discrete_gaussian_variance(4.0)) == pytest.approx(4.0, rel=1e-14)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            discrete_gaussian_variance(bad)


def test_gaussian_big_integer_fallback() -> None:
    # numerator and denominator beyond 64 bits: every acceptance test runs on Python ints.
    sigma2 = Fraction(10**12 + 1, 2**40 + 3)
    x = sample_discrete_gaussian(SeededRandom(505), sigma2, 20_000)
    p = _chi2_gof_symmetric(x, lambda xs: discrete_gaussian_pmf(xs, float(sigma2)))
    assert p > P_MIN


def test_gaussian_pmf_normalised() -> None:
    for s2 in (0.5, 10.0, 1e4):
        half = int(50 * math.sqrt(s2)) + 50
        p = discrete_gaussian_pmf(np.arange(-half, half + 1), s2)
        assert math.fsum(p.tolist()) == pytest.approx(1.0, rel=1e-12)


# ---------------------------------------------------------------------------------------
# laplace_scale
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("sens", [1, 2, 5, 17])
@pytest.mark.parametrize("eps", [0.1, 0.3, 1 / 3, 1e-3, 1.0, 7.0, 2.5, Fraction(1, 3)])
@pytest.mark.parametrize("den", [2**16, 1, 1000])
def test_laplace_scale_exact(sens: int, eps, den: int) -> None:
    t = laplace_scale(sens, eps, den)
    target = Fraction(sens) / Fraction(eps)
    assert isinstance(t, Fraction)
    assert (t * den).denominator == 1
    assert target <= t < target + Fraction(1, den)
    assert Fraction(sens) / t <= Fraction(eps)  # true epsilon never exceeds the request


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    sens=st.integers(1, 10**6),
    eps=st.floats(min_value=1e-9, max_value=1e6, allow_nan=False, allow_infinity=False),
    den=st.integers(1, 2**40),
)
def test_laplace_scale_property(sens: int, eps: float, den: int) -> None:
    t = laplace_scale(sens, eps, den)
    target = Fraction(sens) / Fraction(eps)
    assert target <= t < target + Fraction(1, den)
    assert (t * den).denominator == 1


def test_laplace_scale_default_denominator() -> None:
    assert laplace_scale(1, 0.5) == Fraction(2)
    assert laplace_scale(1, 0.1) * 2**16 == math.ceil(Fraction(1) / Fraction(0.1) * 2**16)


@pytest.mark.parametrize("eps", [0, 0.0, -1.0, -0.0, float("nan"), float("inf"), float("-inf"), "x", None, True])
def test_laplace_scale_rejects_bad_epsilon(eps) -> None:
    with pytest.raises(ParameterError):
        laplace_scale(1, eps)


@pytest.mark.parametrize("sens", [0, -1, 1.5, True])
def test_laplace_scale_rejects_bad_sensitivity(sens) -> None:
    with pytest.raises(ParameterError):
        laplace_scale(sens, 1.0)


def test_laplace_scale_rejects_bad_denominator() -> None:
    with pytest.raises(ParameterError):
        laplace_scale(1, 1.0, 0)


# ---------------------------------------------------------------------------------------
# uniform_below
# ---------------------------------------------------------------------------------------


def test_uniform_below_m3_chi_square() -> None:
    n = 300_000
    x = uniform_below(SeededRandom(601), np.full(n, 3, dtype=np.uint64))
    assert x.dtype == np.uint64
    counts = np.bincount(x.astype(np.int64), minlength=3)
    assert counts.size == 3
    assert stats.chisquare(counts).pvalue > P_MIN


def test_uniform_below_m1_is_zero() -> None:
    x = uniform_below(SeededRandom(602), np.ones(1000, dtype=np.int64))
    assert np.all(x == 0)


def test_uniform_below_2_63_plus_1_rejection_path() -> None:
    # 2**64 mod (2**63 + 1) = 2**63 - 1: about half the words are rejected and redrawn.
    n = 200_000
    m = 2**63 + 1
    src = CountingSource(SeededRandom(603))
    x = uniform_below(src, np.full(n, m, dtype=np.uint64))
    assert int(x.max()) < m
    assert 1.9 * n < src.words < 2.1 * n  # rejection loop exercised
    # bit 62 is set iff x >= 2**62: probability (2**63 + 1 - 2**62)/(2**63 + 1) ~ 1/2
    frac = float(np.mean(x >= np.uint64(2**62)))
    assert abs(frac - 0.5) < 4 * math.sqrt(0.25 / n)
    # bit 63 is set only for x = 2**63 (probability 2**-63)
    assert not np.any(x >= np.uint64(2**63))


@pytest.mark.parametrize("m,lo", [(3 * 2**62, 2**62), (3 * 2**30, 2**30)])
def test_uniform_below_no_modulo_bias(m: int, lo: int) -> None:
    # Naive w % m gives P(x < m/3) = 1/2 here; exact sampling gives 1/3.
    n = 200_000
    x = uniform_below(SeededRandom(604), np.full(n, m, dtype=np.uint64))
    frac = float(np.mean(x < np.uint64(lo)))
    assert abs(frac - 1 / 3) < 4 * math.sqrt((1 / 3) * (2 / 3) / n)
    counts = np.bincount((x // np.uint64(lo)).astype(np.int64), minlength=3)
    assert counts.size == 3 and stats.chisquare(counts).pvalue > P_MIN


def test_uniform_below_max_and_shape_and_validation() -> None:
    x = uniform_below(SeededRandom(605), np.full((4, 5), 2**64 - 1, dtype=np.uint64))
    assert x.shape == (4, 5) and x.dtype == np.uint64
    mixed = np.array([1, 2, 3, 2**40, 2**63], dtype=np.uint64)
    y = uniform_below(SeededRandom(606), np.tile(mixed, 1000))
    assert np.all(y < np.tile(mixed, 1000))
    with pytest.raises(ValueError):
        uniform_below(SeededRandom(1), np.array([0, 1]))
    with pytest.raises(ValueError):
        uniform_below(SeededRandom(1), np.array([-3]))
    with pytest.raises(TypeError):
        uniform_below(SeededRandom(1), np.array([1.5]))


# ---------------------------------------------------------------------------------------
# bernoulli_exp
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("num,den", [(0, 1), (3, 10), (1, 1), (5, 2), (7, 7), (13, 4)])
def test_bernoulli_exp_frequency(num: int, den: int) -> None:
    n = 200_000
    b = bernoulli_exp(
        SeededRandom(700 + num), np.full(n, num, dtype=np.int64), np.full(n, den, dtype=np.int64)
    )
    assert b.dtype == bool and b.shape == (n,)
    p = math.exp(-num / den)
    if num == 0:
        assert b.all()
    assert abs(float(b.mean()) - p) < 4 * math.sqrt(p * (1 - p) / n) + 1e-12


def test_bernoulli_exp_broadcast_and_mixed_gammas() -> None:
    n = 100_000
    nums = np.tile(np.array([0, 3, 10, 25], dtype=np.int64), n)
    b = bernoulli_exp(SeededRandom(710), nums, np.int64(10))
    for i, g in enumerate([0, 0.3, 1.0, 2.5]):
        p = math.exp(-g)
        assert abs(float(b[i::4].mean()) - p) < 4 * math.sqrt(p * (1 - p) / n) + 1e-12


@pytest.mark.slow
def test_bernoulli_exp_big_denominators() -> None:
    n = 20_000
    # d*K overflows uint64 from K = 2 on: the Python-int fallback runs.
    d = 2**64 - 1
    b = bernoulli_exp(SeededRandom(711), np.full(n, d // 2, dtype=np.uint64), np.full(n, d, dtype=np.uint64))
    p = math.exp(-0.5)
    assert abs(float(b.mean()) - p) < 4 * math.sqrt(p * (1 - p) / n)
    # beyond 64 bits: object arrays of Python ints
    D = 3 * 2**70
    nums = np.array([7 * D // 10] * n, dtype=object)
    b2 = bernoulli_exp(SeededRandom(712), nums, np.array(D, dtype=object))
    p2 = math.exp(-0.7)
    assert abs(float(b2.mean()) - p2) < 4 * math.sqrt(p2 * (1 - p2) / n)


def test_bernoulli_exp_validation() -> None:
    src = SeededRandom(1)
    with pytest.raises(ValueError):
        bernoulli_exp(src, np.array([-1]), np.array([1]))
    with pytest.raises(ValueError):
        bernoulli_exp(src, np.array([1]), np.array([0]))
    with pytest.raises(TypeError):
        bernoulli_exp(src, np.array([0.5]), np.array([1]))


# ---------------------------------------------------------------------------------------
# Random sources
# ---------------------------------------------------------------------------------------


def test_secure_random_uses_os_urandom(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = os.urandom

    def counting(k: int) -> bytes:
        calls.append(k)
        return real(k)

    monkeypatch.setattr(os, "urandom", counting)
    src = SecureRandom()
    assert src.secure is True
    assert isinstance(src, RandomSource)
    w = src.uint64(10)
    assert w.dtype == np.uint64 and w.shape == (10,)
    assert calls == [80]
    x = sample_discrete_laplace(src, Fraction(5), 1000)
    assert x.shape == (1000,)
    assert len(calls) > 1 and all(k % 8 == 0 for k in calls)


def test_seeded_random_reproducible_and_insecure() -> None:
    a, b, c = SeededRandom(42), SeededRandom(42), SeededRandom(43)
    assert a.secure is False and isinstance(a, RandomSource)
    np.testing.assert_array_equal(a.uint64(100), b.uint64(100))
    xa = sample_discrete_laplace(a, Fraction(7, 3), 5000)
    xb = sample_discrete_laplace(b, Fraction(7, 3), 5000)
    xc = sample_discrete_laplace(c, Fraction(7, 3), 5000)
    np.testing.assert_array_equal(xa, xb)
    assert not np.array_equal(xa, xc)
    ga = sample_discrete_gaussian(SeededRandom(7), Fraction(10), 1000)
    gb = sample_discrete_gaussian(SeededRandom(7), Fraction(10), 1000)
    np.testing.assert_array_equal(ga, gb)


class _ZerosFirst:
    """Returns all-zero words on the first call, then delegates to a seeded source."""

    secure = False

    def __init__(self, seed: int) -> None:
        self.inner = SeededRandom(seed)
        self.first = True

    def uint64(self, n: int) -> np.ndarray:
        if self.first:
            self.first = False
            return np.zeros(n, dtype=np.uint64)
        return self.inner.uint64(n)


def test_bern_exp1_continues_exactly_beyond_k12() -> None:
    # A zero word means A_2 = ... = A_12 = 1 (probability 1/12!); the trial must then go on
    # with fresh A_13, A_14, ... so that P(result | K >= 13) = P(K odd | K >= 13).
    n = 20_000
    b = noise._bern_exp1(_ZerosFirst(801), n)
    f12 = math.factorial(12)
    p = sum(f12 * (1 / math.factorial(k - 1) - 1 / math.factorial(k)) for k in range(13, 40, 2))
    assert abs(float(b.mean()) - p) < 4 * math.sqrt(p * (1 - p) / n)
    assert not b.all()


def test_secure_chunks_are_drawn_on_threads_each_into_its_own_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """Secure noise is drawn chunk by chunk on several threads (each chunk from fresh words: the
    distribution is that of one chunk, checked above); every element gets its own chunk's draw."""
    import threading

    monkeypatch.setattr(noise, "_CHUNK", 1000)
    monkeypatch.setattr(noise, "_THREADS", 2)
    threads: set[int] = set()

    def fake_core(src: object, t: np.ndarray, s: np.ndarray) -> np.ndarray:
        threads.add(threading.get_ident())
        threading.Event().wait(0.01)  # long enough for the second thread to take a chunk
        return t * 1 + s

    monkeypatch.setattr(noise, "_dlap_core", fake_core)
    t = np.arange(10_500, dtype=np.int64)
    assert np.array_equal(noise._dlap_chunked(noise.SecureRandom(), t, np.full(t.size, 7, np.int64)), t + 7)
    assert len(threads) == 2
    threads.clear()
    noise._dlap_chunked(SeededRandom(1), t, np.ones(t.size, np.int64))  # reproducible: one thread, in order
    assert threads == {threading.get_ident()}
