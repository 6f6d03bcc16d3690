"""The synthetic columns that `dpgui simulate --synthetic` and the benchmarks draw (dpgui.core.synthetic)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgui.core.synthetic import SYNTHETIC_KINDS, synthetic_counts


@pytest.mark.parametrize("kind", SYNTHETIC_KINDS)
def test_every_kind_counts_every_record_once_and_is_fixed_by_its_seed(kind):
    counts = synthetic_counts(kind, 5000, 64, seed=3)
    assert counts.shape == (64,) and counts.dtype == np.int64 and counts.sum() == 5000 and counts.min() >= 0
    np.testing.assert_array_equal(counts, synthetic_counts(kind, 5000, 64, seed=3))
    assert not np.array_equal(counts, synthetic_counts(kind, 5000, 64, seed=4))


def test_lognormal_is_heavy_tailed_like_wages():
    """Median bins/20, log-sd 1: P(value > bins/2) = P(Z > ln 10) = 1.07 %; the bounds are checked within
    five standard errors of a binomial proportion (and the median within 2 % of the range)."""
    n, bins = 200_000, 1000
    counts = synthetic_counts("lognormal", n, bins, seed=11)
    cumulative = np.cumsum(counts)
    median_bin = int(np.searchsorted(cumulative, n / 2))
    assert abs(median_bin - bins / 20) <= 0.02 * bins
    top_half = counts[bins // 2:].sum() / n
    expected = 0.5 * math.erfc(math.log(10) / math.sqrt(2))
    assert abs(top_half - expected) <= 5 * math.sqrt(expected * (1 - expected) / n)
    assert 0.0105 < expected < 0.0108


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown synthetic kind 'pareto'"):
        synthetic_counts("pareto", 10, 4, seed=0)
