"""Streaming histograms of one numeric column of a table file (CSV/TSV, Parquet, Excel, Stata, SAS, SPSS).

This is the only place where confidential rows are turned into statistics. Everything
downstream (the DP mechanisms, the report) sees only a :class:`ColumnHistogram`: K bin
counts on public, user-chosen bounds. The files are read by :mod:`dpgui.data.readers`
(also used by :mod:`dpgui.data.table`, to show the rows to their owner, and by
:mod:`dpgui.data.public_bounds`, on files the user marks as public).

Binning rule (the one rule, :mod:`dpgui.data.binning`, shared by the file reader, the SQL
it writes, the tests and the simulations — see :func:`values_histogram`):

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

A histogram is the counts of one :class:`~dpgui.data.grouped_counts.BinKey`, the data layer's one
counting primitive (:mod:`dpgui.data.grouped_counts`), for every source: :func:`histogram_of` makes it
from the groups a file, a database or Spark counted.

No Qt, no global state: safe to call from a worker thread, with progress and cancel
callbacks (see :func:`column_histogram`).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from dpgui.core.missing import MISSING_DROP, MISSING_ERROR, MISSING_POLICIES
from dpgui.core.tree import bin_edges
from dpgui.data.binning import KEY_HIGH, KEY_LOW, KEY_MISSING, KEY_NOT_NUMBER, Binner, check_bin_count, check_bounds
from dpgui.data.file_types import CsvDialect
from dpgui.data.grouped_counts import BinKey, GroupedCounts, LevelValues, ValueKey, count_file_groups
from dpgui.data.streams import CancelCallback, PathLike, ProgressCallback, check_callbacks
from dpgui.errors import DataError, ParameterError

__all__ = [
    "ColumnHistogram",
    "check_missing_policy",
    "column_histogram",
    "histogram_from_keys",
    "histogram_of",
    "histograms_by_group",
    "values_histogram",
]


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


def _check_batch_rows(batch_rows: object) -> int:
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, numbers.Integral) or batch_rows < 1:
        raise ParameterError(
            f"batch_rows {batch_rows!r} is not a positive integer", "use e.g. 1_000_000"
        )
    return int(batch_rows)


def check_missing_policy(missing: object) -> str:
    """``missing`` if it is one of :data:`~dpgui.core.missing.MISSING_POLICIES` (ParameterError otherwise)."""
    if missing not in MISSING_POLICIES:
        raise ParameterError(
            f"unknown missing-value policy {missing!r}",
            f"use '{MISSING_DROP}' (remove missing values before counting) or '{MISSING_ERROR}'",
        )
    return str(missing)


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
    k = check_bin_count(bins)
    x = np.asarray(values, dtype=np.float64).ravel()
    if np.isnan(x).any():
        raise ParameterError(
            "values contain NaN (missing values)",
            "remove missing values before binning (e.g. values[~np.isnan(values)])",
        )
    binner = Binner(lo, hi, k)
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
    the release to treat by its neighbour model) or ``"error"`` (DataError naming the first missing value's
    row, once the file is read; a data check, not a release policy).

    ``progress(fraction)``, if given, is called after every batch with the fraction of
    the file read (0..1, never decreasing; CSV: bytes of text parsed / file size, .gz:
    compressed bytes read; Parquet: rows / rows in the file; Excel: rows / rows in the
    sheet) and with 1.0 at the end. ``should_cancel()``, if given, is asked before every
    batch; when it returns True, :class:`~dpgui.errors.Cancelled` is raised. Batches are
    small enough for both to come many times a second (a CSV is read in at least 16 blocks).
    Both are called from the thread that runs this function. The reading and parsing (pyarrow) and most of the binning (numpy)
    run without the GIL, so a GUI thread stays responsive while this runs in a worker
    thread (Excel files are parsed by openpyxl in Python: the GUI then shares the GIL).

    The counts are :func:`dpgui.data.grouped_counts.count_file_groups`' of one
    :class:`~dpgui.data.grouped_counts.BinKey`, made a histogram by :func:`histogram_of`. Time O(rows) in
    one sequential pass (speed: benchmarks/bench_histogram.py); memory
    O(batch_rows + bins): one batch of ``batch_rows`` float64 values (8 MB at the default
    1,000,000) plus cache-sized binning temporaries, and for Parquet the buffered column
    chunk, for CSV a few blocks of ``batch_rows`` bytes of text (64 KiB to 16 MiB each);
    never the whole file.

    Raises :class:`~dpgui.errors.ParameterError` for bad bounds/bins/policy/callbacks,
    :class:`~dpgui.errors.DataError` when the file or column cannot be used (message: the
    problem and the fix, naming the file and column), :class:`~dpgui.errors.Cancelled`.
    """
    lo, hi = check_bounds(lower, upper)
    k = check_bin_count(bins)
    policy = check_missing_policy(missing)
    batch_rows = _check_batch_rows(batch_rows)
    check_callbacks(progress, should_cancel)
    counted = count_file_groups(path, (BinKey(column, lo, hi, k),), batch_rows=batch_rows, progress=progress,
                                should_cancel=should_cancel, dialect=dialect, encoding=encoding)
    return histogram_of(counted, policy)


