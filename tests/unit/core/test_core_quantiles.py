"""Quantiles and range counts from a released CDF agree with the released values and the truth."""

from __future__ import annotations

import numpy as np
import pytest

from dpgui.core.mechanism import release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.projection import interval_variance
from dpgui.core.quantiles import quantiles, range_count
from dpgui.errors import ParameterError


@pytest.fixture(scope="module")
def normal_release():
    rng = np.random.default_rng(7)
    values = rng.normal(50, 10, 200_000)
    counts = np.bincount(np.clip(np.floor(values).astype(int), 0, 99), minlength=100)
    plan = auto_plan(100, PrivacySpec(1.0))
    return values, counts, release(counts, plan, SeededRandom(11), 0.0, 100.0, "l2")


def test_quantiles_match_the_released_cdf_and_the_truth(normal_release):
    values, _, result = normal_release
    probs = [0.1, 0.25, 0.5, 0.75, 0.9]
    for q, p in zip(quantiles(result, probs), probs):
        assert q.low <= q.value <= q.high
        # the released CDF crosses p inside the bin that holds the quantile
        j = int((q.value - 1e-9) // 1.0)
        assert result.cdf[j] >= p - 1e-12 and (j == 0 or result.cdf[j - 1] <= p + 1e-12)
        assert abs(q.value - np.quantile(values, p)) < 0.2  # bins are 1 wide; 200k records


def test_quantile_interval_widens_with_less_budget():
    counts = np.bincount(np.random.default_rng(1).integers(0, 50, 2000), minlength=50)
    narrow = quantiles(release(counts, auto_plan(50, PrivacySpec(4.0)), SeededRandom(2), 0, 50), [0.5])[0]
    wide = quantiles(release(counts, auto_plan(50, PrivacySpec(0.05)), SeededRandom(2), 0, 50), [0.5])[0]
    assert (wide.high - wide.low) > (narrow.high - narrow.low)


def test_range_count_is_the_difference_of_released_cumulative_counts(normal_release):
    _values, counts, result = normal_release
    answer = range_count(result, 40.0, 60.0)
    c = result.cumulative
    assert answer.count == c[59] - c[39]
    assert answer.std_error == pytest.approx(np.sqrt(interval_variance(result.plan, 40, 60)))
    truth = counts[40:60].sum()
    assert abs(answer.count - truth) < 5 * answer.std_error + 1
    assert answer.low < answer.count < answer.high


def test_range_count_snaps_to_bin_edges(normal_release):
    _, _, result = normal_release
    answer = range_count(result, 10.4, 19.6)
    assert (answer.start, answer.stop) == (10.0, 20.0)


@pytest.mark.parametrize("bad", [[], [1.5], [-0.1], [float("nan")]])
def test_bad_probabilities(normal_release, bad):
    with pytest.raises(ParameterError):
        quantiles(normal_release[2], bad)


def test_bad_range(normal_release):
    with pytest.raises(ParameterError):
        range_count(normal_release[2], 5.0, 5.0)
