"""Projected errors of a hierarchy plan on public (or assumed) counts: closed form, Monte Carlo through the
release code, and the same by simulation on given counts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dpgui.core.hierarchy_budget import (
    clamped_discrete_gaussian_moments,
    clamped_discrete_laplace_moments,
)
from dpgui.core.noise import SeededRandom
from dpgui.core.quantiles import noise_margin
from dpgui.errors import DataError, ParameterError
from dpgui.vocabulary import HierarchyConsistency, Noise, PriorSource
from dpgui.core.hierarchy.tree import Hierarchy
from dpgui.core.hierarchy.plan import HierarchyPlan
from dpgui.core.hierarchy.release import _forest_release, _release_counts


NOISE_ONLY_METHOD = ("noise only: no counts are known, so the clamp at zero and the consistency step (which lower the "
                     "error of small counts) are not included")


@dataclass(frozen=True)
class LevelProjection:
    """Error of one level, summed over its nodes (counts²): bias², variance and MSE = bias² + variance;
    ``over_sq`` and ``under_sq`` split the MSE by the sign of the error (Σ E[e²; e > 0], Σ E[e²; e < 0]).

    The level's stated error is :attr:`margin95`, the product's one 95 % margin
    (:func:`dpgui.core.quantiles.noise_margin`) of :attr:`std_error`."""

    level: int
    nodes: int
    bias2: float
    variance: float
    mse: float
    over_sq: float
    under_sq: float

    @property
    def std_error(self) -> float:
        """The standard error the level's 95 % margin is computed from, records: the root-mean-square
        error of one released count of the level, taken on its worse side, √(2·max(over, under)/nodes).
        It is the RMSE when the errors are symmetric, and larger when the clamp at zero makes small
        counts err upwards only (then a plain RMSE would state a margin that holds less than 95 % of
        the time). For clamped counts (consistency none) it is exactly the noise's standard deviation."""
        return math.sqrt(2.0 * max(self.over_sq, self.under_sq, 0.0) / max(self.nodes, 1))

    @property
    def margin95(self) -> float:
        """The level's 95 % margin in records: ``noise_margin(std_error)`` (2.2·SE + 1; 0 for an exact
        level). A released count of the level lies within ± this of its true count in about 95 % of
        cases, counted over the level's categories and over releases (at the counts projected)."""
        return float(noise_margin(self.std_error))

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "nodes": self.nodes, "bias2": self.bias2, "variance": self.variance,
                "mse": self.mse, "std_error": self.std_error, "margin95": self.margin95}


@dataclass(frozen=True)
class HierarchyProjection:
    """Per-level errors of a plan on given counts, eq. (5)'s weighted MSE, and how they were obtained:
    "closed form" or "monte carlo (R trials)"."""

    plan: HierarchyPlan
    levels: tuple[LevelProjection, ...]
    weighted_mse: float
    method: str

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "weighted_mse": self.weighted_mse, "levels": [p.to_json() for p in self.levels]}


def counts_words(prior_source: str) -> str:
    """The counts a projection was made at, in words (window and CLI): "the prior's counts", "the data's
    counts (opted in)"; "" when there were none."""
    return "" if prior_source == PriorSource.NONE else PriorSource(prior_source).words


def counts_projected_on(prior_source: str) -> str:
    """What a plan's counts are, in the words of its notes ("consistency: …, simulated on the prior"): the
    prior, or the confidential counts when the officer opted in to them (``prior_source``)."""
    return "the confidential counts (opted in)" if prior_source == PriorSource.CONFIDENTIAL else "the prior"


def _check_prior(prior_levels: Sequence[npt.ArrayLike], level_sizes: Sequence[int]) -> tuple[np.ndarray, ...]:
    levels = tuple(np.asarray(c) for c in prior_levels)
    sizes = tuple(int(a.size) for a in levels)
    if sizes != tuple(level_sizes):
        raise DataError(f"the prior has {sizes} nodes per level, the hierarchy {tuple(level_sizes)}",
                        "give a prior over the same tree (root first)")
    out = []
    for a in levels:
        f = a.astype(np.float64)
        if np.any(~np.isfinite(f)) or np.any(f < 0) or np.any(f != np.floor(f)):
            raise DataError("prior counts must be whole numbers ≥ 0", "fix the prior's count column")
        out.append(f.astype(np.int64))
    return tuple(out)


#: The exact moments of max(0, n + Z) − n per noise (:mod:`dpgui.core.hierarchy_budget`).
_CLAMPED_MOMENTS = {Noise.LAPLACE: clamped_discrete_laplace_moments, Noise.GAUSSIAN: clamped_discrete_gaussian_moments}


