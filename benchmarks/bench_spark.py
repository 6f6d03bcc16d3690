"""Benchmark: the histogram counted by Spark (``--engine spark``, local[2]) vs. the file path.

    python benchmarks/bench_spark.py            # 10,000,000 rows
    python benchmarks/bench_spark.py --quick    # 1,000,000 rows

Generates (once, cached under ``bench-out/``) a Parquet file of ``--rows`` float64 values (a skewed
distribution around the bounds, 0.1 % NaN, 0.1 % nulls; row groups of 2**20 rows), then times the
histogram of that column in ``--bins`` bins:

(a) the file path: :func:`dpgui.data.histogram.column_histogram` (numpy, in this process);
(b) Spark: :meth:`dpgui.data.spark_source.SparkSource.histogram` on ``--master`` (one GROUP BY job;
    the session is started once and its start-up time is printed apart; opening the source and the
    job are timed).

Prints the medians of ``--repeats`` runs (after one warm-up each), the rows per second and the
ratio ``spark / file``, and checks that the two histograms are equal (exit 1 if not). There is no
time target: on one machine Spark's JVM start, planning and shuffle cost more than numpy's pass,
and what Spark buys is that the rows stay on the cluster. Without PySpark or Java it prints why and
exits 0 (``make bench`` runs every script).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from timing import median_time  # noqa: E402 - after the path set-up

COLUMN = "x"
LOWER, UPPER = -1.0, 1.0


def make_file(rows: int, out_dir: pathlib.Path, row_group: int = 1 << 20, seed: int = 11) -> pathlib.Path:
    """Parquet file of ``rows`` float64 values (with NaN and nulls), cached; O(row_group) memory."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"bench_spark_{rows}.parquet"
    if path.exists():
        return path
    tmp = path.with_suffix(".parquet.tmp")
    rng = np.random.default_rng(seed)
    with pq.ParquetWriter(tmp, pa.schema([(COLUMN, pa.float64())]), compression="snappy") as writer:
        done = 0
        while done < rows:
            n = min(row_group, rows - done)
            x = rng.normal(0.0, 0.6, n) ** 3  # skewed, some values outside [-1, 1)
            x[rng.random(n) < 0.001] = np.nan
            writer.write_table(pa.table({COLUMN: pa.array(x, mask=rng.random(n) < 0.001)}), row_group_size=n)
            done += n
    tmp.replace(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--quick", action="store_true", help="1,000,000 rows")
    parser.add_argument("--bins", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "bench-out")
    args = parser.parse_args(argv)
    rows = 1_000_000 if args.quick else args.rows
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("skipped: PySpark is not installed (pip install 'dpgui[spark]')")
        return 0
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        print("skipped: Java is not installed (apt install openjdk-17-jre-headless)")
        return 0

    from dpgui.data.histogram import column_histogram
    from dpgui.data.source import open_source
    from dpgui.data.source_spec import parse_source
    from dpgui.data.spark_source import spark_session

    t0 = time.perf_counter()
    path = make_file(rows, args.out)
    print(f"data: {path.name}, {rows:,} rows, {path.stat().st_size / 1e6:.0f} MB "
          f"(ready in {time.perf_counter() - t0:.1f} s); {args.bins:,} bins on [{LOWER}, {UPPER})")

    t_file, expected = median_time(lambda: column_histogram(path, COLUMN, LOWER, UPPER, args.bins), args.repeats)

    t0 = time.perf_counter()
    with spark_session(args.master) as spark:
        t_start = time.perf_counter() - t0
        print(f"Spark {spark.version} on {args.master}: session started in {t_start:.1f} s")

        def spark_histogram():
            with open_source(parse_source(path, engine="spark", spark_master=args.master)) as source:
                return source.histogram(COLUMN, LOWER, UPPER, args.bins)

        t_spark, got = median_time(spark_histogram, args.repeats)

    same = got == expected
    print(f"file path (numpy):   {t_file:7.2f} s  ({rows / t_file / 1e6:6.1f} M rows/s)")
    print(f"Spark {args.master:<12}  {t_spark:7.2f} s  ({rows / t_spark / 1e6:6.1f} M rows/s; open + one GROUP BY job)")
    print(f"ratio spark / file:  {t_spark / t_file:7.1f}x  (no target: the rows stay where Spark reads them)")
    print(f"histograms equal: {same} (n_rows {got.n_rows:,}, missing {got.n_missing:,}, "
          f"clamped {got.n_clamped_low:,} low / {got.n_clamped_high:,} high)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
