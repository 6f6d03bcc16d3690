"""Streaming counts of the paths of 2–4 nested categorical columns (a hierarchy's leaves).

The data layer's side of "counts over a hierarchy": every distinct path ``(value of column 1, …, value of
column L)`` of the level columns is counted by the one counting primitive (:mod:`dpgui.data.grouped_counts`,
a :class:`~dpgui.data.grouped_counts.ValueKey` per level: a table file — CSV/TSV, Parquet, Excel, Stata,
SAS, SPSS — read batch by batch, a database's ``GROUP BY``, a Spark job), and :func:`path_counts_of` turns
the groups of any source into :class:`PathCounts` with one set of labels and checks. The tree
itself (nodes, parents, level counts) and the refusal of a value that appears under two parents are
:class:`dpgui.core.hierarchy.Hierarchy`'s (:meth:`~dpgui.core.hierarchy.Hierarchy.from_paths`, called
on every result, so a file whose levels are not nested is refused here, with the value and both
parents named); this module turns rows into path counts.

* :func:`count_paths`: the path counts of a (confidential or public) file, validated;
* :func:`path_counts_of`: the path counts of the groups a source counted (:func:`path_counts_from_groups`
  for the groups of an aggregate query given as a table);
* :func:`read_prior`: a public prior: a table of paths with a count column, or raw rows;
* :func:`level_value_counts`: the number of distinct values of candidate columns (capped), for a
  column chooser;
* :func:`hierarchy_sample_path`: the bundled sample (NYC flights 2013 by destination time zone →
  destination → route, CC0; resources/sample/README.md), with :data:`HIERARCHY_SAMPLE_LEVELS`.

Labels are strings, and each record's label is decided by its own value alone, never by the other
values of its column (what is published must not depend on the confidential values except through
the noise). A CSV/TSV cell is its text as written (``02134`` stays ``02134``, ``2.50`` stays ``2.50``);
an Excel cell, a typed file's value (Parquet, Stata, SAS, SPSS) and a database's are written without
float noise (``3`` for 3.0, ``0.1`` for 0.1, the shortest text that reads back as the stored value:
:func:`~dpgui.data.readers.value_text`). A note says that a numeric column is used as categories only
when the column's type comes from the file's or the database's own type information (a CSV or Excel
column's "type" would be read from its cells, and so would say whether some record holds a
non-number).

Missing values (null, NaN, an empty or blank cell) are refused: a hierarchy has no "missing" node
unless the user makes one.

Memory is O(batch + distinct values): each level keeps a table of its distinct values and of its
distinct paths, both capped at ``max_nodes_per_level`` (reading stops as soon as a level goes over),
never the rows. Time O(rows) in one sequential pass, vectorised per batch (numpy/pyarrow); Python
works only on the distinct values of each batch.

No Qt, no global state: safe to call from a worker thread with progress and cancel callbacks.
"""

from __future__ import annotations

import functools
import numbers
import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from dpgui.core.hierarchy import MAX_LEVELS, MAX_NODES_PER_LEVEL, MIN_LEVELS, Hierarchy, label_order_key
from dpgui.data.file_types import CsvDialect, TableFormat
from dpgui.data.grouped_counts import (
    GroupedCounts, LevelValues, Paths, ValueKey, column_kinds, count_file_groups, leaf_values,
)
from dpgui.data.readers import check_table_file, csv_dialect, record_batches, table_schema
from dpgui.data.streams import CancelCallback, PathLike, ProgressCallback, check_callbacks, watched
from dpgui.errors import DataError, ParameterError
from dpgui.resources import find_resource, resource_candidates

__all__ = [
    "DEFAULT_VALUE_COUNT_LIMIT",
    "HIERARCHY_SAMPLE_LEVELS",
    "HIERARCHY_SAMPLE_RELATIVE_PATH",
    "PathCounts",
    "check_path_count_arguments",
    "check_prior_is_not_the_data",
    "count_paths",
    "hierarchy_sample_path",
    "level_value_counts",
    "path_counts_from_groups",
    "path_counts_of",
    "read_prior",
    "too_many_paths",
]

