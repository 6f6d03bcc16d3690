"""What to read (:class:`SourceSpec`, which holds no secret) and parsing ``--source`` (and the window's fields) into it.

Stdlib only (the command line parses its arguments before loading pyarrow or SQLAlchemy). The rules:
a location with a URL scheme (``postgresql://``, ``postgresql+psycopg://``, ``sqlite:///``,
``mysql://`` …) is a database; anything else is a file or a folder on this computer, unless the
engine is Spark. A password in a URL is refused: it would end up in shell history, project files and
manifests. See :func:`parse_source`. :func:`local_paths` names the files a spec reads on this computer.
"""

from __future__ import annotations

import pathlib
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

from dpgui.data.csv_dialect import DialectOrigin
from dpgui.data.file_types import STAT_FORMATS, CsvDialect, format_of_name
from dpgui.errors import ParameterError
from dpgui.vocabulary import Engine, SourceKind

__all__ = ["SourceSpec", "is_database_url", "local_paths", "parse_source", "redacted_url", "sqlite_file", "sqlite_url",
           "sqlite_url_example", "sqlite_url_note", "url_secret", "url_without_password", "which_sqlite_url"]

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

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", SourceKind(self.kind))  # a token read from a file becomes the member

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
        if self.kind is SourceKind.FILE or (self.kind is SourceKind.SPARK and self.table is None and self.query is None):
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

        record: dict[str, Any] = {"kind": self.kind.value}
        if self.kind is SourceKind.FILE:
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
            if self.kind is SourceKind.SPARK:
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
        if self.kind is SourceKind.DATABASE:
            scheme = self.location.split(":", 1)[0]
            return f"{scheme}:///{name}"
        return name

    def to_json(self) -> dict[str, Any]:
        """Every field, for project files (:meth:`from_json` reads it back)."""
        return {
            "kind": self.kind.value,
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
        if not isinstance(doc, dict) or doc.get("kind") not in tuple(SourceKind):
            raise ParameterError("the data source record is not valid", "open the data again")
        dialect = doc.get("dialect")
        spec = cls(
            kind=SourceKind(doc["kind"]),
            location=_text(doc.get("location"), "location", allow_empty=doc["kind"] == SourceKind.SPARK),
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
                            engine=Engine.SPARK if spec.kind is SourceKind.SPARK else Engine.LOCAL,
                            spark_master=spec.spark_master,
                            dialect=spec.dialect, encoding=spec.encoding, row_count_public=spec.row_count_public)


def _text(value: object, what: str, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not allow_empty):
        raise ParameterError(f"the data source's {what} is not valid", "open the data again")
    return value


def _optional_text(value: object, what: str) -> str | None:
    return None if value is None else _text(value, what)


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
    """The spec for ``--source LOCATION [--table T | --query Q [--n-public]] [--engine spark]``: a URL
    with a scheme (``postgresql://…``, ``sqlite:///…``) is a database, anything else a file or folder;
    ``engine="spark"`` makes it a Spark source. Checked here (ParameterError with the fix): a
    password in a URL (refused: use the environment, the keyring or the prompt), table and query
    together, a table or query for a file, a dialect for a database, an encoding for a database or a
    file other than SAS/Stata/SPSS, an unknown engine, the statement ``row_count_public`` without a query.
    Nothing is opened."""
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
        return SourceSpec(SourceKind.SPARK, text, table=table, query=query, dialect=dialect, encoding=encoding,
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
        return SourceSpec(SourceKind.DATABASE, which_sqlite_url(text), table=table, query=query,
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
    return SourceSpec(SourceKind.FILE, text, dialect=dialect, encoding=encoding)


def sqlite_file(location: str) -> pathlib.Path | None:
    """The file an ``sqlite:///…`` URL reads, as :func:`open_spec` opens it (``~`` expanded, %-escapes
    decoded, made absolute); None for another URL or an in-memory database."""
    import sqlalchemy as sa

    try:
        url = sa.engine.make_url(location)
    except sa.exc.ArgumentError:
        return None
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return pathlib.Path(url.database).expanduser().resolve()


def local_paths(spec: SourceSpec) -> list[str]:
    """The files or folders on this computer that ``spec`` reads, which an output must never replace
    (nor, for a folder, write into): a data file or folder, an SQLite database's file (as the source
    opens it: ``~`` expanded, %-escapes decoded), a Spark dataset on this computer; [] for a server."""
    if spec.kind is SourceKind.FILE:
        return [spec.location]
    if spec.kind is SourceKind.SPARK and spec.location:
        if spec.location.startswith("file://"):
            return [spec.location[len("file://"):]]
        return [] if is_database_url(spec.location) else [spec.location]
    if spec.kind is SourceKind.DATABASE and spec.location.lower().startswith("sqlite"):
        path = sqlite_file(spec.location)
        return [str(path)] if path is not None else []
    return []
