"""quantile_bin_interval (and so quantiles) gives the bins of its definition, computed as it was before
the arrays were shared between probabilities (the reference below, commit 9f0437a)."""

from __future__ import annotations

import numpy as np
import pytest

from dpgui.core.mechanism import Release, release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.quantiles import noise_margin, quantile_bin_interval, quantiles
from dpgui.core.synthetic import synthetic_counts

pytestmark = pytest.mark.slow


def reference_bin_interval(result: Release, p: float) -> tuple[int, int]:
    k = result.plan.shape.bins
    estimate = np.concatenate(([0.0], np.asarray(result.estimate, dtype=float)))
    se = np.concatenate(([0.0], np.asarray(result.std_error, dtype=float)))
    if p > 0:
        d = estimate - p * estimate[-1]
        spread = se + p * se[-1]
    else:
        d = estimate - 1.0
        spread = se
    margin = noise_margin(spread)
    upper = d + margin
    lower_from_right = np.minimum.accumulate((d - margin)[::-1])[::-1]
    reach = np.flatnonzero(upper[1:] >= 0)
    first = int(reach[0]) if reach.size else 0
    sure = np.flatnonzero(lower_from_right[1:] >= 0)
    last = int(sure[0]) if sure.size else k - 1
    return min(first, last), max(first, last)


@pytest.mark.parametrize(("bins", "neighbours", "epsilon", "records", "kind"), [
    (64, "change", 1.0, 5000, "normal"), (1000, "addremove", 0.05, 300, "uniform"), (4096, "change", 0.01, 20, "normal"),
    (200, "addremove", 2.0, 0, "uniform"), (5000, "change", 0.2, 100_000, "normal"),
])
def test_bin_intervals_equal_the_reference(bins: int, neighbours: str, epsilon: float, records: int, kind: str) -> None:
    plan = auto_plan(bins, PrivacySpec(epsilon, neighbours))
    probabilities = [0.0, 1e-6, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0]
    for seed in range(8):
        result = release(synthetic_counts(kind, records, bins, seed), plan, SeededRandom(seed), 0.0, 1.0)
        expected = [reference_bin_interval(result, p) for p in probabilities]
        assert [quantile_bin_interval(result, p) for p in probabilities] == expected
        lows, highs = result.bin_edges()
        for q, (first, last) in zip(quantiles(result, probabilities), expected):
            assert q.low <= lows[first] and q.high >= highs[last]  # widened only to hold the estimate's bin
