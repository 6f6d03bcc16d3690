"""The privacy-budget ledger: every spend of ε (and δ, ρ) per dataset, against a cap.

One SQLite file, ``user_home() / "ledger.sqlite3"`` by default (``$DPGUI_HOME`` overrides),
shared by the app and the CLI.

Durability and concurrency
--------------------------
* The file is in WAL mode with ``synchronous=FULL``: when :meth:`Ledger.spend` returns, the spend
  is on disk and survives a crash or power cut. Callers record the spend *before* they draw
  noise (see ``dpgui.report.publish``), so a crash can waste budget but can never lose a
  recorded spend, nor let a release out unrecorded.
* :meth:`Ledger.spend` checks the cap and inserts the row in one ``BEGIN IMMEDIATE`` transaction:
  two processes (the CLI while the app is open) cannot both pass the check. A second writer
  waits (busy timeout, 10 s by default) instead of failing.
* Each :class:`Ledger` owns one connection; its methods may be called from any thread (a lock
  serialises them).
* The history is append-only: triggers in the schema refuse deleting releases, datasets or cap
  changes and changing a recorded spend or a recorded release output; only a release's
  ``bundle`` pointer may be updated.

Accounting
----------
A spend fits if the dataset's releases, the new one included, fit the cap under
**basic composition** (Σε ≤ cap ε and Σδ ≤ cap δ), **or** — when every one of them carries a zCDP
ρ (Gaussian releases) and cap δ > 0 — under **zCDP composition**: Σρ converted to ε at δ = cap δ
with the Canonne–Kamath–Steinke bound (:func:`dpgui.core.accounting.zcdp_epsilon`) is ≤ cap ε.
Both are valid bounds on the composed privacy loss, so taking either is sound.

Every release dpgui makes carries a ρ (:meth:`dpgui.core.plan.Plan.ledger_charge`): a Gaussian
release its plan's ρ (and its δ), a Laplace release ρ = ε²/2 (and δ = 0), which is valid because
pure ε-DP implies ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4). So Laplace and Gaussian releases of
one dataset compose under zCDP whenever that is cheaper. One release without ρ (recorded by an
earlier dpgui, which stored ρ = NULL for Laplace) makes the whole dataset fall back to basic
composition. A release with δ > 0 never fits a cap with δ = 0 (neither bound applies): the
refusal says to raise the cap's δ (:attr:`BudgetExceeded.short_of` is ``"cap_delta"``).
Sums use ``math.fsum``; a total within a relative 1e-9 of the cap fits (so three spends of ε/3
fit a cap of ε, while 1.0000001·ε does not).

What is stored
--------------
Dataset ids, caps, reasons, release ids, ε/δ/ρ, the mechanism's name, and the ``description``
dict exactly as the caller passes it (callers pass only public plan parameters), plus an
optional path to the written bundle. Nothing derived from the confidential data.

After the noise is drawn, :meth:`Ledger.record_output` adds the release's **output record**
(table ``release_outputs``, schema version 2): the SHA-256 of the released noisy levels (public
values), the public parameters the release was published with (since schema version 3 every field a
bundle states: :func:`dpgui.report.cdf.publish.release_params`), and whether the noise came from
the operating system's secure source. It is written once and never changed; signing a release
checks it (:func:`dpgui.report.cdf.publish.authenticate_release`, docs/design.md, "Signing and the
ledger"). Ledgers of schema versions 1 and 2 are upgraded in place when opened (their releases keep
the records they have: none in version 1, records without the later fields in version 2).

Files that are not a dpgui ledger
---------------------------------
Opening a file that is not a dpgui ledger (not SQLite, another program's database, or a ledger
written by a newer dpgui with a higher schema version) raises :class:`~dpgui.errors.DataError`
naming the file, and leaves its bytes untouched. An empty file (or an SQLite database with no
tables at all) holds nothing and is made into a ledger.
"""

from __future__ import annotations

import json
import math
import os
import random
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dpgui.core.accounting import zcdp_epsilon as _zcdp_epsilon
from dpgui.core.accounting import zcdp_rho as _zcdp_rho
from dpgui.errors import DataError, DpguiError, ParameterError
from dpgui.formatting import control_character
from dpgui.report.files import PRIVATE_FILE_MODE, create_file
from dpgui.report.home import HOME_VARIABLE, ensure_private_dir, user_home

__all__ = [
    "LEDGER_FILENAME",
    "SCHEMA_VERSION",
    "RELATIVE_TOLERANCE",
    "BudgetExceeded",
    "SHORT_OF",
    "NoCapSet",
    "Totals",
    "spent_epsilon",
    "ReleaseEntry",
    "CapChange",
    "ReleaseOutput",
    "Ledger",
    "default_ledger_path",
]

LEDGER_FILENAME = "ledger.sqlite3"
SCHEMA_VERSION = 3  # PRAGMA user_version (1: no release_outputs table; 2: output records without every field a
#                      bundle states — padding, notes, a missing source —, which dpgui 0.2 signed unchecked)
APPLICATION_ID = 0x64706C67  # PRAGMA application_id: "dplg" — marks the file as a dpgui ledger
RELATIVE_TOLERANCE = 1e-9  # a total within cap·(1 + 1e-9) fits: float rounding, not extra budget
DEFAULT_TIMEOUT_S = 10.0  # how long a writer waits for another process's transaction
MAX_ID_LENGTH = 200
MAX_TEXT_LENGTH = 4000
_SQLITE_MAGIC = b"SQLite format 3\x00"


