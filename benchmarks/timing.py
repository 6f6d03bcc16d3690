"""The one timer of the benchmark scripts (they run as `python benchmarks/NAME.py`)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def median_time(fn: Callable[[], T], repeats: int = 5, warmup: bool = True) -> tuple[float, T]:
    """Median wall time in seconds of ``repeats`` calls (after one untimed warm-up), and the last result."""
    result = fn() if warmup else None
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result  # type: ignore[return-value]
