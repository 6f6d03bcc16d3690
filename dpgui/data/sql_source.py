"""The :class:`~dpgui.data.source.DataSource` of an SQL database (PostgreSQL first, SQLite, others via SQLAlchemy).

The counting runs IN the database: the counting primitive (:meth:`SqlSource.grouped_counts`) is ONE
aggregate query, ``GROUP BY`` the keys (a column, or a bin key of :func:`dpgui.data.binning.bin_key_sql`), so
only (key, count) rows travel, never the rows: at most ``K + 4`` for a histogram, one per path for path
counts. The result is exactly what the file path gives on the same rows (tests/unit/data/test_sql_source.py).

Safety:

* The password comes from :mod:`dpgui.data.credentials` and goes to the driver only (``URL.set``);
  messages name the URL without it, and a driver's own text is shown only with the password cut out.
* Reading only, twice over: a query is checked BEFORE anything runs
  (:func:`dpgui.data.sql_read_only.check_read_only_query`: one ``SELECT``/``WITH`` statement, no
  data-changing keyword outside string literals, no ``SELECT … INTO``), and every statement runs in a
  read-only transaction (PostgreSQL: ``SET TRANSACTION READ ONLY`` first in every transaction, and
  ``default_transaction_read_only`` for the session; SQLite: the file is opened read-only, ``mode=ro``,
  with ``PRAGMA query_only``).
* Cancel: ``should_cancel()`` is polled every 0.1 s by a watcher thread during a query (so it must
  be thread-safe, e.g. an Event's ``is_set``), which cancels the query on the server (psycopg's
  cancel request, SQLite's ``interrupt``).

Table names: ``name`` or ``schema.name``, matched exactly or, if there is no exact match, ignoring
case (as an unquoted name in SQL); always quoted in the SQL dpgui writes.
"""

from __future__ import annotations

import os
import pathlib
import re
import threading
import urllib.parse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from dpgui.data.binning import SqlDialect
from dpgui.data.grouped_counts import BinKey, GroupedCounts, ValueKey, check_keys, check_max_groups
from dpgui.data.source import DataSource, PasswordPrompt
from dpgui.data.source_spec import SourceSpec
from dpgui.data.sql_read_only import check_read_only_query
from dpgui.data.streams import check_callbacks
from dpgui.errors import Cancelled, DataError, ParameterError
from dpgui.vocabulary import SourceKind

if TYPE_CHECKING:
    import pandas as pd
    import sqlalchemy as sa

    from dpgui.data.bounding import Bounding
    from dpgui.data.grouped_counts import Key
    from dpgui.data.streams import CancelCallback, ProgressCallback
    from dpgui.data.table import ColumnInfo

__all__ = ["SqlSource", "open_spec"]

_POLL_SECONDS = 0.1
_PG_TEXT = {"text", "varchar", "bpchar", "char", "name", "citext", "uuid", "json", "jsonb", "xml", "inet", "cidr"}
_PG_NUMERIC = {"int2", "int4", "int8", "float4", "float8", "numeric", "oid"}
_PG_DATETIME = {"date", "time", "timetz", "timestamp", "timestamptz", "interval"}


# --------------------------------------------------------------------------- errors


def _scrub(text: str, password: str | None) -> str:
    """First line of a driver message, with the password (if any) and any ``password=…`` cut out."""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    if password:
        line = line.replace(password, "***")
    line = re.sub(r"(?i)(password\s*=\s*)\S+", r"\1***", line)
    return line[:300]


def _driver_error(exc: BaseException) -> BaseException:
    orig = getattr(exc, "orig", None)
    return orig if isinstance(orig, BaseException) else exc


