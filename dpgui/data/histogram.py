"""Streaming histograms of one numeric column of a table file (CSV/TSV, Parquet, Excel, Stata, SAS, SPSS).

This is the only place where confidential rows are turned into statistics. Everything
downstream (the DP mechanisms, the report) sees only a :class:`ColumnHistogram`: K bin
counts on public, user-chosen bounds. The files are read by :mod:`dpgui.data.readers`
(also used by :mod:`dpgui.data.table`, to show the rows to their owner, and by
:mod:`dpgui.data.public_bounds`, on files the user marks as public).

Binning rule (the one rule, shared by the file reader, the tests and the simulations —
see :func:`values_histogram`):

* ``w = (upper - lower) / bins`` and bin ``j`` is the half-open interval
  ``[lower + j*w, lower + (j+1)*w)`` (the edges are those of
  ``numpy.linspace(lower, upper, bins + 1)``, so in-range values land in the same bin as
  with ``numpy.histogram(values, bins, range=(lower, upper))``).
* The index is ``floor((x - lower) / (upper - lower) * bins)``, corrected by one bin where
  float rounding puts ``x`` on the wrong side of an edge, then clamped to ``[0, bins-1]``.
* Values outside the bounds are **clamped, never dropped** (dropping would change N and
  so leak through the count): ``x < lower`` (including ``-inf``) goes to bin 0 and
  ``x >= upper`` (including ``+inf``) goes to bin ``bins-1``. Unlike ``numpy.histogram``,
  ``x == upper`` is in the last bin because it is clamped, not because the last bin is
  closed.

Units: the bounds are in the unit of the column (whatever the file stores); counts are
numbers of rows.

Missing values (null, empty CSV field — in a one-column CSV a blank line —, ``NA``, float
``NaN``) are not binned; their number is recorded in ``n_missing``, whatever it is (a file whose
values are all missing is read too: refusing it would make publishing depend on the data). The
release decides what they become from the neighbour model (docs/privacy-model.md "Missing values"): a
noised "missing" leaf under change, dropped under add/remove. (``missing="error"``, which raises
:class:`~dpgui.errors.DataError` on the first one, is for data checks only: it is not a release
policy.)

Cost: one sequential pass over the column, O(n) time; O(batch_rows + bins) memory for the
numeric work. The file is never loaded whole (:mod:`dpgui.data.readers`).

No Qt, no global state: safe to call from a worker thread, with progress and cancel
callbacks (see :func:`column_histogram`). :func:`column_histogram` is over 80 lines: its checks of every
argument come before the file is opened, and they are its contract, stated once.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpgui.core.missing import MISSING_DROP, MISSING_ERROR, MISSING_POLICIES
from dpgui.core.tree import bin_edges, check_bins
from dpgui.data.file_types import CsvDialect
from dpgui.data.readers import (
    CancelCallback,
    PathLike,
    ProgressCallback,
    check_callbacks,
    check_table_file,
    float64_values,
    numeric_column_batches,
    watched,
)
from dpgui.errors import DataError, ParameterError

__all__ = [
    "ColumnHistogram",
    "check_bounds",
    "column_histogram",
    "values_histogram",
]

# Up to this many bins the edges are kept in a table (16 MiB at most).
_EDGE_TABLE_MAX = 1 << 20
# Values binned per inner step (temporaries of this size stay in the CPU cache).
_BLOCK = 1 << 16


@dataclass(frozen=True, eq=False)
class ColumnHistogram:
    """Counts of one column in ``bins`` equal-width bins on ``[lower, upper)``.

    ``counts[j]`` is the number of non-missing rows in ``[lower + j*w, lower + (j+1)*w)``
    with ``w = (upper - lower) / bins``; out-of-range values are clamped into the end bins
    (``n_clamped_low`` of them into bin 0, ``n_clamped_high`` into bin ``bins-1``), so
    ``total == n_rows - n_missing`` when ``missing_policy == "drop"``. ``counts`` is a
    read-only int64 array; copy it to modify it. Bounds are in the column's own unit.
    """

    counts: npt.NDArray[np.int64]
    lower: float
    upper: float
    bins: int
    n_rows: int
    n_missing: int
    n_clamped_low: int
    n_clamped_high: int
    missing_policy: str

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ColumnHistogram):
            return NotImplemented
        return (
            np.array_equal(self.counts, other.counts)
            and (self.lower, self.upper, self.bins, self.n_rows, self.n_missing,
                 self.n_clamped_low, self.n_clamped_high, self.missing_policy)
            == (other.lower, other.upper, other.bins, other.n_rows, other.n_missing,
                other.n_clamped_low, other.n_clamped_high, other.missing_policy)
        )

    __hash__ = None  # type: ignore[assignment]  # holds an array: not hashable

    @property
    def total(self) -> int:
        """Number of rows counted (the N of the released statistics) = ``counts.sum()``."""
        return int(self.counts.sum())

    @property
    def bin_width(self) -> float:
        """Width of one bin, in the column's unit."""
        return (self.upper - self.lower) / self.bins

    @property
    def edges(self) -> npt.NDArray[np.float64]:
        """The ``bins + 1`` bin edges (:func:`dpgui.core.tree.bin_edges`, ``numpy.linspace(lower, upper, bins + 1)``)."""
        return bin_edges(self.lower, self.upper, self.bins)


