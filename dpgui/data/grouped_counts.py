"""The data layer's one counting primitive: the number of rows in each group of key values.

A key is a column's value (:class:`ValueKey`) or the bin of a numeric column under public bounds
(:class:`BinKey`, the one binning rule of :mod:`dpgui.data.binning`). Every source counts groups in one
pass where the data lives (:meth:`dpgui.data.source.DataSource.grouped_counts`): a file here, in one
streamed pass (:func:`count_file_groups`); a database in one ``GROUP BY`` query
(:mod:`dpgui.data.sql_source`); Spark in one ``groupBy`` job (:mod:`dpgui.data.spark_source`). The
statistics are built on the result, the same way for every source:

* a histogram is the counts of one :class:`BinKey` (:func:`dpgui.data.histogram.histogram_of`);
* a hierarchy's path counts are the counts of its level columns' :class:`ValueKey`\\ s
  (:func:`dpgui.data.hierarchy.path_counts_of`);
* a histogram for each group of another column is the counts of ``(ValueKey(group), BinKey(x, …))``:
  the rows of one group value hold that group's histogram.

Values of the keys, as :attr:`GroupedCounts.groups` holds them:

* :class:`ValueKey`: in a file, the label of the value, decided by that value alone (a CSV/TSV cell as
  written, a typed value as :func:`~dpgui.data.readers.value_text` writes it; None where missing: null,
  NaN, an empty or blank cell); from a database or Spark, the value as it returns it (labelled the same
  way when a statistic is built).
* :class:`BinKey`: the bin key of :mod:`dpgui.data.binning`: ``0..bins-1`` a bin, ``KEY_MISSING``,
  ``KEY_LOW`` and ``KEY_HIGH`` (values below and at or above the bounds, which a histogram clamps into
  its end bins), ``KEY_NOT_NUMBER`` (SQLite: a text value).

Confidential: a :class:`GroupedCounts` holds exact counts of confidential rows. It goes to a release
(through its noise) and to the checks whose refusals reach only the officer; messages name columns and
row numbers, never a cell. No Qt; safe in a worker thread, with progress and cancel callbacks.
"""

from __future__ import annotations

import math
import numbers
import pathlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pat

from dpgui.data.binning import KEY_HIGH, KEY_LOW, KEY_MISSING, KEY_NOT_NUMBER, Binner, check_bin_count, check_bounds
from dpgui.data.file_types import CsvDialect, TableFormat
from dpgui.data.readers import (
    check_numeric_column, check_table_file, column_kind, csv_dialect, float64_values, float_text, record_batches,
    table_schema, value_text,
)
from dpgui.data.streams import (
    CancelCallback, PathLike, ProgressCallback, Stream, check_callbacks, column_not_found, watched,
)
from dpgui.errors import DataError, ParameterError

__all__ = [
    "BinKey",
    "FileGroups",
    "GroupedCounts",
    "Key",
    "KeyStream",
    "LevelValues",
    "Paths",
    "ValueKey",
    "Weights",
    "check_keys",
    "check_max_groups",
    "column_kinds",
    "count_file_groups",
    "leaf_values",
    "open_key_stream",
    "typed_format",
]

# Rows per streamed batch (CSV: bytes of text per block): one binned column alone, or labelled columns.
_BIN_BATCH_ROWS = 1_000_000
_BATCH_ROWS = 1 << 18
# Group ids are built level by level as parent * _BASE + value: every id and value stays below it.
_BASE = 1 << 31
# A BinKey's key k is stored as k + _BIN_OFFSET >= 0 while counting.
_BIN_OFFSET = -KEY_NOT_NUMBER


@dataclass(frozen=True)
class ValueKey:
    """Group by the value of ``column`` (a label in a file; see the module docstring)."""

    column: str

    def __post_init__(self) -> None:
        _check_column(self.column)


