"""The release flow without a window: is the workspace ready, may the ledger pay for it, what the
confirmation says, the release itself, and what is kept of it (no Qt).

The order, from :class:`ReleaseController`: :func:`release_request` (step 1 and step 2 ready) →
:meth:`~ReleaseController.check_budget` (the dataset has a cap with ε left; its first cap is set
with :meth:`~ReleaseController.set_first_cap`) → :meth:`~ReleaseController.confirmation` (what the
officer agrees to) → :func:`run_release` (on a worker thread: read the column, cancellable; then
the point of no return, the spend recorded in the budget ledger; then the noise and the estimates)
→ :meth:`~ReleaseController.record` (the file's fingerprint in the ledger, the release in the
:class:`~dpgui.workspace.state.Workspace`). Cancelling before the spend spends nothing; once the
spend is recorded the release completes. Every refusal before the spend spends nothing. The budget
check, the read, the dataset identity, the spend and the fingerprint are the steps of the one
:class:`~dpgui.workspace.flow.ReleaseFlow` that the command line and the self-test use too.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np

from dpgui.core.accounting import Accounting
from dpgui.core.focus import FocusChoice, Region
from dpgui.core.mechanism import Release
from dpgui.core.missing import missing_rule_text
from dpgui.core.noise import RandomSource, SecureRandom
from dpgui.core.plan import Plan
from dpgui.core.privacy_unit import PrivacyUnit, privacy_unit_words
from dpgui.data.histogram import ColumnHistogram
from dpgui.data.source import DataSource, PasswordPrompt, neighbours_for, open_source
from dpgui.errors import DpguiError
from dpgui.formatting import format_delta, format_number, format_odds, format_significant
from dpgui.report.cdf.bundle import ReleaseInfo, focus_json
from dpgui.report.ledger import BudgetExceeded, Ledger, NoCapSet, Totals, spent_epsilon
from dpgui.report.ledger import new_release_id as new_release_id  # the front ends' release ids, made by the ledger
from dpgui.report.project_file import ProjectRelease
from dpgui.report.publish import Chargeable
from dpgui.report.cdf.publish import authenticate_release
from dpgui.vocabulary import Charge, Noise, SourceKind, StatisticKind
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.statistics.cdf import CDF, CdfSpend
from dpgui.workspace.ledger_words import refusal_problem, same_data_warning, window_fix
from dpgui.workspace.results import result_figures
from dpgui.workspace.state import ColumnSettings, ShownRelease, Workspace, WorkspaceState
from dpgui.workspace.statistics import statistic
from dpgui.workspace.words import (
    CONSISTENCY_LABELS, ESTIMATOR_LABELS, NEIGHBOURS_LABELS, escape, friendly, sentence,
)

READ_SHARE = 0.85  # fraction of the progress bar used by reading the file
NOISE_MESSAGE = "Adding noise and estimating (cannot be cancelled now)…"
FIRST_CAP_REASON = "set before the first release in the app; the officer confirmed the dataset name as new data"

NoiseSource = Callable[[], RandomSource]
Progress = Callable[[float, str], None]


# ------------------------------------------------------------------------------------------ is it ready?

@dataclass(frozen=True)
class ReleaseRequest:
    """What one release publishes: step 1's validated column settings, step 2's plan (its K is the
    settings' K) and the consistency step; ``focus``: the region the officer chose in step 2 (None or
    everywhere: none), which the confirmation names; ``privacy_unit``: the person-ID column and L (None: L
    declared), checked against the plan when the spend is made."""

    settings: ColumnSettings
    plan: Plan
    consistency: str
    focus: FocusChoice | None = None
    privacy_unit: PrivacyUnit | None = None

    @property
    def dataset(self) -> str:
        """The budget ledger's name of the data, which pays for the release."""
        return self.settings.dataset_id

    @property
    def epsilon(self) -> float:
        return self.plan.privacy.epsilon

    @property
    def delta(self) -> float:
        """The δ the user set for this release (a Laplace release leaves it unused)."""
        return self.plan.privacy.delta

    @property
    def spend(self) -> CdfSpend:
        """What the release flow publishes (:class:`~dpgui.workspace.statistics.cdf.CdfSpend`)."""
        settings = self.settings
        return CdfSpend(settings.column, settings.lower, settings.upper, settings.bins, self.plan, self.consistency,
                        settings.missing, settings.whole_numbers, self.privacy_unit)