# --------------------------------------------------------------------------- parameters


def check_bounds(lower: object, upper: object) -> tuple[float, float]:
    """Public bounds: finite numbers with lower < upper (the data layer's and the app's one check)."""
    values = []
    for name, value in (("lower", lower), ("upper", upper)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ParameterError(
                f"{name} bound {value!r} is not a number",
                f"enter a finite number for the {name} bound",
            )
        v = float(value)
        if not math.isfinite(v):
            raise ParameterError(
                f"{name} bound {v} is not finite",
                f"enter a finite number for the {name} bound (out-of-range values are "
                "clamped into the end bins anyway)",
            )
        values.append(v)
    lo, hi = values
    if lo >= hi:
        raise ParameterError(
            f"bounds inverted: lower bound {lo:g} is not less than upper bound {hi:g}",
            "make the lower bound smaller than the upper bound",
        )
    if not math.isfinite(hi - lo):
        raise ParameterError(
            f"bounds [{lo:g}, {hi:g}) are too far apart to compute in float64",
            "choose narrower bounds",
        )
    return lo, hi


def _check_bins(bins: object) -> int:
    """K under the one bin-count rule (:func:`dpgui.core.tree.check_bins`); a histogram may have 1 bin."""
    return check_bins(bins, minimum=1)


def _check_batch_rows(batch_rows: object) -> int:
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, numbers.Integral) or batch_rows < 1:
        raise ParameterError(
            f"batch_rows {batch_rows!r} is not a positive integer", "use e.g. 1_000_000"
        )
    return int(batch_rows)


def _check_missing(missing: object) -> str:
    if missing not in MISSING_POLICIES:
        raise ParameterError(
            f"unknown missing-value policy {missing!r}",
            f"use '{MISSING_DROP}' (remove missing values before counting) or '{MISSING_ERROR}'",
        )
    return str(missing)


# --------------------------------------------------------------------------- binning


