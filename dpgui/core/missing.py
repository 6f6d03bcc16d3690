"""The names of the missing-value policies, once, with the words the reports use.

A release treats missing values by the one rule its neighbour model fixes, never by the data
(docs/design.md "Missing values"):

* ``change`` — :data:`MISSING_BUCKET`: N = all rows (public, exact); missing values are one more
  leaf of the tree after the K value bins, so a value turning into a missing one is a change of one
  record's leaf.
* ``addremove`` — :data:`MISSING_DROP`: missing rows are left out; a value turning into a missing one
  is the removal of one record, and the number of values is noised like any N.

Callers that let the neighbour model decide say :data:`MISSING_AUTO`. :data:`MISSING_ERROR` (stop at
the first missing value) is retired as a release policy: it made publishing depend on the data. It
remains a data check of the histogram reader, and old project files and manifests hold it.
"""

from __future__ import annotations

__all__ = [
    "MISSING_AUTO",
    "MISSING_BUCKET",
    "MISSING_DROP",
    "MISSING_ERROR",
    "MISSING_POLICIES",
    "MISSING_RULES",
    "MISSING_RULE_TEXT",
    "missing_rule_for",
]

#: Missing values counted in a noised leaf of their own (the ``change`` model).
MISSING_BUCKET = "bucket"
#: Missing values left out before counting (the ``addremove`` model; the histogram's counting policy).
MISSING_DROP = "drop"
#: Stop at the first missing value: a data check, and a retired release policy of older versions.
MISSING_ERROR = "error"
#: "Follow the neighbour model": what the window and the command line ask a release for.
MISSING_AUTO = "auto"

#: The rules a release applies, one per neighbour model (:func:`missing_rule_for`).
MISSING_RULES = (MISSING_BUCKET, MISSING_DROP)
#: What the histogram reader does with a missing value (count it apart, or raise), and what the
#: ``missing`` field of an older project file may hold.
MISSING_POLICIES = (MISSING_DROP, MISSING_ERROR)

#: What each rule means, as the reports say it (the retired "error" too: old manifests hold it).
MISSING_RULE_TEXT = {
    MISSING_BUCKET: "counted in a noised 'missing' bucket; N = all rows",
    MISSING_DROP: "dropped (a neighbour under add/remove)",
    MISSING_ERROR: "the release would have stopped at a missing value (a retired policy of older versions)",
}


def missing_rule_for(neighbours: str) -> str:
    """The missing-value rule of a neighbour model: ``"bucket"`` (change), ``"drop"`` (addremove)."""
    return MISSING_BUCKET if neighbours == "change" else MISSING_DROP
