"""Ko, Ziani & Fioretto's error model of a clamped noisy count and its level-budget programs (6) and (7).

Ko, Ziani & Fioretto, "Optimal Allocation of Privacy Budget on Hierarchical Data Release" (Ko, Ziani & Fioretto,
``shared/seeds/001_*``). A node's count ``n ≥ 0`` is released as ``max(0, n + Z)`` (eq. 1, the
non-negativity clamp); its error is measured by bias, variance and MSE = bias² + variance (eq. 2).

Noise and its scale. The paper uses the continuous ``Lap(1/ε)`` with sensitivity 1; we write its
formulas with a scale ``b = Δ/ε`` (Δ = the level's L1 sensitivity, 2L under change, L under
add/remove; see :class:`dpgui.core.plan.PrivacySpec`):

* Proposition 1: bias ``= (b/2)·e^{−n/b}``;
* Proposition 2: variance ``= b²(2 − e^{−n/b}) − n·b·e^{−n/b} − (b²/4)·e^{−2n/b}``;
* eq. (3): MSE ``= b²(2 − e^{−n/b}) − n·b·e^{−n/b}``.

A release adds the *discrete* Laplace ``P(Z = k) = (1−q)/(1+q)·q^{|k|}``, ``q = e^{−1/t}`` with
``t = laplace_scale(Δ, ε)`` (:mod:`dpgui.core.noise`), and the moments of ``max(0, n + Z)`` are then
geometric sums (derived in :func:`clamped_discrete_laplace_moments`):

* bias ``= q^{n+1} / ((1+q)(1−q))``;
* MSE ``= 2q/(1−q)² − q^{n+1}·(2n/((1−q)(1+q)) + 1/(1−q)²)``; variance = MSE − bias².

As t → ∞ they tend to Propositions 1–2 with b = t. For the discrete Gaussian (``σ² = Δ₂²/(2ρ)``,
zCDP budget ρ per level) the same moments are exact sums over its pmf
(:func:`clamped_discrete_gaussian_moments`).

Levels. The weighted MSE across levels (eq. 5) is ``Σ_ℓ w_ℓ Σ_{j ∈ level ℓ} MSE(N_j, budget_ℓ)``
over the *noised* levels: under ``change`` the root count is public and exact (no noise, no budget,
not in the programs), under ``addremove`` the root is a level like the others. ``N_j`` are counts
of a *public prior* (never the confidential data unless the user opts in; see
:mod:`dpgui.core.hierarchy`). Budgets are ε_ℓ (Laplace, Σ ε_ℓ = ε) or ρ_ℓ (Gaussian, Σ ρ_ℓ = ρ).
The optimiser uses the exact discrete moments at the unrounded scale ``t = Δ/ε_ℓ`` (or
``σ² = Δ₂²/(2ρ_ℓ)``); a release rounds the scale up by at most 2⁻¹⁶ relative.

Programs. (6): minimise eq. 5 subject to Σ budget_ℓ ≤ total; (7): minimise Σ budget_ℓ subject to
eq. 5 ≤ τ. Each level's MSE is strictly convex and decreasing in its budget (paper Prop. 3; for the
discrete forms we check it numerically in the tests), so both programs are convex and their KKT
conditions are necessary and sufficient: every noised level has a positive budget (the MSE's slope
is −∞ at 0) and ``w_ℓ · ∂MSE_ℓ/∂x_ℓ = −λ`` for one λ > 0, with the constraint tight. We solve
``G_ℓ(x_ℓ) = λ`` (``G_ℓ = −w_ℓ ∂MSE_ℓ/∂x``, decreasing in x) for each level and the scalar λ that
makes the constraint tight, both by a bracketed secant (Illinois) in log–log coordinates, where G is
nearly a power law, so it converges in a few steps to machine precision and never leaves its
bracket. Why not scipy: the problem is one monotone scalar equation nested in another; a bracketed
root finder certifies the solution by its bracket, needs no tuning of an interior-point method and
keeps this module importable without SciPy (the window starts without it).

Complexity: a level's MSE and slope cost O(U) for its U distinct prior counts (Laplace) or
O(U + σ) (Gaussian); the programs evaluate them O(100) times.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from dpgui.core.noise_moments import discrete_gaussian_variance, discrete_laplace_variance
from dpgui.core.noise_mechanisms import mechanism_for
from dpgui.core.plan import PrivacySpec, budget_total
from dpgui.errors import ParameterError
from dpgui.vocabulary import CDF_NOISES, Noise

__all__ = [
    "clamped_laplace_bias",
    "clamped_laplace_variance",
    "clamped_laplace_mse",
    "clamped_discrete_laplace_moments",
    "clamped_discrete_gaussian_moments",
    "level_mse",
    "level_mse_slope",
    "weighted_mse",
    "optimal_allocation",
    "least_budget_for_target",
    "noised_levels",
]

# The discrete-Gaussian sums run over 0 ≤ k ≤ 14σ + 2 (the pmf beyond is < e^{-98} of its peak).
_GAUSS_TAIL_SIGMAS = 14.0
# Above this σ, the clamped discrete Gaussian's moments are those of the clamped normal: by Poisson
# summation / Euler–Maclaurin the difference is O(n φ(n/σ)/σ) on a variance of σ², relative < 1e-9.
_GAUSS_GRID_MAX_SIGMA = 20_000.0


def _counts_array(count: npt.ArrayLike) -> np.ndarray:
    arr = np.asarray(count, dtype=np.float64)
    if np.any(~np.isfinite(arr)) or np.any(arr < 0):
        raise ParameterError("counts must be finite and ≥ 0", "give non-negative counts")
    return arr


def _positive(value: float, name: str) -> float:
    v = float(value)
    if not (v > 0 and math.isfinite(v)):
        raise ParameterError(f"{name} must be a finite number > 0, got {value!r}", f"give a positive {name}")
    return v


# ----------------------------------------------------------------------------------------------
# Ko, Ziani & Fioretto, Propositions 1–2 and eq. (3): continuous Laplace of scale b = Δ/ε
# ----------------------------------------------------------------------------------------------


def clamped_laplace_bias(count: npt.ArrayLike, scale: float) -> np.ndarray:
    """Bias E[max(0, n + Z)] − n for Z ~ Laplace(scale b): (b/2)·e^{−n/b} (Ko, Ziani & Fioretto, Prop. 1 with b = 1/ε)."""
    n, b = _counts_array(count), _positive(scale, "scale")
    out: np.ndarray = 0.5 * b * np.exp(-n / b)
    return out


def clamped_laplace_variance(count: npt.ArrayLike, scale: float) -> np.ndarray:
    """Var max(0, n + Z), Z ~ Laplace(b): b²(2 − e^{−n/b}) − n b e^{−n/b} − (b²/4) e^{−2n/b} (Ko, Ziani & Fioretto, Prop. 2)."""
    n, b = _counts_array(count), _positive(scale, "scale")
    e = np.exp(-n / b)
    out: np.ndarray = b * b * (2.0 - e) - n * b * e - 0.25 * b * b * e * e
    return out


def clamped_laplace_mse(count: npt.ArrayLike, scale: float) -> np.ndarray:
    """E[(max(0, n + Z) − n)²], Z ~ Laplace(b): b²(2 − e^{−n/b}) − n b e^{−n/b} (Ko, Ziani & Fioretto, eq. 3)."""
    n, b = _counts_array(count), _positive(scale, "scale")
    e = np.exp(-n / b)
    out: np.ndarray = b * b * (2.0 - e) - n * b * e
    return out


# ----------------------------------------------------------------------------------------------
# The same moments for the discrete Laplace that releases use
# ----------------------------------------------------------------------------------------------


def _dlap_q(scale: float) -> tuple[float, float]:
    """(q, 1 − q) for q = e^{−1/scale}, 1 − q without cancellation."""
    x = 1.0 / scale
    return math.exp(-x), -math.expm1(-x)


def _dlap_bias_mse(n: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    q, a = _dlap_q(scale)
    qn1 = np.exp((n + 1.0) * math.log(q)) if q > 0 else np.zeros_like(n)
    bias = qn1 / ((1.0 + q) * a)
    raw_mse = discrete_laplace_variance(scale)  # 2q/(1−q)², written without cancellation
    mse = raw_mse - qn1 * (2.0 * n / (a * (1.0 + q)) + 1.0 / (a * a))
    return bias, np.maximum(mse, bias * bias)


def clamped_discrete_laplace_moments(count: npt.ArrayLike, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(bias, variance) of max(0, n + Z), Z discrete Laplace P(k) = (1−q)/(1+q)·q^{|k|}, q = e^{−1/scale}.

    With c = (1−q)/(1+q), max(0, n+Z) − n = max(−n, Z), so
    bias = Σ_{j≥1} j·P(Z = −n−j) = c q^{n+1}/(1−q)² = q^{n+1}/((1+q)(1−q)), and
    MSE = E Z² − Σ_{j≥1} ((n+j)² − n²) P(Z = −n−j) = 2q/(1−q)² − c q^n (2n q/(1−q)² + q(1+q)/(1−q)³)
        = 2q/(1−q)² − q^{n+1}·(2n/((1−q)(1+q)) + 1/(1−q)²);
    variance = MSE − bias². Exact (no truncation); O(len(count)). ``scale`` is t (records), e.g.
    ``float(laplace_scale(Δ, ε))``. As t → ∞ these tend to Ko, Ziani & Fioretto's Propositions 1–2 with b = t.
    """
    n, t = _counts_array(count), _positive(scale, "scale")
    bias, mse = _dlap_bias_mse(n, t)
    return bias, mse - bias * bias


