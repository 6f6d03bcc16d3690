"""Post-processing noisy cumulative counts into a consistent (integer, monotone) CDF.

Problem (Rameshwar, Tandon & Sharma, "Optimal tree-based mechanisms for DP approximate CDFs",
Section VI, problem (O^c)): given real ``y_1..y_K`` (noisy cumulative counts) and the public
integer total ``N >= 0``, find integers ``0 <= x_1 <= ... <= x_K = N`` minimising

    sum_{k<K} w_k * loss(x_k - y_k)

(``y_K`` is ignored because ``x_K = N`` is fixed; ``w_k = 1`` unless weights are given).

Fixing ``x_K = N`` is the same as dropping element K and imposing ``x_k <= N``, so this is bounded
integer isotonic regression on the first K-1 elements. For a convex separable loss the *threshold
theorem* (Hochbaum & Queyranne 2003; Ahuja & Orlin 2001) applies: writing
``f(x) = const + sum_t sum_{k: x_k > t} c_k(t)`` with ``c_k(t) = f_k(t+1) - f_k(t)`` nondecreasing in
``t``, the optimal upper sets of the per-threshold problems are nested, so an integer optimum is
assembled threshold by threshold; bounds only force the thresholds outside ``[0, N)``, hence
"optimal bounded = clip(optimal unbounded)".

* :func:`consistent_l2` -- squared loss, ``O(K)``: ``c_k(t) = 2 w_k (t + 1/2 - y_k)`` is twice the
  continuous threshold cost at level ``t + 1/2``, whose solution is ``{k : PAVA(y)_k >= t + 1/2}``;
  so ``x = round_half_up(clip(PAVA(y[:-1]), 0, N))`` followed by ``N``.
* :func:`consistent_l1` -- absolute loss, ``O(K log K)``: for integer ``x``,
  ``|x - y| = (1-θ)|x - ⌊y⌋| + θ|x - ⌊y⌋ - 1|`` with ``θ = frac(y)``, turning the problem into a
  weighted L1 isotonic regression with *integer* data, which has an optimum among the data values;
  it is solved exactly by dividing the candidate values in halves, one threshold problem per
  segment, all segments of a recursion level in one numpy pass. (Rounding the continuous L1 fit
  is *not* optimal: ``y = [4.26, 2.48, 4]``, ``N = 4`` gives cost 2.74 instead of 1.78.)
* :func:`trellis_consistency` -- the paper's trellis dynamic program (equations (8)-(10)),
  ``O(K N^2)`` time, for any additive loss; kept as the reference oracle for tests and benchmarks.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

from dpgui.errors import ParameterError
from dpgui.vocabulary import CdfConsistency

__all__ = [
    "consistent_l2",
    "consistent_l1",
    "trellis_consistency",
    "consistency_objective",
    "make_consistent",
]

#: Largest total accepted: every integer up to 2**53 is exact in float64.
_MAX_TOTAL = 2**53

#: The trellis oracle allocates an (N+1) x (N+1) float64 matrix; refuse beyond ~2 GiB.
_MAX_TRELLIS_CELLS = 2**28

#: ℓ1 keys and ranks (< 8K) fit int32 below this many free bins.
_L1_INT32_MAX_K = 2**27

LossSpec = str | Callable[[np.ndarray], np.ndarray]


# ----------------------------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------------------------


def _check_y(y: object) -> np.ndarray:
    arr = np.asarray(y)
    if arr.dtype.kind not in "iuf":
        raise ParameterError(
            f"noisy counts y must be real numbers, got dtype {arr.dtype}",
            "pass a 1-D array of floats",
        )
    if arr.ndim != 1:
        raise ParameterError(
            f"noisy counts y must be 1-D, got shape {arr.shape}", "pass one value per bin"
        )
    if arr.size < 1:
        raise ParameterError("noisy counts y is empty (K < 1)", "pass at least one bin")
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ParameterError(
            "noisy counts y contain NaN or infinity", "pass finite values only"
        )
    return arr


def _check_total(total: object) -> int:
    if isinstance(total, (bool, np.bool_)) or not isinstance(total, numbers.Integral):
        raise ParameterError(
            f"total N must be an integer, got {total!r}", "pass the public record count as an int"
        )
    n = int(total)
    if n < 0:
        raise ParameterError(f"total N must be >= 0, got {n}", "pass a nonnegative count")
    if n > _MAX_TOTAL:
        raise ParameterError(
            f"total N = {n} exceeds 2**53", "counts this large are not exact in float64"
        )
    return n


def _check_weights(weights: object, k: int) -> np.ndarray | None:
    if weights is None:
        return None
    w = np.asarray(weights)
    if w.dtype.kind not in "iuf" or w.ndim != 1 or w.size != k:
        raise ParameterError(
            f"weights must be a 1-D array of {k} real numbers, got shape {w.shape}",
            "pass one positive weight per bin or None",
        )
    w = w.astype(np.float64, copy=False)
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ParameterError(
            "weights must be finite and strictly positive", "pass positive weights or None"
        )
    return w


def _prepare(
    y: object, total: object, weights: object
) -> tuple[np.ndarray, int, np.ndarray | None, np.ndarray]:
    """Validated (y, N, weights) and the int64 output array with its last entry fixed to N."""
    yy = _check_y(y)
    n = _check_total(total)
    w = _check_weights(weights, yy.size)
    out = np.empty(yy.size, dtype=np.int64)
    out[-1] = n
    return yy, n, w, out


def _loss_fn(loss: LossSpec) -> Callable[[np.ndarray], np.ndarray]:
    if callable(loss):
        return loss
    if loss == CdfConsistency.L2:
        return np.square
    if loss == CdfConsistency.L1:
        return np.abs
    raise ParameterError(
        f"unknown loss {loss!r}", "use 'l2', 'l1' or a vectorised callable of the residual x - y"
    )


# ----------------------------------------------------------------------------------------------
# objective
# ----------------------------------------------------------------------------------------------


def consistency_objective(
    x: np.ndarray, y: np.ndarray, loss: LossSpec = CdfConsistency.L2, weights: np.ndarray | None = None
) -> float:
    """Return ``sum_{k<K} w_k * loss(x_k - y_k)`` (the last bin, fixed to N, is excluded).

    ``loss`` is ``"l2"`` (squared), ``"l1"`` (absolute) or a vectorised callable applied to the
    residual array ``x - y``. ``weights`` defaults to all ones.
    """
    yy = _check_y(y)
    xx = np.asarray(x, dtype=np.float64)
    if xx.shape != yy.shape:
        raise ParameterError(
            f"x has shape {xx.shape} but y has shape {yy.shape}", "pass arrays of equal length"
        )
    w = _check_weights(weights, yy.size)
    fn = _loss_fn(loss)
    terms = np.asarray(fn(xx[:-1] - yy[:-1]), dtype=np.float64)
    if w is not None:
        terms = terms * w[:-1]
    return float(np.sum(terms))


# ----------------------------------------------------------------------------------------------
# fast exact methods
# ----------------------------------------------------------------------------------------------


def consistent_l2(y: np.ndarray, total: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Exact integer optimum of ``sum_{k<K} w_k (x_k - y_k)^2`` over consistent CDFs.

    Threshold theorem: the integer threshold cost ``2 w_k (t + 1/2 - y_k)`` equals twice the
    continuous one at level ``t + 1/2``, so ``x_k > t`` iff ``PAVA(y)_k >= t + 1/2``; bounds only
    clip. Hence ``x = floor(clip(PAVA(y[:-1]), 0, N) + 1/2)``, then ``x_K = N``.

    Complexity ``O(K)`` time and memory (scipy's PAVA). Returns an ``int64`` array of length K.
    """
    yy, n, w, out = _prepare(y, total, weights)
    if yy.size == 1:
        return out
    from scipy.optimize import (
        isotonic_regression,  # here: the window starts without SciPy (tests/system/test_architecture.py)
    )

    fit = isotonic_regression(yy[:-1], weights=None if w is None else w[:-1]).x
    out[:-1] = np.floor(np.clip(fit, 0.0, float(n)) + 0.5).astype(np.int64)
    # PAVA output is monotone; clip and floor are monotone, so out is nondecreasing already.
    return out