@dataclass(frozen=True)
class NotReady:
    """Why the workspace cannot be released yet: the step that needs attention ("data": step 1,
    "plan": step 2) and the sentence the window shows. ``title`` is set when no data is open at
    all (the window says it in a dialog rather than in the status bar)."""

    step: Literal["data", "plan"]
    message: str
    title: str = ""


NO_DATA = NotReady("data", "Open a file first (File → Open).", "No data")
DATA_NOT_READY = NotReady("data", "Some settings in step 1 need attention (see the red messages).")
PLAN_NOT_READY = NotReady("plan", "The plan is not ready: check step 2 (see the red messages).")
DIALECT_NOT_STATED = NotReady("data", "Confirm how the file is written (step 1: Confirm or Change… beside the "
                                      "separator): a release reads a file only as you state it.")
QUERY_ROWS_PRIVATE = NotReady(
    "plan", "This plan publishes N, the exact number of rows the query returns, and that number was not stated "
    "public: under “Protect against” choose “One person may be added or removed”, or, if that number is public, "
    "tick “The number of rows this query returns is public” in File → Connect to a Database….")


def release_request(state: WorkspaceState) -> ReleaseRequest | NotReady:
    """The release the workspace describes, or what must be done first: a data file (a CSV's dialect
    stated when its first lines suggest another than its name's default); a numeric column with valid
    public bounds, K and a dataset name; a privacy setting and a plan for the same
    K that is not being recomputed."""
    if state.source is None:
        return NO_DATA
    if state.source.unconfirmed_dialect is not None:
        return DIALECT_NOT_STATED
    settings = state.column_settings()  # None unless a number column, valid bounds, K and a name
    if settings is None:
        return DATA_NOT_READY
    choice = state.plan
    if choice.planning or choice.privacy is None or choice.plan is None or choice.plan.shape.bins != settings.bins:
        return PLAN_NOT_READY
    if choice.plan.privacy.root_public and not settings.spec.row_count_may_be_public:
        return QUERY_ROWS_PRIVATE
    unit = None
    if choice.person_column is not None:
        unit = PrivacyUnit(choice.person_column, choice.plan.privacy.records_per_person)
        try:
            unit.check_privacy(choice.plan.privacy)
        except DpguiError as err:
            return NotReady("plan", err.problem)
    return ReleaseRequest(settings, choice.plan, choice.consistency, choice.focus, unit)


# ------------------------------------------------------------------------------------------ the budget

@dataclass(frozen=True)
class Problem:
    """Something the officer must be told: a dialog's ``title`` and its ``message`` (plain text)."""

    message: str
    title: ClassVar[str] = ""


@dataclass(frozen=True)
class RowsNotCounted(Problem):
    """A first release waits for the row count (the file is compared with the ledgered datasets)."""

    title: ClassVar[str] = "The rows are still being counted"


@dataclass(frozen=True)
class NotEnoughBudget(Problem):
    """The release does not fit in what is left of the dataset's cap. Nothing was spent."""

    title: ClassVar[str] = "Not enough privacy budget left"


@dataclass(frozen=True)
class LedgerUnusable(Problem):
    """The budget ledger cannot be read or written. Nothing was spent."""

    title: ClassVar[str] = "The budget ledger cannot be used"


@dataclass(frozen=True)
class FingerprintNotRecorded(Problem):
    """The release is recorded, but not the file's fingerprint (only a later warning may be missing)."""

    title: ClassVar[str] = "The file's fingerprint was not recorded"


@dataclass(frozen=True)
class BudgetOk:
    """The dataset has a cap with room for this release."""


