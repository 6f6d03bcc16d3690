"""Benchmark: dpgui's streaming column histogram vs. pandas + numpy.histogram.

    python benchmarks/bench_histogram.py --rows 10000000
    python benchmarks/bench_histogram.py --check          # 100,000,000 rows, exit 1 on a miss

Generates (once, cached under ``bench-out/``) a Parquet file with one float64 column of
``--rows`` values strictly inside ``[0, 1)`` (written row group by row group, never held
whole in memory), then times, each in a fresh subprocess, ``--repeats`` times:

(a) ``pandas.read_parquet(path)[col]`` + ``numpy.histogram(values, bins=K, range=(a, b))``
(b) ``dpgui.data.histogram.column_histogram(path, col, a, b, K)``

Each child reports its wall time (read + histogram, imports excluded) and its peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, imports included) as JSON. The script
prints the medians, ``time_ratio = dpgui / pandas`` and ``memory_ratio = dpgui / pandas``
(targets: time_ratio <= 1, memory_ratio <= 0.25) and checks the two histograms are equal.
With ``--check`` it exits 1 if a target is missed (it always exits 1 if the histograms
differ).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
COLUMN = "x"
LOWER, UPPER = 0.0, 1.0
TIME_TARGET = 1.0
MEMORY_TARGET = 0.25


def make_file(rows: int, out_dir: pathlib.Path, row_group: int = 1 << 20, seed: int = 7) -> pathlib.Path:
    """Parquet file of ``rows`` float64 values in [0, 1), cached; O(row_group) memory."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"bench_{rows}.parquet"
    if path.exists():
        return path
    tmp = path.with_suffix(".parquet.tmp")
    rng = np.random.default_rng(seed)
    schema = pa.schema([(COLUMN, pa.float64())])
    t0 = time.perf_counter()
    with pq.ParquetWriter(tmp, schema, compression="snappy") as writer:
        done = 0
        while done < rows:
            n = min(row_group, rows - done)
            u = rng.random(n)
            u *= u  # skewed towards 0; u in [0, 1) so u*u is in [0, 1) too
            writer.write_table(pa.table({COLUMN: u}), row_group_size=n)
            done += n
    os.replace(tmp, path)
    print(f"generated {path} ({rows:,} rows, {path.stat().st_size / 1e6:.0f} MB) "
          f"in {time.perf_counter() - t0:.1f} s", flush=True)
    return path


def child(method: str, path: str, bins: int, batch_rows: int) -> None:
    """Run one measurement in this process and print one JSON line."""
    import resource

    if method == "pandas":
        import numpy as np
        import pandas as pd

        rss_imports = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        values = pd.read_parquet(path)[COLUMN]
        counts, _ = np.histogram(values.to_numpy(), bins=bins, range=(LOWER, UPPER))
        seconds = time.perf_counter() - t0
    elif method == "dpgui":
        sys.path.insert(0, str(REPO))
        from dpgui.data.histogram import column_histogram

        rss_imports = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        h = column_histogram(path, COLUMN, LOWER, UPPER, bins, batch_rows=batch_rows)
        seconds = time.perf_counter() - t0
        counts = h.counts
    else:
        raise SystemExit(f"unknown method {method!r}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({
        "method": method,
        "seconds": seconds,
        "peak_rss_mib": peak / 1024,
        "rss_after_imports_mib": rss_imports / 1024,
        "counts": [int(c) for c in counts],
    }))


def run_child(method: str, path: pathlib.Path, bins: int, batch_rows: int) -> dict:
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--child", method,
           "--path", str(path), "--bins", str(bins), "--batch-rows", str(batch_rows)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--bins", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--batch-rows", type=int, default=1_000_000)
    ap.add_argument("--out-dir", type=pathlib.Path, default=REPO / "bench-out")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    ap.add_argument("--child", choices=["pandas", "dpgui"], help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    ap.add_argument("--make", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        child(args.child, args.path, args.bins, args.batch_rows)
        return 0
    if args.make:
        print(make_file(args.rows, args.out_dir))
        return 0

    # The file is made in a subprocess too: on Linux a child's ru_maxrss starts from its
    # parent's RSS at fork time, so this process must stay small (no numpy/pyarrow here).
    made = subprocess.run([sys.executable, str(pathlib.Path(__file__).resolve()), "--make",
                           "--rows", str(args.rows), "--out-dir", str(args.out_dir)],
                          check=True, capture_output=True, text=True)
    lines = made.stdout.strip().splitlines()
    print("\n".join(lines[:-1]) or f"using cached {lines[-1]}", flush=True)
    path = pathlib.Path(lines[-1])
    results: dict[str, list[dict]] = {"pandas": [], "dpgui": []}
    for i in range(args.repeats):
        order = ("pandas", "dpgui") if i % 2 == 0 else ("dpgui", "pandas")
        for method in order:
            r = run_child(method, path, args.bins, args.batch_rows)
            results[method].append(r)
            print(f"  run {i + 1} {method:6s}: {r['seconds']:.3f} s, peak RSS "
                  f"{r['peak_rss_mib']:.0f} MiB", flush=True)

    equal = all(r["counts"] == results["pandas"][0]["counts"]
                for rs in results.values() for r in rs)
    med = {m: {"seconds": statistics.median(r["seconds"] for r in rs),
               "peak_rss_mib": statistics.median(r["peak_rss_mib"] for r in rs),
               "rss_after_imports_mib": statistics.median(r["rss_after_imports_mib"] for r in rs)}
           for m, rs in results.items()}
    time_ratio = med["dpgui"]["seconds"] / med["pandas"]["seconds"]
    memory_ratio = med["dpgui"]["peak_rss_mib"] / med["pandas"]["peak_rss_mib"]

    print(f"\nrows={args.rows:,} bins={args.bins} batch_rows={args.batch_rows:,} "
          f"repeats={args.repeats} (medians)")
    for m in ("pandas", "dpgui"):
        print(f"  {m:6s}: {med[m]['seconds']:.3f} s, peak RSS {med[m]['peak_rss_mib']:.0f} MiB "
              f"(after imports {med[m]['rss_after_imports_mib']:.0f} MiB)")
    print(f"  time_ratio   = {time_ratio:.3f} (target <= {TIME_TARGET})")
    print(f"  memory_ratio = {memory_ratio:.3f} (target <= {MEMORY_TARGET})")
    print(f"  histograms equal: {equal} (total {sum(results['dpgui'][0]['counts']):,})")
    print(json.dumps({"rows": args.rows, "bins": args.bins, "batch_rows": args.batch_rows,
                      "medians": med, "time_ratio": time_ratio, "memory_ratio": memory_ratio,
                      "equal": equal}))

    if not equal:
        print("FAIL: histograms differ", file=sys.stderr)
        return 1
    if args.check and (time_ratio > TIME_TARGET or memory_ratio > MEMORY_TARGET):
        print("FAIL: target missed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