SHORT_OF = ("epsilon", "delta", "cap_delta")  # what a refused spend lacks (BudgetExceeded.short_of)


class BudgetExceeded(DpguiError):
    """A spend would take a dataset over its cap; nothing was recorded.

    ``totals`` is the dataset's state before the refused spend. ``short_of`` says what is missing:
    ``"epsilon"`` (not enough ε left), ``"delta"`` (ε would fit but not enough δ is left) or
    ``"cap_delta"`` (the release needs δ > 0 and the cap's δ is 0: raise the cap's δ).
    """

    def __init__(self, problem: str, fix: str, totals: Totals, short_of: str = "epsilon") -> None:
        super().__init__(problem, fix)
        if short_of not in SHORT_OF:
            raise ValueError(f"short_of must be one of {SHORT_OF}, not {short_of!r}")
        self.totals = totals
        self.short_of = short_of


class NoCapSet(DpguiError):
    """The dataset has no budget cap in the ledger (so nothing can be spent on it)."""

    def __init__(self, dataset_id: str) -> None:
        super().__init__(f"no privacy budget is set for dataset {dataset_id!r}",
                         f"set a budget first: `dpgui ledger cap {_shell_word(dataset_id)} EPSILON`, "
                         "or in the Ledger window")
        self.dataset_id = dataset_id


@dataclass(frozen=True)
class Totals:
    """A dataset's cap and what has been spent on it.

    ``epsilon_spent``/``delta_spent``: basic composition, Σε and Σδ over all releases.
    ``rho_spent``: Σρ if every release has a ρ (0.0 with no releases), else None.
    ``zcdp_epsilon``: ``rho_spent`` converted to ε at δ = ``cap_delta`` (CKS 2020); None when
    ``rho_spent`` is None or ``cap_delta`` is 0.
    ``accounting``: "zcdp" when that conversion gives a smaller ε than Σε (or Σδ is over the cap δ,
    so that only the zCDP bound holds), else "basic".
    ``epsilon_remaining``: cap ε minus the spent ε under ``accounting``, ≥ 0. Under zCDP the
    remainder is not additive: what fits next depends on the release (one with a ρ may use up to
    ``rho_remaining``; a release without ρ must fit basic composition).
    ``delta_remaining``: cap δ − Σδ, ≥ 0 (basic composition).
    ``rho_remaining``: the extra ρ a release may still spend under zCDP (None if the zCDP path does
    not apply: a release without ρ, or cap δ = 0). ``releases``: how many releases were recorded.
    """

    dataset_id: str
    cap_epsilon: float
    cap_delta: float
    epsilon_spent: float
    delta_spent: float
    rho_spent: float | None
    zcdp_epsilon: float | None
    epsilon_remaining: float
    delta_remaining: float
    rho_remaining: float | None
    accounting: str
    releases: int


@dataclass(frozen=True)
class ReleaseEntry:
    """One recorded spend. ``created_utc`` is ISO 8601 UTC ("…Z"); ``description`` is the caller's
    dict of public plan parameters; ``bundle`` is the path of the written bundle, if recorded."""

    release_id: str
    dataset_id: str
    created_utc: str
    epsilon: float
    delta: float
    rho: float | None
    mechanism: str
    description: dict[str, Any] = field(hash=False)
    bundle: str | None


@dataclass(frozen=True)
class CapChange:
    """One change of a dataset's cap; ``old_*`` are None when the cap was first set."""

    dataset_id: str
    old_epsilon: float | None
    new_epsilon: float
    old_delta: float | None
    new_delta: float
    reason: str
    changed_utc: str


@dataclass(frozen=True)
class ReleaseOutput:
    """What a release published, recorded right after its noise was drawn.

    ``levels_sha256``: hex SHA-256 of the released noisy node counts (canonical form:
    :func:`dpgui.report.publish.levels_sha256`); ``params``: the public parameters it was published
    with (plan, bounds, column, …); ``secure``: the noise came from the OS's secure source.
    """

    release_id: str
    levels_sha256: str
    params: dict[str, Any] = field(hash=False)
    secure: bool
    recorded_utc: str


# Added in schema version 2 (also run to upgrade a version-1 ledger, see Ledger._upgrade).
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


def default_dataset_name(path: str | os.PathLike[str]) -> str:
    """The ledger's default name for a file's data: its name without extensions (x.csv.gz → x)."""
    name = Path(path).name
    return name.split(".")[0] or name


def default_ledger_path() -> Path:
    """``user_home() / "ledger.sqlite3"`` (creates the dpgui home folder if needed)."""
    return user_home() / LEDGER_FILENAME


# ---------------------------------------------------------------------------------------------
# validation and formatting


def _shell_word(text: str) -> str:
    return text if text and all(c.isalnum() or c in "-_.:/@+" for c in text) else "'" + text.replace("'", "'\\''") + "'"


def _num(x: float) -> str:
    """A plain number for messages: up to 6 significant digits, no trailing noise."""
    return f"{x:.6g}"