@dataclass(frozen=True)
class FirstCapNeeded:
    """The dataset has no cap yet: the officer confirms the name as new data and sets its budget.
    ``similar``: ledgered datasets released from a file like this one (a copy under a new name?).
    ``delta``: the cap δ that :meth:`ReleaseController.set_first_cap` sets unless told otherwise:
    the request's δ (a Gaussian release needs a cap δ > 0; for Laplace it is the δ the user set,
    usually 0)."""

    dataset: str
    epsilon: float
    similar: tuple[str, ...]
    delta: float = 0.0


BudgetCheck = BudgetOk | FirstCapNeeded | RowsNotCounted | NotEnoughBudget | LedgerUnusable

ROWS_NOT_COUNTED = RowsNotCounted(
    "The first release of a dataset compares the file with the datasets already in the budget ledger, which "
    "needs its number of rows. Wait until the count is shown in step 1, then release.")


def _not_enough(err: BudgetExceeded) -> NotEnoughBudget:
    """The refusal in the window's words: the ledger's problem, then what to do in the app."""
    return NotEnoughBudget(f"{sentence(refusal_problem(err))} {window_fix(err)} Nothing was spent.")


def _ledger_unusable(err: DpguiError) -> LedgerUnusable:
    return LedgerUnusable(friendly(err) + " Nothing was spent.")


def ledger_budget_check(dataset: str, plan: Chargeable, no_cap: Callable[[], BudgetCheck] | None = None,
                        first_cap: tuple[float, float, str] | None = None) -> BudgetCheck:
    """May ``dataset``'s budget pay for a release with ``plan`` (a CDF or hierarchy plan)? Reads only,
    unless ``first_cap`` = (ε, δ, reason) is given: that cap is set first, then the plan checked.

    The ledger's refusal in the window's words (:class:`NotEnoughBudget`, :class:`LedgerUnusable`);
    a dataset without a cap: ``no_cap()`` (a DpguiError from it: :class:`LedgerUnusable`), or
    :class:`LedgerUnusable` without ``no_cap``. Used by the CDF's and the hierarchy's steps alike.
    """
    try:
        try:
            with ReleaseFlow.open(dataset) as flow:
                if first_cap is not None:
                    flow.ledger.set_cap(dataset, *first_cap)
                flow.check(plan)
        except NoCapSet:
            if no_cap is None:
                raise
            return no_cap()
    except BudgetExceeded as err:
        return _not_enough(err)
    except DpguiError as err:
        return _ledger_unusable(err)
    return BudgetOk()


# ------------------------------------------------------------------------------------------ the confirmation

def _lower_first(label: str) -> str:
    return label[:1].lower() + label[1:]


def cost_words(plan: Plan) -> str:
    """What the release costs and what δ means for it, in plain words (rich text): Laplace with δ = 0
    "ε = 1"; Laplace with a δ set "ε = 1 (δ is not used …)"; Gaussian "ε = 1 and δ = 1e-9 …"."""
    privacy = plan.privacy
    epsilon, delta, rho = plan.ledger_charge()
    if plan.noise == Noise.GAUSSIAN:
        return (f"<b>Cost: ε = {epsilon:g} and δ = {format_delta(delta)}</b> of privacy budget, spent for good "
                f"(δ: a chance of at most {format_odds(delta)} beyond the ε guarantee; "
                f"counted as ρ = {format_significant(rho, 4)} under zCDP, by which the budget ledger adds it up "
                "with the dataset's other releases whenever that costs less than adding up their ε).")
    words = f"<b>Cost: ε = {epsilon:g}</b> of privacy budget, spent for good."
    if privacy.delta > 0:
        words += (f" Laplace noise gives pure ε-differential privacy, so the δ = {format_delta(privacy.delta)} of "
                  "step 2 is not used and no δ is spent.")
    return words


