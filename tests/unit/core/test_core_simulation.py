"""Monte-Carlo simulation: without consistency it reproduces the exact projection; with ℓ2 it helps."""

from __future__ import annotations

import numpy as np
import pytest

from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.projection import total_sq_error
from dpgui.core.simulation import SimulationResult, simulate


@pytest.mark.slow
def test_simulation_agrees_with_projection_and_consistency_helps():
    counts = np.bincount(np.random.default_rng(3).integers(0, 300, 1000), minlength=300)
    plan = auto_plan(300, PrivacySpec(0.5))
    raw = SimulationResult.summary(simulate(plan, counts, 600, "none", seed=4).counts)
    assert abs(raw["mean_sq_l2"] - total_sq_error(plan)) < 3.5 * raw["se_sq_l2"]
    cons = SimulationResult.summary(simulate(plan, counts, 600, "l2", seed=4).counts)
    assert cons["mean_sq_l2"] < raw["mean_sq_l2"]


def test_simulation_is_reproducible_for_a_seed():
    counts = np.arange(32)
    plan = auto_plan(32, PrivacySpec(1.0))
    a = simulate(plan, counts, 5, "l1", seed=9)
    b = simulate(plan, counts, 5, "l1", seed=9)
    assert np.array_equal(a.counts["l1"], b.counts["l1"])