def _connect_error(exc: BaseException, url: sa.URL, display: str, password: str | None) -> DataError:
    err = _driver_error(exc)
    state = getattr(err, "sqlstate", None)
    text = str(err)
    user = url.username or "(default user)"
    if state == "28P01" or "password authentication failed" in text:
        return DataError(f"the database refused the password for user {user} at {display}",
                         "check the password (DPGUI_DB_PASSWORD, the keyring entry or what you typed) and try again")
    if "no password supplied" in text or "fe_sendauth" in text:
        return DataError(f"the database asks for a password for user {user} at {display} and none was given",
                         "set DPGUI_DB_PASSWORD, store the password in the system keyring, or type it when asked")
    if state == "3D000" or ("database" in text and "does not exist" in text):
        return DataError(f"the database '{url.database}' does not exist on the server at {display}",
                         "check the database name at the end of the URL")
    if state in ("28000", "42501"):
        return DataError(f"the database refused user {user} at {display} ({_scrub(text, password)})",
                         "check the user name, or ask the database administrator for access")
    host = url.host or url.query.get("host") or "localhost"
    port = url.port or (5432 if url.get_backend_name() == SqlDialect.POSTGRESQL else None)
    where = f"{host}:{port}" if port and not str(host).startswith("/") else str(host)
    return DataError(f"cannot reach the database server at {where} ({_scrub(text, password)})",
                     "check that the server is running and that the host and port in the URL are right "
                     "(and that a firewall lets the connection through)")


def _query_error(exc: BaseException, password: str | None) -> DataError:
    err = _driver_error(exc)
    state = getattr(err, "sqlstate", None)
    text = str(err)
    if state == "25006" or "read-only" in text or "readonly" in text or "query_only" in text:
        return DataError("the query tries to change the database, which dpgui refuses "
                         f"(it reads in a read-only transaction: {_scrub(text, password)})",
                         "give a query that only reads")
    if isinstance(state, str) and state.startswith("22"):  # SQL's "data exception": the message quotes the value
        return DataError(f"the database could not use a value of the data as the query asks (SQLSTATE {state}, e.g. "
                         "text where a number is expected; the database's message is not shown: it quotes the value)",
                         "check the column's type, or convert it in --query (e.g. CAST or NULLIF)")
    return DataError(f"the database refused the query: {_scrub(text, password)}",
                     "check the query, table and column names (run the query in your SQL tool first)")


# --------------------------------------------------------------------------- the source


def _quote_name(preparer: Any, name: str) -> str:
    return str(preparer.quote_identifier(name))


