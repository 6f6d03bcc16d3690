"""The budget ledger's records: every spend of ε (and δ, ρ) per dataset, against a cap (:class:`Ledger`).

One SQLite file, ``user_home() / "ledger.sqlite3"`` by default (``$DPGUI_HOME`` overrides), shared by
the app and the CLI; its schema, opening and transactions are :mod:`dpgui.report.ledger.schema`.

* When :meth:`Ledger.spend` returns, the spend is on disk and survives a crash or power cut. Callers
  record the spend *before* they draw noise (see ``dpgui.report.publish``), so a crash can waste
  budget but can never lose a recorded spend, nor let a release out unrecorded.
* :meth:`Ledger.spend` checks the cap and inserts the row in one ``BEGIN IMMEDIATE`` transaction:
  two processes cannot both pass the check.

Accounting
----------
Whether a spend fits is the engine's composition (:func:`dpgui.core.accounting.compose`): basic
composition, or zCDP composition converted at the cap's δ when every release carries a ρ. A spend is
a :class:`~dpgui.vocabulary.Charge`; every Laplace or Gaussian release carries a ρ (the noise seam's
rule, :func:`dpgui.core.noise_mechanisms.ledger_charge`: a Laplace release ρ = ε²/2), so such releases
of one dataset compose under zCDP whenever that is cheaper; one release recorded without ρ (a
multiplicative hierarchy release, or an older ledger's row) makes its dataset count by basic composition.

Refusals
--------
A spend that does not fit raises :class:`BudgetExceeded`, a dataset without a cap :class:`NoCapSet`,
a cap lowered below what is spent :class:`CapBelowSpent`, a cap raised without a reason
:class:`ReasonNeeded`: each carries the facts (the dataset, what is
short, the figures needed and remaining), and each front end words them
(:mod:`dpgui.workspace.ledger_words`).

What is stored
--------------
Dataset ids, caps, reasons, release ids, ε/δ/ρ, the mechanism's name, and the ``description``
dict exactly as the caller passes it (callers pass only public plan parameters), plus an
optional path to the written bundle. Nothing derived from the confidential data.

After the noise is drawn, :meth:`Ledger.record_output` adds the release's **output record**
(table ``release_outputs``): the SHA-256 of the released noisy levels (public values), the public
parameters the release was published with (every field a bundle states:
:func:`dpgui.report.cdf.publish.release_params`), and whether the noise came from the operating
system's secure source. It is written once and never changed; signing a release checks it
(:func:`dpgui.report.cdf.publish.authenticate_release`, docs/privacy-model.md, "Signing and the ledger").
"""

from __future__ import annotations

import json
import math
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, NamedTuple

from dpgui.core.accounting import (
    Accounting, Composition, Shortfall, Spend, compose, largest_fitting_epsilon, shortfall,
)
from dpgui.errors import DataError, DpguiError, ParameterError
from dpgui.formatting import control_character, iso_utc
from dpgui.report.ledger.schema import LedgerFile
from dpgui.vocabulary import Charge

__all__ = [
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
    "new_release_id",
    "spent_epsilon",
]

MAX_ID_LENGTH = 200
MAX_TEXT_LENGTH = 4000


class Spent(NamedTuple):
    """One spend as its row in the ledger holds it: ε ≥ 0, 0 ≤ δ < 1, and its zCDP ρ ≥ 0 or None. A row
    written before spends were a :class:`~dpgui.vocabulary.Charge` may hold ε = 0 or ρ = 0, which no new
    charge can; rows are read as they are and composed with the charges asked for
    (:class:`~dpgui.core.accounting.Spend` is what both are to the composition)."""

    epsilon: float
    delta: float
    rho: float | None


