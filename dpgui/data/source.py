"""One interface to the data, wherever it lives: files on this computer, SQL databases, Spark.

A release needs only K bin counts (or a hierarchy's path counts), so the counting runs where the
data is and only counts come back: for a database, one aggregate query (the rows never leave it);
for Spark, one Spark SQL job. The window, the command line and the self-test use only this module
(:func:`open_source`) to read confidential data; the readers behind it are
:mod:`dpgui.data.readers` (files), :mod:`dpgui.data.sql_source` (SQLAlchemy) and
:mod:`dpgui.data.spark_source` (PySpark, an optional extra).

* :class:`SourceSpec`: what to read, with nothing secret in it (a database URL never holds a
  password: :func:`parse_source` refuses one). It is what project files and autosaves store, and
  :meth:`SourceSpec.public_record` is what manifests and the ledger record.
* :class:`DataSource`: an open source: columns with kinds, a preview of the first rows, the row
  count, the histogram of one numeric column under the one binning rule
  (:mod:`dpgui.data.binning`) and the path counts of 2..4 level columns, each with progress and
  cancel. Every source gives exactly the counts the file path gives on the same data
  (tests/unit/data/test_sources_agree.py).

Errors are :class:`~dpgui.errors.DataError` / :class:`~dpgui.errors.ParameterError` with the
problem and the fix in one line; nothing here writes a file. No Qt.
"""

from __future__ import annotations

import abc
import pathlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from dpgui.core.missing import MISSING_DROP
from dpgui.data.csv_dialect import DialectOrigin
from dpgui.data.file_types import CsvDialect
from dpgui.errors import ParameterError
from dpgui.vocabulary import Engine, Neighbours

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from dpgui.data.hierarchy import PathCounts
    from dpgui.data.histogram import ColumnHistogram
    from dpgui.data.readers import CancelCallback, ProgressCallback
    from dpgui.data.table import ColumnInfo

__all__ = [
    "DataSource",
    "PasswordPrompt",
    "SourceKind",
    "SourceSpec",
    "local_paths",
    "neighbours_for",
    "open_source",
    "parse_source",
]

SourceKind = Literal["file", "database", "spark"]
#: Asked for a database password when none is in the environment or the keyring:
#: ``prompt(display_url) -> password`` (None: the user cancelled).
PasswordPrompt = Callable[[str], "str | None"]


