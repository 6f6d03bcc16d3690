"""The binning rule's test cases and an independent reference of its keys, shared by the SQLite and PostgreSQL tests."""

from __future__ import annotations

import math

import numpy as np

from dpgui.data.binning import KEY_HIGH, KEY_LOW, KEY_MISSING, Binner

# (lower, upper, K): non-representable bounds, negative ranges, huge and tiny widths, K = 1,
# 2**16, and one K above binning._EDGE_TABLE_MAX (edges recomputed per value).
CASES = [
    (0.0, 1.0, 1),
    (0.0, 1.0, 10),
    (0.1, 0.7, 3),
    (0.1, 0.7, 7),
    (0.1, 0.7, 65_536),
    (-3.0, 5.0, 16),
    (-1e-300, 1e-300, 1000),
    (-0.3, 0.1, 97),
    (1e15, 1e15 + 1000.0, 999),
    (1e16, 1e16 + 8.0, 8),  # edges coincide after rounding
    (-1e300, 1e300, 12_345),
    (2.5, 1e6 + 0.1, 65_536),
    (0.0, 1.0, (1 << 20) + 1),
]


def adversarial_values(lower: float, upper: float, k: int, rng: np.random.Generator) -> np.ndarray:
    """Every edge (or 3,000 of them), their float neighbours, the bounds', huge, tiny and infinite values."""
    edges = np.linspace(lower, upper, k + 1)
    if k + 1 > 3000:
        pick = np.unique(np.concatenate([[0, 1, 2, k - 2, k - 1, k], rng.integers(0, k + 1, 3000)]))
        edges = edges[pick]
    # The non-tabulated edges of Binner (K > 2**20) too.
    step = (upper - lower) / k
    js = rng.integers(0, k + 1, 500).astype(np.float64)
    edges = np.concatenate([edges, js * step + lower])
    near = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf),
                           np.nextafter(np.nextafter(edges, np.inf), np.inf),
                           np.nextafter(np.nextafter(edges, -np.inf), -np.inf)])
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1.7976931348623157e308, -1.7976931348623157e308,
                        5e-324, -5e-324, 2.2250738585072014e-308, 1e300, -1e300, 1e-300, 0.1, 0.7,
                        (lower + upper) / 2])
    inside = rng.uniform(lower, upper, 2000) if math.isfinite(upper - lower) else rng.uniform(-1e300, 1e300, 2000)
    return np.concatenate([near, special, inside])


def _binner_keys(x: np.ndarray, lower: float, upper: float, k: int) -> np.ndarray:
    """The key each value must get: Binner's bin, with -2/-3 for the clamped ones, -1 for NaN."""
    binner = Binner(lower, upper, k)
    keys = np.full(x.shape, KEY_MISSING, dtype=np.int64)
    ok = ~np.isnan(x)
    idx = binner.indices(x[ok])
    xs = x[ok]
    # Clamped values are in the end bins (the reason -2 -> bin 0 and -3 -> bin K-1 is exact).
    assert np.all(idx[xs < lower] == 0) and np.all(idx[xs >= upper] == k - 1)
    idx = np.where(xs < lower, KEY_LOW, np.where(xs >= upper, KEY_HIGH, idx))
    keys[ok] = idx
    return keys
