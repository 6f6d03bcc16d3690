"""What users ask of a released CDF: quantiles and range counts, with intervals (post-processing).

The released cumulative counts ``C_j`` sit at bin upper edges; between edges the CDF is taken
as linear (values spread evenly within a bin). Intervals use the exact standard errors of the
unbiased estimate before consistency (``Release.std_error``), at 95 % (z = 1.959964) pointwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from dpgui.core.mechanism import Release
from dpgui.core.projection import interval_variance
from dpgui.errors import ParameterError

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Quantile:
    probability: float
    value: float  # in the column's units
    low: float  # 95 % interval, column units
    high: float


def _crossing(release: Release, cumulative: np.ndarray, target: float) -> float:
    """Smallest x with C(x) ≥ target, C linear within bins; ``upper`` if never reached."""
    k = cumulative.size
    width = (release.upper - release.lower) / k
    j = int(np.searchsorted(cumulative, target, side="left"))
    if j >= k:
        return release.upper
    previous = cumulative[j - 1] if j > 0 else 0.0
    step = cumulative[j] - previous
    fraction = 1.0 if step <= 0 else float(np.clip((target - previous) / step, 0.0, 1.0))
    return release.lower + (j + fraction) * width


def cumulative_interval95(release: Release) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise 95 % interval of each released cumulative count: C_j ± z·se_j, clipped to [0, N].

    Normal approximation with the exact standard error of the unbiased estimate (before
    consistency). Covers the true count in about 95 % of bins. O(K).
    """
    c = np.asarray(release.cumulative, dtype=float)
    band = Z95 * np.asarray(release.std_error, dtype=float)
    n = float(release.total)
    return np.clip(c - band, 0.0, n), np.clip(c + band, 0.0, n)


def quantiles(release: Release, probabilities: Sequence[float]) -> list[Quantile]:
    """Quantiles of the released CDF with 95 % intervals from inverting the pointwise band.

    ``low`` is where the upper band ``C + z·se`` first reaches p·N, ``high`` where the lower band
    ``C − z·se`` does. O(K + len·log K).
    """
    probs = np.asarray(probabilities, dtype=float)
    if probs.size == 0 or np.any(~np.isfinite(probs)) or np.any((probs < 0) | (probs > 1)):
        raise ParameterError(f"probabilities must be in [0, 1], got {list(probabilities)}", "use e.g. 0.25, 0.5, 0.75")
    c = np.asarray(release.cumulative, dtype=float)
    se = release.std_error
    upper_band = np.maximum.accumulate(c + Z95 * se)
    lower_band = np.maximum.accumulate(c - Z95 * se)
    out = []
    for p in probs:
        target = p * release.values_total  # quantiles of the values: missing ones are not among them
        out.append(Quantile(float(p), _crossing(release, c, target), _crossing(release, upper_band, target),
                            _crossing(release, lower_band, target)))
    return out


@dataclass(frozen=True)
class RangeCount:
    start: float  # bin edge actually used, column units
    stop: float
    count: float
    std_error: float

    @property
    def low(self) -> float:
        return self.count - Z95 * self.std_error

    @property
    def high(self) -> float:
        return self.count + Z95 * self.std_error


def range_count(release: Release, start: float, stop: float) -> RangeCount:
    """How many records lie in [start, stop), snapped to the nearest bin edges; exact standard
    error of the difference of the two unbiased cumulative counts (its covariance included)."""
    if not (np.isfinite(start) and np.isfinite(stop)) or start >= stop:
        raise ParameterError(f"range [{start}, {stop}) is empty or not finite", "give start < stop")
    k = release.plan.shape.bins
    width = (release.upper - release.lower) / k
    a = int(np.clip(round((start - release.lower) / width), 0, k))
    b = int(np.clip(round((stop - release.lower) / width), 0, k))
    if a == b:
        b = min(k, a + 1) if a < k else b
        a = b - 1
    c = np.concatenate(([0.0], np.asarray(release.cumulative, dtype=float)))
    variance = interval_variance(release.plan, a, b)
    return RangeCount(release.lower + a * width, release.lower + b * width, float(c[b] - c[a]), float(np.sqrt(variance)))
