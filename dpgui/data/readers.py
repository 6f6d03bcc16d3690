"""Readers of table files: CSV/TSV (any :class:`~dpgui.data.file_types.CsvDialect`, ``.gz`` and ``.zst``
too), Parquet (a file, or a folder of them read as one table), Excel (``.xlsx``, first sheet), and the
statistical packages' files (Stata ``.dta``, SAS ``.sas7bdat``/``.xpt``, SPSS ``.sav``/``.zsav``).

One reader per format, shared by the histogram (:mod:`dpgui.data.histogram`, the only place where
confidential rows become statistics), the preview (:mod:`dpgui.data.table`) and the public
reference files (:mod:`dpgui.data.public_bounds`):

* :func:`check_table_file`: the file and its format (from the name, :mod:`dpgui.data.file_types`),
  refused early if it is missing, not a regular file, empty or unreadable (a folder holding Parquet
  files is one Parquet table);
* :func:`csv_dialect`: the dialect a CSV/TSV is read with: the one given, or detected from its head
  (:mod:`dpgui.data.csv_dialect`); every CSV function below takes ``dialect`` (None = detect);
* :func:`table_schema`: the column names and Arrow types (the one type inference of the data
  layer; :func:`column_kind` turns a type into a coarse kind) and the row count where it is cheap;
* :func:`record_batches`: the columns streamed as record batches, each with the fraction of the
  file read so far; :func:`numeric_column_batches`: one numeric column, type-checked, with errors
  that name the row;
* the stream types, :func:`~dpgui.data.streams.watched` (progress and cancel around any such stream) and
  the error wording shared by the formats are in :mod:`dpgui.data.streams`; the Parquet reader is
  :mod:`dpgui.data.parquet_files`, the statistical packages' :mod:`dpgui.data.stat_files`.

The file is never loaded whole: CSV is read block by block by pyarrow (UTF-8, or UTF-16/UTF-32 with
a byte-order mark); Parquet one record batch at a time (only the asked column chunks are decoded);
Excel row by row by openpyxl (read-only mode); Stata/SAS/SPSS in chunks of rows by pyreadstat
(:mod:`dpgui.data.stat_files`; ``encoding`` applies to those). Every problem is a :class:`~dpgui.errors.DataError`
naming the file (and the column and row where known) with its fix.

No Qt, no global state but a small cache of CSV schemas per file version: safe to call from a
worker thread.
"""

from __future__ import annotations

import functools
import itertools
import os
import pathlib
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.types as pat

from dpgui.data.csv_dialect import DetectedDialect, compression_of, detect_dialect, read_head
from dpgui.data.file_types import FILE_TYPE_NAMES, SUPPORTED_EXTENSIONS, CsvDialect, TableFormat, format_of_name
from dpgui.data.parquet_files import ParquetFolder, parquet_file, parquet_folder_files, parquet_record_batches
from dpgui.data.stat_files import STAT_FORMATS, stat_record_batches, stat_schema
from dpgui.data.streams import PathLike, Stream, column_not_found, short_error_text
from dpgui.errors import DataError

__all__ = [
    "CSV_HEAD_BYTES",
    "check_data_file",
    "check_numeric_column",
    "check_table_file",
    "column_kind",
    "csv_dialect",
    "float64_values",
    "float_text",
    "list_columns",
    "numeric_column_batches",
    "record_batches",
    "table_schema",
    "value_text",
]

#: Bytes of CSV read to infer column types (:func:`table_schema`); a CSV no larger is all "head".
CSV_HEAD_BYTES = 1 << 20

# Bytes of CSV text per streamed block: batch_rows bytes, within [64 KiB, 16 MiB]. Small
# blocks are as fast and pyarrow reads several blocks ahead, so memory is a multiple of
# this (benchmarks/ measure it). A single row must fit in one block.
_CSV_BYTES_PER_ROW = 1
_CSV_MIN_BLOCK = 1 << 16
_CSV_MAX_BLOCK = 1 << 24
# For progress and cancel, a CSV is cut into at least this many blocks (of at least
# 256 KiB), so that even a mid-sized file reports progress several times.
_CSV_MIN_BLOCKS_PER_FILE = 16
_CSV_PROGRESS_MIN_BLOCK = 1 << 18
# Excel: rows read to infer column types (at most this many cells), and cells per
# streamed batch (openpyxl is slow per cell: a batch stays short whatever the sheet's width).
_XLSX_HEAD_ROWS = 1000
_XLSX_HEAD_CELLS = 1 << 16
_XLSX_BATCH_CELLS = 1 << 13


