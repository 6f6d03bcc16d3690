"""The CDF band and range-count intervals hold the TRUE count in ≥ 95 % of cases (every interval the
product shows claims a coverage, and each is checked).

The band (``cumulative_interval95``: window plot, CSV ``ci95_low/high``, PDF) claims, at each bin
edge separately, that the true number of records at or below it lies inside with probability
≥ 95 %; a range count ``[low, high]`` claims the same for the true number of records in the range.
Measured here against the true counts over many releases with seeded test noise (exact discrete
Laplace), for both estimators, with and without consistency, under both neighbour models, at ε from
0.1 to 5 (large ε: few noise units, where the integer lattice matters) and K = 16 and 100.

Tolerances (binomial): with R releases the mean over bins of the per-release coverage has standard
deviation ≤ sqrt(0.95·0.05/R), so it must be ≥ 0.95 − 2·that; each single bin must be ≥ 0.95 −
3.5·that (3.5: room for the min over up to 100 bins, false alarm < 2.5 %). The method before this
change fails both (its 1.96 σ normal band around the consistent count, clipped to the noisy N under
add/remove, held the truth in 80–90 % of bins in several cells).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgui.core.mechanism import add_noise, release_from_levels
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.projection import prefix_variances
from dpgui.core.quantiles import cumulative_interval95, range_count
from projection_helpers import prefix_noise_pmf, upper_point

N_RECORDS = 2000
RELEASES = 300  # per cell
RANGES = 4  # random ranges asked per release


def sd_bound(releases: int) -> float:
    return math.sqrt(0.95 * 0.05 / releases)


def histogram(bins: int, seed: int) -> np.ndarray:
    """A skewed histogram with empty bins at both ends (clipping at 0 and N matters there)."""
    rng = np.random.default_rng(seed)
    values = rng.gamma(2.0, bins / 8, N_RECORDS) + bins / 10
    return np.bincount(np.clip(values.astype(np.int64), 0, bins - 1), minlength=bins)


def measure(epsilon: float, bins: int, estimator: str, neighbours: str, seed: int,
            releases: int = RELEASES) -> dict[str, dict[str, np.ndarray]]:
    """Per consistency method: per-bin hits of the band ('band', shape (K,), counted over releases,
    only bins with noise) and hits of range counts ('range', one per asked range)."""
    counts = histogram(bins, seed)
    truth = np.concatenate(([0], np.cumsum(counts)))
    plan = auto_plan(bins, PrivacySpec(epsilon, neighbours), estimator=estimator)
    true_levels = plan.shape.level_counts(counts)
    std_error = np.sqrt(prefix_variances(plan))[:bins]  # the K value prefixes (not the missing leaf)
    source = SeededRandom(seed + 1)
    pick = np.random.default_rng(seed + 2)
    out = {c: {"band": np.zeros(bins), "range": []} for c in ("l2", "none")}
    for _ in range(releases):
        levels = add_noise(plan, true_levels, source)
        edges = np.sort(pick.choice(bins + 1, size=(RANGES, 2), replace=True), axis=1)
        edges[:, 1] = np.maximum(edges[:, 1], edges[:, 0] + 1)
        edges[:, 0] = np.minimum(edges[:, 0], bins - 1)
        edges[:, 1] = np.minimum(edges[:, 1], bins)
        for consistency, found in out.items():
            result = release_from_levels(plan, levels, 0.0, float(bins), consistency, secure=False,
                                         std_error=std_error)
            low, high = cumulative_interval95(result)
            found["band"] += (low <= truth[1:]) & (truth[1:] <= high)
            for a, b in edges:
                answer = range_count(result, float(a), float(b))
                assert (answer.start, answer.stop) == (a, b)
                if answer.std_error > 0:
                    found["range"].append(answer.low <= truth[b] - truth[a] <= answer.high)
    noised = std_error > 0
    for found in out.values():
        found["band"] = found["band"][noised] / releases
        found["range"] = np.asarray(found["range"], dtype=float)
    return out


CELLS = [(eps, k, est, nb) for eps, k in ((0.1, 16), (0.1, 100), (1.0, 100), (5.0, 16), (5.0, 100))
         for est in ("gls", "covering") for nb in ("change", "addremove")]


@pytest.mark.slow
@pytest.mark.parametrize("epsilon,bins,estimator,neighbours", CELLS)
def test_band_and_range_counts_hold_the_true_count(epsilon, bins, estimator, neighbours):
    found = measure(epsilon, bins, estimator, neighbours, seed=bins + int(10 * epsilon))
    sd = sd_bound(RELEASES)
    failures = []
    for consistency, hits in found.items():
        where = f"consistency={consistency}"
        band, ranges = hits["band"], hits["range"]
        if band.mean() < 0.95 - 2 * sd:
            failures.append(f"{where}: band holds the true count in {band.mean():.1%} of bin edges")
        if band.min() < 0.95 - 3.5 * sd:
            failures.append(f"{where}: worst bin edge {band.argmin()} covered in {band.min():.1%}")
        # ranges asked in one release share its noise: judge against the number of releases
        if ranges.mean() < 0.95 - 2 * sd:
            failures.append(f"{where}: range counts cover {ranges.mean():.1%}")
    assert not failures, f"ε={epsilon} K={bins} {estimator} {neighbours}: " + "; ".join(failures)


def test_band_and_range_hold_the_released_value_and_possible_counts():
    """The band contains what is shown (the released count) where that is a possible count, and
    never leaves [0, N] when N is public; a range interval contains its count."""
    bins = 64
    counts = histogram(bins, 3)
    for neighbours in ("change", "addremove"):
        plan = auto_plan(bins, PrivacySpec(0.5, neighbours))
        levels = add_noise(plan, plan.shape.level_counts(counts), SeededRandom(8))
        result = release_from_levels(plan, levels, 0.0, float(bins), "l2", secure=False)
        low, high = cumulative_interval95(result)
        c = result.cumulative
        assert np.all(low <= c) and np.all(c <= high) and np.all(low >= 0)
        for rows in (slice(0, 7), slice(7, 64), slice(63, 64)):  # a block (the CSV's, per thread) is its slice
            block_low, block_high = cumulative_interval95(result, rows)
            np.testing.assert_array_equal(block_low, low[rows])
            np.testing.assert_array_equal(block_high, high[rows])
        if neighbours == "change":
            # N (all rows) is exact, but C_K is not: the missing values' leaf shares the root with it
            assert np.all(high <= result.total) and result.total == N_RECORDS and low[-1] < high[-1]
        for a, b in ((0, 5), (10, 40), (30, 64)):
            answer = range_count(result, float(a), float(b))
            assert 0 <= answer.low <= answer.count <= answer.high


def test_margin_bounds_the_exact_noise_of_covering_prefixes():
    """For the covering sum the noise of Ĉ_j is a sum of discrete Laplace terms at the levels'
    (different) scales: its exact one-sided 97.5 % point (pmf by convolution) is ≤ noise_margin(σ_j)
    for every prefix of the plans measured above."""
    from dpgui.core.quantiles import noise_margin

    for epsilon, bins, neighbours in ((0.1, 16, "addremove"), (1.0, 100, "addremove"), (5.0, 16, "change"),
                                      (5.0, 100, "addremove")):
        plan = auto_plan(bins, PrivacySpec(epsilon, neighbours), estimator="covering")
        digits = plan.shape.covering_digits(np.arange(1, bins + 1), plan.released())
        pmfs = {}
        for level, scale in enumerate(plan.scales):
            if scale is None:
                continue
            q = math.exp(-1 / float(scale))
            reach = int(60 * float(scale)) + 30
            support = np.arange(-reach, reach + 1)
            pmfs[level] = (1 - q) / (1 + q) * q ** np.abs(support)
        se = np.sqrt(prefix_variances(plan))
        margins = noise_margin(se)
        for j in range(bins - (1 if plan.privacy.root_public else 0)):
            exact, sd = upper_point(prefix_noise_pmf(pmfs, digits[j]))
            assert sd == pytest.approx(se[j], rel=1e-6)
            assert exact <= margins[j], (epsilon, bins, neighbours, j, exact, se[j])
