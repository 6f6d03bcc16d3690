"""The release of a hierarchy's counts: level noise, the clamp or the consistency step, and the 95 % intervals."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpgui.core.counting_trees import (
    multiplicative_intervals,
    release_multiplicative,
)
from dpgui.core.noise import RandomSource, SeededRandom
from dpgui.core.hierarchy_consistency import gls_consistent, topdown_consistent
from dpgui.errors import ParameterError
from dpgui.vocabulary import HierarchyConsistency
from dpgui.core.hierarchy.tree import Hierarchy
from dpgui.core.hierarchy.plan import HierarchyPlan


#: The coverage of the per-node intervals of a release.
INTERVAL_LEVEL = 0.95


@dataclass(frozen=True, eq=False)
class HierarchyRelease:
    """A released hierarchy: ``counts[ℓ]`` the released non-negative int64 counts of level ℓ (root
    first); ``lower``/``upper`` the per-node interval (``interval_method`` says what it covers)."""

    plan: HierarchyPlan
    hierarchy: Hierarchy
    counts: tuple[np.ndarray, ...]
    lower: tuple[np.ndarray, ...]
    upper: tuple[np.ndarray, ...]
    interval_method: str = ""


def _noise_levels(plan: HierarchyPlan, rng: RandomSource, top: int | None = None) -> list[np.ndarray | None]:
    """Independent exact noise for each noised level 0..top (all levels by default)."""
    scales = plan.level_scales()[: None if top is None else top + 1]
    noised = [ell for ell, s in enumerate(scales) if s is not None]
    sizes = [plan.level_sizes[ell] for ell in noised]
    draws = plan.mechanism.sample(rng, [s for s in scales if s is not None], sizes)
    out: list[np.ndarray | None] = [None] * len(scales)
    for ell, d in zip(noised, draws):
        out[ell] = d
    return out


def _release_counts(parents: Sequence[np.ndarray], plan: HierarchyPlan, true_levels: Sequence[np.ndarray],
                    rng: RandomSource, top: int | None = None) -> tuple[np.ndarray, ...]:
    """Released int64 counts of levels 0..top (default L) for true counts ``true_levels``: noise, then
    the clamp or the consistency step (top-down needs only levels 0..top, so a truncated tree is a
    valid release of its levels)."""
    if plan.multiplicative is not None:
        return tuple(release_multiplicative(parents, true_levels, plan.multiplicative, rng))
    depth = len(true_levels) - 1 if top is None else top
    noise = _noise_levels(plan, rng, depth)
    noisy = [true_levels[ell] + noise[ell] if noise[ell] is not None else np.asarray(true_levels[ell]).copy()
             for ell in range(depth + 1)]
    if plan.consistency == HierarchyConsistency.NONE:
        return tuple(np.maximum(v, 0).astype(np.int64) for v in noisy)
    root_known = int(true_levels[0][0]) if plan.privacy.root_public else None
    if plan.consistency == HierarchyConsistency.TOPDOWN:
        root = root_known if root_known is not None else max(0, int(noisy[0][0]))
        out = topdown_consistent(list(parents[:depth]), noisy, root)
    else:
        variances = list(plan.level_noise_variances()[: depth + 1])
        out = gls_consistent(list(parents[:depth]), noisy, variances, None if root_known is None else float(root_known))
    return tuple(np.asarray(a, dtype=np.int64) for a in out)


# Parametric bootstrap of the consistent releases' intervals: pooled |error| draws per level.
_BOOTSTRAP_DRAWS = 20_000  # pooled node draws wanted per level
_BOOTSTRAP_MIN_TRIALS = 2
_BOOTSTRAP_MAX_TRIALS = 400  # top-down: a small level is re-released on the tree cut at it (cheap)
_BOOTSTRAP_MAX_GLS_TRIALS = 400  # GLS: the whole tree in each copy
_BOOTSTRAP_NODE_BUDGET = 800_000  # node draws for a GLS bootstrap (≈ 8 copies of a 10⁵-leaf tree)


def _pooled_half_width(errors: list[np.ndarray]) -> int:
    """The ⌈(m+1)·95 %⌉-th smallest of the m pooled |errors| (the conformal rank: a new exchangeable
    draw is ≤ it with probability ≥ 95 %, where the plain 95 % quantile of few draws falls short)."""
    pooled = np.sort(np.abs(np.concatenate([e.ravel() for e in errors]))) if errors else np.zeros(0)
    if pooled.size == 0:
        return 0
    rank = min(pooled.size, math.ceil((pooled.size + 1) * INTERVAL_LEVEL))
    return int(pooled[rank - 1])


def _forest_release(parents: Sequence[np.ndarray], plan: HierarchyPlan, counts: tuple[np.ndarray, ...], copies: int,
                    top: int, rng: RandomSource) -> list[np.ndarray]:
    """``copies`` independent consistent re-releases of levels 0..top of the tree whose true counts are
    ``counts``, in one vectorised call: the copies hang under an extra super-root (a forest), copy r's
    node i of level ℓ is node r·n_ℓ + i, and each copy's root keeps its own value — exact for top-down
    (the copies' roots are non-negative integers summing to the super-root's total, so the integer
    projection returns them unchanged); for GLS the copies' roots are measured (add/remove: with the
    root's noise variance, the super-root unmeasured; change: with a variance of 10⁻⁶ counts², the
    super-root known exactly), which reproduces each copy's own GLS up to the super-root's rounding.
    Returns, per level 0..top, an array (copies × n_ℓ)."""
    sizes = plan.level_sizes
    forest = [np.zeros(copies, dtype=np.int64)]
    for ell in range(top):
        forest.append((np.arange(copies, dtype=np.int64)[:, None] * sizes[ell] + parents[ell][None, :]).ravel())
    scales = plan.level_scales()
    noisy: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]
    for ell in range(top + 1):
        base = np.tile(counts[ell], copies)
        s = scales[ell]
        if s is not None:
            draw = plan.mechanism.sample(rng, [s], [base.size])[0]
            base = base + draw
        noisy.append(base)
    root_public = plan.privacy.root_public
    if plan.consistency == HierarchyConsistency.TOPDOWN:
        roots = noisy[1] if root_public else np.maximum(noisy[1], 0)
        noisy[1] = roots
        out = topdown_consistent(forest, noisy, int(roots.sum()))
    else:
        variances = [math.inf, *plan.level_noise_variances()[: top + 1]]
        if root_public:
            variances[1] = 1e-6
        known = float(copies * int(counts[0][0])) if root_public else None
        out = gls_consistent(forest, noisy, variances, known)
    return [np.asarray(out[ell + 1], dtype=np.int64).reshape(copies, sizes[ell]) for ell in range(top + 1)]


def _bootstrap_half_widths(hierarchy: Hierarchy, plan: HierarchyPlan, counts: tuple[np.ndarray, ...]) -> list[int]:
    """Per-level half-widths q_ℓ of a consistent release's 95 % intervals (docstring of
    :func:`release_hierarchy`): the released counts are taken as the truth, the release is repeated
    with a seeded generator (post-processing of public values: no privacy cost), and q_ℓ is the
    conformal 95 % rank of |re-released − released| pooled over the level's nodes and the trials.
    The seed is a hash of the released counts: the intervals are a function of the release, with
    independent bootstrap draws across releases. Top-down level ℓ is re-released on the tree cut at ℓ
    (it depends on levels 0..ℓ only), GLS on the whole tree; the copies of a level run as one forest."""
    digest = hashlib.sha256(b"".join(np.ascontiguousarray(c, dtype=np.int64).tobytes() for c in counts)).digest()
    rng = SeededRandom(int.from_bytes(digest[:8], "little"))
    parents = hierarchy.parents
    sizes = plan.level_sizes
    widths = [0] * len(sizes)
    first = plan.privacy.first_noised_level()
    if plan.consistency == HierarchyConsistency.TOPDOWN:
        for ell in range(max(first, 1), len(sizes)):  # an add/remove root is the clamped noisy root: exact width
            copies = int(np.clip(math.ceil(_BOOTSTRAP_DRAWS / sizes[ell]), _BOOTSTRAP_MIN_TRIALS, _BOOTSTRAP_MAX_TRIALS))
            again = _forest_release(parents, plan, counts, copies, ell, rng)[ell]
            widths[ell] = _pooled_half_width([again - counts[ell][None, :]])
        return widths
    smallest = min(sizes[first:])
    cap = max(_BOOTSTRAP_MIN_TRIALS, _BOOTSTRAP_NODE_BUDGET // sum(sizes))
    copies = int(np.clip(math.ceil(_BOOTSTRAP_DRAWS / smallest), _BOOTSTRAP_MIN_TRIALS, min(cap, _BOOTSTRAP_MAX_GLS_TRIALS)))
    again_levels = _forest_release(parents, plan, counts, copies, len(sizes) - 1, rng)
    return [0 if ell < first else _pooled_half_width([again_levels[ell] - counts[ell][None, :]]) for ell in range(len(sizes))]


def release_hierarchy(hierarchy: Hierarchy, leaf_counts: npt.ArrayLike, plan: HierarchyPlan,
                      rng: RandomSource) -> HierarchyRelease:
    """Release every node's count under ``plan`` (noise from ``rng``: SecureRandom for a real release).

    Each noised level ℓ gets independent exact noise (discrete Laplace t_ℓ or discrete Gaussian σ_ℓ²);
    under change the root is N exactly. Then: ``none`` — max(0, noisy count) per node (Ko, Ziani & Fioretto
    eq. 1); ``topdown`` — program (8) with integrality from the root down (root: N, or max(0, noisy
    root) under add/remove); ``gls`` — the BLUE, then the same integer top-down step; multiplicative —
    Ghazi et al.'s Algorithms 1–2 (:func:`counting_trees.release_multiplicative`). Counts are
    non-negative int64; topdown/gls releases have every parent equal to the sum of its children.

    The 95 % interval [lower, upper] of each node (``interval_method`` says which):

    * ``none``: [max(0, c − q_ℓ), c + q_ℓ], q_ℓ the smallest integer with P(|Z_ℓ| ≤ q_ℓ) ≥ 95 % for the
      level's exact noise. It holds the true count with probability ≥ 95 % for *every* node and true
      count: if n + Z ≥ 0 it is the noisy count's interval; if the clamp acted, n < −Z ≤ q_ℓ and
      [0, q_ℓ] holds n.
    * ``topdown``/``gls``: [max(0, c − q_ℓ), c + q_ℓ] with q_ℓ from a parametric bootstrap: the
      released counts are taken as the truth and the release is repeated (seeded; post-processing of
      public values, no privacy cost), q_ℓ = the 95 % quantile of |error| pooled over level ℓ's nodes
      and the trials (≥ 20,000 pooled draws where the time allows, ≥ 2 trials; top-down levels are re-released on
      the tree cut at ℓ, which is exact since top-down level ℓ depends on levels 0..ℓ only). It
      covers the true count in ≈ 95 % of cases on average over a level's nodes, not for each node.
    * multiplicative: :func:`counting_trees.multiplicative_intervals` — on Ghazi et al.'s success event
      (probability ≥ 1 − η, η = 5 %) a count released as bucket ⌊M_i⌋ lies in [(1−β)τ_i, ⌊M_i⌋], one
      released as ⌊M_0⌋ in [0, ⌊M_0⌋]: ≥ 95 % for every node.

    Time O(nodes) vectorised (the bootstrap: O(trials · nodes), under 1 s for 10⁵ leaves).
    """
    if plan.level_sizes != hierarchy.level_sizes:
        raise ParameterError(f"the plan is for {plan.level_sizes} nodes per level, the tree has {hierarchy.level_sizes}",
                             "plan for this tree")
    true_levels = hierarchy.aggregate(leaf_counts)
    counts = _release_counts(hierarchy.parents, plan, true_levels, rng)
    lower: list[np.ndarray] = []
    upper: list[np.ndarray] = []
    if plan.multiplicative is not None:
        low, high = multiplicative_intervals(counts, plan.multiplicative)
        method = ("the success event of Ghazi et al. 2023 (Lemma 4.6): the bucket the count fell in, "
                  f"≥ {1 - plan.multiplicative.eta:.0%} per node")
        return HierarchyRelease(plan, hierarchy, counts, low, high, method)
    if plan.consistency == HierarchyConsistency.NONE:
        widths = [0 if s is None else plan.mechanism.half_width(s, 1.0 - INTERVAL_LEVEL) for s in plan.level_scales()]
        method = "exact noise quantile of each level around the clamped count: ≥ 95 % for every node"
    else:
        widths = _bootstrap_half_widths(hierarchy, plan, counts)
        if plan.consistency == HierarchyConsistency.TOPDOWN and not plan.privacy.root_public:
            scale0 = plan.level_scales()[0]
            assert scale0 is not None
            widths[0] = plan.mechanism.half_width(scale0, 1.0 - INTERVAL_LEVEL)  # the root is the clamped noisy root: exact
        method = ("parametric bootstrap around the consistent count (released counts as truth, |error| "
                  "pooled per level): ≈ 95 % on average over a level's nodes")
    for c, q in zip(counts, widths):
        lower.append(np.maximum(c - q, 0).astype(np.int64))
        upper.append((c + q).astype(np.int64))
    return HierarchyRelease(plan, hierarchy, counts, tuple(lower), tuple(upper), method)