def column_kind(t: pa.DataType) -> str:
    """Coarse kind of an Arrow type: numeric, boolean, text, datetime, empty, binary, other."""
    if pat.is_dictionary(t):
        return column_kind(t.value_type)
    if pat.is_integer(t) or pat.is_floating(t) or pat.is_decimal(t):
        return "numeric"
    if pat.is_boolean(t):
        return "boolean"
    if pat.is_string(t) or pat.is_large_string(t) or getattr(pat, "is_string_view", lambda _: False)(t):
        return "text"
    if pat.is_temporal(t):
        return "datetime"
    if pat.is_null(t):
        return "empty"
    if pat.is_binary(t) or pat.is_large_binary(t) or pat.is_fixed_size_binary(t):
        return "binary"
    return "other"


def _format_of(path: pathlib.Path) -> TableFormat:
    """The format that the file name selects (case-insensitive); DataError for any other file."""
    fmt = format_of_name(path.name)
    if fmt is None:
        raise DataError(
            f"unsupported file type for '{path.name}'",
            f"use a {FILE_TYPE_NAMES} file ending in " + ", ".join(SUPPORTED_EXTENSIONS),
        )
    return fmt


def check_table_file(path: PathLike) -> tuple[pathlib.Path, TableFormat]:
    """The path and its format; :class:`~dpgui.errors.DataError` if it is missing, not a regular file
    (a pipe or a device would hang or never end), unsupported, empty or unreadable. A folder is a
    Parquet table if it holds Parquet files (:func:`parquet_folder_files`), else refused. O(1) for a
    file (opens it and reads nothing); O(files) for a folder (lists it)."""
    p = pathlib.Path(os.fspath(path))
    try:
        st = p.stat()
    except FileNotFoundError:
        raise DataError(f"file not found: '{p}' does not exist", "check the path, or choose the file again") from None
    except OSError as err:
        raise DataError(f"cannot open '{p}': {err.strerror or err}", "check the path and its permissions") from None
    if stat.S_ISDIR(st.st_mode):
        parquet_folder_files(p)
        return p, "parquet"
    if not stat.S_ISREG(st.st_mode):
        raise DataError(f"'{p}' is not a regular file (it is a pipe, a socket or a device)",
                        "save the data to a file and choose that file")
    fmt = _format_of(p)
    if st.st_size == 0:
        raise DataError(f"file '{p.name}' is empty", "choose a file with a header and data rows")
    try:
        with open(p, "rb"):
            pass
    except OSError as err:
        raise DataError(f"file '{p}' cannot be read ({err.strerror or err})",
                        "ask for read access, or copy the file somewhere you can read it") from None
    return p, fmt


def check_data_file(path: PathLike) -> pathlib.Path:
    """The data file ``path`` if it exists and is a readable, non-empty regular file of a supported
    type; else :class:`~dpgui.errors.DataError` saying which. O(1): checks before anything is spent."""
    return check_table_file(path)[0]


def _csv_parse_options(dialect: CsvDialect, one_column: bool = False) -> pa_csv.ParseOptions:
    """Parse options of a CSV/TSV written in ``dialect``. In a one-column file an empty cell is a blank
    line, so blank lines are rows (missing values) there; in a wider file a blank line holds no fields
    and is skipped."""
    return pa_csv.ParseOptions(delimiter=dialect.delimiter, ignore_empty_lines=not one_column)


def _file_stamp(p: pathlib.Path) -> tuple[int, int] | None:
    try:
        st = p.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=16)
def _cached_detection(p: pathlib.Path, size: int, mtime_ns: int) -> DetectedDialect:
    return detect_dialect(p)


def csv_dialect(
    p: pathlib.Path, fmt: TableFormat, dialect: CsvDialect | None = None
) -> tuple[CsvDialect, DetectedDialect | None]:
    """The dialect a CSV/TSV file is read with, and the detection behind it: ``dialect`` itself
    (checked; no detection: None), or, if None, the one :func:`dpgui.data.csv_dialect.detect_dialect`
    finds in its head (remembered per file version). O(256 KiB) the first time."""
    if dialect is not None:
        return CsvDialect.checked(dialect.delimiter, dialect.decimal), None
    stamp = _file_stamp(p)
    try:
        found = _cached_detection(p, *stamp) if stamp else detect_dialect(p)
    except (OSError, EOFError, pa.ArrowInvalid) as err:
        raise _malformed(p, err, 0) from err
    return found.dialect, found