class SqlSource(DataSource):
    """A table or a read-only query in an SQL database, counted by the database. Open with :func:`open_spec`."""

    def __init__(self, spec: SourceSpec, engine: sa.Engine, password: str | None, source_sql: str,
                 engine_words: str, table_parts: tuple[str | None, str] = (None, "")) -> None:
        self.spec = spec
        self._table_parts = table_parts  # (schema, table) of a table source
        self._engine = engine
        self._password = password
        self._source_sql = source_sql  # "schema"."table" or (query)
        self._engine_words = engine_words
        name = engine.dialect.name
        self.dialect = SqlDialect(name) if name in (SqlDialect.POSTGRESQL, SqlDialect.SQLITE) else SqlDialect.GENERIC
        self._columns: tuple[ColumnInfo, ...] | None = None
        # The columns whose kind the database declares (a table's declared type, PostgreSQL's result
        # types), not read from their first values: the only kinds a release may say anything from.
        self._declared: frozenset[str] = frozenset()

    # ----------------------------------------------------------------- plumbing

    @property
    def engine(self) -> str:
        return self._engine_words

    def close(self) -> None:
        self._engine.dispose()

    def _fetch(self, sql: str, should_cancel: CancelCallback | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run ``sql`` (written by dpgui around a checked query) in a read-only transaction; column
        names and rows. Cancelled if ``should_cancel()`` turns True (the server is asked to stop)."""

        if should_cancel is not None and should_cancel():
            raise Cancelled()
        stop, cancelled = threading.Event(), threading.Event()
        watcher: threading.Thread | None = None
        try:
            with self._engine.connect() as conn:
                try:
                    self._begin_read_only(conn)
                    raw = conn.connection.driver_connection
                    if should_cancel is not None:
                        poll: Callable[[], bool] = should_cancel

                        def watch() -> None:
                            while not stop.wait(_POLL_SECONDS):
                                if poll():
                                    cancelled.set()
                                    self._interrupt(raw)
                                    return

                        watcher = threading.Thread(target=watch, name="dpgui-sql-cancel", daemon=True)
                        watcher.start()
                    names, rows, _ = self._execute(conn, sql)
                finally:
                    stop.set()
                    if watcher is not None:
                        watcher.join()
                    if conn.in_transaction():
                        conn.rollback()
        except self._driver_errors() as exc:
            if cancelled.is_set():
                raise Cancelled() from None
            raise _query_error(exc, self._password) from None
        if cancelled.is_set():
            raise Cancelled()
        return names, rows

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        """SQLAlchemy's DBAPIError and the driver's own Error (raised by :meth:`_execute` on PostgreSQL,
        outside SQLAlchemy)."""
        import sqlalchemy as sa

        dbapi = getattr(self._engine.dialect, "loaded_dbapi", None)
        error = getattr(dbapi, "Error", None)
        if isinstance(error, type) and issubclass(error, BaseException):
            return (sa.exc.DBAPIError, error)
        return (sa.exc.DBAPIError,)

    def _execute(self, conn: sa.Connection, sql: str) -> tuple[list[str], list[tuple[Any, ...]], Any]:
        """Run ONE statement: column names, rows and the cursor description. PostgreSQL: through
        psycopg's pipeline mode, which sends every statement with the extended protocol (an unnamed
        statement: no prepared statement is left behind, so a pgbouncer in front is fine); the server
        refuses a string of several statements there, so a ``; COMMIT; …`` the query check missed can
        never end the read-only transaction (the simple protocol, psycopg's default without
        parameters, would run them all)."""
        if self.dialect is SqlDialect.POSTGRESQL:
            raw: Any = conn.connection.driver_connection
            with raw.pipeline() as pipeline, raw.cursor() as cur:
                cur.execute(sql, prepare=False)
                pipeline.sync()
                description = cur.description or ()
                rows = [tuple(r) for r in cur.fetchall()] if cur.description is not None else []
                return [d.name for d in description], rows, description
        result = conn.execution_options(no_parameters=True).exec_driver_sql(sql)
        description = result.cursor.description if result.cursor is not None else ()
        return list(result.keys()), [tuple(r) for r in result.fetchall()], description

    def _begin_read_only(self, conn: sa.Connection) -> None:
        if self.dialect is SqlDialect.POSTGRESQL:
            conn.exec_driver_sql("SET TRANSACTION READ ONLY")
        elif self.dialect is SqlDialect.SQLITE:
            conn.exec_driver_sql("PRAGMA query_only = ON")
        else:
            try:
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
            except Exception:  # noqa: BLE001 - a database without it: the query check is the guard
                conn.rollback()

    @staticmethod
    def _interrupt(raw: Any) -> None:
        for method in ("cancel_safe", "cancel", "interrupt"):
            f = getattr(raw, method, None)
            if callable(f):
                try:
                    f()
                except Exception:  # noqa: BLE001 - best effort: the query then simply finishes
                    pass
                return

    def _quoted(self, column: str) -> str:
        return _quote_name(self._engine.dialect.identifier_preparer, column)

    def _column(self, column: str, numeric: bool = False) -> ColumnInfo:
        cols = self.columns()
        for c in cols:
            if c.name == column:
                # SQLite's kind comes from the first 1,000 values when there is no declared type: "empty"
                # (all NULL there) may hold numbers further on, and the key SQL counts any text as such.
                if numeric and c.kind != "numeric" and not (c.kind == "empty" and self.dialect is SqlDialect.SQLITE):
                    raise DataError(f"column '{column}' of {self.spec.display_name()} is {c.kind} ({c.dtype}), "
                                    "not numeric", "choose a numeric column")
                return c
        from dpgui.data.streams import column_not_found

        raise column_not_found(column, self.spec.display_name(), [c.name for c in cols])

    # ----------------------------------------------------------------- the interface

    def columns(self) -> tuple[ColumnInfo, ...]:

        if self._columns is not None:
            return self._columns
        if self.dialect is SqlDialect.POSTGRESQL:
            try:
                cols = self._pg_columns()
            except self._driver_errors() as exc:
                raise _query_error(exc, self._password) from None
            self._columns = tuple(cols)
            self._declared = frozenset(c.name for c in cols)
            return self._columns
        self._columns = self._sampled_columns()
        return self._columns

    def _pg_columns(self) -> list[ColumnInfo]:
        """The columns of the source from a ``LIMIT 0`` query's description (PostgreSQL type names)."""
        from dpgui.data.table import ColumnInfo

        with self._engine.connect() as conn:
            self._begin_read_only(conn)
            try:
                _, _, description = self._execute(conn, f"SELECT * FROM {self._source_sql} AS s LIMIT 0")
                raw = conn.connection.driver_connection
                types = raw.adapters.types  # type: ignore[union-attr]
                cols = []
                for d in description:
                    name, type_code = d[0], d[1]
                    info = types.get(type_code)
                    dtype = info.name if info is not None else str(type_code)
                    cols.append(ColumnInfo(name, _pg_kind(dtype), dtype))
            finally:
                conn.rollback()
        return cols

    def _sampled_columns(self) -> tuple[ColumnInfo, ...]:
        """SQLite (dynamic types) and other databases: the declared type of a table's columns where
        there is one, else the type of the first 1,000 values."""
        import sqlalchemy as sa

        from dpgui.data.table import ColumnInfo

        declared: dict[str, Any] = {}
        if self.spec.table is not None:
            schema, table = self._table_parts
            for col in sa.inspect(self._engine).get_columns(table, schema=schema):
                declared[col["name"]] = col["type"]
        names, rows = self._fetch(f"SELECT * FROM {self._source_sql} AS s LIMIT 1000")
        cols = []
        for j, name in enumerate(names):
            t = declared.get(name)
            kind = _sa_kind(t) if t is not None else "other"
            dtype = str(t) if t is not None and not isinstance(t, sa.types.NullType) else ""
            if kind == "other":
                values = [r[j] for r in rows if r[j] is not None]
                kind = _python_kind(values)
                dtype = dtype or (type(values[0]).__name__ if values else "null")
            else:
                self._declared |= {name}
            cols.append(ColumnInfo(name, kind, dtype))
        return tuple(cols)

    def preview(self, n_rows: int = 100) -> pd.DataFrame:
        import pandas as pd

        if isinstance(n_rows, bool) or not isinstance(n_rows, int) or n_rows < 0:
            raise ParameterError(f"n_rows {n_rows!r} is not a non-negative integer", "use e.g. 100")
        names, rows = self._fetch(f"SELECT * FROM {self._source_sql} AS s LIMIT {n_rows}")
        return pd.DataFrame.from_records(rows, columns=names)

    def row_count(
        self, *, progress: ProgressCallback | None = None, should_cancel: CancelCallback | None = None
    ) -> int:
        check_callbacks(progress, should_cancel)
        if progress is not None:
            progress(0.0)
        _, rows = self._fetch(f"SELECT COUNT(*) FROM {self._source_sql} AS s", should_cancel)
        if progress is not None:
            progress(1.0)
        return int(rows[0][0])

    def grouped_sql(self, keys: Sequence[Key], max_groups: int | None = None, bounding: Bounding | None = None) -> str:
        """The one aggregate query of :meth:`grouped_counts` (for the log, the tests and the benchmark): rows
        ``(value of each key, count)``, or for PostgreSQL and binned keys only one row of arrays
        ``(keys₁[], …, counts[])``; ``LIMIT max_groups + 1`` when a limit is given. With ``bounding``, of the
        rows it keeps (:func:`dpgui.data.bounding.bounded_source_sql` in the place of the source)."""
        from dpgui.data.binning import bin_key_sql
        from dpgui.data.bounding import bounded_source_sql

        source_sql = self._source_sql if bounding is None else bounded_source_sql(
            self._source_sql, keys, bounding, self.dialect, self._quoted)
        single = len(keys) == 1
        columns = [f"s.{self._quoted(k.column)}" for k in keys]
        if all(isinstance(k, ValueKey) for k in keys):
            cols = ", ".join(columns)
            grouped = f"SELECT {cols}, COUNT(*) FROM {source_sql} AS s GROUP BY {cols}"
            return grouped if max_groups is None else f"{grouped} LIMIT {max_groups + 1}"
        cast = [isinstance(k, BinKey) and self.dialect is SqlDialect.POSTGRESQL and self._column(k.column).dtype != "float8"
                for k in keys]
        names = ["v" if single else f"v{i}" for i in range(len(keys))]
        if any(cast):
            # A numeric/integer column is cast once per row (OFFSET 0 keeps the planner from inlining
            # the cast into each of the key expression's references); a float8 column needs no cast,
            # and without the fence the planner may run the aggregate in parallel workers.
            inner_columns = ", ".join(f"CAST({c} AS DOUBLE PRECISION) AS {n}" if cast[i] else f"{c} AS {n}"
                                      for i, (c, n) in enumerate(zip(columns, names)))
            inner = f"(SELECT {inner_columns} FROM {source_sql} AS s OFFSET 0) AS c"
            columns = [f"c.{n}" for n in names]
        else:
            inner = f"{source_sql} AS s"
        aliases = ["key" if single else f"key{i}" for i in range(len(keys))]
        selected = ", ".join(
            f"{bin_key_sql(c, k.lower, k.upper, k.bins, self.dialect) if isinstance(k, BinKey) else c} AS {a}"
            for k, c, a in zip(keys, columns, aliases))
        group_by = ", ".join(f"k.{a}" for a in aliases)
        grouped = f"SELECT {group_by}, COUNT(*) AS n FROM (SELECT {selected} FROM {inner}) AS k GROUP BY {group_by}"
        if max_groups is not None:
            return f"{grouped} LIMIT {max_groups + 1}"
        if self.dialect is SqlDialect.POSTGRESQL and all(isinstance(k, BinKey) for k in keys):
            # One row of arrays: ~10 bytes a bin on the wire instead of ~25 for a row per bin.
            arrays = ", ".join(f"array_agg(g.{a})" for a in aliases)
            return f"SELECT {arrays}, array_agg(g.n) FROM ({grouped}) AS g"
        return grouped

    def grouped_counts(
        self,
        keys: Sequence[Key],
        *,
        max_groups: int | None = None,
        bounding: Bounding | None = None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
    ) -> GroupedCounts:
        """One query (:meth:`grouped_sql`); at most ``max_groups + 1`` groups come back. A :class:`ValueKey`'s
        values are labelled by :func:`~dpgui.data.readers.value_text` (SQLite lets one column hold numbers and
        text: each label is decided by its own value); the kinds a note may come from are the declared ones.
        With ``bounding``, one query first that looks for a row without a person ID (DataError if there is one)."""
        keys = check_keys(keys)
        max_groups = check_max_groups(max_groups)
        check_callbacks(progress, should_cancel)
        kinds = {k.column: self._column(k.column, numeric=isinstance(k, BinKey)).kind for k in keys}
        declared = {c: kinds[c] for k in keys if isinstance(k, ValueKey) and (c := k.column) in self._declared}
        if bounding is not None:
            self._check_person_column(keys, bounding, should_cancel)
        sql = self.grouped_sql(keys, max_groups, bounding)
        if progress is not None:
            progress(0.0)
        _, rows = self._fetch(sql, should_cancel)
        if self.dialect is SqlDialect.POSTGRESQL and max_groups is None and all(isinstance(k, BinKey) for k in keys):
            rows = list(zip(*[column or [] for column in rows[0]]))
        result = GroupedCounts.of_rows(keys, rows, where=self.spec.display_name(), declared_kinds=declared,
                                       max_groups=max_groups)
        if progress is not None:
            progress(1.0)
        return result

    def _check_person_column(self, keys: Sequence[Key], bounding: Bounding, should_cancel: CancelCallback | None) -> None:
        """The person-ID column is there, of whole numbers or text, and every row has an ID (one query); DataError
        naming the column otherwise (a database does not number its rows)."""
        from dpgui.data.bounding import check_bounding, check_person_kind, missing_person_sql

        check_bounding(bounding, keys)
        if self.dialect is SqlDialect.GENERIC:
            raise ParameterError("a privacy unit is counted in PostgreSQL, SQLite or Spark only",
                                 "export the table to a file, or use PostgreSQL")
        info = self._column(bounding.person_column)
        check_person_kind(info.name, self.spec.display_name(), info.kind, "int" in info.dtype.lower())
        _, rows = self._fetch(missing_person_sql(self._source_sql, self._quoted(info.name)), should_cancel)
        if int(rows[0][0]):
            raise DataError(f"the person-ID column '{info.name}' of {self.spec.display_name()} has rows without an ID",
                            "give every row its person's ID (or leave such rows out with --query … WHERE … IS NOT NULL)")

    def distinct_counts(
        self,
        columns: Sequence[str],
        limit: int = 100_000,
        *,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
    ) -> dict[str, int]:
        """One query: ``SELECT COUNT(DISTINCT c1), COUNT(DISTINCT c2), … FROM source``, each capped at
        ``limit`` here (the database counts all of them). Time: the database's, one scan."""
        from dpgui.data.hierarchy import _check_limit, _column_names
        names = _column_names(columns)
        cap = _check_limit("limit", limit)
        check_callbacks(progress, should_cancel)
        for name in names:
            self._column(name)
        if not names:
            return {}
        counted = ", ".join(f"COUNT(DISTINCT s.{self._quoted(c)})" for c in names)
        if progress is not None:
            progress(0.0)
        _, rows = self._fetch(f"SELECT {counted} FROM {self._source_sql} AS s", should_cancel)
        if progress is not None:
            progress(1.0)
        return {c: min(int(n or 0), cap) for c, n in zip(names, rows[0])}


