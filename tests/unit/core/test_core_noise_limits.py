"""Every limit of the noise sampler is checked when the plan is built (before any spend)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dpgui.core.noise import MAX_LAPLACE_SCALE, SeededRandom, laplace_scale, sample_discrete_laplace
from dpgui.core.plan import Plan, PrivacySpec
from dpgui.core.tree import TreeShape
from dpgui.errors import ParameterError


def test_the_largest_scale_a_plan_accepts_is_sampled_without_overflow():
    # the smallest ε the change model (Δ = 2) accepts, found independently of the plan's own check
    epsilon = 2 / float(MAX_LAPLACE_SCALE) * (1 + 1e-9)
    plan = Plan(TreeShape(4, (4,)), PrivacySpec(epsilon), (epsilon,))
    scale = plan.scales[1]
    assert scale == laplace_scale(2, epsilon) and scale <= MAX_LAPLACE_SCALE + Fraction(1, 2**16)
    draws = sample_discrete_laplace(SeededRandom(12), scale, 200_000)  # no OverflowError
    assert draws.size == 200_000 and abs(draws).max() < 2**62


@pytest.mark.parametrize("make", [
    lambda: PrivacySpec(1e-15),
    lambda: PrivacySpec(1.0, "change", 10**20),
    lambda: PrivacySpec(100.0, "addremove", 10**15),
    lambda: Plan(TreeShape(4, (2, 2)), PrivacySpec(1.0), (1e-300, 1.0)),
    lambda: Plan(TreeShape(4, (2, 2)), PrivacySpec(1.0), (1.0, 1e-300)),
], ids=["epsilon-1e-15", "records-1e20", "addremove-records-1e15", "internal-level-1e-300", "leaf-level-1e-300"])
def test_plans_beyond_the_sampler_are_refused_when_built(make):
    with pytest.raises(ParameterError, match="sampler"):
        make()
