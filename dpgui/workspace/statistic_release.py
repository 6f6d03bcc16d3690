"""The release steps that the statistics outside the CDF's own flow (the counts of one column, the CDF for each
group) take alike, for the window and the command line (no Qt), over the :class:`~dpgui.workspace.statistic.Statistic`
protocol:

* :func:`release_through`: steps 1 to 5 of :meth:`ReleaseFlow.release <dpgui.workspace.flow.ReleaseFlow.release>`
  with the dataset identity taken from the data's column names and the counted rows;
* :func:`run_on_worker`: the window's release on a worker thread — the flow opened on that thread (SQLite's),
  the data opened where it lives, the progress in the release dialog's words;
* :func:`budget_check` / :func:`set_first_cap`: the window's budget check before the confirmation, and the
  dataset's first cap; :func:`budget_words`: the confirmation's sentence on the budget before and after.

Each statistic's module keeps its request, its words and its outcome. Confidential data: the counts go only
into the release; the ledger gets the fingerprint (column names and row count, salted) and public values.
Thread: the caller's (the window's release worker, the command's).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from dpgui.core.noise import RandomSource
from dpgui.data.source import DataSource, PasswordPrompt, neighbours_for, open_source
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import DpguiError
from dpgui.report.ledger import Ledger
from dpgui.report.publish import Chargeable
from dpgui.vocabulary import Charge, Neighbours
from dpgui.workspace.flow import ReleaseFlow, Released
from dpgui.workspace.release import (
    FIRST_CAP_REASON, BudgetCheck, FirstCapNeeded, Progress, budget_sentence, ledger_budget_check,
)
from dpgui.workspace.statistic import CountsT, InfoT, ReleaseT, SpendT, Statistic

__all__ = ["OpenData", "budget_check", "budget_words", "release_through", "run_on_worker", "set_first_cap"]

#: Opens the data (once the budget is checked); the context closes it.
OpenData = Callable[[], AbstractContextManager[DataSource]]
OutcomeT = TypeVar("OutcomeT")


def release_through(statistic: Statistic[SpendT, Any, CountsT, ReleaseT, InfoT], rows: Callable[[CountsT], int],
                    flow: ReleaseFlow, open_data: OpenData, spend: SpendT, noise: Callable[[], RandomSource], *,
                    release_id: str | None = None, progress: Callable[[float], None] | None = None,
                    should_cancel: Callable[[], bool] | None = None,
                    identify: Callable[[list[str], int], None] | None = None) -> Released[ReleaseT, InfoT, CountsT]:
    """One release of ``statistic`` through ``flow``'s :meth:`~ReleaseFlow.release`: the ledger's check (before
    ``open_data()``), the count (:meth:`Statistic.count`), the dataset identity of the data's column names and
    ``rows(counts)``, the rows the counts hold (``identify(columns, rows)``: the command line's, which refuses
    renamed data without ``--new-dataset``; default :meth:`ReleaseFlow.record_identity`, the window's, which
    asked before the first cap), the last chance to cancel (:class:`~dpgui.errors.Cancelled`: nothing spent),
    then the spend and the noise (``noise()`` called once, just before). O(rows)."""
    identify = identify or flow.record_identity

    def counted(data: DataSource, counts: CountsT) -> None:
        identify([c.name for c in data.columns()], rows(counts))

    return flow.release(statistic, open_data, spend, noise, release_id=release_id, progress=progress,
                        should_cancel=should_cancel, counted=counted)


def run_on_worker(spec: SourceSpec, dataset: str, neighbours: Neighbours, reading: str, noise_message: str,
                  release: Callable[[ReleaseFlow, OpenData, Callable[[], RandomSource], Callable[[float], None]],
                                    OutcomeT],
                  source: Callable[[], RandomSource], progress: Progress,
                  password_prompt: PasswordPrompt | None = None) -> OutcomeT:
    """The window's release on a worker thread: ``release(flow, open_data, noise, read_progress)`` on a flow of
    ``dataset`` opened here (SQLite's thread), the data of ``spec`` opened where it lives (``password_prompt``
    answers a database's request). The progress says ``reading`` while the data is read (90 % of the bar), then
    ``noise_message`` (the point of no return) when ``source`` is called, once, just before the spend. A query's
    row count not stated public under ``neighbours`` that need it is refused before anything is read; the
    ledger's refusal comes before the data is read, Cancelled before the spend. O(rows)."""
    neighbours_for(spec, neighbours)  # N of a query not stated public: refused

    def open_data() -> AbstractContextManager[DataSource]:
        progress(0.0, reading)
        return open_source(spec, password_prompt=password_prompt)

    def noise() -> RandomSource:
        progress(0.9, noise_message)
        return source()

    with ReleaseFlow.open(dataset) as flow:
        done = release(flow, open_data, noise, lambda fraction: progress(0.9 * fraction, reading))
    progress(1.0, "Released.")
    return done


def budget_check(dataset: str, plan: Chargeable, epsilon: float, delta: float,
                 similar: tuple[str, ...] = ()) -> BudgetCheck:
    """May ``dataset``'s budget pay for ``plan``? Reads only (:func:`~dpgui.workspace.release.ledger_budget_check`;
    no cap: :class:`~dpgui.workspace.release.FirstCapNeeded` with the release's ``epsilon`` and ``delta`` and
    ``similar``, the ledgered datasets like this data)."""
    return ledger_budget_check(dataset, plan, lambda: FirstCapNeeded(dataset, epsilon, similar, delta))


def budget_words(dataset: str, charge: Charge) -> str:
    """The confirmation's sentence on ``dataset``'s budget before and after ``charge`` (:func:`budget_sentence
    <dpgui.workspace.release.budget_sentence>`); empty if the ledger cannot tell. Reads only."""
    try:
        with Ledger() as ledger:
            totals = ledger.totals(dataset)
            after = ledger.totals_after(dataset, charge)
    except DpguiError:
        return ""
    return budget_sentence(dataset, totals, after)


def set_first_cap(dataset: str, plan: Chargeable, cap: float, delta: float) -> BudgetCheck:
    """Set ``dataset``'s first cap (ε ``cap``, ``delta``), then check ``plan`` against it."""
    return ledger_budget_check(dataset, plan, first_cap=(cap, delta, FIRST_CAP_REASON))
