"""What users ask of a released CDF: quantiles and range counts, with intervals (post-processing).

The released cumulative counts ``C_j`` sit at bin upper edges; between edges the CDF is taken
as linear (values spread evenly within a bin): that gives the quantile *estimate* shown. Its
interval is built differently (see :func:`quantiles` and docs/engine.md "Quantile intervals"):
it covers the true quantile of the data, wherever in its bin it lies, with probability ≥ 95 %.
Range counts and the CDF band cover the true count with probability ≥ 95 % each: the unbiased
estimate before consistency ± :func:`noise_margin` of its exact standard error, widened to hold
the released value (docs/engine.md "Count intervals").

Whole-number columns (:class:`WholeNumbers`: the officer's statement or the file's declared type,
public, never read from the cells) released with bins centred on whole numbers
(:func:`whole_number_step`) get whole-number quantiles: the estimate is the whole number where the
released CDF reaches p when a bin's records are spread evenly over its whole numbers, and the interval
the whole numbers inside the bins that hold the true quantile (which is one of them), so it holds as
often as the bin interval does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from dpgui.core.projection import interval_variance
from dpgui.vocabulary import Name
from dpgui.errors import ParameterError

if TYPE_CHECKING:  # only named in annotations: `dpgui plan` needs noise_margin without the mechanism
    from dpgui.core.mechanism import Release

#: The normal 97.5 % point. Not a valid 95 % factor for this noise (see ``Z_TAIL``); kept for
#: the benchmarks and tests that compare with intervals at the normal factor.
Z95 = 1.959963984540054

#: One-sided 97.5 % point of the standardised noise of one estimated cumulative count, for the
#: quantile intervals. The noise is discrete Laplace summed over tree nodes; a single Laplace has
#: its one-sided 97.5 % point at ln(20)/√2 ≈ 2.118 standard deviations (a normal 1.96 undercovers),
#: sums of several are closer to normal. 2.2 standard deviations plus ``LATTICE_SLACK`` counts
#: bound the exact one-sided 97.5 % point of every sum of 1–24 i.i.d. discrete Laplace terms at
#: scales 0.05–13 (checked by exact convolution in tests/unit/core/test_core_quantile_coverage.py; the
#: ``LATTICE_SLACK`` covers the integer lattice at very small scales).
Z_TAIL = 2.2
LATTICE_SLACK = 1.0


def noise_margin(std_error: np.ndarray | float) -> np.ndarray:
    """One-sided 97.5 % bound on the noise of an unbiased count with this standard error, in
    records: ``Z_TAIL·σ + LATTICE_SLACK`` (0 where σ = 0: the count is exact).

    The noise is symmetric, so ``estimate ± noise_margin(σ)`` holds the true count with
    probability ≥ 95 % (two tails of ≤ 2.5 % each). The one margin of the product: quantile
    intervals, the CDF band, range counts and the projected margins of a plan. O(size).
    """
    se = np.asarray(std_error, dtype=float)
    return np.where(se > 0, Z_TAIL * se + LATTICE_SLACK, 0.0)


class WholeNumbers(Name):
    """Why a column is known to hold whole numbers: public information, never the data's cells. A
    ``str`` equal to its value, as manifests, ledgers and project files hold it."""

    STATED = "stated"  # the officer stated it (a checkbox in the data step, --whole-numbers)
    TYPE = "type"  # the file's declared type (Parquet/Stata integer, a published schema's "integer")

    @property
    def description(self) -> str:
        """The reason in the reports' words."""
        return ("the officer stated that the column holds whole numbers" if self is WholeNumbers.STATED
                else "the file's declared type stores the column as whole numbers")


def whole_number_step(lower: float, upper: float, bins: int) -> int | None:
    """The number of whole numbers per bin when the bins on [lower, upper) are centred on whole numbers
    (lower = a − 0.5 for a whole a, and a whole width w ≥ 1: bin j holds a + j·w … a + j·w + w − 1), else
    None. The bins :func:`dpgui.data.public_bounds.whole_number_bins` offers. O(1)."""
    width = (upper - lower) / bins
    step = round(width)
    start = lower + 0.5
    if step < 1 or abs(width - step) > 1e-9 * max(1.0, abs(width)) or abs(start - round(start)) > 1e-9 * max(
            1.0, abs(start)):
        return None
    return int(step)