@dataclass(frozen=True)
class SourceSpec:
    """What to read; holds no secret (safe in project files, autosaves, logs, manifests).

    ``kind``: "file" (``location`` = a file or a folder of Parquet files on this computer),
    "database" (``location`` = an SQLAlchemy URL without a password, e.g.
    ``postgresql://alice@db.example.org:5432/census`` or ``sqlite:///path/to.db``) or "spark"
    (``location`` = a path Spark can read — Parquet/CSV file or folder —, or "" with ``table``).
    ``table`` / ``query``: for databases and Spark, a table name or one read-only SELECT (exactly
    one of them; a file takes neither). ``dialect``: CSV files only, as the officer stated it; None =
    the file name's default (a release refuses a file whose first lines suggest another dialect).
    ``encoding``: the text encoding of a SAS/Stata/SPSS file (or a CSV read by Spark) when it is not
    the file's own (None = the file's own / UTF-8); refused for anything else, which would not use it.
    ``spark_master``: Spark only (None = ``local[2]``).
    ``row_count_public``: for a query only, the officer's statement that the number of rows it returns
    is public (``--n-public``, the window's box); without it that number is private (see
    :attr:`row_count_may_be_public`).
    """

    kind: SourceKind
    location: str
    table: str | None = None
    query: str | None = None
    dialect: CsvDialect | None = None
    encoding: str | None = None
    spark_master: str | None = None
    row_count_public: bool = False

    @property
    def row_count_may_be_public(self) -> bool:
        """May a release publish this source's row count N (the neighbour model ``change``)? Yes for a file,
        a table or a Spark dataset: their row count is the dataset's size, public under ``change``. For a
        query only with the officer's statement (:attr:`row_count_public`): a query selects a group (``WHERE
        region = 'south'``), and its size is not public because the table's is."""
        return self.query is None or self.row_count_public

    def display_name(self) -> str:
        """Short words for titles and messages: the file name (a Spark dataset's too), or "table T in URL",
        "query on URL"."""
        if self.kind == "file" or (self.kind == "spark" and self.table is None and self.query is None):
            return pathlib.Path(self.location.rstrip("/\\")).name or self.location
        where = self.location or "Spark"
        if self.table:
            return f"table {self.table} in {where}"
        return f"query on {where}"

    def public_record(self) -> dict[str, Any]:
        """The source as recorded in a manifest: kind, and for databases and Spark the server's URL (no
        password: there is none in a spec) or, for an SQLite file or a local Spark dataset, only its
        name, and the table or the query; for files the format and dialect only (a path may name a
        user or a project, so it is left out)."""
        from dpgui.data.file_types import format_of_name

        record: dict[str, Any] = {"kind": self.kind}
        if self.kind == "file":
            fmt = format_of_name(self.location) or ("parquet" if pathlib.Path(self.location).is_dir() else "unknown")
            record["format"] = fmt
            if self.dialect is not None:
                record["dialect"] = {"delimiter": self.dialect.delimiter, "decimal": self.dialect.decimal,
                                     "origin": DialectOrigin.STATED.value}
        else:
            record["location"] = self._public_location()
            if self.table is not None:
                record["table"] = self.table
            if self.query is not None:
                record["query"] = self.query
                record["row_count_public"] = self.row_count_public  # the officer's statement, or False
            if self.kind == "spark":
                record["spark_master"] = self.spark_master or "local[2]"
        if self.encoding is not None:
            record["encoding"] = self.encoding
        return record

    def _public_location(self) -> str:
        """The location for a manifest: a server's URL as it is (it holds no password); a path on this
        computer (an SQLite file, a local Spark dataset) reduced to its last name, as for files."""
        local = local_paths(self)
        if not local:
            return self.location
        name = pathlib.Path(local[0].rstrip("/\\")).name
        if self.kind == "database":
            scheme = self.location.split(":", 1)[0]
            return f"{scheme}:///{name}"
        return name

    def to_json(self) -> dict[str, Any]:
        """Every field, for project files (:meth:`from_json` reads it back)."""
        return {
            "kind": self.kind,
            "location": self.location,
            "table": self.table,
            "query": self.query,
            "dialect": None if self.dialect is None else {"delimiter": self.dialect.delimiter,
                                                          "decimal": self.dialect.decimal},
            "encoding": self.encoding,
            "spark_master": self.spark_master,
            "row_count_public": self.row_count_public,
        }

    @classmethod
    def from_json(cls, doc: object) -> SourceSpec:
        """The spec of :meth:`to_json` (ParameterError for anything else, e.g. an edited file)."""
        if not isinstance(doc, dict) or doc.get("kind") not in ("file", "database", "spark"):
            raise ParameterError("the data source record is not valid", "open the data again")
        dialect = doc.get("dialect")
        spec = cls(
            kind=doc["kind"],
            location=_text(doc.get("location"), "location", allow_empty=doc["kind"] == "spark"),
            table=_optional_text(doc.get("table"), "table"),
            query=_optional_text(doc.get("query"), "query"),
            dialect=None if dialect is None else CsvDialect.checked(
                _text(dialect.get("delimiter") if isinstance(dialect, dict) else None, "delimiter"),
                _text(dialect.get("decimal") if isinstance(dialect, dict) else None, "decimal")),
            encoding=_optional_text(doc.get("encoding"), "encoding"),
            spark_master=_optional_text(doc.get("spark_master"), "spark_master"),
            row_count_public=doc.get("row_count_public", False) is True,  # files saved before it: not stated
        )
        return parse_source(spec.location, table=spec.table, query=spec.query,
                            engine=Engine.SPARK if spec.kind == "spark" else Engine.LOCAL, spark_master=spec.spark_master,
                            dialect=spec.dialect, encoding=spec.encoding, row_count_public=spec.row_count_public)


def _text(value: object, what: str, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not allow_empty):
        raise ParameterError(f"the data source's {what} is not valid", "open the data again")
    return value


def _optional_text(value: object, what: str) -> str | None:
    return None if value is None else _text(value, what)