def histogram_of(counted: GroupedCounts, missing_policy: str = MISSING_DROP) -> ColumnHistogram:
    """The :class:`ColumnHistogram` of the groups of one :class:`~dpgui.data.grouped_counts.BinKey`, from any
    source: keys ``0..bins-1`` are bins, ``KEY_LOW`` counts into bin 0 and ``n_clamped_low``, ``KEY_HIGH`` into
    bin ``bins-1`` and ``n_clamped_high``, ``KEY_MISSING`` into ``n_missing``; ``n_rows`` is the sum of all
    counts. DataError for no rows at all, for missing values under ``missing_policy="error"`` (a file: the
    first one's data row; a database: how many), and for text values (``KEY_NOT_NUMBER``), naming the column
    and ``counted.where``. O(bins + groups)."""
    policy = check_missing_policy(missing_policy)
    key = counted.keys[0]
    if len(counted.keys) != 1 or not isinstance(key, BinKey):
        raise ParameterError("a histogram is the counts of one binned column", "count with one BinKey")
    k = key.bins
    counts = np.zeros(k, dtype=np.int64)
    n_missing = n_low = n_high = n_not_number = 0
    seen: set[int] = set()
    for raw_key, raw_count in zip(counted.key_values(0), counted.counts.tolist()):
        bin_key, count = int(raw_key), int(raw_count)
        if bin_key in seen or count < 0:
            raise RuntimeError(f"the aggregate query returned key {bin_key} twice or a negative count")
        seen.add(bin_key)
        if 0 <= bin_key < k:
            counts[bin_key] += count
        elif bin_key == KEY_MISSING:
            n_missing = count
        elif bin_key == KEY_LOW:
            n_low = count
            counts[0] += count
        elif bin_key == KEY_HIGH:
            n_high = count
            counts[k - 1] += count
        elif bin_key == KEY_NOT_NUMBER:
            n_not_number = count
        else:
            raise RuntimeError(f"the aggregate query returned bin key {bin_key}, outside -4..{k - 1}")
    _check_counted_rows(counted, key.column, int(counts.sum()), n_missing, n_not_number, policy)
    counts.flags.writeable = False
    return ColumnHistogram(counts=counts, lower=key.lower, upper=key.upper, bins=k, n_rows=int(counts.sum()) + n_missing,
                           n_missing=n_missing, n_clamped_low=n_low, n_clamped_high=n_high, missing_policy=policy)


def histograms_by_group(counted: GroupedCounts, missing_policy: str = MISSING_DROP) -> dict[str | None, ColumnHistogram]:
    """The histogram of the binned column within each group of another column: the groups of
    ``(ValueKey(group column), BinKey(column, …))`` split by the group's label (labelled as a hierarchy's
    levels are, :class:`~dpgui.data.grouped_counts.LevelValues`; None: the group column's value is missing),
    each made a histogram by :func:`histogram_of` (its ``n_rows`` are the group's rows). Confidential, as every
    count here. O(groups + bins × group values)."""
    group_key, bin_key = counted.keys if len(counted.keys) == 2 else (None, None)
    if not isinstance(group_key, ValueKey) or not isinstance(bin_key, BinKey):
        raise ParameterError("histograms by group are the counts of a group column and a binned column",
                             "count with (ValueKey(group), BinKey(column, …))")
    values = LevelValues()
    ids = values.ids_of(counted.groups.column(0).combine_chunks())
    out: dict[str | None, ColumnHistogram] = {}
    for group in np.unique(ids).tolist():
        rows = ids == group
        label = values.labels[group] if group >= 0 else None
        counts = counted.counts[rows]
        within = GroupedCounts((bin_key,), counted.groups.select([1]).filter(pa.array(rows)), counts,
                               int(counts.sum()), counted.where)  # a message never quotes the group's value
        out[label] = histogram_of(within, missing_policy)
    return out


def _check_counted_rows(counted: GroupedCounts, column: str, n_binned: int, n_missing: int, n_not_number: int,
                        policy: str) -> None:
    """:func:`histogram_of`'s refusals: text values, no rows, missing values under the "error" policy."""
    where = counted.where
    if n_not_number:
        raise DataError(
            f"column '{column}' in {where} holds {n_not_number:,} values that are not numbers (text)",
            "choose a numeric column, or convert or remove the text values in the database",
        )
    if n_binned + n_missing == 0:
        if counted.rows_numbered:
            raise DataError(f"file {where} has no data rows", "choose a file with data rows")
        raise DataError(f"{where} has no data rows", "choose a table or query with data rows")
    if policy == MISSING_ERROR and n_missing:
        if counted.first_missing is not None:
            raise DataError(f"column '{column}' in {where} has a missing value at data row {counted.first_missing[0]:,}",
                            "fill or remove the missing values, or choose to drop them")
        raise DataError(f"column '{column}' in {where} has {n_missing:,} missing values (null or NaN)",
                        "fill or remove the missing values, or choose to drop them")


def histogram_from_keys(
    rows: Iterable[tuple[int, int]],
    lower: float,
    upper: float,
    bins: int,
    missing_policy: str,
    *,
    column: str = "the column",
    source_name: str = "the source",
) -> ColumnHistogram:
    """:func:`histogram_of` the ``(key, count)`` rows of the query over
    :func:`~dpgui.data.binning.bin_key_sql` (each key at most once; any order), as a database returns them;
    messages name ``column`` and ``source_name``. O(bins + number of rows)."""
    key = BinKey(column, lower, upper, bins)
    policy = check_missing_policy(missing_policy)
    counted = GroupedCounts.of_rows((key,), list(rows), where=source_name)
    return histogram_of(counted, policy)
