"""The seam of a statistic: what every kind of release answers (a CDF of a numeric column, counts over a
categorical hierarchy, …), so that the release flow, the verifier, the session and the ledger's words
treat every kind alike. One implementation per kind lives in its own module of
:mod:`dpgui.workspace.statistics` (which never imports another's), found through the one registry there
(:func:`dpgui.workspace.statistics.statistic`), keyed by :class:`~dpgui.vocabulary.StatisticKind`.

A statistic is a stateless object; its methods delegate to the kind's planning
(:mod:`dpgui.workspace.planning`, :mod:`dpgui.workspace.hierarchy_planning`), engine (:mod:`dpgui.core`),
report code (:mod:`dpgui.report.cdf`, :mod:`dpgui.report.hierarchy`) and the data sources
(:mod:`dpgui.data`). No Qt: the PDF is drawn above this layer, by the function the PDF layer keeps
for the statistic's kind (:func:`dpgui.pdf.sections.report_pdf`).

Planning (:meth:`Statistic.plan`, :meth:`Statistic.margin_at`) answers in the product's one stated error,
the 95 % margin in records (:mod:`dpgui.core.margins` says how each kind's holds): a published value lies
within ± the margin of its true value in about 95 of 100 releases; a plan's :attr:`Planned.margin95` is the
margin of its least precise published value, so the margins of different statistics compare in one unit.

The order of a release is the one of :func:`dpgui.report.publish.spend_then_release`: nothing is spent
before :meth:`Statistic.release`, which records the charge in the budget ledger before any noise exists.

Confidential data: only :meth:`Statistic.count` reads it, and its result (the confidential counts) goes
only into :meth:`Statistic.release`; every other method takes and returns public values (plans, released
noisy values, the officer's choices, the data source's public record). Threads: any one thread per call
(the window calls them on its worker thread, the command line on its own); nothing is shared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from dpgui.core.noise import RandomSource
from dpgui.core.plan import PrivacySpec
from dpgui.core.privacy_unit import PrivacyUnit
from dpgui.data.bounding import Bounding
from dpgui.data.source import DataSource
from dpgui.report.bundle import BundlePaths
from dpgui.report.ledger import Ledger
from dpgui.report.ledger.records import ReleaseRecords
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import Charge, StatisticKind

__all__ = [
    "Alternative", "CountsT", "DetailT", "InfoT", "PlanProgress", "PlanT", "Planned", "Progress", "ReleaseT",
    "ShouldCancel", "SpendT", "Statistic", "bounding_of", "check_privacy_unit",
]

#: What a release publishes besides its noisy values, all public: the plan and the kind's choices
#: (a CDF's column and bounds; a hierarchy's tree and where its node list comes from).
SpendT = TypeVar("SpendT", contravariant=True)
#: The kind's plan (:class:`~dpgui.core.plan.Plan`, :class:`~dpgui.core.hierarchy.HierarchyPlan`).
PlanT = TypeVar("PlanT")
#: The confidential counts read from the data (a CDF's histogram, a hierarchy's leaf counts).
CountsT = TypeVar("CountsT")
#: The released (noisy, public) values and the public facts about them (the kind's ``ReleaseInfo``).
ReleaseT = TypeVar("ReleaseT")
InfoT = TypeVar("InfoT")
#: The kind's own answer to a plan request, with what its pages show beyond :class:`Planned`'s figures
#: (:class:`~dpgui.workspace.planning.PlannedCdf`, :class:`~dpgui.workspace.hierarchy_planning.PlannedHierarchy`).
DetailT = TypeVar("DetailT")

Progress = Callable[[float], None]
#: Planning's progress: the fraction done and the words of the stage (the window's status line).
PlanProgress = Callable[[float, str], None]
ShouldCancel = Callable[[], bool]


@dataclass(frozen=True)
class Alternative(Generic[PlanT]):
    """A plan offered beside the one chosen, for comparison: ``what`` it is in words ("Gaussian noise",
    "the plan for the whole range"), the plan, and its 95 % margin (records, as :attr:`Planned.margin95`)."""

    what: str
    plan: PlanT
    margin95: float


@dataclass(frozen=True, eq=False)  # the detail may hold numpy arrays
class Planned(Generic[PlanT, DetailT]):
    """A statistic's answer to a plan request: the plan to release with, its projected error — the 95 %
    margin in records of its least precise published value (a CDF: at the worst CDF point; a hierarchy:
    at its worst level) — the alternatives the planner offers beside it (no extra planning is done for
    them), and the kind's own answer (``detail``) for its pages. Public values only."""

    plan: PlanT
    margin95: float
    detail: DetailT
    alternatives: tuple[Alternative[PlanT], ...] = ()


