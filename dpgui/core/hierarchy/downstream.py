"""Ko, Ziani & Fioretto's downstream allocation: the error of a budget split among a node's children in
proportion to a function of their released shares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpgui.core.noise import SeededRandom
from dpgui.errors import ParameterError
from dpgui.core.hierarchy.tree import Hierarchy
from dpgui.core.hierarchy.plan import HierarchyPlan, _check_choice
from dpgui.core.hierarchy.release import _release_counts


DOWNSTREAM_WEIGHTS = ("log", "linear", "quadratic")


def _allocation_shares(counts: np.ndarray, weight: str) -> np.ndarray:
    """Paper 001 §5: shares (in %) of a budget split in proportion to W(P_i), P_i = c_i / Σ_j c_j, with
    W(p) = log(1 + p), p or p² (along the last axis). All-zero counts split equally."""
    c = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    total = c.sum(axis=-1, keepdims=True)
    p = np.where(total > 0, c / np.where(total > 0, total, 1.0), 1.0 / c.shape[-1])
    wv = np.log1p(p) if weight == "log" else (p if weight == "linear" else p * p)
    share: np.ndarray = 100.0 * wv / wv.sum(axis=-1, keepdims=True)
    return share


def downstream_allocation(prior_counts_of_children: npt.ArrayLike, released_trials: npt.ArrayLike,
                          weight: str = "linear") -> tuple[float, float]:
    """Paper 001 §5: a budget B split among the children of a node in proportion to W(P_i),
    P_i = N_i / Σ_j N_j, W = log(1 + p) ("log", favours small groups), p ("linear") or p² ("quadratic").
    ``prior_counts_of_children``: the true counts N_i; ``released_trials``: released counts of the same
    children in each of many releases (trials × children). Returns (bias², variance) of the
    misallocation in percent of B, summed over the children: bias² = Σ_i (E[s̃_i] − s_i)², variance =
    Σ_i Var(s̃_i) (ddof 0), s the shares in %. O(trials · children)."""
    _check_choice(weight, DOWNSTREAM_WEIGHTS, "weight function")
    truth = np.asarray(prior_counts_of_children, dtype=np.float64)
    rel = np.asarray(released_trials, dtype=np.float64)
    if rel.ndim != 2 or rel.shape[1] != truth.size or truth.size == 0:
        raise ParameterError(f"released trials of shape {rel.shape} for {truth.size} children",
                             "give an array of shape (trials, children)")
    true_share = _allocation_shares(truth, weight)
    s = _allocation_shares(rel, weight)
    return float(np.sum((s.mean(axis=0) - true_share) ** 2)), float(np.sum(s.var(axis=0)))


@dataclass(frozen=True)
class DownstreamFigure:
    """Misallocation of Ko, Ziani & Fioretto §5 for one weight function: bias² and variance in %² of the budget."""

    weight: str
    bias2: float
    variance: float


def downstream_projection(hierarchy: Hierarchy, leaf_counts: npt.ArrayLike, plan: HierarchyPlan, *, level: int,
                          node: int, trials: int = 500, seed: int = 0,
                          weights: Sequence[str] = DOWNSTREAM_WEIGHTS) -> tuple[DownstreamFigure, ...]:
    """Paper 001 §5 as a projection: the budget of node ``node`` of ``level`` (0..L−1) split among its
    children by W(P) from ``trials`` simulated releases of ``plan`` (SeededRandom(seed); counts from a
    public prior) — bias² and variance of the misallocation per weight function. O(trials · nodes)."""
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 2:
        raise ParameterError(f"trials must be a whole number ≥ 2, got {trials!r}", "give e.g. 500")
    start, end = hierarchy.child_ranges(level)
    if not 0 <= int(node) < start.size:
        raise ParameterError(f"node {node} does not exist on level {level}", f"give an index below {start.size}")
    lo, hi = int(start[node]), int(end[node])
    true_levels = hierarchy.aggregate(leaf_counts)
    rng = SeededRandom(seed)
    released = np.empty((int(trials), hi - lo))
    for r in range(int(trials)):
        released[r] = _release_counts(hierarchy.parents, plan, true_levels, rng, top=None)[level + 1][lo:hi]
    truth = true_levels[level + 1][lo:hi]
    return tuple(DownstreamFigure(w, *downstream_allocation(truth, released, w)) for w in weights)
