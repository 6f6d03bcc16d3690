"""Benchmark: exact fast consistency (PAVA / ℓ1 divide and conquer) vs the O(K N^2) trellis of
Rameshwar, Tandon & Sharma (2024), and both fast methods at K = 2^20 against their 1 s limit.

Setting of their Section VI experiment: K = 997 bins, N = 900 records drawn uniformly,
noisy cumulative counts y = true CDF + cumulative Laplace noise on the bins (scale 20; numpy
RNG, fixed seed -- this is only benchmark input, not a privacy mechanism).

At K = 2^20 (N = 10^6): ℓ2 on that input; ℓ1 on it and on the GLS estimates of a real release
(auto plan, ε = 1, change model; seeded noise, not secure), each timed as the median of 5 against
the 1 s limit and against the former heap slope trick (tests/support/l1_heap_reference.py) in
the same process; the two must return the same array.

Run:  PYTHONPATH=. python benchmarks/bench_consistency.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from timing import median_time

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from l1_heap_reference import heap_l1  # the former solver, kept with the tests

from dpgui.core.consistency import (
    consistency_objective, consistent_l1, consistent_l2, trellis_consistency,
)
from dpgui.core.mechanism import estimate_cumulative, noisy_tree
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.synthetic import synthetic_counts

K = 997
N = 900
SEED = 20240917
REPEATS = 5
TARGET_SPEEDUP = 1000.0
LARGE_K = 2**20
LARGE_N = 10**6
LARGE_K_TARGET_S = 1.0  # consistent_l2 and consistent_l1 at K = 2^20
OBJ_ATOL = 1e-9
OBJ_RTOL = 1e-12  # objectives are ~1e8 here; float summation order differs


def make_input(k: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    points = rng.uniform(0.0, k, size=n)
    hist = np.bincount(np.floor(points).astype(np.int64), minlength=k)[:k]
    true = np.cumsum(hist).astype(np.float64)
    return true + np.cumsum(rng.laplace(0.0, 20.0, size=k))


def release_estimate(k: int, n: int, seed: int) -> np.ndarray:
    """The GLS estimates Ĉ_1..Ĉ_{K+1} a change-model release hands to consistency (last = N)."""
    plan = auto_plan(k, PrivacySpec(1.0))
    levels = noisy_tree(synthetic_counts("uniform", n, k, seed=seed), plan, SeededRandom(seed))
    return estimate_cumulative(plan, levels)


def feasible(x: np.ndarray, n: int) -> bool:
    return bool(x[-1] == n and x.min() >= 0 and x.max() <= n and np.all(np.diff(x) >= 0))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args()
    y = make_input(K, N, SEED)
    print(f"K={K} N={N} seed={SEED} median of {REPEATS} runs")
    results: list[tuple[str, bool, str]] = []

    for loss, fast in (("l2", consistent_l2), ("l1", consistent_l1)):
        t_tr, (x_tr, obj_tr) = median_time(lambda: trellis_consistency(y, N, loss), REPEATS)
        t_fast, x_fast = median_time(lambda: fast(y, N), REPEATS)
        obj_fast = consistency_objective(x_fast, y, loss)
        obj_tr_check = consistency_objective(x_tr, y, loss)
        tol = OBJ_ATOL + OBJ_RTOL * abs(obj_tr)
        equal = abs(obj_fast - obj_tr) <= tol and abs(obj_tr_check - obj_tr) <= tol
        speedup = t_tr / t_fast
        print(
            f"[{loss}] trellis {t_tr * 1e3:10.1f} ms  obj={obj_tr:.6f} | "
            f"{fast.__name__} {t_fast * 1e3:8.3f} ms  obj={obj_fast:.6f} | "
            f"|diff|={abs(obj_fast - obj_tr):.2e} | speed-up {speedup:,.0f}x"
        )
        assert equal, f"{loss}: objective mismatch fast={obj_fast!r} trellis={obj_tr!r}"
        results.append((f"{loss} objective equal to trellis", equal, f"|diff|={abs(obj_fast - obj_tr):.2e} <= tol {tol:.1e}"))
        results.append(
            (f"{loss} speed-up >= {TARGET_SPEEDUP:.0f}x", speedup >= TARGET_SPEEDUP, f"{speedup:,.0f}x")
        )

    y_big = make_input(LARGE_K, LARGE_N, SEED + 1)
    t_big, x_big = median_time(lambda: consistent_l2(y_big, LARGE_N), REPEATS)
    ok = feasible(x_big, LARGE_N) and t_big <= LARGE_K_TARGET_S
    print(f"[l2] consistent_l2 at K=2^20 (N=10^6): {t_big * 1e3:.1f} ms, feasible={feasible(x_big, LARGE_N)}")
    results.append((f"l2 K=2^20 <= {LARGE_K_TARGET_S:.0f} s and feasible", ok, f"{t_big * 1e3:.1f} ms"))

    inputs = (("noisy CDF (bin noise summed)", y_big),
              ("GLS estimate of a release, eps=1", release_estimate(LARGE_K, LARGE_N, SEED + 2)))
    for name, yy in inputs:
        n = LARGE_N
        t_new, x_new = median_time(lambda: consistent_l1(yy, n), REPEATS)
        t_old, x_old = median_time(lambda: heap_l1(yy, n), REPEATS, warmup=False)
        same = bool(np.array_equal(x_new, x_old))
        obj_new, obj_old = consistency_objective(x_new, yy, "l1"), consistency_objective(x_old, yy, "l1")
        print(f"[l1] K={yy.size:,} {name}: consistent_l1 {t_new * 1e3:.1f} ms (limit {LARGE_K_TARGET_S:.0f} s) | "
              f"former heap {t_old * 1e3:.1f} ms | ratio new/old {t_new / t_old:.3f} | "
              f"same array {same}, obj {obj_new:.6f} vs {obj_old:.6f}")
        results.append((f"l1 K=2^20 ({name}) <= {LARGE_K_TARGET_S:.0f} s", t_new <= LARGE_K_TARGET_S,
                        f"{t_new * 1e3:.1f} ms, {t_old / t_new:.1f}x faster than the heap"))
        results.append((f"l1 K=2^20 ({name}) same optimum as the heap", same and feasible(x_new, n),
                        f"|obj diff| = {abs(obj_new - obj_old):.2e}"))

    for name, ok, detail in results:
        print(f"{'PASS' if ok else 'FAIL'}: {name} ({detail})")
    missed = not all(ok for _, ok, _ in results)
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