@dataclass(frozen=True)
class Quantile:
    """One quantile of a release, in the column's units.

    ``value``: the estimate, the point where the released CDF reaches p when the records are
    taken to be spread evenly inside the bin ``[bin_low, bin_high)`` (linear interpolation).
    ``low``/``high``: a closed interval, on bin edges, that holds the true quantile of the data
    with probability ≥ 95 % (see :func:`quantiles` for the definition and the argument).
    With ``whole`` (a whole-number column on bins centred on whole numbers) ``value``, ``low`` and
    ``high`` are whole numbers: the estimate with the bin's records spread evenly over its whole
    numbers, and the whole numbers of the bins the true quantile lies in.
    """

    probability: float
    value: float  # estimate: linear interpolation inside [bin_low, bin_high) (whole: a whole number)
    low: float  # ≥ 95 % interval for the true quantile, column units (bin edges; whole: whole numbers)
    high: float
    bin_low: float = float("nan")  # the bin the estimate was interpolated in
    bin_high: float = float("nan")
    whole: bool = False


def _crossing(release: Release, cumulative: np.ndarray, target: float) -> tuple[float, int]:
    """(x, j): smallest x with C(x) ≥ target, C linear within bins, and its bin j; (upper, K−1)
    if never reached."""
    k = cumulative.size
    width = (release.upper - release.lower) / k
    j = int(np.searchsorted(cumulative, target, side="left"))
    if j >= k:
        return release.upper, k - 1
    previous = cumulative[j - 1] if j > 0 else 0.0
    step = cumulative[j] - previous
    fraction = 1.0 if step <= 0 else float(np.clip((target - previous) / step, 0.0, 1.0))
    return release.lower + (j + fraction) * width, j


def _count_interval(estimate: np.ndarray, std_error: np.ndarray, released: np.ndarray,
                    release: Release) -> tuple[np.ndarray, np.ndarray]:
    """``[min(Ĉ − m, C), max(Ĉ + m, C)]`` with ``m = noise_margin(σ)``, clipped to what a count can
    be: ≥ 0, and ≤ N when N is public (under add/remove the released N is noisy and is no bound)."""
    m = noise_margin(std_error)
    low = np.maximum(np.minimum(estimate - m, released), 0.0)
    high = np.maximum(estimate + m, released)
    if release.plan.privacy.root_public:
        high = np.minimum(high, float(release.total))
        low = np.minimum(low, high)
    return low, high