@dataclass(frozen=True)
class BinKey:
    """Group by the bin of numeric ``column`` among ``bins`` equal bins on the public ``[lower, upper)`` (the
    bin key of :mod:`dpgui.data.binning`). Checked on creation (ParameterError): finite bounds with
    ``lower < upper``, 1 <= bins <= 2**26, bins that float64 can tell apart, a column name."""

    column: str
    lower: float
    upper: float
    bins: int

    def __post_init__(self) -> None:
        lo, hi = check_bounds(self.lower, self.upper)
        k = check_bin_count(self.bins)
        scale = k / (hi - lo)
        if not math.isfinite(scale) or scale == 0.0:
            raise ParameterError(f"bounds [{lo:g}, {hi:g}) are too close together for {k} bins",
                                 "widen the bounds or use fewer bins")
        _check_column(self.column)
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "bins", k)


Key = ValueKey | BinKey
#: A prior's count column and the function that turns a batch of it into checked int64 weights
#: ``weights_of(array, data rows before the batch)`` (DataError naming the row of a bad count).
Weights = tuple[str, Callable[[pa.Array, int], npt.NDArray[np.int64]]]


def _check_column(column: object) -> None:
    if not isinstance(column, str) or not column:
        raise ParameterError(f"column name {column!r} is not a non-empty string", "pick a column")


def check_keys(keys: object) -> tuple[Key, ...]:
    """``keys`` as a tuple: one or more :class:`ValueKey`/:class:`BinKey`, each column once (ParameterError)."""
    if isinstance(keys, (str, ValueKey, BinKey)) or not isinstance(keys, Sequence) or not keys:
        raise ParameterError(f"keys {keys!r} are not a list of keys", "give one or more ValueKey/BinKey")
    out = tuple(keys)
    for key in out:
        if not isinstance(key, (ValueKey, BinKey)):
            raise ParameterError(f"key {key!r} is not a ValueKey or a BinKey", "give ValueKey/BinKey objects")
    columns = [key.column for key in out]
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise ParameterError(f"column {repeated[0]!r} is in two keys", "use each column in one key")
    return out


def _check_positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ParameterError(f"{name} {value!r} is not a positive integer", "use e.g. 500,000")
    return int(value)


def check_max_groups(max_groups: object) -> int | None:
    """``max_groups``: None (no limit) or a positive integer (ParameterError otherwise)."""
    return None if max_groups is None else _check_positive("max_groups", max_groups)


@dataclass(frozen=True, eq=False)
class GroupedCounts:
    """The rows of each group of key values (confidential: see the module docstring).

    ``groups``: one column per key, named by the key's column, one row per group (each group once, in no
    particular order): labels or the source's values for a :class:`ValueKey`, int64 bin keys for a
    :class:`BinKey`. ``counts[i]``: the rows of group i (int64, read-only; a prior's weights when a file is
    counted with :data:`Weights`, which may be 0). ``rows``: the data rows read (without weights:
    ``counts.sum()``). ``where``: the data as messages name it inside a sentence (``'people.csv'``, ``table
    people in sqlite:///census.db``). ``declared_kinds``: the coarse kind of each ValueKey column whose type
    the source's own type information declares (a typed file's schema, a database's declared type), never
    one read from the values. A file also says, per key, ``missing_rows`` (rows whose value is missing)
    and ``first_missing`` (the first such data row, 1-based; None: none): a database does not number its
    rows (both None). ``complete``: False when counting stopped at more than ``max_groups`` groups (then
    ``groups`` holds some of them), or, in a file, as soon as one ValueKey column had more than
    ``max_groups`` distinct values (``over_limit`` names it).
    """

    keys: tuple[Key, ...]
    groups: pa.Table
    counts: npt.NDArray[np.int64]
    rows: int
    where: str
    declared_kinds: Mapping[str, str] = field(default_factory=dict)
    missing_rows: tuple[int, ...] | None = None
    first_missing: tuple[int | None, ...] | None = None
    complete: bool = True
    over_limit: str | None = None

    @property
    def rows_numbered(self) -> bool:
        """Were the rows read in order, so that messages may name a data row (a file)?"""
        return self.first_missing is not None

    def key_values(self, position: int) -> list[Any]:
        """The values of key ``position`` in every group, in the groups' order. O(groups)."""
        values: list[Any] = self.groups.column(position).to_pylist()
        return values

    @classmethod
    def of_rows(
        cls,
        keys: Sequence[Key],
        rows: Sequence[Sequence[Any]],
        *,
        where: str,
        declared_kinds: Mapping[str, str] | None = None,
        max_groups: int | None = None,
    ) -> GroupedCounts:
        """The groups of an aggregate query's rows ``(value of key 1, …, value of key L, count)``, as a
        database returns them (a :class:`ValueKey`'s value labelled by :func:`value_text`: SQLite lets one
        column hold numbers and text, and each label is decided by its own value; a :class:`BinKey`'s as an
        int); ``complete`` unless more than ``max_groups`` rows came. O(groups × keys)."""
        arrays = []
        for j, key in enumerate(keys):
            if isinstance(key, BinKey):
                arrays.append(pa.array([int(r[j]) for r in rows], type=pa.int64()))
            else:
                arrays.append(pa.array([value_text(r[j]) for r in rows], type=pa.string()))
        counts = np.asarray([int(r[-1]) for r in rows], dtype=np.int64)
        counts.flags.writeable = False
        return cls(tuple(keys), pa.Table.from_arrays(arrays, names=[k.column for k in keys]), counts,
                   int(counts.sum()), where, dict(declared_kinds or {}),
                   complete=max_groups is None or len(rows) <= max_groups)


