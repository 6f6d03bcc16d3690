"""Exact error projections of a plan, before any budget is spent (no Monte Carlo).

Both estimators are unbiased and linear in the node noise, so the expected squared error of a
cumulative count ``Ĉ_j`` is its variance, computed exactly from the per-level noise variances:

* covering sum (Rameshwar, Tandon & Sharma eq. 5): ``Var Ĉ_j = Σ_l d_l(j)·v_l`` with ``d_l(j)`` the covering digits.
* GLS (BLUE over the whole tree): with precisions ``w_l = 1/v_l`` and ``s_l`` leaves per level-l
  node, the information matrix ``Σ_l w_l B_l`` is diagonal in the tree's Haar basis: the space of
  vectors on an internal level-m node, constant on its children and summing to 0, has eigenvalue
  ``λ_m = Σ_{l>m} w_l s_l``; the constant vector has ``λ_c = Σ_l w_l s_l`` (∞ when the root is
  public). So for any query q, ``Var qᵀx̂ = Σ_v ‖P_v q‖²/λ_v + (qᵀ1)²/(K̄ λ_c)``; for a prefix only
  the ≤ h boundary nodes contribute (docs/engine.md, "Exact projections"). The padding leaves
  are known zeros: on a padded tree the variance drops by ``E(j)ᵀ Q E(j)`` (h functions E of the
  prefix, an h × h matrix Q of the level variances; see "known zeros" below).

Under the change model the last real leaf is the count of missing values (docs/privacy-model.md
"Missing values"), so ``Ĉ_{K+1} = N`` is public and has variance 0; prefixes run over the tree's
real leaves (``shape.leaves``). Units: counts² (divide by N² for
the CDF). Per-prefix arrays cost O(K·h²), their maximum alone O(K̄ + h³); the closed-form totals cost O(h³).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterator, Sequence

import numpy as np

from dpgui.core.plan import Plan
from dpgui.core.tree import TreeShape
from dpgui.vocabulary import Estimator


@dataclass(frozen=True)
class Projection:
    """Exact expected squared errors of the released cumulative counts (before consistency)."""

    total_sq_error: float  # Σ_j E(Ĉ_j − C_j)², counts²
    max_variance: float  # max_j E(Ĉ_j − C_j)², counts²
    mean_sq_error: float  # total / K

    def to_json(self, n: int | None = None) -> dict[str, Any]:
        """The squared errors and the worst standard error (the stated 95 % margins are
        :func:`dpgui.core.margins.cdf_margins`, which the commands add beside these)."""
        out: dict[str, Any] = {
            "total_sq_error": self.total_sq_error,
            "max_variance": self.max_variance,
            "max_std_error": float(np.sqrt(self.max_variance)),
        }
        if n:
            out["cdf_total_sq_error"] = self.total_sq_error / n**2
            out["cdf_max_std_error"] = float(np.sqrt(self.max_variance)) / n
        return out


def _precisions(variances: np.ndarray) -> np.ndarray:
    """1/v per level, 0 for a public (0) or unreleased (inf) level. (One reciprocal: the planner calls this
    at every evaluation of its budget search.)"""
    v = np.asarray(variances, dtype=float)
    result: np.ndarray = np.reciprocal(v, out=np.zeros_like(v), where=v != 0)
    return result


def gls_eigenvalues(shape: TreeShape, variances: np.ndarray) -> tuple[np.ndarray, float]:
    """(λ_m for internal levels m = 0..h−1, λ_c) of the GLS information matrix; λ_c = inf if the
    root variance is 0 (public N)."""
    w = _precisions(variances)
    s = np.asarray(shape.leaves_per_node, dtype=float)
    weighted = w * s
    # λ_m = Σ_{l>m} w_l s_l: reverse cumulative sum, shifted by one.
    tail = np.cumsum(weighted[::-1])[::-1]
    lam = tail[1:]
    lam_c = np.inf if variances[0] == 0 else float(tail[0])
    return lam, lam_c


def _gls_boundary_terms(shape: TreeShape, prefixes: np.ndarray) -> np.ndarray:
    """‖P_v q_j‖² of the level-m boundary node for each prefix j, shape (len, h)."""
    s = shape.leaves_per_node
    out = np.empty((prefixes.size, shape.height))
    for m in range(shape.height):
        child, b = s[m + 1], shape.branching[m]
        r = (prefixes % s[m]).astype(float)
        f = np.floor_divide(r, child)
        rho = r - f * child
        out[:, m] = child * f + rho * rho / child - r * r / (child * b)
    return out


# ---------------------------------------------------------------- known zeros (padding)
# The GLS estimate uses that the padding leaves (positions ≥ L = shape.leaves) are 0
# (docs/engine.md, "Exact projections"). With unknown padding the covariance Σ of the leaf
# estimates is diagonal in the Haar basis; knowing x_P = 0 is the same as conditioning that estimate
# on x̂_P = 0: Var qᵀx̃ = qᵀΣq − gᵀG⁻¹g with g = Σ_{P,·}q, G = Σ_PP. The padding suffix splits into
# complete subtrees whose inner Haar vectors are uncorrelated with everything real, so only their
# totals matter; blocks on the same level have proportional covariances with q and equal ones with
# the other blocks, so only each level's summed block total U_ℓ matters (≤ h of them). Cov(qⱼᵀx̂, U)
# is linear in the h functions E(j) = (j, e_1(j), …, e_{h−1}(j)), e_t(j) = max(0, j − a_t)/s_t with
# a_t the start of the level-t node holding the last real leaf, so the correction is E(j)ᵀ Q E(j)
# with Q = Wᵀ G⁻¹ W an h × h matrix of the level variances alone.
def has_padding(shape: TreeShape) -> bool:
    """True if the tree has padding leaves (K̄ > leaves): GLS then uses them as known zeros. O(1)."""
    return shape.padded_bins > shape.leaves


def _spine(shape: TreeShape) -> tuple[list[int], list[int]]:
    """(a_t, σ_t) for t = 0..h−1 of E(j): a_0 = 0, σ_0 = 1; a_t = start of the level-t node holding
    the last real leaf, σ_t = s_t. O(h)."""
    s = shape.leaves_per_node
    last = shape.leaves - 1
    return [0] + [(last // s[t]) * s[t] for t in range(1, shape.height)], [1] + list(s[1:shape.height])


def _known_zero_basis(shape: TreeShape, prefixes: np.ndarray) -> np.ndarray:
    """E(j) for each prefix, shape (len, h), for prefixes j ≤ leaves. O(len·h)."""
    starts, sizes = _spine(shape)
    j = np.asarray(prefixes, dtype=np.int64)[:, None]
    result: np.ndarray = np.maximum(j - np.asarray(starts, dtype=np.int64), 0) / np.asarray(sizes, dtype=float)
    return result


def _known_zero_moments(shape: TreeShape, first: int, last: int) -> np.ndarray:
    """S = Σ_{first ≤ j ≤ last} E(j) E(j)ᵀ (h × h). For a_t ≥ a_u, e_t e_u = x(x + a_t − a_u)/(σ_t σ_u) with
    x = j − a_t ≥ 0 over the j > a_t: sums of positive terms in closed form (floats lose nothing to
    cancellation, whatever the span). O(h²) in a few array operations."""
    starts, sizes = _spine(shape)
    a = np.asarray(starts, dtype=float)
    hi_start = np.maximum.outer(a, a)  # the later start of each pair: both active above it
    gap = np.abs(np.subtract.outer(a, a))
    lo = np.maximum(float(first), hi_start) - hi_start  # x from lo to last − start
    n = np.maximum(float(last) - hi_start - lo + 1.0, 0.0)
    sum_x = n * lo + n * (n - 1.0) / 2.0
    sum_x2 = n * lo * lo + lo * n * (n - 1.0) + (n - 1.0) * n * (2.0 * n - 1.0) / 6.0
    size = np.asarray(sizes, dtype=float)
    result: np.ndarray = (sum_x2 + gap * sum_x) / np.outer(size, size)
    return result


@dataclass(frozen=True)
class _PaddingBlocks:
    """What Q needs of the tree alone: the levels ℓ holding maximal complete padding subtrees (each a child
    of the level-(ℓ−1) node holding the last real leaf, to its right), their summed sizes |U_ℓ|, and index
    arrays for the covariance of the U_ℓ."""

    levels: np.ndarray  # ℓ, int
    sizes: np.ndarray  # |U_ℓ|
    below: np.ndarray  # [t < ℓ] for t = 1..h−1, one row per ℓ
    common: np.ndarray  # min(ℓ, ℓ') − 1, the deepest shared spine level
    outer: np.ndarray  # |U_ℓ|·|U_ℓ'|
    inv_size: np.ndarray  # 1/s_l, l = 0..h


@functools.lru_cache(maxsize=256)
def _padding_blocks(shape: TreeShape) -> _PaddingBlocks:
    """:class:`_PaddingBlocks` of a shape (cached: the planner asks for it at every evaluation). O(h²)."""
    s = shape.leaves_per_node
    leaves = shape.leaves
    levels, sizes = [], []
    for level in range(1, shape.height + 1):
        count = ((leaves - 1) // s[level - 1] + 1) * shape.branching[level - 1] - (-(-leaves // s[level]))
        if count > 0:
            levels.append(level)
            sizes.append(count * s[level])
    lv, w = np.asarray(levels, dtype=np.int64), np.asarray(sizes, dtype=float)
    below = (np.arange(1, shape.height)[None, :] < lv[:, None]).astype(float)
    return _PaddingBlocks(lv, w, below, np.minimum.outer(lv, lv) - 1, np.outer(w, w),
                          1.0 / np.asarray(s, dtype=float))


def _known_zero_form(shape: TreeShape, lam: np.ndarray, lam_c: float) -> np.ndarray:
    """Q (h × h) with Var(known zeros) = Var(unknown padding) − E(j)ᵀ Q E(j), from the GLS
    eigenvalues (:func:`gls_eigenvalues`). O(h³)."""
    blocks = _padding_blocks(shape)
    h = shape.height
    if blocks.levels.size == 0:  # no padding
        return np.zeros((h, h))
    inv_c = 1.0 / lam_c if np.isfinite(lam_c) else 0.0
    inv = 1.0 / lam
    # Cov(qⱼᵀx̂, U_ℓ)/|U_ℓ| = Σ_{t<ℓ} (F_{t+1}·[t<ℓ−1] − F_t)/λ_t + j/(K̄λ_c), F_0 = j/K̄, F_t = e_t (t ≥ 1)
    m = np.empty((blocks.levels.size, h))
    m[:, 0] = (inv_c - inv[0]) / shape.padded_bins
    m[:, 1:] = blocks.below * (inv[:-1] - inv[1:])
    # Cov(U_ℓ, U_ℓ')/(|U_ℓ||U_ℓ'|) = base(min(ℓ, ℓ')), plus 1/(|U_ℓ| λ_{ℓ−1}) on the diagonal
    steps = (blocks.inv_size[1:] - blocks.inv_size[:-1]) * inv  # step μ−1 → μ
    base = np.cumsum(steps) - steps - inv * blocks.inv_size[:-1] + inv_c / shape.padded_bins  # base(μ) at μ−1
    cov = blocks.outer * base[blocks.common]
    cov.ravel()[::cov.shape[0] + 1] += blocks.sizes * inv[blocks.levels - 1]  # (the diagonal of the new array)
    wm = blocks.sizes[:, None] * m
    result: np.ndarray = wm.T @ np.linalg.solve(cov, wm)
    return result


def _known_zero_correction(shape: TreeShape, form: np.ndarray, prefixes: np.ndarray) -> np.ndarray:
    """E(j)ᵀ Q E(j) per prefix (``form`` = Q of :func:`_known_zero_form`). E is linear in j between
    the spine starts a_t, so on the piece where e_0..e_{c−1} are active the correction is a quadratic
    in x = j − a_{c−1} ∈ [0, s_{c−1}] (centred there so that large j do not cancel). O(len·log h + h³)."""
    starts, sizes = _spine(shape)
    a = np.asarray(starts, dtype=np.int64)
    inv_size = 1.0 / np.asarray(sizes, dtype=float)
    h = shape.height
    const, linear, square, anchor = np.zeros(h + 1), np.zeros(h + 1), np.zeros(h + 1), np.zeros(h + 1, dtype=np.int64)
    for c in range(1, h + 1):
        offset = (a[c - 1] - a[:c]) * inv_size[:c]  # e_t at x = 0
        block = form[:c, :c]
        slope = inv_size[:c]
        const[c], linear[c], square[c] = offset @ block @ offset, offset @ block @ slope, slope @ block @ slope
        anchor[c] = a[c - 1]
    j = np.asarray(prefixes, dtype=np.int64)
    if j.size > 1 and bool(np.all(j[1:] >= j[:-1])):  # sorted (the usual 1..J): one slice per piece, no gathers
        result = np.empty(j.size)
        cuts = np.searchsorted(j, a, side="right")  # prefixes ≤ a_t come before piece t+1
        for c in range(1, h + 1):
            lo, hi = int(cuts[c - 1]), int(cuts[c]) if c < h else j.size
            x = (j[lo:hi] - anchor[c]).astype(float)
            result[lo:hi] = const[c] + x * (2.0 * linear[c] + x * square[c])
        result[:int(cuts[0])] = 0.0  # j ≤ 0
        return result
    active = np.searchsorted(a, j, side="left")  # e_t(j) > 0 iff a_t < j; a is non-decreasing
    x = (j - anchor[active]).astype(float)
    gathered: np.ndarray = const[active] + x * (2.0 * linear[active] + x * square[active])
    return gathered


def prefix_basis(shape: TreeShape, estimator: str, released: Sequence[bool], prefixes: np.ndarray) -> np.ndarray:
    """The part of Var(Ĉ_j) that depends on the tree alone, one row per prefix length j: the
    covering digits ``d_l(j)`` of the released levels (covering sum, len × (h+1)) or the GLS
    boundary terms ``‖P_v q_j‖²`` (GLS, len × h; the known-zero correction of a padded tree is
    computed from the prefixes). Input of :func:`prefix_variances_from_basis`. O(len·h)."""
    if estimator == Estimator.COVERING:
        return shape.covering_digits(prefixes, released).astype(float)
    return _gls_boundary_terms(shape, prefixes)


def prefix_variances_from_basis(shape: TreeShape, estimator: str, basis: np.ndarray, variances: np.ndarray,
                                prefixes: np.ndarray, root_public: bool, padding_known: bool = True) -> np.ndarray:
    """Exact Var(Ĉ_j) for the prefix lengths j of ``basis`` (:func:`prefix_basis`, same estimator,
    same released levels) given the per-level noise ``variances`` (0 for a public root, inf for an
    unreleased level). Under ``root_public`` the last real leaf's prefix is N: variance 0.
    ``padding_known=False``: GLS with the padding unknown (releases made before dpgui used the zeros,
    :func:`~dpgui.core.estimators.gls_leaves`). O(len·h + h³)."""
    if estimator == Estimator.COVERING:
        out = basis @ np.where(np.isinf(variances), 0.0, variances)
    else:
        lam, lam_c = gls_eigenvalues(shape, variances)
        out = basis @ (1.0 / lam)
        if np.isfinite(lam_c):
            out = out + (prefixes.astype(float) ** 2) / (shape.padded_bins * lam_c)
        if padding_known and has_padding(shape):
            out = out - _known_zero_correction(shape, _known_zero_form(shape, lam, lam_c), prefixes)
    if root_public:
        out = np.where(prefixes == shape.leaves, 0.0, out)
    result: np.ndarray = np.maximum(out, 0.0)
    return result


def prefix_variances(plan: Plan, prefixes: Sequence[int] | np.ndarray | None = None,
                     padding_known: bool = True) -> np.ndarray:
    """Exact Var(Ĉ_j) for prefix lengths j (default 1..leaves: K, or K+1 with the missing leaf) of the
    plan's estimator (``padding_known``: see :func:`prefix_variances_from_basis`). O(len·h) for given
    prefixes; the default is :func:`all_prefix_variances`, O(K̄ + h³)."""
    shape = plan.shape
    if prefixes is None:
        return all_prefix_variances(plan, padding_known)
    j = np.asarray(prefixes, dtype=np.int64)
    basis = prefix_basis(shape, plan.estimator, plan.released(), j)
    return prefix_variances_from_basis(shape, plan.estimator, basis, plan.level_variances(), j, plan.privacy.root_public,
                                       padding_known)


def published_with_known_zeros(plan: Plan, std_errors: np.ndarray) -> bool:
    """Which GLS produced a published release's standard errors (one per value bin, from its CSV): True if
    the padding leaves were used as known zeros (every release made now), False if they were unknowns
    (releases made before; their errors are a little larger on padded trees). The intervals computed later
    from a published CSV must follow the estimator it was released with, and the CSV says which: its
    standard errors are √(exact variances) of one or the other. Trees without padding, and the covering
    sum, are the same either way (True). O(K·h)."""
    shape = plan.shape
    if plan.estimator != Estimator.GLS or not has_padding(shape):
        return True
    published = np.asarray(std_errors, dtype=float)[: shape.bins]
    prefixes = np.arange(1, published.size + 1, dtype=np.int64)
    known = np.sqrt(prefix_variances(plan, prefixes, True))
    unknown = np.sqrt(prefix_variances(plan, prefixes, False))
    return bool(np.abs(published - known).max() <= np.abs(published - unknown).max())


def project(plan: Plan) -> Projection:
    """Exact total and worst squared error over the released cumulative counts (the mean is over the
    K value bins; under change prefix K+1 = N adds 0): :func:`total_sq_error` (O(h)) and
    :func:`max_prefix_variance` (O(K̄)); the same figures as the sum and maximum of
    :func:`prefix_variances`, up to float rounding."""
    total = total_sq_error(plan)
    return Projection(total, max_prefix_variance(plan), total / plan.shape.bins)


def max_prefix_variance(plan: Plan) -> float:
    """``prefix_variances(plan).max()`` exactly, in O(K̄ + h³) time and O(K̄/n_1) memory (n_1: the root's
    branching): the blocks of :func:`_prefix_variance_blocks` are only scanned for their maximum."""
    shape = plan.shape
    last = last_prefix(shape, plan.privacy.root_public)  # later prefixes have variance 0 (N public)
    worst = 0.0
    for first, table in _prefix_variance_blocks(plan, min(last, shape.padded_bins - 1) + 1, True):
        worst = max(worst, float(table[max(1 - first, 0):].max(initial=0.0)))
    if last >= shape.padded_bins:  # prefix K̄ (no padding, N private): its digits wrap around, take it as it is
        worst = max(worst, float(prefix_variances(plan, [shape.padded_bins])[0]))
    return worst


def all_prefix_variances(plan: Plan, padding_known: bool = True) -> np.ndarray:
    """``prefix_variances(plan, None, padding_known)`` (Var Ĉ_j for j = 1..leaves), equal up to float rounding,
    in O(K̄ + h³) time: the tables of :func:`_prefix_variance_blocks` instead of about 4h passes over K·h
    numbers (a release of K = 2²⁴ bins: 0.3 s instead of 4 s)."""
    shape = plan.shape
    stop = min(shape.leaves, shape.padded_bins - 1) + 1
    out = np.empty(shape.leaves + 1)  # out[j] = Var Ĉ_j, j = 0..leaves
    for first, table in _prefix_variance_blocks(plan, stop, padding_known):
        out[first:first + table.size] = table
    if shape.leaves == shape.padded_bins:  # prefix K̄ (no padding): its digits wrap around, take it as it is
        out[-1] = prefix_variances(plan, [shape.padded_bins], padding_known)[0]
    if plan.privacy.root_public:
        out[-1] = 0.0  # the last real leaf's prefix is N, published exactly
    result: np.ndarray = np.maximum(out[1:], 0.0)
    return result


def _prefix_variance_blocks(plan: Plan, stop: int, padding_known: bool) -> Iterator[tuple[int, np.ndarray]]:
    """Var Ĉ_j of the prefixes j = 0..stop−1 (stop ≤ K̄), in blocks ``(first, values)`` of ≤ 2¹⁶ + s_1 prefixes
    from ``first`` on, before the clip at 0 and the exact N. O(K̄ + h³) time, O(K̄/n_1 + 2¹⁶) memory.

    Var Ĉ_j is a sum of one term per level m < h that depends on r = j mod s_m only: for GLS
    ``‖P_v q_j‖²/λ_m`` (:func:`_gls_boundary_terms`), for the covering sum ``v_l·(r // s_l)`` for the
    released level l below (:meth:`TreeShape.covering_digits`). So the sum of the terms of levels ≥ m,
    for every r < s_m, is the table of level m+1 tiled n_{m+1} times plus level m's term: built from the
    leaves up, each table is s_m long, and the root's K̄ entries are made a block of rows at a time. GLS
    on a padded tree takes away the known zeros' E(j)ᵀ Q E(j) (:func:`_known_zero_correction`): up to a_1
    (the first leaf of the level-1 node holding the last real leaf) that is Q_00·j², folded into the
    root's j² term; the prefixes after a_1 (at most s_1 of them) get the rest directly."""
    shape = plan.shape
    s = shape.leaves_per_node
    variances = plan.level_variances()
    # Per level, top first: (child, p, q, c) for its term p·(r // child) + q·(r mod child)² + c·r², r = j mod
    # (its node size), child = leaves per child node (per node of the next level in the chain).
    links: list[tuple[int, float, float, float]] = []
    form, spine_after = None, 0  # Q of the known zeros (GLS on a padded tree) and a_1
    if plan.estimator == Estimator.COVERING:
        released = plan.released()
        levels = [level for level in range(1, shape.height + 1) if released[level]]
        links = [(s[level], float(variances[level]), 0.0, 0.0) for level in levels]
        bottom = s[levels[-1]]
        root_square = 0.0  # the root's digit j // K̄ is 0 below K̄
    else:
        lam, lam_c = gls_eigenvalues(shape, variances)
        for m in range(shape.height):
            child, b = s[m + 1], shape.branching[m]
            links.append((child, child / lam[m], 1.0 / (child * lam[m]), -1.0 / (child * b * lam[m])))
        bottom = 1
        root_square = 1.0 / (shape.padded_bins * lam_c) if np.isfinite(lam_c) else 0.0
        if padding_known and has_padding(shape):
            form = _known_zero_form(shape, lam, lam_c)
            root_square -= float(form[0, 0])
            starts = _spine(shape)[0]  # a_1: beyond it E(j) has more than its first entry (none if h = 1)
            spine_after = starts[1] if len(starts) > 1 else shape.padded_bins
    table = np.zeros(bottom)  # the terms of the levels below, for every r < the table's length
    for k in range(len(links) - 1, -1, -1):
        child, per_child, per_rest, per_square = links[k]
        rho = np.arange(child, dtype=float)
        within = table + per_rest * rho * rho if per_rest else table
        square = per_square + (root_square if k == 0 else 0.0)
        # rows: the child r // child; columns: r mod child. The root's table is made a block of rows at a time.
        count = links[k - 1][0] // child if k else -(-stop // child)
        rows = count if k else max(1, 2**16 // child)
        for start in range(0, count, rows):
            index = np.arange(start, min(start + rows, count), dtype=float)
            grid = within[np.newaxis, :] + (per_child * index)[:, np.newaxis]
            if square:
                r = rho[np.newaxis, :] + (child * index)[:, np.newaxis]
                grid += square * r * r
            table = grid.ravel()
            if not k:
                first = start * child  # prefix of table[0]
                table = table[:min(stop - first, table.size)]
                if form is not None and first + table.size > spine_after + 1:
                    j = np.arange(max(spine_after + 1, first), first + table.size, dtype=np.int64)
                    rest = _known_zero_correction(shape, form, j) - float(form[0, 0]) * (j.astype(float) ** 2)
                    table[j[0] - first:] -= rest
                yield first, table


# ---------------------------------------------------------------- closed-form totals, O(h) (+ O(h³) known zeros)
def _sum_floor_mod(count: int, size: int, modulus: int | None) -> int:
    """Σ_{j=0}^{count−1} (j // size) mod modulus (no mod if modulus is None), exactly."""

    def floor_sum(upto: int) -> int:  # Σ_{j<upto} j // size
        q, r = divmod(upto, size)
        return size * q * (q - 1) // 2 + q * r

    if modulus is None:
        return floor_sum(count)
    period = size * modulus
    q, r = divmod(count, period)
    return q * size * modulus * (modulus - 1) // 2 + floor_sum(r)


def _gls_block_numerator(upto: int, child: int, b: int) -> int:
    """c·b·G(R), an integer: G(R) = Σ_{r<R} g(r), g(r) = c·(r//c) + (r mod c)²/c − r²/(c·b)."""
    f_full, partial = divmod(upto, child)
    s1 = child * f_full * (f_full - 1) // 2 + f_full * partial  # Σ r//c
    s2 = f_full * (child - 1) * child * (2 * child - 1) // 6 + (partial - 1) * partial * (2 * partial - 1) // 6
    s3 = (upto - 1) * upto * (2 * upto - 1) // 6
    return child * child * b * s1 + b * s2 - s3


def last_prefix(shape: TreeShape, root_public: bool) -> int:
    """Largest prefix whose error counts: the last real leaf's prefix is N, exact when N is public
    (so K with the missing leaf, K−1 for a tree without it), else every real leaf's."""
    return shape.leaves - 1 if root_public else shape.leaves


#: Prefix lengths ``(first, last)``, both included, 1 ≤ first ≤ last ≤ leaves: the CDF points an error
#: total runs over (the whole range by default; a region the user cares about otherwise).
Span = tuple[int, int]


def check_span(shape: TreeShape, root_public: bool, span: Span | None) -> Span:
    """The prefixes a total runs over: ``span`` checked, or ``(1, last_prefix)`` for None. A span may
    include the last real leaf's prefix (N, variance 0 when N is public): it adds nothing then. O(1)."""
    if span is None:
        return 1, last_prefix(shape, root_public)
    first, last = int(span[0]), int(span[1])
    if not 1 <= first <= last <= shape.leaves:
        raise ValueError(f"need 1 <= first <= last <= {shape.leaves}, got {span}")
    return first, min(last, last_prefix(shape, root_public))  # last < first: an empty total


def _gls_numerators_upto(shape: TreeShape, upto: int) -> tuple[list[int], int]:
    """Integer numerators of (A_m, A_c) summed over prefixes 0..upto−1 (prefix 0 contributes 0):
    A_m = numerator/(s_{m+1}·n_m), A_c = numerator/K̄. Integers, so that a region's total (a difference
    of two such sums) is exact before the one division. O(h)."""
    s = shape.leaves_per_node
    numerators = []
    for m in range(shape.height):
        q, r = divmod(upto, s[m])
        child, b = s[m + 1], shape.branching[m]
        numerators.append(q * _gls_block_numerator(s[m], child, b) + _gls_block_numerator(r, child, b))
    j_max = upto - 1
    return numerators, j_max * (j_max + 1) * (2 * j_max + 1) // 6


def gls_total_coefficients(shape: TreeShape, root_public: bool, span: Span | None = None) -> tuple[np.ndarray, float]:
    """(A_m, A_c) with Σ_j Var Ĉ_j = Σ_m A_m/λ_m + A_c/λ_c over the prefixes j of ``span`` (default
    1..J, :func:`check_span`) for GLS with the padding unknown; :func:`total_coefficients` adds the
    known-zero correction of a padded tree. O(h)."""
    first, last = check_span(shape, root_public, span)
    if last < first:
        return np.zeros(shape.height), 0.0
    high, high_const = _gls_numerators_upto(shape, last + 1)
    low, low_const = _gls_numerators_upto(shape, first)
    s = shape.leaves_per_node
    coeffs = np.array([(hi - lo) / (s[m + 1] * shape.branching[m]) for m, (hi, lo) in enumerate(zip(high, low))])
    return coeffs, (high_const - low_const) / shape.padded_bins


@dataclass(frozen=True, eq=False)
class TotalCoefficients:
    """The part of Σ_j Var Ĉ_j over a span that depends on the tree alone (:func:`total_coefficients`).

    ``levels``: D_l (covering sum, Σ_l D_l v_l) or A_m (GLS, Σ_m A_m/λ_m); ``constant``: A_c (GLS,
    + A_c/λ_c); ``known_zeros``: on a padded tree under GLS, S = Σ_j E(j)E(j)ᵀ (h × h), so that the
    known-zero padding takes away trace(Q S) (Q of the level variances, docs/engine.md "Exact
    projections"); None otherwise."""

    levels: np.ndarray
    constant: float = 0.0
    known_zeros: np.ndarray | None = None


def _covering_upto(shape: TreeShape, released: Sequence[bool], upto: int) -> np.ndarray:
    """D_l summed over prefixes 0..upto−1. O(h)."""
    s = shape.leaves_per_node
    out = np.zeros(shape.height + 1)
    above: int | None = None
    for level in range(shape.height + 1):
        if not released[level]:
            continue
        modulus = None if above is None else s[above] // s[level]
        out[level] = _sum_floor_mod(upto, s[level], modulus)
        above = level
    return out


def covering_total_coefficients(shape: TreeShape, released: Sequence[bool], root_public: bool,
                                span: Span | None = None) -> np.ndarray:
    """D_l = Σ_j d_l(j) over the prefixes j of ``span`` (default 1..J), so Σ_j Var Ĉ_j = Σ_l D_l v_l. O(h)."""
    first, last = check_span(shape, root_public, span)
    if last < first:
        return np.zeros(shape.height + 1)
    result: np.ndarray = _covering_upto(shape, released, last + 1) - _covering_upto(shape, released, first)
    return result


def total_coefficients(shape: TreeShape, estimator: str, released: Sequence[bool],
                       root_public: bool, span: Span | None = None) -> TotalCoefficients:
    """The part of Σ_j Var Ĉ_j (j over ``span``, default every noised prefix) that depends on the tree
    alone: D_l of :func:`covering_total_coefficients` for the covering sum; (A_m, A_c) of
    :func:`gls_total_coefficients` and, on a padded tree, the moments S of the known-zero correction for
    GLS. Input of :func:`total_from_coefficients`. O(h²)."""
    if estimator == Estimator.COVERING:
        return TotalCoefficients(covering_total_coefficients(shape, released, root_public, span))
    coeffs, const = gls_total_coefficients(shape, root_public, span)
    moments = None
    if has_padding(shape):
        first, last = check_span(shape, root_public, span)
        moments = _known_zero_moments(shape, first, last)
    return TotalCoefficients(coeffs, const, moments)


def total_from_coefficients(shape: TreeShape, estimator: str, coefficients: TotalCoefficients,
                            variances: np.ndarray) -> float:
    """Σ_j Var Ĉ_j, counts², from :func:`total_coefficients` (same estimator, same released levels)
    and the per-level noise ``variances`` (0 for a public root, inf for an unreleased level). O(h³)."""
    if estimator == Estimator.COVERING:
        return float(coefficients.levels @ np.where(np.isinf(variances), 0.0, variances))
    lam, lam_c = gls_eigenvalues(shape, variances)
    total = float(coefficients.levels @ (1.0 / lam)) + (coefficients.constant / lam_c if np.isfinite(lam_c) else 0.0)
    if coefficients.known_zeros is not None:
        total -= float(np.sum(_known_zero_form(shape, lam, lam_c) * coefficients.known_zeros))
    return max(total, 0.0)


def total_sq_error(plan: Plan) -> float:
    """Σ_j Var Ĉ_j in O(h³) (equals ``project(plan).total_sq_error``)."""
    coefficients = total_coefficients(plan.shape, plan.estimator, plan.released(), plan.privacy.root_public)
    return total_from_coefficients(plan.shape, plan.estimator, coefficients, plan.level_variances())


# ---------------------------------------------------------------- range counts
def interval_variance(plan: Plan, start: int, stop: int, padding_known: bool = True) -> float:
    """Exact Var(Ĉ_stop − Ĉ_start) of the estimator, prefixes 0 ≤ start < stop ≤ leaves (Ĉ_0 = 0)
    (``padding_known``: see :func:`prefix_variances_from_basis`)."""
    shape = plan.shape
    if not 0 <= start < stop <= shape.leaves:
        raise ValueError("need 0 <= start < stop <= leaves")
    if start == 0:
        return float(prefix_variances(plan, [stop], padding_known)[0])
    if stop == shape.leaves and plan.privacy.root_public:
        return float(prefix_variances(plan, [start], padding_known)[0])
    variances = plan.level_variances()
    s = shape.leaves_per_node
    if plan.estimator == Estimator.COVERING:
        digits = shape.covering_digits(np.array([start, stop]), plan.released())
        total = 0.0
        released = plan.released()
        for level in range(shape.height + 1):
            if not released[level]:
                continue
            ranges = []
            for prefix, d in ((start, digits[0, level]), (stop, digits[1, level])):
                end = prefix // s[level]
                ranges.append((end - d, end))
            (a1, b1), (a2, b2) = ranges
            overlap = max(0, min(b1, b2) - max(a1, a2))
            total += ((b1 - a1) + (b2 - a2) - 2 * overlap) * variances[level]
        return float(total)
    lam, lam_c = gls_eigenvalues(shape, variances)
    total = 0.0
    for m in range(shape.height):
        child, b = s[m + 1], shape.branching[m]
        nodes = {start // s[m], (stop - 1) // s[m]}
        for node in nodes:
            base = node * s[m]
            lo = np.arange(b) * child + base
            fill = (np.clip(stop, lo, lo + child) - np.clip(start, lo, lo + child)) / child
            total += child * float(((fill - fill.mean()) ** 2).sum()) / lam[m]
    if np.isfinite(lam_c):
        total += (stop - start) ** 2 / (shape.padded_bins * lam_c)
    if padding_known and has_padding(shape):  # padding known to be 0: q = 1[start, stop) has E = E(stop) − E(start)
        e = np.diff(_known_zero_basis(shape, np.array([start, stop])), axis=0)[0]
        total -= float(e @ _known_zero_form(shape, lam, lam_c) @ e)
    return float(max(total, 0.0))
