"""Thinning long curves for drawing without changing what is seen (no Qt).

A curve of many points is drawn through a few thousand chosen ones: per slice of the range the
extremes are kept, so at the drawn width the thinned line or band covers the same pixels as the
full one, and a band is never drawn narrower than it is. Used by the window's plots and the PDF
report's charts.
"""

from __future__ import annotations

import math

import numpy as np

DRAWN_SLICES = 1 << 12  # peak_envelope's default: wider than any screen
BAND_POINTS = 2048  # band_envelope's default: a shaded band is drawn with at most this many points


def peak_envelope(values: np.ndarray, slices: int = DRAWN_SLICES) -> np.ndarray:
    """Indices (increasing) of the smallest and the largest value in each of ``slices`` consecutive,
    near-equal slices of ``values`` (the first of ties); all indices when there are at most
    2·slices. A line through them looks the same as one through every point at any width up to
    ``slices`` pixels. O(n)."""
    n = values.size
    if n <= 2 * slices:
        return np.arange(n)
    starts = (np.arange(slices) * n + slices - 1) // slices  # first index of each slice
    sizes = np.diff(np.append(starts, n))
    group = np.repeat(np.arange(slices), sizes)
    picks = []
    for extreme in (np.minimum, np.maximum):
        hits = np.flatnonzero(values == np.repeat(extreme.reduceat(values, starts), sizes))
        _, first = np.unique(group[hits], return_index=True)
        picks.append(hits[first])
    return np.unique(np.concatenate(picks))


def band_envelope(x: np.ndarray, low: np.ndarray, high: np.ndarray, points: int = BAND_POINTS
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin a band for drawing without narrowing it: per group of consecutive points, the lowest
    low and the highest high, at the group's first and last x (so the drawn band contains the band).
    The inputs themselves when there are at most ``points``. O(n)."""
    if x.size <= points:
        return x, low, high
    group = math.ceil(x.size / (points // 2))
    starts = np.arange(0, x.size, group)
    lows = np.minimum.reduceat(low, starts)
    highs = np.maximum.reduceat(high, starts)
    ends = np.minimum(starts + group, x.size) - 1
    xs = np.column_stack([x[starts], x[ends]]).ravel()
    return xs, np.repeat(lows, 2), np.repeat(highs, 2)


def polyline_envelope(x: np.ndarray, y: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """A polyline of at most ~2·columns points through every column's lowest and highest y (in the
    order the curve visits them: rising columns min then max, falling ones max then min). The inputs
    themselves when there are at most 2·columns points. O(n)."""
    if x.size <= 2 * columns:
        return x, y
    group = math.ceil(x.size / columns)
    starts = np.arange(0, x.size, group)
    ends = np.minimum(starts + group, x.size) - 1
    mins = np.minimum.reduceat(y, starts)
    maxs = np.maximum.reduceat(y, starts)
    rising = y[ends] >= y[starts]
    first = np.where(rising, mins, maxs)
    second = np.where(rising, maxs, mins)
    return np.column_stack([x[starts], x[ends]]).ravel(), np.column_stack([first, second]).ravel()