def _json_text(value: Any, what: str) -> str:
    """``value`` as canonical JSON text (sorted keys, no NaN), or a ParameterError naming ``what``."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ParameterError(f"{what} cannot be stored as JSON: {err}",
                             "pass only plain numbers, text, lists and dicts (no NaN)") from None


def _check_id(kind: str, value: object) -> str:
    if not isinstance(value, str):
        raise ParameterError(f"the {kind} must be text, not {type(value).__name__}", f"give a short name for the {kind}")
    if not value:
        raise ParameterError(f"the {kind} is empty", f"give a short name for the {kind}, e.g. 'payroll-2024'")
    if len(value) > MAX_ID_LENGTH:
        raise ParameterError(f"the {kind} is {len(value)} characters long (at most {MAX_ID_LENGTH})",
                             f"give a shorter {kind}")
    if not value.isprintable() or value != value.strip():
        raise ParameterError(f"the {kind} {value!r} has control characters or leading/trailing spaces",
                             "use letters, digits, spaces inside, and punctuation only")
    return value


def _check_epsilon(value: object, *, cap: bool) -> float:
    what = "the cap ε" if cap else "ε"
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"{what} must be a number, not {value!r}", "give a number such as 1.0") from None
    if not math.isfinite(x) or x < 0 or (cap and x == 0):
        bound = "> 0" if cap else "≥ 0"
        raise ParameterError(f"{what} must be a finite number {bound}, not {value!r}", "give a number such as 1.0")
    return x


def _check_delta(value: object, *, cap: bool) -> float:
    what = "the cap δ" if cap else "δ"
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"{what} must be a number, not {value!r}", "give 0, or a small probability such as 1e-6") from None
    if not (0.0 <= x < 1.0):
        raise ParameterError(f"{what} must be at least 0 and below 1, not {value!r}",
                             "give 0, or a small probability such as 1e-6")
    return x


def _check_rho(value: object) -> float | None:
    if value is None:
        return None
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"ρ must be a number or None, not {value!r}", "give the release's zCDP ρ ≥ 0, or None") from None
    if not math.isfinite(x) or x < 0:
        raise ParameterError(f"ρ must be a finite number ≥ 0, not {value!r}", "give the release's zCDP ρ ≥ 0, or None")
    return x


def _check_charge(epsilon: object, delta: object, rho: object) -> tuple[float, float, float | None]:
    """One release's (ε, δ, ρ), each checked as :meth:`Ledger.spend` requires."""
    return _check_epsilon(epsilon, cap=False), _check_delta(delta, cap=False), _check_rho(rho)


def _check_text(what: str, value: object) -> str:
    if not isinstance(value, str):
        raise ParameterError(f"the {what} must be text, not {type(value).__name__}", f"give the {what} as text")
    if len(value) > MAX_TEXT_LENGTH:
        raise ParameterError(f"the {what} is {len(value)} characters long (at most {MAX_TEXT_LENGTH})",
                             f"shorten the {what}")
    return value


def _check_reason(value: object) -> str:
    """A cap change's reason: text without control characters (a CR or LF could forge a line of the
    printed cap history, an ESC sequence rewrite the terminal)."""
    reason = _check_text("reason", value)
    found = control_character(reason)
    if found is not None:
        raise ParameterError(f"the reason holds the control character {found}", "write the reason on one line, as "
                             "plain text (no line breaks, tabs or escape sequences)")
    return reason


def _now_utc() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# ---------------------------------------------------------------------------------------------
# accounting over one dataset's releases


def _fits(total: float, cap: float) -> bool:
    return total <= cap * (1.0 + RELATIVE_TOLERANCE)


@dataclass(frozen=True)
class _Account:
    epsilon_spent: float
    delta_spent: float
    rho_spent: float | None
    zcdp_epsilon: float | None
    basic_fits: bool
    zcdp_fits: bool

    @property
    def fits(self) -> bool:
        return self.basic_fits or self.zcdp_fits


def _account(cap_epsilon: float, cap_delta: float, rows: Sequence[tuple[float, float, float | None]]) -> _Account:
    eps = math.fsum(r[0] for r in rows)
    dlt = math.fsum(r[1] for r in rows)
    rho = math.fsum(r[2] for r in rows) if all(r[2] is not None for r in rows) else None  # type: ignore[misc]
    zeps = _zcdp_epsilon(rho, cap_delta) if rho is not None and cap_delta > 0 else None
    basic = _fits(eps, cap_epsilon) and _fits(dlt, cap_delta)
    zcdp = zeps is not None and _fits(zeps, cap_epsilon)
    return _Account(eps, dlt, rho, zeps, basic, zcdp)


def _totals(dataset_id: str, cap_epsilon: float, cap_delta: float,
            rows: Sequence[tuple[float, float, float | None]]) -> Totals:
    acc = _account(cap_epsilon, cap_delta, rows)
    basic_applies = _fits(acc.delta_spent, cap_delta)  # Σδ over the cap: only the zCDP bound holds
    use_zcdp = acc.zcdp_epsilon is not None and (acc.zcdp_epsilon < acc.epsilon_spent or not basic_applies)
    spent = acc.zcdp_epsilon if use_zcdp else acc.epsilon_spent
    assert spent is not None
    rho_remaining = None
    if acc.rho_spent is not None and cap_delta > 0:
        rho_remaining = max(0.0, _zcdp_rho(cap_epsilon, cap_delta) - acc.rho_spent)
    return Totals(
        dataset_id=dataset_id,
        cap_epsilon=cap_epsilon,
        cap_delta=cap_delta,
        epsilon_spent=acc.epsilon_spent,
        delta_spent=acc.delta_spent,
        rho_spent=acc.rho_spent,
        zcdp_epsilon=acc.zcdp_epsilon,
        epsilon_remaining=max(0.0, cap_epsilon - spent),
        delta_remaining=max(0.0, cap_delta - acc.delta_spent),
        rho_remaining=rho_remaining,
        accounting="zcdp" if use_zcdp else "basic",
        releases=len(rows),
    )