class DataSource(abc.ABC):
    """An open source of confidential rows. Use as a context manager (or call :meth:`close`).

    Every method may be called from a worker thread (one call at a time per source); those that
    read the data take ``progress(fraction)`` (0..1, called with 1.0 at the end; a database reports
    0 then 1: one query) and ``should_cancel()`` (True raises :class:`~dpgui.errors.Cancelled`;
    a database query in flight is cancelled on the server where the driver allows it).
    """

    spec: SourceSpec
    #: The CSV dialect the data is read with: ``spec.dialect`` (stated by the officer) or the file name's
    #: default, never one read from the cells (:mod:`dpgui.data.csv_dialect`); None if not CSV.
    csv_dialect: CsvDialect | None = None
    #: Where :attr:`csv_dialect` comes from (recorded with it); None if not CSV.
    csv_dialect_origin: DialectOrigin | None = None

    @property
    @abc.abstractmethod
    def engine(self) -> str:
        """Who counts the data, in words for the window and the report: "this computer",
        "the database (PostgreSQL 15.18)", "Spark (local[2])"."""

    @abc.abstractmethod
    def columns(self) -> tuple[ColumnInfo, ...]:
        """The columns: name, kind ('numeric', 'text', …, as :class:`~dpgui.data.table.ColumnInfo`)
        and storage type, in source order. Cheap (schema only)."""

    @abc.abstractmethod
    def preview(self, n_rows: int = 100) -> pd.DataFrame:
        """The first ``n_rows`` rows (fewer if the source has fewer), for their owner to see on this
        computer; value labels (SPSS/Stata/SAS formats) are shown as "code (label)" text."""

    @abc.abstractmethod
    def row_count(
        self, *, progress: ProgressCallback | None = None, should_cancel: CancelCallback | None = None
    ) -> int:
        """The exact number of data rows (a database: one COUNT(*))."""

    @abc.abstractmethod
    def histogram(
        self,
        column: str,
        lower: float,
        upper: float,
        bins: int,
        missing: str = MISSING_DROP,
        *,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
    ) -> ColumnHistogram:
        """The counts of ``column`` in ``bins`` bins on [lower, upper) under the one binning rule
        (:mod:`dpgui.data.binning`; out-of-range values clamped into the end bins, missing values
        — null, NaN — counted in ``n_missing``), equal to what
        :func:`dpgui.data.histogram.column_histogram` gives for the same rows in a file."""

    @abc.abstractmethod
    def path_counts(
        self,
        level_columns: Sequence[str],
        *,
        max_nodes_per_level: int | None = None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
        min_levels: int = 2,
    ) -> PathCounts:
        """The number of rows on every distinct path of 2..4 level columns (from 1 with ``min_levels=1``:
        the count of each value of one column), as :func:`dpgui.data.hierarchy.count_paths` gives for the
        same rows in a file (labels, checks, notes)."""

    @abc.abstractmethod
    def distinct_counts(
        self,
        columns: Sequence[str],
        limit: int = 100_000,
        *,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
    ) -> dict[str, int]:
        """The number of distinct non-missing values of each of ``columns``, capped at ``limit`` (a
        result equal to ``limit`` means "``limit`` or more"): the hierarchy column chooser's hint,
        nothing here is released. A file: :func:`dpgui.data.hierarchy.level_value_counts` (labels as
        :func:`~dpgui.data.hierarchy.count_paths` makes them: 3 and 3.0 are one value); a database or
        Spark: one query (COUNT(DISTINCT …) per column, NULL not counted), which counts the stored
        values: a float column's NaN, or 3 and 3.0 stored as text, may count differently than in a
        file. DataError for a missing column; ParameterError for a bad ``limit``."""

    def public_record(self) -> dict[str, Any]:
        """What a release's manifest and ledger entry say about its data: :meth:`SourceSpec.public_record`
        (never a password, never a file's path), ``engine``, who counted it, and the CSV ``dialect`` the
        data was read with and its ``origin`` ("stated" by the officer, or the file name's "default")."""
        record = self.spec.public_record()
        record.pop("dialect", None)  # the spec's, when given; the dialect used is the one to record
        if self.csv_dialect is not None:
            record["dialect"] = {"delimiter": self.csv_dialect.delimiter, "decimal": self.csv_dialect.decimal}
            if self.csv_dialect_origin is not None:
                record["dialect"]["origin"] = self.csv_dialect_origin.value
        record["engine"] = self.engine
        return record

    def close(self) -> None:  # noqa: B027 - sources with nothing to release need not override it
        """Release connections (idempotent)."""

    def __enter__(self) -> DataSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class _Registry:
    """Where each kind is implemented (imported on first use: SQLAlchemy and PySpark are heavy)."""

    modules: dict[str, str] = field(default_factory=lambda: {
        "file": "dpgui.data.file_source",
        "database": "dpgui.data.sql_source",
        "spark": "dpgui.data.spark_source",
    })


