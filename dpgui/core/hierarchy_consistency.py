"""Consistent, non-negative integer counts over a hierarchy: top-down projection and tree GLS.

The tree (the ``parents`` of :class:`dpgui.core.hierarchy.Hierarchy`): level 0 is the root (one
node), ``parents[l-1][i]`` is the index on level ``l-1`` of node ``i`` of level ``l`` (``l = 1..L``,
int64); nodes on a level are sorted by parent, so each parent's children are contiguous, and every
node above the leaves has at least one child. Per-level arrays are always passed and returned
**root first** (levels ``0..L``, like ``Hierarchy.aggregate``). Every function here is
post-processing of already-noised counts: it spends no privacy and holds for both neighbour models
(under ``change`` the root ``N`` is public; under ``addremove`` it is noised like the other levels).

Programs and algorithms
-----------------------
* :func:`integer_simplex_projection` -- Ko, Ziani & Fioretto program (8) with integrality: given real ``y``
  (noisy children) and an integer ``total >= 0`` (the parent's released value), find
  ``argmin ||v - y||_2^2`` over ``v in Z_{>=0}^n`` with ``sum v = total``. The objective is
  separable convex; the ``(t+1)``-th unit given to child ``i`` costs ``2 (t + 1/2 - y_i)``, which
  increases in ``t``, so an optimum takes the ``total`` cheapest units (the greedy of Gross 1956 /
  Federgruen & Groenevelt 1986). We find them without enumerating units: the continuous projection
  ``v* = max(0, y - lam)`` (``sum v* = total``; ``lam`` from one sort and a cumulative sum, then one
  Newton step on segment-local sums) brackets every integer optimum,
  ``max(0, floor(y - lam)) <= v <= max(0, ceil(y - lam))`` (threshold argument: units of marginal
  ``t - y_i < -lam`` number at least ``total``, those of marginal ``<= -1 - lam`` at most
  ``total``). So ``b = max(0, ceil(y - lam~) - 2)`` is a lower and ``b + 3`` an upper bound for any
  ``lam~`` within 1 of ``lam``, and the optimum is ``b`` plus the ``total - sum b`` cheapest of the
  ``3 n`` candidate units ``b_i, b_i + 1, b_i + 2`` -- one more stable sort. Before all this each
  group is shifted to its maximum (the problem is shift-invariant) and values below
  ``max - total - 1`` are raised to it (such children get 0 either way), so floating-point error
  is relative to ``total``, not to the magnitude of the noisy values.

  **Tie-breaking** (deterministic): units of equal marginal cost go to the child with the lower
  index first (the earlier child in the hierarchy's order). Among several optima the result is the
  lexicographically greatest one. E.g. ``y = (0.5, 0.5)``, ``total = 1`` gives ``(1, 0)``.

* :func:`topdown_consistent` -- program (8) applied recursively from the root (Ko, Ziani & Fioretto §3.3):
  the root's released value is given; then, level by level, every parent's children are the
  integer projection of their noisy values onto the parent's released value. All parents of a
  level are done at once (segmented: one sort per level, per-segment sums with
  ``np.add.reduceat``). Output: int64, non-negative, every parent equal to the sum of its children.

* :func:`gls_estimate` -- the best linear unbiased estimate (generalised least squares,
  ``min sum_v (y_v - h_v)^2 / sigma_{l(v)}^2`` over consistent trees ``h``) for arbitrary fan-out
  and a noise variance per level, by two passes (Hay et al. 2010 generalised; Honaker 2015):
  bottom-up, each node's subtree estimate ``z_v`` (variance ``V_v``) combines its own measurement
  with the sum of its children's ``z`` by inverse variance; top-down, ``h_root = z_root`` and each
  parent's residual ``h_u - sum_c z_c`` is split over its children in proportion to ``V_c``. A
  level of infinite variance is not measured (its nodes contribute no term). The root is either
  known exactly (``change``: ``h_root = N``) or estimated. Where the measurements do not determine
  a split (all levels below some level unmeasured), the parent's value is spread over the leaves
  below it equally (the minimum-norm least-squares solution); such nodes get infinite variance
  from :func:`gls_node_variances`.

* :func:`gls_node_variances` -- the exact variance of each GLS estimate, by the same two passes
  (a Rauch-Tung-Striebel smoother on the tree): ``Var(h_c) = V_c + (V_c / V_S)^2 (Var(h_u) - V_S)``
  with ``V_S = sum_{c'} V_{c'}`` over the children of ``u``.

* :func:`gls_consistent` -- GLS, then the top-down integer step (root ``N`` when known, else
  ``max(0, round(h_root))``), so the release is non-negative integers and consistent.

Complexity: :func:`topdown_consistent` ``O(n log n)`` per level of ``n`` nodes (two sorts), the
GLS functions ``O(n)`` per level; memory ``O(n)``. Values are floats (noisy counts) up to
``2**52`` in magnitude; totals are integers up to ``2**52`` (beyond that float64 does not hold
every integer and the result would not be exact).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from dpgui.errors import ParameterError

__all__ = [
    "integer_simplex_projection",
    "topdown_consistent",
    "gls_estimate",
    "gls_node_variances",
    "gls_consistent",
]

#: Largest total and largest |noisy value| accepted (float64 holds every integer below 2**53).
MAX_MAGNITUDE = 2**52


# ----------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------


def _check_total(total: object, what: str = "total") -> int:
    if isinstance(total, (bool, np.bool_)):
        raise ParameterError(f"{what} must be an integer, got {total!r}", "pass an int >= 0")
    if isinstance(total, numbers.Integral):
        value = int(total)
    elif isinstance(total, numbers.Real) and float(total).is_integer():
        value = int(float(total))
    else:
        raise ParameterError(
            f"{what} must be a whole number, got {total!r}",
            "round it first (e.g. max(0, round(noisy root)))",
        )
    if value < 0:
        raise ParameterError(f"{what} must be >= 0, got {value}", "pass a non-negative count")
    if value > MAX_MAGNITUDE:
        raise ParameterError(
            f"{what} = {value} exceeds 2**52", "counts this large are not exact in float64"
        )
    return value


def _check_values(values: object, size: int | None, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf" or arr.ndim != 1:
        raise ParameterError(
            f"{what} must be a 1-D array of real numbers, got dtype {arr.dtype} shape {arr.shape}",
            "pass one noisy count per node",
        )
    if size is not None and arr.size != size:
        raise ParameterError(
            f"{what} has {arr.size} values but the level has {size} nodes",
            "pass one noisy count per node of the level, in the hierarchy's order",
        )
    out = arr.astype(np.float64)
    if not np.all(np.isfinite(out)):
        raise ParameterError(f"{what} contains NaN or infinity", "pass finite noisy counts")
    if out.size and float(np.max(np.abs(out))) > MAX_MAGNITUDE:
        raise ParameterError(
            f"{what} has a value beyond 2**52 in magnitude", "noisy counts must be below 4.5e15"
        )
    return out


def _check_parents(parents: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[int]]:
    """Validated int64 parent arrays and the level sizes ``(1, n_1, ..., n_L)``."""
    if len(parents) < 1:
        raise ParameterError("the tree has no level below the root", "pass at least one level")
    sizes = [1]
    checked: list[np.ndarray] = []
    for level, raw in enumerate(parents, start=1):
        arr = np.asarray(raw)
        if arr.ndim != 1 or arr.dtype.kind not in "iu" or arr.size == 0:
            raise ParameterError(
                f"parents of level {level} must be a non-empty 1-D integer array",
                "pass Hierarchy.parents",
            )
        p = arr.astype(np.int64)
        n_above = sizes[-1]
        steps = np.diff(p)
        if p[0] != 0 or p[-1] != n_above - 1 or np.any((steps != 0) & (steps != 1)):
            raise ParameterError(
                f"parents of level {level} are not sorted, contiguous and covering every node "
                f"of level {level - 1}",
                "order nodes by parent and give every node above the leaves at least one child",
            )
        checked.append(p)
        sizes.append(int(p.size))
    return checked, sizes


def _check_levels(noisy_levels: Sequence[object], sizes: list[int]) -> list[np.ndarray]:
    if len(noisy_levels) != len(sizes):
        raise ParameterError(
            f"got {len(noisy_levels)} levels of noisy counts for a tree of {len(sizes)} levels",
            "pass one array per level, root first (levels 0..L)",
        )
    return [
        _check_values(values, size, f"noisy counts of level {level}")
        for level, (values, size) in enumerate(zip(noisy_levels, sizes))
    ]


def _segment_starts(parent: np.ndarray, n_segments: int) -> np.ndarray:
    """Start index of each parent's children (parents sorted, every parent has a child)."""
    return np.searchsorted(parent, np.arange(n_segments, dtype=np.int64), side="left")