#: :func:`level_value_counts` stops counting a column's values at this many.
DEFAULT_VALUE_COUNT_LIMIT = 100_000

#: The bundled hierarchical sample, relative to the repository / bundle root, and its level columns.
HIERARCHY_SAMPLE_RELATIVE_PATH = pathlib.PurePosixPath("resources/sample/flight_routes.parquet")
HIERARCHY_SAMPLE_LEVELS = ("dest_tzone", "dest", "route")

# Rows per streamed batch (CSV: bytes of text per block): a few int64 arrays of this length.
_BATCH_ROWS = 1 << 18


@dataclass(frozen=True, eq=False)
class PathCounts:
    """The count of every distinct path of the level columns.

    ``level_names``: the L level columns (2..4), root side first. ``paths[i]``: the labels of leaf
    path i (one per level), sorted by :func:`~dpgui.core.hierarchy.label_order_key` label by label
    (so a parent's children are contiguous, in the tree's order);
    ``counts[i]``: its number of rows (records), int64, read-only, every count ≥ 1 for counted
    data (a prior may hold zeros). ``rows`` = ``counts.sum()``: the rows counted (a prior with a
    count column: the sum of its counts).
    ``notes``: what the user should know about how the columns were read (e.g. a numeric column
    used as categories). :attr:`hierarchy`: the tree of these paths; leaf i of it is ``paths[i]``,
    so ``counts`` are its leaf counts as they are (``hierarchy.aggregate(counts)`` gives every level).
    """

    level_names: tuple[str, ...]
    paths: tuple[tuple[str, ...], ...]
    counts: npt.NDArray[np.int64]
    rows: int
    notes: tuple[str, ...] = ()

    @functools.cached_property
    def hierarchy(self) -> Hierarchy:
        """The tree (:meth:`Hierarchy.from_paths`; DataError for a value under two parents), built
        once. O(P log P) for P paths."""
        return Hierarchy.from_paths(self.level_names, self.paths)

    @property
    def n_levels(self) -> int:
        """L, the number of level columns."""
        return len(self.level_names)


# --------------------------------------------------------------------------- parameters


def _check_levels(level_columns: object, min_levels: int = MIN_LEVELS) -> tuple[str, ...]:
    """The level columns as a tuple: ``min_levels``..4 distinct non-empty names (ParameterError otherwise)."""
    if isinstance(level_columns, str) or not isinstance(level_columns, Sequence):
        raise ParameterError(
            f"level columns {level_columns!r} are not a list of column names",
            f"give {MIN_LEVELS} to {MAX_LEVELS} column names, root level first",
        )
    names = tuple(level_columns)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ParameterError(f"level column name {name!r} is not a non-empty string", "give column names")
    if len(names) < min_levels:
        raise ParameterError(
            f"a hierarchy needs at least {min_levels} level columns; {len(names)} given",
            "add the column of the level below (e.g. region, district) or release a plain count instead",
        )
    if len(names) > MAX_LEVELS:
        raise ParameterError(
            f"a hierarchy has at most {MAX_LEVELS} levels; {len(names)} columns given",
            f"keep the {MAX_LEVELS} most useful levels (drop intermediate ones)",
        )
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ParameterError(
            f"level column {repeated[0]!r} is listed twice",
            "list each column once, root level first",
        )
    return names


