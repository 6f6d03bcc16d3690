"""Estimators of the cumulative counts from a noisy tree (post-processing: no privacy cost).

``levels[l]`` holds the released counts of level ``l`` (root first), or ``None`` for a level
that was not released. ``variances[l]`` is that level's noise variance: 0 for a public root,
``inf`` for an unreleased level.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpgui.core.tree import TreeShape


def covering_estimate(shape: TreeShape, levels: Sequence[np.ndarray | None]) -> np.ndarray:
    """Rameshwar, Tandon & Sharma eq. (5): Ĉ_j = sum of the released nodes covering the first j leaves, j = 1..K
    (j = 1..K+1 with the missing leaf: one per real leaf).

    An unreleased level is replaced by its children. O(K·h).
    """
    s = shape.leaves_per_node
    j = np.arange(1, shape.leaves + 1, dtype=np.int64)
    out = np.zeros(shape.leaves)
    above: int | None = None
    for level, values in enumerate(levels):
        if values is None:
            continue
        prefix_sums = np.concatenate(([0.0], np.cumsum(values, dtype=np.float64)))
        end = j // s[level]
        start = np.zeros_like(j) if above is None else (j // s[above]) * (s[above] // s[level])
        out += prefix_sums[end] - prefix_sums[start]
        above = level
    return out


def gls_leaves(shape: TreeShape, levels: Sequence[np.ndarray | None], variances: np.ndarray,
               padding_known: bool = True) -> np.ndarray:
    """Best linear unbiased estimate of all K̄ leaf counts given every released node and that the
    padding leaves (positions ≥ ``shape.leaves``) are exactly 0. ``padding_known=False`` gives the
    estimate of dpgui before it used the zeros (padding as unknowns), for releases made then.

    Two passes over the tree (Hay et al. 2010; Honaker 2015; per-level variances and an exact
    root; docs/engine.md, "The estimator"): bottom-up, combine each node's own count with the sum
    of its children's subtree estimates by inverse variance; top-down, split each parent's
    residual over its children in proportion to their subtree variances. Padding leaves enter as
    known zeros (estimate 0, variance 0): a node wholly inside the padding is known to be 0 and its
    own noisy count is ignored; a node with zero subtree variance takes no share of a residual.
    O(#nodes) time and memory. The result is consistent: every parent equals the sum of its
    children, and the padding leaves are exactly 0.
    """
    h = shape.height
    if levels[h] is None or not np.isfinite(variances[h]) or variances[h] <= 0:
        raise ValueError("the leaf level must be released with finite, positive noise variance")
    z: list[np.ndarray] = [np.empty(0)] * (h + 1)
    var: list[np.ndarray] = [np.empty(0)] * (h + 1)
    z[h] = np.asarray(levels[h], dtype=np.float64).copy()
    var[h] = np.full(z[h].size, float(variances[h]))
    if padding_known:
        z[h][shape.leaves:] = 0.0
        var[h][shape.leaves:] = 0.0
    for level in range(h - 1, -1, -1):
        b = shape.branching[level]
        child_sum = z[level + 1].reshape(-1, b).sum(axis=1)
        child_var = var[level + 1].reshape(-1, b).sum(axis=1)
        own = levels[level]
        v = float(variances[level])
        if own is None or np.isinf(v):
            z[level], var[level] = child_sum, child_var
        elif v == 0:
            z[level], var[level] = np.asarray(own, dtype=np.float64), np.zeros(child_sum.size)
        else:
            known = child_var == 0  # wholly padding: known to be 0, its own count is pure noise
            weight_own, weight_children = 1.0 / v, 1.0 / np.where(known, 1.0, child_var)
            total_weight = weight_own + weight_children
            combined = (weight_own * np.asarray(own, dtype=np.float64) + weight_children * child_sum) / total_weight
            z[level] = np.where(known, child_sum, combined)
            var[level] = np.where(known, 0.0, 1.0 / total_weight)
    estimate = z[0]
    for level in range(h):
        b = shape.branching[level]
        zc = z[level + 1].reshape(-1, b)
        vc = var[level + 1].reshape(-1, b)
        residual = estimate - zc.sum(axis=1)
        total = vc.sum(axis=1, keepdims=True)
        share = vc / np.where(total > 0, total, 1.0)
        estimate = (zc + share * residual[:, None]).ravel()
    return estimate


def gls_estimate(shape: TreeShape, levels: Sequence[np.ndarray | None], variances: np.ndarray,
                 padding_known: bool = True) -> np.ndarray:
    """GLS cumulative counts Ĉ_1..Ĉ_K, one per real leaf (cumulative sum of :func:`gls_leaves`)."""
    return np.cumsum(gls_leaves(shape, levels, variances, padding_known))[: shape.leaves]


def _covering_sums(shape: TreeShape, values: Sequence[np.ndarray], prefixes: np.ndarray) -> np.ndarray:
    """Σ of ``values`` over the covering of the first ``j`` leaves (every level present), per j."""
    s = shape.leaves_per_node
    prefixes = np.asarray(prefixes, dtype=np.int64)
    out = np.zeros(prefixes.size)
    for level, vals in enumerate(values):
        sums = np.concatenate(([0.0], np.cumsum(np.asarray(vals, dtype=np.float64))))
        end = prefixes // s[level]
        start = np.zeros_like(prefixes) if level == 0 else (prefixes // s[level - 1]) * shape.branching[level - 1]
        out += sums[end] - sums[start]
    return out


def paper_refined_estimate(shape: TreeShape, levels: Sequence[np.ndarray | None], variances: np.ndarray) -> np.ndarray:
    """Rameshwar, Tandon & Sharma Appendix B ("refined" tree mechanism, Lemma IV.4): Ĉ_1..Ĉ_K. Change model only.

    Step 1 (eq. 11, "estimation from below", Honaker 2015 §3.2): bottom-up, every non-root node
    gets M̃_v = α·M_v + (1−α)·Σ_children M̃_u with the variance-minimising α = (1/v)/(1/v + 1/V_S),
    V_S the variance of the children's sum; leaves keep their noisy count and the root is the
    public N. (A level that was not released takes its children's sum.)
    Step 2 (eqs. 12–14): Ĉ_j = (left covering of the first j leaves + N − right covering of the
    remaining K̄ − j leaves) / 2, both coverings summing step-1 values. Unbiased and linear, but
    not the BLUE (:func:`gls_estimate` is). For tests and comparison; O(#nodes + K·h).
    """
    h = shape.height
    if levels[0] is None or float(variances[0]) != 0.0:
        raise ValueError("the paper's refinement needs the public root N (change model)")
    if levels[h] is None or not np.isfinite(variances[h]) or variances[h] <= 0:
        raise ValueError("the leaf level must be released with finite, positive noise variance")
    total = float(np.asarray(levels[0], dtype=np.float64)[0])
    refined: list[np.ndarray] = [np.empty(0)] * (h + 1)
    var: list[np.ndarray] = [np.empty(0)] * (h + 1)
    refined[h] = np.asarray(levels[h], dtype=np.float64)
    var[h] = np.full(refined[h].size, float(variances[h]))
    for level in range(h - 1, 0, -1):
        b = shape.branching[level]
        child_sum = refined[level + 1].reshape(-1, b).sum(axis=1)
        child_var = var[level + 1].reshape(-1, b).sum(axis=1)
        own, v = levels[level], float(variances[level])
        if own is None or np.isinf(v):
            refined[level], var[level] = child_sum, child_var
        else:
            alpha = (1.0 / v) / (1.0 / v + 1.0 / child_var)
            refined[level] = alpha * np.asarray(own, dtype=np.float64) + (1.0 - alpha) * child_sum
            var[level] = 1.0 / (1.0 / v + 1.0 / child_var)
    refined[0] = np.array([total])
    j = np.arange(1, shape.leaves + 1, dtype=np.int64)
    left = _covering_sums(shape, refined, j)
    # right covering of leaves j..K̄−1 = left covering of the mirrored tree (same level-uniform shape)
    right = _covering_sums(shape, [r[::-1] for r in refined], shape.padded_bins - j)
    result: np.ndarray = (left + total - right) / 2.0
    return result
