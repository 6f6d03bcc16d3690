"""The one release flow of the window, the command line and the self-test (no Qt):
check → read → identity → spend → record → sign/write, on one dataset of the budget ledger.

Every front end releases through a :class:`ReleaseFlow`:

1. :meth:`ReleaseFlow.check` — may the dataset's cap pay for the plan? The ledger's refusal (no cap, too
   little ε or δ left, a cap δ = 0 for a release that spends δ) is raised before anything is read.
   A plan that needs the data (a hierarchy's node list from the data) is checked against the charges
   its options can lead to (:meth:`ReleaseFlow.check_any`), then exactly once it is made.
2. :meth:`ReleaseFlow.read_histogram` / :meth:`ReleaseFlow.read_paths` — the confidential counts, from
   an open :class:`~dpgui.data.source.DataSource` (a file, a database or Spark counts its own rows).
3. :meth:`ReleaseFlow.identity` — the rule of docs/privacy-model.md, "Dataset identity": a dataset name with no
   release yet whose data has the same column names and row count as another ledgered dataset may be
   the same data under a new name (:attr:`DatasetIdentity.similar`); each front end asks the officer
   in its own words (the command line refuses without ``--new-dataset``, the window asks before the
   first cap).
4. :meth:`ReleaseFlow.spend` (a :class:`~dpgui.workspace.statistic.Statistic` of the registry) — the spend recorded in the ledger,
   then the noise (:func:`dpgui.report.publish.spend_then_release`: spend before noise).
5. :meth:`ReleaseFlow.record` — the data's fingerprint kept under the dataset (the command line keeps it
   before the spend, the window once the release is shown).
6. :meth:`ReleaseFlow.sign` (the statistic's) / :meth:`ReleaseFlow.write` — the
   signed bundle of a ledger-confirmed release, and the outputs after the spend (a failure says that
   the budget was spent, and under which ledger id).

Threads: a flow holds one open :class:`~dpgui.report.ledger.Ledger` (SQLite, ``$DPGUI_HOME``); open it
with :meth:`ReleaseFlow.open` on the thread that runs the steps (the window's release worker, the
command's thread). Confidential data: the histogram and the leaf counts go only to the engine's release
(inside the spend); the ledger receives public parameters, the fingerprint (a salted HMAC of the column
names and the row count) and the release's output; nothing confidential is returned but the counts the
read steps hand back to their caller (never exported).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from dpgui.core.mechanism import Release
from dpgui.core.noise import RandomSource
from dpgui.data.hierarchy import PathCounts
from dpgui.data.histogram import ColumnHistogram
from dpgui.data.source import DataSource
from dpgui import vocabulary
from dpgui.errors import Cancelled, DpguiError
from dpgui.report.bundle import BundlePaths
from dpgui.report.cdf.bundle import ReleaseInfo
from dpgui.report.ledger import (
    BudgetExceeded, Ledger, NoCapSet, data_fingerprint, datasets_like, is_new_dataset, record_fingerprint,
)
from dpgui.report.publish import Chargeable, charge_text, check_release_budget
from dpgui.report.signing import SecretKey
from dpgui.workspace.statistic import CountsT, InfoT, ReleaseT, SpendT, Statistic
from dpgui.workspace.statistics.cdf import CDF, CdfSpend
from dpgui.workspace.ledger_words import same_data_warning

#: The ledger's refusals and its sentence on a dataset that may be renamed data, which each front end words.
__all__ = ["BudgetExceeded", "CdfOutcome", "Charge", "DatasetIdentity", "NoCapSet", "ReleaseFlow",
           "same_data_warning"]

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
class CdfOutcome:
    """A spent and released CDF, with the confidential histogram kept only for its caller's own checks."""

    release: Release
    info: ReleaseInfo
    histogram: ColumnHistogram  # CONFIDENTIAL: never exported


class ReleaseFlow:
    """One release of ``dataset`` through an open budget ledger, in the order of the module doc.

    Each method runs on the thread that opened the flow (:meth:`open`). Every step before the spend
    spends nothing; :meth:`spend` records the charge before any noise is
    drawn; once recorded, the budget stays spent whatever happens next."""

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
    def read_histogram(data: DataSource, spend: CdfSpend, progress: Progress | None = None,
                       should_cancel: Callable[[], bool] | None = None) -> ColumnHistogram:
        """The column's K bin counts (CONFIDENTIAL: for the spend only). O(rows); cancellable."""
        return data.histogram(spend.column, spend.lower, spend.upper, spend.bins, progress=progress,
                              should_cancel=should_cancel)

    @staticmethod
    def read_paths(data: DataSource, levels: Sequence[str]) -> PathCounts:
        """The count of every path of the level columns (CONFIDENTIAL: for the spend only). O(rows)."""
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

    # ---------------------------------------------------------------------------------- the spend
    def spend(self, statistic: Statistic[SpendT, Any, CountsT, ReleaseT, InfoT], spend: SpendT, counts: CountsT,
              noise: RandomSource, release_id: str | None = None,
              data_record: dict[str, Any] | None = None) -> tuple[ReleaseT, InfoT]:
        """The spend recorded, then one release of ``statistic`` (:meth:`Statistic.release
        <dpgui.workspace.statistic.Statistic.release>`: spend before noise). ``counts``: the confidential
        counts ``statistic.count`` read (a CDF's histogram, a hierarchy's leaf counts in its tree's order);
        ``release_id``: the ledger id to record (a caller that made it can ask the ledger afterwards whether
        anything was spent); ``data_record``: :meth:`DataSource.public_record` (no secret in it). Time: the
        statistic's release (a CDF O(K·h), a hierarchy O(nodes))."""
        return statistic.release(self.ledger, self.dataset, spend, counts, noise, release_id=release_id,
                                 source_record=data_record)

    def release_cdf(self, open_data: Callable[[], AbstractContextManager[DataSource]], spend: CdfSpend,
                    noise: Callable[[], RandomSource], *, release_id: str | None = None,
                    progress: Progress | None = None, should_cancel: Callable[[], bool] | None = None,
                    checked: Callable[[DataSource], None] | None = None,
                    counted: Callable[[DataSource, ColumnHistogram], None] | None = None) -> CdfOutcome:
        """Steps 1 to 4 of a CDF release, in their order: :meth:`check` (before the data is opened by
        ``open_data()``), :meth:`read_histogram`, then the front end's ``counted(data, histogram)`` (its
        warnings, and the dataset identity, :meth:`identity`/:meth:`record`, where it keeps it before the
        spend), the last chance to cancel (:class:`~dpgui.errors.Cancelled`: nothing spent), and
        :meth:`spend` with ``noise()`` (called once, just before the spend). ``checked(data)``: the
        front end's step once the budget was checked and the data opened, before it is read."""
        self.check(spend.plan)
        with open_data() as data:
            if checked is not None:
                checked(data)
            histogram = self.read_histogram(data, spend, progress, should_cancel)
            if counted is not None:
                counted(data, histogram)
            data_record = data.public_record()
        if should_cancel is not None and should_cancel():
            raise Cancelled("the release was cancelled before any noise was drawn", "nothing was spent")
        release, info = self.spend(CDF, spend, histogram, noise(), release_id, data_record)
        return CdfOutcome(release, info, histogram)

    # ---------------------------------------------------------------------------------- record, sign, write
    def record(self, identity: DatasetIdentity) -> None:
        """Keep the data's fingerprint under the dataset (to warn when the same data comes back under
        another name). Needs the dataset's cap (:class:`NoCapSet`)."""
        record_fingerprint(self.ledger, self.dataset, identity.fingerprint)

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
