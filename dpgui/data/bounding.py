"""The privacy unit: keep at most L rows per person, where the data lives, by one rule in every engine.

The rule (docs/privacy-model.md, "The privacy unit", gives the argument): for each person p (the text of the
person-ID column: an integer's decimal digits, a text as it is) with n_p rows,

1. number the person's rows 1..n_p by the integer ORDER of the counted keys (:func:`order_of_group`): a
   :class:`~dpgui.data.grouped_counts.BinKey`'s bin key under its public bounds, a
   :class:`~dpgui.data.grouped_counts.ValueKey`'s index in the column's public list of categories (a value
   outside the list, or missing, after all of them), key by key. Rows that tie count identically (or, outside
   the list, fall in the same "not listed" share), so which of them comes first changes no listed count;
   this numbering is the rank r;
2. keep the L ranks with the smallest ``(h(salt, p, r), r)``, ``h`` the lowercase hex MD5 of the UTF-8 text
   ``f"{salt}:{p}:{r}"`` (:func:`rank_hash`; PostgreSQL ``md5``, Spark ``md5``, SQLite the function
   :data:`SQLITE_MD5` that :mod:`dpgui.data.sql_source` registers on every connection it opens), compared
   as text in byte order.

The set of kept ranks depends on (salt, p, n_p) only, never on a value; the salt is a secret drawn from
:class:`~dpgui.core.noise.SecureRandom` for each release (:meth:`Bounding.drawn`), never published or stored
(a test source passes a fixed one). Where it runs:

* files: :func:`count_bounded_file_groups` (what :class:`~dpgui.data.file_source.FileSource` calls), one
  streamed pass holding (person, group, rows) triples, aggregated per batch of :data:`BATCH_ROWS`; past
  :data:`HOLD_TRIPLES` triples they are spilled by a hash of the person into :data:`FANOUT` files of a
  temporary folder (owner-only, always removed: also on an error or a cancel), and a file still larger
  than that is split again (at most :data:`MAX_DEPTH` times: only one person's groups can exceed it then).
  Memory: O(batch + HOLD_TRIPLES + groups); time O(rows) plus one MD5 per rank of every person with more
  than L rows (about 1 µs each);
* SQL (PostgreSQL, SQLite): :func:`bounded_source_sql`, a subquery of two ``ROW_NUMBER()`` windows that
  takes the place of the source in the one aggregate query;
* Spark: :func:`bounded_frame`, the same two windows on the DataFrame that the one ``groupBy`` job counts.

Refused (:class:`~dpgui.errors.ParameterError` / :class:`~dpgui.errors.DataError`, naming the column, never
a cell): a person-ID column that does not exist, one of floating-point numbers (a float's text differs
between engines: 7.0, 7 and 7.000000), of another type than whole numbers or text, one that is also a
counted key, a row without a person ID (null or empty text: a file names its row number), L < 1, a
categorical key without its public list.

Confidential: the number of people and of dropped rows are never logged, printed, returned or put in a
message; the spill files hold person IDs and group numbers and live only while the pass runs. No Qt.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import pathlib
import re
import tempfile
import types
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pat

from dpgui.core.privacy_unit import check_unit_fields
from dpgui.data.binning import SqlDialect, bin_key_sql
from dpgui.data.file_types import CsvDialect, TableFormat
from dpgui.data.grouped_counts import (
    BinKey, FileGroups, GroupedCounts, Key, ValueKey, check_keys, column_kinds, open_key_stream, typed_format,
)
from dpgui.data.readers import check_table_file, csv_dialect, table_schema
from dpgui.data.streams import CancelCallback, PathLike, ProgressCallback, watched
from dpgui.errors import Cancelled, DataError, ParameterError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "BATCH_ROWS",
    "FANOUT",
    "HOLD_TRIPLES",
    "MAX_DEPTH",
    "SQLITE_MD5",
    "Bounding",
    "bounded_frame",
    "bounded_source_sql",
    "check_bounding",
    "check_person_file_column",
    "check_person_kind",
    "count_bounded_file_groups",
    "kept_ranks",
    "md5_hex",
    "missing_person_sql",
    "order_of_group",
    "rank_hash",
]

#: (person, group, rows) triples held in memory before the pass spills them to files (about 40 bytes each held,
#: a few times that while a part is sorted; the whole pass measured at under 200 MiB above the process's memory
#: on 10⁷ rows, benchmarks/bench_bounding.py).
HOLD_TRIPLES = 500_000
#: Rows a batch of the pass holds (unless told otherwise).
BATCH_ROWS = 1 << 18
#: Files a spill (and each further split) writes, by a hash of the person.
FANOUT = 64
#: Splits of a spill file at most (64**3 files: a part larger than the limit is then one person's).
MAX_DEPTH = 3
#: The name of the MD5 function registered on SQLite connections (SQLite has none built in).
SQLITE_MD5 = "dpgui_md5"

_SALT = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_RESERVED = "dpgui_"  # the names of the bounding's own columns begin with it
_PERSON = "dpgui_person"
_RANK = "dpgui_rank"
_PICK = "dpgui_pick"
_SCHEMA = pa.schema([("p", pa.string()), ("g", pa.int64()), ("n", pa.int64())])


# --------------------------------------------------------------------------- the rule


@dataclass(frozen=True)
class Bounding:
    """Keep at most ``records_per_person`` (L) rows of each person of ``person_column`` (see the module docstring).

    ``categories``: the public list of each categorical key's values (labels as dpgui writes them: a text as
    it is, an integer's digits), by column; the order of the list is the order of the ranks. ``salt``: the
    secret of the pseudo-random choice (letters, digits, ``_`` and ``-``, up to 128): drawn by :meth:`drawn`
    for a release, fixed only for a test source; never shown (not in ``repr``) nor published.
    """

    person_column: str
    records_per_person: int
    salt: str = field(repr=False)
    categories: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        limit = check_unit_fields(self.person_column, self.records_per_person)
        if not isinstance(self.salt, str) or not _SALT.match(self.salt):
            raise ParameterError("the privacy unit's secret is not 1-128 letters, digits, '_' or '-'",
                                 "draw it with Bounding.drawn()")
        lists: dict[str, tuple[str, ...]] = {}
        for column, values in dict(self.categories).items():
            listed = tuple(values) if not isinstance(values, str) else ()
            if not listed or not all(isinstance(v, str) and v.strip() for v in listed):
                raise ParameterError(f"the public categories of column '{column}' are not a list of non-empty texts",
                                     "give the column's public list of categories")
            if len(set(listed)) != len(listed):
                raise ParameterError(f"the public categories of column '{column}' list a value twice",
                                     "list each category once")
            lists[str(column)] = listed
        object.__setattr__(self, "records_per_person", limit)
        object.__setattr__(self, "categories", types.MappingProxyType(lists))

    @classmethod
    def drawn(cls, person_column: str, records_per_person: int,
              categories: Mapping[str, Sequence[str]] | None = None) -> Bounding:
        """A bounding with a fresh secret salt from the operating system's CSPRNG (128 bits), for one release."""
        from dpgui.core.noise import SecureRandom

        words = SecureRandom().uint64(2)
        salt = "".join(f"{int(w):016x}" for w in words)
        return cls(person_column, records_per_person, salt, {c: tuple(v) for c, v in (categories or {}).items()})

    def public_record(self) -> dict[str, Any]:
        """What a manifest may say: the column and L (never the salt)."""
        return {"person_column": self.person_column, "records_per_person": self.records_per_person}


