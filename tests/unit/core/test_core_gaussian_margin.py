"""The published 95 % margin (noise_margin = Z_TAIL·SE + LATTICE_SLACK) also holds for Gaussian plans.

The margin was derived for sums of discrete Laplace terms (dpgui.core.quantiles). A Gaussian plan's
noise on a cumulative count is a sum of discrete Gaussian terms; these tests check the same claim by
exact convolution of the discrete Gaussian pmf: the exact one-sided 97.5 % point of the noise is at
most the margin computed from the exact standard error (docs/privacy-model.md, "(ε, δ): the Gaussian tree").
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgui.core.noise_moments import discrete_gaussian_pmf
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.projection import prefix_variances
from dpgui.core.quantiles import LATTICE_SLACK, Z_TAIL, noise_margin
from projection_helpers import prefix_noise_pmf, upper_point


def _pmf(sigma2: float) -> np.ndarray:
    reach = int(12 * math.sqrt(sigma2)) + 12
    return np.asarray(discrete_gaussian_pmf(np.arange(-reach, reach + 1), sigma2))


def test_noise_margin_bounds_exact_discrete_gaussian_sums() -> None:
    for sigma2 in (0.1, 0.3, 1.0, 3.0, 10.0, 50.0):
        pmf = _pmf(sigma2)
        total = np.array([1.0])
        for n in range(1, 17):
            total = np.convolve(total, pmf)
            exact, sd = upper_point(total)
            assert exact <= Z_TAIL * sd + LATTICE_SLACK, (sigma2, n, exact, sd)


@pytest.mark.slow
def test_margin_bounds_the_exact_noise_of_gaussian_covering_prefixes() -> None:
    """Covering-sum prefixes of real Gaussian plans (levels at different σ²): exact convolution."""
    for epsilon, bins, neighbours, delta in ((0.5, 16, "addremove", 1e-6), (4.0, 16, "change", 1e-9),
                                              (8.0, 40, "addremove", 1e-6)):
        plan = auto_plan(bins, PrivacySpec(epsilon, neighbours, 1, delta), estimator="covering", noise="gaussian")
        digits = plan.shape.covering_digits(np.arange(1, bins + 1), plan.released())
        pmfs = {level: _pmf(float(s2)) for level, s2 in enumerate(plan.scales) if s2 is not None}
        se = np.sqrt(prefix_variances(plan))
        margins = noise_margin(se)
        for j in range(bins - (1 if plan.privacy.root_public else 0)):
            exact, sd = upper_point(prefix_noise_pmf(pmfs, digits[j]))
            assert abs(sd - se[j]) <= 1e-6 * se[j]  # the projection's SE is the exact one
            assert exact <= margins[j], (epsilon, bins, neighbours, j, exact, se[j])
