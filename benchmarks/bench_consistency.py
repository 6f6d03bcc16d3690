"""Benchmark: exact fast consistency (PAVA / slope trick) vs the paper's O(K N^2) trellis.

Setting of the paper's Section VI experiment: K = 997 bins, N = 900 records drawn uniformly,
noisy cumulative counts y = true CDF + cumulative Laplace noise on the bins (scale 20; numpy
RNG, fixed seed -- this is only benchmark input, not a privacy mechanism).

Run:  .venv/bin/python benchmarks/bench_consistency.py
"""

from __future__ import annotations


import numpy as np

from timing import median_time

from dpgui.core.consistency import (
    consistency_objective,
    consistent_l1,
    consistent_l2,
    trellis_consistency,
)

K = 997
N = 900
SEED = 20240917
REPEATS = 5
TARGET_SPEEDUP = 1000.0
LARGE_K = 2**20
LARGE_K_TARGET_S = 1.0  # consistent_l2 at K = 2^20 should take well under a second
OBJ_ATOL = 1e-9
OBJ_RTOL = 1e-12  # objectives are ~1e8 here; float summation order differs


def make_input(k: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    points = rng.uniform(0.0, k, size=n)
    hist = np.bincount(np.floor(points).astype(np.int64), minlength=k)[:k]
    true = np.cumsum(hist).astype(np.float64)
    return true + np.cumsum(rng.laplace(0.0, 20.0, size=k))


def main() -> int:
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

    y_big = make_input(LARGE_K, 10**6, SEED + 1)
    t_big, x_big = median_time(lambda: consistent_l2(y_big, 10**6), REPEATS)
    feasible = bool(
        x_big[-1] == 10**6 and x_big.min() >= 0 and x_big.max() <= 10**6 and np.all(np.diff(x_big) >= 0)
    )
    print(f"[l2] consistent_l2 at K=2^20 (N=10^6): {t_big * 1e3:.1f} ms, feasible={feasible}")
    results.append((f"l2 K=2^20 under {LARGE_K_TARGET_S:.0f} s and feasible", feasible and t_big < LARGE_K_TARGET_S,
                    f"{t_big * 1e3:.1f} ms"))

    for name, ok, detail in results:
        print(f"{'PASS' if ok else 'FAIL'}: {name} ({detail})")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
