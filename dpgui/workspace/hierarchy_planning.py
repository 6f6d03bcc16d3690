"""The planning of counts over a hierarchy (no Qt): what the officer chose (:class:`HierarchyChoice`),
the tree read for it (:class:`LoadedHierarchy`), and :func:`plan_and_project` — the engine's plan
(:func:`dpgui.core.hierarchy.plan_hierarchy`) with those choices or the level budgets the officer typed
(:func:`with_budgets`, :func:`share_budget`), its stated errors per level (the 95 % margin,
:func:`dpgui.core.hierarchy_errors.plan_errors`), the consistency step with the lower projected error,
and with δ > 0 the other noises' projections for comparison; :func:`error_curves`, the margins of the
plan's levels against ε. :class:`HierarchyPlanRequest` is what the statistic seam plans from
(:meth:`dpgui.workspace.statistics.hierarchy.HierarchyStatistic.plan`); the window's mode
(:mod:`dpgui.workspace.hierarchy`) reads the tree and releases.

Cost: nothing is spent and no confidential value leaves: a plan depends on the public tree, the
officer's choices and the counts :attr:`LoadedHierarchy.prior_levels` (a public prior's, or the
data's by the officer's recorded opt-in); :attr:`LoadedHierarchy.leaf_counts` is never read here.
Time: the planner's and one projection per consistency step and noise compared (closed form, or
seconds of Monte Carlo on a 10⁵-leaf tree); the window runs it on a worker, any thread.
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
    Hierarchy, HierarchyPlan, HierarchyProjection, counts_projected_on, counts_words, plan_hierarchy,
)
from dpgui.core.hierarchy_errors import PlanErrors, margin_curves, plan_errors
from dpgui.core.plan import PrivacySpec, check_neighbours
from dpgui.core.projection_curves import epsilon_grid
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import Cancelled, DpguiError, ParameterError
from dpgui.vocabulary import AUTO, HIERARCHY_NOISES, Allocation, HierarchyConsistency, Neighbours, Noise, PriorSource

Progress = Callable[[float, str], None]
ShouldCancel = Callable[[], bool]

#: The open data of the mode: a file's (or Parquet folder's) path, or the SourceSpec of a database or
#: Spark source (counted where it lives; only the counts come back)
Data = Path | SourceSpec

DEFAULT_ALPHA = 0.1
FROM_DATA = PriorSource.CONFIDENTIAL
NO_COUNTS = PriorSource.NONE

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
    release counts again, :func:`dpgui.workspace.hierarchy.run_hierarchy_release`);
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
class HierarchyPlanRequest:
    """What a hierarchy plan is asked for: the tree read for the officer's levels (``loaded``: its public
    structure and public or opted-in ``prior_levels``; its confidential ``leaf_counts`` are not read) and
    the officer's ``choice`` (privacy, noise, allocation, consistency, typed budgets); ``trials``: Monte
    Carlo releases of a multiplicative plan's projection (None: the default)."""

    loaded: LoadedHierarchy
    choice: HierarchyChoice
    trials: int | None = None

    def at_budget(self, epsilon: float, delta: float) -> HierarchyPlanRequest:
        """The same request at (ε, δ): the allocation's level budgets (typed ones are in the unit of the
        request's own budget, so they are left out)."""
        return replace(self, choice=replace(self.choice, epsilon=epsilon, delta=delta, budgets=None))


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
                     should_cancel: ShouldCancel | None = None, trials: int | None = None,
                     compare: bool = True) -> PlannedHierarchy:
    """The plan for ``choice`` and its projected errors (:func:`dpgui.core.hierarchy_errors.plan_errors`:
    at the prior's counts, the opted-in data's, or the assumed records spread evenly; the 95 % margin of
    every level). With counts and consistency "auto" both consistency steps are projected and the plan
    takes the lower weighted MSE. With δ > 0 also the other noise's projection and Ghazi et al.'s (2023) α-mRMSE
    of the multiplicative mechanism and the Gaussian baseline side by side. Without any counts the
    projection is None, ``errors`` the noise's alone and ``note`` says why. ``trials``: Monte Carlo
    releases of a multiplicative plan's projection (default :func:`projection_trials`). ``compare``: False
    leaves out the other noises and the α-mRMSE comparison (the plan and its errors are the same)."""
    if progress is not None:
        progress(0.0, "Planning the level budgets…")
    plan = _plan(loaded, choice, choice.noise, choice.consistency)
    alpha = _alpha_comparison(loaded, choice) if compare else None
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
    if compare and choice.delta > 0:
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
