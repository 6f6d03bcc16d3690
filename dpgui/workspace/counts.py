"""The counts of one column's stated categories, from the officer's choices to a release, for the window
and the command line alike (no Qt).

* :func:`parse_categories` / :func:`read_categories`: the public list of categories, typed (one a line,
  or comma-separated) or from a text file (one a line) — never read from the data;
* :func:`counts_plan`: the plan of the choices, or the one-line reason it cannot be made;
* :func:`release_counts_through`: steps 1 to 5 of the release flow (:class:`~dpgui.workspace.flow.ReleaseFlow`)
  in their order — check, count, identity (and the fingerprint recorded), the last chance to cancel, the
  spend then the noise.

The categories are the whole list: a value of the data that is not one of them is refused before
anything is spent (the hierarchy's rule, :meth:`dpgui.workspace.statistics.counts.CountsStatistic.count`).
Confidential data: the counts go only into the release; the ledger gets the fingerprint (column names and
row count, salted) and public values. Thread: the caller's (the window's release worker, the command's).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from dpgui.core.counts import CountsPlan, CountsRelease
from dpgui.core.noise import RandomSource
from dpgui.core.privacy_unit import PrivacyUnit
from dpgui.data.source import DataSource, PasswordPrompt
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import ParameterError
from dpgui.report.counts.bundle import CountsReleaseInfo
from dpgui.vocabulary import Neighbours
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.release import BudgetCheck, Progress
from dpgui.workspace.public_lists import check_public_list, parse_public_list, read_public_list
from dpgui.workspace.statistic_release import (
    OpenData, budget_check, budget_words, release_through, run_on_worker, set_first_cap,
)
from dpgui.workspace.statistic import check_privacy_unit
from dpgui.workspace.statistics.counts import COUNTS, CountsPlanRequest, CountsSpend
from dpgui.workspace.words import escape

__all__ = ["MAX_CATEGORIES", "NOISE_MESSAGE", "CountsOutcome", "CountsRequest", "check_counts_budget",
           "confirmation_words", "counts_plan", "parse_categories", "read_categories", "release_counts_through",
           "run_counts_release", "set_counts_first_cap"]

#: The most categories one release states (a longer list is probably a column of identifiers).
MAX_CATEGORIES = 10_000


def parse_categories(typed: str) -> tuple[str, ...]:
    """The categories of a typed list (:func:`~dpgui.workspace.public_lists.parse_public_list`); ParameterError
    for a repeated category or too many. O(length)."""
    categories = parse_public_list(typed)
    check_public_list(categories, "category", MAX_CATEGORIES)
    return categories


def read_categories(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """The public list of categories in a text file (:func:`~dpgui.workspace.public_lists.read_public_list`).
    Read as public: never the confidential data file itself. DataError if it cannot be read."""
    categories = read_public_list(path, "categories")
    check_public_list(categories, "category", MAX_CATEGORIES)
    return categories


def counts_plan(categories: tuple[str, ...], epsilon: float, neighbours: Neighbours,
                records_per_person: int = 1) -> CountsPlan:
    """The plan of the choices through the statistic's :meth:`~dpgui.workspace.statistics.counts.CountsStatistic.plan`
    (ParameterError with the reason and the fix otherwise). O(categories)."""
    if not categories:
        raise ParameterError("no category was stated", "type the categories (one a line) or load a list")
    return COUNTS.plan(CountsPlanRequest(categories, epsilon, neighbours, records_per_person)).plan


@dataclass(frozen=True)
class CountsOutcome:
    """A spent and released counts release (public values only)."""

    release: CountsRelease
    info: CountsReleaseInfo

    @property
    def release_id(self) -> str:
        return self.info.release_id


def release_counts_through(flow: ReleaseFlow, open_data: Callable[[], AbstractContextManager[DataSource]],
                           spend: CountsSpend, noise: Callable[[], RandomSource], *, release_id: str | None = None,
                           progress: Callable[[float], None] | None = None,
                           should_cancel: Callable[[], bool] | None = None,
                           identify: Callable[[list[str], int], None] | None = None) -> CountsOutcome:
    """One counts release through ``flow``'s :meth:`~ReleaseFlow.release` (the one release of every statistic):
    the ledger's check (before ``open_data()``), the count (:meth:`CountsStatistic.count
    <dpgui.workspace.statistics.counts.CountsStatistic.count>`), the dataset identity of the data's column names
    and row count (``identify(columns, rows)``: the command line's, which refuses renamed data without
    ``--new-dataset``; default :meth:`ReleaseFlow.record_identity`, the window's, which asked before the first cap), the last
    chance to cancel (:class:`~dpgui.errors.Cancelled`: nothing spent), then the spend and the noise
    (``noise()`` called once, just before). O(rows)."""
    done = release_through(COUNTS, lambda counts: int(counts.sum()),  # every row is counted: the counts sum to the rows
                           flow, open_data, spend, noise, release_id=release_id, progress=progress,
                           should_cancel=should_cancel, identify=identify)
    return CountsOutcome(done.release, done.info)


# ------------------------------------------------------------------------------------------ the window's release

#: The release's point of no return, as its progress says it (the Cancel button goes).
NOISE_MESSAGE = "Adding noise to the counts (cannot be cancelled now)…"


@dataclass(frozen=True)
class CountsRequest:
    """A checked release of the window: where the data is, the column, the plan, the dataset that pays and the
    privacy unit (None: records per person declared)."""

    spec: SourceSpec
    column: str
    plan: CountsPlan
    dataset: str
    privacy_unit: PrivacyUnit | None = None

    def __post_init__(self) -> None:
        check_privacy_unit(self.privacy_unit, self.plan.privacy)  # said when the request is made, before anything

    @property
    def spend(self) -> CountsSpend:
        return CountsSpend(self.column, self.plan, self.privacy_unit)


def check_counts_budget(request: CountsRequest, similar: tuple[str, ...] = ()) -> BudgetCheck:
    """May the dataset's budget pay for ``request``? Reads only (:func:`~dpgui.workspace.release.ledger_budget_check`;
    no cap: :class:`~dpgui.workspace.release.FirstCapNeeded` with ``similar``, the ledgered datasets like this data)."""
    return budget_check(request.dataset, request.plan, request.plan.privacy.epsilon, 0.0, similar)


def set_counts_first_cap(request: CountsRequest, cap: float) -> BudgetCheck:
    """Set the dataset's first cap (ε ``cap``, δ = 0: the counts spend none), then check ``request``."""
    return set_first_cap(request.dataset, request.plan, cap, 0.0)


def confirmation_words(request: CountsRequest) -> str:
    """The confirmation's rich text: what is published (every stated category's count, zeros included), its
    margin and its cost, and the dataset's budget before and after (left out if the ledger cannot tell)."""
    plan = request.plan
    words = (f"<p>You are about to publish <b>{len(plan.categories):,} counts</b> of column "
             f"<b>{escape(request.column)}</b> of <b>{escape(request.spec.display_name())}</b>: one per category of "
             f"your public list, zeros included, each with Laplace noise (95 % within ±{plan.margin:,} records). "
             "A value of the column that is not in the list stops the release before anything is spent.</p>"
             f"<p><b>Cost: ε = {plan.privacy.epsilon:g}</b> of privacy budget, spent for good.</p>")
    return words + budget_words(request.dataset, COUNTS.charge(plan))


def run_counts_release(request: CountsRequest, source: Callable[[], RandomSource], progress: Progress,
                       should_cancel: Callable[[], bool], release_id: str | None = None,
                       password_prompt: PasswordPrompt | None = None) -> CountsOutcome:
    """The window's release on a worker thread: :func:`release_counts_through` on a flow opened here (SQLite's
    thread), the data opened where it lives (``password_prompt`` answers a database's request). ``source`` is
    called once, just before the spend. Raises the ledger's refusal before the data is read, Cancelled before
    the spend. O(rows)."""
    def release(flow: ReleaseFlow, open_data: OpenData, noise: Callable[[], RandomSource],
                read_progress: Callable[[float], None]) -> CountsOutcome:
        return release_counts_through(flow, open_data, request.spend, noise, release_id=release_id,
                                      progress=read_progress, should_cancel=should_cancel)

    return run_on_worker(request.spec, request.dataset, request.plan.privacy.neighbours,
                         f"Counting '{request.column}' in {request.spec.display_name()}…", NOISE_MESSAGE, release,
                         source, progress, password_prompt)