# --------------------------------------------------------------------------- labels and ids


def _labels(values: pa.Array) -> list[str | None]:
    """The label of each value of a (small) array of distinct values: None where missing (null,
    NaN, empty or blank text); each label is decided by its value alone (:func:`value_text`; a float
    in its own precision)."""
    t = values.type
    if pat.is_null(t):
        return [None] * len(values)
    if pat.is_floating(t):
        dtype = np.dtype(t.to_pandas_dtype())
        return [None if v is None else float_text(v, dtype) for v in values.to_pylist()]
    return [value_text(v) for v in values.to_pylist()]


def _encode(arr: pa.Array) -> tuple[npt.NDArray[np.int64], pa.Array]:
    """``(indices, dictionary)`` of a batch column: index -1 for null. O(n), vectorised."""
    if pat.is_null(arr.type):
        return np.full(len(arr), -1, dtype=np.int64), pa.array([], type=pa.null())
    if pat.is_dictionary(arr.type):
        # A Parquet dictionary may hold a whole row group's values: keep only those of this batch.
        arr = arr.dictionary_decode()
    encoded = pc.dictionary_encode(arr)
    indices = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return indices, encoded.dictionary


class LevelValues:
    """The distinct labels of one column, each with an id 0, 1, … in order of appearance."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.labels: list[str] = []

    def ids_of(self, arr: pa.Array) -> npt.NDArray[np.int64]:
        """The id of each value of ``arr`` (-1 where missing), new labels added. O(n + distinct)."""
        indices, dictionary = _encode(arr)
        mapping = np.empty(len(dictionary) + 1, dtype=np.int64)
        mapping[-1] = -1  # index -1 (null) maps to the last slot
        ids, labels = self.ids, self.labels
        for j, label in enumerate(_labels(dictionary)):
            if label is None:
                mapping[j] = -1
                continue
            found = ids.get(label)
            if found is None:
                found = ids[label] = len(labels)
                labels.append(label)
            mapping[j] = found
        return mapping[indices]


class Paths:
    """Distinct paths of one level: ``(parent path id, value id)`` → path id, with the inverse."""

    def __init__(self) -> None:
        self.ids: dict[int, int] = {}
        self.parent: list[int] = []
        self.value: list[int] = []

    def ids_of(self, parent: npt.NDArray[np.int64], value: npt.NDArray[np.int64], base: int) -> npt.NDArray[np.int64]:
        """Path id of each (parent, value) pair (values ≥ 0), new paths added. ``base`` > every value id.
        O(n log n) for the batch's np.unique, Python work on its distinct pairs."""
        keys = parent * base + value
        unique, inverse = np.unique(keys, return_inverse=True)
        mapping = np.empty(len(unique), dtype=np.int64)
        ids = self.ids
        for j, key in enumerate(unique.tolist()):
            found = ids.get(key)
            if found is None:
                found = ids[key] = len(self.parent)
                self.parent.append(key // base)
                self.value.append(key % base)
            mapping[j] = found
        out: npt.NDArray[np.int64] = mapping[inverse.reshape(-1)]
        return out


def leaf_values(paths: Sequence[Paths]) -> list[tuple[int, ...]]:
    """The value ids along every leaf path (ids of the last level's :class:`Paths`), in id order. O(leaves × L)."""
    prefixes: list[tuple[int, ...]] = [()]
    for level in paths:
        prefixes = [prefixes[parent] + (value,) for parent, value in zip(level.parent, level.value)]
    return prefixes


# --------------------------------------------------------------------------- files


def column_kinds(
    p: pathlib.Path, fmt: TableFormat, columns: Sequence[str], dialect: CsvDialect | None = None, *,
    encoding: str | None = None,
) -> dict[str, str]:
    """The coarse kind of each of ``columns`` as the file's schema types it; DataError naming the columns if
    one is absent, or if its name is used twice."""
    schema, _ = table_schema(p, fmt, dialect, encoding=encoding)
    names = list(schema.names)
    for column in columns:
        if column not in names:
            raise column_not_found(column, f"'{p.name}'", names)
        if names.count(column) > 1:
            raise DataError(
                f"column name '{column}' is used by {names.count(column)} columns of '{p.name}'",
                "rename the columns in the file so that each name is used once",
            )
    return {c: column_kind(schema.field(names.index(c)).type) for c in columns}


def typed_format(fmt: TableFormat) -> bool:
    """Does a file of format ``fmt`` carry its columns' types (Parquet, Stata, SAS, SPSS)? A CSV/TSV or
    Excel column's "type" would be read from its cells, so nothing may be said from it."""
    return fmt not in ("csv", "tsv", "xlsx")


class FileGroups:
    """The state of :func:`count_file_groups` over the batches: each key's ids, the groups, their counts."""

    def __init__(self, keys: tuple[Key, ...], limit: int | None, *, per_row: bool = False) -> None:
        self.keys = keys
        self.limit = limit
        self.values = [LevelValues() for _ in keys]
        self.binners = [Binner(k.lower, k.upper, k.bins) if isinstance(k, BinKey) else None for k in keys]
        self.paths = [Paths() for _ in keys]
        self.counts = np.zeros(0, dtype=np.int64)
        self.rows = 0
        self.missing_rows = [0] * len(keys)
        self.first_missing: list[int | None] = [None] * len(keys)
        self.over_limit: str | None = None
        # One BinKey alone: the binner counts (np.add.at in cache-sized blocks, O(bins) memory); ``per_row``:
        # every row gets its group id (:meth:`group_ids`), as a privacy unit's bounding needs.
        self.single_bin = not per_row and len(keys) == 1 and self.binners[0] is not None
        self.n_missing = 0

    def add(self, batch: pa.RecordBatch, weights: npt.NDArray[np.int64] | None) -> bool:
        """Count one batch (weights: a prior's, else one a row); False once a limit is passed (stop reading)."""
        parent = self.group_ids(batch)
        if parent is None:
            return self.over_limit is None
        n_groups = self.n_groups
        if len(self.counts) < n_groups:
            self.counts = np.concatenate([self.counts, np.zeros(n_groups - len(self.counts), dtype=np.int64)])
        if weights is None:
            self.counts += np.bincount(parent, minlength=n_groups)
        else:
            np.add.at(self.counts, parent, weights)
        return self.limit is None or n_groups <= self.limit

    @property
    def n_groups(self) -> int:
        """The groups found so far (ids 0..n_groups-1; not kept up by a single BinKey's binner)."""
        return len(self.paths[-1].parent)

    def group_ids(self, batch: pa.RecordBatch) -> npt.NDArray[np.int64] | None:
        """The group id of each row of ``batch`` (its first columns are the keys'), new groups added; missing
        values noted. None when a single BinKey's binner counted the batch itself, or when a ValueKey column has
        more than the limit of distinct values (``over_limit`` names it: stop reading)."""
        codes = []
        for i, key in enumerate(self.keys):
            binner = self.binners[i]
            if binner is not None:
                x, n_missing = float64_values(batch.column(i))
                absent = np.isnan(x) if n_missing else None
                if self.single_bin:
                    self.n_missing += n_missing
                    binner.add(x if absent is None else x[~absent])
                else:
                    codes.append(binner.keys(x) + _BIN_OFFSET)
            else:
                ids = self.values[i].ids_of(batch.column(i))
                if self.limit is not None and len(self.values[i].labels) > self.limit:
                    self.over_limit = key.column
                    return None
                absent = ids < 0
                codes.append(ids + 1)
            if absent is not None and absent.any():
                self.missing_rows[i] += int(np.count_nonzero(absent))
                if self.first_missing[i] is None:
                    self.first_missing[i] = self.rows + int(np.argmax(absent)) + 1
        self.rows += batch.num_rows
        if self.single_bin:
            return None
        parent = np.zeros(batch.num_rows, dtype=np.int64)
        for level, code in enumerate(codes):
            parent = self.paths[level].ids_of(parent, code, _BASE)
        return parent

    def result(self, where: str, declared_kinds: Mapping[str, str], complete: bool) -> GroupedCounts:
        if self.single_bin:
            key_values, counts = self._bin_groups()
            columns = [pa.array(key_values, type=pa.int64())]
        else:
            leaves = leaf_values(self.paths)
            counts = self.counts
            columns = []
            for level, key in enumerate(self.keys):
                if isinstance(key, BinKey):
                    columns.append(pa.array([leaf[level] - _BIN_OFFSET for leaf in leaves], type=pa.int64()))
                else:
                    labels = self.values[level].labels
                    columns.append(pa.array([labels[leaf[level] - 1] if leaf[level] else None for leaf in leaves],
                                            type=pa.string()))
        counts = np.ascontiguousarray(counts, dtype=np.int64)
        counts.flags.writeable = False
        return GroupedCounts(self.keys, pa.Table.from_arrays(columns, names=[k.column for k in self.keys]), counts,
                             self.rows, where, declared_kinds, tuple(self.missing_rows), tuple(self.first_missing),
                             complete and self.over_limit is None, self.over_limit)

    def _bin_groups(self) -> tuple[list[int], npt.NDArray[np.int64]]:
        """The single BinKey's groups from its binner: clamped values apart from the end bins again."""
        binner = self.binners[0]
        assert binner is not None
        counts = binner.counts.copy()
        counts[0] -= binner.n_low
        counts[-1] -= binner.n_high
        keys = [*np.flatnonzero(counts).tolist()]
        values = [int(counts[j]) for j in keys]
        for key, n in ((KEY_MISSING, self.n_missing), (KEY_LOW, binner.n_low), (KEY_HIGH, binner.n_high)):
            if n:
                keys.append(key)
                values.append(n)
        return keys, np.asarray(values, dtype=np.int64)


@dataclass(frozen=True)
class KeyStream:
    """The checked keys of a file and the stream of their columns' batches (:func:`open_key_stream`)."""

    keys: tuple[Key, ...]
    limit: int | None
    stream: Stream[pa.RecordBatch]
    where: str
    declared_kinds: Mapping[str, str]


def open_key_stream(
    path: PathLike,
    keys: Sequence[Key],
    *,
    max_groups: int | None = None,
    weights_column: str | None = None,
    extra_column: str | None = None,
    batch_rows: int | None = None,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCallback | None = None,
    dialect: CsvDialect | None = None,
    encoding: str | None = None,
) -> KeyStream:
    """The checks of :func:`count_file_groups` before reading, and the stream of the keys' columns' batches, then
    the ``weights_column`` (a number) or the ``extra_column`` (as the file stores it; its checks are the caller's).
    ``where``: the file as messages name it; ``declared_kinds``: of the ValueKey columns a typed file declares."""
    keys = check_keys(keys)
    limit = check_max_groups(max_groups)
    if batch_rows is None:
        batch_rows = _BIN_BATCH_ROWS if len(keys) == 1 and isinstance(keys[0], BinKey) else _BATCH_ROWS
    batch_rows = _check_positive("batch_rows", batch_rows)
    check_callbacks(progress, should_cancel)
    binned = [k.column for k in keys if isinstance(k, BinKey)]
    if len(binned) > 1 or (binned and weights_column is not None):
        raise ParameterError("a file's groups have one binned column at most, and none with a count column",
                             "count one binned column at a time")
    p, fmt = check_table_file(path)
    used = csv_dialect(p, fmt, dialect)[0] if fmt in ("csv", "tsv") else None
    labelled = [k.column for k in keys if isinstance(k, ValueKey)]
    kinds = column_kinds(p, fmt, labelled, used, encoding=encoding) if labelled else {}
    if binned:
        check_numeric_column(p, fmt, binned[0], used, encoding=encoding)
    columns = [k.column for k in keys] + [c for c in (weights_column, extra_column) if c is not None]
    numeric = binned[0] if binned else weights_column
    stream = record_batches(p, fmt, columns, batch_rows, numeric=numeric, dialect=used, encoding=encoding)
    declared = {c: kinds[c] for c in labelled} if typed_format(fmt) else {}
    return KeyStream(keys, limit, stream, f"'{p.name}'", declared)


def count_file_groups(
    path: PathLike,
    keys: Sequence[Key],
    *,
    max_groups: int | None = None,
    weights: Weights | None = None,
    batch_rows: int | None = None,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCallback | None = None,
    dialect: CsvDialect | None = None,
    encoding: str | None = None,
) -> GroupedCounts:
    """The :class:`GroupedCounts` of ``keys`` in a table file (CSV/TSV, Parquet file or folder, Excel,
    Stata, SAS, SPSS), in one streamed pass.

    Checked before reading (ParameterError): the keys (at most one :class:`BinKey`, and none with
    ``weights``), ``max_groups``, ``batch_rows`` (None: 1,000,000 for one BinKey alone, else 262,144), the
    callbacks; then the file and its columns (DataError:
    a column absent or named twice; a BinKey's column not numeric, naming the first value that is not a
    number in a CSV). While reading: a value that is not a number in a BinKey's column (DataError naming
    the row). Reading stops, with ``complete`` False, as soon as a :class:`ValueKey` column has more than
    ``max_groups`` distinct values or there are more than ``max_groups`` groups. ``weights``: a prior's
    count column (:data:`Weights`), added up in place of one a row. ``dialect``: of a CSV/TSV (None:
    detected); ``encoding``: of a Stata/SAS/SPSS file's text (None: the file's own).

    ``progress(fraction)`` after each batch and 1.0 at the end; ``should_cancel()`` before each batch
    (True raises :class:`~dpgui.errors.Cancelled`); both from this thread. Time O(rows); memory
    O(batch_rows + groups + distinct values), one BinKey alone O(batch_rows + bins); never the rows.
    """
    opened = open_key_stream(path, keys, max_groups=max_groups, weights_column=None if weights is None else weights[0],
                             batch_rows=batch_rows, progress=progress, should_cancel=should_cancel, dialect=dialect,
                             encoding=encoding)
    state = FileGroups(opened.keys, opened.limit)
    complete = True
    for batch in watched(opened.stream, progress, should_cancel):
        counts = None if weights is None else weights[1](batch.column(len(opened.keys)), state.rows)
        if not state.add(batch, counts):
            complete = False
            opened.stream.close()
            break
    return state.result(opened.where, opened.declared_kinds, complete)
