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

from dpgui.data.file_types import STAT_FORMATS, CsvDialect, format_of_name
from dpgui.data.source import SourceSpec
from dpgui.errors import ParameterError
from dpgui.vocabulary import Engine

__all__ = ["is_database_url", "parse_source", "redacted_url", "sqlite_url", "sqlite_url_example", "sqlite_url_note",
           "url_secret", "url_without_password", "which_sqlite_url"]

# scheme://… with a scheme of letters, digits, + and - (a Windows path "C:\\x" has one letter and no //).
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def is_database_url(location: str) -> bool:
    """True if ``location`` looks like a URL (``scheme://…``) rather than a path."""
    return bool(_URL.match(location))


# sqlite:///PATH (SQLAlchemy: three slashes, then the path; a relative path unless it starts with '/').
_SQLITE_URL = re.compile(r"^(?P<head>sqlite(\+\w+)?:///)(?P<path>[^?#]*)(?P<tail>[?#].*)?$", re.IGNORECASE)


def sqlite_url(path: str | pathlib.Path) -> str:
    """The ``sqlite:///`` URL of the SQLite file ``path`` (made absolute): ``sqlite:////srv/data/x.db`` on
    POSIX (three slashes, then the path's own), ``sqlite:///C:/data/x.db`` on Windows; the characters
    SQLAlchemy would read as escapes or as the URL's query (``%``, ``?``, ``#``) are %-escaped."""
    text = pathlib.Path(path).expanduser().absolute().as_posix()
    return "sqlite:///" + text.replace("%", "%25").replace("?", "%3F").replace("#", "%23")


def sqlite_url_example() -> str:
    """How an SQLite file's URL looks on this system, for hints: a file in the user's home folder."""
    return sqlite_url(pathlib.Path.home() / "data" / "survey.db")


def which_sqlite_url(location: str, folder: pathlib.Path | None = None) -> str:
    """The ``sqlite:///`` URL of the file the user meant: ``location`` itself, or its absolute form.

    SQLAlchemy reads ``sqlite:///srv/data/x.db`` as ``srv/data/x.db`` in the current folder (``folder``,
    default the working folder); an absolute path takes four slashes (``sqlite:////srv/data/x.db``; on
    Windows ``sqlite:///C:/data/x.db``). People write three for an absolute path. The rule, which never
    opens another file than the URL could mean without saying so: if the relative file does not exist
    and the absolute one does, the absolute URL is returned (:func:`sqlite_url_note` says so); if both
    exist and are different files, ParameterError (which one was meant cannot be told); otherwise, and
    for ``./``, ``../``, ``~`` and absolute paths and every other URL, ``location`` unchanged."""
    match = _SQLITE_URL.match(location)
    raw = match["path"] if match else ""
    if match is None or not raw or raw == ":memory:" or raw.startswith(("/", "~", "./", "../")):
        return location
    path = pathlib.Path(urllib.parse.unquote(raw))
    if path.is_absolute():  # Windows: sqlite:///C:/data/x.db
        return location
    current = folder or pathlib.Path.cwd()
    here, there = current / path, pathlib.Path("/") / path
    try:
        if not there.is_file():
            return location
        if here.exists() and here.resolve() == there.resolve():
            return location
        both = here.exists()
    except OSError:  # e.g. a name longer than the system allows: opening it will say so
        return location
    if both:
        raise ParameterError(f"{location} names {path} in the current folder ({current}), and {there} exists "
                             "too", f"write sqlite:////{raw} for {there}, or sqlite:///./{raw} for the file in the "
                             "current folder")
    return f"{match['head']}/{raw}{match['tail'] or ''}"


def sqlite_url_note(typed: str, used: str) -> str | None:
    """One sentence when :func:`which_sqlite_url` read ``typed`` as the absolute ``used``; else None."""
    if typed.strip() == used:
        return None
    match = _SQLITE_URL.match(used)
    path = urllib.parse.unquote(match["path"]) if match else used
    return (f"reading {path}: {typed.strip()} names a file in the current folder, which does not exist (an "
            f"absolute path takes four slashes: {used})")


# SQLAlchemy's own URL rule (sqlalchemy.engine.url._parse_url): ``name://user:password@…`` where the
# user holds no ':' or '/' and the password runs to the next '@' — so it may hold '/', '?' or '#',
# which urllib reads as the path, the query or the fragment instead (and misses the password).
_SA_PASSWORD = re.compile(r"^(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:/]*):(?P<password>[^@]*)@")
# Query parameters that carry a secret to the driver (libpq ``password``/``sslpassword``, ODBC ``PWD``,
# MySQL ``passwd``, tokens), compared in lower case after %-decoding; and a ``password=`` inside a value
# (``odbc_connect=…;PWD=…``, ``options=-c password=…``).
# For messages, everything from the user's ':' to the LAST '@' goes (a password may hold '@' itself).
_REDACT_USERINFO = re.compile(r"^(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:/@]*):.*@")
_SECRET_KEY = re.compile(r"pass(?!file)|pwd|secret|token|credential", re.IGNORECASE)  # passfile: a path
_SECRET_IN_VALUE = re.compile(r"(pass\w*|pwd|secret|token)\s*=", re.IGNORECASE)