def _pg_kind(type_name: str) -> str:
    if type_name in _PG_NUMERIC:
        return "numeric"
    if type_name in _PG_TEXT:
        return "text"
    if type_name in _PG_DATETIME:
        return "datetime"
    if type_name == "bool":
        return "boolean"
    if type_name == "bytea":
        return "binary"
    return "other"


def _sa_kind(t: Any) -> str:
    import sqlalchemy as sa

    if isinstance(t, sa.types.Boolean):
        return "boolean"
    if isinstance(t, (sa.types.Integer, sa.types.Numeric, sa.types.Float)):
        return "numeric"
    if isinstance(t, (sa.types.DateTime, sa.types.Date, sa.types.Time, sa.types.Interval)):
        return "datetime"
    if isinstance(t, (sa.types.String, sa.types.Enum)):
        return "text"
    if isinstance(t, sa.types.LargeBinary):
        return "binary"
    return "other"


def _python_kind(values: list[Any]) -> str:
    import datetime
    import decimal

    if not values:
        return "empty"
    if all(isinstance(v, bool) for v in values):
        return "boolean"
    if all(isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool) for v in values):
        return "numeric"
    if all(isinstance(v, str) for v in values):
        return "text"
    if all(isinstance(v, (datetime.date, datetime.time, datetime.timedelta)) for v in values):
        return "datetime"
    if all(isinstance(v, (bytes, bytearray, memoryview)) for v in values):
        return "binary"
    return "other"


