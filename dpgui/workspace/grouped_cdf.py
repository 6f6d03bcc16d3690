"""The CDF of a numeric column for each group, from the officer's choices to a release, for the window and the
command line alike (no Qt).

* :func:`parse_groups` / :func:`read_groups`: the public list of groups, typed (comma-separated on one line,
  or one a line) or from a public text file (one a line) — never read from the data;
  :class:`~dpgui.core.grouped_cdf.GroupList` checks it (empty, too long, a group twice, "other" listed while
  the other rows are kept under that name);
* :func:`release_grouped_through`: steps 1 to 5 of the release flow (:class:`~dpgui.workspace.flow.ReleaseFlow`)
  in their order — check, count, identity (and the fingerprint recorded), the last chance to cancel, the
  spend (the shared plan's charge, once) then the noise;
* the window's release: :class:`GroupedRequest`, its budget check and first cap, its confirmation's words,
  :func:`run_grouped_release` on a worker.

Confidential data: the histograms go only into the release; the ledger gets the fingerprint (column names and
the released groups' row count, salted) and public values. Thread: the caller's (the window's release worker,
the command's). O(length) for the lists; a release O(rows).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from dpgui.core.grouped_cdf import GroupedPlan, GroupedRelease, GroupList
from dpgui.vocabulary import OtherGroups
from dpgui.core.noise import RandomSource
from dpgui.data.source import DataSource, PasswordPrompt
from dpgui.data.source_spec import SourceSpec
from dpgui.report.grouped_cdf.bundle import GroupedReleaseInfo
from dpgui.report.publish import charge_text
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.release import BudgetCheck, Progress
from dpgui.workspace.public_lists import parse_public_list, read_public_list
from dpgui.workspace.statistic_release import (
    OpenData, budget_check, budget_words, release_through, run_on_worker, set_first_cap,
)
from dpgui.workspace.statistics.grouped_cdf import GROUPED_CDF, GroupedCdfSpend
from dpgui.workspace.words import escape

__all__ = ["NOISE_MESSAGE", "GroupedOutcome", "GroupedRequest", "check_grouped_budget", "confirmation_words",
           "parse_groups", "read_groups", "release_grouped_through", "run_grouped_release", "set_grouped_first_cap"]


def parse_groups(typed: str, other: str = OtherGroups.DROP) -> GroupList:
    """The groups of a typed list (:func:`~dpgui.workspace.public_lists.parse_public_list`); ``other``: what
    becomes of the rows of a group not listed (ParameterError from :class:`GroupList` for a list it refuses)."""
    return GroupList(parse_public_list(typed), OtherGroups(other))


def read_groups(path: str | os.PathLike[str], other: str = OtherGroups.DROP) -> GroupList:
    """The public list of groups in a text file (:func:`~dpgui.workspace.public_lists.read_public_list`). Read as
    public: never the confidential data file itself. DataError if it cannot be read."""
    return GroupList(read_public_list(path, "groups"), OtherGroups(other))


@dataclass(frozen=True)
class GroupedOutcome:
    """A spent and released grouped CDF (public values only)."""

    release: GroupedRelease
    info: GroupedReleaseInfo

    @property
    def release_id(self) -> str:
        return self.info.release_id


def release_grouped_through(flow: ReleaseFlow, open_data: Callable[[], AbstractContextManager[DataSource]],
                            spend: GroupedCdfSpend, noise: Callable[[], RandomSource], *,
                            release_id: str | None = None, progress: Callable[[float], None] | None = None,
                            should_cancel: Callable[[], bool] | None = None,
                            identify: Callable[[list[str], int], None] | None = None) -> GroupedOutcome:
    """One grouped release through ``flow``'s :meth:`~ReleaseFlow.release`: the ledger's check (before
    ``open_data()``), the count (:meth:`GroupedCdfStatistic.count
    <dpgui.workspace.statistics.grouped_cdf.GroupedCdfStatistic.count>`), the dataset identity of the data's
    column names and the table's row count, whichever groups are released (``identify(columns, rows)``: the
    command line's, which refuses renamed data without ``--new-dataset``; default
    :meth:`ReleaseFlow.record_identity`, the window's),
    the last chance to cancel (nothing spent), then the spend and the noise (``noise()`` called once, just
    before). O(rows)."""
    done = release_through(GROUPED_CDF, lambda histograms: histograms.table_rows,  # the table's rows, every group
                           flow, open_data, spend, noise, release_id=release_id, progress=progress,
                           should_cancel=should_cancel, identify=identify)
    return GroupedOutcome(done.release, done.info)


# ------------------------------------------------------------------------------------------ the window's release

#: The release's point of no return, as its progress says it (the Cancel button goes).
NOISE_MESSAGE = "Adding noise to every group's counts (cannot be cancelled now)…"


@dataclass(frozen=True)
class GroupedRequest:
    """A checked release of the window: where the data is, what is released (the spend: the columns, the bounds
    and the shared plan) and the dataset that pays."""

    spec: SourceSpec
    spend: GroupedCdfSpend
    dataset: str

    @property
    def plan(self) -> GroupedPlan:
        return self.spend.plan


def check_grouped_budget(request: GroupedRequest, similar: tuple[str, ...] = ()) -> BudgetCheck:
    """May the dataset's budget pay for ``request``? Reads only (:func:`~dpgui.workspace.release.ledger_budget_check`;
    no cap: :class:`~dpgui.workspace.release.FirstCapNeeded` with ``similar`` and the plan's δ)."""
    privacy = request.plan.tree.privacy
    return budget_check(request.dataset, request.plan, privacy.epsilon, privacy.delta, similar)