def _l1_bounded_integer(y: np.ndarray, w: np.ndarray | None, n: int) -> np.ndarray:
    """Least integer minimiser of ``sum_k w_k |x_k - y_k|`` over integers ``0 <= x_1 <= ... <= N``.

    Divide and conquer over candidate values (the threshold theorem), each recursion level in a
    few numpy passes. ``f_k(x) = w_k |x - y_k|`` has its integer breakpoints at ``⌊y_k⌋`` and
    ``⌊y_k⌋ + 1``; with ``V`` the sorted distinct values ``clip({⌊y_k⌋, ⌊y_k⌋ + 1}, 0, N)``, every
    ``f_k`` is linear between neighbours of ``V`` and monotone towards ``V`` outside them, so some
    optimum takes its values in ``V``, where each ``f_k`` is convex in the rank. For a rank ``r``,
    ``{k : x_k > v_r}`` is a suffix ``{k >= j}`` for monotone ``x``, and its threshold cost
    ``sum_{k>=j} f_k(v_{r+1}) - f_k(v_r)`` is ``v_{r+1} - v_r > 0`` times
    ``sum_{k>=j} w_k c_k`` with ``c_k = +1/2`` if ``y_k <= v_r``, ``-1/2`` if ``y_k >= v_r + 1``,
    else ``1/2 - frac(y_k)``. If ``j*`` minimises it, some optimum has ``x_k <= v_r`` before
    ``j*`` and ``x_k > v_r`` from ``j*`` on (exchange: moving an optimum to that split changes its
    cost by the gain at threshold ``r``, ``<= 0``, plus, at every other threshold, a term that the
    monotone threshold costs (convexity) and the optimality of ``j*`` over all suffixes make
    ``<= 0``). The two sides are then independent problems on the lower and upper half of the
    ranks, so ``ceil(log2 |V|)`` levels of bisection fix every ``x_k``.

    Each level bisects all segments at once: with ``P_j = sum_{i<j} w_i c_i`` the best suffix of
    segment ``[s, e)`` is ``argmax_{s<=j<=e} P_j`` (``np.maximum.reduceat``). Ties take the
    largest ``j`` (least upper set), so the result is the least optimum (as is the heap slope
    trick's, the tests' reference). ``P`` is the sum of the ``±w/2`` terms (an integer cumsum when
    unweighted: exact, and an order of magnitude faster than a float one) plus a step function of
    the few ``1/2 - frac(y)`` terms, so equal costs compare equal and only genuinely fractional
    near-ties meet float rounding.
    ``O(K log |V|)`` time with ``|V| <= 2K``, ``O(K)`` memory.
    """
    k = y.size
    floors = np.floor(y)
    inside_cost = 0.5 - (y - floors)  # c_k when v_r < y_k < v_r + 1 (then v_r = ⌊y_k⌋)
    values, rank_floor = _candidate_values(floors, n)
    top = values.size - 1  # rank thresholds 0..top-1 are real; x_k > values[top] is infeasible
    depth = top.bit_length()  # ranks are bisected as the bits of a depth-bit number
    # key_k against 2r + 1 classifies y_k at threshold v_r: key <= 2r: y <= v_r; key = 2r + 1:
    # v_r < y < v_r + 1; key >= 2r + 2: y >= v_r + 1 (y < 0 lies below every threshold).
    # int32 halves the memory traffic of the per-level passes; keys and ranks stay below 8K
    itype = np.int32 if k < _L1_INT32_MAX_K else np.int64
    key = (2 * rank_floor + (y > floors)).astype(itype)
    key[y < 0.0] = 0
    del floors, rank_floor
    half_w = None
    if w is not None:
        inside_cost *= w
        half_w = 0.5 * w
    # Segments of equal rank prefix: contiguous since x is monotone. prefix[i] holds the bits
    # decided so far for every element of the segment starting at starts[i].
    starts = np.zeros(1, dtype=np.int64)
    prefix = np.zeros(1, dtype=np.int64)
    sign_sum = np.zeros(k + 1, dtype=itype)
    psum = np.zeros(k + 1)  # psum[j] = P_j; the suffix cost from j is psum[k] - psum[j]
    # (The per-level passes use array methods and interleaving by slices rather than np.repeat/np.stack/
    # np.clip/np.append: the same arrays with less call overhead, which dominates at small K.)
    for level in range(depth):
        shift = depth - level - 1
        ends = np.empty_like(starts)
        ends[:-1] = starts[1:]
        ends[-1] = k
        lengths = ends - starts
        rank = ((2 * prefix + 1) << shift) - 1  # the last rank of each segment's lower half
        sign = (2 * rank + 1).astype(itype).repeat(lengths) - key
        np.sign(sign, out=sign)  # 2 c_k outside (±1), 0 inside (integers: the sign is the clip to [-1, 1])
        _prefix_costs(sign, half_w, inside_cost, sign_sum, psum)
        split = _best_splits(psum, starts, ends, lengths, rank < top)
        starts, prefix = _halve_segments(starts, prefix, split, ends)
    ends = np.append(starts[1:], k)
    result: np.ndarray = np.repeat(values[prefix], ends - starts)
    return result


