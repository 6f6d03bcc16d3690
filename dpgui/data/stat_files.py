"""Readers of statistical-package files: Stata ``.dta``, SAS ``.sas7bdat`` and SAS transport ``.xpt``,
SPSS ``.sav`` (and compressed ``.zsav``).

All four are read by pyreadstat (a wrapper of the ReadStat C library), in chunks of rows: each chunk is
one call ``read_xxx(path, row_offset=…, row_limit=…, usecols=…)``, so memory is O(chunk rows × chosen
columns) whatever the file's size. Used through :mod:`dpgui.data.readers` (:func:`stat_schema` behind
``table_schema``, :func:`stat_record_batches` behind ``record_batches``), so the histogram, the preview,
the row count and the hierarchy count these files as they count any other.

What the user sees:

* Types, as pyreadstat reports them: text columns → ``string``; numbers → ``float64`` (``double``/
  ``float`` storage) or the integer width stored (Stata ``byte``/``int``/``long``: ``int8``/``int16``/
  ``int32``); numbers with a date or time display format (Stata ``%td``/``%tc``, SAS ``DATE9.``, SPSS
  ``DATE``…) → ``timestamp``. Decided from the metadata and the first row.
* Missing values: pyreadstat's default (``user_missing=False``) turns SPSS user-missing and system-missing
  values, Stata's ``.`` and extended ``.a``–``.z``, and SAS's ``.``/``.A``–``.Z``/``._`` into NaN: a null
  here, counted in ``n_missing`` by the histogram. Empty text stays empty text (the formats store no text
  missing value; a hierarchy level treats blank text as missing, as it does in CSV).
* Value labels (Stata label sets, SPSS value labels; SAS format catalogues are not read): attached to the
  schema field as metadata (:data:`VALUE_LABELS_KEY`), shown by the preview as ``1 (Male)``
  (:func:`labelled_texts`). The histogram bins the numeric codes; a hierarchy level uses the codes as its
  labels (``1``, ``2``), as for any numeric level column — not the value labels, so that a level's labels
  are the values stored in the file.
* Encoding: ``encoding=None`` uses the one the file declares (pyreadstat's default); else it is passed to
  pyreadstat (``latin1``, ``cp1252``, ``utf-8``…). Text that is not valid in the encoding used is a
  one-line DataError naming the file and the fix ("give its encoding, e.g. --encoding latin1"). But
  ReadStat does not always notice: Latin-1 text read with an explicit ``utf-8`` can lose the bad bytes
  silently (``café`` → ``caf``), so the preview is where a wrong encoding shows.
* A damaged or truncated file is a DataError ("the file is damaged or truncated; …"), never a traceback.

Progress: rows read / rows in the file (from the metadata); SAS transport files do not record their row
count, so their fraction is estimated from the file size and the record width.

Cost (measured: 3,000,000 rows × 3 columns, histogram of one column, 65,536 bins, this machine): time
O(rows): .dta 3.4 s, .sav 3.6 s, .zsav 0.8 s, .xpt 8.2 s with 1,000,000-row chunks; peak memory 124 MB
whether the file has 300,000 or 3,000,000 rows (100,000-row chunks; pandas reading the whole file: 477
MB). ReadStat skips to a chunk's first row quickly in .dta/.sav, but re-parses the rows before it in
.xpt (and partly .zsav): a pass there costs O(rows² / chunk rows) (.xpt, 250,000-row chunks: 28 s), so
keep chunks large (the histogram's default: 1,000,000 rows = 8 MB a column).
"""

from __future__ import annotations

import functools
import json
import math
import pathlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pyarrow as pa

from dpgui.data.file_types import STAT_FORMATS
from dpgui.data.streams import Stream, column_not_found
from dpgui.errors import DataError

if TYPE_CHECKING:
    import pandas as pd


__all__ = [
    "STAT_FORMATS",
    "VALUE_LABELS_KEY",
    "labelled_texts",
    "stat_record_batches",
    "stat_schema",
    "value_labels_of",
]


#: Arrow field-metadata key holding a column's value labels, as JSON ``[[code, label], …]``.
VALUE_LABELS_KEY: Final = b"dpgui.value_labels"

