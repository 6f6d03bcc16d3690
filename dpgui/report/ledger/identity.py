"""Dataset identity in the budget ledger (docs/privacy-model.md, "Dataset identity").

The ledger adds up spends per dataset *name*, which the user gives. To catch a copy or a rename of
ledgered data under a new name (which would get a fresh budget), each release records a salted
fingerprint of the file's column names and row count; a new name whose file has the fingerprint of
another dataset is warned about (window) or refused without --new-dataset (CLI). The fingerprint
stays in this local ledger: it is never exported (not in `ledger show`, bundles or reports). The
salt is random per ledger, so fingerprints cannot be compared across ledgers; it is stored in the
same file, so it does not hide a row count from someone who holds the ledger.

The two tables are created on first use (CREATE TABLE IF NOT EXISTS in a write transaction): a
ledger written before them stays readable, by this dpgui and older ones, with no version change.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from dpgui.errors import ParameterError
from dpgui.report.ledger.store import Ledger, NoCapSet, _check_id, _now_utc

__all__ = ["data_fingerprint", "datasets_like", "default_dataset_name", "is_new_dataset", "record_fingerprint"]


def default_dataset_name(path: str | os.PathLike[str]) -> str:
    """The ledger's default name for a file's data: its name without extensions (x.csv.gz → x)."""
    name = Path(path).name
    return name.split(".")[0] or name


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