def _candidate_values(floors: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``V``, the sorted distinct values ``clip({⌊y_k⌋, ⌊y_k⌋ + 1}, 0, N)`` (int64), and the rank in
    ``V`` of each ``clip(⌊y_k⌋, 0, N)``. ``O(N + K)`` by marking when ``N <= 4K``, else ``O(K log K)``."""
    lows = np.clip(floors, 0.0, float(n)).astype(np.int64)
    highs = np.clip(floors + 1.0, 0.0, float(n)).astype(np.int64)
    if n <= 4 * floors.size:  # a mark per integer in [0, N] is cheaper than sorting 2K values
        present = np.zeros(n + 1, dtype=bool)
        present[lows] = True
        present[highs] = True
        values = np.flatnonzero(present)
        rank_floor = (np.cumsum(present) - 1)[lows]
        del present
    else:
        values = np.unique(np.concatenate((lows, highs)))
        rank_floor = np.searchsorted(values, lows)
    return values, rank_floor


def _prefix_costs(sign: np.ndarray, half_w: np.ndarray | None, inside_cost: np.ndarray, sign_sum: np.ndarray,
                  psum: np.ndarray) -> None:
    """Fill ``psum`` (length K + 1, in place) with ``P_j = sum_{i<j} w_i c_i`` at one bisection level:
    the ``±w/2`` terms from ``sign`` (an integer cumsum in ``sign_sum`` when unweighted) plus the step
    function of the ``inside_cost`` terms where ``sign`` is 0."""
    k = sign.size
    if half_w is None:
        np.cumsum(sign, out=sign_sum[1:])
        np.multiply(sign_sum, 0.5, out=psum)
    else:
        np.cumsum(sign * half_w, out=psum[1:])
    inside = np.flatnonzero(sign == 0)
    if inside.size:  # add the step function sum_{i in inside, i < j} inside_cost_i
        steps = np.cumsum(inside_cost[inside])
        psum[inside[0] + 1:] += np.repeat(steps, np.diff(np.append(inside, k)))


def _best_splits(psum: np.ndarray, starts: np.ndarray, ends: np.ndarray, lengths: np.ndarray,
                 real: np.ndarray) -> np.ndarray:
    """Per segment ``[s, e)``, the start of its best suffix: the largest ``argmax_{s<=j<e} P_j`` where that
    beats ``P_e`` and the segment's threshold is ``real``, else ``e`` (every element takes the lower half)."""
    k = psum.size - 1
    best = np.maximum.reduceat(psum[:k], starts)  # over j in [s, e); j = e compared below
    hits = np.flatnonzero(psum[:k] == best.repeat(lengths))
    last_hit = hits[np.searchsorted(hits, ends) - 1]  # largest argmax inside [s, e)
    split: np.ndarray = np.where(real & (best > psum[ends]), last_hit, ends)
    return split


def _halve_segments(starts: np.ndarray, prefix: np.ndarray, split: np.ndarray, ends: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The next level's segments and rank prefixes: ``[s, split)`` takes bit 0 and ``[split, e)`` bit 1;
    empty halves are dropped, order is kept."""
    keep = np.empty(2 * starts.size, dtype=bool)
    keep[0::2], keep[1::2] = split > starts, split < ends
    halves = np.empty(2 * starts.size, dtype=np.int64)
    halves[0::2], halves[1::2] = starts, split
    new_starts = halves[keep]
    halves[0::2], halves[1::2] = 2 * prefix, 2 * prefix + 1
    return new_starts, halves[keep]


def consistent_l1(y: np.ndarray, total: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Exact integer optimum of ``sum_{k<K} w_k |x_k - y_k|`` over consistent CDFs.

    For integer x, ``|x - y| = (1-θ)|x - ⌊y⌋| + θ|x - ⌊y⌋ - 1|`` (``θ = frac(y)``), so this is
    weighted L1 isotonic regression with integer data, solved exactly by a divide and conquer on
    the threshold problems (see ``_l1_bounded_integer``); of several optima the least is
    returned. Rounding the continuous L1 fit is NOT optimal in general.

    Complexity ``O(K log K)`` time in about ``log2(2K)`` vectorised passes, ``O(K)`` memory.
    Returns an ``int64`` array of length K.
    """
    yy, n, w, out = _prepare(y, total, weights)
    if yy.size == 1:
        return out
    out[:-1] = _l1_bounded_integer(yy[:-1], None if w is None else w[:-1], n)
    return out


# ----------------------------------------------------------------------------------------------
# trellis oracle (paper, Section VI)
# ----------------------------------------------------------------------------------------------


def trellis_consistency(
    y: np.ndarray,
    total: int,
    loss: LossSpec = CdfConsistency.L2,
    *,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """The paper's trellis dynamic program, eqs. (8)-(10); returns ``(x, objective)``.

    Stages ``V_1..V_{K-1} = {0..N}``, ``V_0 = {root}``, ``V_K = {toor}`` (= N); edges ``v -> v'``
    with ``v <= v'``; the edge leaving node ``v`` of stage ``i`` costs ``w_i * loss(v - y_i)``.
    Backward pass ``α(v, i) = w_i loss(v - y_i) + min_{v' >= v} α(v', i+1)`` with the argmin
    ``ι(v, i)`` stored, then forward ``h_1 = ι(root, 0)``, ``h_i = ι(h_{i-1}, i-1)``, ``h_K = N``.

    The stage-wise ``min over v' >= v`` is evaluated literally as an ``(N+1) x (N+1)`` masked
    matrix per stage (vectorised with numpy), so time is ``O(K N^2)`` and memory
    ``O(N^2 + K N)``. Works for any additive loss (``"l2"``, ``"l1"`` or a vectorised callable of
    the residual, which need not be convex). Intended as a test/benchmark oracle; use
    :func:`consistent_l2` / :func:`consistent_l1` in production.
    """
    yy = _check_y(y)
    n = _check_total(total)
    w = _check_weights(weights, yy.size)
    fn = _loss_fn(loss)
    k = yy.size
    x = np.empty(k, dtype=np.int64)
    x[-1] = n
    if k == 1:
        return x, 0.0
    if (n + 1) ** 2 > _MAX_TRELLIS_CELLS:
        raise ParameterError(
            f"total N = {n} is too large for the O(K N^2) trellis",
            "use consistent_l2 or consistent_l1",
        )
    m = k - 1  # number of free stages V_1..V_{K-1}
    v = np.arange(n + 1, dtype=np.float64)
    # penalty[v, v'] = 0 if v' >= v (edge exists) else +inf
    penalty = np.where(v[None, :] >= v[:, None], 0.0, np.inf)
    rows = np.arange(n + 1)
    buf = np.empty((n + 1, n + 1), dtype=np.float64)
    iota = np.empty((m, n + 1), dtype=np.int32 if n < 2**31 - 1 else np.int64)

    def node_cost(i: int) -> np.ndarray:  # cost of leaving node v of stage i (1-based stage i)
        c = np.asarray(fn(v - yy[i - 1]), dtype=np.float64)
        if w is not None:
            c = c * w[i - 1]
        return c

    # stage K-1: every node connects to toor (v <= N always), α(toor, K) = 0
    alpha = node_cost(m)
    iota[m - 1, :] = n  # ι(v, K-1) = toor = N
    for i in range(m - 1, 0, -1):  # stages K-2 .. 1
        np.add(penalty, alpha[None, :], out=buf)
        idx = np.argmin(buf, axis=1)
        iota[i - 1, :] = idx
        alpha = node_cost(i) + buf[rows, idx]
    # root (stage 0): edges to every node of stage 1, edge cost 0
    h = int(np.argmin(alpha))
    objective = float(alpha[h])
    x[0] = h
    for i in range(1, m):  # h_{i+1} = ι(h_i, i)
        h = int(iota[i - 1, h])
        x[i] = h
    return x, objective


# ----------------------------------------------------------------------------------------------
# dispatcher
# ----------------------------------------------------------------------------------------------


def make_consistent(y: np.ndarray, total: int, method: str) -> np.ndarray:
    """Post-process noisy cumulative counts ``y`` with ``method`` in ``{"l2", "l1", "none"}``.

    ``"l2"``/``"l1"`` return the exact integer optimum (``int64``); ``"none"`` returns ``y`` as a
    float copy with the last entry set to ``total``. Unknown methods raise ``ParameterError``.
    """
    if method == CdfConsistency.L2:
        return consistent_l2(y, total)
    if method == CdfConsistency.L1:
        return consistent_l1(y, total)
    if method == CdfConsistency.NONE:
        yy = _check_y(y)
        n = _check_total(total)
        out = np.array(yy, dtype=np.float64, copy=True)
        out[-1] = float(n)
        return out
    raise ParameterError(
        f"unknown consistency method {method!r}", f"use one of {', '.join(CdfConsistency)}"
    )
