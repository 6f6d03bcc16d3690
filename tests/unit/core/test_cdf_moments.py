"""The mean and the sum of a released CDF (dpgui.core.cdf_moments), checked against independent computations.

* The variance of a functional of the estimate against the estimator's own linear map: every noised node's
  unit noise is pushed through ``estimate_cumulative`` (the release's code), giving the exact weights of the
  functional, so ``Σ_nodes v_l·g²`` is computed without the spectral formula.
* The margin against the exact one-sided 97.5 % point of the functional's noise, by convolution of the
  discrete Laplace pmfs with those weights.
* Coverage over seeded releases, the factor-2 check when ε halves, and a release with no positive total.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.signal import fftconvolve

from dpgui.core.cdf_moments import (
    NO_MEAN, cdf_moments, functional_covariances, functional_variance, group_summaries, margin_factor,
)
from dpgui.core.grouped_cdf import GroupList, plan_grouped, release_grouped
from dpgui.vocabulary import Estimator, Neighbours, OtherGroups
from dpgui.core.mechanism import Release, estimate_cumulative, release, release_from_levels
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.quantiles import Z_TAIL, quantiles
from dpgui.core.tree import TreeShape


def linear_map(plan: Plan, padding_known: bool = True) -> list[tuple[float, np.ndarray]]:
    """(noise variance, ∂Ĉ/∂noise) for every noised node: the estimator applied to unit noise."""
    shape = plan.shape
    variances = plan.level_variances()
    zero: list[np.ndarray | None] = [np.zeros(shape.nodes_at_level(level)) if known else None
                                     for level, known in enumerate(plan.released())]
    out = []
    for level, v in enumerate(variances):
        if not (np.isfinite(v) and v > 0):
            continue
        for node in range(shape.nodes_at_level(level)):
            levels = [None if z is None else z.copy() for z in zero]
            levels[level][node] = 1.0  # type: ignore[index]
            out.append((float(v), estimate_cumulative(plan, levels, padding_known)))
    return out


def brute_variance(plan: Plan, alpha: np.ndarray, padding_known: bool = True) -> float:
    return sum(v * float(alpha @ column[:alpha.size]) ** 2 for v, column in linear_map(plan, padding_known))


PLANS = [
    (TreeShape(6, (2, 4)), Neighbours.CHANGE, Estimator.GLS),  # padding (8 > 6)
    (TreeShape(6, (2, 4), missing_leaf=True), Neighbours.CHANGE, Estimator.GLS),
    (TreeShape(8, (2, 2, 2)), Neighbours.ADDREMOVE, Estimator.GLS),  # no padding, noised root
    (TreeShape(5, (3, 3)), Neighbours.ADDREMOVE, Estimator.GLS),
    (TreeShape(6, (2, 4)), Neighbours.CHANGE, Estimator.COVERING),
    (TreeShape(7, (3, 3), missing_leaf=True), Neighbours.CHANGE, Estimator.COVERING),
    (TreeShape(5, (3, 3)), Neighbours.ADDREMOVE, Estimator.COVERING),
]


def plan_of(shape: TreeShape, neighbours: Neighbours, estimator: Estimator, epsilon: float = 1.0,
            budgets: tuple[float, ...] | None = None) -> Plan:
    privacy = PrivacySpec(epsilon, neighbours)
    return Plan(shape, privacy, budgets or equal_budgets(shape, privacy), estimator)


@pytest.mark.parametrize("shape,neighbours,estimator", PLANS)
def test_variance_of_a_functional_is_the_estimators_own(shape, neighbours, estimator):
    plan = plan_of(shape, neighbours, estimator)
    rng = np.random.default_rng(3)
    for size in (shape.bins, shape.leaves, 3):
        alpha = rng.normal(size=size)
        assert functional_variance(plan, alpha) == pytest.approx(brute_variance(plan, alpha), rel=1e-9, abs=1e-9)
    first, second = rng.normal(size=shape.bins), rng.normal(size=shape.bins)
    covariance = functional_covariances(plan, [first, second])[0, 1]
    expected = (brute_variance(plan, first + second) - brute_variance(plan, first - second)) / 4
    assert covariance == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_variance_of_a_release_made_with_the_padding_unknown():
    """Releases published before GLS used the padding zeros are recomputed with that estimator: so is their
    variance (``padding_known=False``), which differs from the known-zero one on a padded tree."""
    plan = plan_of(TreeShape(6, (2, 4)), Neighbours.ADDREMOVE, Estimator.GLS)
    alpha = np.linspace(1, 2, 6)
    unknown = functional_variance(plan, alpha, padding_known=False)
    assert unknown == pytest.approx(brute_variance(plan, alpha, padding_known=False), rel=1e-9)
    assert unknown > functional_variance(plan, alpha) * 1.001


def test_variance_with_unequal_budgets_and_a_skipped_level():
    shape = TreeShape(12, (2, 2, 4))
    for estimator in Estimator:
        plan = plan_of(shape, Neighbours.ADDREMOVE, estimator, 1.0, (0.1, 0.0, 0.3, 0.6))
        alpha = np.linspace(-2, 3, 12)
        assert functional_variance(plan, alpha) == pytest.approx(brute_variance(plan, alpha), rel=1e-9)


def test_a_prefix_functional_is_the_prefix_variance():
    from dpgui.core.projection import prefix_variances

    plan = plan_of(TreeShape(100, (10, 16)), Neighbours.CHANGE, Estimator.GLS)
    for j in (1, 37, 99, 100):
        alpha = np.zeros(j)
        alpha[-1] = 1.0
        assert functional_variance(plan, alpha) == pytest.approx(float(prefix_variances(plan, [j])[0]), rel=1e-9)


def exact_upper_point(weights: np.ndarray, scales: np.ndarray, grid: float) -> float:
    """An upper bound on the one-sided 97.5 % point of Σ g_n Z_n, Z_n discrete Laplace at scale t_n: each
    g_n Z_n rounded to the grid (error ≤ grid/2 each), convolved exactly, plus the rounding error."""
    total = np.array([1.0])
    offset = 0
    for g, t in zip(weights, scales):
        q = math.exp(-1.0 / t)
        z = np.arange(-(int(60 * t) + 30), int(60 * t) + 31)
        pmf = (1 - q) / (1 + q) * q ** np.abs(z)
        cells = np.round(g * z / grid).astype(np.int64)
        lo = int(cells.min())
        term = np.bincount(cells - lo, pmf)
        total = np.clip(fftconvolve(total, term), 0.0, None)
        offset += lo
    cdf = np.cumsum(total)
    index = int(np.searchsorted(cdf, 0.975 * cdf[-1]))
    return (index + offset) * grid + grid / 2 * len(weights)


@pytest.mark.parametrize("epsilon", [0.3, 2.0, 14.0, 18.0, 21.0])
@pytest.mark.parametrize("estimator", list(Estimator))
def test_margin_bounds_the_exact_upper_point_of_the_sums_noise(epsilon, estimator):
    """margin_factor·σ ≥ the exact one-sided 97.5 % point of the midpoint sum's noise, for large and tiny noise
    (at ε = 14–21 a noise draw is rarely not 0 and the point exceeds Z_TAIL·σ: the lattice slack is what holds)."""
    shape = TreeShape(6, (2, 4))
    plan = plan_of(shape, Neighbours.CHANGE, estimator, epsilon)
    mids = np.arange(6) + 0.5
    alpha = np.append(mids[:-1] - mids[1:], mids[-1])
    columns = linear_map(plan)
    weights = np.array([float(alpha @ c[:6]) for _, c in columns])
    levels = [level for level, v in enumerate(plan.level_variances()) if np.isfinite(v) and v > 0]
    scales = np.concatenate([[float(plan.scales[level])] * shape.nodes_at_level(level) for level in levels])
    keep = np.abs(weights) > 1e-12
    sigma = math.sqrt(functional_variance(plan, alpha))
    upper = exact_upper_point(weights[keep], scales[keep], grid=sigma / 400)
    assert upper <= margin_factor(plan) * sigma, (upper, sigma)
    if epsilon == 21.0 and estimator is Estimator.GLS:
        assert upper > Z_TAIL * sigma  # the case the slack is for


def clamped_mean(values: np.ndarray, lower: float, upper: float) -> float:
    return float(np.clip(values, lower, upper).mean())


def counts_of(values: np.ndarray, lower: float, upper: float, bins: int) -> np.ndarray:
    from dpgui.data.histogram import values_histogram

    return np.asarray(values_histogram(values, lower, upper, bins))


def coverage(neighbours: Neighbours, estimator: Estimator, epsilon: float, releases: int, seed: int) -> dict[str, float]:
    """Fractions of seeded releases whose intervals hold: the true clamped mean, the true midpoint mean (noise
    interval), the true clamped sum, and the mean width of the mean's noise interval."""
    rng = np.random.default_rng(seed)
    values = np.round(rng.gamma(2.0, 15.0, 1000))  # a skewed column, some above the upper bound
    lower, upper, bins = 0.0, 100.0, 20
    counts = counts_of(values, lower, upper, bins)
    mids = np.linspace(lower, upper, bins + 1)[:-1] + 2.5
    truth_mid = float(mids @ counts / counts.sum())
    truth, truth_sum = clamped_mean(values, lower, upper), float(np.clip(values, lower, upper).sum())
    plan = plan_of(TreeShape(bins, (4, 5)), neighbours, estimator, epsilon)
    source = SeededRandom(seed + 1)
    held = {"mean": 0, "noise": 0, "sum": 0}
    width = 0.0
    for _ in range(releases):
        result = cdf_moments(release(counts, plan, source, lower, upper))
        assert result.mean is not None
        held["mean"] += result.mean.low <= truth <= result.mean.high
        held["noise"] += result.mean.noise_low <= truth_mid <= result.mean.noise_high
        held["sum"] += result.sum.low <= truth_sum <= result.sum.high
        width += result.mean.noise_high - result.mean.noise_low
    out = {name: count / releases for name, count in held.items()}
    out["width"] = width / releases
    return out


