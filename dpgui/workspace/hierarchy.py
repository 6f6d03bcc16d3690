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
3. :func:`plan_and_project` — the engine's plan (:func:`dpgui.core.hierarchy.plan_hierarchy`) with the
   officer's choices, or with the level budgets the officer typed; its projected error per level, for
   each consistency step (the default is the one with the lower projected error).
4. :func:`run_hierarchy_release` — the release flow every front end and every statistic uses
   (:meth:`dpgui.workspace.flow.ReleaseFlow.release`): the budget check, the data counted on the loaded
   tree, the ledger spend and the release; the window asks for confirmation first.

Confidential values: :attr:`LoadedHierarchy.leaf_counts` (the data's counts as :func:`load_hierarchy`
read them) stay in memory, never shown or exported; they give the optimiser its counts only by the
officer's explicit opt-in (:attr:`HierarchyChoice.counts_from_data`, recorded in the plan). The release
does not use them: it counts again through the flow (:func:`run_hierarchy_release`), so that what is
released is counted by the statistic's own count at the moment of the spend, in the window as on the
command line.
:attr:`LoadedHierarchy.prior_levels` is public (prior file) or confidential by that opt-in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from dpgui.core.counting_trees_accuracy import AlphaMRMSEProjection, projected_alpha_mrmse
from dpgui.core.hierarchy import (
    MAX_LEVELS, MIN_LEVELS, Hierarchy, HierarchyPlan, HierarchyProjection, HierarchyRelease, counts_projected_on,
    counts_words, plan_hierarchy,
)
from dpgui.core.hierarchy_errors import PlanErrors, margin_curves, plan_errors
from dpgui.core.noise import RandomSource
from dpgui.core.plan import PrivacySpec, check_neighbours
from dpgui.core.projection_curves import epsilon_grid
from dpgui.data.hierarchy import PathCounts, check_prior_is_not_the_data, level_value_counts, read_prior
from dpgui.data.source import PasswordPrompt, neighbours_for, open_source
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import Cancelled, DataError, DpguiError, ParameterError
from dpgui.report.files import sha256_regular_file
from dpgui.report.hierarchy.bundle import HierarchyReleaseInfo
from dpgui.report.ledger import Ledger, Totals
from dpgui.report.hierarchy.project import ProjectHierarchyRelease
from dpgui.vocabulary import (
    AUTO, HIERARCHY_NOISES, Allocation, Charge, HierarchyConsistency, Neighbours, Noise, PriorSource, SourceKind,
)
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.statistics.hierarchy import HIERARCHY, HierarchySpend
from dpgui.workspace.release import QUERY_ROWS_PRIVATE, READ_SHARE, BudgetCheck, FirstCapNeeded, ledger_budget_check
from dpgui.workspace.state import Observable

Progress = Callable[[float, str], None]
ShouldCancel = Callable[[], bool]
NoiseSource = Callable[[], RandomSource]
#: The open data of the mode: a file's (or Parquet folder's) path, or the SourceSpec of a database or
#: Spark source (counted where it lives; only the counts come back)
Data = Path | SourceSpec

DEFAULT_ALPHA = 0.1
FROM_DATA = PriorSource.CONFIDENTIAL
NO_COUNTS = PriorSource.NONE

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
NOISE_LABELS = {
    "auto": "Automatic (lower error)",
    "laplace": "Laplace (pure ε)",
    "gaussian": "Gaussian (needs δ > 0)",
    "multiplicative": "Multiplicative (Ghazi et al. 2023; needs δ > 0)",
}
ALLOCATION_LABELS = {
    "uniform": "Equal budget on every level",
    "optimal": "Least error within ε",
    "target": "Least ε for a target error",
}
CONSISTENCY_LABELS = {
    "auto": "Automatic (lower error)",
    "topdown": "Top-down (children add up to their parent)",
    "gls": "Least squares on the tree, then top-down",
    "none": "None (each count on its own, may not add up)",
}


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