# Byte-order marks that name an encoding other than UTF-8 (longest first: UTF-32 LE starts like UTF-16 LE).
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"),
         (b"\xfe\xff", "utf-16"))


def _csv_encoding(p: pathlib.Path) -> str:
    """'utf8' (pyarrow's own, fast; a UTF-8 BOM is skipped by pyarrow), or 'utf-16'/'utf-32' when the
    text starts with that byte-order mark (Excel's "Unicode text" is UTF-16): transcoded while read.
    Without a BOM the text must be UTF-8 (other encodings cannot be told apart reliably)."""
    try:
        head = read_head(p, 4)[0]
    except (OSError, EOFError, pa.ArrowInvalid):
        return "utf8"  # the reader reports the problem
    return next((name for bom, name in _BOMS if head.startswith(bom)), "utf8")


def _read_options(p: pathlib.Path, block_size: int, **kwargs: object) -> pa_csv.ReadOptions:
    return pa_csv.ReadOptions(block_size=block_size, encoding=_csv_encoding(p), **kwargs)


def _not_utf8(p: pathlib.Path, err: BaseException, where: str = "") -> DataError:
    """The one message for text that is not UTF-8 (e.g. Latin-1 or Windows-1252 from old Excel)."""
    detail = ""
    if isinstance(err, UnicodeDecodeError):
        detail = f" (byte 0x{err.object[err.start]:02x} is not UTF-8)"
    return DataError(
        f"'{p.name}' is not UTF-8 text{where}{detail}; it may be in Latin-1 or Windows-1252",
        "save it as UTF-8 (in Excel: Save As → 'CSV UTF-8'; or UTF-16 'Unicode text') and open it again",
    )


def _csv_schema(p: pathlib.Path, dialect: CsvDialect) -> pa.Schema:
    """Column names and types inferred from the first ~1 MiB of a CSV/TSV file read in ``dialect``.

    Remembered per file version (path, size, modification time) and dialect: opening a file, reading
    its column and streaming it each need the schema, and inferring it parses the first MiB again."""
    stamp = _file_stamp(p)
    if stamp is None:
        return _infer_csv_schema(p, dialect)  # reports the problem
    return _cached_csv_schema(p, dialect, *stamp)


@functools.lru_cache(maxsize=16)
def _cached_csv_schema(p: pathlib.Path, dialect: CsvDialect, size: int, mtime_ns: int) -> pa.Schema:
    return _infer_csv_schema(p, dialect)


def _open_text(p: pathlib.Path) -> tuple[pa.NativeFile, pa.NativeFile]:
    """(the file, the stream of its text): decompressed for .gz/.zst. Close the file."""
    raw = pa.OSFile(os.fspath(p))
    compression = compression_of(p.name)
    return raw, pa.CompressedInputStream(raw, compression) if compression else raw


def _infer_csv_schema(p: pathlib.Path, dialect: CsvDialect) -> pa.Schema:
    try:
        raw, source = _open_text(p)
    except OSError as err:
        raise _malformed(p, err, 0) from err
    try:
        try:
            reader = pa_csv.open_csv(
                source,
                read_options=_read_options(p, CSV_HEAD_BYTES),
                parse_options=_csv_parse_options(dialect),
                convert_options=pa_csv.ConvertOptions(decimal_point=dialect.decimal),
            )
        except UnicodeDecodeError as err:
            raise _not_utf8(p, err) from err
        except (pa.ArrowInvalid, OSError) as err:
            raise _malformed(p, err, 0) from err
    except BaseException:
        raw.close()
        raise
    try:
        schema = reader.schema
        schema.names  # noqa: B018 — the header's names are decoded here: a non-UTF-8 header fails now
        return schema
    except UnicodeDecodeError as err:
        raise _not_utf8(p, err, " in its header") from err
    finally:
        reader.close()
        raw.close()


def _malformed(p: pathlib.Path, err: BaseException, rows_before: int) -> DataError:
    msg = short_error_text(err)
    if "Empty CSV file" in msg:
        return DataError(f"file '{p.name}' is empty", "choose a file with a header and data rows")
    where = f" (after data row {rows_before:,})" if rows_before else ""
    if isinstance(err, UnicodeDecodeError) or "UTF8" in msg or "UTF-8" in msg:
        return _not_utf8(p, err, where)
    elif "Expected 1 columns" in msg:  # the header has no separator that the rows have
        msg += " (the header was read as one column: the field separator is probably wrong)"
        fix = "choose the file's field separator (command line: --delimiter comma, semicolon, tab or bar)"
    elif "columns" in msg:
        fix = ("make every row have as many fields as the header (check quotes and delimiters, and the field "
               "separator the file is read with)")
    else:
        fix = "fix the file (or export it again) and retry"
    return DataError(f"malformed file '{p.name}'{where}: {msg}", fix)