class Statistic(Protocol[SpendT, PlanT, CountsT, ReleaseT, InfoT]):
    """One kind of release, from its plan to its signed bundle (see the module docstring)."""

    @property
    def kind(self) -> StatisticKind:
        """The manifest's ``kind``, the ledger description's ``kind``, the registry's key."""
        ...

    @property
    def title(self) -> str:
        """The kind in words ("CDF of a numeric column")."""
        ...

    def release_title(self, subject: str) -> str:
        """One release of this kind in words, from what it is of (``subject``: the column, or the level
        columns joined by " → "): "CDF of distance", "Counts of state". O(1)."""
        ...

    @property
    def manifest_schema(self) -> Path:
        """The JSON Schema a manifest of this kind satisfies (checked before signing and when verifying)."""
        ...

    def plan(self, request: Any, progress: PlanProgress | None = None,
             should_cancel: ShouldCancel | None = None) -> Planned[PlanT, Any]:
        """The plan of the kind's own plan ``request`` (a CDF: :class:`~dpgui.workspace.planning.PlanRequest`;
        a hierarchy: :class:`~dpgui.workspace.hierarchy_planning.HierarchyPlanRequest`; every request offers
        ``at_budget(ε, δ)``, the same request at another budget, which a release plan's split uses), its 95 % margin
        and the alternatives offered, as the window, the command line and the self-test plan it. Nothing is
        spent and no confidential value is read: a plan depends on public settings (and a hierarchy's
        public or opted-in prior counts). Time: the kind's planner (milliseconds to seconds); for a worker
        thread; Cancelled when ``should_cancel`` says so where the kind can stop."""
        ...

    def margin_at(self, request: Any, epsilon: float, delta: float) -> float:
        """The 95 % margin in records (:attr:`Planned.margin95`) of the plan ``request`` gives at the budget
        (ε, δ) in place of its own — what a planner of several statistics under one budget compares. The
        level budgets are the planner's at (ε, δ) (typed or locked ones are in the request's own unit and
        are left out); the alternatives are not planned. A ParameterError where no plan exists at (ε, δ)
        (a Gaussian noise asked for at δ = 0). Cost: one plan and its margin, no data read, nothing spent:
        a CDF about the planner's time (milliseconds; about a second at K = 2²⁰), a hierarchy the planner
        and one projection per consistency step tried (closed form, or a few seconds of Monte Carlo on
        10⁵ leaves)."""
        ...

    def plan_of(self, spend: SpendT) -> PlanT:
        """The plan ``spend`` releases with. O(1)."""
        ...

    def plan_from_json(self, data: dict[str, Any]) -> PlanT:
        """The plan as the ledger, a manifest or a project file records it (``to_json()``'s form); a
        ParameterError for values no plan can have. O(levels)."""
        ...

    def from_record(self, record: Any, dataset: str) -> tuple[ReleaseT, InfoT]:
        """A release kept as public values (a project file's or the session's record of this kind,
        :class:`~dpgui.report.project_file.ProjectRelease`, :class:`~dpgui.report.hierarchy.project.ProjectHierarchyRelease`)
        as the release and its info again, under ``dataset`` (the ledger's name that paid), not yet
        confirmed by the ledger (:meth:`authenticate`). No confidential counts. O(values)."""
        ...

    def charge(self, plan: PlanT) -> Charge:
        """What the budget ledger records for one release with ``plan``: (ε, δ, ρ), never less than what
        the noise spends. O(levels)."""
        ...

    def count(self, source: DataSource, spend: SpendT, progress: Progress | None = None,
              should_cancel: ShouldCancel | None = None) -> CountsT:
        """The confidential counts ``spend`` releases, read from the open ``source`` (a file streamed here,
        a database or Spark counting where the data lives). CONFIDENTIAL result: for :meth:`release`
        only. O(rows); cancellable where the source is."""
        ...

    def release(self, ledger: ReleaseRecords, dataset: str, spend: SpendT, counts: CountsT, noise: RandomSource, *,
                release_id: str | None = None, source_record: dict[str, Any] | None = None) -> tuple[ReleaseT, InfoT]:
        """Record :meth:`charge` for ``dataset`` in ``ledger`` (the ledger's refusal before any noise),
        then draw the noise on ``counts`` and record the output (:meth:`digest`, :meth:`parameters`).
        ``source_record``: the source's public record. The budget stays spent whatever happens next."""
        ...

    def parameters(self, release: ReleaseT, info: InfoT) -> dict[str, Any]:
        """Everything the bundle states about the release besides its values: what the ledger records at
        release time and compares field by field before signing. Public. O(levels)."""
        ...

    def digest(self, release: ReleaseT) -> str:
        """The SHA-256 (hex) of the released values as the ledger records them. O(values)."""
        ...

    def csv_text(self, release: ReleaseT) -> str:
        """The released values as the bundle's CSV (public). O(values)."""
        ...

    def manifest(self, release: ReleaseT, info: InfoT, name: str, csv_bytes: bytes, pdf_bytes: bytes,
                 key_id: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The bundle's manifest (public values only) satisfying :attr:`manifest_schema`. ``extra``: the
        kind's own optional section (a hierarchy's stated errors, ``projection``), None for none. O(values)."""
        ...

    def authenticate(self, ledger: ReleaseRecords, release: ReleaseT, info: InfoT) -> tuple[ReleaseT, InfoT]:
        """The release and its info as the ledger confirms them (its ``secure`` flag the ledger's), or a
        DataError saying why it may not be signed (not recorded, edited, test noise). Reads only."""
        ...

    def sign(self, ledger: Ledger, folder: str | Path, name: str, release: ReleaseT, info: InfoT, pdf: bytes,
             key: SecretKey, extra: dict[str, Any] | None = None) -> BundlePaths:
        """The signed bundle (CSV, PDF, manifest, signature) of a ledger-confirmed release, its ledger
        entry pointing at it (``extra``: as in :meth:`manifest`). Writes four files; refuses before writing
        what the ledger does not confirm."""
        ...

    def bundle_name(self, release: ReleaseT, info: InfoT) -> str:
        """The signed bundle's default name (its files' stem): the dataset, what was released, the UTC time
        and the release id's first 8 characters, safe as a file name. Public values only."""
        ...

    def ledger_words(self, description: dict[str, Any]) -> str:
        """What a ledger entry's recorded ``description`` of this kind says was released, without the
        source ("CDF of column 'wage'")."""
        ...


def check_privacy_unit(unit: PrivacyUnit | None, privacy: PrivacySpec) -> None:
    """A spend's check of its optional privacy unit against its plan's privacy (:meth:`PrivacyUnit.check_privacy`:
    add/remove neighbours, records per person = L), when the spend is made: before anything is read or spent."""
    if unit is not None:
        if not isinstance(unit, PrivacyUnit):  # a bug
            raise TypeError(f"{type(unit).__name__} is not a PrivacyUnit")
        unit.check_privacy(privacy)


def bounding_of(unit: PrivacyUnit | None, categories: Mapping[str, Sequence[str]] | None = None) -> Bounding | None:
    """The bounding a statistic's :meth:`Statistic.count` passes to the counting primitive for ``unit``: a fresh
    secret salt for this count (:meth:`Bounding.drawn`), ``categories`` the public list of each categorical key
    counted; None without a unit (every row counted, L declared)."""
    if unit is None:
        return None
    return Bounding.drawn(unit.person_column, unit.records_per_person, categories)
