"""Quantile intervals hold the TRUE quantile of the data in ≥ 95 % of releases.

True quantile (the definition in dpgui.core.quantiles.quantile_bin_interval): the smallest data
value x with #{values ≤ x} ≥ p·N, with values outside the public bounds moved to the nearest
bound. Data shapes like the real ones of the issue: log-normal wages (heavy tail, some above the
upper bound), whole-number exam scores 0–100 (ties, the top score on the upper bound), flight
delays (a spike at zero, negative values, a long tail), and the bundled real flights sample.
Noise: the exact discrete Laplace sampler with a seeded source (test noise). Tolerance: with R
releases per cell the coverage must be ≥ 0.95 − 2·sqrt(0.95·0.05/R).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgui.core.mechanism import release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.quantiles import quantiles
from projection_helpers import upper_point

PROBABILITIES = (0.1, 0.25, 0.5, 0.75, 0.9)
N_RECORDS = 2000
RELEASES = 200  # per cell; × 5 probabilities


def wages(rng: np.random.Generator) -> np.ndarray:
    return np.exp(rng.normal(10.4, 0.7, N_RECORDS))  # dollars a year; a few above 150,000


def exam_scores(rng: np.random.Generator) -> np.ndarray:
    return np.clip(np.round(rng.normal(68, 15, N_RECORDS)), 0, 100)  # ties; 100 sits on the bound


def flight_delays(rng: np.random.Generator) -> np.ndarray:
    kind = rng.choice(3, N_RECORDS, p=[0.35, 0.3, 0.35])
    early = -np.round(rng.exponential(5, N_RECORDS))
    late = np.round(rng.exponential(45, N_RECORDS))
    return np.where(kind == 0, 0.0, np.where(kind == 1, early, late))  # a spike at zero


#: name → (generator, lower, upper): bounds as a user would pick them from public knowledge.
SHAPES = {
    "wages": (wages, 0.0, 150_000.0),
    "exam": (exam_scores, 0.0, 100.0),
    "delays": (flight_delays, -60.0, 300.0),
}


def true_quantile(values: np.ndarray, p: float, lower: float, upper: float) -> float:
    """Smallest value x with #{values ≤ x} ≥ p·N (values clamped to the bounds; p = 0: the minimum)."""
    v = np.sort(np.clip(values, lower, upper))
    rank = max(1, math.ceil(p * v.size - 1e-9))  # #{≤ v[rank−1]} ≥ rank ≥ p·N, and rank is the least such
    return float(v[rank - 1])


def counts_of(values: np.ndarray, lower: float, upper: float, bins: int) -> np.ndarray:
    """The histogram rule of dpgui.data.histogram: half-open bins, out-of-range values clamped."""
    from dpgui.data.histogram import values_histogram

    return np.asarray(values_histogram(values, lower, upper, bins))


def coverage(shape: str, epsilon: float, bins: int, releases: int, seed: int, neighbours: str = "change",
             estimator: str = "gls", bounds: tuple[float, float] | None = None) -> tuple[int, int, float]:
    """(covered, trials, mean width) of the quantile intervals over ``releases`` releases of one dataset."""
    make, lower, upper = SHAPES[shape]
    if bounds is not None:
        lower, upper = bounds
    values = make(np.random.default_rng(seed))
    counts = counts_of(values, lower, upper, bins)
    truth = [true_quantile(values, p, lower, upper) for p in PROBABILITIES]
    plan = auto_plan(bins, PrivacySpec(epsilon, neighbours), estimator=estimator)
    source = SeededRandom(seed + 1)
    covered = trials = 0
    width = 0.0
    for _ in range(releases):
        result = release(counts, plan, source, lower, upper, "l2")
        for q, t in zip(quantiles(result, PROBABILITIES), truth):
            covered += q.low <= t <= q.high
            trials += 1
            width += q.high - q.low
    return covered, trials, width / trials


def threshold(releases: int) -> float:
    return 0.95 - 2 * math.sqrt(0.95 * 0.05 / releases)


