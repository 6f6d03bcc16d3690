"""The "Counts over a hierarchy" mode without a window: what the officer chose (level columns, public
prior, privacy, plan choices), the hierarchy read from the file, the plan and its projection, and the
release (no Qt; the window's hierarchy pages bind to :class:`HierarchyWorkspace` as the CDF pages bind
to :class:`~dpgui.workspace.state.Workspace`).

The flow, each step a plain function the window runs on a worker:

1. :func:`level_choices` — the distinct values of every column (the level chooser shows them).
2. :func:`load_hierarchy` — the tree of the chosen level columns: from the public prior file when
   there is one (the data's paths must all be in it), else from the data itself (the officer declares
   the categories public). Bad levels (one only, more than four, a value under two parents, empty or
   missing values) raise the engine's one-line DataError/ParameterError; nothing is spent.
3. the plan, through the statistic seam (:meth:`dpgui.workspace.statistics.hierarchy.HierarchyStatistic.plan`,
   which runs :func:`dpgui.workspace.hierarchy_planning.plan_and_project`) — the engine's plan with the
   officer's choices, or with the level budgets the officer typed; its projected error per level, for
   each consistency step (the default is the one with the lower projected error); then
   :func:`~dpgui.workspace.hierarchy_planning.error_curves`, the margins against ε.
4. :func:`run_hierarchy_release` — the release flow every front end and every statistic uses
   (:meth:`dpgui.workspace.flow.ReleaseFlow.release`): the budget check, the data counted on the loaded
   tree, its fingerprint recorded in the ledger, the ledger spend and the release; the window asks for
   confirmation first.

Confidential values: :attr:`~dpgui.workspace.hierarchy_planning.LoadedHierarchy.leaf_counts` (the data's
counts as :func:`load_hierarchy` read them) stay in memory, never shown or exported; they give the
optimiser its counts only by the officer's explicit opt-in (``HierarchyChoice.counts_from_data``, recorded
in the plan). The release does not use them: it counts again through the flow (:func:`run_hierarchy_release`),
so that what is released is counted by the statistic's own count at the moment of the spend, in the
window as on the command line. The loaded tree's ``prior_levels`` are public (prior file) or confidential
by that opt-in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from dpgui.core.hierarchy import MAX_LEVELS, MIN_LEVELS, Hierarchy, HierarchyPlan, HierarchyRelease
from dpgui.core.noise import RandomSource
from dpgui.core.privacy_unit import PrivacyUnit
from dpgui.data.hierarchy import PathCounts, check_prior_is_not_the_data, level_value_counts, read_prior
from dpgui.data.source import DataSource, PasswordPrompt, neighbours_for, open_source
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import Cancelled, DataError, DpguiError, ParameterError
from dpgui.report.files import sha256_regular_file
from dpgui.report.hierarchy.bundle import HierarchyReleaseInfo
from dpgui.report.ledger import Ledger, Totals
from dpgui.report.hierarchy.project import ProjectHierarchyRelease
from dpgui.vocabulary import Charge, HierarchyConsistency, Noise, SourceKind
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.hierarchy_planning import (
    FROM_DATA, Data, HierarchyChoice, LoadedHierarchy, PlannedHierarchy, Progress, ShouldCancel,
)
from dpgui.workspace.statistics.hierarchy import HIERARCHY, HierarchySpend
from dpgui.workspace.release import QUERY_ROWS_PRIVATE, READ_SHARE, BudgetCheck, FirstCapNeeded, ledger_budget_check
from dpgui.workspace.state import Observable
from dpgui.workspace.statistic import check_privacy_unit

NoiseSource = Callable[[], RandomSource]

CATEGORIES_PUBLIC_LABEL = "&These categories are public (e.g. an official list)"
CATEGORIES_NOT_DECLARED = (
    "Without a prior file the release publishes the data's own categories, and a rare category can reveal that "
    "someone is in it: tick “These categories are public” in step 1 (Levels) if they are, or choose a public "
    "prior file. Nothing was spent.")
CATEGORIES_PUBLISHED = (
    "The list of categories is published: every category (every node of the tree) gets a released count, "
    "zeros included. Use only categories that are public (for example a published list of regions), or give "
    "a public prior file that lists them.")
COUNTS_FROM_DATA_WARNING = (
    "Choosing the budgets from the confidential counts uses the real counts to decide how much noise each level "
    "gets. This is not covered by the privacy guarantee: the choice itself can reveal a little about the data. "
    "It is recorded in the release's manifest. Leave it off unless your organisation accepts this.")


def data_spec(data: Data) -> SourceSpec:
    """``data`` as a :class:`~dpgui.data.source_spec.SourceSpec` (a path: the file spec)."""
    return data if isinstance(data, SourceSpec) else SourceSpec(SourceKind.FILE, str(data))


def data_name(data: Data) -> str:
    """A short name of ``data`` for the page and the messages: a file's name, a database's table or query."""
    if isinstance(data, Path):
        return data.name
    return Path(data.location).name if data.kind == SourceKind.FILE else data.display_name()


def data_file(data: Data | None) -> Path | None:
    """``data``'s file on this computer (None for a database or Spark source, or no data)."""
    if isinstance(data, Path):
        return data
    return Path(data.location) if data is not None and data.kind == SourceKind.FILE else None


