"""What the results step shows of a release, computed once off the GUI thread (Qt-free).

At K = 2²⁰ bins the quantile intervals, the CDF band and the bin edges take about half a second
of O(K) passes; the window computes them here, on the release worker, and hands the finished
:class:`ResultFigures` to the GUI thread, which only draws (a bounded number of points).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpgui.core.cdf_moments import CdfMoments, cdf_moments

from dpgui.core.mechanism import Release
from dpgui.core.quantiles import Quantile, cumulative_interval95, quantiles
from dpgui.core.thinning import band_envelope

#: Deciles with the quartiles slotted in, in increasing order; the median is 0.5 (the quantile table).
PROBABILITIES: tuple[float, ...] = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9)
MAX_BARS = 200  # histogram bars drawn at most; more bins are summed into groups


@dataclass(frozen=True, eq=False)  # compared by identity: it holds numpy arrays
class ResultFigures:
    """The results step's numbers for one release, in records (column units for x).

    ``edges``: the K+1 bin edges; ``cumulative``: C_0 = 0, C_1..C_K (the released CDF);
    ``quantiles``: one row per :data:`PROBABILITIES`; ``band_x/band_low/band_high``: the 95 % CDF
    band (:func:`~dpgui.core.quantiles.cumulative_interval95` with 0 at the lower bound) thinned by
    :func:`~dpgui.core.thinning.band_envelope` — clipping it to a value ≤ N or scaling it by a
    positive factor commutes with that thinning, so the fraction view is derived from it;
    ``hist_starts/hist_stops/hist_counts``: at most :data:`MAX_BARS` groups of ``hist_group`` bins;
    ``moments``: the mean and the sum (O(K), about a second at 2²² bins: computed here, on the worker).
    """

    release: Release
    edges: np.ndarray = field(repr=False)
    cumulative: np.ndarray = field(repr=False)
    quantiles: tuple[Quantile, ...]
    band_x: np.ndarray = field(repr=False)
    band_low: np.ndarray = field(repr=False)
    band_high: np.ndarray = field(repr=False)
    hist_group: int
    hist_starts: np.ndarray = field(repr=False)
    hist_stops: np.ndarray = field(repr=False)
    hist_counts: np.ndarray = field(repr=False)
    #: the mean and the sum with their 95 % intervals (:func:`~dpgui.core.cdf_moments.cdf_moments`)
    moments: CdfMoments | None = None

    def quantile(self, probability: float) -> Quantile:
        """The row of ``probability`` (one of :data:`PROBABILITIES`)."""
        return next(q for q in self.quantiles if q.probability == probability)


def result_figures(release: Release, whole_numbers: bool = False) -> ResultFigures:
    """The results step's figures of ``release`` (public values only); ``whole_numbers``: the column is
    known (publicly) to hold whole numbers, so quantiles on bins centred on them are whole numbers
    (:func:`~dpgui.core.quantiles.quantiles`). O(K·len(PROBABILITIES)); safe on any thread (reads the
    release only)."""
    k = release.plan.shape.bins
    _, high_edges = release.bin_edges()
    edges = np.concatenate(([release.lower], high_edges))
    c = np.concatenate(([0.0], np.asarray(release.cumulative, dtype=float)))
    ci_low, ci_high = cumulative_interval95(release)
    band_x, band_low, band_high = band_envelope(edges, np.concatenate(([0.0], ci_low)),
                                                np.concatenate(([0.0], ci_high)))
    group = max(1, math.ceil(k / MAX_BARS))
    starts = np.arange(0, k, group)
    hist_counts = np.add.reduceat(np.diff(c), starts)
    return ResultFigures(release, edges, c, tuple(quantiles(release, PROBABILITIES, whole_numbers)), band_x, band_low, band_high,
                         group, starts, np.minimum(starts + group, k), hist_counts, cdf_moments(release, whole_numbers))