# ----------------------------------------------------------------------------------------------
# the integer projection (segmented)
# ----------------------------------------------------------------------------------------------


def _segmented_projection(
    y: np.ndarray, seg: np.ndarray, starts: np.ndarray, totals: np.ndarray
) -> np.ndarray:
    """Integer projection of each segment of ``y`` onto ``{v >= 0 integer, sum v = totals[s]}``.

    ``seg`` (sorted, int64) is the segment of each value, ``starts`` the first index of each
    segment (all non-empty), ``totals`` int64 >= 0. Returns int64 ``v``. See the module docstring.
    """
    n = y.size
    counts = np.diff(np.append(starts, n))
    tot = totals.astype(np.float64)
    # shift each segment to its maximum and raise values far below it (exact no-ops, see above)
    seg_max = np.maximum.reduceat(y, starts)
    shifted = np.maximum(y - seg_max[seg], -(tot + 1.0)[seg])

    # continuous projection: lam per segment from the sorted values (descending within segment)
    order = np.lexsort((-shifted, seg))
    ys = shifted[order]
    position = np.arange(n, dtype=np.int64) - starts[seg] + 1
    cumulative = np.cumsum(ys)
    before = np.concatenate(([0.0], cumulative))[starts]
    local = cumulative - before[seg]
    lam_k = (local - tot[seg]) / position
    rho = np.add.reduceat((ys > lam_k).astype(np.int64), starts)
    lam = np.where(rho > 0, lam_k[starts + np.maximum(rho, 1) - 1], 0.0)
    # one Newton step on segment-local sums removes the cumulative sum's rounding across segments
    excess = shifted - lam[seg]
    active = np.add.reduceat((excess > 0).astype(np.int64), starts)
    over = np.add.reduceat(np.maximum(excess, 0.0), starts) - tot
    lam = lam + np.where(active > 0, over / np.maximum(active, 1), 0.0)

    base = np.maximum(np.ceil(shifted - lam[seg]) - 2.0, 0.0).astype(np.int64)
    remaining = totals - np.add.reduceat(base, starts)
    if np.any(remaining < 0) or np.any(remaining > 3 * counts):
        raise RuntimeError("integer projection: the continuous bracket failed (report this)")
    # candidates: the units base, base+1, base+2 of every child, laid out child-major, so a stable
    # sort by (segment, marginal) breaks ties by child index (then by unit)
    marginal = (base[:, None] + np.arange(3, dtype=np.int64)[None, :]) - shifted[:, None]
    cand_seg = np.repeat(seg, 3)
    cand_order = np.lexsort((marginal.ravel(), cand_seg))
    rank = np.arange(3 * n, dtype=np.int64) - 3 * starts[cand_seg]
    chosen = cand_order[rank < remaining[cand_seg]] // 3
    result: np.ndarray = base + np.bincount(chosen, minlength=n).astype(np.int64)
    return result


