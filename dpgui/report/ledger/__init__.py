"""The privacy-budget ledger: every spend of ε (and δ, ρ) per dataset, against a cap, in one SQLite file
shared by the app and the CLI.

The package's rooms: :mod:`~dpgui.report.ledger.schema` (the file: schema, opening, upgrades of older
schema versions, transactions), :mod:`~dpgui.report.ledger.store` (caps, spends, release records, and
the structured refusals) and :mod:`~dpgui.report.ledger.identity` (salted fingerprints that catch a
copy of ledgered data under a new name). The composition maths is the engine's
(:mod:`dpgui.core.accounting`); the words of a refusal are each front end's
(:mod:`dpgui.workspace.ledger_words`). The names below are the ledger's public face: import them from
here.
"""

from __future__ import annotations

from dpgui.report.ledger.identity import (
    data_fingerprint,
    datasets_like,
    default_dataset_name,
    is_new_dataset,
    record_fingerprint,
)
from dpgui.report.ledger.schema import LEDGER_FILENAME, SCHEMA_VERSION, default_ledger_path
from dpgui.report.ledger.store import (
    BudgetExceeded,
    CapBelowSpent,
    CapChange,
    Ledger,
    NoCapSet,
    ReasonNeeded,
    ReleaseEntry,
    ReleaseOutput,
    Spent,
    Totals,
    new_release_id,
    spent_epsilon,
)

__all__ = [
    "LEDGER_FILENAME",
    "SCHEMA_VERSION",
    "BudgetExceeded",
    "CapBelowSpent",
    "CapChange",
    "Ledger",
    "NoCapSet",
    "ReasonNeeded",
    "ReleaseEntry",
    "ReleaseOutput",
    "Spent",
    "Totals",
    "data_fingerprint",
    "datasets_like",
    "default_dataset_name",
    "default_ledger_path",
    "is_new_dataset",
    "new_release_id",
    "record_fingerprint",
    "spent_epsilon",
]