@dataclass(frozen=True)
class HierarchyChoice:
    """What the officer typed: level columns (top first), an optional public prior file, the opt-in to use
    the confidential counts for the budgets, privacy (ε, δ, neighbour model, records per person) and the
    plan's choices. ``budgets``: level budgets the officer typed (ε_ℓ, or ρ_ℓ for Gaussian noise, levels
    0..L), which replace the allocation's; None: the allocation decides. ``categories_public``: the officer's
    declaration that the data's own categories are public (e.g. an official list) — without a prior file
    the release publishes them, and DP does not cover the node list, so a release needs it."""

    levels: tuple[str, ...] = ()
    prior_path: Path | None = None
    counts_from_data: bool = False
    epsilon: float = 1.0
    delta: float = 0.0
    neighbours: str = "change"
    records_per_person: int = 1
    noise: str = "auto"
    allocation: str = "uniform"
    weights: tuple[float, ...] | None = None
    target_mse: float | None = None
    consistency: str = "auto"
    budgets: tuple[float, ...] | None = None
    alpha: float = DEFAULT_ALPHA  # Ghazi et al.'s (2023) multiplicative error α (used with δ > 0 only)
    categories_public: bool = False  # the officer declares the data's own categories public (needed without a prior)
    #: under add/remove without a prior: a published estimate of N the officer typed (never the data's count),
    #: at which the plan's errors are projected; under change N itself is public and used
    records_estimate: int | None = None

    def __post_init__(self) -> None:
        if self.noise not in (*HIERARCHY_NOISES, AUTO):
            raise ParameterError(f"unknown noise {self.noise!r}", f"use one of {', '.join((*HIERARCHY_NOISES, AUTO))}")
        if self.allocation not in tuple(Allocation) or self.allocation == Allocation.CUSTOM:  # typed budgets' record only
            chosen = [a for a in Allocation if a is not Allocation.CUSTOM]
            raise ParameterError(f"unknown allocation {self.allocation!r}",
                                 f"use one of {', '.join(chosen)} (and type the level budgets to set them by hand)")
        if not (isinstance(self.alpha, (int, float)) and 0 < self.alpha < 1):
            raise ParameterError(f"α = {self.alpha!r} is not between 0 and 1", "give α in (0, 1), e.g. 0.1 (10 %)")
        if self.consistency not in (*HierarchyConsistency, AUTO):
            raise ParameterError(f"unknown consistency step {self.consistency!r}",
                                 f"use one of auto, {', '.join(HierarchyConsistency)}")

    def assumed_records(self, loaded: LoadedHierarchy) -> int | None:
        """The records the plan's projection assumes without a prior file: N (the data's rows) under
        change, where N is public; the officer's typed estimate under add/remove (None until typed)."""
        if loaded.prior_path is not None:
            return None
        if self.neighbours == Neighbours.CHANGE:
            return loaded.rows if loaded.rows > 0 else None
        return self.records_estimate

    def privacy(self) -> PrivacySpec:
        """The privacy spec (raises ParameterError with the fix when ε, δ or L is bad)."""
        return PrivacySpec(self.epsilon, check_neighbours(self.neighbours), self.records_per_person, self.delta)

    @property
    def prior_source(self) -> str:
        """Where the optimiser's node counts come from (recorded in the plan and the manifest)."""
        if self.prior_path is not None:
            return PriorSource.FILE
        return FROM_DATA if self.counts_from_data else NO_COUNTS


@dataclass(frozen=True, eq=False)  # compared by identity: holds numpy arrays
class LoadedHierarchy:
    """The tree of the chosen levels read from the file. ``hierarchy`` is public (declared by the officer or
    from the prior); ``leaf_counts`` (int64, one per leaf) is CONFIDENTIAL, the counts read for the plan (the
    release counts again, :func:`run_hierarchy_release`);
    ``prior_levels`` (counts per level 0..L) is public (prior file) or confidential by opt-in, None when the
    plan may use no counts; ``notes``: what the reader wants the officer to know (numeric levels...);
    ``prior_sha256``: the SHA-256 of the prior file as it was read (None without a prior)."""

    data_path: Data  # the file's path, or a database's or Spark's SourceSpec
    levels: tuple[str, ...]
    prior_path: Path | None
    counts_from_data: bool
    hierarchy: Hierarchy
    leaf_counts: np.ndarray = field(repr=False)
    rows: int
    prior_levels: tuple[np.ndarray, ...] | None = field(repr=False)
    notes: tuple[str, ...] = ()
    prior_sha256: str | None = None  # of the prior's bytes as read at load (what the manifest records)
    #: where the data was read and who counted it (the manifest's ``source``; no secret in it)
    source_record: dict[str, Any] | None = None

    @property
    def prior_source(self) -> str:
        if self.prior_path is not None:
            return PriorSource.FILE
        return FROM_DATA if self.counts_from_data else NO_COUNTS

    def matches(self, data_path: Data | None, choice: HierarchyChoice) -> bool:
        """Was this read for ``data_path`` and ``choice``'s levels, prior and opt-in?"""
        return (data_path == self.data_path and choice.levels == self.levels and choice.prior_path == self.prior_path
                and choice.counts_from_data == self.counts_from_data)


