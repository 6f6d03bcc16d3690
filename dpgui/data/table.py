"""Lazy access to a table file for a preview grid: its columns, its size, and rows on demand.

Shows the data to its owner on this machine; nothing here is released. The formats,
type inference and readers are those of :mod:`dpgui.data.readers` (one of each):
CSV/TSV (``.gz`` too), Parquet, Excel (``.xlsx``, first sheet), Stata, SAS and SPSS files
(:mod:`dpgui.data.stat_files`; their value labels are shown with the codes: ``1 (Male)``).

* :func:`inspect_table`: names, kinds and types of the columns, the number of rows
  where it is cheap (reads the schema or the first block only), and a CSV's dialect.
* :class:`TableReader`: rows ``[start, start + count)`` as a :class:`pandas.DataFrame`,
  streamed forward with a small cache (CSV/Parquet are never loaded whole).
* :func:`count_rows`: the exact number of data rows, streamed, with progress and cancel.

No Qt: call from any thread (a :class:`TableReader` from one thread at a time is best;
it has a lock).
"""

from __future__ import annotations

import bisect
import itertools
import pathlib
import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.types as pat

if TYPE_CHECKING:
    import pandas as pd

from dpgui.data.csv_dialect import DetectedDialect, compression_of
from dpgui.data.file_types import CsvDialect, TableFormat
from dpgui.data.parquet_files import parquet_folder_files, parquet_row_group_sizes
from dpgui.data.readers import CSV_HEAD_BYTES, check_table_file, column_kind, csv_dialect, record_batches, table_schema
from dpgui.data.streams import CancelCallback, PathLike, ProgressCallback, Stream, check_callbacks, watched
from dpgui.data.stat_files import STAT_FORMATS, labelled_texts, value_labels_of
from dpgui.errors import DataError, ParameterError

__all__ = ["ColumnInfo", "TableInfo", "TableReader", "count_rows", "inspect_table"]

# Batch sizes of the preview reader: CSV text bytes per block, Parquet/Excel rows.
_PREVIEW_CSV_BLOCK = 1 << 20
_PREVIEW_ROWS = 8192
# Batches kept behind the current position (CSV/Parquet; Excel keeps everything).
_CACHE_BATCHES = 8


@dataclass(frozen=True)
class ColumnInfo:
    """One column: ``name``; ``kind``: 'numeric', 'text', 'datetime', 'boolean', 'empty'
    (every value missing in the head), 'binary' (bytes that are not UTF-8) or 'other';
    ``dtype``: the storage type, e.g. 'int64', 'float64', 'uint8', 'bool', 'string',
    'timestamp[s]', 'null'; ``value_labels``: code → label of a Stata/SPSS column that has them
    (the preview shows ``1 (Male)``; counts use the codes), else None."""

    name: str
    kind: str
    dtype: str
    # Not hashed (a dict): a ColumnInfo stays hashable by name, kind and dtype.
    value_labels: dict[float | str, str] | None = field(default=None, hash=False)


@dataclass(frozen=True)
class TableInfo:
    """What :func:`inspect_table` knows of a file without reading it all.

    ``format``: 'csv', 'tsv', 'parquet' or 'xlsx'. ``n_rows``: data rows (header not
    counted); exact for Parquet and Excel (the sheet's size record, blank rows included)
    and for CSV/TSV files of up to 1 MiB; None for larger CSV/TSV until counted
    (:func:`count_rows`, or a :class:`TableReader` that reached the end).
    ``size_bytes``: size of the file on disk (of a Parquet folder: of its Parquet files).
    ``dialect``: the CSV/TSV dialect the file is read with (None for other formats);
    ``dialect_detection``: how it was found (:class:`~dpgui.data.csv_dialect.DetectedDialect`:
    ``.detected``, ``.reason``, ``.describe()`` = "detected: semicolon-separated, decimal comma"),
    None when the dialect was given (chosen by the user) or the file is not a CSV/TSV.
    """

    path: pathlib.Path
    format: TableFormat
    columns: tuple[ColumnInfo, ...]
    n_rows: int | None
    size_bytes: int
    dialect: CsvDialect | None = None
    dialect_detection: DetectedDialect | None = None

    @property
    def names(self) -> list[str]:
        """The column names, in file order."""
        return [c.name for c in self.columns]


