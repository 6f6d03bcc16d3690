"""Writing a released CDF as CSV: public values only, written atomically.

The CSV holds one row per bin, eight numbers a row: at K = 2²⁴ bins that is about 2.3 GB of text. Every
float is written as Python's ``repr`` writes it (the shortest digits that read back to the same double),
but the text is made by Arrow's vectorised number formatting (:func:`float_texts`) in blocks of
:data:`ROWS_PER_BLOCK` rows on a few threads, and streamed to the file block by block: the bytes are
those of ``csv.writer`` fed ``repr(float(x))`` per value (tests/unit/report/test_csv_export_bytes.py checks
this byte for byte), for 2.4 times less CPU time (K = 2²⁰: 2.0 s instead of 5.0 s) spread over the
threads, and the whole text is never held in memory at once; Arrow's CSV writer puts each block's texts
into lines. Why not ``csv.writer`` or numpy: the first formats one value per Python call; numpy has no
vectorised shortest-repr formatting.
"""

from __future__ import annotations

import functools
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from dpgui.core.mechanism import Release
from dpgui.core.quantiles import cumulative_interval95
from dpgui.report.files import write_blocks_atomic

__all__ = ["CDF_COLUMNS", "CDF_COLUMNS_V1", "float_texts", "release_csv_blocks", "release_csv_bytes",
           "release_csv_text", "write_release_csv"]
CDF_COLUMNS = ("bin_lower", "bin_upper", "cumulative_count", "cdf", "std_error", "ci95_low", "ci95_high",
               "unbiased_estimate")
#: The columns of CSVs written before ``unbiased_estimate`` was added (still read by ``dpgui quantiles``).
CDF_COLUMNS_V1 = CDF_COLUMNS[:7]
#: Rows formatted per block: bounds the memory of the text in flight (≤ ~200 bytes a row, so ≤ ~13 MB a
#: block). Blocks this small reuse memory instead of touching fresh pages: at K = 2²⁴, 2²⁰-row blocks took
#: ~16 s of CPU and a 3.0 GiB peak, these ~14 s and 2.0 GiB (benchmarks/bench_big.py).
ROWS_PER_BLOCK = 1 << 16
#: Blocks formatted at once (Arrow's compute functions release the GIL, so threads run in parallel).
_THREADS = max(1, min(4, os.cpu_count() or 1))
# Python writes a float positionally when 1e-4 ≤ |x| < 1e16 (decimal exponent -4..15); Arrow (pyarrow
# 14-26) positionally when 1e-6 ≤ |x| < 1e10, whole numbers without ".0", and its exponents differ
# ("3e-7", Python "3e-07"). Values outside the range where both write positionally are written by repr
# itself (rare in a CDF release); _arrow_layout_known checks the layout once per process.
_POSITIONAL_FROM = 1e-4
_POSITIONAL_BELOW = 1e10
_LAYOUT_PROBES = (1e-4, 1.2345e-4, 9.87e-4, 0.1, 0.5, 1.0, -1.0, 12.0, -0.0, 0.0, 2.5, 100.0, 123456.789,
                  123456789.0, 1234567890.5, 9999999999.0, 9999999999.999998, -5e-4)


@functools.lru_cache(maxsize=1)
def _arrow_layout_known() -> bool:
    """True if this pyarrow writes floats in [1e-4, 1e10) positionally, whole ones without ".0", with
    the digits of repr (the layout :func:`float_texts` relies on)."""
    texts = pc.cast(pa.array(_LAYOUT_PROBES, pa.float64()), pa.string()).to_pylist()
    return all(text == (repr(v)[:-2] if v == int(v) else repr(v)) for text, v in zip(texts, _LAYOUT_PROBES))


def float_texts(values: np.ndarray) -> pa.StringArray:
    """``repr(float(v))`` of each value, as an Arrow string array, O(n) vectorised.

    Arrow's double-to-string cast (double-conversion's shortest round-trip digits, as CPython's
    ``repr``: the shortest decimal that reads back to the same double, the nearest one on a tie)
    gives the digits of the values with 1e-4 ≤ |v| < 1e10 and 0, and ``.0`` is put after the whole
    ones; the others (non-finite, tiny, huge) are written by repr, and all of them if this pyarrow
    writes another layout (:func:`_arrow_layout_known`).
    """
    x = np.ascontiguousarray(values, dtype=np.float64)
    if not _arrow_layout_known():
        return pa.array([repr(v) for v in x.tolist()], pa.string())
    text = pc.cast(pa.array(x), pa.string())
    magnitude = np.abs(x)
    by_repr = ~((magnitude >= _POSITIONAL_FROM) & (magnitude < _POSITIONAL_BELOW)) & (x != 0.0)  # NaN, inf too
    with np.errstate(invalid="ignore"):  # floor(NaN): NaN is written by repr anyway
        whole = (x == np.floor(x)) & ~by_repr  # "12" → "12.0", "-0" → "-0.0"
    if whole.any():
        text = pc.replace_with_mask(text, pa.array(whole),
                                    pc.binary_join_element_wise(pc.filter(text, pa.array(whole)), ".0", ""))
    if by_repr.any():
        replacements = pa.array([repr(v) for v in x[by_repr].tolist()], pa.string())
        text = pc.replace_with_mask(text, pa.array(by_repr), replacements)
    return text