CELLS = [(shape, eps, k) for shape in SHAPES for eps in (0.1, 1.0) for k in (16, 100, 1024)]


@pytest.mark.slow
@pytest.mark.parametrize("shape,epsilon,bins", CELLS)
def test_interval_holds_the_true_quantile(shape, epsilon, bins):
    covered, trials, _ = coverage(shape, epsilon, bins, RELEASES, seed=1000 + bins)
    # per cell the 5 probabilities share a release; judge against the number of releases (stricter
    # than the pooled count would be)
    assert covered / trials >= threshold(RELEASES), f"{shape} ε={epsilon} K={bins}: {covered}/{trials}"


@pytest.mark.slow
@pytest.mark.parametrize("neighbours,estimator", [("addremove", "gls"), ("change", "covering"), ("addremove", "covering")])
def test_interval_holds_under_other_models(neighbours, estimator):
    covered, trials, _ = coverage("exam", 1.0, 100, RELEASES, seed=77, neighbours=neighbours, estimator=estimator)
    assert covered / trials >= threshold(RELEASES), f"{neighbours}/{estimator}: {covered}/{trials}"


def test_interval_holds_with_whole_number_bins():
    """Bins centred on whole numbers (bounds −0.5 … 100.5, one bin per score)."""
    covered, trials, _ = coverage("exam", 1.0, 101, RELEASES, seed=5, bounds=(-0.5, 100.5))
    assert covered / trials >= threshold(RELEASES)


@pytest.mark.slow
def test_interval_holds_on_the_real_flights_sample():
    from dpgui.data.sample import sample_dataset_path
    import pyarrow.parquet as pq

    delays = pq.read_table(sample_dataset_path(), columns=["dep_delay"]).column(0).to_numpy(zero_copy_only=False)
    delays = delays[~np.isnan(delays)][::40]  # ~8,000 real departure delays, minutes
    lower, upper, bins = -100.0, 500.0, 600  # the bounds of the published schema
    counts = counts_of(delays, lower, upper, bins)
    truth = [true_quantile(delays, p, lower, upper) for p in PROBABILITIES]
    for epsilon in (0.1, 1.0):
        plan = auto_plan(bins, PrivacySpec(epsilon))
        source = SeededRandom(3)
        hits = 0
        for _ in range(RELEASES):
            found = quantiles(release(counts, plan, source, lower, upper), PROBABILITIES)
            hits += sum(q.low <= t <= q.high for q, t in zip(found, truth))
        assert hits / (RELEASES * len(PROBABILITIES)) >= threshold(RELEASES), f"ε={epsilon}: {hits}"


def test_estimate_lies_in_its_interval_and_names_its_bin():
    values = exam_scores(np.random.default_rng(9))
    result = release(counts_of(values, 0, 100, 100), auto_plan(100, PrivacySpec(0.1)), SeededRandom(4), 0.0, 100.0)
    for q in quantiles(result, PROBABILITIES):
        assert q.low <= q.bin_low <= q.value <= q.bin_high <= q.high
        assert q.bin_high - q.bin_low == pytest.approx(1.0)


def test_noise_margin_bounds_exact_discrete_laplace_sums():
    """Z_TAIL·sd + LATTICE_SLACK is at least the exact one-sided 97.5 % point of a sum of n
    i.i.d. discrete Laplace terms (exact pmf by convolution), the claim the margin rests on."""
    from dpgui.core.quantiles import LATTICE_SLACK, Z_TAIL

    for scale in (0.1, 0.5, 1.0, 2.0, 5.0, 13.0):
        q = math.exp(-1 / scale)
        support = np.arange(-(int(40 * scale) + 40), int(40 * scale) + 41)
        pmf = (1 - q) / (1 + q) * q ** np.abs(support)
        total = np.array([1.0])
        for n in range(1, 17):
            total = np.convolve(total, pmf)
            exact, sd = upper_point(total)
            assert exact <= Z_TAIL * sd + LATTICE_SLACK, (scale, n, exact, sd)
