"""Per-level budgets of a CDF tree: the split of ε (Laplace) or ρ (Gaussian) over the noised levels that
minimises the exact projected error of the chosen estimator (docs/engine.md, "Per-level budgets: the planner").

Data-independent: it sees the tree's shape, ε (and δ), the neighbour model and records per person, never the
confidential counts. :func:`optimise_budgets` has a closed form for the covering sum with the total objective
(Rameshwar, Tandon & Sharma's Theorem IV.2, generalised) and solves the rest numerically; :class:`_Objective` is
the projected error of one shape as a function of its budgets, which the planner also ranks shapes with.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np


from dpgui.core.noise_mechanisms import mechanism_for
from dpgui.core.plan import (
    PrivacySpec,
    budget_total,
    check_noise,
    split_budget,
)
from dpgui.core.projection import (
    Span,
    check_span,
    prefix_basis,
    prefix_variances_from_basis,
    total_coefficients,
    total_from_coefficients,
)
from dpgui.core.simplex import minimise_on_simplex
from dpgui.core.tree import TreeShape
from dpgui.errors import ParameterError
from dpgui.vocabulary import Estimator, Noise, Objective

# A level whose optimal budget share falls below this is not released (its budget goes elsewhere).
MIN_SHARE = 1e-4

def level_variance(budgets: np.ndarray, privacy: PrivacySpec, noise: str) -> np.ndarray:
    """Noise variance of levels with budgets ε_l (Laplace) or ρ_l (Gaussian), inf where 0 (unrounded
    noise parameters: the planner's view; a :class:`Plan`'s exact variances use its rounded ones)."""
    return mechanism_for(noise).budget_variances(budgets, privacy.sensitivity)


def _optimal_root(d: np.ndarray, budget_power: int) -> np.ndarray:
    """d^{1/(k+1)}: Σ_l d_l v_l with v_l ∝ 1/b_l^k is least at b_l ∝ d_l^{1/(k+1)} (Lagrange); k = 2 (Laplace)
    is Theorem IV.2's cube root, k = 1 (Gaussian) the square root."""
    root: np.ndarray = np.sqrt(d) if budget_power == 1 else np.cbrt(d) if budget_power == 2 else d ** (1.0 / (budget_power + 1))
    return root


# ------------------------------------------------------------------ objective evaluation
class _Objective:
    """Projected error of one shape as a function of the noised levels' budgets, through
    :mod:`dpgui.core.projection`'s two-part API: the tree-only part (:func:`total_coefficients`,
    :func:`prefix_basis`) is computed once, the budget-dependent part (:func:`total_from_coefficients`,
    :func:`prefix_variances_from_basis`) at every evaluation. ``span`` (prefix lengths first..last,
    None = every noised CDF point) is where the error counts: "total" sums over it, "max" takes its max.
    O(h) per total evaluation, O(len·h) per per-prefix one."""

    def __init__(self, shape: TreeShape, privacy: PrivacySpec, estimator: str, objective: str,
                 prefixes: np.ndarray | None = None, noise: str = Noise.LAPLACE, span: Span | None = None) -> None:
        self.shape, self.privacy, self.estimator, self.objective = shape, privacy, estimator, objective
        self.noise = noise
        self.first = privacy.first_noised_level()
        # Every level counts as released: a level without budget has variance inf, which the GLS
        # precisions read as "not released"; for the covering sum it makes the error infinite.
        self.released = [True] * (shape.height + 1)
        root_public = privacy.root_public
        if objective == Objective.TOTAL:
            self.coefficients = total_coefficients(shape, estimator, self.released, root_public, span)
        else:
            first, last = check_span(shape, root_public, span)
            j = np.arange(first, last + 1, dtype=np.int64) if prefixes is None else prefixes
            self.set_prefixes(j)

    @property
    def digit_totals(self) -> np.ndarray:
        """Covering sum, "total": D_l, so that the error is Σ_l D_l v_l."""
        return self.coefficients.levels

    def set_prefixes(self, j: np.ndarray) -> None:
        self.prefixes = j
        self.basis = prefix_basis(self.shape, self.estimator, self.released, j)

    def variances(self, level_eps: np.ndarray) -> np.ndarray:
        v = np.full(self.shape.height + 1, np.inf)
        v[self.first:] = level_variance(level_eps, self.privacy, self.noise)
        if self.privacy.root_public:
            v[0] = 0.0
        return v

    def per_prefix(self, level_eps: np.ndarray) -> np.ndarray:
        v = self.variances(level_eps)
        if self.estimator == Estimator.COVERING:
            v = np.where(np.isinf(v), 1e300, v)  # huge, not inf: the max objective's SLSQP needs finite slopes
        with np.errstate(divide="ignore", invalid="ignore"):
            out = prefix_variances_from_basis(self.shape, self.estimator, self.basis, v, self.prefixes,
                                              self.privacy.root_public)
        # GLS with no information below some level (a zero eigenvalue): inf or nan somewhere, so in the sum
        # (the covering sum's 1e300 stand-ins may overflow a sum, and it has no zero eigenvalues).
        if self.estimator == Estimator.GLS and not math.isfinite(float(out.sum())):
            return np.full(self.prefixes.size, np.inf)
        return out

    def __call__(self, level_eps: np.ndarray) -> float:
        if self.objective == Objective.MAX:
            per = self.per_prefix(level_eps)
            return float(per.max()) if per.size else 0.0
        v = self.variances(level_eps)
        if self.estimator == Estimator.COVERING and np.any(np.isinf(v) & (self.digit_totals > 0)):
            return math.inf
        with np.errstate(divide="ignore", invalid="ignore"):
            value = total_from_coefficients(self.shape, self.estimator, self.coefficients, v)
        return value if math.isfinite(value) else math.inf