def _dtype_name(t: pa.DataType) -> str:
    """numpy's name for integer/float types ('float64', not Arrow's 'double'), 'string'
    for every text type, the value type of a dictionary (categorical) column, else Arrow's."""
    if pat.is_dictionary(t):
        return _dtype_name(t.value_type)
    if pat.is_integer(t) or pat.is_floating(t):
        return str(np.dtype(t.to_pandas_dtype()).name)
    if column_kind(t) == "text":
        return "string"
    return str(t)


def inspect_table(path: PathLike, dialect: CsvDialect | None = None, *, encoding: str | None = None) -> TableInfo:
    """Columns (name, kind, dtype), format, size, a CSV's dialect and, where cheap, the row count
    of a file (or a folder of Parquet files).

    Reads the Parquet footer(s), the first ~1 MiB of a CSV/TSV (types inferred there, as by
    :func:`dpgui.data.readers.list_columns`; ``dialect`` None = detected from its head, see
    :func:`dpgui.data.readers.csv_dialect`) or the first ~1,000 rows of an Excel sheet:
    O(1) in the file size. A file with a header and no rows is fine (``n_rows == 0``).
    ``encoding``: of a Stata/SAS/SPSS file's text (None: the one the file declares).
    Raises :class:`~dpgui.errors.DataError` (missing, unsupported, empty or unreadable file).
    """
    p, fmt = check_table_file(path)
    used: CsvDialect | None = None
    detection: DetectedDialect | None = None
    if fmt in ("csv", "tsv"):
        used, detection = csv_dialect(p, fmt, dialect)
    schema, n_rows = table_schema(p, fmt, used, encoding=encoding)
    size = sum(f.stat().st_size for f in parquet_folder_files(p)) if p.is_dir() else p.stat().st_size
    small_csv = size <= CSV_HEAD_BYTES and compression_of(p.name) is None
    # A CSV that is all in the head, or an Excel sheet without a size record (rare; then
    # O(rows)): count the rows now.
    if n_rows is None and (small_csv or fmt == "xlsx"):
        try:
            n_rows = _count_streamed(p, fmt, schema.names, None, None, used, encoding=encoding)
        except DataError:
            n_rows = None  # a malformed row: reported when the rows are read
    columns = tuple(ColumnInfo(f.name, column_kind(f.type), _dtype_name(f.type), value_labels_of(f)) for f in schema)
    return TableInfo(path=p, format=fmt, columns=columns, n_rows=n_rows, size_bytes=size,
                     dialect=used, dialect_detection=detection)


def _count_streamed(
    p: pathlib.Path,
    fmt: TableFormat,
    names: list[str],
    progress: ProgressCallback | None,
    should_cancel: CancelCallback | None,
    dialect: CsvDialect | None = None,
    *,
    encoding: str | None = None,
) -> int:
    batches = record_batches(p, fmt, names[:1], _PREVIEW_CSV_BLOCK, dialect=dialect, encoding=encoding)
    return sum(b.num_rows for b in watched(batches, progress, should_cancel))


