"""A release plan's release: several statistics of one table under one budget, through the one release flow's
ledger — the whole charge checked before anything is read, every part counted, ONE spend in the budget
ledger for the whole plan, then each part's noise drawn by its own statistic, and one signed bundle.

Every part is a registered :class:`~dpgui.workspace.statistic.Statistic` planned at its share of the plan's
budget (:func:`dpgui.workspace.plan_split.split_plan`); :class:`PlanItem` adds how the part's spend is made
from its plan. :func:`release_plan` runs the steps in this order:

1. the ledger's check of the plan's whole charge (its parts' charges composed by the ledger's rule); a plan
   over what is left is refused before the data is opened, naming the first part that does not fit
   (:class:`PlanOverBudget`), a dataset without a cap with the ledger's :class:`~dpgui.report.ledger.NoCapSet`;
2. each part's own checks before a spend (its statistic's release run up to its spend and stopped there: the
   same checks as for a release of its own, e.g. a query's row count that would be published);
3. the data opened once, each part counted (CONFIDENTIAL counts, for the release only), the front end's
   ``counted`` (its warnings, the dataset identity), the last chance to cancel (nothing spent);
4. one spend (:func:`dpgui.report.plan.records.spend_plan`): the plan's charge, each part's own id and charge;
5. each part's noise, by its statistic's :meth:`Statistic.release` through its view of the plan's entry
   (:class:`~dpgui.report.plan.records.PlanPartRecords`), then the plan's one output record. A stop between
   parts (a crash, a kill, an error) leaves the plan spent once with no output recorded: nothing of it can be
   signed or published, and the error says that the budget was spent and under which plan id.

Signing (:func:`sign_plan`) confirms every part against the plan's ledger entry with its statistic's own
:meth:`Statistic.authenticate` and writes one bundle (:mod:`dpgui.report.plan.bundle`).

Threads: the thread of the flow's ledger (the window's release worker, the command's thread). Confidential
data: the counts go only into each part's release; nothing else read from the data leaves this module but
the data source's public record. Cost: O(rows) per part to count (each part one pass where the data lives),
then each part's release.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dpgui.core.noise import RandomSource
from dpgui.core.plan import PrivacySpec
from dpgui.core.plan_split import plan_charge
from dpgui.data.source import DataSource
from dpgui.errors import Cancelled, DpguiError
from dpgui.report.bundle import BundlePaths
from dpgui.report.ledger import BudgetExceeded, Ledger, new_release_id
from dpgui.report.plan.bundle import PlanBundlePart, PlanSummary, plan_paths, write_plan_bundle
from dpgui.report.plan.records import PlanEntryPart, PlanPartRecords, record_plan_output, spend_plan
from dpgui.report.publish import charge_text, write_and_record_bundle
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import Charge, ReleaseKind
from dpgui.workspace.ledger_words import refusal_problem, worded
from dpgui.workspace.plan_split import PlannedPart, PlanPart, PlanSplit
from dpgui.workspace.statistic import Progress, ShouldCancel

__all__ = ["PlanItem", "PlanOverBudget", "ReleasedPart", "ReleasedPlan", "check_plan_budget", "check_whole_budget",
           "plan_summary", "release_plan", "sign_plan"]


@dataclass(frozen=True, eq=False)
class PlanItem:
    """One statistic of a plan: the ``part`` the split plans (its statistic, plan request, weight, lock and
    name), ``spend_of`` (its plan at its share → the statistic's spend: the plan with the part's public
    choices, e.g. a CDF's column and bounds) and ``subject``, what it is of ("distance", "dep_delay for each
    carrier") for its title, and its ``settings`` as a plan file states them."""

    part: PlanPart
    spend_of: Callable[[Any], Any]
    subject: str
    #: the statistic's table as a plan file states it (public; its bundle records it, for a plan made like it)
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: the statistic's own optional manifest section of a release (a hierarchy's stated errors), which its
    #: manifest and its PDF pages state (None: the statistic has none)
    extra_of: Callable[[Any], dict[str, Any] | None] | None = None

    def extra(self, release: Any) -> dict[str, Any] | None:
        """The release's own manifest section (:attr:`extra_of`), None for none."""
        return None if self.extra_of is None else self.extra_of(release)

    @property
    def title(self) -> str:
        return self.part.name or self.part.statistic.release_title(self.subject)


@dataclass(frozen=True, eq=False)
class ReleasedPart:
    """One released part: its item, its share (``planned``), its own ``release_id``, the public release and
    info, and the CONFIDENTIAL ``counts`` kept only for the caller's own checks (never exported)."""

    item: PlanItem
    planned: PlannedPart
    release_id: str
    release: Any
    info: Any
    counts: Any  # CONFIDENTIAL: never exported