def confirmation_text(request: ReleaseRequest) -> str:
    """What will be published and what it costs, in plain words (rich text)."""
    settings, plan = request.settings, request.plan
    privacy = plan.privacy
    noise = ("exact discrete Gaussian noise" if plan.noise == Noise.GAUSSIAN else "exact discrete Laplace noise")
    branching = " × ".join(map(str, plan.shape.branching))
    if privacy.root_public:
        total = ("The total number of records N (all rows, missing values included) is published exactly "
                 "(it is public under this model).")
    else:
        total = "The total number of records is not published exactly; it is estimated from noisy counts."
    missing = f"Missing values: {missing_rule_text(privacy.missing_rule, privacy.impute)}."
    region = escape(region_words(request))
    return (
        f"<p>You are about to publish the <b>cumulative distribution (CDF)</b> of <b>{escape(settings.column)}</b> "
        f"from <b>{escape(settings.path.name)}</b>: {settings.bins:,} cumulative counts, one at each bin edge from "
        f"{format_number(settings.lower)} to {format_number(settings.upper)} "
        f"(values outside are counted in the first or last bin). {missing}</p>"
        f"<p>{cost_words(plan)} "
        f"Protection: {_lower_first(NEIGHBOURS_LABELS[privacy.neighbours])}; "
        f"{escape(_lower_first(privacy_unit_words(request.privacy_unit, privacy.records_per_person)))}. "
        f"{total}</p>"
        f"<p>Method: a tree of noisy counts (branching {branching}), {noise} from "
        f"the system's secure random source; estimator: {_lower_first(ESTIMATOR_LABELS[plan.estimator])}; "
        f"consistency: {_lower_first(CONSISTENCY_LABELS[request.consistency])}.</p>"
        + (f"<p>{region}</p>" if region else "")
    )


def region_words(request: ReleaseRequest) -> str:
    """What the confirmation says about the region the officer needs accurate: the CDF points the plan was
    made for (their bin edges, as the manifest records them, :func:`dpgui.report.cdf.bundle.focus_json`), or
    that the plan for the whole range is used although a region was chosen; "" without a region."""
    settings, plan = request.settings, request.plan
    chosen = request.focus is not None and request.focus.region is not Region.EVERYWHERE
    words = request.focus.words(settings.lower, settings.upper, settings.column) if chosen and request.focus else ""
    focus = focus_json(plan, settings.lower, settings.upper)
    if focus is not None:
        asked = f" ({words})" if words else ""
        return (f"Region you need accurate{asked}: the tree and the level budgets were chosen for the CDF points "
                f"(bin edges) from {format_number(focus['from'])} to {format_number(focus['to'])}; they are more "
                "accurate there and less elsewhere, for the same ε. The report and the manifest say so.")
    if chosen:
        return (f"Region you need accurate: {words}. A plan made for it would not lower its error enough, so the "
                "plan for the whole range is used.")
    return ""


def _spent_words(totals: Totals) -> str:
    """"ε = 0.5 of 3" and, when the cap has a δ or δ was spent, " and δ = 1e-9 of 1e-6"; under zCDP
    "ε = 0.77 of 3 at δ = 1e-6" (the releases together are (ε, δ)-DP at the cap's δ)."""
    words = f"ε = {spent_epsilon(totals):g} of {totals.cap_epsilon:g}"
    if totals.accounting is Accounting.ZCDP:
        words += f" at δ = {format_delta(totals.cap_delta)}"
    elif totals.cap_delta > 0 or totals.delta_spent > 0:
        words += f" and δ = {format_delta(totals.delta_spent)} of {format_delta(totals.cap_delta)}"
    return words


def budget_sentence(dataset: str, totals: Totals, after: Totals | None = None) -> str:
    """The dataset's budget before and after this release, for the confirmation (rich text).
    ``after``: the totals with this release's charge (:meth:`Ledger.totals_after`); None leaves the
    "after" part out. Under zCDP the ε of releases do not simply add up, so it is said how it was counted."""
    words = (f"<p><b>Budget of dataset '{escape(dataset)}':</b> {_spent_words(totals)} spent so far "
             f"({totals.releases} release{'' if totals.releases == 1 else 's'})")
    if after is not None:
        words += f"; after this release: {_spent_words(after)}"
        if after.accounting is Accounting.ZCDP:
            words += f" (counted with zCDP composition, which is less than the plain sum of ε, {after.epsilon_spent:g})"
    return words + ". The spend is recorded in the budget ledger before the noise is drawn.</p>"