# --------------------------------------------------------------------------- opening


def _make_url(location: str) -> sa.URL:
    import sqlalchemy as sa

    try:
        url = sa.engine.make_url(location)
    except sa.exc.ArgumentError:
        raise DataError(f"'{location}' is not a database URL",
                        "write it as postgresql://user@host:5432/database or sqlite:///path/to/file.db") from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return url


def _sqlite_engine(url: sa.URL) -> sa.Engine:
    import sqlite3

    import sqlalchemy as sa

    if not url.database or url.database == ":memory:":
        raise DataError("an in-memory SQLite database holds no data", "give the file: sqlite:///path/to/file.db")
    try:
        path = pathlib.Path(url.database).expanduser().resolve()  # as sqlite_file()
        found = path.is_file()
    except OSError as err:  # e.g. a name longer than the system allows
        raise DataError(f"the SQLite database file cannot be used ({err.strerror or err})",
                        "check the path in the URL") from None
    if not found:
        absolute = "sqlite:///C:/path/to/file.db" if os.name == "nt" else "sqlite:////path/to/file.db"
        raise DataError(f"SQLite database file {path} not found",
                        f"check the path: an absolute path is written {absolute} (after three slashes, a path "
                        "is read from the current folder)")
    uri = f"file:{urllib.parse.quote(str(path))}?mode=ro"

    from dpgui.data.bounding import SQLITE_MD5, md5_hex

    def creator() -> sqlite3.Connection:
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        conn.execute("PRAGMA query_only = ON")
        conn.create_function(SQLITE_MD5, 1, md5_hex, deterministic=True)  # the privacy unit's hash
        return conn

    return sa.create_engine("sqlite://", creator=creator, poolclass=sa.pool.NullPool)