def url_secret(url: str) -> str | None:
    """What in ``url`` is a secret the database driver would use ("a password", "the query parameter
    'sslpassword'"), or None. Reads the URL as SQLAlchemy does (``user:password@`` up to the last
    '@' before the host, then ``?key=value`` parameters), so what this accepts has no password for
    the driver either."""
    if _SA_PASSWORD.match(url) or urllib.parse.urlsplit(url).password is not None:
        return "a password"
    query = url.split("?", 1)[1] if "?" in url else ""
    for key, value in urllib.parse.parse_qsl(query, keep_blank_values=True):
        if _SECRET_KEY.search(key):
            return f"the parameter '{key}'"
        if _SECRET_IN_VALUE.search(value):
            return f"a password inside the parameter '{key}'"
    return None


def redacted_url(url: str) -> str:
    """``url`` with every secret :func:`url_secret` finds replaced by ``***`` (for messages)."""
    url = _REDACT_USERINFO.sub(lambda m: f"{m.group('head')}:***@", url, count=1)
    if "?" not in url:
        return url
    base, query = url.split("?", 1)
    parts = []
    for key, value in urllib.parse.parse_qsl(query, keep_blank_values=True):
        secret = _SECRET_KEY.search(key) or _SECRET_IN_VALUE.search(value)
        parts.append(f"{urllib.parse.quote(key)}={'***' if secret else urllib.parse.quote(value)}")
    return f"{base}?{'&'.join(parts)}"


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
    engine: str = Engine.LOCAL,
    spark_master: str | None = None,
    dialect: CsvDialect | None = None,
    encoding: str | None = None,
    row_count_public: bool = False,
) -> SourceSpec:
    """See :func:`dpgui.data.source.parse_source`."""
    if engine not in tuple(Engine):
        raise ParameterError(f"engine {engine!r} is not known", "use --engine local or --engine spark")
    text = str(location).strip() if isinstance(location, (str, pathlib.Path)) else ""
    table, query = _clean(table, "table name"), _clean(query, "query")
    if table is not None and query is not None:
        raise ParameterError("both a table and a query were given", "give one of --table or --query")
    if encoding is not None:
        encoding = _clean(encoding, "encoding")
    if row_count_public and query is None:
        raise ParameterError("--n-public states that the number of rows a query returns is public, and no query "
                             "was given", "drop --n-public (a file's or a table's row count is public under "
                             "--neighbours change already)")
    if is_database_url(text) and (secret := url_secret(text)) is not None:
        raise ParameterError(
            f"the {'database ' if engine != Engine.SPARK else ''}URL holds {secret}: {redacted_url(text)}",
            "leave the password out of the URL: set DPGUI_DB_PASSWORD, store it in the system keyring, "
            "or type it when asked" if engine != Engine.SPARK else
            "leave credentials out of the path: give them to Spark in its own configuration "
            "(spark-defaults.conf, the cluster's credential provider)")
    if engine == Engine.SPARK:
        if not text and table is None:
            raise ParameterError("Spark needs a dataset path or a table", "give --source PATH or --table NAME")
        master = _clean(spark_master, "Spark master URL")
        if master is not None and (secret := url_secret(master.removeprefix("k8s://"))) is not None:
            raise ParameterError(f"the Spark master URL holds {secret}: {redacted_url(master)}",
                                 "leave credentials out of the master URL: give them to Spark in its own "
                                 "configuration (spark-defaults.conf, the cluster's credential provider)")
        if encoding is not None and (not text or format_of_name(text) == "parquet"):
            # Spark uses it for CSV only; a catalogue table or Parquet data would be recorded with an unused one.
            raise ParameterError("a text encoding was given for Spark data that is not CSV",
                                 "drop --encoding (it applies to a CSV dataset only)")
        return SourceSpec("spark", text, table=table, query=query, dialect=dialect, encoding=encoding,
                          spark_master=master, row_count_public=row_count_public)
    if spark_master is not None:
        raise ParameterError("--spark-master was given without --engine spark", "add --engine spark, or drop --spark-master")
    if not text:
        raise ParameterError("no data source was given", "give a data file, a folder of Parquet files or a database URL")
    if is_database_url(text):
        if table is None and query is None:
            raise ParameterError("a database source needs a table or a query", "add --table NAME or --query 'SELECT …'")
        if dialect is not None:
            raise ParameterError("a CSV dialect was given for a database", "drop --delimiter/--decimal")
        if encoding is not None:  # unused: the manifest would record an encoding nothing was read in
            raise ParameterError("a text encoding was given for a database",
                                 "drop --encoding (the database driver converts text itself)")
        return SourceSpec("database", which_sqlite_url(text), table=table, query=query,
                          row_count_public=row_count_public)
    name = pathlib.Path(text).name
    if table is not None or query is not None:
        raise ParameterError(f"--table/--query were given for the file '{name}'",
                             "use them with a database URL (e.g. postgresql://user@host/db), or drop them")
    if encoding is not None and format_of_name(text) not in STAT_FORMATS:
        # Only pyreadstat takes an encoding; CSV is read as UTF-8 (UTF-16/32 with a byte-order mark).
        raise ParameterError(f"--encoding was given for '{name}', which is not a SAS, Stata or SPSS file",
                             "drop --encoding (a CSV file must be UTF-8, or UTF-16/UTF-32 with a byte-order mark: "
                             "save it so)")
    return SourceSpec("file", text, dialect=dialect, encoding=encoding)