_REGISTRY = _Registry()


def parse_source(
    location: str | pathlib.Path,
    *,
    table: str | None = None,
    query: str | None = None,
    engine: str = Engine.LOCAL,
    spark_master: str | None = None,
    dialect: CsvDialect | None = None,
    encoding: str | None = None,
    row_count_public: bool = False,
) -> SourceSpec:
    """The spec for ``--source LOCATION [--table T | --query Q [--n-public]] [--engine spark]``: a URL
    with a scheme (``postgresql://…``, ``sqlite:///…``) is a database, anything else a file or folder;
    ``engine="spark"`` makes it a Spark source. Checked here (ParameterError with the fix): a
    password in a URL (refused: use the environment, the keyring or the prompt), table and query
    together, a table or query for a file, a dialect for a database, an encoding for a database or a
    file other than SAS/Stata/SPSS, an unknown engine, the statement ``row_count_public`` without a query.
    Nothing is opened."""
    from dpgui.data import source_spec

    return source_spec.parse_source(location, table=table, query=query, engine=engine, spark_master=spark_master,
                                    dialect=dialect, encoding=encoding, row_count_public=row_count_public)


def neighbours_for(spec: SourceSpec, requested: str | None) -> Neighbours:
    """The neighbour model of a release from ``spec`` (docs/privacy-model.md "Neighbours and what is public").

    ``requested`` None (the user chose none): ``change`` when the source's row count may be public
    (:attr:`SourceSpec.row_count_may_be_public`: a file, a table, a Spark dataset, a query stated public),
    else ``addremove``, which keeps N private. ``change`` requested for a query whose row count was not
    stated public is refused (ParameterError with the fix): the release would publish the query's exact
    row count. Decided from the spec alone, before anything is read or spent."""
    if requested is None:
        return Neighbours.CHANGE if spec.row_count_may_be_public else Neighbours.ADDREMOVE
    model = Neighbours(requested)
    if model is Neighbours.CHANGE and not spec.row_count_may_be_public:
        raise ParameterError(
            "under the neighbour model 'change' the release publishes N, the exact number of rows the query returns, "
            "and that number is not public because the table's size is",
            "if the number of rows this query returns is public, say so with --n-public (in the window: tick "
            "'The number of rows this query returns is public'); otherwise use --neighbours addremove, the default "
            "for a query, which keeps N private")
    return model


def open_source(spec: SourceSpec, *, password_prompt: PasswordPrompt | None = None) -> DataSource:
    """Open ``spec``: checks that the file exists and is readable, or connects to the database
    (password from ``DPGUI_DB_PASSWORD``, the system keyring, or ``password_prompt(display_url)``,
    in that order; PostgreSQL's own ``PGPASSWORD``/``.pgpass`` work too), or starts a Spark
    session. Raises DataError (unreachable server, wrong password, missing table, PySpark not
    installed, …) with the fix."""
    import importlib

    module = importlib.import_module(_REGISTRY.modules[spec.kind])
    source: DataSource = module.open_spec(spec, password_prompt=password_prompt)
    return source


def local_paths(spec: SourceSpec) -> list[str]:
    """The files or folders on this computer that ``spec`` reads, which an output must never replace
    (nor, for a folder, write into): a data file or folder, an SQLite database's file (as the source
    opens it: ``~`` expanded, %-escapes decoded), a Spark dataset on this computer; [] for a server."""
    if spec.kind == "file":
        return [spec.location]
    if spec.kind == "spark" and spec.location:
        from dpgui.data.source_spec import is_database_url

        if spec.location.startswith("file://"):
            return [spec.location[len("file://"):]]
        return [] if is_database_url(spec.location) else [spec.location]
    if spec.kind == "database" and spec.location.lower().startswith("sqlite"):
        from dpgui.data.sql_source import sqlite_file

        path = sqlite_file(spec.location)
        return [str(path)] if path is not None else []
    return []