@dataclass(frozen=True)
class Confirmation:
    """What the officer is asked to agree to before the spend: the request, the dataset's budget
    before it (None if the ledger cannot tell) and the ledgered datasets that look like this file."""

    request: ReleaseRequest
    totals: Totals | None
    similar: tuple[str, ...]
    after: Totals | None = None  # the totals with this release's charge (None if unknown)

    def warning(self) -> str:
        """The same-data warning as a plain sentence ("" if no ledgered dataset looks like this file)."""
        return sentence(same_data_warning(self.similar, self.request.dataset)) if self.similar else ""

    def rich_text(self) -> str:
        """The whole question: what is published and its cost, the budget, the warning."""
        words = confirmation_text(self.request)
        if self.totals is not None:
            words += budget_sentence(self.request.dataset, self.totals, self.after)
        if self.similar:
            words += f"<p><b>Warning:</b> {escape(self.warning())}</p>"
        return words


# ------------------------------------------------------------------------------------------ the release

@dataclass(frozen=True)
class ReleaseOutcome:
    """A finished release, with the confidential histogram kept only for the officer's own check."""

    release: Release
    histogram: ColumnHistogram  # CONFIDENTIAL: never exported
    request: ReleaseRequest
    info: ReleaseInfo  # public labels: dataset, column, ledger release id, time, missing policy
    # What the window keeps and shows of it, made on the release worker by with_display (None: made when recorded)
    shown: ShownRelease | None = None
    entry: ProjectRelease | None = None

    @property
    def settings(self) -> ColumnSettings:
        return self.request.settings

    @property
    def consistency(self) -> str:
        return self.request.consistency

    @property
    def released_at(self) -> datetime:
        return self.info.created_utc

    @property
    def release_id(self) -> str:
        return self.info.release_id


def run_release(request: ReleaseRequest, source: NoiseSource, progress: Progress, should_cancel: Callable[[], bool],
                release_id: str | None = None, password_prompt: PasswordPrompt | None = None) -> ReleaseOutcome:
    """Histogram of the column, the ledger spend, then one ε-DP release of its CDF. Time O(rows + K·h).

    ``source`` is called once, after the column is read and before the spend. The ledger
    (``$DPGUI_HOME``) is opened on the calling (worker) thread, as SQLite requires. ``release_id``:
    the ledger id to record, so that after a failure the caller can ask the ledger whether anything
    was spent (:func:`spent_on`). Raises :class:`~dpgui.errors.Cancelled` if cancelled before the spend,
    and the ledger's refusal (:meth:`~dpgui.workspace.flow.ReleaseFlow.check`) before the column is read.
    The counts come from :func:`~dpgui.data.source.open_source` (a file here; a database or Spark
    counts its own rows and sends only the K counts); ``password_prompt`` answers a database's
    request for its password (from the session's memory or a dialog; never stored).
    """
    settings = request.settings
    spec = settings.spec
    neighbours_for(spec, request.plan.privacy.neighbours)  # N of a query not stated public: refused before reading
    reading = (f"Reading '{settings.column}' from {settings.path.name}…" if spec.kind == SourceKind.FILE
               else f"Counting '{settings.column}' in {spec.display_name()}…")

    def open_data() -> AbstractContextManager[DataSource]:  # once the budget is checked
        progress(0.0, reading)
        return open_source(spec, password_prompt=password_prompt)

    def noise() -> RandomSource:  # the point of no return: the spend, then the noise
        progress(READ_SHARE, NOISE_MESSAGE)
        return source()

    with ReleaseFlow.open(request.dataset) as flow:  # refused (no cap, too little left, cap δ = 0) before reading
        done = flow.release(CDF, open_data, request.spend, noise, release_id=release_id,
                            progress=lambda fraction: progress(READ_SHARE * fraction, reading),
                            should_cancel=should_cancel)
    progress(1.0, "Released.")
    return with_display(ReleaseOutcome(done.release, done.counts, request, done.info))