#: Arrow's CSV writer puts the texts as they are (``quoting_style="none"``: number texts need no quotes; it
#: would refuse a comma, quote or line end), ``,`` between them and ``\\n`` after each row.
_CSV_OPTIONS = pa_csv.WriteOptions(include_header=False, quoting_style="none", batch_size=ROWS_PER_BLOCK)


def _csv_block(columns: list[pa.Array]) -> memoryview:
    """The CSV lines (``,`` between values, ``\\n`` after each row) of equal-length text columns, written by
    Arrow's CSV writer into its own buffer, not copied (half the CPU of joining the columns with
    ``binary_join_element_wise`` and copying the text into a bytes object: 44 vs 81 ns a row)."""
    sink = pa.BufferOutputStream()
    pa_csv.write_csv(pa.table(columns, names=[str(i) for i in range(len(columns))]), sink, _CSV_OPTIONS)
    return memoryview(sink.getvalue())


def release_csv_blocks(release: Release, rows_per_block: int = ROWS_PER_BLOCK) -> Iterator[bytes | memoryview]:
    """The UTF-8 bytes of :func:`release_csv_text`, the header first, then ``rows_per_block`` rows per block
    (made on up to four threads, at most one block per thread ahead of the one yielded; each a view of
    Arrow's buffer). O(K)."""
    k = release.plan.shape.bins
    lower, upper = release.bin_edges()
    edges = np.append(lower, upper[-1:]) if k else lower  # upper[j] is lower[j + 1]
    cdf = release.cdf
    integral = release.cumulative.dtype.kind in "iu"

    def block(start: int) -> memoryview:
        stop = min(start + rows_per_block, k)
        edge = float_texts(edges[start:stop + 1])
        count = release.cumulative[start:stop]
        columns = [edge.slice(0, stop - start), edge.slice(1),
                   pc.cast(pa.array(count.astype(np.int64)), pa.string()) if integral else float_texts(count)]
        ci_low, ci_high = cumulative_interval95(release, slice(start, stop))  # on the block's thread
        columns += [float_texts(a) for a in (cdf[start:stop], release.std_error[start:stop], ci_low, ci_high,
                                             release.estimate[start:stop])]
        return _csv_block(columns)

    yield (",".join(CDF_COLUMNS) + "\n").encode("utf-8")
    yield from _in_order(block, range(0, k, rows_per_block))


def _in_order(make: Callable[[int], memoryview], starts: range) -> Iterator[memoryview]:
    """``make(s)`` for each s, in order, computed on :data:`_THREADS` threads with at most that many ahead."""
    with ThreadPoolExecutor(_THREADS) as pool:
        pending: deque[Future[memoryview]] = deque()
        for start in starts:
            pending.append(pool.submit(make, start))
            if len(pending) > _THREADS:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def release_csv_bytes(release: Release) -> bytes:
    """:func:`release_csv_text` as UTF-8 bytes (what a bundle signs). O(K) time and memory."""
    return b"".join(release_csv_blocks(release))


def release_csv_text(release: Release) -> str:
    """CSV text with columns ``bin_lower,bin_upper,cumulative_count,cdf,std_error,ci95_low,ci95_high,
    unbiased_estimate``.

    One row per bin; ``cumulative_count`` counts records below ``bin_upper``. ``std_error`` is the
    exact standard error of the unbiased cumulative count before consistency; ``ci95_low..ci95_high``
    holds the true count with probability ≥ 95 % per row (:func:`cumulative_interval95`: the unbiased
    count ± 2.2·std_error + 1, widened to hold ``cumulative_count``, clipped to [0, N] when N is
    public; docs/engine.md "Count intervals"). ``unbiased_estimate`` is that unbiased cumulative
count (post-processing of the released noisy counts, so public), from which the quantile intervals
are computed: with it, ``dpgui quantiles`` gives from the CSV the intervals of the release itself.
Public values only. Floats are written as ``repr`` writes them, whole counts as integers; lines end
in ``\\n``.
    """
    return release_csv_bytes(release).decode("utf-8")


def write_release_csv(release: Release, path: str | os.PathLike[str]) -> Path:
    """Write :func:`release_csv_text` to ``path`` atomically (:func:`~dpgui.report.files.write_blocks_atomic`),
    block by block: memory O(:data:`ROWS_PER_BLOCK`) beyond the release's own arrays."""
    return write_blocks_atomic(path, release_csv_blocks(release))