def check_bounding(bounding: object, keys: Sequence[Key]) -> Bounding:
    """``bounding`` for counting ``keys``: a :class:`Bounding` whose person column is not a key, with a public list
    for every :class:`~dpgui.data.grouped_counts.ValueKey` (ParameterError otherwise)."""
    if not isinstance(bounding, Bounding):
        raise ParameterError(f"{type(bounding).__name__} is not a Bounding", "give a Bounding or None")
    for key in keys:
        if key.column.startswith(_RESERVED):
            raise ParameterError(f"column name '{key.column}' begins with '{_RESERVED}', which the bounding's queries use",
                                 "rename the column (or select it under another name in a query)")
        if key.column == bounding.person_column:
            raise ParameterError(f"the person-ID column '{key.column}' is also counted",
                                 "count other columns than the one that identifies persons")
        if isinstance(key, ValueKey) and key.column not in bounding.categories:
            raise ParameterError(
                f"column '{key.column}' is counted with a privacy unit without its public list of categories",
                "give the column's public list of categories: the order of a person's rows comes from it")
    return bounding


def md5_hex(text: str | None) -> str | None:
    """The lowercase hex MD5 of ``text``'s UTF-8 bytes (None for None): the SQLite function :data:`SQLITE_MD5`."""
    return None if text is None else hashlib.md5(text.encode("utf-8")).hexdigest()  # not for secrecy: a keyed order


