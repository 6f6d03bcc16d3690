"""The window's release of a plan: its request (:class:`PlanRequest`: the data, the dataset that pays, the
items and their split at the plan's budget), the budget check before the confirmation (:func:`check_plan`,
:func:`set_plan_first_cap`: the plan's whole charge, as the ledger composes its parts'), the confirmation's words
(:func:`confirmation_words`: every statistic with its share and margin, once) and the release on a worker thread
(:func:`run_plan_release`: :func:`~dpgui.workspace.release_plan.release_plan` through one ledger entry, the
data opened where it lives).

Confidential data: the counts go only into the parts' releases; the dataset identity gets the column names and
the table's row count (salted fingerprint), as every release of the window. Threads: the checks and words on
the GUI thread (reads of the ledger only), the release on the worker's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dpgui.app.text import friendly
from dpgui.vocabulary import Charge, OtherGroups
from dpgui.core.noise import RandomSource
from dpgui.data.source import DataSource, PasswordPrompt
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import DpguiError
from dpgui.report.ledger import Ledger
from dpgui.report.publish import charge_text
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.release import BudgetCheck, NotEnoughBudget, Progress
from dpgui.workspace.plan_spec import PlanSpec
from dpgui.workspace.plan_split import PlanSplit
from dpgui.workspace.release_plan import (
    PlanItem, PlanOverBudget, ReleasedPlan, check_plan_budget, release_plan, worded_refusal,
)
from dpgui.workspace.statistic_release import OpenData, budget_check, budget_words, run_on_worker, set_first_cap
from dpgui.workspace.words import escape

__all__ = ["NOISE_MESSAGE", "PlanRequest", "charge_words", "check_plan", "confirmation_words", "run_plan_release",
           "set_plan_first_cap"]

#: The release's point of no return, as its progress says it (the Cancel button goes).
NOISE_MESSAGE = "Adding noise to every statistic of the plan (cannot be cancelled now)…"


@dataclass(frozen=True, eq=False)
class PlanRequest:
    """A checked plan of the window: where the data is (``spec``), the ``dataset`` that pays, the ``items`` and
    their ``split``, made of ``plan`` (the plan as its file states it: its budget and privacy unit)."""

    spec: SourceSpec
    dataset: str
    items: tuple[PlanItem, ...]
    split: PlanSplit
    plan: PlanSpec

    @property
    def epsilon(self) -> float:
        return self.plan.epsilon

    @property
    def delta(self) -> float:
        return self.plan.delta

    @property
    def privacy_unit(self) -> str:
        """The plan's privacy unit in words (enforced by the person-ID column, or declared)."""
        return self.plan.unit_words()


class _PlanCharge:
    """The plan's whole charge, as the ledger's budget check asks a plan for it."""

    def __init__(self, charge: Charge) -> None:
        self.charge = charge

    def ledger_charge(self) -> tuple[float, float, float | None]:
        return self.charge.epsilon, self.charge.delta, self.charge.rho


def check_plan(request: PlanRequest, similar: tuple[str, ...] = ()) -> BudgetCheck:
    """May the dataset's budget pay for the whole plan? Reads only (no cap: the first cap's question; not enough:
    the refusal names the first statistic that does not fit)."""
    check = budget_check(request.dataset, _PlanCharge(request.split.charge), request.epsilon, request.delta, similar)
    return _part_named(request, check)


def set_plan_first_cap(request: PlanRequest, cap: float, delta: float) -> BudgetCheck:
    """Set the dataset's first cap (ε ``cap``, ``delta``), then check the plan against it."""
    return _part_named(request, set_first_cap(request.dataset, _PlanCharge(request.split.charge), cap, delta))


def _part_named(request: PlanRequest, check: BudgetCheck) -> BudgetCheck:
    """``check``, a refusal for want of budget worded by the plan's own check: which statistics what is left pays
    for and the first it does not (:class:`~dpgui.workspace.release_plan.PlanOverBudget`). Reads only."""
    if not isinstance(check, NotEnoughBudget):
        return check
    try:
        with Ledger() as ledger:
            check_plan_budget(ledger, request.dataset, request.split, [item.title for item in request.items],
                              request.epsilon, request.delta)
    except PlanOverBudget as err:
        return NotEnoughBudget(f"{friendly(err)} Nothing was spent.")
    except DpguiError:
        return check  # the ledger's own words stand
    return check