def spent_epsilon(totals: Totals) -> float:
    """The ε a dataset has spent under the accounting that applies (``totals.accounting``): the
    zCDP total converted at the cap's δ, or Σε (basic composition). Not clipped at the cap."""
    if totals.accounting == "zcdp" and totals.zcdp_epsilon is not None:
        return totals.zcdp_epsilon
    return totals.epsilon_spent


# ---------------------------------------------------------------------------------------------
# the ledger


class Ledger:
    """The budget ledger in one SQLite file (WAL, ``synchronous=FULL``, schema version 2).

    ``Ledger()`` opens (or creates) ``user_home() / "ledger.sqlite3"``; ``Ledger(path)`` another
    file. Use it as a context manager or call :meth:`close`. Every commit is durable when the
    method returns; a crash can waste budget (spent, then no release) but never loses a recorded
    spend. ``timeout`` (seconds) is how long a write waits for another process's transaction.
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

    def __enter__(self) -> Ledger:
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
                                f"writing to it for more than {_num(self._timeout)} s",
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

    @staticmethod
    def _cap(conn: sqlite3.Connection, dataset_id: str) -> tuple[float, float] | None:
        row = conn.execute("SELECT cap_epsilon, cap_delta FROM datasets WHERE dataset_id = ?", (dataset_id,)).fetchone()
        return None if row is None else (float(row[0]), float(row[1]))

    @classmethod
    def _required_cap(cls, conn: sqlite3.Connection, dataset_id: str) -> tuple[float, float]:
        """The dataset's (cap ε, cap δ); :class:`NoCapSet` if it has none."""
        cap = cls._cap(conn, dataset_id)
        if cap is None:
            raise NoCapSet(dataset_id)
        return cap

    @staticmethod
    def _spends(conn: sqlite3.Connection, dataset_id: str) -> list[tuple[float, float, float | None]]:
        rows = conn.execute("SELECT epsilon, delta, rho FROM releases WHERE dataset_id = ? ORDER BY seq",
                            (dataset_id,)).fetchall()
        return [(float(e), float(d), None if r is None else float(r)) for e, d, r in rows]

    # -- writing --------------------------------------------------------------------------------

    def set_cap(self, dataset_id: str, epsilon: float, delta: float = 0.0, reason: str = "") -> None:
        """Create ``dataset_id`` with the cap (ε, δ), or change its cap; every change is logged in
        the cap history with ``reason``. Setting the same cap again changes (and logs) nothing.

        ε must be finite and > 0, 0 ≤ δ < 1 (:class:`ParameterError`). A cap below what is already
        spent (under every applicable accounting) is refused with :class:`DataError`. Raising a cap
        (a larger ε or δ) needs a ``reason`` (:class:`ParameterError` without one): more budget for the
        same people is a decision someone must be able to explain later.
        """
        dataset_id = _check_id("dataset id", dataset_id)
        cap_epsilon = _check_epsilon(epsilon, cap=True)
        cap_delta = _check_delta(delta, cap=True)
        reason = _check_reason(reason)
        with self._transaction(write=True) as conn:
            now = _now_utc()
            old = self._cap(conn, dataset_id)
            if old is None:
                conn.execute("INSERT INTO datasets (dataset_id, cap_epsilon, cap_delta, created_utc) VALUES (?, ?, ?, ?)",
                             (dataset_id, cap_epsilon, cap_delta, now))
            else:
                if old == (cap_epsilon, cap_delta):
                    return
                if (cap_epsilon > old[0] or cap_delta > old[1]) and not reason.strip():
                    raise ParameterError(
                        f"raising the cap of dataset {dataset_id!r} from ε = {_num(old[0])}, δ = {_num(old[1])} to "
                        f"ε = {_num(cap_epsilon)}, δ = {_num(cap_delta)} needs a reason",
                        "say why it is raised (e.g. --reason \"board decision 2026-03\"); it is kept in the cap history")
                spends = self._spends(conn, dataset_id)
                acc = _account(cap_epsilon, cap_delta, spends)
                if not acc.fits:
                    before = _totals(dataset_id, old[0], old[1], spends)
                    spent = _spent_phrase(before)
                    raise DataError(f"cannot set the cap of dataset {dataset_id!r} to ε = {_num(cap_epsilon)}, "
                                    f"δ = {_num(cap_delta)}: already spent {spent}",
                                    "a cap can be lowered only down to what is already spent; choose a larger cap")
                conn.execute("UPDATE datasets SET cap_epsilon = ?, cap_delta = ? WHERE dataset_id = ?",
                             (cap_epsilon, cap_delta, dataset_id))
            conn.execute("INSERT INTO cap_changes (dataset_id, old_epsilon, new_epsilon, old_delta, new_delta, reason, "
                         "changed_utc) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (dataset_id, None if old is None else old[0], cap_epsilon,
                          None if old is None else old[1], cap_delta, reason, now))

    def spend(self, dataset_id: str, release_id: str, epsilon: float, delta: float = 0.0, rho: float | None = None,
              mechanism: str = "", description: dict[str, Any] | None = None) -> Totals:
        """Record a release's spend on ``dataset_id`` if it fits the cap; return the new totals.

        Check and insert happen in one ``BEGIN IMMEDIATE`` transaction, so concurrent processes
        cannot both pass the check; the spend is on disk when this returns. Call it *before*
        drawing any noise. ``epsilon`` ≥ 0 and ``delta`` ∈ [0, 1) are the release's own (ε, δ)
        for basic composition; ``rho`` is its zCDP ρ, or None (then the dataset counts by basic
        composition only); :meth:`dpgui.core.plan.Plan.ledger_charge` gives all three. ``description``
        holds public plan parameters only (stored as JSON).

        Raises :class:`NoCapSet` (no cap for the dataset), :class:`BudgetExceeded` (it does not
        fit; nothing is recorded), :class:`DataError` (``release_id`` already recorded) or
        :class:`ParameterError` (bad arguments).
        """
        dataset_id = _check_id("dataset id", dataset_id)
        release_id = _check_id("release id", release_id)
        eps, dlt, rho_value = _check_charge(epsilon, delta, rho)
        mechanism = _check_text("mechanism", mechanism)
        if description is None:
            description = {}
        if not isinstance(description, dict):
            raise ParameterError(f"the description must be a dict, not {type(description).__name__}",
                                 "pass the release's public plan parameters as a dict")
        description_json = _json_text(description, "the description")
        with self._transaction(write=True) as conn:
            cap = self._required_cap(conn, dataset_id)
            existing = conn.execute("SELECT dataset_id FROM releases WHERE release_id = ?", (release_id,)).fetchone()
            if existing is not None:
                raise DataError(f"release {release_id!r} is already recorded in the ledger (dataset {existing[0]!r})",
                                "give each release a new id")
            after = self._fitting_spends(conn, dataset_id, cap, f"release {release_id!r}", eps, dlt, rho_value)
            conn.execute("INSERT INTO releases (release_id, dataset_id, created_utc, epsilon, delta, rho, mechanism, "
                         "description) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (release_id, dataset_id, _now_utc(), eps, dlt, rho_value, mechanism, description_json))
            return _totals(dataset_id, cap[0], cap[1], after)

    def check_spend(self, dataset_id: str, epsilon: float, delta: float = 0.0, rho: float | None = None) -> Totals:
        """Would a release of (ε, δ, ρ) fit the cap now? Returns the current totals, or raises what
        :meth:`spend` would (:class:`NoCapSet`, :class:`BudgetExceeded`). Records nothing: use it to
        refuse early (before reading data); :meth:`spend` checks again when it records."""
        dataset_id = _check_id("dataset id", dataset_id)
        eps, dlt, rho_value = _check_charge(epsilon, delta, rho)
        with self._transaction(write=False) as conn:
            cap = self._required_cap(conn, dataset_id)
            after = self._fitting_spends(conn, dataset_id, cap, "this release", eps, dlt, rho_value)
            return _totals(dataset_id, cap[0], cap[1], after[:-1])  # the totals now, without this release

    def totals_after(self, dataset_id: str, epsilon: float, delta: float = 0.0, rho: float | None = None) -> Totals:
        """The totals as they would be after a spend of (ε, δ, ρ), whether or not it fits (for a
        confirmation's "after this release"); records nothing. :class:`NoCapSet` without a cap."""
        dataset_id = _check_id("dataset id", dataset_id)
        eps, dlt, rho_value = _check_charge(epsilon, delta, rho)
        with self._transaction(write=False) as conn:
            cap = self._required_cap(conn, dataset_id)
            return _totals(dataset_id, cap[0], cap[1], self._spends(conn, dataset_id) + [(eps, dlt, rho_value)])

    def _fitting_spends(self, conn: sqlite3.Connection, dataset_id: str, cap: tuple[float, float], what: str,
                        eps: float, dlt: float, rho: float | None) -> list[tuple[float, float, float | None]]:
        """The dataset's spends with the new one appended; :class:`BudgetExceeded` if they do not fit."""
        spends = self._spends(conn, dataset_id)
        after = spends + [(eps, dlt, rho)]
        acc = _account(cap[0], cap[1], after)
        if not acc.fits:
            raise _refusal(_totals(dataset_id, cap[0], cap[1], spends), what, eps, dlt, rho, acc)
        return after

    def record_bundle(self, release_id: str, bundle_path: str) -> None:
        """Point a recorded release at its written bundle (manifest path). Never changes a spend;
        recording again replaces the pointer. Unknown ``release_id`` → :class:`DataError`."""
        release_id = _check_id("release id", release_id)
        bundle_path = _check_text("bundle path", str(bundle_path))
        with self._transaction(write=True) as conn:
            cursor = conn.execute("UPDATE releases SET bundle = ? WHERE release_id = ?", (bundle_path, release_id))
            if cursor.rowcount != 1:
                raise DataError(f"release {release_id!r} is not in the budget ledger {self._path}",
                                "record the spend first (the release id comes from the spend)")

    def check_bundle_pointer(self, release_id: str, bundle_path: str) -> None:
        """Raise now what :meth:`record_bundle` would raise (unknown release, path too long, ledger
        busy, read-only or full): the same update in a transaction that is rolled back. Call it
        before writing a bundle, so that a bundle is not written that the ledger cannot point to."""
        release_id = _check_id("release id", release_id)
        bundle_path = _check_text("bundle path", str(bundle_path))
        with self._lock, self._sqlite_errors():
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                cursor = conn.execute("UPDATE releases SET bundle = ? WHERE release_id = ?", (bundle_path, release_id))
                found = cursor.rowcount == 1
            finally:
                conn.execute("ROLLBACK")
        if not found:
            raise DataError(f"release {release_id!r} is not in the budget ledger {self._path}",
                            "only a release recorded in this ledger can be exported")

    def record_output(self, release_id: str, levels_sha256: str, params: dict[str, Any], secure: bool) -> None:
        """Record what release ``release_id`` published (once; never changed): the SHA-256 of its
        released levels, its public parameters and whether its noise was secure. Call it right
        after the noise is drawn. Unknown release or a second record → :class:`DataError`."""
        release_id = _check_id("release id", release_id)
        if not (isinstance(levels_sha256, str) and len(levels_sha256) == 64
                and all(c in "0123456789abcdef" for c in levels_sha256)):
            raise ParameterError("the levels digest must be 64 lowercase hex digits (SHA-256)",
                                 "pass dpgui.report.publish.levels_sha256(levels)")
        params_json = _json_text(params, "the release parameters")
        with self._transaction(write=True) as conn:
            if conn.execute("SELECT 1 FROM releases WHERE release_id = ?", (release_id,)).fetchone() is None:
                raise DataError(f"release {release_id!r} is not in the budget ledger {self._path}",
                                "record the spend first (the release id comes from the spend)")
            if conn.execute("SELECT 1 FROM release_outputs WHERE release_id = ?", (release_id,)).fetchone():
                raise DataError(f"the output of release {release_id!r} is already recorded", "it is recorded once")
            conn.execute("INSERT INTO release_outputs (release_id, levels_sha256, params, secure_noise, recorded_utc) "
                         "VALUES (?, ?, ?, ?, ?)", (release_id, levels_sha256, params_json, int(bool(secure)), _now_utc()))

    # -- reading --------------------------------------------------------------------------------

    def release_output(self, release_id: str) -> ReleaseOutput | None:
        """The output record of ``release_id`` (None if the release has none, e.g. it was made
        by a dpgui that did not record outputs, or is unknown)."""
        with self._transaction(write=False) as conn:
            row = conn.execute("SELECT release_id, levels_sha256, params, secure_noise, recorded_utc FROM release_outputs "
                               "WHERE release_id = ?", (release_id,)).fetchone()
        if row is None:
            return None
        try:
            params = json.loads(row[2])
        except ValueError:
            params = None
        return ReleaseOutput(str(row[0]), str(row[1]), params if isinstance(params, dict) else {}, bool(row[3]),
                             str(row[4]))

    def totals(self, dataset_id: str) -> Totals:
        """The cap and spend of ``dataset_id``; :class:`NoCapSet` if it has no cap."""
        dataset_id = _check_id("dataset id", dataset_id)
        with self._transaction(write=False) as conn:
            cap = self._required_cap(conn, dataset_id)
            return _totals(dataset_id, cap[0], cap[1], self._spends(conn, dataset_id))

    def datasets(self) -> list[Totals]:
        """Totals of every dataset with a cap, sorted by dataset id."""
        with self._transaction(write=False) as conn:
            caps = conn.execute("SELECT dataset_id, cap_epsilon, cap_delta FROM datasets ORDER BY dataset_id").fetchall()
            return [_totals(d, float(e), float(x), self._spends(conn, d)) for d, e, x in caps]

    def releases(self, dataset_id: str | None = None) -> list[ReleaseEntry]:
        """Recorded releases, **newest first** (in the order they were recorded), of one dataset
        or of all; an unknown dataset has none."""
        query = ("SELECT release_id, dataset_id, created_utc, epsilon, delta, rho, mechanism, description, bundle "
                 "FROM releases")
        with self._transaction(write=False) as conn:
            if dataset_id is None:
                rows = conn.execute(query + " ORDER BY seq DESC").fetchall()
            else:
                rows = conn.execute(query + " WHERE dataset_id = ? ORDER BY seq DESC", (dataset_id,)).fetchall()
        return [_entry(row) for row in rows]

    def release(self, release_id: str) -> ReleaseEntry | None:
        """The recorded release ``release_id``, or None."""
        with self._transaction(write=False) as conn:
            row = conn.execute("SELECT release_id, dataset_id, created_utc, epsilon, delta, rho, mechanism, description, "
                               "bundle FROM releases WHERE release_id = ?", (release_id,)).fetchone()
        return None if row is None else _entry(row)

    def cap_history(self, dataset_id: str) -> list[CapChange]:
        """Every cap set or change of ``dataset_id``, oldest first (empty for an unknown dataset)."""
        with self._transaction(write=False) as conn:
            rows = conn.execute("SELECT dataset_id, old_epsilon, new_epsilon, old_delta, new_delta, reason, changed_utc "
                                "FROM cap_changes WHERE dataset_id = ? ORDER BY id", (dataset_id,)).fetchall()
        return [CapChange(d, None if oe is None else float(oe), float(ne), None if od is None else float(od), float(nd),
                          str(r), str(t)) for d, oe, ne, od, nd, r, t in rows]


def _is_busy(err: sqlite3.OperationalError) -> bool:
    text = str(err).lower()
    return "locked" in text or "busy" in text


def _entry(row: tuple[Any, ...]) -> ReleaseEntry:
    release_id, dataset_id, created, eps, dlt, rho, mechanism, description, bundle = row
    try:
        parsed = json.loads(description) if description else {}
    except ValueError:
        parsed = {"unreadable": str(description)}
    return ReleaseEntry(str(release_id), str(dataset_id), str(created), float(eps), float(dlt),
                        None if rho is None else float(rho), str(mechanism), parsed if isinstance(parsed, dict) else
                        {"value": parsed}, None if bundle is None else str(bundle))


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


def _spent_phrase(t: Totals) -> str:
    text = f"ε = {_num(t.epsilon_spent)}"
    if t.delta_spent > 0 or t.cap_delta > 0:
        text += f", δ = {_num(t.delta_spent)}"
    if t.zcdp_epsilon is not None and t.releases:
        text += f" (with zCDP accounting ε = {_num(t.zcdp_epsilon)} at δ = {_num(t.cap_delta)})"
    return f"{text} in {t.releases} release(s)"


def _floor_digits(x: float, digits: int = 4) -> float:
    """``x`` ≥ 0 rounded down to ``digits`` significant digits (a limit quoted in a fix must fit)."""
    if not (x > 0 and math.isfinite(x)):
        return 0.0
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return math.floor(x / step) * step


def _largest_fitting_epsilon(before: Totals, dlt: float) -> float:
    """The largest ε a release with this δ could still spend (δ > 0: Gaussian, ρ = zcdp_rho(ε, δ);
    δ = 0: Laplace, ρ = ε²/2): the better of zCDP (``rho_remaining``) and basic composition
    (ε left, if the δ fits), rounded down."""
    best = 0.0
    if before.rho_remaining:
        best = _zcdp_epsilon(before.rho_remaining, dlt) if dlt > 0 else math.sqrt(2.0 * before.rho_remaining)
    if _fits(before.delta_spent + dlt, before.cap_delta):
        best = max(best, before.cap_epsilon - before.epsilon_spent)
    return _floor_digits(best * (1.0 - 1e-9))


def _refusal(before: Totals, what: str, eps: float, dlt: float, rho: float | None, acc: _Account) -> BudgetExceeded:
    """The refusal: what the release needs, what is spent, the cap, what remains, in plain numbers."""
    ds = before.dataset_id
    raise_cap = f"raise the cap with `dpgui ledger cap {_shell_word(ds)} EPSILON` if your policy allows it"
    n = before.releases
    if dlt > 0 and before.cap_delta == 0:  # neither bound can hold: the cap allows pure ε-DP only
        problem = (f"{what} needs δ = {_num(dlt)} (Gaussian noise) but the cap of dataset {ds!r} has δ = 0, which "
                   "allows only pure ε-differential privacy (Laplace noise, δ = 0)")
        fix = (f"raise the cap's δ to at least {_num(dlt)} if your policy allows it (`dpgui ledger cap {_shell_word(ds)} "
               f"{_num(before.cap_epsilon)} --delta {_num(dlt)} --reason TEXT`, or in the Ledger window), "
               "or use Laplace noise")
        return BudgetExceeded(problem, fix, before, "cap_delta")
    show_delta = dlt > 0 or before.cap_delta > 0 or before.delta_spent > 0
    eps_left = max(0.0, before.cap_epsilon - before.epsilon_spent)
    need = f"ε = {_num(eps)}" + (f", δ = {_num(dlt)}" if show_delta else "")
    cap = f"ε = {_num(before.cap_epsilon)}" + (f", δ = {_num(before.cap_delta)}" if show_delta else "")
    if acc.zcdp_epsilon is not None:  # every release has a ρ: neither basic composition nor zCDP holds
        assert rho is not None and before.zcdp_epsilon is not None
        spent_eps = before.cap_epsilon - before.epsilon_remaining
        how = "zCDP accounting" if before.accounting == "zcdp" else "basic composition"
        problem = (f"{what} needs {need} (ρ = {_num(rho)}) but dataset {ds!r} has spent ε = {_num(spent_eps)} of its cap "
                   f"{cap} ({how} of {n} release(s), ρ = {_num(before.rho_spent or 0.0)}); with it the total would "
                   f"be ε = {_num(acc.zcdp_epsilon)} under zCDP at δ = {_num(before.cap_delta)}")
        if not _fits(acc.delta_spent, before.cap_delta):
            problem += f" (and Σδ = {_num(acc.delta_spent)} under basic composition)"
        else:
            problem += f" (and ε = {_num(acc.epsilon_spent)} under basic composition)"
        most = _largest_fitting_epsilon(before, dlt)
        if most > 0:
            at = f" at δ = {_num(dlt)}" if dlt > 0 else ""
            fix = f"ask for at most ε = {_num(most)}{at} (ρ = {_num(before.rho_remaining or 0.0)} is left), or {raise_cap}"
        else:
            fix = f"the budget is used up; {raise_cap}"
        return BudgetExceeded(problem, fix, before)
    spent = f"ε = {_num(before.epsilon_spent)}" + (f", δ = {_num(before.delta_spent)}" if show_delta else "")
    left = f"ε = {_num(eps_left)}" + (f", δ = {_num(before.delta_remaining)}" if show_delta else "")
    if dlt > 0 and _fits(acc.epsilon_spent, before.cap_epsilon) and not _fits(acc.delta_spent, before.cap_delta):
        problem = (f"not enough δ left: {what} needs δ = {_num(dlt)} but dataset {ds!r} has spent "
                   f"δ = {_num(before.delta_spent)} of its cap δ = {_num(before.cap_delta)} in {n} release(s), so "
                   f"δ = {_num(before.delta_remaining)} remains")
        if before.rho_spent is None and n:
            problem += (" (zCDP accounting, which counts δ once, does not apply: release(s) recorded by an earlier "
                        "dpgui carry no ρ)")
        fix = (f"raise the cap's δ if your policy allows it (`dpgui ledger cap {_shell_word(ds)} "
               f"{_num(before.cap_epsilon)} --delta D --reason TEXT`, or in the Ledger window), or use Laplace noise "
               "(δ = 0)")
        return BudgetExceeded(problem, fix, before, "delta")
    problem = (f"{what} needs {need} but dataset {ds!r} has spent {spent} of its cap {cap} "
               f"in {n} release(s), so {left} remains")
    if before.accounting == "zcdp":
        problem += (" (basic composition: zCDP accounting, which gave ε = "
                    f"{_num(before.zcdp_epsilon or 0.0)}, applies only when every release has a ρ)")
    if before.accounting == "zcdp" and before.rho_remaining:
        fix = (f"a release without ρ does not fit, but a release with a ρ (any release of this dpgui) may still "
               f"spend up to ρ = {_num(before.rho_remaining)}; or {raise_cap}")
    elif eps_left <= before.cap_epsilon * RELATIVE_TOLERANCE or (dlt > 0 and before.delta_remaining <= 0):
        fix = f"the budget is used up; {raise_cap}"
    else:
        fix = f"ask for at most {left}, or {raise_cap}"
    return BudgetExceeded(problem, fix, before)


# ---------------------------------------------------------------------------------------------
# dataset identity (docs/design.md, "Dataset identity")
#
# The ledger adds up spends per dataset *name*, which the user gives. To catch a copy or a rename of
# ledgered data under a new name (which would get a fresh budget), each release records a salted
# fingerprint of the file's column names and row count; a new name whose file has the fingerprint of
# another dataset is warned about (window) or refused without --new-dataset (CLI). The fingerprint
# stays in this local ledger: it is never exported (not in `ledger show`, bundles or reports). The
# salt is random per ledger, so fingerprints cannot be compared across ledgers; it is stored in the
# same file, so it does not hide a row count from someone who holds the ledger.
#
# The two tables are created on first use (CREATE TABLE IF NOT EXISTS in a write transaction): a
# ledger written before them stays readable, by this dpgui and older ones, with no version change.

_IDENTITY_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS identity_salt (id INTEGER PRIMARY KEY CHECK (id = 1), salt TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS dataset_fingerprints (dataset_id TEXT NOT NULL REFERENCES datasets (dataset_id), "
    "fingerprint TEXT NOT NULL, recorded_utc TEXT NOT NULL, PRIMARY KEY (dataset_id, fingerprint))",
)


def _identity_tables_exist(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                       "('identity_salt', 'dataset_fingerprints')").fetchone()
    return int(row[0]) == 2


def data_fingerprint(ledger: Ledger, columns: Sequence[str], n_rows: int) -> str:
    """The salted fingerprint (hex HMAC-SHA256) of a file's column names, in order, and its number
    of data rows (missing values included). Creates this ledger's salt on first use."""
    import hashlib
    import hmac
    import secrets

    if isinstance(n_rows, bool) or not isinstance(n_rows, int) or n_rows < 0:
        raise ParameterError(f"the row count must be a whole number ≥ 0, not {n_rows!r}", "count the file's rows first")
    with ledger._transaction(write=True) as conn:
        for statement in _IDENTITY_SCHEMA:
            conn.execute(statement)
        row = conn.execute("SELECT salt FROM identity_salt WHERE id = 1").fetchone()
        if row is None:
            salt = secrets.token_hex(32)
            conn.execute("INSERT INTO identity_salt (id, salt) VALUES (1, ?)", (salt,))
        else:
            salt = str(row[0])
    message = json.dumps([[str(c) for c in columns], int(n_rows)], ensure_ascii=False).encode("utf-8")
    return hmac.new(bytes.fromhex(salt), message, hashlib.sha256).hexdigest()


def record_fingerprint(ledger: Ledger, dataset_id: str, fingerprint: str) -> None:
    """Remember that ``dataset_id`` was released from data with ``fingerprint`` (kept once per
    pair). The dataset must have a cap (:class:`NoCapSet`)."""
    dataset_id = _check_id("dataset id", dataset_id)
    with ledger._transaction(write=True) as conn:
        if ledger._cap(conn, dataset_id) is None:
            raise NoCapSet(dataset_id)
        for statement in _IDENTITY_SCHEMA:
            conn.execute(statement)
        conn.execute("INSERT OR IGNORE INTO dataset_fingerprints (dataset_id, fingerprint, recorded_utc) "
                     "VALUES (?, ?, ?)", (dataset_id, str(fingerprint), _now_utc()))


def is_new_dataset(ledger: Ledger, dataset_id: str) -> bool:
    """True if nothing was ever released under ``dataset_id`` (no cap, or a cap and no release)."""
    dataset_id = _check_id("dataset id", dataset_id)
    with ledger._transaction(write=False) as conn:
        row = conn.execute("SELECT count(*) FROM releases WHERE dataset_id = ?", (dataset_id,)).fetchone()
        fingerprinted = (_identity_tables_exist(conn) and conn.execute(
            "SELECT count(*) FROM dataset_fingerprints WHERE dataset_id = ?", (dataset_id,)).fetchone()[0] > 0)
    return int(row[0]) == 0 and not fingerprinted


def datasets_like(ledger: Ledger, fingerprint: str, dataset_id: str) -> list[str]:
    """The other datasets (not ``dataset_id``) released from data with this fingerprint: the same
    column names and row count. Sorted; empty in a ledger without fingerprints."""
    with ledger._transaction(write=False) as conn:
        if not _identity_tables_exist(conn):
            return []
        rows = conn.execute("SELECT DISTINCT dataset_id FROM dataset_fingerprints WHERE fingerprint = ? "
                            "AND dataset_id != ? ORDER BY dataset_id", (str(fingerprint), dataset_id)).fetchall()
    return [str(r[0]) for r in rows]


def same_data_warning(others: Sequence[str], dataset_id: str) -> str:
    """The sentence that says a new dataset name may be ledgered data under another name."""
    names = ", ".join(repr(o) for o in others)
    return (f"this file has the same column names and number of rows as dataset {names} in the budget "
            f"ledger; if it is the same data (a copy, a rename or a new version), releasing it as "
            f"{dataset_id!r} would give it a fresh budget")