def _not_numeric(p: pathlib.Path, column: str, t: pa.DataType) -> DataError:
    kind = column_kind(t)
    if kind == "boolean":
        return DataError(
            f"column '{column}' in '{p.name}' is boolean (true/false), not numeric",
            "pick a numeric column (a CDF of a yes/no column is just a proportion)",
        )
    if kind == "binary":
        return DataError(
            f"column '{column}' in '{p.name}' is not numeric: it holds bytes that are not "
            "valid UTF-8 text",
            "save the file as UTF-8, and pick a numeric column",
        )
    return DataError(
        f"column '{column}' in '{p.name}' is not numeric (inferred type: {kind}, {t})",
        "pick a numeric column",
    )


_THOUSANDS = re.compile(r"^\s*[+-]?\d{1,3}(,\d{3})+(\.\d*)?\s*$")
_DECIMAL_COMMA = re.compile(r"^\s*[+-]?\d*,\d+([eE][+-]?\d+)?\s*$")
_THOUSANDS_DOT = re.compile(r"^\s*[+-]?\d{1,3}(\.\d{3})+(,\d*)?\s*$")


def _non_numeric_value(p: pathlib.Path, column: str, where: str, value: str | None, decimal: str = ".") -> DataError:
    """The one message for a non-numeric value found while streaming a numeric column: its row
    (``where``), never the value itself (a confidential cell); ``value`` (None if unknown) only chooses
    the fix: a number written with a thousands separator or a decimal comma gets the fix for that."""
    return DataError(f"column '{column}' in '{p.name}' has a value that is not a number{where}",
                     _number_fix(value, decimal))


def _number_fix(value: str | None, decimal: str = ".") -> str:
    """How to fix a cell that should be a number, in a file read with the decimal mark ``decimal``:
    a thousands separator or a decimal comma gets its own advice, anything else the general one. The
    advice shows made-up examples, never ``value`` (a confidential cell)."""
    if value is not None and decimal == "." and _THOUSANDS.match(value):
        return ("it is written with a thousands separator: write numbers without them (1234.5 rather than 1,234.5), "
                "e.g. export the file again without number formatting")
    if value is not None and decimal == "," and _THOUSANDS_DOT.match(value) and "." in value:
        return ("it is written with a thousands separator: write numbers without them (1234,5 rather than 1.234,5), "
                "e.g. export the file again without number formatting")
    if value is not None and decimal == "." and _DECIMAL_COMMA.match(value):
        return ("it is written with a decimal comma: read the file with a decimal comma (choose it as the file's "
                "decimal mark; command line: --decimal ','), or write 1.5 rather than 1,5")
    if value is not None and decimal == "," and _DECIMAL_COMMA.match(value.replace(".", ",", 1)):
        return ("it is written with a decimal point but the file is read with a decimal comma: choose the decimal "
                "point for it (command line: --decimal '.'), or write 1,5 rather than 1.5")
    return "clean the column (numbers only; leave missing values empty) or pick another column"


