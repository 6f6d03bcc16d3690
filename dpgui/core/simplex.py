"""Minimise a smooth function of a few budgets on a simplex: the planner's numerical budget split
(docs/engine.md, "Per-level budgets: the planner").

Hand-written rather than ``scipy.optimize.minimize`` (SLSQP, used before): importing ``scipy.optimize``
alone takes about 0.35 s, more than the whole 0.3 s that ``dpgui plan`` may take. The
problems are tiny (one budget per tree level, at most a few dozen) and smooth, so Newton's method with
finite-difference derivatives (the Hessian measured once per set of free variables, then updated by
BFGS) and an active set for the bounds converges in a few steps, and to a tighter optimum than SLSQP
did (it stopped about 1e-6 short in the budgets).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# Finite-difference steps in units of the total: ≈ ε_mach^{1/3} for central gradients (truncation and
# round-off errors balance at ~1e-11), larger for the Hessian, which Newton's method needs only roughly.
_GRADIENT_STEP = 6e-6
_FORWARD_STEP = 1.5e-8  # ≈ √ε_mach: a forward difference's errors balance at ~1e-8
_HESSIAN_STEP = 1e-4
# Below this Newton decrement (in units of f at the start) f's own rounding hides any decrease, so the
# last Newton step is taken without a line search: it moves the budgets by ~1e-8 at most.
_TINY_DECREMENT = 1e-13
# Forward differences cannot tell decrements much below this from their own error.
_SWITCH_DECREMENT = 1e-9
_ARMIJO = 1e-4


def minimise_on_simplex(fn: Callable[[np.ndarray], float], x0: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                        total: float, max_iter: int = 60) -> np.ndarray:
    """A minimum of ``fn`` over {x : Σ x = total, lower ≤ x ≤ upper}: the best of :func:`_descend` from
    the feasible ``x0``, then from the best of that result's variants with its first k variables at 0
    (k = 1…n−1, only variables with a lower bound of 0; the rest scaled up), then from the best result
    with a little of the total (1/(4n), 1/(16n)) moved to each variable it left at 0.

    Why several starts: with Laplace noise a level's precision grows as ε_l², so the error is flat in
    ε_l at 0 and the problem is not convex; a level is worth either a real share or nothing, the usual
    sparse optima drop the top levels (variables are ordered root first), and a descent may jump over
    a small share's basin. ``fn`` must be finite inside the box (it is evaluated only there). Never
    returns a point worse than ``x0``. O(n) evaluations of ``fn`` per step, O(n²) when the set of free
    variables changes; a handful of steps per start.
    """
    x0 = np.asarray(x0, dtype=float)
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    n = x0.size
    f0 = float(fn(x0))
    if n < 2 or not np.isfinite(f0):
        return np.array(x0)
    scale = f0 if f0 > 0 else 1.0

    def f(y: np.ndarray) -> float:
        return float(fn(y * total)) / scale

    lo, hi = lower / total, upper / total
    best_y, best_f = _descend(f, x0 / total, lo, hi, max_iter)
    sparse = [start for k in range(1, n) if (start := _sparse_start(k, best_y, lo, hi)) is not None]
    if sparse:
        y, fy = _descend(f, sparse[int(np.argmin([f(start) for start in sparse]))], lo, hi, max_iter)
        if fy < best_f:
            best_y, best_f = y, fy
    # A variable left at 0 may still deserve a share whose basin the descent jumped over: restart with a
    # little of the total moved to it.
    restarts = [_moved_to(best_y, int(i), share / n) for i in np.flatnonzero((best_y <= 0) & (lo == 0))
                for share in (0.25, 0.0625)]
    for start in restarts:
        if np.all(start >= lo) and np.all(start <= hi):
            y, fy = _descend(f, start, lo, hi, max_iter)
            if fy < best_f:
                best_y, best_f = y, fy
    return best_y * total


def _moved_to(y: np.ndarray, i: int, share: float) -> np.ndarray:
    """``y`` (Σ y = 1) with ``share`` given to variable ``i`` and the others scaled down to make room."""
    moved = y * (1.0 - share)
    moved[i] += share
    return moved


def _sparse_start(k: int, base: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray | None:
    """``base`` (Σ = 1) with its first ``k`` variables at 0 and the rest scaled up to sum to 1, or None if
    a bound forbids it."""
    rest = float(base[k:].sum())
    if np.any(lo[:k] > 0) or rest <= 0:
        return None
    y = np.concatenate([np.zeros(k), base[k:] / rest])
    return y if np.all(y >= lo) and np.all(y <= hi) else None


def _descend(f: Callable[[np.ndarray], float], y: np.ndarray, lo: np.ndarray, hi: np.ndarray,
             max_iter: int) -> tuple[np.ndarray, float]:
    """Projected Newton from the feasible ``y`` (Σ y = 1): on the variables off their bounds, the Newton
    step within Σ y = 1 of a Hessian measured by finite differences and then updated by BFGS (eigenvalues
    made positive, so every step descends), with backtracking and a stop at the first bound reached. At
    a stationary point, a variable at a bound is freed when the gradient says moving it off lowers f.
    Returns (y, f(y)), f(y) ≤ f(start)."""
    n = y.size
    at_lo, at_hi = y <= lo, y >= hi
    fy = f(y)
    precise = False  # forward differences (n evaluations) until near the optimum, then central ones
    # The reduced Hessian of the last free set, with the point and reduced gradient it was last used at:
    # measured by finite differences for a new free set, then updated by BFGS from the gradients.
    kept: tuple[tuple[int, ...], np.ndarray, np.ndarray, np.ndarray, bool] | None = None
    for _ in range(max_iter):
        g = _gradient(f, y, fy, lo, hi, precise)
        free = ~(at_lo | at_hi)
        if not free.any():
            break
        room = np.where(free, np.minimum(y - lo, hi - y), -np.inf)
        pivot = int(np.argmax(room))  # the free variable farthest from its bounds absorbs Σ y = 1
        mu = g[pivot]  # the multiplier of Σ y = 1
        others = np.flatnonzero(free)
        others = others[others != pivot]
        decrement = 0.0
        step = np.zeros(n)
        if others.size:
            reduced = g[others] - mu
            key = (pivot, *others.tolist())
            if kept is None or kept[0] != key:
                hessian = _reduced_hessian(f, y, fy, others, pivot, hi)
            else:
                hessian = kept[1]
                if kept[4] == precise:
                    hessian = _bfgs(hessian, y[others] - kept[2], reduced - kept[3])
            kept = (key, hessian, y[others], reduced, precise)
            values, vectors = np.linalg.eigh(hessian)
            values = np.maximum(np.abs(values), max(float(np.abs(values).max()) * 1e-10, 1e-300))
            d = -vectors @ ((vectors.T @ reduced) / values)
            decrement = float(-reduced @ d)
            step[others] = d
            step[pivot] = -d.sum()
        if not precise and decrement <= _SWITCH_DECREMENT:
            precise = True
            continue
        if decrement <= _TINY_DECREMENT:
            gain = np.where(at_lo, mu - g, np.where(at_hi, g - mu, 0.0))
            if gain.max() > 1e-9:
                i = int(np.argmax(gain))
                at_lo[i] = at_hi[i] = False
                continue
            if decrement > 0:  # the last tiny Newton step, past the reach of a line search
                moved, _, _ = _advance(y, step, 1.0, lo, hi)
                value = f(moved)
                if value <= fy:
                    y, fy = moved, value
            break
        active = int(at_lo.sum() + at_hi.sum())
        y, fy, at_lo, at_hi, length = _line_search(f, y, fy, step, decrement, lo, hi, at_lo, at_hi)
        if length == 0 and at_lo.sum() + at_hi.sum() == active:
            break
    return y, fy


def _bfgs(hessian: np.ndarray, moved: np.ndarray, change: np.ndarray) -> np.ndarray:
    """The BFGS update of ``hessian`` for a step ``moved`` that changed the gradient by ``change``; the
    same matrix when the pair carries no reliable curvature (a tiny step, or one the gradient's error hides)."""
    curvature = float(moved @ change)
    along = hessian @ moved
    if curvature <= 1e-10 * float(np.linalg.norm(moved) * np.linalg.norm(change)) or float(moved @ along) <= 0:
        return hessian
    updated: np.ndarray = hessian - np.outer(along, along) / float(moved @ along) + np.outer(change, change) / curvature
    return updated


def _gradient(f: Callable[[np.ndarray], float], y: np.ndarray, fy: float, lo: np.ndarray, hi: np.ndarray,
              precise: bool) -> np.ndarray:
    """∂f/∂y_i by forward differences (n evaluations, error ~1e-8), or with ``precise`` by central ones
    (2n evaluations, ~1e-11), one-sided second-order ones within a step of a bound."""
    g = np.empty(y.size)
    for i in range(y.size):
        e = np.zeros(y.size)
        if not precise:
            e[i] = _FORWARD_STEP
            g[i] = ((f(y + e) - fy) if y[i] + e[i] <= hi[i] else (fy - f(y - e))) / _FORWARD_STEP
            continue
        h = e[i] = _GRADIENT_STEP
        if y[i] - h >= lo[i] and y[i] + h <= hi[i]:
            g[i] = (f(y + e) - f(y - e)) / (2 * h)
        elif y[i] + 2 * h <= hi[i]:
            g[i] = (-3 * fy + 4 * f(y + e) - f(y + 2 * e)) / (2 * h)
        else:
            g[i] = (3 * fy - 4 * f(y - e) + f(y - 2 * e)) / (2 * h)
    return g


def _reduced_hessian(f: Callable[[np.ndarray], float], y: np.ndarray, fy: float, others: np.ndarray, pivot: int,
                     hi: np.ndarray) -> np.ndarray:
    """Hessian of f along z_i = e_i − e_pivot (i in ``others``), by forward differences (backward where a
    forward step would pass an upper bound). k(k+3)/2 evaluations for k = len(others)."""
    h = _HESSIAN_STEP
    k = others.size
    sign = np.where(y[others] + 2 * h <= hi[others], 1.0, -1.0)
    moves = np.zeros((k, y.size))
    moves[np.arange(k), others] = sign * h
    moves[:, pivot] -= sign * h
    single = np.array([f(y + moves[i]) for i in range(k)])
    out = np.empty((k, k))
    for i in range(k):
        for j in range(i, k):
            out[i, j] = out[j, i] = (f(y + moves[i] + moves[j]) - single[i] - single[j] + fy) / (h * h * sign[i] * sign[j])
    return out


def _advance(y: np.ndarray, step: np.ndarray, alpha: float, lo: np.ndarray, hi: np.ndarray) -> tuple[
        np.ndarray, np.ndarray, np.ndarray]:
    """y + α·step, never past a bound; returns it with the masks of the variables that reached one."""
    with np.errstate(divide="ignore", invalid="ignore"):
        limit = np.maximum(np.where(step < 0, (lo - y) / step, np.where(step > 0, (hi - y) / step, np.inf)), 0.0)
    alpha = min(alpha, float(limit.min()))
    moved = y + alpha * step
    blocked = limit <= alpha
    moved[blocked & (step < 0)] = lo[blocked & (step < 0)]
    moved[blocked & (step > 0)] = hi[blocked & (step > 0)]
    return moved, blocked & (step < 0), blocked & (step > 0)


def _line_search(f: Callable[[np.ndarray], float], y: np.ndarray, fy: float, step: np.ndarray, decrement: float,
                 lo: np.ndarray, hi: np.ndarray, at_lo: np.ndarray, at_hi: np.ndarray) -> tuple[
                     np.ndarray, float, np.ndarray, np.ndarray, float]:
    """Backtracking (Armijo) along ``step`` from the largest feasible length ≤ 1; a bound reached joins the
    active set. Returns (y, f(y), at_lo, at_hi, the length taken: 1 for the full step, 0 for none)."""
    alpha = 1.0
    size = max(float(np.max(np.abs(step))), 1e-300)
    for _ in range(40):
        candidate, new_lo, new_hi = _advance(y, step, alpha, lo, hi)
        length = float(np.max(np.abs(candidate - y))) / size
        value = f(candidate)
        if (new_lo | new_hi).any() and length > 0:
            # A bound cuts the step short: it may have jumped over a minimum inside the box into the basin of
            # the bound (with Laplace noise a level's error is flat at 0), so compare with halfway there.
            half, _, _ = _advance(y, step, length / 2, lo, hi)
            half_value = f(half)
            if half_value < value and half_value <= fy - _ARMIJO * length / 2 * decrement:
                return half, half_value, at_lo, at_hi, length / 2
        if value <= fy - _ARMIJO * length * decrement:
            return candidate, value, at_lo | new_lo, at_hi | new_hi, length
        alpha = length / 2
    return y, fy, at_lo, at_hi, 0.0