def threshold(releases: int) -> float:
    return 0.95 - 3 * math.sqrt(0.95 * 0.05 / releases)


@pytest.mark.parametrize("neighbours,estimator", [(Neighbours.CHANGE, Estimator.GLS),
                                                  (Neighbours.ADDREMOVE, Estimator.GLS),
                                                  (Neighbours.ADDREMOVE, Estimator.COVERING)])
def test_intervals_hold_the_true_mean_and_sum(neighbours, estimator):
    releases = 400
    held = coverage(neighbours, estimator, 0.1, releases, seed=11)
    assert held["noise"] >= threshold(releases), held  # the noise interval alone, of the midpoint mean
    assert held["mean"] >= threshold(releases), held
    assert held["sum"] >= threshold(releases), held


def test_interval_widens_by_two_when_epsilon_halves():
    """Laplace noise's standard deviation is ∝ 1/ε: at small ε (lattice slack negligible, count public) the
    mean's noise interval doubles when ε halves."""
    counts = np.array([5, 40, 80, 120, 60, 30, 10, 5] * 4)
    shape = TreeShape(32, (4, 8))
    widths = []
    for epsilon in (0.02, 0.01):
        plan = plan_of(shape, Neighbours.CHANGE, Estimator.GLS, epsilon)
        result = release(counts, plan, SeededRandom(5), 0.0, 320.0, consistency="none")
        sigma = math.sqrt(functional_variance(plan, np.append(-10.0 * np.ones(31), 315.0)))
        widths.append(sigma * margin_factor(plan))
        mean = cdf_moments(result).mean
        assert mean is not None
        n = float(counts.sum())  # N public (change, no missing leaf): the mean's interval is the sum's / N
        assert mean.noise_high - mean.noise_low == pytest.approx(min(2 * widths[-1] / n, 315.0 - 5.0), rel=1e-6)
    assert widths[1] / widths[0] == pytest.approx(2.0, rel=0.01)