# ------------------------------------------------------------------ budget optimisation
def optimise_budgets(
    shape: TreeShape,
    privacy: PrivacySpec,
    estimator: str = Estimator.GLS,
    objective: str = Objective.TOTAL,
    locked: Mapping[int, float] | None = None,
    noise: str = Noise.LAPLACE,
    focus: Span | None = None,
) -> tuple[float, ...]:
    """Budgets of the noised levels (root first under add/remove) minimising the projected error:
    ε_l summing to ε (Laplace), or ρ_l summing to ρ = zcdp_rho(ε, δ) (Gaussian). The error is over the
    CDF points of ``focus`` (prefix lengths first..last; None: every one): Σ_j Var Ĉ_j ("total") or
    max_j Var Ĉ_j ("max") for j in it. The budgets stay level-uniform (every node of a level gets the
    level's budget), focus or not.

    ``locked`` maps a level index (0 = root) to a budget (in the noise's unit) kept fixed. Covering
    sum with the total objective has a closed form: Σ_l D_l v_l with D_l the total covering count of
    level l is least at ε_l ∝ D_l^{1/3} for Laplace (v_l ≈ 2Δ₁²/ε_l², Theorem IV.2 generalised to
    padded trees) and at ρ_l ∝ D_l^{1/2} for Gaussian (v_l ≈ Δ₂²/(2ρ_l), by Lagrange). Otherwise the
    split is found numerically (:func:`~dpgui.core.simplex.minimise_on_simplex`, the focus's total too;
    the max objective by SLSQP with cutting planes over the worst prefixes). Internal levels may get zero
    budget (not released) under GLS; the leaves always keep a positive budget.
    """
    check_noise(noise)
    total = budget_total(privacy, noise)
    direct = _optimise_budgets_at(shape, privacy, estimator, objective, locked, noise, total, focus)
    if total == 1.0 or (estimator == Estimator.COVERING and objective == Objective.TOTAL):
        return direct
    # Every level's variance scales as 1/ε² (Laplace) or 1/ρ (Gaussian), so the best *shares* hardly
    # depend on the total; SLSQP converges more reliably at a total of 1 than at a small one, where it
    # can stop far from the optimum. Solve there too, rescale, and keep whichever split is better at
    # the real total (exact discrete variances decide).
    unit_locked = {level: value / total for level, value in (locked or {}).items()}
    try:
        shares = _optimise_budgets_at(shape, privacy, estimator, objective, unit_locked, noise, 1.0, focus)
    except ParameterError:
        return direct
    scaled = np.asarray(shares) * total
    for level, value in (locked or {}).items():
        scaled[level - privacy.first_noised_level()] = value
    rescaled = _finish(scaled, total)
    judge = _Objective(shape, privacy, estimator, objective, noise=noise, span=focus)
    return rescaled if judge(np.asarray(rescaled)) < judge(np.asarray(direct)) else direct