class _Binner:
    """Precomputed edges for one (lower, upper, bins); :meth:`add` bins one chunk."""

    def __init__(self, lower: float, upper: float, bins: int) -> None:
        self.lower = lower
        self.upper = upper
        self.bins = bins
        scale = bins / (upper - lower)
        if not math.isfinite(scale) or scale == 0.0:
            raise ParameterError(
                f"bounds [{lower:g}, {upper:g}) are too close together for {bins} bins",
                "widen the bounds or use fewer bins",
            )
        self.scale = scale
        # Bin edges are edge_j = j*step + lower, computed as numpy.linspace does (edge_K is
        # upper exactly). For up to _EDGE_TABLE_MAX bins they are tabulated (a gather is
        # fastest); above that they are recomputed per value to keep memory O(bins) int64.
        self.step = (upper - lower) / bins
        self.tabulated = bins <= _EDGE_TABLE_MAX
        if self.tabulated:
            edges = bin_edges(lower, upper, bins)
            # Lower/upper edge of each bin, with NaN sentinels at the two ends: comparisons
            # with NaN are False, so nothing is moved out of bin 0 or past bin bins-1.
            self.lo_edges = edges[:-1].copy()
            self.lo_edges[0] = np.nan
            self.hi_edges = edges[1:].copy()
            self.hi_edges[-1] = np.nan
        self.counts = np.zeros(bins, dtype=np.int64)
        self.n_low = 0
        self.n_high = 0

    def indices(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
        """Bin index (int64) of each value of ``x`` (float64, no NaN), clamped."""
        n = x.shape[0]
        with np.errstate(over="ignore", invalid="ignore"):
            # Overflow to +-inf is harmless: clamped just below.
            t = np.subtract(x, self.lower)
            t *= self.scale
        # Clamping before the cast keeps +-inf and huge values out of the int conversion;
        # truncation equals floor once t >= 0.
        np.clip(t, 0.0, float(self.bins - 1), out=t)
        idx = np.empty(n, dtype=np.int64)
        np.copyto(idx, t, casting="unsafe")
        if self.bins == 1:
            return idx
        # Exact correction against the float64 edges (rounding in the formula can be off
        # by one bin for x within an ulp or so of an edge).
        if self.tabulated:
            np.take(self.lo_edges, idx, out=t)
            idx -= x < t
            np.take(self.hi_edges, idx, out=t)
            idx += x >= t
        else:
            np.copyto(t, idx, casting="unsafe")
            t *= self.step
            t += self.lower
            idx -= (x < t) & (idx > 0)
            np.add(idx, 1, out=t, casting="unsafe")
            t *= self.step
            t += self.lower
            idx += (x >= t) & (idx < self.bins - 1)
        return idx

    def add(self, x: npt.NDArray[np.float64]) -> None:
        """Add the float64 values ``x`` (NaN already removed) to the counts."""
        # Work in cache-sized blocks (as numpy.histogram does): the temporaries stay in
        # L2, which is faster than whole-batch passes and bounds extra memory.
        lower, upper = self.lower, self.upper
        for start in range(0, x.shape[0], _BLOCK):
            xb = x[start : start + _BLOCK]
            self.n_low += int(np.count_nonzero(xb < lower))
            self.n_high += int(np.count_nonzero(xb >= upper))
            # np.add.at rather than np.bincount(minlength=bins): unlike a per-block bincount
            # it does not allocate K counters per block, which at large K dominates.
            np.add.at(self.counts, self.indices(xb), 1)


def values_histogram(values: npt.ArrayLike, lower: float, upper: float, bins: int) -> npt.NDArray[np.int64]:
    """Bin counts (int64, length ``bins``) of ``values`` under the module's binning rule.

    ``values`` is any real array (converted to float64; in the column's unit); bin ``j``
    is ``[lower + j*w, lower + (j+1)*w)``, ``w = (upper - lower) / bins``; values below
    ``lower`` (and ``-inf``) are counted in bin 0, values ``>= upper`` (and ``+inf``) in
    bin ``bins-1``: nothing is dropped, so the counts sum to ``len(values)``. NaN values
    are refused (drop them first: missing values are a policy decision of the caller).

    O(n) time; memory: a float64 copy of ``values`` if it is not float64 already, plus
    O(bins + 65,536) (values are binned in cache-sized blocks).
    :func:`column_histogram` applies the same rule batch by batch.
    Raises :class:`~dpgui.errors.ParameterError` on bad bounds/bins or NaN values.
    """
    lo, hi = check_bounds(lower, upper)
    k = _check_bins(bins)
    x = np.asarray(values, dtype=np.float64).ravel()
    if np.isnan(x).any():
        raise ParameterError(
            "values contain NaN (missing values)",
            "remove missing values before binning (e.g. values[~np.isnan(values)])",
        )
    binner = _Binner(lo, hi, k)
    binner.add(x)
    return binner.counts


def column_histogram(
    path: PathLike,
    column: str,
    lower: float,
    upper: float,
    bins: int,
    missing: str = MISSING_DROP,
    batch_rows: int = 1_000_000,
    *,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCallback | None = None,
    dialect: CsvDialect | None = None,
    encoding: str | None = None,
) -> ColumnHistogram:
    """Histogram of one numeric column of a table file (CSV/TSV/Parquet/Excel/Stata/SAS/SPSS), read in batches.

    ``path``: a file of a type in :data:`~dpgui.data.file_types.FILE_TYPES`: a ``.csv`` or
    ``.tsv``/``.tab`` file (``.gz``/``.zst`` compressed too) with a header row, read in ``dialect``
    (None: detected from its head, :func:`dpgui.data.readers.csv_dialect`; e.g. semicolons and a
    decimal comma), a ``.parquet``/``.pq`` file or a folder of them, or an ``.xlsx`` workbook
    (first sheet, header in the first row; a cell that is not a number, e.g. text or a
    date, raises DataError naming the row), or a Stata ``.dta``, SAS ``.sas7bdat``/``.xpt`` or SPSS
    ``.sav``/``.zsav`` file (read by pyreadstat; value-labelled columns are binned by their numeric
    codes; user-, system- and extended missing values are missing; ``encoding`` of its text, None: the
    file's own). ``column``: its name.
    ``lower``/``upper``: public, finite bounds in the column's unit (``lower < upper``);
    ``bins``: 1 <= K <= 2**26. Values are binned by :func:`values_histogram`'s rule:
    ``[lower + j*w, lower + (j+1)*w)`` with out-of-range values clamped into the end bins
    (counted in ``n_clamped_low`` / ``n_clamped_high``), never dropped.
    ``missing``: ``"drop"`` (missing values are not binned and are counted in ``n_missing``, for
    the release to treat by its neighbour model) or ``"error"`` (raise on the first missing value;
    a data check, not a release policy).

    ``progress(fraction)``, if given, is called after every batch with the fraction of
    the file read (0..1, never decreasing; CSV: bytes of text parsed / file size, .gz:
    compressed bytes read; Parquet: rows / rows in the file; Excel: rows / rows in the
    sheet) and with 1.0 at the end. ``should_cancel()``, if given, is asked before every
    batch; when it returns True, :class:`~dpgui.errors.Cancelled` is raised. Batches are
    small enough for both to come many times a second (a CSV is read in at least 16 blocks).
    Both are called from the thread that runs this function. The reading and parsing (pyarrow) and most of the binning (numpy)
    run without the GIL, so a GUI thread stays responsive while this runs in a worker
    thread (Excel files are parsed by openpyxl in Python: the GUI then shares the GIL).

    Time O(rows) in one sequential pass (speed: benchmarks/bench_histogram.py); memory
    O(batch_rows + bins): one batch of ``batch_rows`` float64 values (8 MB at the default
    1,000,000) plus cache-sized binning temporaries, and for Parquet the buffered column
    chunk, for CSV a few blocks of ``batch_rows`` bytes of text (64 KiB to 16 MiB each);
    never the whole file.

    Raises :class:`~dpgui.errors.ParameterError` for bad bounds/bins/policy/callbacks,
    :class:`~dpgui.errors.DataError` when the file or column cannot be used (message: the
    problem and the fix, naming the file and column), :class:`~dpgui.errors.Cancelled`.
    """
    lo, hi = check_bounds(lower, upper)
    k = _check_bins(bins)
    policy = _check_missing(missing)
    batch_rows = _check_batch_rows(batch_rows)
    check_callbacks(progress, should_cancel)
    if not isinstance(column, str) or not column:
        raise ParameterError(f"column name {column!r} is not a non-empty string", "pick a column")
    binner = _Binner(lo, hi, k)
    p, fmt = check_table_file(path)

    n_rows = 0
    n_missing = 0
    batches = numeric_column_batches(p, fmt, column, batch_rows, dialect, encoding=encoding)
    for arr in watched(batches, progress, should_cancel):
        x, miss = float64_values(arr)
        if miss:
            nan = np.isnan(x)
            if policy == MISSING_ERROR:
                first = n_rows + int(np.argmax(nan)) + 1
                raise DataError(
                    f"column '{column}' in '{p.name}' has a missing value at data row {first:,}",
                    "fill or remove the missing values, or choose to drop them",
                )
            x = x[~nan]
        n_rows += len(arr)
        n_missing += miss
        binner.add(x)

    if n_rows == 0:
        raise DataError(f"file '{p.name}' has no data rows", "choose a file with data rows")
    counts = binner.counts
    counts.flags.writeable = False
    return ColumnHistogram(
        counts=counts,
        lower=lo,
        upper=hi,
        bins=k,
        n_rows=n_rows,
        n_missing=n_missing,
        n_clamped_low=binner.n_low,
        n_clamped_high=binner.n_high,
        missing_policy=policy,
    )
