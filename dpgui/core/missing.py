"""The names of the missing-value policies, once, with the words the reports use.

A release treats missing values by the one rule its neighbour model fixes, never by the data
(docs/privacy-model.md "Missing values"):

* ``change`` — :data:`MISSING_BUCKET`: N = all rows (public, exact); missing values are one more
  leaf of the tree after the K value bins, so a value turning into a missing one is a change of one
  record's leaf.
* ``addremove`` — :data:`MISSING_DROP`: missing rows are left out; a value turning into a missing one
  is the removal of one record, and the number of values is noised like any N.

Under ``change`` the officer may instead state a public value that a missing value counts as
(:data:`MISSING_IMPUTE`, OpenDP's impute-constant): no leaf of its own, N = all rows (public, exact),
and the value is clamped into the bounds like any other. A value turning into a missing one then moves
one record from its own bin to the bin of the imputed value: a change of one record, the change-one
neighbour, so the sensitivity 2L and the noise are unchanged. Under ``addremove`` imputation is
refused: a missing row is already left out at no cost (its removal is a neighbour) and the CDF is that
of the recorded values; imputing would only add a spike of made-up values at the chosen value.

Callers that let the neighbour model decide say :data:`MISSING_AUTO`. :data:`MISSING_ERROR` (stop at
the first missing value) is retired as a release policy: it made publishing depend on the data. It
remains a data check of the histogram reader, and old project files and manifests hold it.
"""

from __future__ import annotations

import math

import numpy as np

from dpgui.core.tree import bin_edges
from dpgui.vocabulary import Name, Neighbours
from dpgui.errors import ParameterError

__all__ = [
    "IMPUTE_PREFIX",
    "MISSING_AUTO",
    "MISSING_BUCKET",
    "MISSING_DROP",
    "MISSING_ERROR",
    "MISSING_IMPUTE",
    "MISSING_POLICIES",
    "MISSING_RULES",
    "MISSING_RULE_TEXT",
    "MissingRule",
    "check_impute_value",
    "impute_missing",
    "missing_rule_for",
    "missing_rule_text",
    "parse_missing_option",
]


class MissingRule(Name):
    """What a release does with missing values. A ``str``: equal to (and stored as) its value, e.g.
    ``"bucket"``, as project files, manifests and the ledger have always held it."""

    BUCKET = "bucket"
    DROP = "drop"
    IMPUTE = "impute"
    ERROR = "error"


#: Missing values counted in a noised leaf of their own (the ``change`` model's default).
MISSING_BUCKET = MissingRule.BUCKET
#: Missing values left out before counting (the ``addremove`` model; the histogram's counting policy).
MISSING_DROP = MissingRule.DROP
#: Missing values counted as a public value the officer chooses (``change`` only): no leaf of their own.
MISSING_IMPUTE = MissingRule.IMPUTE
#: Stop at the first missing value: a data check, and a retired release policy of older versions.
MISSING_ERROR = MissingRule.ERROR
#: How the command line and the reports write the imputation rule: ``impute:VALUE``.
IMPUTE_PREFIX = "impute:"
#: "Follow the neighbour model": what the window and the command line ask a release for.
MISSING_AUTO = "auto"

#: The rules a release applies: one per neighbour model (:func:`missing_rule_for`), and imputation.
MISSING_RULES = (MISSING_BUCKET, MISSING_DROP, MISSING_IMPUTE)
#: What the histogram reader does with a missing value (count it apart, or raise), and what the
#: ``missing`` field of an older project file may hold.
MISSING_POLICIES = (MISSING_DROP, MISSING_ERROR)

#: What each rule means, as the reports say it (the retired "error" too: old manifests hold it).
MISSING_RULE_TEXT: dict[str, str] = {
    MISSING_BUCKET: "counted in a noised 'missing' bucket; N = all rows",
    MISSING_DROP: "dropped (a neighbour under add/remove)",
    MISSING_IMPUTE: "counted as a public value chosen before the release (imputed; no count of their own); "
                    "N = all rows",
    MISSING_ERROR: "the release would have stopped at a missing value (a retired policy of older versions)",
}


def missing_rule_for(neighbours: str) -> MissingRule:
    """The missing-value rule of a neighbour model: ``"bucket"`` (change), ``"drop"`` (addremove)."""
    return MISSING_BUCKET if neighbours == Neighbours.CHANGE else MISSING_DROP


def missing_rule_text(rule: str, value: float | None = None) -> str:
    """The rule in the reports' words; with :data:`MISSING_IMPUTE` the value they count as, e.g.
    "counted as the public value 0 (imputed; …)"."""
    if rule == MISSING_IMPUTE and value is not None:
        return (f"counted as the public value {value:g}, chosen before the release (imputed, clamped into the "
                "bounds; no count of their own); N = all rows")
    return MISSING_RULE_TEXT.get(rule, str(rule))


def check_impute_value(value: object) -> float:
    """The value missing values are counted as: a finite number (public: the officer's choice, never
    the data's), else ParameterError. O(1)."""
    if isinstance(value, bool):
        value = None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"the value missing values are counted as must be a number, got {value!r}",
                             "give a number in the column's units, e.g. impute:0") from None
    if not math.isfinite(number):
        raise ParameterError(f"the value missing values are counted as must be finite, got {number!r}",
                             "give a finite number in the column's units, e.g. impute:0")
    return number


def parse_missing_option(text: str) -> float | None:
    """The value of ``impute:VALUE`` (checked by :func:`check_impute_value`), or None for any other
    text (the neighbour model's own rule; the caller checks those words). Whether imputation suits
    the neighbour model is checked by :class:`dpgui.core.plan.PrivacySpec`. O(1)."""
    word = str(text).strip()
    if word.lower().startswith(IMPUTE_PREFIX):
        return check_impute_value(word[len(IMPUTE_PREFIX):].strip())
    return None


def impute_missing(counts: np.ndarray, n_missing: int, value: float, lower: float, upper: float) -> np.ndarray:
    """The K value-bin ``counts`` with the ``n_missing`` missing values counted in the bin of ``value``
    (OpenDP's impute-constant): bin j = [edge j, edge j+1) of :func:`dpgui.core.tree.bin_edges`, the
    histogram's bins, a value below ``lower`` in the first bin and one at or above ``upper`` in the
    last, as every value is clamped. A new int64 array; ``counts`` is not changed. O(K)."""
    out = np.array(counts, dtype=np.int64, copy=True)
    if n_missing:
        edges = bin_edges(lower, upper, out.size)
        index = int(np.clip(np.searchsorted(edges, check_impute_value(value), side="right") - 1, 0, out.size - 1))
        out[index] += int(n_missing)
    return out