def with_display(outcome: ReleaseOutcome) -> ReleaseOutcome:
    """``outcome`` with what :meth:`ReleaseController.record` keeps and the results step shows made
    ready: the release as the budget ledger confirms it (a SHA-256 of every released node), its
    project entry and its :func:`~dpgui.workspace.results.result_figures` (the quantile intervals,
    the CDF band). O(K·h) in all, about half a second at K = 2²⁰: for the release worker, so that
    the GUI thread only draws. Opens the ledger (``$DPGUI_HOME``) on the calling thread."""
    shown = _shown(outcome)
    figures = result_figures(shown.release, outcome.info.whole_numbers is not None)
    return replace(outcome, shown=replace(shown, figures=figures), entry=_entry(outcome))


def _shown(outcome: ReleaseOutcome) -> ShownRelease:
    return shown_release(outcome.release, outcome.info, outcome.histogram.counts, outcome.settings.path)


def _entry(outcome: ReleaseOutcome) -> ProjectRelease:
    return ProjectRelease.from_release(outcome.release, outcome.release_id, outcome.released_at,
                                       outcome.settings.column, outcome.info.missing, outcome.info.source,
                                       outcome.info.whole_numbers)


def spent_on(release_id: str) -> bool | None:
    """Does the ledger hold ``release_id``? None if the ledger cannot be read (then nobody may claim
    that nothing was spent)."""
    try:
        with Ledger() as ledger:
            return ledger.release(release_id) is not None
    except Exception:  # noqa: BLE001 — any failure means "unknown", never "nothing was spent"
        return None


def failure_budget_sentence(release_id: str) -> str:
    """What a failed release cost, as the ledger says: the only ground for "Nothing was spent"."""
    spent = spent_on(release_id)
    if spent is False:
        return " Nothing was spent."
    if spent:
        return (f" The budget of this release was recorded in the ledger (release {release_id}) and stays spent; "
                "nothing was published.")
    return (f" Check Tools → Budget Ledger for release {release_id}: the ledger could not be read to tell whether it "
            "was spent.")


def authenticate(release: Release, info: ReleaseInfo) -> Release:
    """``release`` as the budget ledger confirms it (secure flag from the ledger), or the
    DpguiError saying why it may not be signed (:func:`dpgui.report.cdf.publish.authenticate_release`)."""
    with Ledger() as ledger:
        return authenticate_release(ledger, release, info)


def shown_release(release: Release, info: ReleaseInfo, counts: np.ndarray | None = None,
                  data_path: Path | None = None, restored: bool = False) -> ShownRelease:
    """``release`` as the results step shows it: confirmed by the budget ledger (and marked secure
    as the ledger says), or with the reason it may not be signed (e.g. seeded test noise)."""
    try:
        return ShownRelease(authenticate(release, info), info, counts, data_path, restored, confirmed=True)
    except DpguiError as err:
        return ShownRelease(release, info, counts, data_path, restored, problem=err.problem)


def restored_shown_release(record: ProjectRelease, dataset: str) -> ShownRelease:
    """A release kept as public values (a project file's, or this session's list) as the results step shows
    it again: recomputed from its released levels, under ``dataset`` (the budget ledger's name that paid),
    and secure only if the budget ledger confirms it (:func:`shown_release`). No confidential counts."""
    release, info = statistic(StatisticKind.CDF).from_record(record, dataset)
    return shown_release(release, info, restored=True)


# ------------------------------------------------------------------------------------------ the controller