# pyreadstat's reader of each format, and the program that writes it (for the fix of a message).
_READERS: Final = {"dta": "read_dta", "sas7bdat": "read_sas7bdat", "xpt": "read_xport", "sav": "read_sav"}
_PROGRAMS: Final = {"dta": "Stata", "sas7bdat": "SAS", "xpt": "SAS", "sav": "SPSS"}
_INTEGER_TYPES: Final = {"int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32()}
# Text of ReadStat errors that mean "the text is not valid in this encoding" / "unknown encoding".
_ENCODING_ERRORS: Final = ("convert string", "invalid byte sequence", "iconv")
_UNKNOWN_ENCODING: Final = "character set"


def _read(p: pathlib.Path, fmt: str, encoding: str | None, **kwargs: Any) -> tuple[pd.DataFrame, Any]:
    """One call of pyreadstat's reader of ``fmt``, every error turned into a one-line DataError.

    The reader is looked up on the module at each call (tests watch the calls)."""
    import pyreadstat

    reader: Callable[..., tuple[pd.DataFrame, Any]] = getattr(pyreadstat, _READERS[fmt])
    if encoding is not None:
        kwargs["encoding"] = encoding
    try:
        return reader(str(p), dates_as_pandas_datetime=True, **kwargs)
    except UnicodeDecodeError as err:
        raise _encoding_error(p, encoding, f" (byte 0x{err.object[err.start]:02x} is not valid {err.encoding})") from err
    except LookupError as err:
        raise _unknown_encoding(encoding) from err
    except (pyreadstat.ReadstatError, pyreadstat.PyreadstatError, OSError, ValueError, OverflowError) as err:
        text = " ".join(str(err).split())
        if _UNKNOWN_ENCODING in text.lower():
            if encoding is not None:
                raise _unknown_encoding(encoding) from err
            raise _encoding_error(p, encoding, " (its declared encoding is not supported)") from err
        if any(word in text.lower() for word in _ENCODING_ERRORS):
            raise _encoding_error(p, encoding, f" ({text})") from err
        raise _damaged(p, fmt, text) from err


def _encoding_error(p: pathlib.Path, encoding: str | None, detail: str) -> DataError:
    used = f"the encoding '{encoding}'" if encoding else "the encoding it declares"
    return DataError(
        f"'{p.name}' holds text that is not valid in {used}{detail}",
        "give its encoding, e.g. --encoding latin1 (or cp1252, utf-8; in the window: the file's encoding)",
    )


def _unknown_encoding(encoding: str | None) -> DataError:
    return DataError(f"the encoding '{encoding}' is not known", "give one such as latin1, cp1252 or utf-8")


def _damaged(p: pathlib.Path, fmt: str, detail: str = "") -> DataError:
    """The one message for a file that cannot be read (truncated, damaged, not of its type)."""
    why = f" ({detail})" if detail else ""
    return DataError(
        f"'{p.name}' cannot be read: the file is damaged or truncated{why}",
        f"copy it again, or export it again from {_PROGRAMS[fmt]}",
    )


def _labels_metadata(labels: Mapping[Any, str]) -> dict[bytes, bytes]:
    pairs = [[k.item() if isinstance(k, np.generic) else k, str(v)] for k, v in labels.items()]
    return {VALUE_LABELS_KEY: json.dumps(pairs, ensure_ascii=False).encode()}


def value_labels_of(field: pa.Field) -> dict[float | str, str] | None:
    """The value labels attached to a schema field by :func:`stat_schema` (code → label), or None."""
    raw = (field.metadata or {}).get(VALUE_LABELS_KEY)
    if raw is None:
        return None
    return {(k if isinstance(k, str) else float(k)): str(v) for k, v in json.loads(raw)}


def _arrow_type(readstat_type: str, head: pd.Series) -> pa.DataType:
    """The Arrow type of a column from ReadStat's storage type and pyreadstat's first value(s)."""
    import pandas as pd

    if readstat_type == "string":
        return pa.string()
    if pd.api.types.is_datetime64_any_dtype(head.dtype):
        return pa.timestamp(np.datetime_data(head.dtype)[0])
    if head.dtype == object:  # e.g. SPSS TIME values as datetime.time
        inferred = pa.array(head, from_pandas=True).type
        if inferred != pa.null():
            return inferred
    return _INTEGER_TYPES.get(readstat_type, pa.float64())


def _metadata(p: pathlib.Path, fmt: str, encoding: str | None) -> Any:
    return _read(p, fmt, encoding, metadataonly=True)[1]


def stat_schema(p: pathlib.Path, fmt: str, encoding: str | None = None) -> tuple[pa.Schema, int | None]:
    """Column names and Arrow types (value labels as field metadata), and the number of rows where
    the file records it (not in SAS transport files: None). Reads the metadata and the first row: O(1)
    in the number of rows; remembered per file version (path, size, modification time) and encoding,
    as the CSV schema is. DataError for a damaged file or text not valid in the encoding."""
    try:
        st = p.stat()
    except OSError as err:
        raise _damaged(p, fmt, err.strerror or str(err)) from err
    return _cached_schema(p, fmt, encoding, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _cached_schema(
    p: pathlib.Path, fmt: str, encoding: str | None, size: int, mtime_ns: int
) -> tuple[pa.Schema, int | None]:
    del size, mtime_ns  # the cache key only
    meta = _metadata(p, fmt, encoding)
    n_rows = meta.number_rows if isinstance(meta.number_rows, int) and meta.number_rows >= 0 else None
    head, _ = _read(p, fmt, encoding, row_limit=1)
    names = list(meta.column_names)
    types = meta.readstat_variable_types
    labels = meta.variable_value_labels or {}
    fields = []
    for name in names:
        t = _arrow_type(types.get(name, "double"), head[name] if name in head else _empty_series())
        fields.append(pa.field(name, t, metadata=_labels_metadata(labels[name]) if labels.get(name) else None))
    return pa.schema(fields), n_rows


def _empty_series() -> pd.Series:
    import pandas as pd

    return pd.Series([], dtype="float64")


def _to_array(values: pd.Series, t: pa.DataType) -> pa.Array:
    """A chunk's column as the schema's type (NaN and None → null)."""
    arr = pa.array(values, from_pandas=True)
    return arr if arr.type == t else arr.cast(t)


def _estimated_rows(p: pathlib.Path, meta: Any) -> int | None:
    """Rows of a SAS transport file estimated from its size: size / record width (an overestimate:
    the headers count as rows), so the progress fraction never passes 1 before the end."""
    widths = getattr(meta, "variable_storage_width", None) or {}
    width = sum(int(w) for w in widths.values() if isinstance(w, (int, np.integer)))
    return math.ceil(p.stat().st_size / width) if width > 0 else None


def stat_record_batches(
    p: pathlib.Path,
    fmt: str,
    columns: Sequence[str],
    batch_rows: int,
    encoding: str | None = None,
    first_row: int = 0,
) -> Stream[pa.RecordBatch]:
    """Stream ``columns`` from row ``first_row`` (0 = the first) as record batches of at most
    ``batch_rows`` rows, each with the fraction of the rows read so far (0..1, non-decreasing;
    the skipped rows count as read). Each batch is one pyreadstat call with ``row_offset``/
    ``row_limit``/``usecols``. Types as :func:`stat_schema`. A file that holds fewer rows than its header
    says is a DataError (truncated)."""
    schema, n_rows = stat_schema(p, fmt, encoding)
    missing = [c for c in columns if c not in schema.names]
    if missing:
        raise column_not_found(missing[0], f"'{p.name}'", schema.names)
    types = [schema.field(c).type for c in columns]
    total = n_rows if n_rows is not None else _estimated_rows(p, _metadata(p, fmt, encoding))
    done = first_row if n_rows is None else min(first_row, n_rows)
    while n_rows is None or done < n_rows:
        limit = batch_rows if n_rows is None else min(batch_rows, n_rows - done)
        frame, _ = _read(p, fmt, encoding, row_offset=done, row_limit=limit, usecols=list(columns))
        got = len(frame)
        if got == 0 and n_rows is None:
            return
        if got == 0 or (n_rows is not None and got < limit):
            raise _damaged(p, fmt, f"it holds {done + got:,} of the {n_rows:,} rows its header announces")
        arrays = [_to_array(frame[c], t) for c, t in zip(columns, types)]
        done += got
        fraction = 1.0 if n_rows is not None and done >= n_rows else (min(done / total, 1.0) if total else 0.0)
        yield pa.RecordBatch.from_arrays(arrays, names=list(columns)), fraction
        if n_rows is None and got < limit:
            return


def _code_text(v: object) -> str:
    """A code as written: ``1`` for 1.0, ``2.5``, text as it is."""
    if isinstance(v, float):
        return str(np.format_float_positional(v, unique=True, trim="-"))
    return str(v)


def labelled_texts(values: Sequence[object], labels: Mapping[float | str, str]) -> list[str | None]:
    """Each value shown with its label: ``1 (Male)``; a value without a label as itself (``3``); a
    missing value (None, NaN) stays None. O(n)."""
    out: list[str | None] = []
    for v in values:
        if v is None or (isinstance(v, float) and v != v):
            out.append(None)
            continue
        key: float | str = v if isinstance(v, str) else float(v)  # type: ignore[arg-type]
        label = labels.get(key)
        out.append(_code_text(v) if label is None else f"{_code_text(v)} ({label})")
    return out