def rank_hash(salt: str, person: str, rank: int) -> str:
    """``h(salt, p, r)``: the lowercase hex MD5 of ``f"{salt}:{person}:{rank}"`` (UTF-8)."""
    return hashlib.md5(f"{salt}:{person}:{rank}".encode()).hexdigest()


def kept_ranks(salt: str, person: str, n_rows: int, limit: int) -> list[int]:
    """The ranks (1-based, increasing) of the rows kept of a person with ``n_rows`` rows: all when
    ``n_rows <= limit``, else the ``limit`` with the smallest ``(rank_hash, rank)``. O(n_rows) time, O(limit) memory."""
    if n_rows <= limit:
        return list(range(1, n_rows + 1))
    return sorted(heapq.nsmallest(limit, range(1, n_rows + 1), key=lambda r: (rank_hash(salt, person, r), r)))


def order_of_group(keys: Sequence[Key], values: Sequence[Any], bounding: Bounding) -> tuple[int, ...]:
    """The integer ORDER of a row whose keys have ``values`` (a BinKey's bin key, a ValueKey's label or None):
    the bin key, or the index in the public list (a value outside it, or missing, after all of them)."""
    out = []
    for key, value in zip(keys, values, strict=True):
        if isinstance(key, BinKey):
            out.append(int(value))
        else:
            index = _category_index(bounding.categories[key.column])
            out.append(index.get(value, len(index)) if value is not None else len(index))
    return tuple(out)


@functools.lru_cache(maxsize=16)
def _category_index(listed: tuple[str, ...]) -> dict[str, int]:
    """Each listed category's index."""
    return {value: i for i, value in enumerate(listed)}


# --------------------------------------------------------------------------- files


def check_person_kind(column: str, where: str, kind: str, integer: bool) -> None:
    """DataError unless a person-ID column of ``kind`` holds whole numbers (``integer``) or text."""
    if kind == "numeric" and not integer:
        raise DataError(f"the person-ID column '{column}' of {where} holds floating-point numbers, whose text "
                        "differs between engines (7, 7.0), so rows could not be told to one person alike",
                        "store the IDs as whole numbers or as text")
    if kind not in ("numeric", "text", "empty"):
        raise DataError(f"the person-ID column '{column}' of {where} holds {kind} values",
                        "use a column of whole numbers or text as the person ID")


def check_person_file_column(p: pathlib.Path, fmt: TableFormat, column: str, dialect: CsvDialect | None, *,
                             encoding: str | None = None) -> None:
    """DataError unless the file has ``column`` once, of whole numbers or text where the file types it (a CSV
    column is read as its text)."""
    kind = column_kinds(p, fmt, [column], dialect, encoding=encoding)[column]
    if typed_format(fmt) or fmt == "xlsx":
        schema, _ = table_schema(p, fmt, dialect, encoding=encoding)
        arrow_type = schema.field(schema.names.index(column)).type
        if pat.is_dictionary(arrow_type):
            arrow_type = arrow_type.value_type
        check_person_kind(column, f"'{p.name}'", kind, pat.is_integer(arrow_type))


