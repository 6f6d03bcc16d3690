"""Accuracy first: the smallest ε whose projected 95 % margin meets the user's target."""

import math

import numpy as np
import pytest

from dpgui.core.plan import Plan, PrivacySpec, split_budget
from dpgui.core.planner import margin95, plan_for_accuracy
from dpgui.core.projection import prefix_variances
from dpgui.errors import ParameterError


def _independent_margin(plan: Plan, where: str) -> float:
    v = prefix_variances(plan)
    if plan.privacy.root_public:
        v = v[:-1]  # C_K = N is public under the change model: no error
    return 2.2 * math.sqrt(v.max() if where == "every" else v.mean()) + 1.0  # half-width of the 95 % band


@pytest.mark.slow
@pytest.mark.parametrize("bins", [100, 997, 4096])
@pytest.mark.parametrize("where", ["every", "average"])
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_smallest_epsilon_meets_target_and_one_step_less_does_not(bins, where, neighbours):
    target = 50.0
    plan = plan_for_accuracy(bins, PrivacySpec(1.0, neighbours), target, where)
    eps = plan.privacy.epsilon
    assert plan.epsilon_spent() <= eps * (1 + 1e-9)
    assert _independent_margin(plan, where) <= target
    assert margin95(plan, where) == pytest.approx(_independent_margin(plan, where), rel=1e-9)
    step = 10.0 ** (math.floor(math.log10(eps)) - 2)
    smaller = PrivacySpec(eps - step, neighbours)
    worse = Plan(plan.shape, smaller, split_budget(eps - step, np.asarray(plan.level_epsilons)), plan.estimator)
    assert _independent_margin(worse, where) > target


@pytest.mark.slow
def test_halving_the_margin_roughly_doubles_epsilon():
    a = plan_for_accuracy(1000, PrivacySpec(1.0), 100.0).privacy.epsilon
    b = plan_for_accuracy(1000, PrivacySpec(1.0), 50.0).privacy.epsilon
    assert b / a == pytest.approx(2.0, rel=0.02)


def test_records_per_person_scale_epsilon():
    a = plan_for_accuracy(500, PrivacySpec(1.0), 40.0).privacy.epsilon
    b = plan_for_accuracy(500, PrivacySpec(1.0, records_per_person=3), 40.0).privacy.epsilon
    assert b / a == pytest.approx(3.0, rel=0.02)


@pytest.mark.parametrize("margin", [0, -1, float("nan"), "abc", 1e-6])
def test_impossible_or_bad_targets_are_refused(margin):
    with pytest.raises(ParameterError):
        plan_for_accuracy(1000, PrivacySpec(1.0), margin)


@pytest.mark.parametrize("where", ["every", "average"])
def test_small_target_is_met_and_one_record_is_refused(where):
    """The margin has a fixed 1-record part (whole-number noise): a target just above it is still found
    (the first guess solves for the part that scales as 1/ε), one at or below it is refused."""
    plan = plan_for_accuracy(100, PrivacySpec(1.0), 2.5, where)
    assert _independent_margin(plan, where) <= 2.5
    with pytest.raises(ParameterError, match="below the 1 record"):
        plan_for_accuracy(100, PrivacySpec(1.0), 1.0, where)