def integer_simplex_projection(values: np.ndarray, total: int) -> np.ndarray:
    """Exact ``argmin ||v - values||_2`` over non-negative integer ``v`` with ``sum v = total``.

    ``values``: real (noisy) counts, 1-D, non-empty; ``total``: integer >= 0. Returns int64.
    Ties: equal-cost units go to the lower index (the lexicographically greatest optimum).
    ``O(n log n)``.
    """
    y = _check_values(values, None, "values")
    if y.size == 0:
        raise ParameterError("values is empty", "pass at least one value to project")
    t = _check_total(total)
    zeros = np.zeros(y.size, dtype=np.int64)
    return _segmented_projection(
        y, zeros, np.zeros(1, dtype=np.int64), np.array([t], dtype=np.int64)
    )


def _topdown(
    parents: list[np.ndarray], sizes: list[int], levels: list[np.ndarray], root: int
) -> tuple[np.ndarray, ...]:
    released = [np.array([root], dtype=np.int64)]
    for parent, n_above in zip(parents, sizes[:-1]):
        starts = _segment_starts(parent, n_above)
        released.append(
            _segmented_projection(levels[len(released)], parent, starts, released[-1])
        )
    return tuple(released)


def topdown_consistent(
    parents: Sequence[np.ndarray], noisy_levels: Sequence[np.ndarray], root: int
) -> tuple[np.ndarray, ...]:
    """Paper 001 program (8) recursively from the root, with integrality.

    ``noisy_levels``: real noisy counts per level, root first (levels 0..L; level 0's value is
    not used). ``root``: the root's released value, an integer >= 0 (``N`` under ``change``; under
    ``addremove`` e.g. ``max(0, round(noisy root))`` or a GLS estimate rounded). Returns int64
    counts per level 0..L: non-negative, each parent equal to the sum of its children.
    ``O(n log n)`` per level, vectorised over all parents of a level.
    """
    checked, sizes = _check_parents(parents)
    levels = _check_levels(noisy_levels, sizes)
    return _topdown(checked, sizes, levels, _check_total(root, "root"))