def _person_texts(arr: pa.Array | pa.ChunkedArray, column: str, where: str, rows_before: int) -> pa.Array:
    """Each row's person as text (an integer's digits, a text as it is); DataError naming the first row
    without one (null or empty text) or a floating-point value (an Excel batch)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pat.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if pat.is_floating(arr.type) or not (pat.is_integer(arr.type) or pat.is_string(arr.type)
                                         or pat.is_large_string(arr.type) or pat.is_null(arr.type)):
        check_person_kind(column, where, "numeric" if pat.is_floating(arr.type) else str(arr.type), False)
    texts = arr.cast(pa.string())
    absent = np.asarray(pc.equal(texts, "").fill_null(True).to_numpy(zero_copy_only=False), dtype=bool)
    if absent.any():
        row = rows_before + int(np.argmax(absent)) + 1
        raise DataError(f"the person-ID column '{column}' of {where} has no ID at data row {row:,}",
                        "give every row its person's ID (or leave such rows out of the data)")
    return texts


def _aggregate(table: pa.Table) -> pa.Table:
    """The (person, group) pairs of ``table`` with their rows added up (columns p, g, n)."""
    summed = table.group_by(["p", "g"], use_threads=False).aggregate([("n", "sum")])
    return pa.table({"p": summed["p"], "g": summed["g"], "n": summed["n_sum"]}, schema=_SCHEMA)


def _parts_of(table: pa.Table, depth: int) -> tuple[pa.Table, npt.NDArray[np.int64]]:
    """``table`` sorted by the spill file of each row (a hash of the person and ``depth``), and where each file's
    rows start (FANOUT + 1 offsets)."""
    encoded = table["p"].combine_chunks().dictionary_encode()
    part_of = np.fromiter((zlib.crc32(f"{depth}:{p}".encode()) % FANOUT for p in encoded.dictionary.to_pylist()),
                          dtype=np.int64, count=len(encoded.dictionary))
    part = part_of[encoded.indices.to_numpy(zero_copy_only=False)]
    order = np.argsort(part, kind="stable")
    starts = np.searchsorted(part[order], np.arange(FANOUT + 1))
    return table.take(pa.array(order)), starts


class _Spill:
    """Spill files of one depth in ``folder``: ``FANOUT`` Arrow streams, written by a hash of the person."""

    def __init__(self, folder: pathlib.Path, depth: int) -> None:
        self.folder = folder
        self.depth = depth
        self.paths = [folder / f"part-{j}.arrows" for j in range(FANOUT)]
        self.sizes = [0] * FANOUT
        self._writers: list[Any] = [None] * FANOUT

    def write(self, table: pa.Table) -> None:
        ordered, starts = _parts_of(table, self.depth)
        for j in range(FANOUT):
            size = int(starts[j + 1] - starts[j])
            if size == 0:
                continue
            if self._writers[j] is None:
                self._writers[j] = pa.ipc.new_stream(str(self.paths[j]), _SCHEMA)
            self._writers[j].write_table(ordered.slice(int(starts[j]), size))
            self.sizes[j] += size

    def close(self) -> None:
        for writer in self._writers:
            if writer is not None:
                writer.close()
        self._writers = [None] * FANOUT


def _split(path: pathlib.Path, folder: pathlib.Path, depth: int) -> _Spill:
    """The rows of spill file ``path`` split again by the person's hash at ``depth`` into ``folder``."""
    folder.mkdir()
    spill = _Spill(folder, depth)
    try:
        with pa.ipc.open_stream(str(path)) as reader:
            for batch in reader:
                spill.write(pa.Table.from_batches([batch]))
    finally:
        spill.close()
    path.unlink()
    return spill