class ReleaseController:
    """The release flow on one :class:`Workspace`, in the order of the module doc. Each step opens
    the budget ledger (``$DPGUI_HOME``) itself; :meth:`run` may run on a worker thread, the others
    on the thread that owns the workspace. ``noise_source`` makes the noise of each release
    (the OS's secure source; tests may use a seeded one, which is never secure)."""

    def __init__(self, workspace: Workspace, noise_source: NoiseSource = SecureRandom,
                 password_prompt: PasswordPrompt | None = None) -> None:
        self.workspace = workspace
        self.noise_source = noise_source
        self.password_prompt = password_prompt

    def request(self) -> ReleaseRequest | NotReady:
        return release_request(self.workspace.state)

    def similar_datasets(self, dataset: str) -> tuple[str, ...]:
        """Other ledgered datasets released from a file with the open file's column names and row
        count, if nothing was released yet under ``dataset`` (docs/privacy-model.md, "Dataset identity").
        Empty while the rows are being counted. Raises DpguiError if the ledger cannot be used."""
        source = self.workspace.state.source
        if source is None or source.n_rows is None:
            return ()
        with ReleaseFlow.open(dataset) as flow:
            return flow.identity(source.table.names, source.n_rows).similar

    def check_budget(self, request: ReleaseRequest) -> BudgetCheck:
        """Before the confirmation: may the dataset's budget pay for ``request``? Reads only."""

        def no_cap() -> BudgetCheck:
            if self.workspace.state.source is None or self.workspace.state.source.n_rows is None:
                return ROWS_NOT_COUNTED
            return FirstCapNeeded(request.dataset, request.epsilon, self.similar_datasets(request.dataset),
                                  request.delta)

        return ledger_budget_check(request.dataset, request.plan, no_cap)

    def set_first_cap(self, request: ReleaseRequest, cap: float, reason: str = FIRST_CAP_REASON,
                      delta: float | None = None) -> BudgetCheck:
        """Set the dataset's first cap (ε ``cap`` and δ ``delta``, logged with ``reason``), then check
        ``request`` against it. ``delta`` None: the request's δ (so a Gaussian release's first cap
        carries its δ; a Laplace release's is the δ the user set, usually 0)."""
        return ledger_budget_check(request.dataset, request.plan,
                                   first_cap=(cap, request.delta if delta is None else delta, reason))

    def confirmation(self, request: ReleaseRequest) -> Confirmation:
        """What the confirmation states; the budget and the warning are left out if the ledger cannot tell."""
        after: Totals | None = None
        try:
            with Ledger() as ledger:
                totals: Totals | None = ledger.totals(request.dataset)
                after = ledger.totals_after(request.dataset, Charge(*request.plan.ledger_charge()))
        except DpguiError:
            totals = None
        try:
            similar = self.similar_datasets(request.dataset)
        except DpguiError:
            similar = ()
        return Confirmation(request, totals, similar, after)

    def run(self, request: ReleaseRequest, progress: Progress, should_cancel: Callable[[], bool],
            release_id: str | None = None) -> ReleaseOutcome:
        """:func:`run_release` with this controller's noise source (thread-safe: reads no workspace)."""
        return run_release(request, self.noise_source, progress, should_cancel, release_id, self.password_prompt)

    def record(self, outcome: ReleaseOutcome) -> FingerprintNotRecorded | None:
        """Keep a finished release: the open file's fingerprint in the ledger (to warn when the same
        data comes back under a new name), then the release in the workspace's ``releases`` (public
        values only) and as its ``shown`` release. Returns the problem if the fingerprint was not
        recorded (the release itself is)."""
        problem = self._record_fingerprint(outcome)
        shown = outcome.shown if outcome.shown is not None else _shown(outcome)  # made on the worker by run_release
        entry = outcome.entry if outcome.entry is not None else _entry(outcome)
        self.workspace.update(releases=self.workspace.state.releases + (entry,), shown=shown)
        return problem

    def _record_fingerprint(self, outcome: ReleaseOutcome) -> FingerprintNotRecorded | None:
        source = self.workspace.state.source
        if source is None or source.path != outcome.settings.path:
            return None
        try:
            with ReleaseFlow.open(outcome.info.dataset) as flow:
                flow.record_identity(source.table.names, outcome.histogram.n_rows)
        except DpguiError as err:
            return FingerprintNotRecorded(friendly(err) + " The release itself is recorded; only the warning about "
                                          "copies of this data under another name may be missing.")
        return None
