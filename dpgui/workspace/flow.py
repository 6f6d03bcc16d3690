"""The one release flow of the window, the command line and the self-test (no Qt):
check → read → identity → spend → record → sign/write, on one dataset of the budget ledger, for any
:class:`~dpgui.workspace.statistic.Statistic` of the registry (a CDF, counts over a hierarchy, …).

Every front end releases through :meth:`ReleaseFlow.release`, one method for every kind of statistic:

1. check — may the dataset's cap pay for the statistic's charge? The ledger's refusal (no cap, too
   little ε or δ left, a cap δ = 0 for a release that spends δ) is raised before anything is read.
   A plan that needs the data (a hierarchy's node list from the data's categories) is checked first
   against the charges its options can lead to (:meth:`ReleaseFlow.check_any`) and its data read for
   the plan (:meth:`ReleaseFlow.read_paths`); the release then checks the exact charge and counts again.
2. read — :meth:`Statistic.count <dpgui.workspace.statistic.Statistic.count>`: the confidential counts,
   from an open :class:`~dpgui.data.source.DataSource` (a file, a database or Spark counts its own rows).
3. identity — :meth:`ReleaseFlow.identity`, the rule of docs/privacy-model.md, "Dataset identity": a
   dataset name with no release yet whose data has the same column names and row count as another
   ledgered dataset may be the same data under a new name (:attr:`DatasetIdentity.similar`); each front
   end asks the officer in its own words (the command line refuses without ``--new-dataset``, the window
   asks before the first cap).
4. spend — :meth:`Statistic.release <dpgui.workspace.statistic.Statistic.release>`: the spend recorded in
   the ledger, then the noise (:func:`dpgui.report.publish.spend_then_release`: spend before noise).
5. record — :meth:`ReleaseFlow.record`: the data's fingerprint kept under the dataset (the command line
   keeps it before the spend, the window once the release is shown).
6. sign/write — :meth:`ReleaseFlow.sign` (the statistic's) and :meth:`ReleaseFlow.write`: the signed
   bundle of a ledger-confirmed release (every front end signs here, the window's Export dialogs too),
   and the outputs after the spend (a failure says that the budget was spent, and under which ledger id).

Threads: a flow holds one open :class:`~dpgui.report.ledger.Ledger` (SQLite, ``$DPGUI_HOME``); open it
with :meth:`ReleaseFlow.open` on the thread that runs the steps (the window's release worker, the
command's thread). Confidential data: the counts a release reads go only to the statistic's release
(inside the spend); the ledger receives public parameters, the fingerprint (a salted HMAC of the column
names and the row count) and the release's output; nothing confidential is returned but the counts
handed back to the caller for its own checks (never exported).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic


from dpgui.core.noise import RandomSource
from dpgui.data.hierarchy import PathCounts
from dpgui.data.source import DataSource
from dpgui import vocabulary
from dpgui.errors import Cancelled, DpguiError
from dpgui.report.bundle import BundlePaths
from dpgui.report.ledger import (
    BudgetExceeded, Ledger, NoCapSet, data_fingerprint, datasets_like, is_new_dataset, record_fingerprint,
)
from dpgui.report.publish import Chargeable, charge_text, check_release_budget
from dpgui.report.signing import SecretKey
from dpgui.workspace.statistic import CountsT, InfoT, ReleaseT, SpendT, Statistic
from dpgui.workspace.ledger_words import same_data_warning

#: The ledger's refusals and its sentence on a dataset that may be renamed data, which each front end words.
__all__ = ["BudgetExceeded", "Charge", "DatasetIdentity", "NoCapSet", "ReleaseFlow", "Released", "same_data_warning"]

#: An (ε, δ, ρ) charge as the ledger adds it up (ρ None: not zCDP).
Charge = tuple[float, float, float | None]
Progress = Callable[[float], None]


@dataclass(frozen=True)
class DatasetIdentity:
    """What the ledger knows of the data behind ``dataset``: its ``fingerprint`` (salted: the column
    names and the row count, nothing else), whether nothing was released under the name yet
    (``is_new``), and, if new, the other ledgered datasets with the same fingerprint (``similar``)."""

    dataset: str
    fingerprint: str
    is_new: bool
    similar: tuple[str, ...]

    @property
    def may_be_renamed(self) -> bool:
        """A new name for data that looks ledgered already: the officer must say it is different data."""
        return self.is_new and bool(self.similar)


@dataclass(frozen=True)
class Released(Generic[ReleaseT, InfoT, CountsT]):
    """A spent and released statistic (:meth:`ReleaseFlow.release`): its public release and info, with
    the confidential counts kept only for its caller's own checks."""

    release: ReleaseT
    info: InfoT
    counts: CountsT  # CONFIDENTIAL: never exported