@dataclass(frozen=True, eq=False)
class ReleasedPlan:
    """A spent and released plan: its ledger id, dataset, split, parts in order, time, the data source's
    public record and whether every part's noise came from the secure source."""

    plan_id: str
    dataset: str
    split: PlanSplit
    parts: tuple[ReleasedPart, ...]
    created_utc: datetime
    source_record: dict[str, Any] | None
    secure: bool


class PlanOverBudget(DpguiError):
    """The plan does not fit what is left of the dataset's budget; nothing was read or recorded. ``refusal``:
    the ledger's refusal of the whole plan; ``part``: the index of the first part whose running total does
    not fit (the parts before it would)."""

    def __init__(self, refusal: BudgetExceeded, part: int, titles: Sequence[str]) -> None:
        fits = (f"what is left pays for part{'s' if part > 1 else ''} 1{f'–{part}' if part > 1 else ''} "
                f"({'; '.join(titles[:part])}) but not part {part + 1}" if part else "not even part 1")
        super().__init__(f"the release plan does not fit the budget left on dataset {refusal.totals.dataset_id!r}: "
                         f"{refusal_problem(refusal)}; {fits} ({titles[part]})",
                         "lower the plan's ε, remove a statistic, or raise the dataset's cap (with a reason) if "
                         "your organisation allows it")
        self.refusal = refusal
        self.part = part


def check_plan_budget(ledger: Ledger, dataset: str, split: PlanSplit, titles: Sequence[str],
                      epsilon: float, delta: float) -> None:
    """Refuse, before anything is read, a plan whose charge does not fit ``dataset``'s cap: the ledger's
    :class:`~dpgui.report.ledger.NoCapSet` as it is, a refusal as :class:`PlanOverBudget` naming the first
    part (in the plan's order) at which the running total of the parts' charges, composed as the ledger
    composes them, does not fit. Reads only."""
    try:
        ledger.check_spend(dataset, split.charge)
        return
    except BudgetExceeded as err:
        refusal = err
    charges = [planned.charge for planned in split.parts]
    for j in range(1, len(charges) + 1):
        try:
            ledger.check_spend(dataset, plan_charge(charges[:j], epsilon, delta)[0])
        except BudgetExceeded:
            raise PlanOverBudget(refusal, j - 1, titles) from None
    raise PlanOverBudget(refusal, len(charges) - 1, titles)  # the parts fit one by one, not composed as one


def check_whole_budget(ledger: Ledger, dataset: str, epsilon: float, delta: float, titles: Sequence[str],
                       locks: Sequence[float | None]) -> None:
    """Refuse, before the data is opened, a plan whose whole budget (ε, δ) does not fit ``dataset``'s cap: the
    plan's charge is at most (ε, δ) (its parts' charges composed as the ledger composes them), so what is
    refused here can never be released. :class:`PlanOverBudget` names the first part at which the running
    total does not fit at the equal split (the locked ε of a part kept, the rest shared equally: the split
    itself needs the statistics planned, and a hierarchy's node list read); the ledger's NoCapSet as it is.
    Reads only. O(parts)."""
    whole = _whole_charge(epsilon, delta)
    try:
        ledger.check_spend(dataset, whole)
        return
    except BudgetExceeded as err:
        refusal = err
    free = [lock is None for lock in locks]
    rest = max(epsilon - sum(lock for lock in locks if lock is not None), 0.0)
    shares = [rest / max(sum(free), 1) if lock is None else lock for lock in locks]
    for j in range(1, len(shares) + 1):
        if sum(shares[:j]) <= 0:  # parts with no share yet (the locks took the whole budget) cost nothing
            continue
        try:
            ledger.check_spend(dataset, _whole_charge(sum(shares[:j]), delta * j / len(shares)))
        except BudgetExceeded:
            raise PlanOverBudget(refusal, j - 1, titles) from None
    raise PlanOverBudget(refusal, len(shares) - 1, titles)


def _whole_charge(epsilon: float, delta: float) -> Charge:
    """The most a plan of (ε > 0, δ) can be charged: ε with its ρ = ε²/2 at δ = 0 (Laplace parts), else (ε, δ)
    with the ρ whose conversion is (ε, δ)."""
    if delta == 0:
        return Charge(epsilon, 0.0, epsilon ** 2 / 2)
    return Charge(epsilon, delta, PrivacySpec(epsilon, delta=delta).rho)