def reading_words(data: Data) -> str:
    """What the progress bar says while ``data`` is counted: a file read here, a database or Spark counting."""
    return f"Reading {data_name(data)}…" if data_file(data) is not None else f"Counting in {data_name(data)}…"


def check_level_columns(levels: tuple[str, ...]) -> tuple[str, ...]:
    """The level columns, in order, checked: 2 to 4 distinct names."""
    if len(levels) < MIN_LEVELS:
        raise ParameterError(f"a hierarchy needs at least {MIN_LEVELS} level columns; {len(levels)} chosen",
                             "tick a second column that is nested in the first (e.g. region, then district)")
    if len(levels) > MAX_LEVELS:
        raise ParameterError(f"a hierarchy has at most {MAX_LEVELS} level columns; {len(levels)} chosen",
                             f"untick {len(levels) - MAX_LEVELS} of them")
    if len(set(levels)) != len(levels):
        raise ParameterError("a column is chosen twice as a level", "choose each level column once")
    return levels


# ------------------------------------------------------------------------------------------ state

@dataclass(frozen=True, eq=False)
class HierarchyOutcome:
    """A finished release: the release (public counts and intervals), its ledger id and labels
    (``info``, as the report side returns it), and the dataset that paid. ``restored``: read from a
    project file (:mod:`dpgui.workspace.hierarchy_project`), not made in this session; ``secure`` then
    says whether the budget ledger confirms it may be signed, and ``problem`` why not."""

    release: HierarchyRelease
    info: HierarchyReleaseInfo
    dataset: str
    release_id: str
    secure: bool
    restored: bool = False
    problem: str = ""


@dataclass(frozen=True)
class HierarchyState:
    """One snapshot of the mode. ``column_counts``: distinct values per column of the open file (None
    while counted); ``problem``: the one-line message the page shows (bad levels, bad prior...);
    ``releases``: the public record of every release of the workspace (what project files keep): of the open
    data only, as in the CDF mode — other data's releases of the session are in the window's
    :class:`~dpgui.workspace.session.SessionReleases`."""

    data_path: Data | None = None  # the open data: a file's path, or a database's or Spark's SourceSpec
    column_counts: tuple[tuple[str, int], ...] | None = None
    choice: HierarchyChoice = field(default_factory=HierarchyChoice)
    loaded: LoadedHierarchy | None = None
    planned: PlannedHierarchy | None = None
    problem: str = ""
    busy: str = ""
    outcome: HierarchyOutcome | None = None
    releases: tuple[ProjectHierarchyRelease, ...] = ()  # made or restored in this workspace, oldest first
    person_column: str | None = None  # the privacy unit's person-ID column (None: records per person declared)


