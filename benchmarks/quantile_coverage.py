"""Coverage of the quantile intervals: how often they hold the TRUE quantile of the data.

For each data shape × ε × K: many releases (seeded test noise, exact discrete Laplace), the
quantiles at p = 0.1, 0.25, 0.5, 0.75, 0.9, and the share of (release, p) whose interval holds the
true quantile (smallest value with ≥ p·N records at or below it), for the plain normal method
(normal band z = 1.96 inverted with interpolation inside a bin) and the current one
(dpgui.core.quantiles.quantiles), with the mean interval width of each. The data shapes are those
of tests/unit/core/test_core_quantile_coverage.py.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/quantile_coverage.py [releases per cell, default 200]
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from dpgui.core.mechanism import Release, release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.quantiles import Z95, quantiles

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("coverage_cases", ROOT / "tests/unit/core/test_core_quantile_coverage.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)  # type: ignore[union-attr]


def _old_crossing(result: Release, cumulative: np.ndarray, target: float) -> float:
    k = cumulative.size
    width = (result.upper - result.lower) / k
    j = int(np.searchsorted(cumulative, target, side="left"))
    if j >= k:
        return result.upper
    previous = cumulative[j - 1] if j > 0 else 0.0
    step = cumulative[j] - previous
    fraction = 1.0 if step <= 0 else float(np.clip((target - previous) / step, 0.0, 1.0))
    return result.lower + (j + fraction) * width


def old_interval(result: Release, p: float) -> tuple[float, float]:
    """The plain normal interval: C ± 1.96·se, interpolated crossings."""
    c = np.asarray(result.cumulative, dtype=float)
    se = result.std_error
    target = p * result.total
    return (_old_crossing(result, np.maximum.accumulate(c + Z95 * se), target),
            _old_crossing(result, np.maximum.accumulate(c - Z95 * se), target))


def cell(shape: str, epsilon: float, bins: int, releases: int, seed: int,
         bounds: tuple[float, float] | None = None) -> tuple[float, float, float, float]:
    make, lower, upper = cases.SHAPES[shape]
    if bounds is not None:
        lower, upper = bounds
    values = make(np.random.default_rng(seed))
    counts = cases.counts_of(values, lower, upper, bins)
    truth = [cases.true_quantile(values, p, lower, upper) for p in cases.PROBABILITIES]
    plan = auto_plan(bins, PrivacySpec(epsilon))
    source = SeededRandom(seed + 1)
    hit_old = hit_new = 0
    width_old = width_new = 0.0
    for _ in range(releases):
        result = release(counts, plan, source, lower, upper, "l2")
        for q, t in zip(quantiles(result, cases.PROBABILITIES), truth):
            lo, hi = old_interval(result, q.probability)
            hit_old += lo <= t <= hi
            hit_new += q.low <= t <= q.high
            width_old += hi - lo
            width_new += q.high - q.low
    n = releases * len(cases.PROBABILITIES)
    return hit_old / n, hit_new / n, width_old / n, width_new / n


def main() -> int:
    releases = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    floor = cases.threshold(releases)
    print(f"{releases} releases per cell × {len(cases.PROBABILITIES)} quantiles, N = {cases.N_RECORDS:,}; "
          f"required coverage ≥ {floor:.3f} (0.95 − 2·sqrt(0.95·0.05/R))")
    print(f"{'data':<22} {'ε':>4} {'K':>5}  {'old cover':>9} {'new cover':>9}  {'old width':>10} {'new width':>10}")
    rows = [(s, e, k, None) for s in cases.SHAPES for e in (0.1, 1.0) for k in (16, 100, 1024)]
    rows += [("exam", e, 101, (-0.5, 100.5)) for e in (0.1, 1.0)]  # bins centred on whole numbers
    failed = 0
    for shape, epsilon, bins, bounds in rows:
        old, new, w_old, w_new = cell(shape, epsilon, bins, releases, 1000 + bins, bounds)
        name = shape + (" (whole-number bins)" if bounds else "")
        failed += new < floor
        print(f"{name:<22} {epsilon:>4g} {bins:>5}  {old:>9.1%} {new:>9.1%}  {w_old:>10,.4g} {w_new:>10,.4g}")
    print("cells below the required coverage (new method):", failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
