"""The projected error the plots and projections must show, computed in the tests independently of
dpgui.core.projection_curves: the 95 % margin 2.2·SE + 1 record (docs/engine.md, "Count intervals")."""

from __future__ import annotations

import math

import numpy as np

from dpgui.core.plan import Plan
from dpgui.core.projection import last_prefix, total_sq_error


def band_margin(sd: float | np.ndarray) -> float | np.ndarray:
    """The 95 % margin of a count with standard error ``sd``: 2.2·SE + 1 record (0 if exact)."""
    sd = np.asarray(sd, dtype=float)
    out = np.where(sd > 0, 2.2 * sd + 1.0, 0.0)
    return float(out) if out.ndim == 0 else out


def rms(plan: Plan) -> float:
    """The margin of the root-mean-square standard error over the released prefixes."""
    return float(band_margin(math.sqrt(total_sq_error(plan) / last_prefix(plan.shape, plan.privacy.root_public))))


def prefix_noise_pmf(pmfs: dict[int, np.ndarray], digits: np.ndarray) -> np.ndarray:
    """Exact pmf of the covering-sum noise of one prefix: the convolution of ``digits[level]`` copies of
    each level's symmetric noise pmf ``pmfs[level]`` (on −h..h)."""
    total = np.array([1.0])
    for level, pmf in pmfs.items():
        for _ in range(int(digits[level])):
            total = np.convolve(total, pmf)
    return total


def upper_point(total: np.ndarray) -> tuple[int, float]:
    """(exact one-sided 97.5 % point, standard deviation) of a symmetric integer pmf on −h..h: the
    smallest h with P(S > h) ≤ 2.5 %."""
    half = (total.size - 1) // 2
    k = np.arange(-half, half + 1)
    sd = math.sqrt(float((total * k * k).sum()))
    above = np.cumsum(total[::-1])[::-1][half + 1:]  # above[h] = P(S > h)
    return int(np.flatnonzero(above <= 0.025)[0]), sd