class _StopAtSpend(Exception):
    """Raised by :class:`_TrialRecords` where a part's release would spend: every check before it has passed."""


class _TrialRecords:
    """A ledger for a part's trial release (:func:`_checked_before_spend`): the spend stops the release."""

    def __init__(self, ledger: Ledger) -> None:
        self.path = ledger.path

    def spend(self, *args: Any, **kwargs: Any) -> Any:
        raise _StopAtSpend

    def record_output(self, *args: Any, **kwargs: Any) -> None:
        raise _StopAtSpend  # never reached: the spend stops first

    def release(self, release_id: str) -> None:
        return None

    def release_output(self, release_id: str) -> None:
        return None


def _checked_before_spend(item: PlanItem, ledger: Ledger, dataset: str, spend: Any, counts: Any,
                          source_record: dict[str, Any] | None) -> None:
    """Run ``item``'s own release up to its spend and stop there: the checks a release of its own makes
    before spending (a query's row count that would be published, a missing-value rule, …) raise here,
    before the plan's one spend. No noise is drawn (the release stops at its spend, before ``draw``)."""
    try:
        item.part.statistic.release(_TrialRecords(ledger), dataset, spend, counts, _NoNoise(),
                                    release_id=new_release_id(), source_record=source_record)
    except _StopAtSpend:
        return
    raise RuntimeError(f"the release of {item.title} did not stop at its spend")  # a bug: it must spend first


class _NoNoise:
    """A noise source that is never drawn from (a trial release stops at its spend, before its noise)."""

    secure = True

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("a trial release drew noise")


def release_plan(ledger: Ledger, dataset: str, items: Sequence[PlanItem], split: PlanSplit,
                 open_data: Callable[[], AbstractContextManager[DataSource]], noise: Callable[[], RandomSource], *,
                 epsilon: float, delta: float, plan_id: str | None = None, progress: Progress | None = None,
                 should_cancel: ShouldCancel | None = None,
                 counted: Callable[[DataSource, Sequence[Any]], None] | None = None) -> ReleasedPlan:
    """Release ``items`` (in order; ``split``: :func:`split_plan` of their parts at the plan's ``epsilon``,
    ``delta``) in the steps of the module docstring. ``plan_id``: the ledger id to record (a front end that
    made it can ask the ledger afterwards whether anything was spent); ``progress(fraction)`` over the parts'
    counting; ``counted(data, counts)``: the front end's checks after the counting (its warnings, the dataset
    identity), before the spend. Raises :class:`PlanOverBudget`, the ledger's refusals, a part's refusal
    before the spend, :class:`~dpgui.errors.Cancelled` before the spend; after it, a DpguiError saying that
    the plan's budget was spent and nothing was published."""
    if len(items) != len(split.parts) or any(i.part is not p.part for i, p in zip(items, split.parts)):
        raise ValueError("the split is not the one of these items")  # a bug
    titles = [item.title for item in items]
    check_plan_budget(ledger, dataset, split, titles, epsilon, delta)
    spends = [item.spend_of(planned.planned.plan) for item, planned in zip(items, split.parts)]
    for item, planned, spend in zip(items, split.parts, spends):
        statistic = item.part.statistic
        if statistic.charge(statistic.plan_of(spend)) != planned.charge:  # a bug: the spend is not the planned one
            raise ValueError(f"the spend of {item.title} is not charged what its share was planned at")
    with open_data() as data:
        counts = []
        for i, (item, spend) in enumerate(zip(items, spends)):
            def part_progress(fraction: float, i: int = i) -> None:
                if progress is not None:
                    progress((i + fraction) / len(items))
            counts.append(item.part.statistic.count(data, spend, part_progress, should_cancel))
        if counted is not None:
            counted(data, counts)
        source_record = data.public_record()
    for item, spend, part_counts in zip(items, spends, counts):
        _checked_before_spend(item, ledger, dataset, spend, part_counts, source_record)
    if should_cancel is not None and should_cancel():
        raise Cancelled("the release plan was cancelled before any noise was drawn", "nothing was spent")
    random = noise()
    plan_id = plan_id or new_release_id()
    entry_parts = [PlanEntryPart(new_release_id(), str(item.part.statistic.kind), item.title, planned.charge)
                   for item, planned in zip(items, split.parts)]
    created = datetime.now(timezone.utc)
    spend_plan(ledger, dataset, plan_id, split.charge, entry_parts, bool(random.secure), source_record)
    return _release_parts(ledger, dataset, plan_id, items, split, spends, counts, entry_parts, random, created,
                          source_record)