class HierarchyWorkspace(Observable[HierarchyState]):
    """The current :class:`HierarchyState` and its listeners (like :class:`~dpgui.workspace.state.Workspace`:
    :meth:`update` replaces parts and announces the ones that changed; one thread only)."""

    def __init__(self) -> None:
        super().__init__(HierarchyState())

    def update_choice(self, **values: object) -> frozenset[str]:
        """Change some of the officer's choices; a change of levels, prior or opt-in drops the loaded tree
        and the plan, any other change the plan (both are made again from the new choice)."""
        choice = replace(self._state.choice, **values)  # type: ignore[arg-type]
        if set(values) <= {"categories_public"}:  # a declaration only: the tree and the plan stay
            return self.update(choice=choice)
        parts: dict[str, object] = {"choice": choice, "planned": None, "problem": ""}
        loaded = self._state.loaded
        if loaded is not None and not loaded.matches(self._state.data_path, choice):
            parts["loaded"] = None
        if "levels" in values and choice.levels != self._state.choice.levels:
            parts["choice"] = replace(choice, budgets=None, weights=None)
        return self.update(**parts)

    def open_file(self, path: Data | None, same_data: bool = False) -> frozenset[str]:
        """New data (a file, or a database's or Spark's SourceSpec): everything read from the previous one goes,
        and so do the choices made for it (levels, prior file, declarations, opt-in, estimate of N). With
        ``same_data`` (the same file read again, e.g. with the CSV dialect the officer stated) only what was
        read goes: the choices and the release shown stay."""
        if same_data:
            return self.update(data_path=path, column_counts=None, loaded=None, planned=None, problem="")
        return self.update(data_path=path, column_counts=None, loaded=None, planned=None, problem="", outcome=None,
                           choice=replace(self._state.choice, levels=(), budgets=None, weights=None,
                                          categories_public=False,  # a new file's categories: not declared yet
                                          prior_path=None,  # a prior lists the old data's categories
                                          counts_from_data=False,  # the opt-in was for the old data's counts
                                          records_estimate=None))  # an estimate of N was for the old data


# ------------------------------------------------------------------------------------------ the steps (workers)

def level_choices(path: Data, columns: tuple[str, ...], progress: Progress | None = None,
                  should_cancel: ShouldCancel | None = None, password_prompt: PasswordPrompt | None = None
                  ) -> tuple[tuple[str, int], ...]:
    """The number of distinct values of each column (public-structure sizes the chooser shows, capped).
    A file: one streamed pass, O(rows); a database or Spark: one query there
    (:meth:`~dpgui.data.source.DataSource.distinct_counts`; ``password_prompt`` answers a database)."""
    message = f"Counting the distinct values of each column of {data_name(path)}…"
    report = (lambda f: progress(f, message)) if progress else None
    if isinstance(path, Path):
        counts = level_value_counts(path, list(columns), progress=report, should_cancel=should_cancel)
    else:
        with open_source(path, password_prompt=password_prompt) as source:
            counts = source.distinct_counts(list(columns), progress=report, should_cancel=should_cancel)
    return tuple((name, int(counts[name])) for name in columns if name in counts)