@dataclass(frozen=True, eq=False)
class PlannedHierarchy:
    """The plan and its projection. ``projection``: at counts (a prior's, the opted-in data's, or the
    assumed records spread evenly), None when there are none; ``errors``: the stated errors of every level
    (:func:`dpgui.core.hierarchy_errors.plan_errors`; the noise alone without counts); ``projections``: the
    projection under each consistency step tried (the plan's own is ``projection``); ``alternatives``: the
    other noises' plans and projections for the side-by-side comparison (δ > 0); ``note``: why something
    is not shown (e.g. no counts)."""

    plan: HierarchyPlan
    projection: HierarchyProjection | None
    projections: dict[str, HierarchyProjection] = field(default_factory=dict)
    alternatives: dict[str, HierarchyProjection] = field(default_factory=dict)
    note: str = ""
    alpha: tuple[AlphaMRMSEProjection, AlphaMRMSEProjection] | None = None  # (gaussian, multiplicative), δ > 0
    errors: PlanErrors | None = None


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
    choice: HierarchyChoice = HierarchyChoice()
    loaded: LoadedHierarchy | None = None
    planned: PlannedHierarchy | None = None
    problem: str = ""
    busy: str = ""
    outcome: HierarchyOutcome | None = None
    releases: tuple[ProjectHierarchyRelease, ...] = ()  # made or restored in this workspace, oldest first


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


def _plan(loaded: LoadedHierarchy, choice: HierarchyChoice, noise: str, consistency: str) -> HierarchyPlan:
    """The engine's plan for ``choice`` (with ``noise`` and ``consistency``), and the officer's typed budgets.
    The tree is not passed to the engine: with consistency "auto" it would project top-down against GLS
    itself, and :func:`plan_and_project` does that once more on the final budgets (showing both, and
    cancellable), so the engine only leaves its placeholder choice for plan_and_project to replace."""
    privacy = choice.privacy()
    if choice.allocation in (Allocation.OPTIMAL, Allocation.TARGET) and loaded.prior_levels is None:
        raise ParameterError(f"the allocation '{ALLOCATION_LABELS[choice.allocation]}' needs node counts",
                             "give a public prior file in step 1, or tick “use the confidential counts to choose the "
                             "budgets”, or choose an equal budget on every level")
    plan = plan_hierarchy(loaded.hierarchy.level_sizes, privacy, noise=noise, allocation=choice.allocation,
                          weights=choice.weights,
                          target_mse=choice.target_mse if choice.allocation == Allocation.TARGET else None,
                          consistency=consistency, prior_levels=loaded.prior_levels, prior_source=loaded.prior_source,
                          alpha=choice.alpha if choice.delta > 0 else None, assumed_records=choice.assumed_records(loaded))
    if choice.budgets is not None:
        plan = with_budgets(plan, choice.budgets)
    return plan


TYPED_BUDGETS_NOTE = "level budgets: typed by the officer"


def with_budgets(plan: HierarchyPlan, budgets: tuple[float, ...]) -> HierarchyPlan:
    """``plan`` with the officer's level budgets (ε_ℓ for Laplace, ρ_ℓ for Gaussian noise, levels 0..L). They
    must add up to the plan's total (ε, or the ρ of (ε, δ)) — :func:`share_budget` makes them do so after one
    level is typed; a multiplicative plan has no level budgets and is returned unchanged. The plan then says
    what happened: allocation "custom" (set by hand), no target error, and the notes made for the engine's
    budgets re-stated (the noise choice, without its figures) or dropped (the consistency projection:
    :func:`plan_and_project` makes it again on these budgets)."""
    if plan.noise == Noise.MULTIPLICATIVE:
        return plan
    if len(budgets) != len(plan.level_sizes):
        raise ParameterError(f"{len(budgets)} level budgets for {len(plan.level_sizes)} levels",
                             "give one budget per level")
    notes: list[str] = []
    for note in plan.notes:
        if note.startswith("noise: ") and plan.allocation != Allocation.CUSTOM:  # its figures were for the engine's budgets
            notes.append(f"{note.split(',')[0]}, chosen on the {plan.allocation} allocation's budgets, before the "
                         "level budgets were set by hand")
        elif not (note.startswith("consistency: ") and "projected" in note):  # projected on the engine's budgets
            notes.append(note)
    if TYPED_BUDGETS_NOTE not in notes:
        notes.append(TYPED_BUDGETS_NOTE)
    return replace(plan, level_budgets=tuple(float(b) for b in budgets), allocation=Allocation.CUSTOM, target_mse=None,
                   notes=tuple(notes))