def _release_parts(ledger: Ledger, dataset: str, plan_id: str, items: Sequence[PlanItem], split: PlanSplit,
                   spends: Sequence[Any], counts: Sequence[Any], entry_parts: Sequence[PlanEntryPart],
                   random: RandomSource, created: datetime, source_record: dict[str, Any] | None) -> ReleasedPlan:
    """Past the plan's spend: each part's noise through its view of the plan's entry, then the plan's output."""
    records = [PlanPartRecords(ledger, plan_id, i) for i in range(len(items))]
    released = []
    try:
        for i, (item, spend, part_counts, entry) in enumerate(zip(items, spends, counts, entry_parts)):
            release, info = item.part.statistic.release(records[i], dataset, spend, part_counts, random,
                                                        release_id=entry.release_id, source_record=source_record)
            released.append(ReleasedPart(item, split.parts[i], entry.release_id, release, info, part_counts))
        record_plan_output(ledger, plan_id, records)
    except Exception as err:  # past the point of no return: never let it pass as "nothing spent"
        problem = err.problem if isinstance(err, DpguiError) else f"{type(err).__name__}: {err}"
        raise DpguiError(f"the release plan's budget ({charge_text(split.charge, with_rho=True)}) was spent (ledger release "
                         f"{plan_id}) but part {len(released) + 1} ({items[len(released)].title}) failed: {problem}",
                         "nothing of the plan was published or can be signed; please report this") from err
    return ReleasedPlan(plan_id, dataset, split, tuple(released), created, source_record,
                        all(bool(getattr(p.release, "secure", random.secure)) for p in released))


def plan_summary(plan: ReleasedPlan, epsilon: float, delta: float, privacy_unit: str,
                 unit: Mapping[str, Any] | None = None) -> PlanSummary:
    """The plan as a whole, as its bundle and PDF state it (public values only; ``unit``: the plan file's
    neighbour model, records per person and person column, recorded for a plan made like it). O(parts)."""
    split = plan.split
    return PlanSummary(plan.plan_id, plan.dataset, plan.created_utc, epsilon, delta, split.charge, str(split.chosen),
                       split.weighted_margin, split.equal.weighted_margin, privacy_unit, plan.source_record,
                       plan.secure, dict(unit or {}))


def sign_plan(ledger: Ledger, plan: ReleasedPlan, summary: PlanSummary, folder: str | Path, name: str,
              pdf: bytes, key: SecretKey) -> BundlePaths:
    """The plan's signed bundle (:mod:`dpgui.report.plan.bundle`): every part confirmed against the plan's
    ledger entry by its statistic's own :meth:`Statistic.authenticate` (its values and parameters the ones
    recorded at release time, its noise secure), the bundle written, and the plan's ledger entry pointed at
    it. Refuses before writing what the ledger does not confirm; never overwrites."""
    entry = ledger.release(plan.plan_id)
    if entry is None or entry.description.get("kind") != ReleaseKind.PLAN or entry.dataset_id != plan.dataset:
        raise DpguiError(f"release plan {plan.plan_id} is not in the budget ledger for dataset {plan.dataset!r}, so it "
                         "cannot be signed", "only a plan released with this ledger can be signed")
    parts = []
    key_id = key.public_key.key_id_hex
    for i, part in enumerate(plan.parts):
        statistic = part.item.part.statistic
        release, info = statistic.authenticate(PlanPartRecords(ledger, plan.plan_id, i), part.release, part.info)
        csv_bytes = statistic.csv_text(release).encode("utf-8")
        manifest = statistic.manifest(release, info, f"{name}.part{i + 1}", csv_bytes, pdf, key_id,
                                      part.item.extra(release))
        manifest["files"]["pdf"]["name"] = f"{name}.pdf"  # the plan's one PDF holds every part's pages
        parts.append(PlanBundlePart(part.item.title, str(statistic.kind), part.release_id, part.item.part.weight,
                                    part.planned.charge, part.planned.margin95, csv_bytes, manifest,
                                    statistic.manifest_schema, dict(part.item.settings)))
    _, more = plan_paths(folder, name, len(parts))
    return write_and_record_bundle(ledger, plan.plan_id, folder, name,
                                   lambda: write_plan_bundle(folder, name, summary, parts, pdf, key), more=more)


def worded_refusal(err: DpguiError) -> DpguiError:
    """A plan's refusal in words (:class:`PlanOverBudget` as it is, the ledger's through its words)."""
    return err if isinstance(err, PlanOverBudget) else worded(err)
