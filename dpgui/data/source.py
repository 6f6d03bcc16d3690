"""One interface to the data, wherever it lives: files on this computer, SQL databases, Spark.

A release needs only K bin counts (or a hierarchy's path counts), so the counting runs where the
data is and only counts come back: for a database, one aggregate query (the rows never leave it);
for Spark, one Spark SQL job. The window, the command line and the self-test use only this module
(:func:`open_source`) to read confidential data; the readers behind it are
:mod:`dpgui.data.readers` (files), :mod:`dpgui.data.sql_source` (SQLAlchemy) and
:mod:`dpgui.data.spark_source` (PySpark, an optional extra).

* :class:`~dpgui.data.source_spec.SourceSpec` (in :mod:`dpgui.data.source_spec`, with
  :func:`~dpgui.data.source_spec.parse_source`): what to read, with nothing secret in it (a database URL
  never holds a password: parse_source refuses one). It is what project files and autosaves store, and
  its ``public_record`` is what manifests and the ledger record.
* :class:`DataSource`: an open source: columns with kinds, a preview of the first rows, the row
  count, and the one counting primitive (:meth:`DataSource.grouped_counts`, :mod:`dpgui.data.grouped_counts`)
  on which the histogram of one numeric column under the one binning rule (:mod:`dpgui.data.binning`)
  and the path counts of 2..4 level columns are built, each with progress and cancel. Every source
  gives exactly the counts the file path gives on the same data (tests/unit/data/test_sources_agree.py),
  also of the rows a privacy unit keeps, at most L a person (the optional ``bounding``,
  :mod:`dpgui.data.bounding`; tests/unit/data/test_bounding_agree.py).

Errors are :class:`~dpgui.errors.DataError` / :class:`~dpgui.errors.ParameterError` with the
problem and the fix in one line; nothing here writes a file. No Qt.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dpgui.core.missing import MISSING_DROP
from dpgui.data.csv_dialect import DialectOrigin
from dpgui.data.file_types import CsvDialect
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import ParameterError
from dpgui.vocabulary import Neighbours, SourceKind

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from dpgui.data.bounding import Bounding
    from dpgui.data.grouped_counts import GroupedCounts, Key
    from dpgui.data.hierarchy import PathCounts
    from dpgui.data.histogram import ColumnHistogram
    from dpgui.data.streams import CancelCallback, ProgressCallback
    from dpgui.data.table import ColumnInfo

__all__ = [
    "DataSource",
    "PasswordPrompt",
    "neighbours_for",
    "open_source",
]

#: Asked for a database password when none is in the environment or the keyring:
#: ``prompt(display_url) -> password`` (None: the user cancelled).
PasswordPrompt = Callable[[str], "str | None"]


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
    def grouped_counts(
        self,
        keys: Sequence[Key],
        *,
        max_groups: int | None = None,
        bounding: Bounding | None = None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
    ) -> GroupedCounts:
        """The rows in each group of ``keys`` (:mod:`dpgui.data.grouped_counts`: a column's value, or a numeric
        column's bin under public bounds), counted where the data lives in one pass (a file: one streamed
        read; a database: one ``GROUP BY`` query; Spark: one job); the one counting primitive that
        :meth:`histogram` and :meth:`path_counts` are built on. ``max_groups``: stop at more than that many
        groups (``complete`` False). ``bounding``: count only the rows a privacy unit keeps, at most L a person
        (:mod:`dpgui.data.bounding`: the same rows in every engine; a database or Spark checks the person
        column for missing IDs with one more query first). Confidential counts: for a release and the
        officer's checks only. ParameterError for bad keys; DataError for a missing column, a binned column
        that is not numeric, a person-ID column that cannot be one."""

    def histogram(
        self,
        column: str,
        lower: float,
        upper: float,
        bins: int,
        missing: str = MISSING_DROP,
        *,
        bounding: Bounding | None = None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
    ) -> ColumnHistogram:
        """The counts of ``column`` in ``bins`` bins on [lower, upper) under the one binning rule
        (:mod:`dpgui.data.binning`; out-of-range values clamped into the end bins, missing values
        — null, NaN — counted in ``n_missing``), equal to what
        :func:`dpgui.data.histogram.column_histogram` gives for the same rows in a file: the
        :meth:`grouped_counts` of one :class:`~dpgui.data.grouped_counts.BinKey`
        (:func:`~dpgui.data.histogram.histogram_of`); of the rows ``bounding`` keeps when given. The arguments
        are checked before anything is read."""
        from dpgui.data.binning import check_bin_count, check_bounds
        from dpgui.data.grouped_counts import BinKey
        from dpgui.data.histogram import check_missing_policy, histogram_of
        from dpgui.data.streams import check_callbacks

        lo, hi = check_bounds(lower, upper)
        k = check_bin_count(bins)
        policy = check_missing_policy(missing)
        check_callbacks(progress, should_cancel)
        counted = self.grouped_counts((BinKey(column, lo, hi, k),), bounding=bounding, progress=progress,
                                      should_cancel=should_cancel)
        return histogram_of(counted, policy)

    def path_counts(
        self,
        level_columns: Sequence[str],
        *,
        max_nodes_per_level: int | None = None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
        min_levels: int = 2,
        bounding: Bounding | None = None,
    ) -> PathCounts:
        """The number of rows on every distinct path of 2..4 level columns (from 1 with ``min_levels=1``:
        the count of each value of one column), as :func:`dpgui.data.hierarchy.count_paths` gives for the
        same rows in a file (labels, checks, notes): the :meth:`grouped_counts` of the level columns' values,
        at most ``max_nodes_per_level`` (None: :data:`~dpgui.core.hierarchy.MAX_NODES_PER_LEVEL`) groups
        (:func:`~dpgui.data.hierarchy.path_counts_of`); of the rows ``bounding`` keeps when given."""
        from dpgui.data.grouped_counts import ValueKey
        from dpgui.data.hierarchy import check_path_count_arguments, path_counts_of

        names, limit = check_path_count_arguments(level_columns, max_nodes_per_level, min_levels)
        counted = self.grouped_counts([ValueKey(c) for c in names], max_groups=limit, bounding=bounding,
                                      progress=progress, should_cancel=should_cancel)
        return path_counts_of(counted, limit, min_levels=min_levels)

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

    modules: dict[SourceKind, str] = field(default_factory=lambda: {
        SourceKind.FILE: "dpgui.data.file_source",
        SourceKind.DATABASE: "dpgui.data.sql_source",
        SourceKind.SPARK: "dpgui.data.spark_source",
    })


_REGISTRY = _Registry()


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