def _spilled_parts(spill: _Spill, should_cancel: CancelCallback | None) -> Iterator[pa.Table]:
    """Every spill file's rows as one table, a file larger than :data:`HOLD_TRIPLES` split again first; each
    file is removed once read."""
    for path, size in zip(spill.paths, spill.sizes):
        if size == 0:
            continue
        if should_cancel is not None and should_cancel():
            raise Cancelled()
        if size > HOLD_TRIPLES and spill.depth < MAX_DEPTH:
            yield from _spilled_parts(_split(path, spill.folder / f"{path.stem}-split", spill.depth + 1), should_cancel)
            continue
        with pa.ipc.open_stream(str(path)) as reader:
            table = reader.read_all()
        path.unlink()
        yield table


class _PersonGroups:
    """The pass's (person, group, rows) triples: in memory up to :data:`HOLD_TRIPLES`, then spilled to ``folder``."""

    def __init__(self, folder: pathlib.Path) -> None:
        self.folder = folder
        self.held: list[pa.Table] = []
        self.n_held = 0
        self.spill: _Spill | None = None

    def add(self, persons: pa.Array, groups: npt.NDArray[np.int64]) -> None:
        ones = pa.array(np.ones(len(groups), dtype=np.int64))
        table = _aggregate(pa.table({"p": persons, "g": pa.array(groups, type=pa.int64()), "n": ones}, schema=_SCHEMA))
        if self.spill is not None:
            self.spill.write(table)
            return
        self.held.append(table)
        self.n_held += table.num_rows
        if self.n_held > HOLD_TRIPLES:
            self.spill = _Spill(self.folder, 0)
            for held in self.held:
                self.spill.write(held)
            self.held, self.n_held = [], 0

    def close(self) -> None:
        """Close the spill files being written (idempotent)."""
        if self.spill is not None:
            self.spill.close()

    def parts(self, should_cancel: CancelCallback | None) -> Iterator[pa.Table]:
        """Tables that each hold all the triples of their persons."""
        if self.spill is None:
            if self.held:
                yield pa.concat_tables(self.held)
            return
        self.spill.close()
        yield from _spilled_parts(self.spill, should_cancel)


def _keep(part: pa.Table, position: npt.NDArray[np.int64], bounding: Bounding, kept: npt.NDArray[np.int64],
          should_cancel: CancelCallback | None) -> None:
    """Add to ``kept[g]`` the rows of group g that the rule keeps among the persons of ``part`` (every person's
    triples are in it); ``position[g]``: group g's place in the ORDER (ties broken by group id)."""
    table = _aggregate(part)
    encoded = table["p"].combine_chunks().dictionary_encode()
    person = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    group = table["g"].to_numpy()
    rows = table["n"].to_numpy()
    order = np.lexsort((position[group], person))
    person, group, rows = person[order], group[order], rows[order]
    starts = np.flatnonzero(np.r_[True, person[1:] != person[:-1]])
    totals = np.add.reduceat(rows, starts) if len(starts) else np.zeros(0, dtype=np.int64)
    limit = bounding.records_per_person
    small = np.repeat(totals <= limit, np.diff(np.r_[starts, len(person)]))
    np.add.at(kept, group[small], rows[small])
    names = encoded.dictionary
    for count, i in enumerate(np.flatnonzero(totals > limit).tolist()):
        if count % 1024 == 0 and should_cancel is not None and should_cancel():
            raise Cancelled()
        start, end = int(starts[i]), int(starts[i + 1]) if i + 1 < len(starts) else len(person)
        ends = np.cumsum(rows[start:end])
        chosen = np.asarray(kept_ranks(bounding.salt, names[int(person[start])].as_py(), int(totals[i]), limit))
        np.add.at(kept, group[start:end][np.searchsorted(ends, chosen, side="left")], 1)


def _positions(found: GroupedCounts, bounding: Bounding) -> npt.NDArray[np.int64]:
    """Each group's place in the ORDER of its keys' values (:func:`order_of_group`; ties by group id)."""
    values = [found.key_values(j) for j in range(len(found.keys))]
    orders = [order_of_group(found.keys, row, bounding) for row in zip(*values, strict=True)]
    sort = sorted(range(len(orders)), key=lambda g: (orders[g], g))
    position = np.empty(len(orders), dtype=np.int64)
    position[sort] = np.arange(len(orders), dtype=np.int64)
    return position


