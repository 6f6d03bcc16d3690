"""The exact pmfs and variances of the discrete Laplace and the discrete Gaussian (closed forms, floats).

The distributions that :mod:`dpgui.core.noise` samples exactly (Canonne, Kamath & Steinke, "The Discrete
Gaussian for Differential Privacy", NeurIPS 2020): the discrete Laplace of scale t, P(x) ∝ exp(−|x|/t),
and the discrete Gaussian of variance parameter σ², P(x) ∝ exp(−x²/(2σ²)). The planners' error
projections and the tests' goodness-of-fit checks use these; nothing here draws noise or touches data.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = [
    "discrete_laplace_variance",
    "discrete_laplace_pmf",
    "discrete_gaussian_pmf",
    "discrete_gaussian_variance",
]


def discrete_laplace_variance(scale: float) -> float:
    """Exact variance of the discrete Laplace with parameter ``scale``.

    2p/(1-p)^2 with p = exp(-1/scale), evaluated as 1 / (2 sinh^2(1/(2 scale))), which is
    the same quantity without cancellation; = 2 scale^2 - 1/6 + O(scale^-2).
    """
    sc = float(scale)
    if not sc > 0 or math.isinf(sc):
        raise ValueError(f"scale must be finite and > 0, got {scale!r}")
    x = 0.5 / sc
    if x > 350.0:  # sinh overflows; the variance is 2 exp(-1/scale) to double precision
        return 2.0 * math.exp(-1.0 / sc)
    sh = math.sinh(x)
    return 1.0 / (2.0 * sh * sh)


def discrete_laplace_pmf(x: np.ndarray, scale: float) -> np.ndarray:
    """Exact pmf (1-p)/(1+p) p^|x|, p = exp(-1/scale), written as tanh(1/(2 scale)) p^|x|."""
    sc = float(scale)
    if not sc > 0 or math.isinf(sc):
        raise ValueError(f"scale must be finite and > 0, got {scale!r}")
    ax = np.abs(np.asarray(x, dtype=np.float64))
    return math.tanh(0.5 / sc) * np.exp(-ax / sc)


def discrete_gaussian_pmf(x: np.ndarray, sigma2: float) -> np.ndarray:
    """pmf exp(-x^2/(2 sigma2)) / Z, Z summed numerically over |k| <= 40 sigma + 50."""
    s2 = float(sigma2)
    if not s2 > 0 or math.isinf(s2):
        raise ValueError(f"sigma2 must be finite and > 0, got {sigma2!r}")
    half = int(math.ceil(40.0 * math.sqrt(s2))) + 50
    k = np.arange(-half, half + 1, dtype=np.float64)
    z = math.fsum(np.exp(-(k * k) / (2.0 * s2)).tolist())
    xf = np.asarray(x, dtype=np.float64)
    return np.exp(-(xf * xf) / (2.0 * s2)) / z


_DG_DIRECT_LIMIT = 16.0  # below: sum the pmf directly; above: Poisson summation (the correction is < 1e-130)


def discrete_gaussian_variance(sigma2: npt.ArrayLike) -> np.ndarray:
    """Exact variance of the discrete Gaussian P(x) ∝ exp(−x²/(2σ²)) for each σ² > 0 (float array).

    It is below σ², and equal to σ² to double precision once σ ≥ 2. For σ² < 16 the sums
    Σ x² e^{−x²/2σ²} / Σ e^{−x²/2σ²} are taken over |x| ≤ 170 (terms beyond are < e^{−900});
    above, Poisson summation gives Var = σ² − 8π²σ⁴ Σ_k k² q^{k²} / (1 + 2 Σ_k q^{k²}), q = e^{−2π²σ²},
    of which the k = 1 term is kept. O(170) per small σ², O(1) otherwise.
    """
    s2 = np.asarray(sigma2, dtype=np.float64)
    if np.any(~(s2 > 0)) or np.any(np.isinf(s2)):
        raise ValueError("sigma2 must be finite and > 0")
    flat = s2.reshape(-1)
    out = flat.copy()
    small = flat < _DG_DIRECT_LIMIT
    if small.any():
        x = np.arange(-170, 171, dtype=np.float64)
        weights = np.exp(-(x[None, :] ** 2) / (2.0 * flat[small][:, None]))
        out[small] = (weights * x[None, :] ** 2).sum(axis=1) / weights.sum(axis=1)
    large = ~small
    if large.any():
        big = flat[large]
        q = np.exp(-2.0 * math.pi**2 * big)
        out[large] = big - 8.0 * math.pi**2 * big**2 * q / (1.0 + 2.0 * q)
    result: np.ndarray = out.reshape(s2.shape)
    return result