def set_grouped_first_cap(request: GroupedRequest, cap: float, delta: float) -> BudgetCheck:
    """Set the dataset's first cap (ε ``cap``, ``delta``), then check ``request``."""
    return set_first_cap(request.dataset, request.plan, cap, delta)


def confirmation_words(request: GroupedRequest, margin95: float) -> str:
    """The confirmation's rich text: what is published (every listed group's CDF and noisy size, absent groups
    included), its margin and its cost (once for all groups), and the dataset's budget before and after (left
    out if the ledger cannot tell)."""
    plan, spend = request.plan, request.spend
    words = (f"<p>You are about to publish the CDF of <b>{escape(spend.column)}</b> for <b>{len(plan.labels):,} "
             f"groups</b> of <b>{escape(spend.group_column)}</b> ({plan.tree.shape.bins:,} bins on [{spend.lower:g}, "
             f"{spend.upper:g})): one per group of your public list, absent groups included, each with its size "
             f"released with noise (95 % of cumulative counts within ±{margin95:,.0f} records).</p>"
             f"<p><b>Cost: {charge_text(plan)}</b> of privacy budget, once for all groups, spent for good.</p>")
    return words + budget_words(request.dataset, GROUPED_CDF.charge(plan))


def run_grouped_release(request: GroupedRequest, source: Callable[[], RandomSource], progress: Progress,
                        should_cancel: Callable[[], bool], release_id: str | None = None,
                        password_prompt: PasswordPrompt | None = None) -> GroupedOutcome:
    """The window's release on a worker thread: :func:`release_grouped_through` on a flow opened here (SQLite's
    thread), the data opened where it lives (``password_prompt`` answers a database's request). ``source`` is
    called once, just before the spend. Raises the ledger's refusal before the data is read, Cancelled before
    the spend. O(rows)."""
    def release(flow: ReleaseFlow, open_data: OpenData, noise: Callable[[], RandomSource],
                read_progress: Callable[[float], None]) -> GroupedOutcome:
        return release_grouped_through(flow, open_data, request.spend, noise, release_id=release_id,
                                       progress=read_progress, should_cancel=should_cancel)

    return run_on_worker(request.spec, request.dataset, request.plan.tree.privacy.neighbours,
                         f"Counting '{request.spend.column}' for each group in {request.spec.display_name()}…",
                         NOISE_MESSAGE, release, source, progress, password_prompt)