def cumulative_interval95(release: Release, rows: slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise interval of each cumulative count C_1..C_K (records in bins 0..j−1) that holds the
    TRUE count with probability ≥ 95 %, each j separately (the CDF band); ``rows``: of those counts only
    (each interval depends on its own count alone, so a block is the same numbers as the whole).

    Centred on the unbiased estimate before consistency (``release.estimate``), whose noise is
    symmetric with the exact standard error ``release.std_error``: ``Ĉ_j ± noise_margin(σ_j)``
    misses with probability ≤ 2.5 % per side. It is then widened to hold the released
    (consistent) count and clipped to [0, N] when N is public; neither step can drop the truth,
    so the ≥ 95 % holds as stated. O(K).
    """
    return _count_interval(np.asarray(release.estimate[rows], dtype=float), np.asarray(release.std_error[rows], dtype=float),
                           np.asarray(release.cumulative[rows], dtype=float), release)


def missing_interval95(release: Release) -> tuple[float, float] | None:
    """Interval that holds the TRUE number of missing values with probability ≥ 95 % (releases with
    the missing values' leaf; None when they were dropped).

    The missing count is N − C_K with N exact, so its unbiased estimate is ``N − Ĉ_K`` with the
    standard error of ``Ĉ_K``: the same construction as :func:`cumulative_interval95` (centred on
    the unbiased estimate, ± :func:`noise_margin`, widened to hold the released count, clipped to
    [0, N]). O(1).
    """
    if release.missing is None:
        return None
    n = float(release.total)
    low, high = _count_interval(np.asarray([n - float(release.estimate[-1])]),
                                np.asarray([float(release.std_error[-1])]), np.asarray([float(release.missing)]), release)
    return float(low[0]), float(high[0])


def quantile_bin_interval(release: Release, p: float) -> tuple[int, int]:
    """Bins ``(first, last)`` between which the true p-quantile lies with probability ≥ 95 %.

    Definitions (true, confidential values): ``C_j`` = records in bins 0..j−1 after clamping
    (``C_0 = 0``, ``C_K`` = the counted values; missing values are not among them). The true p-quantile ``Q`` is the
    smallest data value x with #{values ≤ x} ≥ p·C_K (for p = 0: the smallest value, ≥ 1 record).
    Its bin is ``b = min{j : D_{j+1} ≥ 0}`` with ``D_j = C_j − p·C_K`` (``C_j − 1`` for p = 0):
    every record in a bin below b is < Q, every record ≤ Q is in a bin ≤ b.

    From the unbiased estimate ``Ĉ`` (``release.estimate``, before consistency, so the
    consistency step cannot move the band) and its exact standard errors ``σ``: the noise of
    ``D̂_j`` has standard deviation ≤ ``σ_j + p·σ_K`` (``σ_K = 0`` only when ``C_K`` is exact); the margin is
    ``m_j = Z_TAIL·(σ_j + p·σ_K) + LATTICE_SLACK`` (0 where the value is exact), a one-sided
    97.5 % bound. ``first`` = first j whose upper band ``D̂_{j+1} + m_{j+1}`` reaches 0; ``last``
    = first j with ``min_{i ≥ j+1} (D̂_i − m_i) ≥ 0`` (the lower band made nondecreasing from the
    right, which only widens it). If ``D̂_{b+1} + m_{b+1} ≥ D_{b+1}`` then ``first ≤ b``; if
    ``D̂_b − m_b ≤ D_b`` then ``last ≥ b``. Two one-sided events of ≤ 2.5 % each at the two edges
    that bracket the quantile, so ``P(first ≤ b ≤ last) ≥ 95 %`` by the union bound. O(K).
    """
    estimate, se = _with_zero_prefix(release)
    return _bin_interval(estimate, se, float(p))


def _with_zero_prefix(release: Release) -> tuple[np.ndarray, np.ndarray]:
    """(Ĉ_0..Ĉ_K, σ_0..σ_K) with Ĉ_0 = σ_0 = 0: the arrays :func:`_bin_interval` reads."""
    return (np.concatenate(([0.0], np.asarray(release.estimate, dtype=float))),
            np.concatenate(([0.0], np.asarray(release.std_error, dtype=float))))


def _bin_interval(estimate: np.ndarray, se: np.ndarray, p: float) -> tuple[int, int]:
    """:func:`quantile_bin_interval` from :func:`_with_zero_prefix`'s arrays (shared by many p). O(K)."""
    k = estimate.size - 1
    if p > 0:
        d = estimate - p * estimate[-1]
        spread = se + p * se[-1]
    else:
        d = estimate - 1.0
        spread = se
    margin = noise_margin(spread)
    reach = (d + margin)[1:] >= 0
    first = int(reach.argmax())  # 0 if never reached (argmax of all False): the band failed; widest answer
    # last = first j with min_{i ≥ j+1} (D̂_i − m_i) ≥ 0, i.e. the last i whose lower band is below 0 (or not
    # a number), but at most K − 1; 0 when there is none.
    below = ~((d - margin) >= 0)
    from_right = int(below[::-1].argmax())
    last = 0 if not below[k - from_right] else min(k - from_right, k - 1)
    return min(first, last), max(first, last)


def quantiles(release: Release, probabilities: Sequence[float], whole_numbers: bool = False) -> list[Quantile]:
    """Quantiles of the released CDF: the estimate and an interval for the true quantile.

    ``value`` is the estimate (linear interpolation inside the bin where the consistent released
    CDF reaches p). ``[low, high]`` runs from the lower edge of bin ``first`` to the upper edge of
    bin ``last`` of :func:`quantile_bin_interval`, widened if needed to hold the estimate's bin;
    it holds the true p-quantile of the data (the smallest value with at least p·N records at or
    below it; out-of-bounds values count as the nearest bound) with probability ≥ 95 % over the
    noise, for each p separately. O(K) per probability.

    ``whole_numbers`` (public: the column holds whole numbers) with bins centred on whole numbers
    (:func:`whole_number_step` w): the bin j that the estimate fell in holds the whole numbers
    x_0 = lower + 0.5 + j·w … x_0 + w − 1; with the bin's records spread evenly over them, the CDF
    reaches p at the whole number x_0 + ⌈f·w⌉ − 1, f the fraction of the bin's records needed (for
    w = 1: the bin's own whole number). The true quantile is a whole number in bins first..last, i.e.
    in [low + 0.5, high − 0.5]: that interval holds it whenever the bin interval does. Otherwise the
    estimate is as without ``whole_numbers``.
    """
    probs = np.asarray(probabilities, dtype=float)
    if probs.size == 0 or np.any(~np.isfinite(probs)) or np.any((probs < 0) | (probs > 1)):
        raise ParameterError(f"probabilities must be in [0, 1], got {list(probabilities)}", "use e.g. 0.25, 0.5, 0.75")
    c = np.asarray(release.cumulative, dtype=float)
    lows, highs = release.bin_edges()
    estimate, se = _with_zero_prefix(release)
    out = []
    step = whole_number_step(release.lower, release.upper, release.plan.shape.bins) if whole_numbers else None
    for p in probs:
        value, j = _crossing(release, c, p * release.values_total)  # missing values are not among them
        first, last = _bin_interval(estimate, se, float(p))
        first, last = min(first, j), max(last, j)
        low, high = float(lows[first]), float(highs[last])
        if step is not None:
            start = round(float(lows[j]) + 0.5)  # the bin's first whole number
            within = math.ceil(round((value - float(lows[j])) * 1e9) / 1e9) - 1  # ⌈f·w⌉ − 1, f·w = value − edge
            value = float(start + min(max(within, 0), step - 1))
            low, high = float(round(low + 0.5)), float(round(high - 0.5))
        out.append(Quantile(float(p), value, low, high, float(lows[j]), float(highs[j]), step is not None))
    return out


@dataclass(frozen=True)
class RangeCount:
    """Records in ``[start, stop)``: the released count and an interval for the true count."""

    start: float  # bin edge actually used, column units
    stop: float
    count: float  # difference of the released (consistent) cumulative counts
    std_error: float  # of the unbiased difference Ĉ_stop − Ĉ_start (before consistency)
    low: float  # holds the true count with probability ≥ 95 %
    high: float


def range_count(release: Release, start: float, stop: float) -> RangeCount:
    """How many records lie in [start, stop), snapped to the nearest bin edges.

    ``count`` is the difference of the released cumulative counts; ``[low, high]`` holds the true
    count with probability ≥ 95 %: the unbiased difference ``Ĉ_b − Ĉ_a`` ± ``noise_margin`` of its
    exact standard error (covariance included), widened to hold ``count`` and clipped to [0, N]
    (N public) or [0, ∞) (add/remove), as in :func:`cumulative_interval95`. O(h) with the covering
    sum, O(n_1 + … + n_h) with GLS.
    """
    if not (np.isfinite(start) and np.isfinite(stop)) or start >= stop:
        raise ParameterError(f"range [{start}, {stop}) is empty or not finite", "give start < stop")
    k = release.plan.shape.bins
    width = (release.upper - release.lower) / k
    a = int(np.clip(round((start - release.lower) / width), 0, k))
    b = int(np.clip(round((stop - release.lower) / width), 0, k))
    if a == b:
        b = min(k, a + 1) if a < k else b
        a = b - 1
    def prefix(values: np.ndarray, j: int) -> float:  # C_j with C_0 = 0, without copying the K values
        return float(values[j - 1]) if j > 0 else 0.0

    se = float(np.sqrt(max(0.0, interval_variance(release.plan, a, b, release.padding_known))))
    count = prefix(release.cumulative, b) - prefix(release.cumulative, a)
    unbiased = prefix(release.estimate, b) - prefix(release.estimate, a)
    low, high = _count_interval(np.array([unbiased]), np.array([se]), np.array([count]), release)
    return RangeCount(release.lower + a * width, release.lower + b * width, count, se, float(low[0]), float(high[0]))