def _first_bad_number(arr: pa.Array) -> int | None:
    """Index of the first value of a text array (missing values already null) that Arrow cannot read
    as a float64, or None. Binary search over casts of prefixes: O(n log n) at worst, error path only."""
    def readable(a: pa.Array) -> bool:
        try:
            a.cast(pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return False
        return True

    if readable(arr):
        return None
    lo, hi = 0, len(arr)  # the first bad value is at an index in [lo, hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if readable(arr.slice(lo, mid - lo)):
            lo = mid
        else:
            hi = mid
    return lo


def _first_non_numeric(p: pathlib.Path, dialect: CsvDialect, column: str) -> tuple[int, str] | None:
    """(data row counted from 1, value) of the first cell of a CSV/TSV column that is neither missing
    nor a number written with the dialect's decimal mark, or None. One streamed pass over the column
    as text: only when reporting an error."""
    import pyarrow.compute as pc

    nulls = pa.array(pa_csv.ConvertOptions().null_values, type=pa.string())
    rows = 0
    try:
        for batch, _ in _csv_record_batches(p, dialect, [column], 1 << 20, None):
            text = batch.column(0)
            missing = pc.fill_null(pc.is_in(text, value_set=nulls), True)
            values = pc.if_else(missing, pa.scalar(None, pa.string()), text)
            if dialect.decimal == ",":  # "1,5" is a number there, "1.5" is not
                values = pc.if_else(pc.match_substring(values, "."), pa.scalar("not a number"),
                                    pc.replace_substring(values, ",", "."))
            index = _first_bad_number(values)
            if index is not None:
                return rows + index + 1, str(text[index].as_py())
            rows += len(batch)
    except DataError:
        return None
    return None


# ----------------------------------------------------------------- Excel (.xlsx)


_FLOAT64 = np.dtype(np.float64)


def float_text(x: float, dtype: np.dtype[np.floating[Any]] = _FLOAT64) -> str | None:
    """The shortest text that reads back as ``x`` in its own precision (``dtype``): ``3`` for 3.0,
    ``0.1`` for 0.1 (float32 too); None for NaN."""
    if x != x:  # NaN
        return None
    return str(np.format_float_positional(dtype.type(x), unique=True, trim="-"))


def value_text(value: object) -> str | None:
    """The text of one stored value (a Python value from a reader or a database driver), decided by that
    value alone, never by the other values of its column: None where missing (None, NaN, empty or blank
    text), text as it is, ``true``/``false``, a float as :func:`float_text` (``3`` for 3.0), anything
    else (an integer, a date, a decimal) as ``str``. A hierarchy's labels are these texts."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return float_text(value)
    text = value if isinstance(value, str) else str(value)
    return text if text.strip() else None


def _xlsx_array(values: list[Any]) -> pa.Array:
    """Arrow array of one column's cell values (None = missing); a column of mixed types
    (other than ints with floats) becomes text, each cell as :func:`value_text` writes it (so that a
    cell's text does not depend on its neighbours' types). O(len(values))."""
    types = {type(v) for v in values if v is not None}
    # Checked here because pyarrow would quietly read [2.5, True] as numbers and
    # [datetime, 3] as timestamps.
    if len(types) <= 1 or types <= {int, float}:
        try:
            return pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            pass
    return pa.array([value_text(v) for v in values], type=pa.string())


class _XlsxSheet:
    """The first worksheet of an .xlsx file, streamed row by row (openpyxl, read-only).

    The first row is the header (an empty header cell is named ``Unnamed: i`` as pandas
    does); every later row up to the sheet's recorded size is a data row, blank rows
    included (they hold missing values). Formulas give their cached values. ``n_rows`` is
    the number of data rows from the sheet's dimension record (None if the file has none).
    Use as a context manager (closes the zip file).
    """

    def __init__(self, p: pathlib.Path) -> None:
        import openpyxl  # imported on first use: only needed for Excel files
        from openpyxl.utils.exceptions import InvalidFileException

        self.path = p
        try:
            self._book = openpyxl.load_workbook(p, read_only=True, data_only=True)
        except (zipfile.BadZipFile, InvalidFileException, KeyError, ValueError, OSError, EOFError) as err:
            raise DataError(
                f"'{p.name}' is not a readable Excel (.xlsx) file: {short_error_text(err)}",
                "save it again from Excel as .xlsx (not .xls), or export it to CSV",
            ) from err
        try:
            if not self._book.worksheets:
                raise DataError(f"'{p.name}' has no worksheet", "put the table on the first sheet")
            sheet = self._book.worksheets[0]
            if sheet.max_row is None or sheet.max_row <= 1 or sheet.max_column is None:
                # No (or a degenerate "A1") size record: read the rows that are there.
                sheet.reset_dimensions()
            self.n_rows: int | None = sheet.max_row - 1 if sheet.max_row else None
            self._rows = self._guard(sheet.iter_rows(values_only=True))
            header = next(self._rows, None)
        except BaseException:
            self.close()
            raise
        if header is None or all(v is None for v in header):
            self.close()
            raise DataError(
                f"file '{p.name}' is empty (its first sheet has no header row)",
                "put the column names in the first row of the first sheet",
            )
        self.names = [f"Unnamed: {i}" if v is None else str(v) for i, v in enumerate(header)]

    def _guard(self, rows: Iterator[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
        try:
            yield from rows
        except (zipfile.BadZipFile, KeyError, ValueError, OSError, EOFError, SyntaxError, zlib.error) as err:
            raise DataError(
                f"malformed Excel file '{self.path.name}': {short_error_text(err)}",
                "save it again from Excel as .xlsx, or export it to CSV",
            ) from err

    def chunks(self, rows_per_chunk: int) -> Iterator[list[tuple[Any, ...]]]:
        """The data rows, ``rows_per_chunk`` at a time, each padded to the header's width."""
        width = len(self.names)
        while True:
            chunk = list(itertools.islice(self._rows, rows_per_chunk))
            if not chunk:
                return
            yield [r if len(r) == width else (tuple(r) + (None,) * width)[:width] for r in chunk]

    def schema(self) -> pa.Schema:
        """Types inferred (:func:`_xlsx_array`) from the first rows (consumes them)."""
        rows_per_chunk = max(100, min(_XLSX_HEAD_ROWS, _XLSX_HEAD_CELLS // len(self.names)))
        head = next(self.chunks(rows_per_chunk), [])
        columns = list(zip(*head)) if head else [()] * len(self.names)
        return pa.schema([(n, _xlsx_array(list(c)).type) for n, c in zip(self.names, columns)])

    def close(self) -> None:
        self._book.close()

    def __enter__(self) -> _XlsxSheet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _xlsx_record_batches(
    p: pathlib.Path, columns: list[str], batch_rows: int, numeric: str | None
) -> Stream[pa.RecordBatch]:
    with _XlsxSheet(p) as sheet:
        index = [sheet.names.index(c) for c in columns]
        # openpyxl parses every cell of a row: size chunks by cells so that one takes about
        # as long whatever the sheet's width.
        per = max(1, min(batch_rows, _XLSX_BATCH_CELLS // len(sheet.names)))
        total = sheet.n_rows
        done = 0
        for chunk in sheet.chunks(per):
            arrays = []
            for i, name in zip(index, columns):
                values = [r[i] for r in chunk]
                arr = _xlsx_array(values)
                if name == numeric and column_kind(arr.type) not in ("numeric", "empty"):
                    j, bad = next(
                        ((j, v) for j, v in enumerate(values)
                         if isinstance(v, bool) or not isinstance(v, (int, float, type(None)))),
                        (0, values[0]),
                    )
                    raise _non_numeric_value(p, name, f" at data row {done + j + 1:,}", str(bad))
                arrays.append(arr)
            done += len(chunk)
            yield pa.RecordBatch.from_arrays(arrays, names=columns), done / total if total else 0.0


# ----------------------------------------------------------------- CSV / TSV


def _csv_block_bytes(batch_rows: int, size: int) -> int:
    """Bytes of text per streamed CSV block: ~batch_rows bytes, but at least 16 blocks a
    file (above 4 MiB) so that progress and cancel are seen many times a second."""
    block = min(max(batch_rows * _CSV_BYTES_PER_ROW, _CSV_MIN_BLOCK), _CSV_MAX_BLOCK)
    return min(block, max(size // _CSV_MIN_BLOCKS_PER_FILE, _CSV_PROGRESS_MIN_BLOCK, _CSV_MIN_BLOCK))


def _csv_record_batches(
    p: pathlib.Path, dialect: CsvDialect, columns: list[str], batch_rows: int, numeric: str | None
) -> Stream[pa.RecordBatch]:
    # ``numeric`` is read as float64 (with the dialect's decimal mark); the other columns as
    # the text in the file (so a preview never fails on a value that type inference did not expect).
    size = p.stat().st_size
    block = _csv_block_bytes(batch_rows, size)
    compressed = compression_of(p.name) is not None
    one_column = len(_csv_schema(p, dialect).names) == 1
    rows = 0
    n_blocks = 0
    try:
        raw, source = _open_text(p)
    except OSError as err:
        raise _malformed(p, err, 0) from err
    try:
        reader = pa_csv.open_csv(
            source,
            read_options=_read_options(p, block, use_threads=False),
            parse_options=_csv_parse_options(dialect, one_column),
            convert_options=pa_csv.ConvertOptions(
                include_columns=columns,
                column_types={c: pa.float64() if c == numeric else pa.string() for c in columns},
                decimal_point=dialect.decimal,
            ),
        )
        with reader:
            for batch in reader:
                # One batch per block of text. pyarrow reads up to 32 blocks ahead, so the
                # file position runs ahead of the work: count blocks instead (for .gz/.zst the
                # text size is unknown and the compressed position is used).
                n_blocks += 1
                done = raw.tell() if compressed else n_blocks * block
                yield batch, min(done / size, 1.0)
                rows += batch.num_rows
    except (pa.ArrowInvalid, UnicodeDecodeError, OSError) as err:
        if numeric is not None and "conversion error" in str(err) and "UTF8" not in str(err):
            found = _first_non_numeric(p, dialect, numeric)
            if found is not None:
                raise _non_numeric_value(p, numeric, f" at data row {found[0]:,}", found[1], dialect.decimal) from err
            where = f" (after data row {rows:,})" if rows else ""
            raise _non_numeric_value(p, numeric, where, None, dialect.decimal) from err
        raise _malformed(p, err, rows) from err
    finally:
        raw.close()


# ----------------------------------------------------------------- any format


def table_schema(
    p: pathlib.Path, fmt: TableFormat, dialect: CsvDialect | None = None, *, encoding: str | None = None
) -> tuple[pa.Schema, int | None]:
    """Column names and Arrow types (the one type inference of the data layer), and the
    number of data rows where it is known without reading the data (Parquet metadata, the
    Excel size record; else None).

    Parquet: the schema (of a folder: the files' common schema, plus hive partition columns).
    CSV/TSV: inferred by pyarrow from the first ~1 MiB read in ``dialect`` (None: detected,
    :func:`csv_dialect`). Excel: inferred from the first ~1,000 rows (:func:`_xlsx_array`).
    Stata/SAS/SPSS: the file's metadata and first row, read by pyreadstat in ``encoding`` (None: the
    file's own), value labels attached as field metadata (:func:`dpgui.data.stat_files.stat_schema`).
    O(1) in the file size (a folder: O(files)).
    """
    if fmt in STAT_FORMATS:
        return stat_schema(p, fmt, encoding)
    if fmt == "parquet" and p.is_dir():
        folder = ParquetFolder(p)
        return folder.schema, folder.n_rows
    if fmt == "parquet":
        pf = parquet_file(p)
        try:
            return pf.schema_arrow, pf.metadata.num_rows
        finally:
            pf.close()
    if fmt == "xlsx":
        with _XlsxSheet(p) as sheet:
            return sheet.schema(), sheet.n_rows
    return _csv_schema(p, csv_dialect(p, fmt, dialect)[0]), None


def record_batches(
    p: pathlib.Path,
    fmt: TableFormat,
    columns: list[str],
    batch_rows: int,
    numeric: str | None = None,
    first_row_group: int = 0,
    dialect: CsvDialect | None = None,
    *,
    encoding: str | None = None,
) -> Stream[pa.RecordBatch]:
    """Stream ``columns`` of the file as record batches, each with the fraction of the
    file read so far (0..1, non-decreasing).

    Types: Parquet as stored; CSV/TSV as text, except ``numeric`` read as float64 (a
    value that is not a number raises DataError naming the row); Excel as inferred per
    batch (mixed cells become text), ``numeric`` checked likewise. ``first_row_group``
    (Parquet only; of a folder: counted over its files in order, :func:`parquet_row_group_sizes`)
    skips the row groups before it. Batches hold about ``batch_rows`` rows (CSV: ``batch_rows``
    bytes, see :func:`_csv_block_bytes`; Excel: ~8,192 cells). ``dialect``: CSV/TSV only, None =
    detected (:func:`csv_dialect`). Stata/SAS/SPSS: as :func:`table_schema` types them, read by
    pyreadstat ``batch_rows`` rows a call in ``encoding`` (:func:`dpgui.data.stat_files.stat_record_batches`;
    fraction: rows read / rows); there a "row group" is a chunk of ``batch_rows`` rows, so
    ``first_row_group`` g starts at row g × batch_rows.
    """
    if fmt in STAT_FORMATS:
        return stat_record_batches(p, fmt, columns, batch_rows, encoding, first_row=first_row_group * batch_rows)
    if fmt == "parquet" and p.is_dir():
        return ParquetFolder(p).record_batches(columns, batch_rows, first_row_group)
    if fmt == "parquet":
        return parquet_record_batches(p, columns, batch_rows, first_row_group)
    if fmt == "xlsx":
        return _xlsx_record_batches(p, columns, batch_rows, numeric)
    return _csv_record_batches(p, csv_dialect(p, fmt, dialect)[0], columns, batch_rows, numeric)


def check_numeric_column(
    p: pathlib.Path, fmt: TableFormat, column: str, dialect: CsvDialect | None = None, *, encoding: str | None = None
) -> CsvDialect | None:
    """DataError unless ``column`` is in the file once and its inferred kind is numeric (or empty): a CSV text
    column names its first value that is not a number. Returns the dialect a CSV/TSV is read with (``dialect``,
    or detected when None: :func:`csv_dialect`); None for other formats."""
    if fmt in ("csv", "tsv"):
        dialect = csv_dialect(p, fmt, dialect)[0]
    schema, _ = table_schema(p, fmt, dialect, encoding=encoding)
    if column not in schema.names:
        raise column_not_found(column, f"'{p.name}'", schema.names)
    positions = [i + 1 for i, name in enumerate(schema.names) if name == column]
    if len(positions) > 1:
        raise DataError(
            f"column name '{column}' is ambiguous: {len(positions)} columns of '{p.name}' have it "
            f"(columns {', '.join(map(str, positions))})",
            "rename the columns in the file so that each name is used once",
        )
    t = schema.field(schema.names.index(column)).type
    # The inferred type is checked first (pyarrow alone would fix a CSV column's type from
    # the first block and fail later on e.g. 1.5 after integers).
    if column_kind(t) not in ("numeric", "empty"):
        if dialect is not None and column_kind(t) == "text":
            found = _first_non_numeric(p, dialect, column)
            if found is not None:  # name the row, e.g. a "1,234.5" among numbers
                general = _not_numeric(p, column, t)
                fix = _number_fix(found[1], dialect.decimal)
                raise DataError(f"{general.problem}: data row {found[0]:,} holds a value that is not a number",
                                general.fix if fix == _number_fix(None) else fix)
        raise _not_numeric(p, column, t)
    return dialect


def numeric_column_batches(
    p: pathlib.Path,
    fmt: TableFormat,
    column: str,
    batch_rows: int,
    dialect: CsvDialect | None = None,
    *,
    encoding: str | None = None,
) -> Stream[pa.Array]:
    """Batches of one numeric column (any numeric Arrow type, nulls for missing) with the
    fraction read; DataError if the column is absent or its inferred kind is not numeric
    (:func:`check_numeric_column`). ``dialect``: CSV/TSV only, None = detected (:func:`csv_dialect`);
    ``encoding``: of a Stata/SAS/SPSS file's text (None: the file's own)."""
    dialect = check_numeric_column(p, fmt, column, dialect, encoding=encoding)
    for batch, fraction in record_batches(p, fmt, [column], batch_rows, numeric=column, dialect=dialect,
                                          encoding=encoding):
        yield batch.column(0), fraction


def list_columns(
    path: PathLike, dialect: CsvDialect | None = None, *, encoding: str | None = None
) -> list[tuple[str, str]]:
    """``(name, kind)`` of each column of a table file (any of
    :data:`~dpgui.data.file_types.FILE_TYPES`), in file order.

    ``kind`` is one of ``"numeric"``, ``"boolean"``, ``"text"``, ``"datetime"``,
    ``"binary"`` (bytes that are not UTF-8 text), ``"empty"`` (every value missing in the
    head) or ``"other"``. Parquet: read from the schema (no data read). CSV/TSV: inferred
    by pyarrow from the first ~1 MiB of the file; Excel (first sheet, header row): from
    the first ~1,000 rows; so a column that looks numeric there may still hold text
    further down (:func:`dpgui.data.histogram.column_histogram` then reports the row).
    O(1) in the file size. ``dialect``: CSV/TSV only, None = detected. Raises
    :class:`~dpgui.errors.DataError`.
    """
    p, fmt = check_table_file(path)
    schema, _ = table_schema(p, fmt, dialect, encoding=encoding)
    return [(field.name, column_kind(field.type)) for field in schema]


def float64_values(arr: pa.Array) -> tuple[npt.NDArray[np.float64], int]:
    """float64 values of a numeric Arrow array (nulls -> NaN) and the number of NaN/nulls. O(n).

    Each value becomes its nearest double, as a database's or Spark's ``CAST(x AS DOUBLE)`` does:
    integers beyond ±2**53 are rounded (not refused), and decimals go through their text, because
    Arrow's decimal → double cast is one ulp off on some values (its text parser is exact)."""
    if pat.is_decimal(arr.type):
        arr = arr.cast(pa.string())
    if not pat.is_float64(arr.type):
        arr = arr.cast(pa.float64(), safe=False)
    x: npt.NDArray[np.float64] = arr.to_numpy(zero_copy_only=False)
    n_missing = int(np.count_nonzero(np.isnan(x))) if len(x) else 0
    return x, n_missing