def share_budget(plan: HierarchyPlan, level: int, value: float) -> tuple[float, ...]:
    """The plan's level budgets with level ``level`` set to ``value`` and the other noised levels sharing the
    rest of the total in their current proportions (ParameterError if ``value`` is not between 0 and the
    total, or the level takes no budget)."""
    total = plan.ledger_charge()[0] if plan.noise == Noise.LAPLACE else plan.ledger_charge()[2]
    unit = plan.budget_name
    budgets = list(plan.level_budgets)
    first = plan.privacy.first_noised_level()
    if not budgets:
        raise ParameterError("the multiplicative mechanism (Ghazi et al. 2023) does not split its budget by level",
                             "change ε instead, or choose Laplace or Gaussian noise to set each level's budget")
    if level < first:
        raise ParameterError(f"level {level} takes no budget (the total is public and exact)",
                             "change the budget of another level")
    assert total is not None
    if not math.isfinite(value) or not 0 < value < total:
        raise ParameterError(f"the budget {unit} = {value:g} of level {level} is not between 0 and the total "
                             f"{unit} = {total:.4g}", f"type a number above 0 and below {total:.4g}")
    others = [j for j in range(first, len(budgets)) if j != level]
    rest = total - value
    current = math.fsum(budgets[j] for j in others)
    for j in others:
        budgets[j] = budgets[j] * rest / current if current > 0 else rest / len(others)
    budgets[level] = value
    if not others:
        budgets[level] = total
    return tuple(budgets)


#: What the projection's counts are, by the loaded tree's prior source (words of the manifest and the CLI)
NO_COUNTS_NOTE = ("Bias² and MSE are not projected: they depend on the counts (the clamp at zero). Type a published "
                  "estimate of N (the number of records), give a public prior file, or tick “use the confidential "
                  "counts to choose the budgets”, to see them and how useful small counts will be. The 95 % margin "
                  "shown is the noise's, before the clamp and the consistency step.")


def plan_and_project(loaded: LoadedHierarchy, choice: HierarchyChoice, progress: Progress | None = None,
                     should_cancel: ShouldCancel | None = None, trials: int | None = None) -> PlannedHierarchy:
    """The plan for ``choice`` and its projected errors (:func:`dpgui.core.hierarchy_errors.plan_errors`:
    at the prior's counts, the opted-in data's, or the assumed records spread evenly; the 95 % margin of
    every level). With counts and consistency "auto" both consistency steps are projected and the plan
    takes the lower weighted MSE. With δ > 0 also the other noise's projection and Ghazi et al.'s (2023) α-mRMSE
    of the multiplicative mechanism and the Gaussian baseline side by side. Without any counts the
    projection is None, ``errors`` the noise's alone and ``note`` says why. ``trials``: Monte Carlo
    releases of a multiplicative plan's projection (default :func:`projection_trials`)."""
    if progress is not None:
        progress(0.0, "Planning the level budgets…")
    plan = _plan(loaded, choice, choice.noise, choice.consistency)
    alpha = _alpha_comparison(loaded, choice)
    prior = loaded.prior_levels
    words = counts_words(loaded.prior_source)

    def errors_of(p: HierarchyPlan) -> PlanErrors:
        if should_cancel is not None and should_cancel():
            raise Cancelled("planning was cancelled", "change a setting to plan again")
        return plan_errors(p, loaded.hierarchy, prior, words, trials=trials)

    first = errors_of(plan)
    if first.counts is None:
        return PlannedHierarchy(plan, None, note=NO_COUNTS_NOTE, alpha=alpha, errors=first)
    # the multiplicative mechanism's counts stay as released (consistency would void its (α, η) guarantee)
    methods = (HierarchyConsistency.TOPDOWN, HierarchyConsistency.GLS) if (
        choice.consistency == AUTO and plan.noise is not Noise.MULTIPLICATIVE) else (
        plan.consistency,)
    errors = {m: first if m == plan.consistency else errors_of(replace(plan, consistency=m)) for m in methods}
    best = min(errors, key=lambda m: errors[m].projection.weighted_mse)
    plan = replace(plan, consistency=best)
    if len(errors) > 1:  # the note says the choice made here, on these budgets (not the engine's own)
        figures = ("figures on the confidential counts, not published" if loaded.prior_source == FROM_DATA
                   else ", ".join(f"{m} {e.projection.weighted_mse:.4g}" for m, e in errors.items()))
        where = (f"on {counts_projected_on(loaded.prior_source)}" if prior is not None
                 else f"at {plan.assumed_records:,} records spread evenly")
        notes = [n for n in plan.notes if not n.startswith("consistency: ")]
        plan = replace(plan, notes=(*notes, f"consistency: {best}, the lower projected weighted MSE (simulated "
                                            f"{where}): {figures}"))
    chosen = replace(errors[best], projection=replace(errors[best].projection, plan=plan))
    projections: dict[str, HierarchyProjection] = {m: e.projection for m, e in errors.items()}
    alternatives: dict[str, HierarchyProjection] = {plan.noise: chosen.projection}
    if choice.delta > 0:
        for noise in (Noise.LAPLACE, Noise.GAUSSIAN):
            if noise not in alternatives:
                try:
                    alternatives[noise] = errors_of(_plan(loaded, replace(choice, budgets=None), noise, best)).projection
                except ParameterError:
                    continue
    return PlannedHierarchy(plan, chosen.projection, projections, alternatives, alpha=alpha, errors=chosen)


