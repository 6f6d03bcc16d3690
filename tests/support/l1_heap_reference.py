"""The package's former ℓ1 consistency solver, a weighted slope trick on a heap, kept as a
reference oracle for tests/unit/core/test_core_consistency_l1.py and benchmarks/bench_consistency.py
(timed against its replacement), verbatim. O(K log K) with a Python loop of K steps.
"""

from __future__ import annotations

import heapq

import numpy as np


def _l1_integer_unbounded(y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Integer minimiser of ``sum_k w_k |x_k - y_k|`` over nondecreasing integer ``x`` (no bounds).

    Weighted slope trick. ``M_k(v) = min_{u <= v} D_k(u)`` with ``D_k = w_k|. - y_k| + M_{k-1}``
    is convex, nonincreasing and piecewise linear with integer breakpoints; it is stored as a
    max-heap of breakpoints plus their slope increments. Adding ``w|x - y|`` (split into ``⌊y⌋``
    with weight ``(1-θ)w`` and ``⌊y⌋+1`` with weight ``θw``) adds slope ``+w`` at ``+inf``;
    taking the prefix minimum removes that slope from the largest breakpoints. The top
    breakpoint is then an argmin ``a_k`` of ``D_k``, and the backtrack is ``x_K = a_K``,
    ``x_k = min(x_{k+1}, a_k)``. ``O(K log K)``.

    Breakpoints are handled by their rank among the (sorted, distinct) candidate values
    ``{⌊y_k⌋, ⌊y_k⌋ + 1}`` so slope increments live in a flat list of length ``<= 2K``;
    rank(⌊y⌋ + 1) = rank(⌊y⌋) + 1 because no integer lies strictly between them.
    """
    k = y.size
    floors = np.floor(y)
    theta = y - floors
    values = np.unique(np.concatenate((floors, floors + 1.0)))
    top_rank = values.size - 1
    # heap key q = top_rank - rank: heapq's min-heap on q is a max-heap on the breakpoint
    q_lo = (top_rank - np.searchsorted(values, floors)).tolist()  # key of floor(y)
    wk_arr = np.ones(k) if w is None else w
    lo_w = (2.0 * (1.0 - theta) * wk_arr).tolist()
    hi_w = (2.0 * theta * wk_arr).tolist()
    tol = 1e-12 * float(np.max(wk_arr))
    slope = [0.0] * values.size  # slope increment at each key; 0.0 = not in the heap
    heap: list[int] = []  # each key with positive slope increment appears exactly once
    argmin_q: list[int] = []
    push = heapq.heappush
    pop = heapq.heappop
    record = argmin_q.append
    for q, a, b, rem in zip(q_lo, lo_w, hi_w, wk_arr.tolist()):
        if not heap or q <= heap[0]:
            # Fast path: floor(y) >= every existing breakpoint, so the prefix minimum removes
            # the w of slope from the two new breakpoints only: floor(y)+1 keeps 2θw - w if
            # positive, and floor(y) keeps the rest (2(1-θ)w, or w when θ <= 1/2).
            if b <= rem + tol:
                s = slope[q]
                if s == 0.0:
                    push(heap, q)
                slope[q] = s + rem
                record(q)
            else:
                s = slope[q]
                if s == 0.0:
                    push(heap, q)
                slope[q] = s + a
                q1 = q - 1  # strictly above every breakpoint: not yet in the heap
                push(heap, q1)
                slope[q1] = b - rem
                record(q1)
            continue
        if a > 0.0:  # breakpoint at floor(y), slope change 2(1-θ)w
            s = slope[q]
            if s == 0.0:
                push(heap, q)
            slope[q] = s + a
        if b > 0.0:  # breakpoint at floor(y)+1, slope change 2θw
            q1 = q - 1
            s = slope[q1]
            if s == 0.0:
                push(heap, q1)
            slope[q1] = s + b
        # prefix minimum: remove total slope w from the right end (rem starts at w)
        while True:
            p = heap[0]
            s = slope[p]
            if s > rem + tol:
                slope[p] = s - rem
                break
            rem -= s
            slope[p] = 0.0
            pop(heap)
            if rem <= tol:
                break
        # 2w of slope was added and w removed, so the heap is nonempty
        record(heap[0])
    # backtrack x_k = min(x_{k+1}, a_k): a reversed running minimum of ranks (maximum of keys)
    best_q = np.maximum.accumulate(np.asarray(argmin_q, dtype=np.int64)[::-1])[::-1]
    result: np.ndarray = values[top_rank - best_q].astype(np.int64)
    return result


def heap_l1(y: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    """The former ``consistent_l1``: clip y to [-1, N+1], solve unbounded, clip to [0, N], x_K = N."""
    y = np.asarray(y, dtype=np.float64)
    out = np.empty(y.size, dtype=np.int64)
    out[-1] = n
    if y.size > 1:
        yc = np.clip(y[:-1], -1.0, n + 1.0)
        out[:-1] = np.clip(_l1_integer_unbounded(yc, None if weights is None else weights[:-1]), 0, n)
    return out
