"""Exact error projections of a plan, before any budget is spent (no Monte Carlo).

Both estimators are unbiased and linear in the node noise, so the expected squared error of a
cumulative count ``Ĉ_j`` is its variance, computed exactly from the per-level noise variances:

* covering sum (paper 000 eq. 5): ``Var Ĉ_j = Σ_l d_l(j)·v_l`` with ``d_l(j)`` the covering digits.
* GLS (BLUE over the whole tree): with precisions ``w_l = 1/v_l`` and ``s_l`` leaves per level-l
  node, the information matrix ``Σ_l w_l B_l`` is diagonal in the tree's Haar basis: the space of
  vectors on an internal level-m node, constant on its children and summing to 0, has eigenvalue
  ``λ_m = Σ_{l>m} w_l s_l``; the constant vector has ``λ_c = Σ_l w_l s_l`` (∞ when the root is
  public). So for any query q, ``Var qᵀx̂ = Σ_v ‖P_v q‖²/λ_v + (qᵀ1)²/(K̄ λ_c)``; for a prefix only
  the ≤ h boundary nodes contribute (docs/design.md, "Exact projections").

Under the change model the last real leaf is the count of missing values (docs/design.md
"Missing values"), so ``Ĉ_{K+1} = N`` is public and has variance 0; prefixes run over the tree's
real leaves (``shape.leaves``). Units: counts² (divide by N² for
the CDF). Per-prefix arrays cost O(K·h), their maximum alone O(K̄); the closed-form totals cost O(h).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Sequence

import numpy as np

from dpgui.core.plan import Plan
from dpgui.core.tree import TreeShape


@dataclass(frozen=True)
class Projection:
    """Exact expected squared errors of the released cumulative counts (before consistency)."""

    total_sq_error: float  # Σ_j E(Ĉ_j − C_j)², counts²
    max_variance: float  # max_j E(Ĉ_j − C_j)², counts²
    mean_sq_error: float  # total / K

    def to_json(self, n: int | None = None) -> dict[str, Any]:
        from dpgui.core.quantiles import noise_margin  # (quantiles imports this module)

        out: dict[str, Any] = {
            "total_sq_error": self.total_sq_error,
            "max_variance": self.max_variance,
            "max_std_error": float(np.sqrt(self.max_variance)),
            "rms_error": float(np.sqrt(self.mean_sq_error)),
            "max_margin95": float(noise_margin(np.sqrt(self.max_variance))),
        }
        if n:
            out["cdf_total_sq_error"] = self.total_sq_error / n**2
            out["cdf_max_std_error"] = float(np.sqrt(self.max_variance)) / n
        return out


def _precisions(variances: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(np.isinf(variances), 0.0, 1.0 / np.where(variances == 0, np.inf, variances))


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


def prefix_basis(shape: TreeShape, estimator: str, released: Sequence[bool], prefixes: np.ndarray) -> np.ndarray:
    """The part of Var(Ĉ_j) that depends on the tree alone, one row per prefix length j: the
    covering digits ``d_l(j)`` of the released levels (covering sum, len × (h+1)) or the GLS
    boundary terms ``‖P_v q_j‖²`` (GLS, len × h). Input of :func:`prefix_variances_from_basis`.
    O(len·h)."""
    if estimator == "covering":
        return shape.covering_digits(prefixes, released).astype(float)
    return _gls_boundary_terms(shape, prefixes)


def prefix_variances_from_basis(shape: TreeShape, estimator: str, basis: np.ndarray, variances: np.ndarray,
                                prefixes: np.ndarray, root_public: bool) -> np.ndarray:
    """Exact Var(Ĉ_j) for the prefix lengths j of ``basis`` (:func:`prefix_basis`, same estimator,
    same released levels) given the per-level noise ``variances`` (0 for a public root, inf for an
    unreleased level). Under ``root_public`` the last real leaf's prefix is N: variance 0. O(len·h)."""
    if estimator == "covering":
        out = basis @ np.where(np.isinf(variances), 0.0, variances)
    else:
        lam, lam_c = gls_eigenvalues(shape, variances)
        out = basis @ (1.0 / lam)
        if np.isfinite(lam_c):
            out = out + (prefixes.astype(float) ** 2) / (shape.padded_bins * lam_c)
    if root_public:
        out = np.where(prefixes == shape.leaves, 0.0, out)
    result: np.ndarray = np.maximum(out, 0.0)
    return result


