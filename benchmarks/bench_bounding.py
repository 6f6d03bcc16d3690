"""Benchmark: the memory of the privacy unit's bounding in a file, against counting the same file without it.

A Parquet file of ``--rows`` rows (default 10⁷: 10⁶ persons with ~9 rows each, and 100 persons with 10,000 rows
each, so that the rule hashes 10⁶ ranks) with an integer person ID and a numeric ``x`` is written by a child
process (so that this process's memory holds none of it). Then, in this process, one after the other:

1. the histogram of ``x`` without bounding (``grouped_counts([BinKey])``: one streamed pass);
2. the same with ``Bounding("person", 20, …)``: the pass holds (person, group, rows) triples, spills them past
   :data:`dpgui.data.bounding.HOLD_TRIPLES` to a temporary folder, then chooses per spill file.

For each: the wall time and the peak resident memory above the memory before the first (sampled every 5 ms from
/proc/self/statm: Linux only; the second also holds what the first left in the memory pools, so the bounded
figure is an upper bound), and the ratio bounded / unbounded. The bounding's memory does not grow with the
file: it is O(batch + HOLD_TRIPLES + groups); ``--check`` exits 1 if its peak is above ``MEMORY_LIMIT``.

Run:  PYTHONPATH=. python benchmarks/bench_bounding.py [--rows N] [--check]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import pathlib
import sys
import tempfile
import threading
import time

from dpgui.data.bounding import HOLD_TRIPLES, Bounding
from dpgui.data.grouped_counts import BinKey
from dpgui.data.source import open_source
from dpgui.data.source_spec import parse_source

#: The bounding's peak memory above what the process held before it, at most (bytes).
MEMORY_LIMIT = 1 << 30
HEAVY_PERSONS, HEAVY_ROWS = 100, 10_000
PAGE = os.sysconf("SC_PAGE_SIZE")


def _write(path: str, rows: int) -> None:
    """The file, written in chunks of 10⁶ rows (run in a child process)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(2030)
    heavy = min(HEAVY_PERSONS * HEAVY_ROWS, rows // 10)
    persons = max(1, (rows - heavy) // 9)
    schema = pa.schema([("person", pa.int64()), ("x", pa.float64())])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, rows, 1_000_000):
            n = min(1_000_000, rows - start)
            index = np.arange(start, start + n)
            person = np.where(index < heavy, 10**12 + index % HEAVY_PERSONS, rng.integers(0, persons, n))
            writer.write_table(pa.table({"person": person, "x": rng.uniform(0.0, 100.0, n)}, schema=schema))


class _PeakMemory:
    """The peak resident memory while the block runs, above ``baseline`` (bytes)."""

    def __init__(self, baseline: int) -> None:
        self.start = baseline

    def __enter__(self) -> _PeakMemory:
        self.peak = self._rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    @staticmethod
    def rss() -> int:
        """The resident memory now (bytes)."""
        return _PeakMemory._rss()

    @staticmethod
    def _rss() -> int:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * PAGE

    def _watch(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, self._rss())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())

    @property
    def above(self) -> int:
        return self.peak - self.start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if not pathlib.Path("/proc/self/statm").exists():
        print("this benchmark reads /proc/self/statm (Linux)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="dpgui-bench-bounding-") as folder:
        path = str(pathlib.Path(folder, "rows.parquet"))
        child = multiprocessing.get_context("spawn").Process(target=_write, args=(path, args.rows))
        child.start()
        child.join()
        if child.exitcode != 0:
            return 1
        size = pathlib.Path(path).stat().st_size
        print(f"file: {args.rows:,} rows, {size / 2**20:.0f} MiB Parquet; spill limit {HOLD_TRIPLES:,} triples")
        key = BinKey("x", 0.0, 100.0, 1000)
        with open_source(parse_source(path)) as source:
            results = {}
            baseline = _PeakMemory.rss()  # both passes are measured above it: the second also holds what the
            # first left in the memory pools, so the bounded figure is an upper bound
            for name, bounding in (("unbounded", None), ("bounded L=20", Bounding("person", 20, "benchmark-salt"))):
                began = time.perf_counter()
                with _PeakMemory(baseline) as memory:
                    counted = source.grouped_counts([key], bounding=bounding)
                results[name] = memory.above
                print(f"{name:>13}: {time.perf_counter() - began:7.1f} s, peak memory +{memory.above / 2**20:7.1f} MiB "
                      f"({int(counted.counts.sum()):,} rows counted)")
    unbounded, bounded = results["unbounded"], results["bounded L=20"]
    print(f"ratio bounded / unbounded peak memory: {bounded / max(unbounded, PAGE):.1f} "
          f"(bounded / file size: {bounded / size:.1f}); "
          f"limit for the bounding {MEMORY_LIMIT / 2**20:.0f} MiB: {'met' if bounded <= MEMORY_LIMIT else 'MISSED'}")
    return 1 if args.check and bounded > MEMORY_LIMIT else 0


if __name__ == "__main__":
    sys.exit(main())