def open_spec(spec: SourceSpec, *, password_prompt: PasswordPrompt | None = None) -> SqlSource:
    """Connect to the database of ``spec`` (a "database" spec) and check its table or query.

    Password: :func:`dpgui.data.credentials.find_password` (env, keyring, ``password_prompt``), given
    to the driver only. DataError, with the fix and without the password, for: a bad URL, a driver
    that is not installed, an unreachable server, a refused password, a missing database, table or
    SQLite file, a query that is not one read-only SELECT (refused before anything runs)."""
    import sqlalchemy as sa

    from dpgui.data.credentials import find_password
    from dpgui.data.source_spec import parse_source, url_without_password

    if spec.kind is not SourceKind.DATABASE:
        raise ParameterError(f"not a database source: {spec.kind}", "open it with dpgui.data.source.open_source")
    if (spec.table is None) == (spec.query is None):
        raise ParameterError("a database source needs a table or a query (one of them)",
                             "add --table NAME or --query 'SELECT …'")
    # parse_source's checks again for a spec made without it: above all, no password in the URL (SQLAlchemy
    # would use it, and url_without_password misses one holding '/': messages would show it).
    parse_source(spec.location, table=spec.table, query=spec.query, encoding=spec.encoding)
    query = check_read_only_query(spec.query) if spec.query is not None else None
    url = _make_url(spec.location)
    # The URL as the user wrote it (a spec holds no password; cut out anyway): messages, keyring entry, prompt.
    display = url_without_password(spec.location)
    password: str | None = None
    if url.get_backend_name() == SqlDialect.SQLITE:
        engine = _sqlite_engine(url)
        import sqlite3

        words = f"the database (SQLite {sqlite3.sqlite_version})"
    else:
        if url.password is None:
            password = find_password(display, password_prompt)
            if password is not None:
                url = url.set(password=password)
        connect_args: dict[str, Any] = {}
        if url.get_backend_name() == SqlDialect.POSTGRESQL:
            # The URL's own ``options`` (e.g. -csearch_path=census) are kept, dpgui's read-only setting
            # last (connect_args replace the URL's: the schema the user picked would silently be lost).
            given = url.query.get("options")
            given = given if isinstance(given, str) else " ".join(given) if given else ""
            connect_args = {"options": f"{given} -c default_transaction_read_only=on".strip(),
                            "connect_timeout": 10, "application_name": "dpgui"}
        try:
            engine = sa.create_engine(url, connect_args=connect_args, pool_pre_ping=True)
        except (ImportError, sa.exc.NoSuchModuleError) as exc:
            raise DataError(f"no database driver for '{url.drivername}' is installed ({type(exc).__name__})",
                            "install the driver's Python package, or use PostgreSQL or SQLite") from None
        try:
            with engine.connect() as conn:
                info = engine.dialect.server_version_info or ()
                conn.rollback()
        except sa.exc.DBAPIError as exc:
            engine.dispose()
            raise _connect_error(exc, url, display, password) from None
        name = {"postgresql": "PostgreSQL", "mysql": "MySQL", "mariadb": "MariaDB", "mssql": "SQL Server",
                "oracle": "Oracle"}.get(engine.dialect.name, engine.dialect.name)
        version_text = ".".join(str(v) for v in info[:2] if isinstance(v, int))
        words = f"the database ({name} {version_text})" if version_text else f"the database ({name})"
    preparer = engine.dialect.identifier_preparer
    table_parts: tuple[str | None, str] = (None, "")
    if query is not None:
        # The line break: a final line comment ("… -- note") must not swallow what dpgui writes after it.
        source_sql = f"({query}\n)"
    else:
        assert spec.table is not None
        table_parts = _find_table(engine, spec.table, display, password)
        schema, table = table_parts
        source_sql = (f"{_quote_name(preparer, schema)}." if schema else "") + _quote_name(preparer, table)
    source = SqlSource(spec, engine, password, source_sql, words, table_parts)
    try:
        source.columns()  # runs the query once with LIMIT 0 (or 1000): a bad query fails here
    except BaseException:
        source.close()
        raise
    return source