def _closed_form_levels(plan: HierarchyPlan, prior: tuple[np.ndarray, ...]) -> tuple[LevelProjection, ...]:
    """Exact per-level bias², variance, MSE of the clamped noisy counts (consistency none). The error of
    max(0, n + Z) − n is Z when Z > 0, so the upward part Σ E[e²; e > 0] is half the noise variance per
    node (the noise is symmetric) and the downward part is the rest of the MSE."""
    out = []
    for ell, (scale, noise_variance) in enumerate(zip(plan.level_scales(), plan.level_noise_variances())):
        n = prior[ell]
        if scale is None:
            out.append(LevelProjection(ell, int(n.size), 0.0, 0.0, 0.0, 0.0, 0.0))
            continue
        bias, var = _CLAMPED_MOMENTS[plan.noise](n, float(scale))
        b2, v = float(np.sum(bias * bias)), float(np.sum(var))
        over = n.size * noise_variance / 2.0
        out.append(LevelProjection(ell, int(n.size), b2, v, b2 + v, over, max(b2 + v - over, 0.0)))
    return tuple(out)


def noise_only_projection(plan: HierarchyPlan) -> HierarchyProjection:
    """The projection of a plan when no counts are known: the noise alone on every node (the large-count
    limit, before the clamp at zero and the consistency step, which only shrink the error of small
    counts); per level n_ℓ · Var, half of it upwards. A multiplicative plan has no per-level noise:
    ParameterError (project it at counts)."""
    if plan.noise == Noise.MULTIPLICATIVE:
        raise ParameterError("the multiplicative mechanism's error depends on the counts",
                             "project it at counts (a prior, or an assumed number of records)")
    levels = tuple(LevelProjection(ell, int(n), 0.0, n * v, n * v, n * v / 2.0, n * v / 2.0)
                   for ell, (n, v) in enumerate(zip(plan.level_sizes, plan.level_noise_variances())))
    return HierarchyProjection(plan, levels, _weighted(plan, levels), NOISE_ONLY_METHOD)


def _weighted(plan: HierarchyPlan, levels: Sequence[LevelProjection]) -> float:
    return math.fsum(w * p.mse for w, p in zip(plan.weights, levels))


#: Monte Carlo projections of consistent releases: pooled node draws wanted per level (the 95 % margin's
#: standard error then comes within about 1 % of its value), and the limits on simulated copies of the tree.
PROJECTION_DRAWS = 20_000
_PROJECTION_MAX_COPIES = 400
_PROJECTION_NODE_BUDGET = 800_000  # GLS: node draws in all (the whole tree in every copy)


def _level_figures(level: int, errors: np.ndarray) -> LevelProjection:
    """Bias², variance, MSE and the signed parts of the MSE of one level from ``errors`` (copies × nodes:
    released − true). Bias² is the unbiased Σ (mean error² − s²/R) over the nodes (s² the copies'
    variance, ddof 1; the plain squared mean would add variance/R), at least 0; variance = MSE − bias²."""
    copies = errors.shape[0]
    err = errors.astype(np.float64)
    sq = err * err
    mean = err.mean(axis=0)
    m = float(sq.sum() / copies)
    sample_var = (sq.sum(axis=0) - copies * mean * mean) / (copies - 1)
    b2 = max(float(np.sum(mean * mean - sample_var / copies)), 0.0)
    over = float(sq[err > 0].sum() / copies)
    return LevelProjection(level, int(err.shape[1]), b2, max(m - b2, 0.0), m, over, max(m - over, 0.0))