def prefix_variances(plan: Plan, prefixes: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """Exact Var(Ĉ_j) for prefix lengths j (default 1..leaves: K, or K+1 with the missing leaf) of the
    plan's estimator. O(len·h)."""
    shape = plan.shape
    j = np.arange(1, shape.leaves + 1, dtype=np.int64) if prefixes is None else np.asarray(prefixes, dtype=np.int64)
    basis = prefix_basis(shape, plan.estimator, plan.released(), j)
    return prefix_variances_from_basis(shape, plan.estimator, basis, plan.level_variances(), j, plan.privacy.root_public)


def project(plan: Plan) -> Projection:
    """Exact total and worst squared error over the released cumulative counts (the mean is over the
    K value bins; under change prefix K+1 = N adds 0): :func:`total_sq_error` (O(h)) and
    :func:`max_prefix_variance` (O(K̄)); the same figures as the sum and maximum of
    :func:`prefix_variances`, up to float rounding."""
    total = total_sq_error(plan)
    return Projection(total, max_prefix_variance(plan), total / plan.shape.bins)


def max_prefix_variance(plan: Plan) -> float:
    """``prefix_variances(plan).max()`` exactly, in O(K̄) time and O(K̄/n_1) memory (n_1: the root's
    branching): a few passes over K̄ numbers instead of about 4h passes over K·h.

    Var Ĉ_j is a sum of one term per level m < h that depends on r = j mod s_m only: for GLS
    ``‖P_v q_j‖²/λ_m`` (:func:`_gls_boundary_terms`), for the covering sum ``v_l·(r // s_l)`` for the
    released level l below (:meth:`TreeShape.covering_digits`). So the sum of the terms of levels ≥ m,
    for every r < s_m, is the table of level m+1 tiled n_{m+1} times plus level m's term: built from the
    leaves up, each table is s_m long, and the root's K̄ entries are only scanned, in blocks, for their
    maximum."""
    shape = plan.shape
    s = shape.leaves_per_node
    variances = plan.level_variances()
    # Per level, top first: (child, p, q, c) for its term p·(r // child) + q·(r mod child)² + c·r², r = j mod
    # (its node size), child = leaves per child node (per node of the next level in the chain).
    links: list[tuple[int, float, float, float]] = []
    if plan.estimator == "covering":
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
    last = last_prefix(shape, plan.privacy.root_public)  # later prefixes have variance 0 (N public)
    table = np.zeros(bottom)  # the terms of the levels below, for every r < the table's length
    for k in range(len(links) - 1, -1, -1):
        child, per_child, per_rest, per_square = links[k]
        rho = np.arange(child, dtype=float)
        within = table + per_rest * rho * rho if per_rest else table
        square = per_square + (root_square if k == 0 else 0.0)
        # rows: the child r // child; columns: r mod child. The root's table is only scanned for its
        # maximum over the prefixes 1..min(last, K̄−1), a block of rows at a time.
        count = links[k - 1][0] // child if k else -(-min(last + 1, s[0]) // child)
        rows = count if k else max(1, 2**16 // child)
        worst = 0.0
        for start in range(0, count, rows):
            index = np.arange(start, min(start + rows, count), dtype=float)
            grid = within[np.newaxis, :] + (per_child * index)[:, np.newaxis]
            if square:
                r = rho[np.newaxis, :] + (child * index)[:, np.newaxis]
                grid += square * r * r
            table = grid.ravel()
            if not k:
                first = start * child  # prefix of table[0]
                worst = max(worst, float(table[max(1 - first, 0):min(last, s[0] - 1) + 1 - first].max(initial=0.0)))
    if last >= s[0]:  # prefix K̄ (no padding, N private): its digits wrap around, take it as it is
        worst = max(worst, float(prefix_variances(plan, [s[0]])[0]))
    return worst


# ---------------------------------------------------------------- closed-form totals, O(h)
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


def _gls_block_sum(upto: int, child: int, b: int) -> float:
    """G(R) = Σ_{r<R} g(r), g(r) = c·(r//c) + (r mod c)²/c − r²/(c·b), exactly in integers then /c."""
    f_full, partial = divmod(upto, child)
    s1 = child * f_full * (f_full - 1) // 2 + f_full * partial  # Σ r//c
    s2 = f_full * (child - 1) * child * (2 * child - 1) // 6 + (partial - 1) * partial * (2 * partial - 1) // 6
    s3 = (upto - 1) * upto * (2 * upto - 1) // 6
    # c·s1 + s2/c − s3/(c b) with one division at the end
    return (child * child * b * s1 + b * s2 - s3) / (child * b)


def last_prefix(shape: TreeShape, root_public: bool) -> int:
    """Largest prefix whose error counts: the last real leaf's prefix is N, exact when N is public
    (so K with the missing leaf, K−1 for a tree without it), else every real leaf's."""
    return shape.leaves - 1 if root_public else shape.leaves


def gls_total_coefficients(shape: TreeShape, root_public: bool) -> tuple[np.ndarray, float]:
    """(A_m, A_c) with Σ_j Var Ĉ_j = Σ_m A_m/λ_m + A_c/λ_c over prefixes 1..J. O(h)."""
    upto = last_prefix(shape, root_public) + 1  # prefixes 0..J (prefix 0 contributes 0)
    s = shape.leaves_per_node
    coeffs = np.empty(shape.height)
    for m in range(shape.height):
        q, r = divmod(upto, s[m])
        coeffs[m] = q * _gls_block_sum(s[m], s[m + 1], shape.branching[m]) + _gls_block_sum(r, s[m + 1], shape.branching[m])
    j_max = upto - 1
    const = (j_max * (j_max + 1) * (2 * j_max + 1) // 6) / shape.padded_bins
    return coeffs, const


def covering_total_coefficients(shape: TreeShape, released: Sequence[bool], root_public: bool) -> np.ndarray:
    """D_l = Σ_j d_l(j) over prefixes 1..J, so Σ_j Var Ĉ_j = Σ_l D_l v_l. O(h)."""
    upto = last_prefix(shape, root_public) + 1
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


def total_coefficients(shape: TreeShape, estimator: str, released: Sequence[bool],
                       root_public: bool) -> tuple[np.ndarray, float]:
    """The part of Σ_j Var Ĉ_j that depends on the tree alone: ``(D_l, 0)`` of
    :func:`covering_total_coefficients` for the covering sum, ``(A_m, A_c)`` of
    :func:`gls_total_coefficients` for GLS. Input of :func:`total_from_coefficients`. O(h)."""
    if estimator == "covering":
        return covering_total_coefficients(shape, released, root_public), 0.0
    return gls_total_coefficients(shape, root_public)


def total_from_coefficients(shape: TreeShape, estimator: str, coefficients: tuple[np.ndarray, float],
                            variances: np.ndarray) -> float:
    """Σ_j Var Ĉ_j, counts², from :func:`total_coefficients` (same estimator, same released levels)
    and the per-level noise ``variances`` (0 for a public root, inf for an unreleased level). O(h)."""
    coeffs, const = coefficients
    if estimator == "covering":
        return float(coeffs @ np.where(np.isinf(variances), 0.0, variances))
    lam, lam_c = gls_eigenvalues(shape, variances)
    return float(coeffs @ (1.0 / lam) + (const / lam_c if np.isfinite(lam_c) else 0.0))


def total_sq_error(plan: Plan) -> float:
    """Σ_j Var Ĉ_j in O(h) (equals ``project(plan).total_sq_error``)."""
    coefficients = total_coefficients(plan.shape, plan.estimator, plan.released(), plan.privacy.root_public)
    return total_from_coefficients(plan.shape, plan.estimator, coefficients, plan.level_variances())


# ---------------------------------------------------------------- range counts
def interval_variance(plan: Plan, start: int, stop: int) -> float:
    """Exact Var(Ĉ_stop − Ĉ_start) of the estimator, prefixes 0 ≤ start < stop ≤ leaves (Ĉ_0 = 0)."""
    shape = plan.shape
    if not 0 <= start < stop <= shape.leaves:
        raise ValueError("need 0 <= start < stop <= leaves")
    if start == 0:
        return float(prefix_variances(plan, [stop])[0])
    if stop == shape.leaves and plan.privacy.root_public:
        return float(prefix_variances(plan, [start])[0])
    variances = plan.level_variances()
    s = shape.leaves_per_node
    if plan.estimator == "covering":
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
    return float(total)