def _find_table(engine: sa.Engine, name: str, display: str, password: str | None) -> tuple[str | None, str]:
    """(schema, table) of ``name`` (``table`` or ``schema.table``): exact, else the one match ignoring case."""
    import sqlalchemy as sa

    parts = name.split(".")
    if len(parts) > 2 or not all(p.strip() for p in parts):
        raise DataError(f"table name '{name}' is not valid", "write it as table or schema.table")
    schema = parts[0].strip().strip('"') if len(parts) == 2 else None
    table = parts[-1].strip().strip('"')
    try:
        inspector = sa.inspect(engine)
        schemas = inspector.get_schema_names()
        if schema is not None and schema not in schemas:
            matches = [s for s in schemas if s.lower() == schema.lower()]
            if len(matches) != 1:
                raise DataError(f"schema '{schema}' not found in {display}", f"choose among: {', '.join(schemas[:20])}")
            schema = matches[0]
        names = list(inspector.get_table_names(schema=schema)) + list(inspector.get_view_names(schema=schema))
        # Materialized views and (PostgreSQL) foreign tables are read like tables too.
        for more in ("get_materialized_view_names", "get_foreign_table_names"):
            method = getattr(inspector, more, None)
            if callable(method):
                try:
                    names += [n for n in method(schema=schema) if n not in names]
                except NotImplementedError:
                    pass
    except sa.exc.DBAPIError as exc:
        raise _query_error(exc, password) from None
    if table in names:
        return schema, table
    matches = [t for t in names if t.lower() == table.lower()]
    if len(matches) == 1:
        return schema, matches[0]
    where = f"schema '{schema}'" if schema else display
    shown = ", ".join(sorted(names)[:20]) + (f" (and {len(names) - 20} more)" if len(names) > 20 else "")
    raise DataError(f"table '{name}' not found in {where}",
                    f"choose among its tables: {shown}" if names else "the database has no tables there")