def count_rows(
    path: PathLike,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCallback | None = None,
    *,
    dialect: CsvDialect | None = None,
    encoding: str | None = None,
) -> int:
    """Exact number of data rows (header not counted) of a table file.

    Parquet: from the metadata, O(1). Excel: the sheet's size record (or a pass over
    the rows if it has none). CSV/TSV: one
    streamed pass with pyarrow (one column converted), O(bytes), with
    ``progress(fraction)`` after every block and ``should_cancel()`` before each (True
    raises :class:`~dpgui.errors.Cancelled`), as in
    :func:`~dpgui.data.histogram.column_histogram`. Blank lines are not rows. Stata/SAS/SPSS: the
    metadata (SAS transport: a streamed pass); ``encoding`` as in :func:`inspect_table`.
    ``dialect``: CSV/TSV only, None = detected. Raises :class:`~dpgui.errors.DataError` on a
    malformed file.
    """
    check_callbacks(progress, should_cancel)
    p, fmt = check_table_file(path)
    schema, n_rows = table_schema(p, fmt, dialect, encoding=encoding)
    if n_rows is None:
        return _count_streamed(p, fmt, schema.names, progress, should_cancel, dialect, encoding=encoding)
    if progress is not None:
        progress(1.0)
    return n_rows


def _stamp(p: pathlib.Path) -> tuple[int, ...]:
    """The file's version (size, modification time, inode); of a Parquet folder, the number of
    its Parquet files and the sum of their sizes and modification times (O(files))."""
    if p.is_dir():
        try:
            stats = [f.stat() for f in parquet_folder_files(p)]
        except DataError:
            stats = []
        return len(stats), sum(st.st_size for st in stats), sum(st.st_mtime_ns for st in stats)
    st = p.stat()
    return st.st_size, st.st_mtime_ns, st.st_ino