def test_no_mean_when_the_released_total_is_not_positive():
    shape = TreeShape(4, (2, 2))
    plan = plan_of(shape, Neighbours.ADDREMOVE, Estimator.GLS)
    levels = [np.array([-3.0]), np.array([-1.0, -2.0]), np.array([0.0, -1.0, -1.0, 0.0])]
    result = release_from_levels(plan, levels, 0.0, 4.0, "l2", secure=False)
    assert result.values_total == 0
    moments = cdf_moments(result)
    assert moments.mean is None and moments.count == 0
    assert moments.sum.value == 0 and moments.sum.low <= 0 <= moments.sum.high
    assert NO_MEAN == "no mean: the released total is not positive"


def test_values_and_binning_of_a_known_release():
    """Exact counts (the true tree's node counts, as if no noise): the sum is Σ midpoint × count, the mean the
    sum over the count, and the binning allowance w/2 (mean) and w/2 per value (sum)."""
    counts = np.array([3, 0, 5, 2])
    plan = plan_of(TreeShape(4, (2, 2)), Neighbours.CHANGE, Estimator.GLS)
    levels = [level.astype(float) for level in plan.shape.level_counts(counts)]  # no noise: the true tree
    result = release_from_levels(plan, levels, 10.0, 50.0, "l2", secure=False)
    assert np.array_equal(np.diff(np.concatenate(([0], result.cumulative))), counts)
    moments = cdf_moments(result)
    assert moments.sum.value == pytest.approx(3 * 15 + 5 * 35 + 2 * 45)
    assert moments.mean is not None and moments.mean.value == pytest.approx(310 / 10)
    assert moments.mean.binning == 5.0 and moments.sum.binning == 50.0
    assert moments.mean.low <= moments.mean.noise_low - 5.0 + 1e-9
    assert 10.0 <= moments.mean.low <= moments.mean.value <= moments.mean.high <= 50.0