@dataclass(frozen=True)
class Totals:
    """A dataset's cap and what has been spent on it.

    ``epsilon_spent``/``delta_spent``: basic composition, Σε and Σδ over all releases.
    ``rho_spent``: Σρ if every release has a ρ (0.0 with no releases), else None.
    ``zcdp_epsilon``: ``rho_spent`` converted to ε at δ = ``cap_delta`` (CKS 2020); None when
    ``rho_spent`` is None or ``cap_delta`` is 0.
    ``accounting``: ZCDP when that conversion gives a smaller ε than Σε (or Σδ is over the cap δ,
    so that only the zCDP bound holds), else BASIC (:class:`~dpgui.core.accounting.Accounting`).
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
    accounting: Accounting
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

class BudgetExceeded(DpguiError):
    """A spend would take a dataset over its cap; nothing was recorded. The facts, for a front end to word:

    ``dataset_id``; ``release_id`` (None for a check before the release has an id); ``charge``: the
    :class:`~dpgui.vocabulary.Charge` asked for; ``totals``: the dataset's state before it; ``after``: the
    composition with it (:class:`~dpgui.core.accounting.Composition`); ``short_of``: what is missing
    (:class:`~dpgui.core.accounting.Shortfall`: EPSILON, DELTA, or CAP_DELTA — the release needs δ > 0 and
    the cap's δ is 0); ``largest_epsilon``: the largest ε a release with this δ could still spend (0: none).
    """

    def __init__(self, release_id: str | None, charge: Charge, totals: Totals, after: Composition,
                 short_of: Shortfall, largest_epsilon: float) -> None:
        super().__init__(f"a spend on dataset {totals.dataset_id!r} does not fit its budget (short of {short_of})")
        self.dataset_id = totals.dataset_id
        self.release_id = release_id
        self.charge = charge
        self.totals = totals
        self.after = after
        self.short_of = short_of
        self.largest_epsilon = largest_epsilon


class NoCapSet(DpguiError):
    """The dataset ``dataset_id`` has no budget cap in the ledger (so nothing can be spent on it)."""

    def __init__(self, dataset_id: str) -> None:
        super().__init__(f"no privacy budget is set for dataset {dataset_id!r}")
        self.dataset_id = dataset_id


class ReasonNeeded(ParameterError):
    """Raising the cap of ``dataset_id`` from ``old`` to ``new`` (each (ε, δ)) was asked without a reason;
    nothing was changed."""

    def __init__(self, dataset_id: str, old: tuple[float, float], new: tuple[float, float]) -> None:
        super().__init__(f"raising the cap of dataset {dataset_id!r} needs a reason")
        self.dataset_id = dataset_id
        self.old = old
        self.new = new


class CapBelowSpent(DataError):
    """A new cap (``epsilon``, ``delta``) of ``totals.dataset_id`` would be below what is already spent under
    every applicable composition (``totals``: the state under the old cap); nothing was changed."""

    def __init__(self, epsilon: float, delta: float, totals: Totals) -> None:
        super().__init__(f"the cap of dataset {totals.dataset_id!r} cannot be set below what is spent")
        self.dataset_id = totals.dataset_id
        self.epsilon = epsilon
        self.delta = delta
        self.totals = totals


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


def _check_cap_epsilon(value: object) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"the cap ε must be a number, not {value!r}", "give a number such as 1.0") from None
    if not math.isfinite(x) or x <= 0:
        raise ParameterError(f"the cap ε must be a finite number > 0, not {value!r}", "give a number such as 1.0")
    return x


def _check_cap_delta(value: object) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"the cap δ must be a number, not {value!r}",
                             "give 0, or a small probability such as 1e-6") from None
    if not (0.0 <= x < 1.0):
        raise ParameterError(f"the cap δ must be at least 0 and below 1, not {value!r}",
                             "give 0, or a small probability such as 1e-6")
    return x


def _check_charge(charge: object) -> Charge:
    """One release's charge as :meth:`Ledger.spend` stores it: a :class:`~dpgui.vocabulary.Charge` (checked
    when it was made: ε > 0, 0 ≤ δ < 1, ρ > 0 or None), its figures as plain floats."""
    if not isinstance(charge, Charge):
        raise ParameterError(f"a spend must be a Charge, not {type(charge).__name__}",
                             "pass the release's Charge (ε, δ, ρ), e.g. Charge(*plan.ledger_charge())")
    return Charge(float(charge.epsilon), float(charge.delta), None if charge.rho is None else float(charge.rho))


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


def new_release_id() -> str:
    """A fresh id for a release, the one format the ledger records: 32 hex digits (a random UUID)."""
    return uuid.uuid4().hex


def _now_utc() -> str:
    return iso_utc(datetime.now(timezone.utc), microseconds=True)


def _totals(dataset_id: str, composition: Composition) -> Totals:
    """A dataset's :class:`Totals` from the composition of its releases."""
    return Totals(
        dataset_id=dataset_id,
        cap_epsilon=composition.cap_epsilon,
        cap_delta=composition.cap_delta,
        epsilon_spent=composition.epsilon,
        delta_spent=composition.delta,
        rho_spent=composition.rho,
        zcdp_epsilon=composition.zcdp_epsilon,
        epsilon_remaining=composition.epsilon_remaining,
        delta_remaining=composition.delta_remaining,
        rho_remaining=composition.rho_remaining,
        accounting=composition.accounting,
        releases=composition.count,
    )