def load_hierarchy(data_path: Data, choice: HierarchyChoice, progress: Progress | None = None,
                   should_cancel: ShouldCancel | None = None, password_prompt: PasswordPrompt | None = None
                   ) -> LoadedHierarchy:
    """Read the tree of ``choice.levels`` from the data and, if given, the public prior. The data's path
    counts come from :meth:`~dpgui.data.source.DataSource.path_counts`: a file streamed on this computer,
    a database or Spark source counted where it lives (one GROUP BY; ``password_prompt`` answers a
    database); the result records where the data was read and who counted it.

    With a prior the tree is the prior's (every data path must be in it: DataError with the first few
    missing paths otherwise) and its counts are the optimiser's; without one the tree is the data's own
    paths (the categories are declared public) and the optimiser gets the data's counts only with
    ``choice.counts_from_data``. A prior whose path counts are the data's (the data file itself, a copy,
    any re-export) is a DataError. O(rows + nodes)."""
    levels = check_level_columns(choice.levels)
    message = reading_words(data_path)
    with open_source(data_spec(data_path), password_prompt=password_prompt) as source:
        data = source.path_counts(list(levels), progress=(lambda f: progress(f, message))
                                  if progress is not None else None, should_cancel=should_cancel)
        record = source.public_record()
    if should_cancel is not None and should_cancel():
        raise Cancelled("reading the levels was cancelled", "choose the levels again")
    notes = list(data.notes)
    prior_sha256: str | None = None
    if choice.prior_path is not None:
        # hashed before and after it is read: the recorded hash is of the bytes the plan used
        prior_sha256 = sha256_regular_file(choice.prior_path, "prior file")
        prior: PathCounts = read_prior(choice.prior_path, list(levels))
        if sha256_regular_file(choice.prior_path, "prior file") != prior_sha256:
            raise DataError(f"the prior file '{choice.prior_path.name}' changed while it was read",
                            "choose the levels again when the file is complete")
        check_prior_is_not_the_data(prior, data, choice.prior_path.name)  # the data as its own "public" prior
        notes += [n for n in prior.notes if n not in notes]
        hierarchy = prior.hierarchy  # leaf i is prior.paths[i]
        prior_levels: tuple[np.ndarray, ...] | None = hierarchy.aggregate(prior.counts)
        leaf_counts = np.zeros(hierarchy.level_sizes[-1], dtype=np.int64)
        if data.paths:  # every data path must be in the prior's tree (DataError naming the first few)
            np.add.at(leaf_counts, hierarchy.leaf_index(data.paths), np.asarray(data.counts, dtype=np.int64))
    else:
        hierarchy = data.hierarchy  # leaf i is data.paths[i]; a value under two parents is a DataError
        leaf_counts = np.asarray(data.counts, dtype=np.int64).copy()
        prior_levels = hierarchy.aggregate(leaf_counts) if choice.counts_from_data else None
    return LoadedHierarchy(data_path, levels, choice.prior_path, choice.counts_from_data, hierarchy, leaf_counts,
                           int(data.rows), prior_levels, tuple(notes), prior_sha256, record)


# ------------------------------------------------------------------------------------------ the release

@dataclass(frozen=True, eq=False)
class HierarchyRequest:
    """What one release publishes: the loaded tree (with its confidential leaf counts), the plan, the
    dataset that pays, whether the officer declared the data's categories public (needed without a
    prior file: :func:`run_hierarchy_release` refuses otherwise, before anything is spent) and the privacy unit
    (None: records per person declared; checked against the plan when the request is made)."""

    loaded: LoadedHierarchy
    plan: HierarchyPlan
    dataset: str
    categories_public: bool = False
    privacy_unit: PrivacyUnit | None = None

    def __post_init__(self) -> None:
        check_privacy_unit(self.privacy_unit, self.plan.privacy)

    @property
    def epsilon(self) -> float:
        return self.plan.ledger_charge()[0]

    @property
    def delta(self) -> float:
        return self.plan.privacy.delta

    @property
    def spend(self) -> HierarchySpend:
        """What the release flow publishes (:class:`~dpgui.workspace.statistics.hierarchy.HierarchySpend`): the manifest's
        words on where the categories come from, the opt-in, the prior's name and its SHA-256 as read at load."""
        loaded, prior = self.loaded, self.loaded.prior_path
        return HierarchySpend(loaded.hierarchy, self.plan, prior is not None, loaded.prior_source == FROM_DATA,
                              None if prior is None else prior.name, loaded.prior_sha256, loaded.notes,
                              self.privacy_unit)


