"""Coverage of the CDF band and of range-count intervals: how often they hold the TRUE count.

Sibling of benchmarks/quantile_coverage.py. For each ε × K × estimator × neighbour model ×
consistency: many releases (seeded test noise, exact discrete Laplace) of one skewed histogram
(N = 2,000, empty bins at both ends; tests/unit/core/test_core_count_coverage.py), and

* band: the share of (release, bin edge) whose band holds the true cumulative count (mean over the
  noised edges) and the worst single edge, for the plain normal method (released count
  ± 1.96·SE, clipped to [0, released N]) and the current ``cumulative_interval95``;
* range: the share of random ranges (4 per release) whose interval holds the true count, before
  (count ± 1.96·SE) and now (``range_count``);
* the mean half-width of the band, old and new.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/count_coverage.py [releases per cell, default 400]
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np

from dpgui.core.mechanism import add_noise, release_from_levels
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.projection import prefix_variances
from dpgui.core.quantiles import Z95, cumulative_interval95, range_count

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("count_cases", ROOT / "tests/unit/core/test_core_count_coverage.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)  # type: ignore[union-attr]


def cell(epsilon: float, bins: int, estimator: str, neighbours: str, releases: int, seed: int) -> dict[str, list[float]]:
    counts = cases.histogram(bins, seed)
    truth = np.concatenate(([0], np.cumsum(counts))).astype(float)
    plan = auto_plan(bins, PrivacySpec(epsilon, neighbours), estimator=estimator)
    true_levels = plan.shape.level_counts(counts)
    se = np.sqrt(prefix_variances(plan))
    noised = se > 0
    source = SeededRandom(seed + 1)
    pick = np.random.default_rng(seed + 2)
    out = {}
    acc = {c: dict(band_old=np.zeros(bins), band_new=np.zeros(bins), range_old=0, range_new=0, ranges=0,
                   width_old=0.0, width_new=0.0) for c in ("l2", "none")}
    for _ in range(releases):
        levels = add_noise(plan, true_levels, source)
        edges = np.sort(pick.choice(bins + 1, size=(cases.RANGES, 2), replace=True), axis=1)
        edges[:, 1] = np.minimum(np.maximum(edges[:, 1], edges[:, 0] + 1), bins)
        edges[:, 0] = np.minimum(edges[:, 0], bins - 1)
        for consistency, a in acc.items():
            r = release_from_levels(plan, levels, 0.0, float(bins), consistency, secure=False, std_error=se)
            c = np.asarray(r.cumulative, dtype=float)
            old_low, old_high = np.clip(c - Z95 * se, 0, r.total), np.clip(c + Z95 * se, 0, r.total)
            low, high = cumulative_interval95(r)
            a["band_old"] += (old_low <= truth[1:]) & (truth[1:] <= old_high)
            a["band_new"] += (low <= truth[1:]) & (truth[1:] <= high)
            a["width_old"] += float(np.mean((old_high - old_low)[noised])) / 2
            a["width_new"] += float(np.mean((high - low)[noised])) / 2
            for lo, hi in edges:
                answer = range_count(r, float(lo), float(hi))
                if answer.std_error == 0:
                    continue
                t = truth[hi] - truth[lo]
                a["ranges"] += 1
                a["range_old"] += abs(answer.count - t) <= Z95 * answer.std_error
                a["range_new"] += answer.low <= t <= answer.high
    for consistency, a in acc.items():
        old, new = a["band_old"][noised] / releases, a["band_new"][noised] / releases
        out[consistency] = [old.mean(), old.min(), new.mean(), new.min(), a["range_old"] / max(1, a["ranges"]),
                            a["range_new"] / max(1, a["ranges"]), a["width_old"] / releases, a["width_new"] / releases]
    return out


def main() -> int:
    releases = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    sd = math.sqrt(0.95 * 0.05 / releases)
    floor, floor_bin = 0.95 - 2 * sd, 0.95 - 3.5 * sd
    print(f"{releases} releases per cell, N = {cases.N_RECORDS:,}, {cases.RANGES} random ranges per release; required: "
          f"band mean and range coverage ≥ {floor:.3f}, worst bin ≥ {floor_bin:.3f}")
    print(f"{'ε':>4} {'K':>5} {'estimator':>9} {'neighbours':>10} {'consist.':>8} | {'band old':>8} {'worst':>6} "
          f"{'band new':>8} {'worst':>6} | {'range old':>9} {'range new':>9} | {'½width old':>10} {'½width new':>10}")
    failed = 0
    for epsilon in (0.1, 1.0, 5.0):
        for bins in (16, 100, 1024):
            for estimator in ("gls", "covering"):
                for neighbours in ("change", "addremove"):
                    rows = cell(epsilon, bins, estimator, neighbours, releases, bins + int(10 * epsilon))
                    for consistency, v in rows.items():
                        failed += v[2] < floor or v[3] < floor_bin or v[5] < floor
                        print(f"{epsilon:>4g} {bins:>5} {estimator:>9} {neighbours:>10} {consistency:>8} | "
                              f"{v[0]:>8.1%} {v[1]:>6.1%} {v[2]:>8.1%} {v[3]:>6.1%} | {v[4]:>9.1%} {v[5]:>9.1%} | "
                              f"{v[6]:>10,.3g} {v[7]:>10,.3g}", flush=True)
    print("rows below the required coverage (new method):", failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