class TableReader:
    """Rows of a table file on demand, for a preview grid.

    ``read_rows(start, count)`` returns rows ``[start, start + count)`` (fewer, or none,
    past the end) as a DataFrame indexed by row number (0 = first data row). Columns:
    CSV/TSV cells as the text in the file (an empty field is ''); Parquet as stored;
    Excel as the cells' values; Stata/SAS/SPSS as pyreadstat reads them, a column with value
    labels as text ``"1 (Male)"`` (a code without a label as ``"3"``). Forward reads continue one
    open streaming reader, and the last few batches are cached (small backward moves are free); a
    read before the cache re-opens the file: CSV/TSV from the start (O(start)), Parquet at the row
    group holding ``start`` (O(row group)), Stata/SAS/SPSS at the 8,192-row chunk holding it (SAS
    transport: O(start), ReadStat re-reads the rows before it). Excel sheets are kept whole once
    read (openpyxl cannot seek).
    Memory: ~8 batches (CSV: 1 MiB of text each; Parquet: 8,192 rows each).

    If the file is deleted or changed after opening, ``read_rows`` raises
    :class:`~dpgui.errors.DataError` ("open it again"). Use ``close()`` (or ``with``).
    """

    def __init__(self, path: PathLike, dialect: CsvDialect | None = None, *, encoding: str | None = None) -> None:
        self.info: TableInfo = inspect_table(path, dialect, encoding=encoding)
        self._encoding = encoding
        p = self.info.path
        self._stamp = _stamp(p)
        self._lock = threading.Lock()
        self._closed = False
        self._batches: Stream[pa.RecordBatch] | None = None
        self._next = 0  # row number of the next batch the open reader yields
        self._exhausted = False
        self._cache: list[tuple[int, pa.RecordBatch]] = []  # contiguous, in order
        self._keep_all = self.info.format == "xlsx"
        self._group_starts: list[int] = []
        if self.info.format == "parquet":
            sizes = parquet_row_group_sizes(p)
            self._group_starts = list(itertools.accumulate(sizes[:-1], initial=0)) if sizes else []
        elif self.info.format in STAT_FORMATS and self.info.n_rows:
            # Stata/SAS/SPSS: chunks of _PREVIEW_ROWS rows, each readable on its own (pyreadstat's row_offset).
            self._group_starts = list(range(0, self.info.n_rows, _PREVIEW_ROWS))

    # ------------------------------------------------------------------ public

    def read_rows(self, start: int, count: int) -> pd.DataFrame:
        """Rows ``[start, start + count)`` (O(count) after the first read of a batch)."""
        for name, value in (("start", start), ("count", count)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ParameterError(f"{name} {value!r} is not a whole number >= 0", f"pass a row {name} >= 0")
        start, end = int(start), int(start) + int(count)
        with self._lock:
            self._check_open()
            if count and (self.info.n_rows is None or start < self.info.n_rows):
                self._fill(start, end)
            return self._frame(start, end)

    def close(self) -> None:
        """Close the open reader and drop the cache (idempotent)."""
        with self._lock:
            self._drop()
            self._closed = True

    def __enter__(self) -> TableReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    def _check_open(self) -> None:
        p = self.info.path
        if self._closed:
            raise DataError(f"the reader of '{p.name}' is closed", "open the file again")
        try:
            same = _stamp(p) == self._stamp
        except OSError:
            self._drop()
            raise DataError(
                f"the file '{p.name}' is no longer there", "open it again (or choose another file)"
            ) from None
        if not same:
            self._drop()
            raise DataError(f"the file '{p.name}' changed since it was opened", "open it again")

    def _drop(self) -> None:
        if self._batches is not None:
            self._batches.close()
        self._batches = None
        self._cache = []
        self._exhausted = False

    def _reopen(self, start: int) -> None:
        self._drop()
        group = 0
        if self._group_starts:
            group = bisect.bisect_right(self._group_starts, start) - 1
        self._next = self._group_starts[group] if self._group_starts else 0
        self._batches = record_batches(
            self.info.path,
            self.info.format,
            self.info.names,
            _PREVIEW_CSV_BLOCK if self.info.format in ("csv", "tsv") else _PREVIEW_ROWS,
            first_row_group=group,
            dialect=self.info.dialect,
            encoding=self._encoding,
        )

    def _fill(self, start: int, end: int) -> None:
        """Make the cache hold rows [start, end) (or up to the end of the file)."""
        cached_from = self._cache[0][0] if self._cache else self._next
        behind = start < cached_from
        # Parquet: jump forward to start's row group rather than read up to it.
        ahead = bool(self._group_starts) and self._group_starts[
            bisect.bisect_right(self._group_starts, start) - 1
        ] > self._next
        if (self._batches is None and not self._exhausted) or behind or ahead:
            self._reopen(start)
        while self._next < end and not self._exhausted:
            assert self._batches is not None
            try:
                item = next(self._batches, None)
            except BaseException:
                self._drop()  # a malformed row: the next read re-opens and reports it again
                raise
            if item is None:
                self._exhausted = True
                self._batches = None
                if self.info.n_rows != self._next:
                    self.info = replace(self.info, n_rows=self._next)
                break
            batch = item[0]
            self._cache.append((self._next, batch))
            self._next += batch.num_rows
            if not self._keep_all:
                # Drop batches wholly before ``start`` beyond the last _CACHE_BATCHES.
                while len(self._cache) > _CACHE_BATCHES and self._cache[0][0] + self._cache[0][1].num_rows <= start:
                    self._cache.pop(0)

    def _frame(self, start: int, end: int) -> pd.DataFrame:
        import pandas as pd  # here, not at the top: the window starts without pandas (tests/system/test_architecture.py)

        pieces = []
        for first, batch in self._cache:
            lo, hi = max(start, first), min(end, first + batch.num_rows)
            if lo < hi:
                pieces.append(batch.slice(lo - first, hi - lo).to_pandas())
        if not pieces:
            return pd.DataFrame(columns=self.info.names, dtype=object)
        # Excel batches may differ in type (ints, then floats): pandas unifies them.
        frame = pieces[0] if len(pieces) == 1 else pd.concat(pieces, ignore_index=True)
        frame.index = pd.RangeIndex(start, start + len(frame))
        for column in self.info.columns:
            if column.value_labels:
                frame[column.name] = pd.Series(labelled_texts(frame[column.name].tolist(), column.value_labels),
                                               index=frame.index, dtype=object)
        return frame
