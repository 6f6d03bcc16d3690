"""Synthetic columns for studying plans (``dpgui simulate --synthetic``, the benchmarks): public,
made-up data, never a user's. numpy only, so the CLI can list the kinds without loading the engine."""

from __future__ import annotations

import numpy as np

#: The synthetic columns :func:`synthetic_counts` draws.
SYNTHETIC_KINDS = ("uniform", "normal", "lognormal")


def synthetic_counts(kind: str, n: int, bins: int, seed: int) -> np.ndarray:
    """Histogram of n synthetic records on [0, bins), values beyond the bounds clamped into the end bins.

    "uniform"; "normal" (mean bins/2, sd bins/8); "lognormal", heavy-tailed like wages: median bins/20,
    log-sd 1, so the top half of the range holds about 1 % of the records (wages of median 45,000 under
    a public bound of 900,000)."""
    if kind not in SYNTHETIC_KINDS:
        raise ValueError(f"unknown synthetic kind {kind!r}; use one of {', '.join(SYNTHETIC_KINDS)}")
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        values = rng.uniform(0, bins, n)
    elif kind == "normal":
        values = rng.normal(bins / 2, bins / 8, n)
    else:
        values = rng.lognormal(np.log(bins / 20), 1.0, n)
    index = np.clip(np.floor(values), 0, bins - 1).astype(np.int64)
    return np.bincount(index, minlength=bins).astype(np.int64)
