"""What a hierarchy plan's errors will be worth, before anything is spent: the 95 % margin of each level,
how it compares with the counts, and how it moves with ε.

The one stated error of the product is the 95 % margin, ``noise_margin(SE)`` = 2.2·SE + 1 records
(:func:`dpgui.core.quantiles.noise_margin`; :func:`dpgui.core.planner.margin95` for a CDF plan). For a
hierarchy level the SE is that of the count actually released — clamped at zero, or made consistent —
at the counts projected (:attr:`dpgui.core.hierarchy.LevelProjection.std_error`), so the margin holds
for about 95 % of a level's released counts over releases (it is ≥ 95 % for every category when the
counts are only clamped).

The counts a plan is projected at are public or assumed, never the confidential data's (unless the
officer opted in, which is recorded): a public prior's counts, else :attr:`HierarchyPlan.assumed_records`
records spread evenly over the categories (:func:`assumed_levels`; N is public under change, under
add/remove the officer types a published estimate), else none (the noise alone). :func:`plan_errors` is
the one function the window, the CLI and the PDF call, so they state the same figures.

Qt-free; the Monte Carlo projections are seeded (the same plan gives the same figures everywhere).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from dpgui.core.counting_trees import multiplicative_params
from dpgui.core.hierarchy import (
    INTERVAL_LEVEL,
    PROJECTION_DRAWS,
    Hierarchy,
    HierarchyPlan,
    HierarchyProjection,
    HierarchyRelease,
    assumed_levels,
    noise_only_projection,
    project_hierarchy,
    projection_trials,
)
from dpgui.core.plan import budget_total, split_budget
from dpgui.errors import DpguiError
from dpgui.vocabulary import Noise

__all__ = [
    "MOSTLY_NOISE_SHARE",
    "NO_COUNTS",
    "CURVE_DRAWS",
    "LevelErrors",
    "PlanErrors",
    "assumed_levels",
    "plan_errors",
    "level_errors",
    "mostly_noise_warnings",
    "released_mostly_noise",
    "basis_words",
    "plan_at_epsilon",
    "margin_curves",
]

#: A level is "mostly noise" when more than this share of its categories are smaller than their 95 % margin.
MOSTLY_NOISE_SHARE = 0.5
#: The words of a projection made without counts (the noise alone).
NO_COUNTS = "no counts (the noise alone)"
#: Monte Carlo draws per level for the points of the error-against-ε curves (the plan's own point has
#: :data:`~dpgui.core.hierarchy.PROJECTION_DRAWS`).
CURVE_DRAWS = 4_000


@dataclass(frozen=True)
class LevelErrors:
    """One level's stated error and what it is worth. ``margin95``: the 95 % margin of a released count,
    records. With counts (a prior's or assumed; None otherwise): ``median_count``, the middle category's
    count; ``relative``: the margin as a share of the count, for the middle category (median over the
    level's categories of margin ÷ count; inf when that category is empty); ``mostly_noise``: the share
    of categories whose count is below the margin (published, they will be mostly noise)."""

    level: int
    categories: int
    margin95: float
    median_count: float | None = None
    relative: float | None = None
    mostly_noise: float | None = None

    @property
    def is_mostly_noise(self) -> bool:
        """More than half of the level's categories are smaller than the margin."""
        return self.mostly_noise is not None and self.mostly_noise > MOSTLY_NOISE_SHARE

    def to_json(self) -> dict[str, Any]:
        """JSON values: ``relative_margin`` is null when unknown or infinite (then ``median_count`` says
        which: null without counts, 0 for an empty middle category)."""
        relative = self.relative
        return {"level": self.level, "categories": self.categories, "margin95": self.margin95,
                "median_count": self.median_count,
                "relative_margin": None if relative is None or not math.isfinite(relative) else relative,
                "share_below_margin": self.mostly_noise}

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> LevelErrors:
        """A level of :func:`dpgui.report.hierarchy.bundle.errors_json` (``nodes`` for ``categories``)."""
        median, relative = row.get("median_count"), row.get("relative_margin")
        if median is not None and relative is None:
            relative = math.inf if float(row["margin95"]) > 0 else 0.0
        return cls(int(row["level"]), int(row.get("categories", row.get("nodes", 0))), float(row["margin95"]),
                   None if median is None else float(median), None if relative is None else float(relative),
                   None if row.get("share_below_margin") is None else float(row["share_below_margin"]))


def level_errors(projection: HierarchyProjection, counts: Sequence[npt.ArrayLike] | None) -> tuple[LevelErrors, ...]:
    """Per level: the margin of ``projection`` and, given the counts it was projected at, the median
    count, the median margin ÷ count and the share of categories whose count is below the margin.
    An exact level (the public root) has margin 0 and shares 0. O(nodes)."""
    out = []
    for ell, figures in enumerate(projection.levels):
        margin = figures.margin95
        if counts is None:
            out.append(LevelErrors(ell, figures.nodes, margin))
            continue
        c = np.asarray(counts[ell], dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(c > 0, margin / np.where(c > 0, c, 1.0), math.inf if margin > 0 else 0.0)
        out.append(LevelErrors(ell, figures.nodes, margin, float(np.median(c)), float(np.median(ratio)),
                               float(np.mean(c < margin))))
    return tuple(out)


def mostly_noise_warnings(levels: Sequence[LevelErrors], names: Sequence[str]) -> tuple[str, ...]:
    """One plain sentence per level where most categories are smaller than their 95 % margin (``names``:
    the level columns, top first)."""
    out = []
    for figures in levels:
        if not figures.is_mostly_noise or figures.level == 0:
            continue
        assert figures.mostly_noise is not None
        name = names[figures.level - 1] if figures.level - 1 < len(names) else f"level {figures.level}"
        out.append(f"Most categories of '{name}' ({100 * figures.mostly_noise:.0f} %) have fewer records than the 95 % "
                   f"margin of ± {figures.margin95:,.1f} records: their published counts will be mostly noise, and "
                   "many will be published as 0. Raise ε, give this level a larger share of the budget, or leave "
                   "this level out.")
    return tuple(out)


def basis_words(counts_words: str) -> str:
    """Where a projection's figures come from, to follow a figure: "at 5,000 records … spread evenly …", or
    for a projection without counts "for the noise alone (no counts are known)"."""
    return "for the noise alone (no counts are known)" if counts_words == NO_COUNTS else f"at {counts_words}"


def released_mostly_noise(release: HierarchyRelease, level: int) -> np.ndarray:
    """Per category of ``level`` of a release: True where its published 95 % interval reaches 0 — the count
    is no larger than its margin, so the data may hold no records there and the count is mostly noise.
    The window's chart and the PDF's table mark these. Public values only. O(nodes of the level)."""
    reaches: np.ndarray = np.asarray(release.lower[level]) == 0
    return reaches


@dataclass(frozen=True, eq=False)  # holds numpy arrays
class PlanErrors:
    """A plan's projected errors as stated to the officer: the projection, the counts it was made at
    (None: the noise alone), the words that name those counts, and each level's :class:`LevelErrors`."""

    projection: HierarchyProjection
    counts: tuple[np.ndarray, ...] | None
    counts_words: str
    levels: tuple[LevelErrors, ...]

    def warnings(self, names: Sequence[str]) -> tuple[str, ...]:
        return mostly_noise_warnings(self.levels, names)


def _counts_basis(plan: HierarchyPlan, hierarchy: Hierarchy, prior_levels: Sequence[npt.ArrayLike] | None,
                  prior_words: str) -> tuple[tuple[np.ndarray, ...] | None, str]:
    if prior_levels is not None:
        return tuple(np.asarray(a, dtype=np.int64) for a in prior_levels), prior_words
    if plan.assumed_records is not None:
        who = "N, public under change" if plan.privacy.root_public else "a published estimate of N"
        return (assumed_levels(hierarchy, plan.assumed_records),
                f"{plan.assumed_records:,} records ({who}) assumed spread evenly over the categories")
    if plan.noise is Noise.MULTIPLICATIVE:  # its error has no counts-free form: at zero counts
        return tuple(np.zeros(n, dtype=np.int64) for n in plan.level_sizes), "zero counts (no counts given)"
    return None, NO_COUNTS


def plan_errors(plan: HierarchyPlan, hierarchy: Hierarchy, prior_levels: Sequence[npt.ArrayLike] | None = None,
                prior_words: str = "the prior's counts", *, draws: int = PROJECTION_DRAWS,
                trials: int | None = None) -> PlanErrors:
    """The projected errors of ``plan`` that the window, ``dpgui hierarchy plan|release`` and the PDF state.

    At ``prior_levels`` when given (public counts, root first, named by ``prior_words``; the confidential
    counts only by the officer's recorded opt-in, and then never published), else at the plan's
    :attr:`~HierarchyPlan.assumed_records` spread evenly, else (no counts) the noise alone. The same
    arguments give the same figures (seeded Monte Carlo; ``trials``: releases simulated for a multiplicative
    plan, default :func:`~dpgui.core.hierarchy.projection_trials`). Cost: ``project_hierarchy``'s."""
    counts, words = _counts_basis(plan, hierarchy, prior_levels, prior_words)
    if counts is None:
        projection = noise_only_projection(plan)
    else:
        projection = project_hierarchy(plan, counts, trials=trials or projection_trials(plan.level_sizes), seed=0,
                                       hierarchy=hierarchy, draws=draws)
    return PlanErrors(projection, counts, words, level_errors(projection, counts))


def plan_at_epsilon(plan: HierarchyPlan, epsilon: float) -> HierarchyPlan:
    """``plan`` at another total ε (the same δ): level budgets in the same shares of ε (Laplace) or of
    ρ = zcdp_rho(ε, δ) (Gaussian); Ghazi et al.'s parameters made again at ε (multiplicative). Raises
    ParameterError where a budget is below what the noise sampler can use."""
    if epsilon == plan.privacy.epsilon:
        return plan
    privacy = plan.privacy.with_epsilon(epsilon)
    if plan.multiplicative is not None:
        params = multiplicative_params(plan.level_sizes, privacy, plan.multiplicative.alpha, 1.0 - INTERVAL_LEVEL)
        return replace(plan, privacy=privacy, multiplicative=params, target_mse=None)
    budgets = split_budget(budget_total(privacy, plan.noise), plan.level_budgets)
    return replace(plan, privacy=privacy, level_budgets=budgets, target_mse=None)


def margin_curves(plan: HierarchyPlan, hierarchy: Hierarchy, errors: PlanErrors, epsilons: Sequence[float], *,
                  draws: int = CURVE_DRAWS, should_cancel: Callable[[], bool] | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % margin of each level against ε: ``(epsilons, margins)`` with margins[i, ℓ] the margin of
    level ℓ of :func:`plan_at_epsilon` (plan, epsilons[i]), projected at the same counts as ``errors``
    (nan where the sampler cannot use a budget that small). At the plan's own ε the plan's own figures
    (``errors``), elsewhere ``draws`` Monte Carlo draws per level. ``should_cancel`` is polled between
    points (returning early with the points done, the rest nan). O(len(epsilons) · projection)."""
    grid = np.asarray(sorted({float(e) for e in epsilons}), dtype=np.float64)
    margins = np.full((grid.size, len(plan.level_sizes)), np.nan)
    for i, eps in enumerate(grid.tolist()):
        if should_cancel is not None and should_cancel():
            break
        if eps == plan.privacy.epsilon:
            margins[i] = [f.margin95 for f in errors.levels]
            continue
        try:
            scaled = plan_at_epsilon(plan, eps)
            if errors.counts is None:
                projection = noise_only_projection(scaled)
            else:
                projection = project_hierarchy(scaled, errors.counts, trials=projection_trials(plan.level_sizes),
                                               seed=0, hierarchy=hierarchy, draws=draws)
        except DpguiError:
            continue
        margins[i] = [f.margin95 for f in projection.levels]
    return grid, margins
