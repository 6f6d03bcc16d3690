"""The budget ledger's file: its SQLite schema, opening it safely, upgrading an older schema, and the
transactions every read and write runs in (:class:`LedgerFile`, the base of
:class:`dpgui.report.ledger.store.Ledger`).

Durability and concurrency
--------------------------
* The file is in WAL mode with ``synchronous=FULL``: a committed transaction is on disk and survives a
  crash or power cut.
* A write runs in one ``BEGIN IMMEDIATE`` transaction: two processes (the CLI while the app is open)
  cannot interleave a check and a write. A second writer waits (busy timeout, 10 s by default)
  instead of failing.
* Each :class:`LedgerFile` owns one connection; its methods may be called from any thread (a lock
  serialises them).
* The history is append-only: triggers in the schema refuse deleting releases, datasets or cap
  changes and changing a recorded spend or a recorded release output; only a release's
  ``bundle`` pointer may be updated.

Schema versions
---------------
Version 1 has no ``release_outputs`` table; version 2 adds it; version 3 changes no table: its output
records hold every field a bundle states, and a dpgui that reads up to version 2 refuses the file.
Ledgers of versions 1 and 2 are upgraded in place when opened (their releases keep the records they
have). The dataset-identity tables are created on first use (:mod:`dpgui.report.ledger.identity`).

Files that are not a dpgui ledger
---------------------------------
Opening a file that is not a dpgui ledger (not SQLite, another program's database, or a ledger
written by a newer dpgui with a higher schema version) raises :class:`~dpgui.errors.DataError`
naming the file, and leaves its bytes untouched. An empty file (or an SQLite database with no
tables at all) holds nothing and is made into a ledger.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from dpgui.errors import DataError
from dpgui.formatting import format_figure
from dpgui.report.files import PRIVATE_FILE_MODE, create_file
from dpgui.report.home import HOME_VARIABLE, ensure_private_dir, user_home

__all__ = ["APPLICATION_ID", "DEFAULT_TIMEOUT_S", "LEDGER_FILENAME", "SCHEMA_VERSION", "LedgerFile",
           "default_ledger_path"]

LEDGER_FILENAME = "ledger.sqlite3"
SCHEMA_VERSION = 3  # PRAGMA user_version (1: no release_outputs table; 2: output records without every field a
#                      bundle states — padding, notes, a missing source)
APPLICATION_ID = 0x64706C67  # PRAGMA application_id: "dplg" — marks the file as a dpgui ledger
DEFAULT_TIMEOUT_S = 10.0  # how long a writer waits for another process's transaction
_SQLITE_MAGIC = b"SQLite format 3\x00"
_Opened = TypeVar("_Opened", bound="LedgerFile")

# Added in schema version 2 (also run to upgrade a version-1 ledger, see LedgerFile._upgrade).
_OUTPUTS_SCHEMA = """
CREATE TABLE release_outputs (
    release_id    TEXT PRIMARY KEY NOT NULL REFERENCES releases (release_id),
    levels_sha256 TEXT NOT NULL CHECK (length(levels_sha256) = 64),
    params        TEXT NOT NULL,
    secure_noise  INTEGER NOT NULL CHECK (secure_noise IN (0, 1)),
    recorded_utc  TEXT NOT NULL
);
CREATE TRIGGER release_outputs_no_update BEFORE UPDATE ON release_outputs
BEGIN SELECT RAISE(ABORT, 'dpgui ledger: a recorded release output never changes'); END;
CREATE TRIGGER release_outputs_no_delete BEFORE DELETE ON release_outputs
BEGIN SELECT RAISE(ABORT, 'dpgui ledger: a recorded release output is never deleted'); END;
"""

_SCHEMA = f"""
CREATE TABLE datasets (
    dataset_id  TEXT PRIMARY KEY NOT NULL,
    cap_epsilon REAL NOT NULL CHECK (cap_epsilon > 0),
    cap_delta   REAL NOT NULL CHECK (cap_delta >= 0 AND cap_delta < 1),
    created_utc TEXT NOT NULL
);
CREATE TABLE cap_changes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset_id  TEXT NOT NULL REFERENCES datasets (dataset_id),
    old_epsilon REAL,
    new_epsilon REAL NOT NULL,
    old_delta   REAL,
    new_delta   REAL NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    changed_utc TEXT NOT NULL
);
CREATE TABLE releases (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    release_id  TEXT NOT NULL UNIQUE,
    dataset_id  TEXT NOT NULL REFERENCES datasets (dataset_id),
    created_utc TEXT NOT NULL,
    epsilon     REAL NOT NULL CHECK (epsilon >= 0),
    delta       REAL NOT NULL CHECK (delta >= 0 AND delta < 1),
    rho         REAL CHECK (rho IS NULL OR rho >= 0),
    mechanism   TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '{{}}',
    bundle      TEXT
);
CREATE INDEX releases_by_dataset ON releases (dataset_id, seq);
CREATE INDEX cap_changes_by_dataset ON cap_changes (dataset_id, id);
CREATE TRIGGER releases_append_only BEFORE DELETE ON releases
BEGIN SELECT RAISE(ABORT, 'dpgui ledger: releases are never deleted'); END;
CREATE TRIGGER releases_spend_fixed
BEFORE UPDATE OF seq, release_id, dataset_id, created_utc, epsilon, delta, rho, mechanism, description ON releases
BEGIN SELECT RAISE(ABORT, 'dpgui ledger: a recorded spend never changes'); END;
CREATE TRIGGER datasets_kept BEFORE DELETE ON datasets
BEGIN SELECT RAISE(ABORT, 'dpgui ledger: datasets are never deleted'); END;
CREATE TRIGGER cap_changes_no_delete BEFORE DELETE ON cap_changes
BEGIN SELECT RAISE(ABORT, 'dpgui ledger: the cap history is append-only'); END;
CREATE TRIGGER cap_changes_no_update BEFORE UPDATE ON cap_changes
BEGIN SELECT RAISE(ABORT, 'dpgui ledger: the cap history is append-only'); END;
{_OUTPUTS_SCHEMA}
PRAGMA application_id = {APPLICATION_ID};
PRAGMA user_version = {SCHEMA_VERSION};
"""


def default_ledger_path() -> Path:
    """``user_home() / "ledger.sqlite3"`` (creates the dpgui home folder if needed)."""
    return user_home() / LEDGER_FILENAME


class LedgerFile:
    """One open budget-ledger file (WAL, ``synchronous=FULL``, schema version :data:`SCHEMA_VERSION`).

    ``LedgerFile()`` opens (or creates) ``user_home() / "ledger.sqlite3"``; ``LedgerFile(path)`` another
    file. Use it as a context manager or call :meth:`close`. Every commit is durable when the method
    that made it returns. ``timeout`` (seconds) is how long a write waits for another process's
    transaction.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self._path = Path(path) if path is not None else default_ledger_path()
        self._timeout = float(timeout)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._conn = self._open()

    # -- opening --------------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The ledger file."""
        return self._path

    def _not_a_ledger(self, why: str) -> DataError:
        return DataError(f"{self._path} is not a dpgui budget ledger ({why}); dpgui did not change it",
                         f"move that file away or give another ledger file (the default is {LEDGER_FILENAME} "
                         f"in ${HOME_VARIABLE})")

    def _newer(self, version: int) -> DataError:
        return DataError(f"the budget ledger {self._path} was written by a newer dpgui (schema version {version}, "
                         f"this dpgui reads up to {SCHEMA_VERSION}); dpgui did not change it",
                         "update dpgui, or use another ledger file")

    def _precheck_file(self) -> bool:
        """Check the file's header without SQLite; True if the file is missing or empty."""
        path = self._path
        if path.exists() and not path.is_file():
            raise DataError(f"{path} is not a file", "give the path of a ledger file, not a folder")
        try:
            with open(path, "rb") as handle:
                header = handle.read(100)
        except FileNotFoundError:
            return True
        except OSError as err:
            raise DataError(f"cannot read the budget ledger {path}: {err.strerror or err}",
                            "check the file's permissions") from None
        if not header:
            return True
        if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
            raise self._not_a_ledger("it is not an SQLite database")
        app_id = int.from_bytes(header[68:72], "big")
        version = int.from_bytes(header[60:64], "big")
        if app_id not in (0, APPLICATION_ID):
            raise self._not_a_ledger("it is another program's SQLite database")
        if app_id == APPLICATION_ID and version > SCHEMA_VERSION:
            raise self._newer(version)
        return False

    def _open(self) -> sqlite3.Connection:
        ensure_private_dir(self._path.parent)
        fresh = self._precheck_file()
        if fresh and not self._path.exists():
            try:  # user-only permissions; SQLite gives the -wal/-shm files the same mode
                create_file(self._path, b"", PRIVATE_FILE_MODE)
            except FileExistsError:
                pass  # another process created it a moment ago: fine
            except OSError as err:
                raise DataError(f"cannot create the budget ledger {self._path}: {err.strerror or err}",
                                f"check the folder's permissions, or set {HOME_VARIABLE} to a writable folder") from None
        try:
            conn = sqlite3.connect(self._path, timeout=self._timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as err:
            raise DataError(f"cannot open the budget ledger {self._path}: {err}", "check the file and its folder") from None
        try:
            self._conn = conn
            with self._sqlite_errors():
                self._prepare_with_retries(conn)
        except BaseException:
            conn.close()
            self._conn = None
            raise
        return conn

    def _read_identity(self, conn: sqlite3.Connection) -> tuple[int, int, int]:
        # one statement, so one snapshot: another process may be creating the schema right now
        app_id, version, objects = conn.execute(
            "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), "
            "(SELECT count(*) FROM sqlite_master)").fetchone()
        return int(app_id), int(version), int(objects)

    def _check_identity(self, app_id: int, version: int, objects: int) -> bool:
        """Raise if not ours; True if the database is empty (to be initialised)."""
        if app_id == APPLICATION_ID:
            if version > SCHEMA_VERSION:
                raise self._newer(version)
            if version < 1:
                raise DataError(f"the budget ledger {self._path} is damaged (schema version {version})",
                                "restore it from a backup, or move it away to start a new ledger")
            return False
        if app_id == 0 and version == 0 and objects == 0:
            return True
        raise self._not_a_ledger("it is another program's SQLite database")

    def _prepare_with_retries(self, conn: sqlite3.Connection) -> None:
        """Validate and prepare, retrying while another process holds a lock. SQLite's busy handler
        is not called for every lock conflict while a fresh file switches to WAL (it may report
        "database is locked" at once), so opening retries on its own until the timeout."""
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                self._validate_and_prepare(conn)
                return
            except sqlite3.OperationalError as err:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if not _is_busy(err) or time.monotonic() >= deadline:
                    raise
                time.sleep(random.uniform(0.002, 0.02))

    def _validate_and_prepare(self, conn: sqlite3.Connection) -> None:
        try:
            empty = self._check_identity(*self._read_identity(conn))
        except sqlite3.OperationalError:
            raise  # busy, unreadable folder, …: retried or reported by the caller
        except sqlite3.DatabaseError as err:  # "file is not a database" and the like
            raise self._not_a_ledger(f"SQLite says: {err}") from None
        # From here on the file is ours (or empty): it may be changed.
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise DataError(f"the budget ledger {self._path} cannot use SQLite's write-ahead log "
                                f"(journal mode stays {mode!r}; a network drive?)",
                                f"keep the ledger on a local disk: set {HOME_VARIABLE} to a local folder")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute(f"PRAGMA busy_timeout={int(self._timeout * 1000)}")
        if empty:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if self._check_identity(*self._read_identity(conn)):  # another process may have won
                    for statement in _split_sql(_SCHEMA):
                        conn.execute(statement)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        elif self._read_identity(conn)[1] < SCHEMA_VERSION:
            self._upgrade(conn)

    def _upgrade(self, conn: sqlite3.Connection) -> None:
        """Version 1 → 2: add the ``release_outputs`` table; 2 → 3: no table changes, the output
        records written from now on hold every field a bundle states, and a dpgui that reads up to
        version 2 (which would add records without them, and sign releases unchecked against them)
        refuses the upgraded file. Nothing recorded is changed. One transaction; another process may
        have upgraded it meanwhile (then nothing happens)."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version == 1:
                for statement in _split_sql(_OUTPUTS_SCHEMA):
                    conn.execute(statement)
            if version < SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    # -- plumbing -------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self: _Opened) -> _Opened:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"the budget ledger {self._path} is closed")
        return self._conn

    @contextmanager
    def _sqlite_errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as err:
            text = str(err)
            if _is_busy(err):
                raise DataError(f"the budget ledger {self._path} is busy: another dpgui window or command has been "
                                f"writing to it for more than {format_figure(self._timeout)} s",
                                "wait for it to finish (or close it) and try again") from None
            raise DataError(f"the budget ledger {self._path} cannot be used: {text}",
                            "check the disk (space, permissions) and try again") from None
        except sqlite3.IntegrityError as err:
            raise DataError(f"the budget ledger {self._path} refused a change: {err}",
                            "this is a bug in dpgui; please report it") from None
        except sqlite3.DatabaseError as err:
            raise DataError(f"the budget ledger {self._path} is damaged: {err}",
                            "restore it from a backup, or move it away to start a new ledger") from None

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[sqlite3.Connection]:
        """One transaction: ``BEGIN IMMEDIATE`` (writes, takes the write lock first) or a consistent
        read snapshot; committed on success, rolled back on any exception."""
        with self._lock, self._sqlite_errors():
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise


def _is_busy(err: sqlite3.OperationalError) -> bool:
    text = str(err).lower()
    return "locked" in text or "busy" in text


def _split_sql(script: str) -> list[str]:
    """Statements of the schema script (triggers contain ';' inside BEGIN … END)."""
    statements, current = [], ""
    for line in script.strip().splitlines():
        current += line + "\n"
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    if current.strip():
        statements.append(current.strip())
    return statements