def _composition(cap: tuple[float, float], spends: Sequence[Spend]) -> Composition:
    return compose(spends, cap[0], cap[1])


def spent_epsilon(totals: Totals) -> float:
    """The ε a dataset has spent under the accounting that applies (``totals.accounting``): the
    zCDP total converted at the cap's δ, or Σε (basic composition). Not clipped at the cap."""
    if totals.accounting is Accounting.ZCDP and totals.zcdp_epsilon is not None:
        return totals.zcdp_epsilon
    return totals.epsilon_spent


# ---------------------------------------------------------------------------------------------
# the ledger


class Ledger(LedgerFile):
    """The budget ledger in one SQLite file (:class:`~dpgui.report.ledger.schema.LedgerFile`).

    ``Ledger()`` opens (or creates) ``user_home() / "ledger.sqlite3"``; ``Ledger(path)`` another
    file. Use it as a context manager or call :meth:`close`. Every commit is durable when the
    method returns; a crash can waste budget (spent, then no release) but never loses a recorded
    spend. ``timeout`` (seconds) is how long a write waits for another process's transaction.
    """

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
    def _spends(conn: sqlite3.Connection, dataset_id: str) -> list[Spent]:
        rows = conn.execute("SELECT epsilon, delta, rho FROM releases WHERE dataset_id = ? ORDER BY seq",
                            (dataset_id,)).fetchall()
        return [Spent(float(e), float(d), None if r is None else float(r)) for e, d, r in rows]

    # -- writing --------------------------------------------------------------------------------

    def set_cap(self, dataset_id: str, epsilon: float, delta: float = 0.0, reason: str = "") -> None:
        """Create ``dataset_id`` with the cap (ε, δ), or change its cap; every change is logged in
        the cap history with ``reason``. Setting the same cap again changes (and logs) nothing.

        ε must be finite and > 0, 0 ≤ δ < 1 (:class:`ParameterError`). A cap below what is already
        spent (under every applicable accounting) is refused with :class:`CapBelowSpent`. Raising a cap
        (a larger ε or δ) needs a ``reason`` (:class:`ReasonNeeded` without one): more budget for the
        same people is a decision someone must be able to explain later.
        """
        dataset_id = _check_id("dataset id", dataset_id)
        cap_epsilon = _check_cap_epsilon(epsilon)
        cap_delta = _check_cap_delta(delta)
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
                    raise ReasonNeeded(dataset_id, old, (cap_epsilon, cap_delta))
                spends = self._spends(conn, dataset_id)
                if not compose(spends, cap_epsilon, cap_delta).fits:
                    raise CapBelowSpent(cap_epsilon, cap_delta, _totals(dataset_id, _composition(old, spends)))
                conn.execute("UPDATE datasets SET cap_epsilon = ?, cap_delta = ? WHERE dataset_id = ?",
                             (cap_epsilon, cap_delta, dataset_id))
            conn.execute("INSERT INTO cap_changes (dataset_id, old_epsilon, new_epsilon, old_delta, new_delta, reason, "
                         "changed_utc) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (dataset_id, None if old is None else old[0], cap_epsilon,
                          None if old is None else old[1], cap_delta, reason, now))

    def spend(self, dataset_id: str, release_id: str, charge: Charge, mechanism: str = "",
              description: dict[str, Any] | None = None) -> Totals:
        """Record a release's spend on ``dataset_id`` if it fits the cap; return the new totals.

        Check and insert happen in one ``BEGIN IMMEDIATE`` transaction, so concurrent processes
        cannot both pass the check; the spend is on disk when this returns. Call it *before*
        drawing any noise. ``charge`` is the release's own (ε, δ) for basic composition and its zCDP
        ρ, or None (then the dataset counts by basic composition only): ``Statistic.charge`` of its plan
        (:meth:`dpgui.core.plan.Plan.ledger_charge`). ``description`` holds public plan parameters only
        (stored as JSON).

        Raises :class:`NoCapSet` (no cap for the dataset), :class:`BudgetExceeded` (it does not
        fit; nothing is recorded), :class:`DataError` (``release_id`` already recorded) or
        :class:`ParameterError` (bad arguments).
        """
        dataset_id = _check_id("dataset id", dataset_id)
        release_id = _check_id("release id", release_id)
        charge = _check_charge(charge)
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
            after = self._fitting_spends(conn, dataset_id, cap, release_id, charge)
            conn.execute("INSERT INTO releases (release_id, dataset_id, created_utc, epsilon, delta, rho, mechanism, "
                         "description) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (release_id, dataset_id, _now_utc(), charge.epsilon, charge.delta, charge.rho, mechanism,
                          description_json))
            return _totals(dataset_id, _composition(cap, after))

    def check_spend(self, dataset_id: str, charge: Charge) -> Totals:
        """Would a release charged ``charge`` fit the cap now? Returns the current totals, or raises what
        :meth:`spend` would (:class:`NoCapSet`, :class:`BudgetExceeded`). Records nothing: use it to
        refuse early (before reading data); :meth:`spend` checks again when it records."""
        dataset_id = _check_id("dataset id", dataset_id)
        charge = _check_charge(charge)
        with self._transaction(write=False) as conn:
            cap = self._required_cap(conn, dataset_id)
            after = self._fitting_spends(conn, dataset_id, cap, None, charge)
            return _totals(dataset_id, _composition(cap, after[:-1]))  # the totals now, without this release

    def totals_after(self, dataset_id: str, charge: Charge) -> Totals:
        """The totals as they would be after a spend of ``charge``, whether or not it fits (for a
        confirmation's "after this release"); records nothing. :class:`NoCapSet` without a cap."""
        dataset_id = _check_id("dataset id", dataset_id)
        charge = _check_charge(charge)
        with self._transaction(write=False) as conn:
            cap = self._required_cap(conn, dataset_id)
            return _totals(dataset_id, _composition(cap, [*self._spends(conn, dataset_id), charge]))

    def _fitting_spends(self, conn: sqlite3.Connection, dataset_id: str, cap: tuple[float, float],
                        release_id: str | None, charge: Charge) -> list[Spend]:
        """The dataset's spends with ``charge`` appended; :class:`BudgetExceeded` if they do not fit."""
        spends = self._spends(conn, dataset_id)
        after: list[Spend] = [*spends, charge]
        composed = _composition(cap, after)
        short_of = shortfall(composed, charge)
        if short_of is not None:
            before = _composition(cap, spends)
            raise BudgetExceeded(release_id, charge, _totals(dataset_id, before), composed, short_of,
                                 largest_fitting_epsilon(before, charge.delta))
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
            return _totals(dataset_id, _composition(cap, self._spends(conn, dataset_id)))

    def datasets(self) -> list[Totals]:
        """Totals of every dataset with a cap, sorted by dataset id."""
        with self._transaction(write=False) as conn:
            caps = conn.execute("SELECT dataset_id, cap_epsilon, cap_delta FROM datasets ORDER BY dataset_id").fetchall()
            return [_totals(d, _composition((float(e), float(x)), self._spends(conn, d))) for d, e, x in caps]

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


def _entry(row: tuple[Any, ...]) -> ReleaseEntry:
    release_id, dataset_id, created, eps, dlt, rho, mechanism, description, bundle = row
    try:
        parsed = json.loads(description) if description else {}
    except ValueError:
        parsed = {"unreadable": str(description)}
    return ReleaseEntry(str(release_id), str(dataset_id), str(created), float(eps), float(dlt),
                        None if rho is None else float(rho), str(mechanism), parsed if isinstance(parsed, dict) else
                        {"value": parsed}, None if bundle is None else str(bundle))