def hierarchy_request(state: HierarchyState, dataset: str) -> HierarchyRequest | str:
    """The release the state describes, or the sentence saying what to do first."""
    if state.data_path is None:
        return "Open a file first (File → Open)."
    if state.problem:
        return state.problem
    if state.loaded is None or not state.loaded.matches(state.data_path, state.choice):
        return "Choose 2 to 4 level columns in step 1 and wait until the hierarchy is read."
    if state.planned is None or state.busy:
        return "The plan is not ready yet: wait for step 2."
    if state.choice.prior_path is None and not state.choice.categories_public:
        return CATEGORIES_NOT_DECLARED
    if state.planned.plan.privacy.root_public and not data_spec(state.data_path).row_count_may_be_public:
        return QUERY_ROWS_PRIVATE.message
    if not dataset.strip():
        return "Give the dataset a name in the budget ledger (step 1)."
    plan = state.planned.plan
    unit = None if state.person_column is None else PrivacyUnit(state.person_column, plan.privacy.records_per_person)
    try:
        return HierarchyRequest(state.loaded, plan, dataset.strip(), state.choice.categories_public, unit)
    except DpguiError as err:  # a person-ID column under change: what to fix, nothing spent
        return err.problem


def check_hierarchy_budget(request: HierarchyRequest, similar: tuple[str, ...] = ()) -> BudgetCheck:
    """May the dataset's budget pay for ``request``? Reads only (the CDF's check,
    :func:`~dpgui.workspace.release.ledger_budget_check`)."""
    return ledger_budget_check(request.dataset, request.plan,
                               lambda: FirstCapNeeded(request.dataset, request.epsilon, similar, request.delta))


def set_first_cap(request: HierarchyRequest, cap: float, reason: str) -> BudgetCheck:
    """Set the dataset's first cap (ε ``cap``, the request's δ), then check ``request`` against it."""
    return ledger_budget_check(request.dataset, request.plan, first_cap=(cap, request.delta, reason))


def budget_totals(request: HierarchyRequest) -> tuple[Totals | None, Totals | None]:
    """The dataset's totals before and after this release (None, None if the ledger cannot tell)."""
    try:
        with Ledger() as ledger:
            return ledger.totals(request.dataset), ledger.totals_after(request.dataset, Charge(*request.plan.ledger_charge()))
    except DpguiError:
        return None, None


NOISE_MESSAGE = "Adding noise and making the counts consistent (cannot be cancelled now)…"


def run_hierarchy_release(request: HierarchyRequest, source: NoiseSource, progress: Progress,
                          should_cancel: ShouldCancel, release_id: str | None = None,
                          password_prompt: PasswordPrompt | None = None) -> HierarchyOutcome:
    """The release flow (:meth:`ReleaseFlow.release <dpgui.workspace.flow.ReleaseFlow.release>`) on a
    worker thread: the ledger's check, then the data counted again on the loaded tree (the counts of
    :func:`load_hierarchy` served the plan; what is released is counted by the statistic's own count, at
    the moment of the spend, like a CDF's column), then the spend recorded, then the noise (what the
    manifest says: :attr:`HierarchyRequest.spend`). The data's fingerprint (its column names and row count,
    salted; the local ledger only, never published) is recorded under the dataset once the data is counted,
    before the spend (:meth:`ReleaseFlow.record_identity <dpgui.workspace.flow.ReleaseFlow.record_identity>`,
    as the counts' release and the command line do: the window asked about a renamed dataset before the
    first cap). ``source`` is called once, just before the spend;
    ``password_prompt`` answers a database's request for its password. Raises the ledger's refusal
    before the data is read, Cancelled if cancelled before the spend; ParameterError (nothing spent) for a
    release without a prior file whose categories were not declared public. Time: O(rows) to count, then
    the engine's release, O(nodes)."""
    loaded = request.loaded
    spec = data_spec(loaded.data_path)
    neighbours_for(spec, request.plan.privacy.neighbours)  # N of a private query: refused
    if loaded.prior_path is None and not request.categories_public:
        raise ParameterError("the data's own categories would be published, and they were not declared public",
                             "tick “These categories are public” in step 1 if they are, or choose a public prior file")
    progress(0.0, "Checking the budget…")
    counting = reading_words(loaded.data_path)

    def noise() -> RandomSource:  # the point of no return: the spend, then the noise
        progress(READ_SHARE, NOISE_MESSAGE)
        return source()

    with ReleaseFlow.open(request.dataset) as flow:  # refused (no cap, too little left, cap δ = 0) before reading

        def counted(data: DataSource, leaf_counts: np.ndarray) -> None:  # every row is in one leaf
            flow.record_identity([c.name for c in data.columns()], int(leaf_counts.sum()))

        done = flow.release(HIERARCHY, lambda: open_source(spec, password_prompt=password_prompt), request.spend,
                            noise, release_id=release_id, should_cancel=should_cancel, counted=counted,
                            progress=lambda fraction: progress(READ_SHARE * fraction, counting))
    progress(1.0, "Released.")
    return HierarchyOutcome(done.release, done.info, request.dataset, done.info.release_id, done.info.secure)