#: ε points per factor of 10 of the window's curves of the margin against ε (each one a projection)
CURVE_POINTS_PER_DECADE = 5


def error_curves(planned: PlannedHierarchy, loaded: LoadedHierarchy, progress: Progress | None = None,
                 should_cancel: ShouldCancel | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % margin of each level of ``planned``'s plan against ε, from ε/10 to 10ε (at most 100), at the
    same counts as its stated errors (:func:`dpgui.core.hierarchy_errors.margin_curves`): ``(epsilons,
    margins[point, level])``, nan where a budget would be too small for the sampler. For a worker: a few
    projections, seconds on a 10⁵-leaf tree; Cancelled when asked between points."""
    errors = planned.errors
    if errors is None:
        raise ParameterError("the plan has no projected errors", "plan again")
    if progress is not None:
        progress(0.0, "Projecting the error against ε…")
    grid = epsilon_grid(planned.plan.privacy.epsilon, CURVE_POINTS_PER_DECADE)
    epsilons, margins = margin_curves(planned.plan, loaded.hierarchy, errors, grid.tolist(), should_cancel=should_cancel)
    if should_cancel is not None and should_cancel():
        raise Cancelled("the curves are no longer needed", "change a setting to plan again")
    return epsilons, margins


def _alpha_comparison(loaded: LoadedHierarchy, choice: HierarchyChoice
                      ) -> tuple[AlphaMRMSEProjection, AlphaMRMSEProjection] | None:
    """Ghazi et al.'s (2023) projected α-mRMSE of the Gaussian baseline and the multiplicative mechanism (δ > 0 only)."""
    if choice.delta <= 0:
        return None
    sizes, privacy = loaded.hierarchy.level_sizes, choice.privacy()
    try:
        return (projected_alpha_mrmse(sizes, privacy, choice.alpha, "gaussian", loaded.prior_levels),
                projected_alpha_mrmse(sizes, privacy, choice.alpha, "multiplicative", loaded.prior_levels))
    except DpguiError:
        return None


# ------------------------------------------------------------------------------------------ the release

@dataclass(frozen=True, eq=False)
class HierarchyRequest:
    """What one release publishes: the loaded tree (with its confidential leaf counts), the plan, the
    dataset that pays, and whether the officer declared the data's categories public (needed without a
    prior file: :func:`run_hierarchy_release` refuses otherwise, before anything is spent)."""

    loaded: LoadedHierarchy
    plan: HierarchyPlan
    dataset: str
    categories_public: bool = False

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
                              None if prior is None else prior.name, loaded.prior_sha256, loaded.notes)


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
    return HierarchyRequest(state.loaded, state.planned.plan, dataset.strip(), state.choice.categories_public)


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
    manifest says: :attr:`HierarchyRequest.spend`). ``source`` is called once, just before the spend;
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
        done = flow.release(HIERARCHY, lambda: open_source(spec, password_prompt=password_prompt), request.spend,
                            noise, release_id=release_id, should_cancel=should_cancel,
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