def charge_words(charge: Charge) -> str:
    """The plan's charge for messages ("ε = 1", "ε = 1, δ = 1e-09"), as every release's."""
    return charge_text(_PlanCharge(charge))


def confirmation_words(request: PlanRequest) -> str:
    """The confirmation's rich text: every statistic with what it publishes, its share of the budget and its
    projected margin, the plan's whole cost (one ledger entry) and the dataset's budget before and after."""
    rows = "".join(f"<tr><td>{i}.</td><td>{escape(item.title)}<br><small>{escape(_details(item.settings))}</small>"
                   f"</td><td align='right'>ε = {part.epsilon:.4g}</td>"
                   f"<td align='right'>±{part.margin95:,.0f} records</td></tr>"
                   for i, (item, part) in enumerate(zip(request.items, request.split.parts), start=1))
    words = (f"<p>You are about to publish <b>{len(request.items)} statistics</b> of "
             f"{escape(request.spec.display_name())}, each with noise, under one budget:</p>"
             f"<table cellspacing='6'><tr><th></th><th align='left'>Statistic</th><th>Share</th>"
             f"<th>95 % margin</th></tr>{rows}</table>"
             f"<p><b>Cost: {charge_words(request.split.charge)}</b> of privacy budget for the whole plan, recorded "
             "once in the budget ledger and spent for good.</p>")
    return words + budget_words(request.dataset, request.split.charge)


def _details(settings: Mapping[str, Any]) -> str:
    """What a statistic publishes, from its plan-file settings: its bins and bounds, how many groups or
    categories (each published, absent ones included), its levels."""
    words = []
    if "groups" in settings:
        other = " and 'other'" if settings.get("other") == OtherGroups.OTHER else ""
        words.append(f"{len(settings['groups']):,} groups{other}, each with its size")
    if "bins" in settings:
        words.append(f"{settings['bins']:,} bins on [{settings['lower']:g}, {settings['upper']:g})")
    if "categories" in settings:
        words.append(f"{len(settings['categories']):,} categories, absent ones included")
    if "levels" in settings:
        words.append("its categories read from the data and published")
    return "; ".join(words)


def run_plan_release(request: PlanRequest, source: Callable[[], RandomSource], progress: Progress,
                     should_cancel: Callable[[], bool], release_id: str | None = None,
                     password_prompt: PasswordPrompt | None = None) -> ReleasedPlan:
    """The window's release of the plan on a worker thread: one ledger entry (id ``release_id``) for every part,
    the data opened once where it lives, the dataset identity of its column names and row count (one more count
    of the rows) recorded before the spend. Raises the plan's refusal
    (:class:`~dpgui.workspace.release_plan.PlanOverBudget`, the ledger's in its words) before the data is read,
    Cancelled before the spend; after the spend, the error that says so. O(rows) per part."""
    def release(flow: ReleaseFlow, open_data: OpenData, noise: Callable[[], RandomSource],
                read_progress: Callable[[float], None]) -> ReleasedPlan:
        def counted(data: DataSource, counts: Sequence[Any]) -> None:
            flow.record_identity([c.name for c in data.columns()], data.row_count())  # as the command line

        try:
            return release_plan(flow.ledger, flow.dataset, request.items, request.split, open_data, noise,
                                epsilon=request.epsilon, delta=request.delta, plan_id=release_id,
                                progress=read_progress, should_cancel=should_cancel, counted=counted)
        except DpguiError as err:
            worded = worded_refusal(err)
            if worded is err:
                raise
            raise worded from err

    return run_on_worker(request.spec, request.dataset, request.plan.neighbours,
                         f"Counting the plan's statistics in {request.spec.display_name()}…", NOISE_MESSAGE, release,
                         source, progress, password_prompt)