def count_bounded_file_groups(
    path: PathLike,
    keys: Sequence[Key],
    bounding: Bounding,
    *,
    max_groups: int | None = None,
    batch_rows: int | None = None,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCallback | None = None,
    dialect: CsvDialect | None = None,
    encoding: str | None = None,
) -> GroupedCounts:
    """The :class:`~dpgui.data.grouped_counts.GroupedCounts` of ``keys`` among the rows of a table file that
    ``bounding`` keeps: :func:`~dpgui.data.grouped_counts.count_file_groups`' checks and one streamed pass (see
    the module docstring for its memory), then the choice per person. The groups no kept row falls in are left out;
    rows are not numbered (``first_missing`` None, as a database's). Progress: the pass to 0.9, the choice after
    it; the temporary folder is removed whatever happens. Checked before reading: the bounding for the keys
    (ParameterError), the person column (DataError); while reading, a row without an ID (DataError naming it)."""
    check_bounding(bounding, check_keys(keys))
    p, fmt = check_table_file(path)
    used = csv_dialect(p, fmt, dialect)[0] if fmt in ("csv", "tsv") else None
    check_person_file_column(p, fmt, bounding.person_column, used, encoding=encoding)
    opened = open_key_stream(p, keys, max_groups=max_groups, extra_column=bounding.person_column,
                             batch_rows=BATCH_ROWS if batch_rows is None else batch_rows, progress=progress,
                             should_cancel=should_cancel, dialect=used, encoding=encoding)
    state = FileGroups(opened.keys, opened.limit, per_row=True)
    column = bounding.person_column
    stream, where, declared_kinds = opened.stream, opened.where, opened.declared_kinds
    complete = True
    scaled = None if progress is None else (lambda fraction: progress(0.9 * fraction))
    with tempfile.TemporaryDirectory(prefix="dpgui-bounding-") as folder:
        triples = _PersonGroups(pathlib.Path(folder))
        try:  # the spill files are closed before the folder goes (a system may refuse to remove an open file)
            for batch in watched(stream, scaled, should_cancel):
                before = state.rows
                ids = state.group_ids(batch)
                if ids is None or (state.limit is not None and state.n_groups > state.limit):
                    complete = False
                    stream.close()
                    break
                triples.add(_person_texts(batch.column(batch.num_columns - 1), column, where, before), ids)
            state.counts = np.zeros(state.n_groups, dtype=np.int64)
            found = state.result(where, declared_kinds, complete)
            position = _positions(found, bounding)
            kept = np.zeros(len(position), dtype=np.int64)
            for part in triples.parts(should_cancel):
                _keep(part, position, bounding, kept, should_cancel)
        finally:
            triples.close()
    present = kept > 0
    counts = np.ascontiguousarray(kept[present])
    counts.flags.writeable = False
    groups = found.groups.filter(pa.array(present, type=pa.bool_()))
    result = GroupedCounts(found.keys, groups, counts, int(counts.sum()), where, dict(declared_kinds),
                           complete=found.complete, over_limit=found.over_limit)
    if progress is not None:
        progress(1.0)
    return result


# --------------------------------------------------------------------------- SQL


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _category_index_sql(column: str, listed: Sequence[str], text_type: str) -> str:
    cases = " ".join(f"WHEN {_sql_text(v)} THEN {i}" for i, v in enumerate(listed))
    return (f"CASE WHEN {column} IS NULL THEN {len(listed)} ELSE CASE CAST({column} AS {text_type}) {cases} "
            f"ELSE {len(listed)} END END")