def test_grouped_summaries_reuse_the_quantiles_median():
    groups = GroupList(("a", "b"), OtherGroups.DROP)
    grouped = plan_grouped(groups, 16, PrivacySpec(1.0, Neighbours.CHANGE))
    counts = np.array([[0, 2, 10, 20, 30, 20, 10, 2] * 2, [5] * 16])
    result = release_grouped(counts, grouped, SeededRandom(2), 0.0, 160.0)
    summaries = group_summaries(result.labels, result.releases)
    assert [s.label for s in summaries] == ["a", "b"]
    for summary, group in zip(summaries, result.releases):
        assert summary.median == quantiles(group, [0.5])[0]
        assert summary.moments == cdf_moments(group)
        assert summary.moments.mean is not None
        mean = summary.moments.mean
        assert mean.low <= mean.value <= mean.high


def test_a_release_is_what_cdf_moments_reads():
    assert isinstance(release(np.array([1, 2]), plan_of(TreeShape(2, (2,)), Neighbours.CHANGE, Estimator.GLS),
                              SeededRandom(1)), Release)


def test_whole_numbers_on_centred_bins_have_less_binning():
    """Bins centred on whole numbers (lower = −0.5, w = 1): every value is its bin's midpoint, binning adds
    nothing; w = 4 (bins of 4 whole numbers): at most 1.5. Without the statement: w/2."""
    from dpgui.core.quantiles import whole_number_step

    counts = np.array([3, 0, 5, 2, 7, 1, 0, 4])
    plan = plan_of(TreeShape(8, (2, 4)), Neighbours.CHANGE, Estimator.GLS)
    levels = [level.astype(float) for level in plan.shape.level_counts(counts)]
    for lower, upper, expected in ((-0.5, 7.5, 0.0), (-0.5, 31.5, 1.5)):
        assert whole_number_step(lower, upper, 8) == 2 * expected + 1
        result = release_from_levels(plan, levels, lower, upper, "l2", secure=False)
        whole, plain = cdf_moments(result, whole_numbers=True), cdf_moments(result)
        assert whole.per_value == expected and plain.per_value == (upper - lower) / 16
        assert whole.mean is not None and whole.mean.binning == expected
        assert whole.mean.high - whole.mean.low == pytest.approx(whole.mean.noise_high - whole.mean.noise_low + 2 * expected)
        assert whole.sum.binning == expected * counts.sum()
        assert whole.mean.value == plain.mean.value  # type: ignore[union-attr]


@pytest.mark.parametrize("neighbours", [Neighbours.CHANGE, Neighbours.ADDREMOVE])
def test_intervals_hold_with_gaussian_noise(neighbours):
    """Discrete Gaussian noise (δ > 0): the noise interval holds the midpoint mean, the full ones the true mean and
    sum, in ≥ 95 % − 3 SE of 400 seeded releases."""
    rng = np.random.default_rng(21)
    values = np.round(rng.lognormal(3.0, 0.6, 1000))
    lower, upper, bins = 0.0, 100.0, 20
    counts = counts_of(values, lower, upper, bins)
    mids = np.linspace(lower, upper, bins + 1)[:-1] + 2.5
    truth_mid, truth = float(mids @ counts / counts.sum()), clamped_mean(values, lower, upper)
    truth_sum = float(np.clip(values, lower, upper).sum())
    privacy = PrivacySpec(0.1, neighbours, delta=1e-6)
    from dpgui.core.planner import auto_plan

    plan = auto_plan(bins, privacy, noise="gaussian")
    assert plan.noise == "gaussian"
    source = SeededRandom(22)
    held = np.zeros(3)
    releases = 400
    for _ in range(releases):
        result = cdf_moments(release(counts, plan, source, lower, upper))
        assert result.mean is not None
        held += (result.mean.noise_low <= truth_mid <= result.mean.noise_high,
                 result.mean.low <= truth <= result.mean.high, result.sum.low <= truth_sum <= result.sum.high)
    assert np.all(held / releases >= threshold(releases)), held / releases