def _check_limit(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ParameterError(f"{name} {value!r} is not a positive integer", f"use e.g. {MAX_NODES_PER_LEVEL:,}")
    return int(value)


def _column_names(columns: object) -> list[str]:
    """``columns`` once each, in order (ParameterError unless a list of non-empty names)."""
    if isinstance(columns, str) or not isinstance(columns, Sequence):
        raise ParameterError(f"columns {columns!r} are not a list of column names", "give a list of column names")
    names = list(dict.fromkeys(columns))
    for name in names:
        if not isinstance(name, str) or not name:
            raise ParameterError(f"column name {name!r} is not a non-empty string", "give column names")
    return names


def _numeric_note(column: str) -> str:
    return f"column '{column}' is numeric; its values are used as categories"


def _numeric_notes(names: Sequence[str], kinds: Mapping[str, str]) -> tuple[str, ...]:
    """The note of each level column whose declared type (``kinds``: from type information only) is numeric."""
    return tuple(_numeric_note(c) for c in names if kinds.get(c) == "numeric")


def _too_many(column: str, limit: int, what: str = "distinct values") -> DataError:
    return DataError(
        f"level column '{column}' has more than {limit:,} {what}",
        "a level with that many values is probably an identifier; choose a coarser column or group values",
    )


def check_path_count_arguments(level_columns: object, max_nodes_per_level: object | None,
                               min_levels: int = MIN_LEVELS) -> tuple[tuple[str, ...], int]:
    """:func:`count_paths`'s checks of its arguments, for the sources that count the paths elsewhere (a
    database, Spark): the level columns (``min_levels``..4 distinct names) and the node limit (None:
    :data:`~dpgui.core.hierarchy.MAX_NODES_PER_LEVEL`). ParameterError otherwise."""
    names = _check_levels(level_columns, min_levels)
    limit = _check_limit("max_nodes_per_level", MAX_NODES_PER_LEVEL if max_nodes_per_level is None
                         else max_nodes_per_level)
    return names, limit


def too_many_paths(level_columns: Sequence[str], limit: int) -> DataError:
    """The error for more than ``limit`` leaf paths (a leaf is a node of the last level), as
    :func:`count_paths` reports it."""
    return _too_many(level_columns[-1], limit, "nodes (distinct paths from the root)")


# --------------------------------------------------------------------------- path counts


def _prior_counts(p: pathlib.Path, column: str, arr: pa.Array, rows_before: int) -> npt.NDArray[np.int64]:
    """The counts of a batch of a prior's count column as int64; DataError naming the first row
    whose count is missing, negative, not a whole number or too large. O(n)."""
    x = arr.cast(pa.float64()).fill_null(np.nan).to_numpy(zero_copy_only=False)
    checks = (
        (np.isnan(x), "has no count", "give every path a count (0 for a path with no records)"),
        (x < 0, "has a negative count", "counts are numbers of records: 0 or more"),
        (x != np.floor(x), "has a count that is not a whole number", "counts are numbers of records: whole numbers"),
        (x > 2.0**53, "has a count above 2^53", "check the count column (it holds record counts)"),
    )
    for bad, problem, fix in checks:
        if bad.any():
            row = rows_before + int(np.argmax(bad)) + 1
            raise DataError(f"count column '{column}' of '{p.name}' {problem} at data row {row:,}", fix)
    counts: npt.NDArray[np.int64] = x.astype(np.int64)
    return counts


def _path_counts(
    names: tuple[str, ...],
    leaves: list[tuple[str, ...]],
    counts: npt.NDArray[np.int64],
    rows: int,
    notes: tuple[str, ...],
) -> PathCounts:
    order = sorted(range(len(leaves)), key=lambda i: tuple(label_order_key(label) for label in leaves[i]))
    sorted_counts = np.ascontiguousarray(counts[np.asarray(order, dtype=np.int64)], dtype=np.int64)
    sorted_counts.flags.writeable = False
    return PathCounts(
        level_names=names,
        paths=tuple(leaves[i] for i in order),
        counts=sorted_counts,
        rows=rows,
        notes=notes,
    )


def count_paths(
    path: PathLike,
    level_columns: Sequence[str],
    *,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCallback | None = None,
    max_nodes_per_level: int = MAX_NODES_PER_LEVEL,
    batch_rows: int = _BATCH_ROWS,
    dialect: CsvDialect | None = None,
    encoding: str | None = None,
    min_levels: int = MIN_LEVELS,
) -> PathCounts:
    """The number of rows on every distinct path of ``level_columns`` (2..4 columns, root level
    first; from 1 with ``min_levels=1``: the count of each value of one column) of a table file
    (CSV/TSV, Parquet, Excel, Stata, SAS, SPSS), read in one streamed pass.

    Checked before reading: the level list (2..4 distinct names: ParameterError), the file and that
    every column exists (DataError listing the columns). While reading: a level with more than
    ``max_nodes_per_level`` distinct values stops the read at once (DataError), and so does a level
    with more paths than that, which means a value under two parents (DataError from
    :meth:`Hierarchy.from_paths` naming it). After it: missing or empty values in a level column
    (DataError with how many rows and the first row), a file with no data rows, and the tree of the
    paths (:attr:`PathCounts.hierarchy`, built here: a value under two parents is a DataError naming
    the value, both parents and the fix). A numeric level column is allowed (its values become
    labels; a note says so). A Stata/SPSS level column with value labels uses its codes as labels
    (``1``, ``2``, as stored), not the value labels. ``encoding``: of a Stata/SAS/SPSS file's text
    (None: the file's own).

    ``progress(fraction)`` is called after each batch and with 1.0 at the end; ``should_cancel()``
    is asked before each batch (True raises :class:`~dpgui.errors.Cancelled`). ``dialect``: of a
    CSV/TSV, None = detected. Time O(rows); memory O(batch_rows + distinct values and paths),
    never the rows.
    """
    names = _check_levels(level_columns, min_levels)
    limit = _check_limit("max_nodes_per_level", max_nodes_per_level)
    batch_rows = _check_limit("batch_rows", batch_rows)
    counted = count_file_groups(path, [ValueKey(c) for c in names], max_groups=limit, batch_rows=batch_rows,
                                progress=progress, should_cancel=should_cancel, dialect=dialect, encoding=encoding)
    return path_counts_of(counted, limit, min_levels=min_levels)


def path_counts_from_groups(
    level_names: Sequence[str],
    groups: pa.Table,
    counts: npt.ArrayLike,
    *,
    kinds: dict[str, str] | None = None,
    max_nodes_per_level: int = MAX_NODES_PER_LEVEL,
    source_name: str = "the source",
) -> PathCounts:
    """The :class:`PathCounts` of an aggregate query ``SELECT l1, …, lL, COUNT(*) … GROUP BY l1, …, lL``
    run where the data lives (a database, Spark): ``groups`` holds the level columns (one row per
    group, values as the database returns them, e.g. the :func:`value_text` of each fetched value),
    ``counts`` the rows of each group. Labels and checks are :func:`count_paths`'s: numbers become
    labels as in a Parquet file (``3`` for 3.0); a level with more than ``max_nodes_per_level``
    distinct values, missing values (null, NaN, empty text — DataError with how many rows), no rows at
    all, and a value under two parents are refused (DataError naming ``source_name``). ``kinds``: the
    coarse kind of each level column as the source's schema declares it (a note for each numeric
    one); leave out a column whose kind would be read from its values (None: no notes). O(groups × L)."""
    names = _check_levels(tuple(level_names))
    limit = _check_limit("max_nodes_per_level", max_nodes_per_level)
    if groups.num_columns != len(names):
        raise ValueError(f"groups has {groups.num_columns} columns for {len(names)} levels")
    weights = np.asarray(counts, dtype=np.int64).reshape(-1)
    if len(weights) != groups.num_rows:
        raise ValueError(f"{len(weights)} counts for {groups.num_rows} groups")
    weights.flags.writeable = False
    counted = GroupedCounts(tuple(ValueKey(c) for c in names), groups.rename_columns(list(names)), weights,
                            int(weights.sum()), source_name, dict(kinds or {}))
    return path_counts_of(counted, limit)


def path_counts_of(counted: GroupedCounts, max_nodes_per_level: int = MAX_NODES_PER_LEVEL,
                   extra_notes: tuple[str, ...] = (), min_levels: int = MIN_LEVELS) -> PathCounts:
    """The :class:`PathCounts` of the groups of 2..4 :class:`~dpgui.data.grouped_counts.ValueKey`\\ s (the level
    columns, root first) from any source, with :func:`count_paths`' labels and checks: numbers become labels as
    in a Parquet file (``3`` for 3.0); refused (DataError naming ``counted.where``): counting that stopped at a
    level with more than ``max_nodes_per_level`` distinct values or more leaves than that (a value under two
    parents is named first), missing values (null, NaN, empty text: how many rows, and in a file the first
    one's data row), no rows at all, a value under two parents. A note for each level column whose declared
    kind is numeric, then ``extra_notes``. ``min_levels=1``: one column's values (no tree to check). O(groups × L)."""
    names = _check_levels(tuple(k.column for k in counted.keys if isinstance(k, ValueKey)), min_levels)
    if len(names) != len(counted.keys):
        raise ParameterError("path counts are the counts of level columns' values", "count with ValueKeys only")
    limit = _check_limit("max_nodes_per_level", max_nodes_per_level)
    if counted.over_limit is not None:
        raise _too_many(counted.over_limit, limit)
    values = [LevelValues() for _ in names]
    ids = []
    missing: dict[str, int] = {}
    for level, column in enumerate(names):
        v = values[level].ids_of(counted.groups.column(level).combine_chunks())
        absent = v < 0
        if absent.any():
            missing[column] = int(counted.counts[absent].sum())
        ids.append(v)
    if not counted.complete:
        # More leaves than the limit: a value under two parents (the core names it) or too many leaves.
        present = np.all(np.stack(ids) >= 0, axis=0)
        Hierarchy.from_paths(names, _paths_of(values, ids, present))
        raise too_many_paths(names, limit)
    for level, column in enumerate(names):
        if len(values[level].labels) > limit:
            raise _too_many(column, limit)
    _check_rows(counted, names, missing)
    paths = [Paths() for _ in names]
    base = limit + 2
    parent = np.zeros(counted.groups.num_rows, dtype=np.int64)
    for level, column in enumerate(names):
        parent = paths[level].ids_of(parent, ids[level], base)
        if len(paths[level].parent) > limit:
            Hierarchy.from_paths(names[: level + 1], _leaf_paths(values[: level + 1], paths[: level + 1]))
            raise _too_many(column, limit, "nodes (distinct paths from the root)")
    leaf_counts = np.zeros(len(paths[-1].parent), dtype=np.int64)
    np.add.at(leaf_counts, parent, counted.counts)
    notes = (*_numeric_notes(names, counted.declared_kinds), *extra_notes)
    result = _path_counts(names, _leaf_paths(values, paths), leaf_counts, int(counted.counts.sum()), notes)
    if len(names) >= MIN_LEVELS:  # one level (the counts of one column) has no tree to check
        result.hierarchy  # noqa: B018 — builds and checks the tree (a value under two parents is refused)
    return result


def _check_rows(counted: GroupedCounts, names: tuple[str, ...], missing: dict[str, int]) -> None:
    """:func:`path_counts_of`'s refusals of missing level values (a file: counted by rows, the first one's data
    row named) and of no rows at all."""
    for level, column in enumerate(names):
        if counted.missing_rows is not None and counted.first_missing is not None:
            n_rows, first = counted.missing_rows[level], counted.first_missing[level]
            where = f" (first at data row {first:,})" if first is not None else ""
        else:
            n_rows, where = missing.get(column, 0), ""
        if n_rows:
            rows = "1 row has" if n_rows == 1 else f"{n_rows:,} rows have"
            raise DataError(f"level column '{column}' in {counted.where}: {rows} a missing or empty value{where}",
                            "fill them with a category such as \"(missing)\" or drop those rows")
    if counted.rows == 0:
        if counted.rows_numbered:
            raise DataError(f"file {counted.where} has no data rows", "choose a file with a header and data rows")
        raise DataError(f"{counted.where} has no data rows", "choose a table or query with data rows")


def _paths_of(values: list[LevelValues], ids: list[npt.NDArray[np.int64]], rows: npt.NDArray[np.bool_]
              ) -> list[tuple[str, ...]]:
    """The label paths of the groups ``rows`` (their ids per level). O(groups × L)."""
    labels = [level.labels for level in values]
    return [tuple(labels[level][int(v[i])] for level, v in enumerate(ids)) for i in np.flatnonzero(rows)]


def _leaf_paths(values: list[LevelValues], paths: list[Paths]) -> list[tuple[str, ...]]:
    """The label tuple of every leaf path id, in id order. O(leaves × L)."""
    return [tuple(values[level].labels[v] for level, v in enumerate(leaf)) for leaf in leaf_values(paths)]


def check_prior_is_not_the_data(prior: PathCounts, data: PathCounts, prior_name: str) -> None:
    """Refuse a "public prior" whose path counts are the data's: the data file itself, a copy, the data
    plus a blank line, re-sorted or re-exported, its paths with their counts, or any of these with rows
    or paths added for categories the data does not hold (a "prior" made from the data so that it lists
    more categories) — every path with records in the data holds as many in the prior. Its counts are
    the confidential ones, which the plan, its notes and a projection published "at the prior's counts"
    may use only with the explicit, recorded opt-in (counts from the data). DataError with the reason and
    the fix; to be called after the data's paths are counted and before anything is spent (the refusal
    reaches only the officer). O(paths)."""
    def nonzero(counts: PathCounts) -> dict[tuple[str, ...], int]:
        return {path: int(n) for path, n in zip(counts.paths, counts.counts.tolist()) if n}

    in_prior = nonzero(prior)
    if prior.level_names == data.level_names and all(in_prior.get(path) == n for path, n in nonzero(data).items()):
        raise DataError(f"the prior '{prior_name}' has the data's own counts on every path: they are the confidential "
                        "counts, not a public prior",
                        "give a public prior (e.g. last year's published counts), or none and opt in to using the "
                        "data's own counts (recorded in the manifest)")


def read_prior(
    path: PathLike,
    level_columns: Sequence[str],
    count_column: str = "count",
    *,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCallback | None = None,
    max_nodes_per_level: int = MAX_NODES_PER_LEVEL,
    batch_rows: int = _BATCH_ROWS,
    dialect: CsvDialect | None = None,
    encoding: str | None = None,
) -> PathCounts:
    """A public prior: the node list of the hierarchy and a count on every leaf path.

    Either a table with the level columns and ``count_column`` (non-negative whole numbers; a path
    may have count 0, so that the prior lists nodes the data may lack; a path listed twice has its
    counts added), or raw rows without that column (counted as :func:`count_paths` does, and a note
    says so). Every check of :func:`count_paths` applies; a count that is missing, negative, not a
    whole number or above 2^53 is a DataError naming the row. ``rows`` is the total count.
    ``dialect``/``encoding``: as in :func:`count_paths`. Time O(rows), memory O(batch_rows + distinct paths).
    """
    names = _check_levels(level_columns)
    if not isinstance(count_column, str) or not count_column:
        raise ParameterError(f"count column name {count_column!r} is not a non-empty string", "give e.g. 'count'")
    if count_column in names:
        raise ParameterError(
            f"column '{count_column}' is both a level column and the count column",
            "choose another count column, or leave it out of the levels",
        )
    limit = _check_limit("max_nodes_per_level", max_nodes_per_level)
    batch_rows = _check_limit("batch_rows", batch_rows)
    check_callbacks(progress, should_cancel)
    p, fmt = check_table_file(path)
    used = _dialect(p, fmt, dialect)
    schema, _ = table_schema(p, fmt, used, encoding=encoding)
    keys = [ValueKey(c) for c in names]
    if count_column not in schema.names:
        note = f"'{p.name}' has no '{count_column}' column: each of its rows was counted as one record"
        counted = count_file_groups(p, keys, max_groups=limit, batch_rows=batch_rows, progress=progress,
                                    should_cancel=should_cancel, dialect=used, encoding=encoding)
        return path_counts_of(counted, limit, (note,))
    kinds = column_kinds(p, fmt, (*names, count_column), used, encoding=encoding)
    if kinds[count_column] not in ("numeric", "empty"):
        raise DataError(
            f"count column '{count_column}' of '{p.name}' is not numeric (it holds {kinds[count_column]})",
            "make it hold the number of records of each path (whole numbers ≥ 0), or rename it if the file holds raw rows",
        )
    counted = count_file_groups(p, keys, max_groups=limit, weights=(count_column, _PriorCounts(p, count_column)),
                                batch_rows=batch_rows, progress=progress, should_cancel=should_cancel, dialect=used,
                                encoding=encoding)
    return path_counts_of(counted, limit)


class _PriorCounts:
    """A prior's count column, batch by batch: each count checked (:func:`_prior_counts`), and their sum
    kept at most 2^53 (or int64 sums up the tree could wrap around)."""

    def __init__(self, p: pathlib.Path, column: str) -> None:
        self.path, self.column, self.total = p, column, 0

    def __call__(self, arr: pa.Array, rows_before: int) -> npt.NDArray[np.int64]:
        weights = _prior_counts(self.path, self.column, arr, rows_before)
        if self.total + float(np.sum(weights, dtype=np.float64)) > 2.0**53:
            raise DataError(f"the counts of column '{self.column}' of '{self.path.name}' add up to more than 2^53 "
                            f"records (by data row {rows_before + len(arr):,})",
                            "check the count column (it holds record counts)")
        self.total += int(weights.sum())
        return weights


def _dialect(p: pathlib.Path, fmt: TableFormat, dialect: CsvDialect | None) -> CsvDialect | None:
    """The dialect a CSV/TSV is read with (detected once here if None); None for other formats."""
    return csv_dialect(p, fmt, dialect)[0] if fmt in ("csv", "tsv") else None


def level_value_counts(
    path: PathLike,
    columns: Sequence[str],
    *,
    limit: int = DEFAULT_VALUE_COUNT_LIMIT,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCallback | None = None,
    batch_rows: int = _BATCH_ROWS,
    dialect: CsvDialect | None = None,
    encoding: str | None = None,
) -> dict[str, int]:
    """The number of distinct non-missing values of each of ``columns`` (labels as in
    :func:`count_paths`: a float 3.0 and 3 are one value, CSV texts ``3`` and ``3.0`` two), capped at ``limit``: a result equal to
    ``limit`` means "``limit`` or more". For a column chooser; nothing here is released.

    One streamed pass that stops early once every column has reached ``limit``. Time O(rows),
    memory O(batch_rows + limit × columns). DataError for a missing column (listing the columns).
    ``dialect``/``encoding``: as in :func:`count_paths`.
    """
    names = _column_names(columns)
    cap = _check_limit("limit", limit)
    batch_rows = _check_limit("batch_rows", batch_rows)
    check_callbacks(progress, should_cancel)
    p, fmt = check_table_file(path)
    if not names:
        return {}
    used = _dialect(p, fmt, dialect)
    column_kinds(p, fmt, names, used, encoding=encoding)  # every column is there, once
    values = {c: LevelValues() for c in names}
    stream = record_batches(p, fmt, names, batch_rows, dialect=used, encoding=encoding)
    for batch in watched(stream, progress, should_cancel):
        open_columns = [i for i, c in enumerate(names) if len(values[c].labels) < cap]
        if not open_columns:  # every column capped: the rest of the file is not read
            stream.close()
            if progress is not None:
                progress(1.0)
            break
        for i in open_columns:
            values[names[i]].ids_of(batch.column(i))
    return {c: min(len(values[c].labels), cap) for c in names}


def hierarchy_sample_path() -> pathlib.Path:
    """Absolute path of the bundled ``flight_routes.parquet`` (levels :data:`HIERARCHY_SAMPLE_LEVELS`);
    :class:`~dpgui.errors.DataError` if it is absent."""
    path = find_resource(HIERARCHY_SAMPLE_RELATIVE_PATH)
    if path is None:
        looked = ", ".join(str(p) for p in resource_candidates(HIERARCHY_SAMPLE_RELATIVE_PATH))
        raise DataError(
            f"the hierarchy sample is missing (looked in: {looked})",
            "reinstall dpgui, or run scripts/make_hierarchy_sample.py to regenerate it",
        )
    return path
