"""The data source of a command (:mod:`dpgui.data.source` only): the location and its options, the
neighbour model it allows, the checks of its columns before the ledger is asked, and ``dpgui columns``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpgui.cli.rendering import _print
from dpgui.cli.requests import ColumnsRequest, NeighboursRequest, SourceRequest
from dpgui.errors import DataError, ParameterError
from dpgui.vocabulary import Engine, SourceKind

if TYPE_CHECKING:  # imported where used, so that the start-up stays light
    from dpgui.data.source import DataSource
    from dpgui.data.source_spec import SourceSpec


def _has_source(source: SourceRequest) -> bool:
    """Was a data source given: a location, or (Spark) a catalogue table?"""
    return source.location is not None or (source.engine == Engine.SPARK and source.table is not None)


def _source_spec(source: SourceRequest, say_note: bool = True) -> SourceSpec:
    """The :class:`~dpgui.data.source_spec.SourceSpec` of the command's options (nothing is opened), or the
    ParameterError of :func:`~dpgui.data.source_spec.parse_source` (a password in a URL, a table for a
    file, table and query, an unknown engine, …); ``say_note``: print the note on how a SQLite URL's path
    is read (the command's own reading says it; the neighbour model's reading before it does not: it is
    printed once). ``--delimiter`` alone keeps the decimal point;
    ``--decimal ,`` alone means ';'-separated, ``--decimal .`` alone ','-separated."""
    from dpgui.data.file_types import CsvDialect, format_of_name
    from dpgui.data.source_spec import parse_source
    from dpgui.data.source_spec import sqlite_url_note

    location = source.location
    if not _has_source(source):
        raise ParameterError("no data was given", "give a data file or a database URL: INPUT or --source URL|FILE")
    dialect = None
    if source.delimiter is not None or source.decimal is not None:
        decimal = source.decimal or "."
        delimiter = source.delimiter or (";" if decimal == "," else ",")
        dialect = CsvDialect.checked(delimiter, decimal)
    spec = parse_source(location or "", table=source.table, query=source.query, engine=source.engine,
                        spark_master=source.spark_master, dialect=dialect, encoding=source.encoding,
                        row_count_public=source.n_public)
    note = sqlite_url_note(location or "", spec.location) if spec.kind == SourceKind.DATABASE else None
    if note is not None and say_note:  # sqlite:///srv/x.db read as /srv/x.db
        print(f"dpgui {source.command}: note: {note}", file=sys.stderr)
    if spec.kind == SourceKind.FILE and dialect is not None and format_of_name(spec.location) not in ("csv", "tsv"):
        raise ParameterError(f"--delimiter/--decimal were given for '{Path(spec.location).name}', which is not a "
                             "CSV or TSV file", "drop --delimiter and --decimal")
    return spec


def _password_prompt(display_url: str) -> str | None:
    """Ask for a database password on the terminal (never echoed); None (cancelled) when the input ended."""
    import getpass

    try:
        return getpass.getpass(f"Password for {display_url}: ")
    except EOFError:
        return None


def _open_data(spec: SourceSpec) -> DataSource:
    """:func:`~dpgui.data.source.open_source`; a database password comes from DPGUI_DB_PASSWORD, the keyring,
    or (only when stdin is a terminal) a prompt; without any, the server's refusal says to set
    DPGUI_DB_PASSWORD (libpq's PGPASSWORD and ~/.pgpass work too). Errors: DataError with the fix."""
    from dpgui.data.source import open_source

    return open_source(spec, password_prompt=_password_prompt if sys.stdin.isatty() else None)


def _protected_paths(spec: SourceSpec) -> list[str]:
    """Files an output must never replace (nor, for a folder, write into): :func:`dpgui.data.source_spec.local_paths`."""
    from dpgui.data.source_spec import local_paths

    return local_paths(spec)


@dataclass(frozen=True)
class NeighboursChoice:
    """The neighbour model a command runs under (None: the command has none), and the note said on stderr
    once it has succeeded (an error stays one line) when a query's default made it addremove."""

    neighbours: str | None
    note: str | None = None


def _choose_neighbours(request: NeighboursRequest | None) -> NeighboursChoice:
    """``--neighbours`` of a command that has one (``request``; None: the command has none): the model asked
    for, or the data source's default — ``change`` for a file or a table, ``addremove`` for a ``--query``
    without ``--n-public`` (:func:`dpgui.data.source.neighbours_for`, which refuses ``change`` for such a
    query). Decided from the options alone, before anything is read or spent."""
    if request is None:
        return NeighboursChoice(None)
    from dpgui.vocabulary import Neighbours

    if request.source is None or not _has_source(request.source):
        return NeighboursChoice(str(Neighbours(request.asked or Neighbours.CHANGE)))  # --n-public: refused later
    from dpgui.data.source import neighbours_for

    spec = _source_spec(request.source, say_note=False)
    if spec.row_count_public and request.asked == Neighbours.ADDREMOVE:
        raise ParameterError("--n-public says that the query's row count may be published, and --neighbours addremove "
                             "keeps it private", "drop --n-public, or use --neighbours change")
    chosen = neighbours_for(spec, request.asked)
    note = QUERY_ROWS_NOTE if request.asked is None and chosen is Neighbours.ADDREMOVE else None
    return NeighboursChoice(str(chosen), note)


#: Said on stderr after a command that took ``addremove`` as a query's default model.
QUERY_ROWS_NOTE = ("note: the data is a query, and the number of rows it returns is not public, so the neighbour "
                   "model is addremove (N is private); if that number is public, give --n-public")


def _check_no_source_options(source: SourceRequest, instead: str) -> None:
    """``--synthetic`` or ``--prior`` read no data source: its options would be silently unused."""
    given = [option for option, value in (("--table", source.table), ("--query", source.query),
                                          ("--spark-master", source.spark_master), ("--delimiter", source.delimiter),
                                          ("--decimal", source.decimal), ("--encoding", source.encoding))
             if value is not None] + (["--engine"] if source.engine != Engine.LOCAL else []) + (
                 ["--n-public"] if source.n_public else [])
    if given:
        raise ParameterError(f"{given[0]} describes a data source, and {instead} reads none",
                             f"drop {given[0]}, or give the data with --source instead of {instead}")


def _check_data_columns(source: DataSource, columns: Sequence[str], numeric: bool) -> None:
    """Before the ledger is asked: every column exists (and, ``numeric``, holds numbers) in a database
    or Spark source (its schema only). A file's reader makes the same checks, naming the row of a
    non-number, while it counts, still before the spend."""
    if source.spec.kind == SourceKind.FILE:
        return
    found = {c.name: c for c in source.columns()}
    where = source.spec.display_name()
    for column in columns:
        info = found.get(column)
        if info is None:
            from dpgui.data.streams import column_not_found

            raise column_not_found(column, where, list(found))
        if numeric and info.kind not in ("numeric", "empty"):
            raise DataError(f"column '{column}' in {where} is not numeric (it holds {info.kind}, {info.dtype})",
                            "choose a numeric column, or convert it in --query (e.g. CAST(x AS double precision))")


def cmd_columns(args: argparse.Namespace) -> int:
    """``dpgui columns``: an adapter of :func:`list_columns`."""
    return list_columns(ColumnsRequest.of(args))


def list_columns(request: ColumnsRequest) -> int:
    """``dpgui columns --source …``: the source's columns (name, kind, storage type), who counts it, the
    source's public record and, for a CSV file, the dialect it is read with — stated, or its name's
    default — and the one its first lines suggest; the schema only (a database: one query with no rows;
    a CSV: its head). A CSV whose head suggests another dialect than its name's default, with none
    stated, is listed as the suggestion reads it, and said to be refused by a release until stated."""
    from dataclasses import replace

    from dpgui.data.csv_dialect import UnstatedDialect

    spec = _source_spec(request.source)
    suggested = None
    try:
        source = _open_data(spec)
    except UnstatedDialect as refused:
        suggested = refused.suggestion
        source = _open_data(replace(spec, dialect=suggested.dialect))
    with source:
        columns = source.columns()
        record = source.public_record()
        dialect = _dialect_view(source, suggested)
    if suggested is not None:
        record.pop("dialect", None)  # no release reads it so until a dialect is stated
    if request.json:
        listed: dict[str, Any] = {"source": record}
        if dialect is not None:
            listed["dialect"] = dialect
        listed["columns"] = [{"name": c.name, "kind": c.kind, "dtype": c.dtype} for c in columns]
        _print(listed, True)
        return 0
    print(f"{spec.display_name()}: {len(columns)} column(s), counted by {source.engine}")
    if dialect is not None:
        read_as = f"{dialect['delimiter_name']}-separated, decimal {dialect['decimal_name']}"
        if dialect["origin"] == "suggested":
            print(f"  read as {read_as}: suggested by its first lines, not stated; a release refuses the file until "
                  f"you state its dialect: {dialect['state_with']}")
        else:
            origin = "as stated" if dialect["origin"] == "stated" else "the default for its name"
            print(f"  read as {read_as} ({origin}); its first lines suggest {dialect['suggestion']['words']}")
    width = max((len(c.name) for c in columns), default=4)
    for c in columns:
        print(f"  {c.name:<{width}}  {c.kind:<8}  {c.dtype}")
    return 0


def _dialect_view(source: DataSource, refused: Any) -> dict[str, Any] | None:
    """For ``columns``: the CSV dialect the source reads with, its origin ("stated", "default", or
    "suggested" when ``refused`` — the :class:`~dpgui.data.csv_dialect.DetectedDialect` of a file
    refused without a stated dialect), what the first lines suggest, and the options that state it.
    None for a source that is not a CSV file read on this computer."""
    from dpgui.data.csv_dialect import detect_dialect, stated_dialect_options
    from dpgui.data.file_types import CSV_DECIMALS, CSV_DELIMITERS

    used = source.csv_dialect
    if used is None or source.spec.kind != SourceKind.FILE:
        return None
    suggestion = refused if refused is not None else detect_dialect(source.spec.location)
    origin = "suggested" if refused is not None else getattr(source.csv_dialect_origin, "value", "stated")
    suggested = suggestion.dialect
    words = suggested.describe() + ("" if suggestion.detected else " (nothing in them decides: the default)")
    return {"delimiter": used.delimiter, "decimal": used.decimal, "origin": origin,
            "delimiter_name": CSV_DELIMITERS[used.delimiter], "decimal_name": CSV_DECIMALS[used.decimal],
            "suggestion": {"delimiter": suggested.delimiter, "decimal": suggested.decimal,
                           "detected": suggestion.detected, "reason": suggestion.reason, "words": words},
            "state_with": stated_dialect_options(suggested)}