def _consistent_levels(hierarchy: Hierarchy, plan: HierarchyPlan, counts: tuple[np.ndarray, ...], seed: int,
                       draws: int) -> tuple[tuple[LevelProjection, ...], str]:
    """Monte Carlo figures of a topdown or gls release of ``counts``: independent seeded copies of the
    release run as one forest (:func:`_forest_release`). Top-down level ℓ depends on levels 0..ℓ only,
    so each level is simulated on the tree cut at it with ⌈draws / n_ℓ⌉ copies (2..400): a small level
    gets as many draws as a large one. GLS needs the whole tree in each copy: ⌈draws / smallest level⌉
    copies within a node budget. Returns the levels and the method's words. O(copies · nodes)."""
    rng = SeededRandom(seed)
    sizes = plan.level_sizes
    if plan.consistency == HierarchyConsistency.TOPDOWN:
        cut: list[LevelProjection] = []
        copies_used: list[int] = []
        for ell in range(len(sizes)):
            copies = int(np.clip(math.ceil(draws / sizes[ell]), 2, _PROJECTION_MAX_COPIES))
            again = _forest_release(hierarchy.parents, plan, counts, copies, ell, rng)[ell]
            cut.append(_level_figures(ell, again - counts[ell][None, :]))
            copies_used.append(copies)
        low, high = min(copies_used), max(copies_used)
        runs = f"{low}" if low == high else f"{low}–{high}"
        return tuple(cut), f"monte carlo ({runs} simulated releases per level)"
    cap = max(2, _PROJECTION_NODE_BUDGET // sum(sizes))
    copies = int(np.clip(math.ceil(draws / min(sizes)), 2, min(cap, _PROJECTION_MAX_COPIES)))
    again_levels = _forest_release(hierarchy.parents, plan, counts, copies, len(sizes) - 1, rng)
    levels = tuple(_level_figures(ell, again - counts[ell][None, :]) for ell, again in enumerate(again_levels))
    return levels, f"monte carlo ({copies} simulated releases)"


def project_hierarchy(plan: HierarchyPlan, prior_levels: Sequence[npt.ArrayLike], *, trials: int = 200, seed: int = 0,
                      hierarchy: Hierarchy | None = None, draws: int = PROJECTION_DRAWS) -> HierarchyProjection:
    """Projected per-level bias², variance and MSE (summed over each level's nodes, counts²), and the
    95 % margin of each level (:attr:`LevelProjection.margin95`), of ``plan`` when the true counts are
    ``prior_levels`` (public, or assumed; root first).

    consistency "none" with laplace/gaussian noise: the exact clamped discrete moments (closed form).
    topdown and gls: Monte Carlo, seeded copies of the release of the counts through the release's
    consistency code (:func:`_consistent_levels`, about ``draws`` node draws per level); multiplicative:
    ``trials`` seeded releases (:func:`simulate_hierarchy`). Both need the tree (``hierarchy``)."""
    prior = _check_prior(prior_levels, plan.level_sizes)
    if plan.consistency == HierarchyConsistency.NONE and plan.noise != Noise.MULTIPLICATIVE:
        levels = _closed_form_levels(plan, prior)
        return HierarchyProjection(plan, levels, _weighted(plan, levels), "closed form")
    if hierarchy is None:
        raise ParameterError(f"projecting a {plan.consistency} release needs the tree", "pass hierarchy=")
    if plan.multiplicative is not None:
        return simulate_hierarchy(hierarchy, prior[-1], plan, trials=trials, seed=seed)
    if hierarchy.level_sizes != plan.level_sizes:
        raise ParameterError(f"the plan is for {plan.level_sizes} nodes per level, the tree has {hierarchy.level_sizes}",
                             "plan for this tree")
    truth = hierarchy.aggregate(prior[-1])  # a release's true counts are its leaves' sums
    levels, method = _consistent_levels(hierarchy, plan, truth, seed, draws)
    return HierarchyProjection(plan, levels, _weighted(plan, levels), method)


def simulate_hierarchy(hierarchy: Hierarchy, leaf_counts: npt.ArrayLike, plan: HierarchyPlan, *, trials: int,
                       seed: int) -> HierarchyProjection:
    """Empirical per-level bias², variance and MSE (summed over each level's nodes, counts²) of
    ``trials`` releases with ``SeededRandom(seed)`` (insecure: simulation only). MSE is the mean
    squared error; bias² is the unbiased estimate Σ (mean error² − s²/R) over the level's nodes (s² the
    trials' variance, ddof 1; the plain squared mean error would add variance/R), at least 0; variance
    = MSE − bias². O(trials · nodes)."""
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 2:
        raise ParameterError(f"trials must be a whole number ≥ 2, got {trials!r}", "give e.g. 200")
    if plan.level_sizes != hierarchy.level_sizes:
        raise ParameterError(f"the plan is for {plan.level_sizes} nodes per level, the tree has {hierarchy.level_sizes}",
                             "plan for this tree")
    true_levels = hierarchy.aggregate(leaf_counts)
    rng = SeededRandom(seed)
    sums = [np.zeros(a.size) for a in true_levels]
    squares = [np.zeros(a.size) for a in true_levels]
    upward = [0.0] * len(true_levels)
    for _ in range(int(trials)):
        counts = _release_counts(hierarchy.parents, plan, true_levels, rng)
        for ell, c in enumerate(counts):
            err = c.astype(np.float64) - true_levels[ell]
            sums[ell] += err
            squares[ell] += err * err
            upward[ell] += float(np.sum(err[err > 0] ** 2))
    levels = []
    for ell, (s, sq) in enumerate(zip(sums, squares)):
        mean = s / trials
        sample_var = (sq - trials * mean * mean) / (trials - 1)  # per node, ddof 1
        b2 = max(float(np.sum(mean * mean - sample_var / trials)), 0.0)
        m = float(np.sum(sq / trials))
        over = upward[ell] / trials
        levels.append(LevelProjection(ell, int(s.size), b2, max(m - b2, 0.0), m, over, max(m - over, 0.0)))
    return HierarchyProjection(plan, tuple(levels), _weighted(plan, levels), f"monte carlo ({int(trials)} trials)")


def projection_trials(sizes: Sequence[int]) -> int:
    """Monte Carlo trials of a projection (the automatic choices, the window's and the CLI's projections):
    enough pooled node-trials (≥ 20,000 over the tree; about 0.7 % standard error on a level's summed
    MSE for a small tree), at least 4 and at most 200, so a tree of 10⁵ leaves still plans in seconds."""
    return int(min(200, max(4, math.ceil(20_000 / sum(sizes)))))