def _dlap_mse_slope(n: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(MSE, dMSE/dt) per count for the clamped discrete Laplace at scale t.

    With q = e^{−1/t}: M(q) = 2q/(1−q)² − q^{n+1} h(q), h = 2n/(1−q²) + 1/(1−q)²;
    dM/dq = 2(1+q)/(1−q)³ − (n+1) q^n h − q^{n+1} h',  h' = 4nq/(1−q²)² + 2/(1−q)³;  dq/dt = q/t².
    """
    q, a = _dlap_q(scale)
    one_minus_q2 = a * (1.0 + q)
    qn = np.exp(n * math.log(q)) if q > 0 else (n == 0).astype(np.float64)
    h = 2.0 * n / one_minus_q2 + 1.0 / (a * a)
    dh = 4.0 * n * q / (one_minus_q2 * one_minus_q2) + 2.0 / (a * a * a)
    mse = discrete_laplace_variance(scale) - q * qn * h
    dmdq = 2.0 * (1.0 + q) / (a * a * a) - (n + 1.0) * qn * h - q * qn * dh
    return mse, dmdq * q / (scale * scale)


# ----------------------------------------------------------------------------------------------
# Discrete Gaussian: exact sums over its pmf
# ----------------------------------------------------------------------------------------------


def _normal_cdf(x: np.ndarray) -> np.ndarray:
    from math import erfc

    return np.asarray(0.5 * np.vectorize(erfc)(-x / math.sqrt(2.0)), dtype=np.float64)


def _dgauss_tables(sigma2: float) -> dict[str, np.ndarray]:
    """Tail tables over m = 0..K of the discrete Gaussian at σ² (pmf on k = 0..K+1):
    A(m) = P(Z > m), D(m) = Σ_{k>m} (k−m) P(k), E(m) = Σ_{k>m} (k² − m²) P(k),
    F(m) = Σ_{k>m} k²(k² − m²) P(k); and the moments v2 = E Z², v4 = E Z⁴.
    D and E use D(m) = D(m+1) + A(m), E(m) = E(m+1) + (2m+1) A(m): sums of positive terms only."""
    sigma = math.sqrt(sigma2)
    k_max = int(math.ceil(_GAUSS_TAIL_SIGMAS * sigma)) + 2
    k = np.arange(0, k_max + 2, dtype=np.float64)
    w = np.exp(-(k * k) / (2.0 * sigma2))
    z = w[0] + 2.0 * w[1:].sum()
    p = w / z
    tail_from = np.cumsum(p[::-1])[::-1]  # Σ_{k' ≥ k} P
    a = np.append(tail_from[1:], 0.0)  # A(m) = Σ_{k > m} P
    m = k
    d = np.cumsum(a[::-1])[::-1]  # D(m) = Σ_{m' ≥ m} A(m')
    e = np.cumsum(((2.0 * m + 1.0) * a)[::-1])[::-1]
    k2p, k4p = k * k * p, k**4 * p
    t2 = np.append(np.cumsum(k2p[::-1])[::-1][1:], 0.0)
    t4 = np.append(np.cumsum(k4p[::-1])[::-1][1:], 0.0)
    f = np.maximum(t4 - m * m * t2, 0.0)
    v2 = float(discrete_gaussian_variance(sigma2))
    v4 = 2.0 * float(k4p[1:].sum())
    return {"A": a, "D": d, "E": e, "F": f, "v2": np.array(v2), "v4": np.array(v4)}


def _dgauss_bias_mse_slope(n: np.ndarray, sigma2: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bias, MSE, dMSE/dσ²) of max(0, n + Z) per count, Z discrete Gaussian at σ².

    bias = D(n), MSE = E[max(−n, Z)²] = E Z² − E(n); with f_n(z) = max(−n, z)², the exponential family
    P ∝ e^{−k²/(2σ²)} gives dE f_n/dσ² = Cov(f_n, Z²)/(2σ⁴), E[f_n Z²] = E Z⁴ − F(n).
    Above σ = 20,000: the clamped normal's moments (see module constants)."""
    sigma = math.sqrt(sigma2)
    if sigma > _GAUSS_GRID_MAX_SIGMA:
        a_ = n / sigma
        phi = np.exp(-0.5 * a_ * a_) / math.sqrt(2.0 * math.pi)
        upper = _normal_cdf(a_)
        lower = 1.0 - upper
        bias = sigma * phi - n * lower
        mse = n * n * lower + sigma2 * (upper - a_ * phi)
        return bias, mse, upper - a_ * phi
    tab = _dgauss_tables(sigma2)
    k_max = tab["A"].size - 1
    idx = np.minimum(n, k_max).astype(np.int64)
    inside = n <= k_max
    bias = np.where(inside, tab["D"][idx], 0.0)
    e_tail = np.where(inside, tab["E"][idx], 0.0)
    f_tail = np.where(inside, tab["F"][idx], 0.0)
    v2, v4 = float(tab["v2"]), float(tab["v4"])
    mse = v2 - e_tail
    cov = (v4 - f_tail) - mse * v2
    return bias, mse, cov / (2.0 * sigma2 * sigma2)


def clamped_discrete_gaussian_moments(count: npt.ArrayLike, sigma2: float) -> tuple[np.ndarray, np.ndarray]:
    """(bias, variance) of max(0, n + Z), Z discrete Gaussian P(k) ∝ e^{−k²/(2σ²)}, by exact summation.

    bias = Σ_{k>n} (k − n) P(k); MSE = E Z² − Σ_{k>n} (k² − n²) P(k) (Z is symmetric); variance =
    MSE − bias². The sums run over k ≤ 14σ + 2 (the rest is below e^{−98} relative), built as
    suffix sums of positive terms; O(σ + len(count)). For σ > 20,000 the clamped normal's moments are
    used (relative difference < 1e-9). Counts must be whole numbers.
    """
    n, s2 = _counts_array(count), _positive(sigma2, "sigma2")
    if np.any(n != np.floor(n)):
        raise ParameterError("counts must be whole numbers", "give integer counts")
    bias, mse, _ = _dgauss_bias_mse_slope(n, s2)
    return bias, np.maximum(mse - bias * bias, 0.0)


# ----------------------------------------------------------------------------------------------
# Levels: MSE and its slope as functions of the level's budget
# ----------------------------------------------------------------------------------------------


def _dgauss_mse_slope(n: np.ndarray, sigma2: float) -> tuple[np.ndarray, np.ndarray]:
    _, mse, slope = _dgauss_bias_mse_slope(n, sigma2)
    return mse, slope


#: Per noise: (MSE, d MSE / d noise parameter) of the clamped count at each prior count.
_MSE_SLOPE = {Noise.LAPLACE: _dlap_mse_slope, Noise.GAUSSIAN: _dgauss_mse_slope}


class _Level:
    """A noised level's distinct prior counts and their multiplicities (the optimiser's data)."""

    def __init__(self, counts: np.ndarray) -> None:
        values, mult = np.unique(np.asarray(counts, dtype=np.float64), return_counts=True)
        self.values = values
        self.mult = mult.astype(np.float64)
        self.nodes = int(mult.sum())


def _level_mse_slope(level: _Level, budget: float, noise: str, privacy: PrivacySpec) -> tuple[float, float]:
    """(Σ_j MSE_j, d/d budget of it) for one level at budget ε_ℓ (laplace: scale t = Δ/ε_ℓ) or ρ_ℓ
    (gaussian: σ² = Δ₂²/(2ρ_ℓ)); either parameter p falls as dp/d budget = −p/budget."""
    scale = mechanism_for(noise).unrounded_scale(privacy.sensitivity, budget)
    mse, slope = _MSE_SLOPE[Noise(noise)](level.values, scale)
    return float(mse @ level.mult), float(slope @ level.mult) * (-scale / budget)


def level_mse(counts: npt.ArrayLike, budget: float, privacy: PrivacySpec, noise: str = Noise.LAPLACE) -> float:
    """Σ_j MSE(N_j) of one noised level (eq. 5's inner sum) at budget ε_ℓ (laplace: scale Δ/ε_ℓ) or
    ρ_ℓ (gaussian: σ² = Δ₂²/(2ρ_ℓ)), with the exact clamped discrete moments. O(distinct counts)."""
    level = _Level(_counts_array(counts))
    return _level_mse_slope(level, _positive(budget, "budget"), _check_noise(noise, privacy), privacy)[0]


def level_mse_slope(counts: npt.ArrayLike, budget: float, privacy: PrivacySpec, noise: str = Noise.LAPLACE) -> float:
    """d/d budget of :func:`level_mse` (negative), analytic: what the KKT conditions are written with."""
    level = _Level(_counts_array(counts))
    return _level_mse_slope(level, _positive(budget, "budget"), _check_noise(noise, privacy), privacy)[1]


def _check_noise(noise: str, privacy: PrivacySpec) -> str:
    if noise not in CDF_NOISES:
        raise ParameterError(f"the budget programs work with laplace or gaussian noise, not {noise!r}",
                             "use noise 'laplace' or 'gaussian'")
    if noise == Noise.GAUSSIAN and privacy.rho is None:
        raise ParameterError("Gaussian noise needs δ > 0", "set δ, e.g. 1e-9, or choose Laplace noise")
    return noise


def noised_levels(n_levels_with_root: int, privacy: PrivacySpec) -> list[int]:
    """The levels that get noise (and a budget): 1..L under change (the root is public), 0..L under add/remove."""
    return list(range(privacy.first_noised_level(), n_levels_with_root))


def _prepare(prior_levels: Sequence[npt.ArrayLike], weights: Sequence[float] | None,
             privacy: PrivacySpec) -> tuple[list[int], list[_Level], list[float]]:
    levels = [np.asarray(c) for c in prior_levels]
    if len(levels) < 3:
        raise ParameterError(f"prior counts for {len(levels)} levels given",
                             "give counts for the root and every level (2–4 levels)")
    if weights is None:
        w = [1.0] * len(levels)
    else:
        w = [float(x) for x in weights]
        if len(w) != len(levels):
            raise ParameterError(f"{len(w)} weights for {len(levels)} levels (root included)",
                                 f"give one weight per level, root first ({len(levels)})")
    noised = noised_levels(len(levels), privacy)
    for ell in noised:
        if not (math.isfinite(w[ell]) and w[ell] > 0):
            raise ParameterError(f"level {ell}'s weight must be a finite number > 0, got {w[ell]!r}",
                                 "give every released level a positive weight")
    return noised, [_Level(_counts_array(levels[ell])) for ell in noised], [w[ell] for ell in noised]


def weighted_mse(level_budgets: Sequence[float], prior_levels: Sequence[npt.ArrayLike], weights: Sequence[float] | None,
                 privacy: PrivacySpec, noise: str = Noise.LAPLACE) -> float:
    """Ko, Ziani & Fioretto eq. (5): Σ_ℓ w_ℓ Σ_{j ∈ level ℓ} MSE(N_j, budget_ℓ) over the noised levels.

    ``level_budgets`` and ``prior_levels`` (public counts) and ``weights`` run over levels 0..L, root
    first; the root's entry is ignored under change (public, exact: no error). MSE is that of the
    clamped discrete noise (:func:`clamped_discrete_laplace_moments`, or the Gaussian's), in counts².
    """
    noise = _check_noise(noise, privacy)
    noised, levels, w = _prepare(prior_levels, weights, privacy)
    if len(level_budgets) != len(prior_levels):
        raise ParameterError(f"{len(level_budgets)} level budgets for {len(prior_levels)} levels",
                             "give one budget per level, root first (0 for the public root)")
    total = 0.0
    for ell, level, wl in zip(noised, levels, w):
        budget = _positive(level_budgets[ell], f"level {ell}'s budget")
        total += wl * _level_mse_slope(level, budget, noise, privacy)[0]
    return total


# ----------------------------------------------------------------------------------------------
# Programs (6) and (7)
# ----------------------------------------------------------------------------------------------


def _illinois(f: Callable[[float], float], lo: float, hi: float, f_lo: float, f_hi: float,
              xtol: float = 1e-13, iterations: int = 200) -> float:
    """Root of f on [lo, hi] (f(lo), f(hi) of opposite signs) by the Illinois variant of regula falsi:
    the bracket always holds the root; superlinear on smooth f; stops when the bracket is < xtol wide
    (absolute, in the caller's log coordinates) or f is exactly 0."""
    if f_lo == 0.0:
        return lo
    if f_hi == 0.0:
        return hi
    side = 0
    x = lo
    for _ in range(iterations):
        x = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        if not (min(lo, hi) < x < max(lo, hi)):
            x = 0.5 * (lo + hi)
        fx = f(x)
        if fx == 0.0:
            return x
        if (fx > 0) == (f_hi > 0):
            hi, f_hi = x, fx
            if side == -1:
                f_lo *= 0.5
            side = -1
        else:
            lo, f_lo = x, fx
            if side == 1:
                f_hi *= 0.5
            side = 1
        if abs(hi - lo) < xtol:
            break
    return (lo * f_hi - hi * f_lo) / (f_hi - f_lo) if f_hi != f_lo else 0.5 * (lo + hi)


def _bracket(f: Callable[[float], float], guess: float, step: float = 1.0) -> tuple[float, float, float, float]:
    """[lo, hi] around a root of a decreasing f (in log coordinates), starting at ``guess``."""
    lo, hi = guess - step, guess + step
    f_lo, f_hi = f(lo), f(hi)
    for _ in range(200):
        if f_lo > 0 > f_hi or f_lo == 0 or f_hi == 0:
            return lo, hi, f_lo, f_hi
        if f_lo <= 0:
            lo -= step
            f_lo = f(lo)
        if f_hi >= 0:
            hi += step
            f_hi = f(hi)
        step *= 2.0
    raise ParameterError("the budget optimiser could not bracket its solution", "check the prior counts and weights")


class _Solver:
    """KKT path of programs (6)/(7): for λ > 0, each level's budget x_ℓ(λ) solves −w_ℓ MSE_ℓ'(x) = λ."""

    def __init__(self, levels: list[_Level], weights: list[float], noise: str, privacy: PrivacySpec) -> None:
        self.levels, self.weights, self.noise, self.privacy = levels, weights, noise, privacy

    def gradient(self, i: int, x: float) -> float:
        """G_ℓ(x) = −w_ℓ dMSE_ℓ/dx (> 0, decreasing in x)."""
        return -self.weights[i] * _level_mse_slope(self.levels[i], x, self.noise, self.privacy)[1]

    def level_budget(self, i: int, lam: float, guess: float | None = None) -> float:
        log_lam = math.log(lam)

        def f(u: float) -> float:
            g = self.gradient(i, math.exp(u))
            return (math.log(g) if g > 0 else -745.0) - log_lam

        # G ≈ c·x^{-3} (Laplace, MSE ∝ 1/ε²) or c·x^{-2} (Gaussian, MSE ∝ 1/ρ): start there.
        if guess is None:
            u0 = 0.0
            g0 = self.gradient(i, 1.0)
            power = float(mechanism_for(self.noise).budget_power + 1)
            guess = (math.log(g0) - log_lam) / power + u0 if g0 > 0 else 0.0
        lo, hi, f_lo, f_hi = _bracket(f, guess, 0.25)
        return math.exp(_illinois(f, lo, hi, f_lo, f_hi))

    def budgets(self, lam: float) -> list[float]:
        return [self.level_budget(i, lam) for i in range(len(self.levels))]

    def lambda_for(self, condition: Callable[[list[float]], float], guess: float) -> tuple[float, list[float]]:
        """λ where condition(x(λ)) crosses 0 (condition decreasing in log λ)."""
        cache: dict[float, list[float]] = {}

        def f(v: float) -> float:
            xs = self.budgets(math.exp(v))
            cache[v] = xs
            return condition(xs)

        lo, hi, f_lo, f_hi = _bracket(f, guess, 1.0)
        v = _illinois(f, lo, hi, f_lo, f_hi, xtol=1e-12)
        return math.exp(v), cache[v] if v in cache else self.budgets(math.exp(v))


def _spread(noised: list[int], n_levels: int, xs: Sequence[float], total: float) -> tuple[float, ...]:
    """Per-level budgets 0..L (0 on levels without noise), scaled to sum to ``total`` exactly (fsum)."""
    s = math.fsum(xs)
    shares = [x * total / s for x in xs]
    shares[-1] = total - math.fsum(shares[:-1])
    out = [0.0] * n_levels
    for ell, x in zip(noised, shares):
        out[ell] = x
    return tuple(out)


def optimal_allocation(prior_levels: Sequence[npt.ArrayLike], privacy: PrivacySpec, weights: Sequence[float] | None = None,
                       noise: str = Noise.LAPLACE) -> tuple[float, ...]:
    """Program (6): the level budgets (levels 0..L, root first; 0 for the public root under change)
    that minimise the weighted MSE (eq. 5) with Σ budgets = ε (laplace) or ρ = privacy.rho (gaussian).

    Solved to optimality through its KKT conditions (module docstring): each level's
    w_ℓ·∂MSE_ℓ/∂x_ℓ equals the same −λ, and the budgets sum to the total (the constraint is tight:
    the MSE decreases in every budget). ``prior_levels`` are public counts per level (root first).
    """
    noise = _check_noise(noise, privacy)
    noised, levels, w = _prepare(prior_levels, weights, privacy)
    total = budget_total(privacy, noise)
    solver = _Solver(levels, w, noise, privacy)
    log_total = math.log(total)
    # A λ where each level takes total/m: a starting point for the bracket.
    guess = math.log(max(solver.gradient(i, total / len(levels)) for i in range(len(levels))))
    _, xs = solver.lambda_for(lambda xs: math.log(math.fsum(xs)) - log_total, guess)
    return _spread(noised, len(prior_levels), xs, total)


def least_budget_for_target(prior_levels: Sequence[npt.ArrayLike], privacy: PrivacySpec, weights: Sequence[float] | None,
                            target_mse: float, noise: str = Noise.LAPLACE) -> tuple[float, ...]:
    """Program (7): the level budgets (levels 0..L, root first) of least total that keep the weighted
    MSE (eq. 5) ≤ ``target_mse`` (τ, counts²). The total is ε (laplace) or ρ (gaussian; the ε this
    costs at the user's δ is ``zcdp_epsilon(Σρ, δ)``). ``privacy.epsilon`` is not a constraint here
    (the caller compares). KKT: w_ℓ·∂MSE_ℓ/∂x_ℓ = −1/μ on every level and MSE_w = τ (tight).
    """
    noise = _check_noise(noise, privacy)
    tau = float(target_mse)
    if not (math.isfinite(tau) and tau > 0):
        raise ParameterError(f"the target weighted MSE must be a finite number > 0, got {target_mse!r}",
                             "give a target error τ in counts², e.g. 1000")
    noised, levels, w = _prepare(prior_levels, weights, privacy)
    solver = _Solver(levels, w, noise, privacy)
    log_tau = math.log(tau)

    def excess(xs: list[float]) -> float:
        m = math.fsum(wl * _level_mse_slope(level, x, noise, privacy)[0] for level, wl, x in zip(levels, w, xs))
        return log_tau - math.log(m) if m > 0 else log_tau + 745.0

    guess = math.log(max(solver.gradient(i, 1.0) for i in range(len(levels))))
    try:
        _, xs = solver.lambda_for(excess, guess)
    except (OverflowError, ZeroDivisionError, ValueError) as err:  # math range/domain errors at extreme targets
        if isinstance(err, ParameterError):
            raise
        raise _unreachable_target(tau, prior_levels, privacy, weights, noise) from None
    if not all(math.isfinite(x) and x > 0 for x in xs):
        raise _unreachable_target(tau, prior_levels, privacy, weights, noise)
    return _spread(noised, len(prior_levels), xs, math.fsum(xs))


def _unreachable_target(tau: float, prior_levels: Sequence[npt.ArrayLike], privacy: PrivacySpec,
                        weights: Sequence[float] | None, noise: str) -> ParameterError:
    """The refusal of a target weighted MSE ``tau`` so far from any usable budget that the optimiser's
    arithmetic leaves the doubles: it names the weighted MSE the whole ε would give (program (6)),
    a target the user can start from."""
    at_epsilon = weighted_mse(optimal_allocation(prior_levels, privacy, weights, noise), prior_levels, weights, privacy,
                              noise)
    side = "larger" if tau > at_epsilon else "smaller"
    return ParameterError(f"no level budgets reach the target weighted MSE {tau:g} (records²): it is far {side} than "
                          f"the {at_epsilon:.4g} that the whole ε = {privacy.epsilon:g} gives",
                          f"give a target near {at_epsilon:.4g}, e.g. --allocation target:{at_epsilon:.3g}")
