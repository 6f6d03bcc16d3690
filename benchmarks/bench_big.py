"""Benchmark: a CDF release at K = 2²⁴ bins end to end, in one process.

For each neighbour model (change, then add/remove), on a synthetic uniform histogram of K records
(:func:`dpgui.core.synthetic.synthetic_counts`): ``auto_plan(K, PrivacySpec(1.0, model))`` →
``mechanism.release(counts, plan, SecureRandom(), lower, upper, "l2")`` (secure noise, GLS, ℓ2
consistency) → ``write_release_csv`` (the writer ``dpgui release --out`` uses) into a temporary
folder. Prints each stage's wall time, the total against the limit of 10 s, and the process's peak
resident memory (``ru_maxrss``, all stages and both models so far) against 4 GB. Each stage's CPU time
(all threads) is printed beside its wall time: on a loaded machine the wall time says more about the
load than about the code.

``--quick``: K = 2²⁰ (same limits, a smoke test). ``--check``: exit 1 if a limit is missed.
``--bins K``: any other K.

Run:  PYTHONPATH=. python benchmarks/bench_big.py [--quick] [--check] [--bins K]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from dpgui.core.mechanism import release
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.synthetic import synthetic_counts
from dpgui.report.cdf.csv_export import write_release_csv

TIME_LIMIT = 10.0  # seconds, plan + release + CSV, per neighbour model
MEMORY_LIMIT = 4 << 30  # bytes of peak resident memory
LOWER, UPPER = 0.0, 1000.0  # the column's public range


def peak_rss() -> int:
    """Peak resident memory of this process so far, bytes (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def run(bins: int, neighbours: str, folder: Path) -> tuple[float, int]:
    """Time one end-to-end release; print the stages. Returns (total seconds, CSV bytes)."""
    counts = synthetic_counts("uniform", bins, bins, seed=17)
    stages: list[tuple[str, float, float]] = []  # name, wall seconds, CPU seconds (all threads)
    start = mark = time.perf_counter()
    cpu = time.process_time()

    def stage(name: str) -> None:
        nonlocal mark, cpu
        stages.append((name, time.perf_counter() - mark, time.process_time() - cpu))
        mark, cpu = time.perf_counter(), time.process_time()

    plan = auto_plan(bins, PrivacySpec(1.0, neighbours))
    stage("plan")
    result = release(counts, plan, SecureRandom(), LOWER, UPPER, "l2")
    stage("release")
    out = write_release_csv(result, folder / f"release-{neighbours}.csv")
    stage("csv")
    total = time.perf_counter() - start
    size = out.stat().st_size
    out.unlink()
    print(f"  {neighbours}: branching {plan.shape.branching}, {plan.shape.node_count:,} nodes; "
          + ", ".join(f"{name} {seconds:.2f} s (CPU {cpu:.2f} s)" for name, seconds, cpu in stages)
          + f"; CSV {size / 2**20:,.0f} MiB", flush=True)
    return total, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="K = 2^20 instead of 2^24")
    parser.add_argument("--check", action="store_true", help="exit 1 if a limit is missed")
    parser.add_argument("--bins", type=int, default=None, help="another K")
    args = parser.parse_args(argv)
    bins = args.bins or (1 << 20 if args.quick else 1 << 24)
    print(f"K = {bins:,} bins, ε = 1, SecureRandom, l2 consistency, {os.cpu_count()} CPUs")
    missed = False
    with tempfile.TemporaryDirectory(prefix="dpgui-bench-big-") as tmp:
        for neighbours in ("change", "addremove"):
            total, _ = run(bins, neighbours, Path(tmp))
            ok = total <= TIME_LIMIT
            missed |= not ok
            print(f"{'PASS' if ok else 'FAIL'} {neighbours}: plan + release + CSV {total:.2f} s "
                  f"(limit {TIME_LIMIT:.0f} s)", flush=True)
    peak = peak_rss()
    ok = peak <= MEMORY_LIMIT
    missed |= not ok
    print(f"{'PASS' if ok else 'FAIL'} peak resident memory {peak / 2**30:.2f} GiB (limit {MEMORY_LIMIT / 2**30:.0f} GiB)")
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