# ------------------------------------------------------------------------------------------ the result table

@dataclass(frozen=True)
class NodeRow:
    """One node of the released tree as the result table shows it."""

    level: int
    index: int
    label: str
    count: int
    lower: int
    upper: int


def consistency_words(plan: HierarchyPlan) -> str:
    """What the released counts promise about sums, in plain words, by the plan: consistent (top-down,
    GLS) counts add up; clamped ("none") and multiplicative (Ghazi et al. 2023) counts need not."""
    if plan.noise == Noise.MULTIPLICATIVE:
        return "each count is the mechanism's own estimate: a parent need not equal the sum of its children"
    if plan.consistency == HierarchyConsistency.NONE:
        return "each count stands on its own: a parent need not equal the sum of its children"
    return "every parent equals the sum of its children"


def interval_words(release: HierarchyRelease) -> str:
    """What the 95 % intervals promise, in plain words, by ``release.interval_method``
    (:func:`dpgui.core.hierarchy.release_hierarchy`): at least 95 % for every category (clamped and
    multiplicative releases), or about 95 % on average over a level's categories (top-down/GLS: a
    bootstrap, not a per-category guarantee). A release without the method says it by its plan."""
    method = release.interval_method
    plan = release.plan
    average = ("on average" in method if method
               else plan.noise != Noise.MULTIPLICATIVE and plan.consistency in (HierarchyConsistency.TOPDOWN,
                                                                           HierarchyConsistency.GLS))
    if average:
        return ("about 95 % of a level's categories have their true count in this range "
                "(on average over the level, not for each category)")
    return "the true count is in this range with at least 95 % probability, for every category"


def node_row(release: HierarchyRelease, level: int, index: int) -> NodeRow:
    """Level ``level`` (0 = all records) node ``index``: its label, released count and 95 % interval."""
    label = "All records" if level == 0 else release.hierarchy.labels[level - 1][index]
    return NodeRow(level, index, label, int(release.counts[level][index]), int(release.lower[level][index]),
                   int(release.upper[level][index]))


def find_paths(hierarchy: Hierarchy, query: str, limit: int = 200) -> list[tuple[int, int]]:
    """The nodes (level, index) whose label or path ("A / B / C") contains ``query`` (case-insensitive),
    top levels first, at most ``limit``. O(nodes)."""
    needle = query.strip().lower()
    if not needle:
        return []
    found: list[tuple[int, int]] = []
    for level in range(1, hierarchy.n_levels + 1):
        for index, label in enumerate(hierarchy.labels[level - 1]):
            if needle in label.lower() or (" / " in needle and needle in " / ".join(hierarchy.path(level, index)).lower()):
                found.append((level, index))
                if len(found) >= limit:
                    return found
    return found