def _optimise_budgets_at(
    shape: TreeShape,
    privacy: PrivacySpec,
    estimator: str,
    objective: str,
    locked: Mapping[int, float] | None,
    noise: str,
    total: float,
    focus: Span | None = None,
) -> tuple[float, ...]:
    """:func:`optimise_budgets` for budgets summing to ``total``, without the rescaling safeguard."""
    if objective not in tuple(Objective):
        raise ParameterError(f"unknown objective {objective!r}", "use 'total' or 'max'")
    unit = mechanism_for(noise).budget_unit
    first = privacy.first_noised_level()
    count = shape.height + 1 - first
    locked = dict(locked or {})
    for level, value in locked.items():
        if not first <= level <= shape.height:
            raise ParameterError(f"cannot lock level {level}", f"lock a noised level between {first} and {shape.height}")
        if not math.isfinite(value) or value < 0:
            raise ParameterError(f"locked budget of level {level} must be ≥ 0, got {value}", "give a non-negative budget")
    locked_total = math.fsum(locked.values())
    free = [lvl for lvl in range(first, shape.height + 1) if lvl not in locked]
    remaining = total - locked_total
    if remaining < -1e-12 * total or (free and remaining <= 0):
        raise ParameterError(
            f"locked levels use {locked_total:g} of {unit} = {total:g}", "unlock a level or lower the locked budgets"
        )
    if not free:
        if abs(remaining) > 1e-9 * total:
            raise ParameterError(f"all levels are locked but their budgets do not sum to {unit}", "unlock a level")
        return tuple(locked[lvl] for lvl in range(first, shape.height + 1))

    def assemble(free_values: np.ndarray) -> np.ndarray:
        out = np.empty(count)
        for lvl, value in locked.items():
            out[lvl - first] = value
        for lvl, value in zip(free, free_values):
            out[lvl - first] = value
        return out

    objective_fn = _Objective(shape, privacy, estimator, Objective.TOTAL if objective == Objective.TOTAL else Objective.MAX,
                              prefixes=None if objective == Objective.TOTAL else np.empty(0, dtype=np.int64), noise=noise,
                              span=focus)
    if estimator == Estimator.COVERING and objective == Objective.TOTAL:
        d = np.maximum(objective_fn.digit_totals[free], 0.0)
        weights = _optimal_root(d, mechanism_for(noise).budget_power)
        if weights.sum() <= 0:
            weights = np.ones(len(free))
        if shape.height not in free or weights[-1] <= 0:
            weights = np.where(np.arange(len(free)) == len(free) - 1, np.maximum(weights, 1e-9), weights)
        return _finish(assemble(np.asarray(split_budget(remaining, weights))), total)

    x0 = np.full(len(free), remaining / len(free))
    leaf_free = shape.height in free
    bounds = [(0.0, remaining)] * len(free)
    if leaf_free:
        bounds[-1] = (remaining * 1e-3, remaining)
    constraint = {"type": "eq", "fun": lambda x: (np.sum(x) - remaining) / remaining}

    if objective == Objective.TOTAL:
        lower, upper = (np.array(side) for side in zip(*bounds))
        best = minimise_on_simplex(lambda x: objective_fn(assemble(x)), x0, lower, upper, remaining)
    else:
        best = _minimise_max(shape, privacy, estimator, assemble, x0, bounds, constraint, noise, focus)
    best = np.where(best < MIN_SHARE * remaining, 0.0, best) if estimator == Estimator.GLS else best
    if leaf_free and best[-1] <= 0:
        best[-1] = remaining * 1e-3
    best = np.asarray(split_budget(remaining, best)) if best.sum() > 0 else x0
    return _finish(assemble(best), total)


def _minimise_max(shape: TreeShape, privacy: PrivacySpec, estimator: str, assemble: Callable[[np.ndarray], np.ndarray],
                  x0: np.ndarray, bounds: Sequence[tuple[float, float]], constraint: dict[str, Any],
                  noise: str = Noise.LAPLACE, focus: Span | None = None) -> np.ndarray:
    """min_x max_j Var Ĉ_j(x), j in ``focus``, by cutting planes: SLSQP in epigraph form over a growing set
    of prefixes."""
    from scipy.optimize import minimize  # here: the window starts without SciPy (tests/system/test_architecture.py)

    full = _Objective(shape, privacy, estimator, Objective.MAX, noise=noise, span=focus)
    active = _Objective(shape, privacy, estimator, Objective.MAX, prefixes=np.empty(0, dtype=np.int64), noise=noise)
    x: np.ndarray = x0.copy()
    per = full.per_prefix(assemble(x))
    chosen = np.unique(np.argsort(per)[-16:])
    best_x, best_val = x.copy(), float(per.max())
    for _ in range(12):
        active.set_prefixes(full.prefixes[chosen])
        scale = best_val
        n = x.size

        def cons_max(z: np.ndarray) -> np.ndarray:
            margin: np.ndarray = z[-1] - active.per_prefix(assemble(z[:-1])) / scale
            return margin

        z0 = np.append(x, float(active.per_prefix(assemble(x)).max()) / scale)
        result = minimize(lambda z: z[-1], z0, method="SLSQP", bounds=list(bounds) + [(0, None)],
                          constraints=[{"type": "eq", "fun": lambda z: constraint["fun"](z[:-1])},
                                       {"type": "ineq", "fun": cons_max}],
                          options={"maxiter": 200, "ftol": 1e-10})
        x = np.clip(result.x[:n], 0, None)
        x = x * (x0.sum() / x.sum())
        per = full.per_prefix(assemble(x))
        value = float(per.max())
        if value < best_val:
            best_x, best_val = x.copy(), value
        worst = np.argsort(per)[-16:]
        if set(worst.tolist()) <= set(chosen.tolist()):
            break
        chosen = np.unique(np.concatenate([chosen, worst]))
    best: np.ndarray = best_x  # (SciPy is untyped: its result is Any)
    return best


def _finish(level_budgets: np.ndarray, total: float) -> tuple[float, ...]:
    """Make the budgets sum to ``total`` (ε or ρ) exactly (as floats) without touching zeros."""
    return split_budget(total, np.maximum(level_budgets, 0.0))