def bounded_source_sql(source_sql: str, keys: Sequence[Key], bounding: Bounding, dialect: SqlDialect,
                       quote: Callable[[str], str]) -> str:
    """A parenthesised subquery of the keys' columns of the rows the rule keeps from ``source_sql`` (PostgreSQL
    or SQLite; ParameterError for another dialect): the rank window, then the pick window over the hash."""
    if dialect not in (SqlDialect.POSTGRESQL, SqlDialect.SQLITE):
        raise ParameterError("a privacy unit is counted in PostgreSQL, SQLite or Spark only",
                             "export the table to a file, or use PostgreSQL")
    columns = [quote(k.column) for k in keys]
    orders = [bin_key_sql(f"s.{c}", k.lower, k.upper, k.bins, dialect) if isinstance(k, BinKey)
              else _category_index_sql(f"s.{c}", bounding.categories[k.column], "TEXT")
              for k, c in zip(keys, columns)]
    person = f"CAST(s.{quote(bounding.person_column)} AS TEXT)"
    md5 = "md5" if dialect is SqlDialect.POSTGRESQL else SQLITE_MD5
    collate = ' COLLATE "C"' if dialect is SqlDialect.POSTGRESQL else ""
    digest = f"{md5}({_sql_text(bounding.salt + ':')} || r.{_PERSON} || ':' || CAST(r.{_RANK} AS TEXT))"
    ranked = (f"SELECT {', '.join(f's.{c}' for c in columns)}, {person} AS {_PERSON}, "
              f"ROW_NUMBER() OVER (PARTITION BY {person} ORDER BY {', '.join(orders)}) AS {_RANK} "
              f"FROM {source_sql} AS s")
    picked = (f"SELECT {', '.join(f'r.{c}' for c in columns)}, ROW_NUMBER() OVER (PARTITION BY r.{_PERSON} "
              f"ORDER BY {digest}{collate}, r.{_RANK}) AS {_PICK} FROM ({ranked}) AS r")
    return (f"(SELECT {', '.join(f'b.{c}' for c in columns)} FROM ({picked}) AS b "
            f"WHERE b.{_PICK} <= {bounding.records_per_person})")


def missing_person_sql(source_sql: str, column: str) -> str:
    """A query whose one row holds 1 if some row of ``source_sql`` has no ID in ``column`` (null or ''), else 0."""
    return (f"SELECT COUNT(*) FROM (SELECT 1 AS m FROM {source_sql} AS s WHERE s.{column} IS NULL "
            f"OR CAST(s.{column} AS TEXT) = '' LIMIT 1) AS m")


# --------------------------------------------------------------------------- Spark


def bounded_frame(frame: DataFrame, keys: Sequence[Key], bounding: Bounding, quote: Callable[[str], str]) -> DataFrame:
    """The keys' columns of the rows of ``frame`` the rule keeps: the same two windows as :func:`bounded_source_sql`."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812 - PySpark's usual name

    orders = []
    for key in keys:
        if isinstance(key, BinKey):
            orders.append(F.expr(bin_key_sql(quote(key.column), key.lower, key.upper, key.bins, SqlDialect.SPARK)))
        else:
            listed = bounding.categories[key.column]
            found = F.array_position(F.array(*[F.lit(v) for v in listed]), F.col(quote(key.column)).cast("string"))
            orders.append(F.when(found.isNull() | (found == 0), F.lit(len(listed))).otherwise(found - 1))
    person = F.col(quote(bounding.person_column)).cast("string")
    ranked = frame.select(*[F.col(quote(k.column)) for k in keys],
                          *[o.alias(f"dpgui_order{i}") for i, o in enumerate(orders)], person.alias(_PERSON))
    ranked = ranked.withColumn(_RANK, F.row_number().over(
        Window.partitionBy(_PERSON).orderBy(*[f"dpgui_order{i}" for i in range(len(orders))])))
    digest = F.md5(F.concat(F.lit(bounding.salt + ":"), F.col(_PERSON), F.lit(":"), F.col(_RANK).cast("string")))
    picked = ranked.withColumn(_PICK, F.row_number().over(Window.partitionBy(_PERSON).orderBy(digest, F.col(_RANK))))
    return picked.filter(F.col(_PICK) <= bounding.records_per_person).select(*[F.col(quote(k.column)) for k in keys])