class ReleaseFlow:
    """One release of ``dataset`` through an open budget ledger, in the order of the module doc.

    Each method runs on the thread that opened the flow (:meth:`open`). Every step before the spend
    spends nothing; :meth:`release` records the charge before any noise is drawn; once recorded, the
    budget stays spent whatever happens next."""

    def __init__(self, ledger: Ledger, dataset: str) -> None:
        self.ledger = ledger
        self.dataset = dataset

    @classmethod
    @contextmanager
    def open(cls, dataset: str) -> Iterator[ReleaseFlow]:
        """A flow on the budget ledger (``$DPGUI_HOME``), closed when the block ends."""
        with Ledger() as ledger:
            yield cls(ledger, dataset)

    # ---------------------------------------------------------------------------------- before the data
    def check(self, plan: Chargeable) -> None:
        """Refuse (the ledger's :class:`BudgetExceeded` or :class:`NoCapSet`) unless the dataset's cap can
        pay for ``plan``'s (ε, δ, ρ) (:meth:`Plan.ledger_charge`, :meth:`HierarchyPlan.ledger_charge`). Reads only."""
        check_release_budget(self.ledger, self.dataset, plan)

    def check_charge(self, charge: Charge) -> None:
        """Refuse unless the dataset's cap can pay for ``charge``. Reads only."""
        self.ledger.check_spend(self.dataset, vocabulary.Charge(*charge))

    def check_any(self, charges: Sequence[Charge], check: Callable[[Charge], None] | None = None) -> None:
        """Before the data is read, for a plan that needs it: pass if one of ``charges`` (every charge the
        options can lead to) fits; otherwise raise the refusal of the first (no cap: at once). ``check``: how one charge
        is checked (default :meth:`check_charge`; a front end may word the refusal). Reads only."""
        check = check or self.check_charge
        refusals: list[DpguiError] = []
        for charge in charges:
            try:
                check(charge)
                return
            except NoCapSet:  # no cap: refused at once
                raise
            except DpguiError as err:  # a refusal of this charge (too little left, δ on a cap with δ = 0)
                refusals.append(err)
        raise refusals[0]

    # ---------------------------------------------------------------------------------- the data
    @staticmethod
    def read_paths(data: DataSource, levels: Sequence[str]) -> PathCounts:
        """The count of every path of the level columns, for a hierarchy whose plan needs the data before
        its release (its node list from the data's categories, declared public; the optimiser's counts,
        opted in; the check that a prior is not the data). CONFIDENTIAL counts, never released: the
        release counts again through :meth:`release`. O(rows)."""
        return data.path_counts(list(levels))

    def identity(self, columns: Sequence[str], n_rows: int) -> DatasetIdentity:
        """The data's fingerprint (``columns``' names, ``n_rows``: the schema only) and, if nothing was
        released under the dataset yet, the other datasets ledgered with the same one. Reads (and makes
        the ledger's salt on first use)."""
        fingerprint = data_fingerprint(self.ledger, list(columns), n_rows)
        if not is_new_dataset(self.ledger, self.dataset):
            return DatasetIdentity(self.dataset, fingerprint, False, ())
        return DatasetIdentity(self.dataset, fingerprint, True,
                               tuple(datasets_like(self.ledger, fingerprint, self.dataset)))

    # ---------------------------------------------------------------------------------- the release
    def release(self, statistic: Statistic[SpendT, Any, CountsT, ReleaseT, InfoT],
                open_data: Callable[[], AbstractContextManager[DataSource]], spend: SpendT,
                noise: Callable[[], RandomSource], *, release_id: str | None = None,
                progress: Progress | None = None, should_cancel: Callable[[], bool] | None = None,
                checked: Callable[[DataSource], None] | None = None,
                counted: Callable[[DataSource, CountsT], None] | None = None) -> Released[ReleaseT, InfoT, CountsT]:
        """One release of ``statistic`` (any kind of the registry), steps 1 to 4 in their order:

        1. the ledger's check of :meth:`Statistic.charge` for ``spend``'s plan (no cap, too little left, a
           cap δ = 0 for a release that spends δ: refused before the data is opened);
        2. the data opened (``open_data()``), the front end's ``checked(data)`` (its notes on the
           columns), then :meth:`Statistic.count` — the confidential counts, cancellable where the source is;
        3. the front end's ``counted(data, counts)``: its warnings, and the dataset identity
           (:meth:`identity`, then :meth:`record` where it keeps the fingerprint before the spend);
        4. the last chance to cancel (:class:`~dpgui.errors.Cancelled`: nothing spent), then
           :meth:`Statistic.release` with ``noise()`` (called once, just before it): the spend recorded in the
           ledger, then the noise (a CDF O(K·h), a hierarchy O(nodes)).

        ``release_id``: the ledger id to record (a front end that made it can ask the ledger afterwards
        whether anything was spent). The counts go only into :meth:`Statistic.release`; the result keeps
        them for the caller's own checks (never exported). Time: O(rows) to count, then the statistic's
        release."""
        self.ledger.check_spend(self.dataset, statistic.charge(statistic.plan_of(spend)))  # reads only
        with open_data() as data:
            if checked is not None:
                checked(data)
            counts = statistic.count(data, spend, progress, should_cancel)
            if counted is not None:
                counted(data, counts)
            data_record = data.public_record()
        if should_cancel is not None and should_cancel():
            raise Cancelled("the release was cancelled before any noise was drawn", "nothing was spent")
        release, info = statistic.release(self.ledger, self.dataset, spend, counts, noise(), release_id=release_id,
                                          source_record=data_record)  # the spend recorded, then the noise
        return Released(release, info, counts)


    # ---------------------------------------------------------------------------------- record, sign, write
    def record(self, identity: DatasetIdentity) -> None:
        """Keep the data's fingerprint under the dataset (to warn when the same data comes back under
        another name). Needs the dataset's cap (:class:`NoCapSet`)."""
        record_fingerprint(self.ledger, self.dataset, identity.fingerprint)

    def record_identity(self, columns: Sequence[str], n_rows: int) -> None:
        """Keep the fingerprint of the data with ``columns``' names and ``n_rows`` rows under the dataset
        (:meth:`identity`, then :meth:`record`): the window's identity step, which asked the officer before
        the first cap (the command line asks its own question first). Needs the dataset's cap."""
        self.record(self.identity(columns, n_rows))

    def sign(self, statistic: Statistic[Any, Any, Any, ReleaseT, InfoT], folder: str | Path, name: str,
             release: ReleaseT, info: InfoT, pdf: bytes, key: SecretKey,
             extra: dict[str, Any] | None = None) -> BundlePaths:
        """The signed bundle of a ledger-confirmed release of ``statistic`` (:meth:`Statistic.sign
        <dpgui.workspace.statistic.Statistic.sign>`; ``extra``: a hierarchy's stated errors for its manifest)."""
        return statistic.sign(self.ledger, folder, name, release, info, pdf, key, extra)

    @staticmethod
    def write(plan: Chargeable, release_id: str, steps: Sequence[tuple[str, Callable[[], Path | None]]],
              fix: str) -> dict[str, str]:
        """After the spend: run each (name, write) of ``steps`` in order; returns {name: path written}
        (a step that returns None writes nothing). Any failure is a DpguiError saying that the charge
        was spent, under which ledger id, what was written, and ``fix``."""
        outputs: dict[str, str] = {}
        try:
            for name, write in steps:
                path = write()
                if path is not None:
                    outputs[name] = str(path)
        except Exception as err:  # past the spend, any failure must say that ε was spent
            written = f"{' and '.join(outputs.values())} was written" if outputs else "nothing was written"
            raise DpguiError(f"{charge_text(plan, with_rho=True)} was spent (ledger release {release_id}) but the "
                             f"output could not be written: {err}; {written}", fix) from err
        return outputs
