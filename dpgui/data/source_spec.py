"""Parsing ``--source`` (and the window's fields) into a :class:`~dpgui.data.source.SourceSpec`.

Stdlib only (the command line parses its arguments before loading pyarrow or SQLAlchemy). The rules:
a location with a URL scheme (``postgresql://``, ``postgresql+psycopg://``, ``sqlite:///``,
``mysql://`` …) is a database; anything else is a file or a folder on this computer, unless the
engine is Spark. A password in a URL is refused: it would end up in shell history, project files and
manifests. See :func:`dpgui.data.source.parse_source`.
"""

from __future__ import annotations

import pathlib
import re
import urllib.parse

from dpgui.data.file_types import CsvDialect
from dpgui.data.source import ENGINES, SourceSpec
from dpgui.errors import ParameterError

__all__ = ["is_database_url", "parse_source", "url_without_password"]

# scheme://… with a scheme of letters, digits, + and - (a Windows path "C:\\x" has one letter and no //).
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def is_database_url(location: str) -> bool:
    """True if ``location`` looks like a URL (``scheme://…``) rather than a path."""
    return bool(_URL.match(location))


def url_without_password(url: str) -> str:
    """``url`` with any password removed (``user:secret@host`` → ``user@host``), for messages."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username
    netloc = f"{user}@{netloc}" if user else netloc
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _clean(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ParameterError(f"the {what} is empty", f"give a {what}, or leave the option out")
    return value.strip()


def parse_source(
    location: str | pathlib.Path,
    *,
    table: str | None = None,
    query: str | None = None,
    engine: str = "local",
    spark_master: str | None = None,
    dialect: CsvDialect | None = None,
    encoding: str | None = None,
) -> SourceSpec:
    """See :func:`dpgui.data.source.parse_source`."""
    if engine not in ENGINES:
        raise ParameterError(f"engine {engine!r} is not known", "use --engine local or --engine spark")
    text = str(location).strip() if isinstance(location, (str, pathlib.Path)) else ""
    table, query = _clean(table, "table name"), _clean(query, "query")
    if table is not None and query is not None:
        raise ParameterError("both a table and a query were given", "give one of --table or --query")
    if encoding is not None:
        encoding = _clean(encoding, "encoding")
    if engine == "spark":
        if not text and table is None:
            raise ParameterError("Spark needs a dataset path or a table", "give --source PATH or --table NAME")
        if query is not None and not text:
            pass  # a query over the cluster's catalogue tables
        return SourceSpec("spark", text, table=table, query=query, dialect=dialect, encoding=encoding,
                          spark_master=_clean(spark_master, "Spark master URL"))
    if spark_master is not None:
        raise ParameterError("--spark-master was given without --engine spark", "add --engine spark, or drop --spark-master")
    if not text:
        raise ParameterError("no data source was given", "give a data file, a folder of Parquet files or a database URL")
    if is_database_url(text):
        if urllib.parse.urlsplit(text).password is not None:
            raise ParameterError(
                f"the database URL holds a password ({url_without_password(text)})",
                "leave the password out of the URL: set DPGUI_DB_PASSWORD, store it in the system keyring, "
                "or type it when asked")
        if table is None and query is None:
            raise ParameterError("a database source needs a table or a query", "add --table NAME or --query 'SELECT …'")
        if dialect is not None:
            raise ParameterError("a CSV dialect was given for a database", "drop --delimiter/--decimal")
        return SourceSpec("database", text, table=table, query=query, encoding=encoding)
    if table is not None or query is not None:
        raise ParameterError(f"--table/--query were given for the file '{pathlib.Path(text).name}'",
                             "use them with a database URL (e.g. postgresql://user@host/db), or drop them")
    return SourceSpec("file", text, dialect=dialect, encoding=encoding)