# ----------------------------------------------------------------------------------------------
# GLS on the tree
# ----------------------------------------------------------------------------------------------


def _check_variances(level_variances: Sequence[float], sizes: list[int], root_is_known: bool) -> np.ndarray:
    """Per-level variances, root first; the root's entry is not used (nor checked) when the root
    is known."""
    try:
        var = np.array(level_variances, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(
            "level variances must be numbers", "pass one noise variance per level, root first"
        ) from None
    if var.ndim != 1 or var.size != len(sizes):
        raise ParameterError(
            f"got {var.size} level variances for a tree of {len(sizes)} levels",
            "pass one noise variance per level, root first (inf for a level not released)",
        )
    if root_is_known:
        var[0] = np.inf
    if np.any(np.isnan(var)) or np.any(var <= 0):
        raise ParameterError(
            "level variances must be > 0 (inf for a level not released)",
            "pass the variance of each level's noise",
        )
    return var


def _bottom_up(
    parents: list[np.ndarray],
    sizes: list[int],
    levels: list[np.ndarray] | None,
    var: np.ndarray,
    root_known: float | None,
    root_is_known: bool,
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Subtree estimates ``z`` (None-safe: zeros when ``levels`` is None), their finite variances
    ``V``, their "unmeasured weight" ``a`` (> 0: no measurement in the subtree, ``a`` = number of
    leaves), and the child segment starts per level."""
    depth = len(sizes) - 1
    z: list[np.ndarray] = [np.zeros(0)] * (depth + 1)
    V: list[np.ndarray] = [np.zeros(0)] * (depth + 1)
    a: list[np.ndarray] = [np.zeros(0)] * (depth + 1)
    starts_of: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * depth
    n_leaf = sizes[depth]
    leaf_measured = bool(np.isfinite(var[depth]))
    z[depth] = levels[depth].copy() if (levels is not None and leaf_measured) else np.zeros(n_leaf)
    V[depth] = np.full(n_leaf, var[depth] if leaf_measured else 0.0)
    a[depth] = np.zeros(n_leaf) if leaf_measured else np.ones(n_leaf)
    for level in range(depth - 1, -1, -1):
        starts = _segment_starts(parents[level], sizes[level])
        starts_of[level] = starts
        S = np.add.reduceat(z[level + 1], starts)
        VS = np.add.reduceat(V[level + 1], starts)
        A = np.add.reduceat(a[level + 1], starts)
        if level == 0 and root_is_known:
            z[0] = np.array([float(root_known) if root_known is not None else 0.0])
            V[0] = np.zeros(1)
            a[0] = np.zeros(1)
            continue
        if np.isfinite(var[level]):
            own = levels[level] if levels is not None else np.zeros(sizes[level])
            informed = A == 0
            w_own = 1.0 / var[level]
            w_sub = np.where(informed, 1.0 / np.where(informed, VS, 1.0), 0.0)
            z[level] = (w_own * own + w_sub * S) / (w_own + w_sub)
            V[level] = 1.0 / (w_own + w_sub)
            a[level] = np.zeros(sizes[level])
        else:
            z[level], V[level], a[level] = S, VS, A
    if a[0][0] > 0:
        raise ParameterError(
            "no level of the tree is measured and the root is not known",
            "give at least one level a finite noise variance or pass the known root",
        )
    return z, V, a, starts_of


def _split_shares(
    V_child: np.ndarray, a_child: np.ndarray, parent: np.ndarray, starts: np.ndarray
) -> np.ndarray:
    """Each child's share of its parent's residual: ``V_c / sum V`` or, where some sibling
    subtree is unmeasured, ``a_c / sum a`` (those get it all)."""
    A = np.add.reduceat(a_child, starts)
    VS = np.add.reduceat(V_child, starts)
    by_a = A[parent] > 0
    num = np.where(by_a, a_child, V_child)
    den = np.where(by_a, A[parent], VS[parent])
    share: np.ndarray = num / den
    return share


def gls_estimate(
    parents: Sequence[np.ndarray],
    noisy_levels: Sequence[np.ndarray],
    level_variances: Sequence[float],
    root_known: float | None,
) -> tuple[np.ndarray, ...]:
    """The BLUE of every node's count from noisy counts of every level (float, consistent).

    ``level_variances``: the noise variance of each level 0..L, in squared counts (``inf`` for a
    level not released; the root's entry is ignored when ``root_known`` is given, e.g. 0). ``root_known``: the exact root
    ``N`` (``change``) or ``None`` (``addremove``: the root is estimated). Two passes, ``O(n)``.
    Sums are exact consistent in real arithmetic (float rounding aside); values may be negative.
    """
    checked, sizes = _check_parents(parents)
    levels = _check_levels(noisy_levels, sizes)
    var = _check_variances(level_variances, sizes, root_known is not None)
    if root_known is not None:
        root_value = float(root_known)
        if not np.isfinite(root_value):
            raise ParameterError("the known root is not finite", "pass the public count N")
    z, V, a, starts_of = _bottom_up(checked, sizes, levels, var, root_known, root_known is not None)
    h = [z[0].copy()]
    for level, parent in enumerate(checked):
        starts = starts_of[level]
        S = np.add.reduceat(z[level + 1], starts)
        share = _split_shares(V[level + 1], a[level + 1], parent, starts)
        h.append(z[level + 1] + share * (h[level] - S)[parent])
    return tuple(h)


def gls_node_variances(
    parents: Sequence[np.ndarray], level_variances: Sequence[float], root_known: bool
) -> tuple[np.ndarray, ...]:
    """The exact variance of each node's GLS estimate (levels 0..L, float).

    Same arguments as :func:`gls_estimate` (no data needed: the variance does not depend on it).
    Nodes the measurements do not determine (below the lowest measured level) get ``inf``.
    """
    checked, sizes = _check_parents(parents)
    var = _check_variances(level_variances, sizes, bool(root_known))
    _, V, a, starts_of = _bottom_up(checked, sizes, None, var, None, bool(root_known))
    out = [V[0].copy()]
    for level, parent in enumerate(checked):
        starts = starts_of[level]
        VS = np.add.reduceat(V[level + 1], starts)
        A = np.add.reduceat(a[level + 1], starts)
        Vc = V[level + 1]
        gain = np.where(A[parent] > 0, 0.0, Vc / np.where(VS[parent] > 0, VS[parent], 1.0))
        child = Vc + gain**2 * (out[level][parent] - VS[parent])
        out.append(np.where(a[level + 1] > 0, np.inf, child))
    return tuple(out)


def gls_consistent(
    parents: Sequence[np.ndarray],
    noisy_levels: Sequence[np.ndarray],
    level_variances: Sequence[float],
    root_known: float | None,
) -> tuple[np.ndarray, ...]:
    """GLS, then the top-down integer step: non-negative int64 counts, every parent = sum of
    its children. The root is ``root_known`` (an integer ``N``) or ``max(0, round(GLS root))``."""
    checked, sizes = _check_parents(parents)
    if root_known is not None:
        root = _check_total(root_known, "the known root N")
    estimate = gls_estimate(checked, noisy_levels, level_variances, root_known)
    if root_known is None:
        root = _check_total(max(0, int(np.round(estimate[0][0]))), "the estimated root")
    return _topdown(checked, sizes, list(estimate), root)
