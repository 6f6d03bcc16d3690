"""Optimisers and the auto-planner (paper 000 §IV–V and beyond; docs/design.md, "Per-level budgets: the planner").

Everything here is data-independent: it sees K, ε, the neighbour model and records per person,
never the confidential counts, so planning costs no privacy.

* :func:`theorem_iv2_budgets` / :func:`theorem_iv2_branching` — paper 000 Theorem IV.2 (both parts).
* :func:`paper_best_shape` — paper 000 §V: integer heights and factorisations with K̄ ∈ [K, 2K],
  equal budgets, covering-sum estimator (the ``paper_best`` baseline).
* :func:`optimise_budgets` — per-level budgets minimising the exact projected error of the chosen
  estimator (closed form for covering + total, numerical for GLS or the max objective), with
  locked levels kept fixed.
* :func:`auto_plan` — searches shape × budget split for the least projected error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from dataclasses import replace

from dpgui.core.noise import discrete_gaussian_variance
from dpgui.core.plan import (
    NOISE_CHOICES,
    OBJECTIVES,
    NoiseChoice,
    Plan,
    PrivacySpec,
    budget_total,
    check_noise,
    equal_budgets,
    split_budget,
)
from dpgui.core.projection import (
    covering_total_coefficients,
    gls_total_coefficients,
    last_prefix,
    max_prefix_variance,
    total_sq_error,
    _gls_boundary_terms,
)
from dpgui.core.simplex import minimise_on_simplex
from dpgui.core.tree import TreeShape, check_bins
from dpgui.errors import ParameterError

# A level whose optimal budget share falls below this is not released (its budget goes elsewhere).
MIN_SHARE = 1e-4


# ------------------------------------------------------------------ paper 000, Theorem IV.2
def theorem_iv2_budgets(branching: Sequence[float], epsilon: float) -> tuple[float, ...]:
    """ε_i = ε (n_i − 1)^{1/3} / Σ_j (n_j − 1)^{1/3}: optimal split for given n (covering sum)."""
    return split_budget(epsilon, [(n - 1) ** (1 / 3) for n in branching])


def theorem_iv2_branching(level_epsilons: Sequence[float], bins: float) -> np.ndarray:
    """n_i = K^{1/h} ε_i² / (Π_j ε_j²)^{1/h}: optimal real branching for given budgets."""
    eps = np.asarray(level_epsilons, dtype=float)
    h = eps.size
    result: np.ndarray = bins ** (1 / h) * eps**2 / np.exp(np.mean(np.log(eps**2)))
    return result


def laplace_variance(epsilon: np.ndarray, sensitivity: int) -> np.ndarray:
    """Exact discrete Laplace variance at scale Δ/ε: 1 / (2 sinh²(ε/2Δ)); inf where ε = 0."""
    eps = np.asarray(epsilon, dtype=float)
    with np.errstate(divide="ignore"):
        return 0.5 / np.sinh(eps / (2.0 * sensitivity)) ** 2


def gaussian_variance(rho: np.ndarray, l2_sensitivity_squared: int) -> np.ndarray:
    """Exact discrete Gaussian variance at σ² = Δ₂²/(2ρ) (unrounded σ²); inf where ρ = 0."""
    r = np.asarray(rho, dtype=float)
    out = np.full(r.shape, np.inf)
    positive = r > 0
    if positive.any():
        out[positive] = discrete_gaussian_variance(l2_sensitivity_squared / (2.0 * r[positive]))
    return out


def level_variance(budgets: np.ndarray, privacy: PrivacySpec, noise: str) -> np.ndarray:
    """Noise variance of levels with budgets ε_l (Laplace) or ρ_l (Gaussian), inf where 0 (unrounded
    noise parameters: the planner's view; a :class:`Plan`'s exact variances use its rounded ones)."""
    if noise == "gaussian":
        return gaussian_variance(budgets, privacy.level_l2_sensitivity_squared)
    return laplace_variance(budgets, privacy.level_sensitivity)


# ------------------------------------------------------------------ objective evaluation
class _Objective:
    """Projected error of one shape as a function of the noised levels' budgets."""

    def __init__(self, shape: TreeShape, privacy: PrivacySpec, estimator: str, objective: str,
                 prefixes: np.ndarray | None = None, noise: str = "laplace") -> None:
        self.shape, self.privacy, self.estimator, self.objective = shape, privacy, estimator, objective
        self.noise = noise
        self.first = privacy.first_noised_level()
        self.sizes = np.asarray(shape.leaves_per_node, dtype=float)
        root_public = privacy.root_public
        if objective == "total":
            if estimator == "gls":
                self.coeffs, self.const = gls_total_coefficients(shape, root_public)
            else:
                self.digit_totals = covering_total_coefficients(shape, [True] * (shape.height + 1), root_public)
        else:
            j = np.arange(1, last_prefix(shape, root_public) + 1, dtype=np.int64) if prefixes is None else prefixes
            self.set_prefixes(j)

    def set_prefixes(self, j: np.ndarray) -> None:
        self.prefixes = j
        if self.estimator == "gls":
            self.terms = _gls_boundary_terms(self.shape, j)
            self.squares = j.astype(float) ** 2 / self.shape.padded_bins
        else:
            self.digits = self.shape.covering_digits(j).astype(float)

    def variances(self, level_eps: np.ndarray) -> np.ndarray:
        v = np.full(self.shape.height + 1, np.inf)
        v[self.first:] = level_variance(level_eps, self.privacy, self.noise)
        if self.privacy.root_public:
            v[0] = 0.0
        return v

    def _lambdas(self, v: np.ndarray) -> tuple[np.ndarray, float]:
        w = np.reciprocal(v, out=np.zeros_like(v), where=v != 0)  # 0 for a public (0) or unreleased (inf) level
        tail = np.cumsum((w * self.sizes)[::-1])[::-1]
        lam_c = math.inf if v[0] == 0 else float(tail[0])
        return tail[1:], lam_c

    def per_prefix(self, level_eps: np.ndarray) -> np.ndarray:
        v = self.variances(level_eps)
        if self.estimator == "gls":
            lam, lam_c = self._lambdas(v)
            if np.any(lam <= 0):
                return np.full(self.prefixes.size, np.inf)
            out = self.terms @ (1.0 / lam)
            return out + (self.squares / lam_c if math.isfinite(lam_c) else 0.0)
        return self.digits @ np.where(np.isinf(v), 1e300, v)

    def __call__(self, level_eps: np.ndarray) -> float:
        if self.objective == "max":
            return float(self.per_prefix(level_eps).max())
        v = self.variances(level_eps)
        if self.estimator == "gls":
            lam, lam_c = self._lambdas(v)
            if np.any(lam <= 0):
                return math.inf
            return float(self.coeffs @ (1.0 / lam) + (self.const / lam_c if math.isfinite(lam_c) else 0.0))
        finite = np.where(np.isinf(v), 0.0, v)
        if np.any(np.isinf(v) & (self.digit_totals > 0)):
            return math.inf
        return float(self.digit_totals @ finite)


# ------------------------------------------------------------------ budget optimisation
def optimise_budgets(
    shape: TreeShape,
    privacy: PrivacySpec,
    estimator: str = "gls",
    objective: str = "total",
    locked: Mapping[int, float] | None = None,
    noise: str = "laplace",
) -> tuple[float, ...]:
    """Budgets of the noised levels (root first under add/remove) minimising the projected error:
    ε_l summing to ε (Laplace), or ρ_l summing to ρ = zcdp_rho(ε, δ) (Gaussian).

    ``locked`` maps a level index (0 = root) to a budget (in the noise's unit) kept fixed. Covering
    sum with the total objective has a closed form: Σ_l D_l v_l with D_l the total covering count of
    level l is least at ε_l ∝ D_l^{1/3} for Laplace (v_l ≈ 2Δ₁²/ε_l², Theorem IV.2 generalised to
    padded trees) and at ρ_l ∝ D_l^{1/2} for Gaussian (v_l ≈ Δ₂²/(2ρ_l), by Lagrange). Otherwise the
    split is found numerically (SLSQP on the simplex; the max objective by cutting planes over the
    worst prefixes). Internal levels may get zero budget (not released) under GLS; the leaves always
    keep a positive budget.
    """
    check_noise(noise)
    total = budget_total(privacy, noise)
    direct = _optimise_budgets_at(shape, privacy, estimator, objective, locked, noise, total)
    if total == 1.0 or (estimator == "covering" and objective == "total"):
        return direct
    # Every level's variance scales as 1/ε² (Laplace) or 1/ρ (Gaussian), so the best *shares* hardly
    # depend on the total; SLSQP converges more reliably at a total of 1 than at a small one, where it
    # can stop far from the optimum. Solve there too, rescale, and keep whichever split is better at
    # the real total (exact discrete variances decide).
    unit_locked = {level: value / total for level, value in (locked or {}).items()}
    try:
        shares = _optimise_budgets_at(shape, privacy, estimator, objective, unit_locked, noise, 1.0)
    except ParameterError:
        return direct
    scaled = np.asarray(shares) * total
    for level, value in (locked or {}).items():
        scaled[level - privacy.first_noised_level()] = value
    rescaled = _finish(scaled, total)
    judge = _Objective(shape, privacy, estimator, objective, noise=noise)
    return rescaled if judge(np.asarray(rescaled)) < judge(np.asarray(direct)) else direct


def _optimise_budgets_at(
    shape: TreeShape,
    privacy: PrivacySpec,
    estimator: str,
    objective: str,
    locked: Mapping[int, float] | None,
    noise: str,
    total: float,
) -> tuple[float, ...]:
    """:func:`optimise_budgets` for budgets summing to ``total``, without the rescaling safeguard."""
    if objective not in OBJECTIVES:
        raise ParameterError(f"unknown objective {objective!r}", "use 'total' or 'max'")
    unit = "ρ" if noise == "gaussian" else "ε"
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

    objective_fn = _Objective(shape, privacy, estimator, "total" if objective == "total" else "max",
                              prefixes=None if objective == "total" else np.empty(0, dtype=np.int64), noise=noise)
    if estimator == "covering" and objective == "total":
        d = np.maximum(objective_fn.digit_totals[free], 0.0)
        weights = np.sqrt(d) if noise == "gaussian" else np.cbrt(d)
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

    if objective == "total":
        lower, upper = (np.array(side) for side in zip(*bounds))
        best = minimise_on_simplex(lambda x: objective_fn(assemble(x)), x0, lower, upper, remaining)
    else:
        best = _minimise_max(shape, privacy, estimator, assemble, x0, bounds, constraint, noise)
    best = np.where(best < MIN_SHARE * remaining, 0.0, best) if estimator == "gls" else best
    if leaf_free and best[-1] <= 0:
        best[-1] = remaining * 1e-3
    best = np.asarray(split_budget(remaining, best)) if best.sum() > 0 else x0
    return _finish(assemble(best), total)


def _minimise_max(shape: TreeShape, privacy: PrivacySpec, estimator: str, assemble: Callable[[np.ndarray], np.ndarray],
                  x0: np.ndarray, bounds: Sequence[tuple[float, float]], constraint: dict[str, Any],
                  noise: str = "laplace") -> np.ndarray:
    """min_x max_j Var Ĉ_j(x) by cutting planes: SLSQP in epigraph form over a growing set of prefixes."""
    from scipy.optimize import minimize  # here: the window starts without SciPy (tests/test_architecture.py)

    full = _Objective(shape, privacy, estimator, "max", noise=noise)
    active = _Objective(shape, privacy, estimator, "max", prefixes=np.empty(0, dtype=np.int64), noise=noise)
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


# ------------------------------------------------------------------ shapes
def candidate_shapes(bins: int, max_padding: float = 2.0, missing_leaf: bool = False) -> list[TreeShape]:
    """Integer branching vectors worth trying for K bins, with n ≤ K̄ ≤ max_padding·n for the n = K real
    leaves (n = K + 1 with ``missing_leaf``, the change model's leaf for missing values).

    Families: the flat histogram (K); near-equal vectors (entries b−1, b, b+1; the exchange argument of paper 000
    Thm V.1 shows Σ n_i at fixed height is minimised by entries b, b+1); and equal
    factors b^{h−1} with one leftover factor at the top or bottom (mixed radix). Both orders.
    O(log²K) shapes.
    """
    k = check_bins(bins)
    bins = k + int(bool(missing_leaf))  # the real leaves the branching must cover
    limit = int(max_padding * bins)
    vectors: set[tuple[int, ...]] = {(bins,)}
    max_height = max(1, math.ceil(math.log2(bins)))
    for h in range(2, max_height + 1):
        base = int(round(bins ** (1.0 / h)))
        for b in range(max(3, base), base + 2):
            # entries b−1, b, b+1 (i, h−i−k, k of them), ascending and descending
            for low in range(h + 1):
                for high in range(h - low + 1):
                    vec = [b - 1] * low + [b] * (h - low - high) + [b + 1] * high
                    if bins <= math.prod(vec) <= limit:
                        vectors.add(tuple(vec))
                        vectors.add(tuple(reversed(vec)))
        if base <= 2:
            for r in range(h + 1):
                vec = [2] * (h - r) + [3] * r
                if bins <= math.prod(vec) <= limit:
                    vectors.add(tuple(vec))
                    vectors.add(tuple(reversed(vec)))
        for b in range(2, 65):
            rest = b ** (h - 1)
            if rest >= bins:
                continue
            leftover = -(-bins // rest)
            if leftover >= 2:
                vectors.add((leftover,) + (b,) * (h - 1))
                vectors.add((b,) * (h - 1) + (leftover,))
    return [TreeShape(k, v, bool(missing_leaf)) for v in sorted(vectors, key=lambda v: (len(v), v))]


def paper_best_shape(bins: int, privacy: PrivacySpec) -> tuple[TreeShape, float]:
    """Paper 000 §V: the integer shape with least exact covering-sum error under equal budgets.

    A reference mechanism as the paper defines it: K leaves, no leaf for missing values."""
    shape = _least_equal_budget_totals(candidate_shapes(bins), privacy, "covering", "laplace", 1)[0]
    return shape, paper_error(shape, privacy)


def paper_error(shape: TreeShape, privacy: PrivacySpec) -> float:
    """What :func:`paper_best_shape` minimises: Σ_j Var Ĉ_j of the covering sum under equal budgets,
    with unrounded discrete-Laplace variances (:func:`laplace_variance`). O(h)."""
    return _Objective(shape, privacy, "covering", "total")(np.asarray(equal_budgets(shape, privacy)))


def _least_equal_budget_totals(shapes: Sequence[TreeShape], privacy: PrivacySpec, estimator: str, noise: str,
                               count: int) -> list[TreeShape]:
    """``sorted(shapes, key=exact)[:count]`` for exact = the projected total (:class:`_Objective`) under
    :func:`equal_budgets`, at a fraction of the cost: every shape is scanned by
    :func:`_equal_budget_totals` (relative error ~1e-15), and only the near-ties of the ``count``-th
    smallest (within 1e-9) get the exact figure, so that the choice and its order are the same."""
    approx = _equal_budget_totals(shapes, privacy, estimator, noise)
    kept = min(count, len(shapes))
    cut = float(np.partition(approx, kept - 1)[kept - 1]) * (1 + 1e-9)
    near = np.flatnonzero(approx <= cut).tolist()
    exact = {i: _Objective(shapes[i], privacy, estimator, "total", noise=noise)(
        np.asarray(equal_budgets(shapes[i], privacy, noise))) for i in near}
    return [shapes[i] for i in sorted(near, key=lambda i: exact[i])[:count]]


def _equal_budget_totals(shapes: Sequence[TreeShape], privacy: PrivacySpec, estimator: str, noise: str) -> np.ndarray:
    """The projected total of each shape under :func:`equal_budgets`, up to rounding. Every noised level
    then has the same variance v, so the total is v times a number of the tree alone: Σ_l D_l (covering
    sum) or Σ_m A_m/Σ_{l>m} s_l (+ A_c/Σ_l s_l with a noised root) for GLS (projection.py's closed-form
    coefficients). O(h) plain arithmetic per shape, about a quarter of the cost of an :class:`_Objective`
    and its call: at 10⁶ bins there are ~1,000 candidate shapes, and ``dpgui plan`` has 0.3 s in all."""
    first, root_public = privacy.first_noised_level(), privacy.root_public
    total = budget_total(privacy, noise)
    per_level: dict[int, float] = {}
    out = np.empty(len(shapes))
    for i, shape in enumerate(shapes):
        levels = shape.height + 1 - first
        if levels not in per_level:
            per_level[levels] = float(level_variance(np.array([total / levels]), privacy, noise)[0])
        if estimator == "covering":
            value = float(covering_total_coefficients(shape, [True] * (shape.height + 1), root_public)[first:].sum())
        else:
            coeffs, const = gls_total_coefficients(shape, root_public)
            sizes = shape.leaves_per_node
            value, below = 0.0, 0
            for m in range(shape.height - 1, -1, -1):
                below += sizes[m + 1]
                value += float(coeffs[m]) / below
            if not root_public:
                value += const / (below + sizes[0])
        out[i] = value * per_level[levels]
    return out


# ------------------------------------------------------------------ the auto-planner
def plan_error(plan: Plan, objective: str) -> float:
    """Exact projected error of a plan for an objective ('total' Σ_j Var, 'max' max_j Var). O(h) for
    'total', O(K̄) for 'max'."""
    return total_sq_error(plan) if objective == "total" else max_prefix_variance(plan)


def auto_plan(
    bins: int,
    privacy: PrivacySpec,
    shape: TreeShape | None = None,
    budgets: str | Sequence[float] = "auto",
    estimator: str = "gls",
    objective: str = "total",
    locked: Mapping[int, float] | None = None,
    shortlist: int = 6,
    noise: str = "laplace",
) -> Plan:
    """The plan with the least projected error for ``objective``.

    ``shape=None`` searches :func:`candidate_shapes` (with the missing leaf when the neighbour model
    counts missing values in one, :attr:`PrivacySpec.missing_leaf`); ``budgets`` is "auto" (optimised, with
    ``locked`` levels fixed), "equal", or explicit per-level budgets (root first under add/remove; ε_l
    for Laplace, ρ_l for Gaussian). Candidates are ranked by the closed-form total under equal budgets;
    the best ``shortlist`` get their budgets optimised and the winner is chosen on the exact objective.

    ``noise``: "laplace", "gaussian" (needs δ > 0) or "auto": with δ > 0, both noises are planned at the
    user's (ε, δ) and the plan with the lower exact projected error of ``objective`` is returned
    (Laplace on a tie); with δ = 0, Laplace. Whenever δ > 0 the returned plan's ``noise_choice`` holds
    both noises' best figures (the other noise is planned too, so the user sees what it would give: with
    its own optimised budgets when explicit or locked budgets were given for the requested noise, and None
    where its noise would be beyond the sampler at this (ε, δ), as for Gaussian noise at a tiny ε).
    Candidate shapes on which a level's noise would be beyond the sampler are skipped.
    """
    bins = check_bins(bins)
    if objective not in OBJECTIVES:
        raise ParameterError(f"unknown objective {objective!r}", "use 'total' or 'max'")
    check_noise(noise, NOISE_CHOICES)
    if noise == "gaussian" and privacy.delta <= 0:
        raise ParameterError("Gaussian noise needs δ > 0 (with δ = 0 only pure ε-DP Laplace noise is possible)",
                             "set δ, e.g. 1e-9, or choose Laplace or automatic noise")
    if noise == "auto" and (locked or not isinstance(budgets, str)):
        raise ParameterError("level budgets are in the unit of one noise (ε for Laplace, ρ for Gaussian)",
                             "choose Laplace or Gaussian noise before setting level budgets")
    if privacy.delta <= 0 and noise == "auto":
        noise_used = ["laplace"]
    elif privacy.delta <= 0:
        noise_used = [noise]
    else:
        noise_used = ["laplace", "gaussian"]
    plans: dict[str, Plan] = {}
    failures: list[ParameterError] = []
    for kind in noise_used:
        # The other noise (planned only to show what it would give) gets its own best budgets: explicit or
        # locked budgets are in the unit of the requested noise (ε or ρ) and mean nothing for it.
        side = noise not in ("auto", kind)
        kind_budgets = "auto" if side and not isinstance(budgets, str) else budgets
        try:
            plans[kind] = _best_plan(bins, privacy, shape, kind_budgets, estimator, objective,
                                     None if side else locked, shortlist, kind)
        except ParameterError as exc:  # e.g. that noise is beyond the sampler at this (ε, δ)
            if kind == noise:
                raise
            failures.append(exc)
    if not plans:  # auto, and neither noise can be drawn
        raise failures[0]
    figures = {kind: _figures(plan) for kind, plan in plans.items()}
    if noise == "auto":
        index = _OBJECTIVE_INDEX[objective]
        chosen = min(plans, key=lambda kind: (figures[kind][index], kind != "laplace"))  # Laplace on a tie
    else:
        chosen = noise
    other = next((plan for kind, plan in plans.items() if kind != chosen), None)
    choice = NoiseChoice(noise, chosen, objective, figures.get("laplace"), figures.get("gaussian"), alternative=other)
    return replace(plans[chosen], noise_choice=choice)


_OBJECTIVE_INDEX = {"total": 0, "max": 1}


def _figures(plan: Plan) -> tuple[float, float]:
    """(exact Σ_j Var Ĉ_j, exact max_j Var Ĉ_j) of a plan, counts². O(K̄)."""
    return total_sq_error(plan), max_prefix_variance(plan)


def _best_plan(bins: int, privacy: PrivacySpec, shape: TreeShape | None, budgets: str | Sequence[float],
               estimator: str, objective: str, locked: Mapping[int, float] | None, shortlist: int, noise: str) -> Plan:
    """:func:`auto_plan` for one noise (no noise choice attached)."""
    shapes = [shape] if shape is not None else candidate_shapes(bins, missing_leaf=privacy.missing_leaf)
    if not isinstance(budgets, str):
        if shape is None:
            raise ParameterError("explicit budgets need an explicit branching", "give --branching as well")
        return Plan(shape, privacy, tuple(float(e) for e in budgets), estimator, noise)
    if budgets not in ("auto", "equal"):
        raise ParameterError(f"unknown budgets {budgets!r}", "use auto, equal, or a comma-separated list")
    if len(shapes) > shortlist:
        shapes = _least_equal_budget_totals(shapes, privacy, estimator, noise, shortlist)
    best: tuple[Plan, float] | None = None
    failure: ParameterError | None = None
    for candidate in shapes:
        if budgets == "equal":
            level_budgets = equal_budgets(candidate, privacy, noise)
        else:
            level_budgets = optimise_budgets(candidate, privacy, estimator, objective, locked, noise)
        try:
            plan = Plan(candidate, privacy, level_budgets, estimator, noise)
        except ParameterError as exc:  # a level's noise beyond the sampler on this shape: try the others
            failure = failure or exc
            continue
        value = plan_error(plan, objective) if objective == "max" or len(shapes) == 1 else _Objective(
            candidate, privacy, estimator, "total", noise=noise)(np.asarray(level_budgets))
        if best is None or value < best[1]:
            best = (plan, value)
    if best is None:
        assert failure is not None
        raise failure
    return best[0]


def baselines(bins: int, privacy: PrivacySpec) -> dict[str, dict[str, object]]:
    """Exact total squared error of the paper's reference mechanisms (covering sum, equal budgets).

    ``ind``: Laplace on each cumulative count (sensitivity (K−1)·L under change, K·L under
    add/remove); ``hist``: the flat tree (K); ``binary``: 2×…×2; ``paper_best``: §V search. As in
    the paper: K leaves, without the change model's leaf for missing values (about 1/K less work).
    """
    from dpgui.core.noise import discrete_laplace_variance, laplace_scale

    out: dict[str, dict[str, object]] = {}
    noised_prefixes = last_prefix(TreeShape(bins, (bins,)), privacy.root_public)
    ind_sensitivity = noised_prefixes * privacy.records_per_person
    ind_var = discrete_laplace_variance(float(laplace_scale(ind_sensitivity, privacy.epsilon)))
    out["ind"] = {"total_sq_error": noised_prefixes * ind_var, "branching": None}
    for name, shape in (("hist", TreeShape(bins, (bins,))), ("binary", TreeShape.uniform(bins, 2))):
        plan = Plan(shape, privacy, equal_budgets(shape, privacy), "covering")
        out[name] = {"total_sq_error": total_sq_error(plan), "branching": list(shape.branching)}
    shape, _ = paper_best_shape(bins, privacy)
    plan = Plan(shape, privacy, equal_budgets(shape, privacy), "covering")
    out["paper_best"] = {"total_sq_error": total_sq_error(plan), "branching": list(shape.branching)}
    return out


# ------------------------------------------------------------------ accuracy first
ACCURACY_WHERE = ("every", "average")


def margin95(plan: Plan, where: str) -> float:
    """The plan's 95 % error margin in records: ``noise_margin`` (2.2·SE + 1, the half-width of the
    95 % band published with each count, which holds the true count with probability ≥ 95 %) at the
    worst CDF point ('every') or at the root-mean-square SE over the noised CDF points ('average').
    Exact (discrete-Laplace variances); O(h) for 'average', O(K̄) for 'every'."""
    from dpgui.core.quantiles import noise_margin

    if where not in ACCURACY_WHERE:
        raise ParameterError(f"unknown accuracy target {where!r}", "use 'every' or 'average'")
    if where == "every":
        return float(noise_margin(math.sqrt(max_prefix_variance(plan))))
    return average_margin95(total_sq_error(plan), plan.shape, plan.privacy.root_public)


def average_margin95(total: float, shape: TreeShape, root_public: bool) -> float:
    """``margin95(plan, 'average')`` of a plan on ``shape`` whose Σ_j Var Ĉ_j is ``total`` (counts²):
    ``noise_margin`` at the root-mean-square SE over the noised CDF points. O(1)."""
    from dpgui.core.quantiles import noise_margin

    noised = max(1, last_prefix(shape, root_public))
    return float(noise_margin(math.sqrt(total / noised)))


def plan_for_accuracy(
    bins: int,
    privacy: PrivacySpec,
    margin: float,
    where: str = "every",
    shape: TreeShape | None = None,
    estimator: str = "gls",
    significant: int = 3,
    noise: str = "laplace",
) -> Plan:
    """The plan with the smallest ε (to ``significant`` digits, rounded up) whose 95 % margin
    (:func:`margin95`, in records) is at most ``margin``. ``privacy.epsilon`` is ignored; its δ,
    neighbour model and records per person are kept. ``noise`` "auto" plans both noises (Gaussian
    only when δ > 0) and returns the one needing the smaller ε (Laplace on a tie); a noise that cannot meet
    the target at any ε ≤ 100 is left out (its figures None), and only if neither can is the target refused.

    The best budget *shares* hardly depend on the total (every level's variance scales as 1/ε² for
    Laplace, 1/ρ for Gaussian), so the shape and shares are optimised once at ε = 1 and scaled. The
    margin never grows with ε (noise parameters are rounded up, but monotonically), so ε is found by
    bisection and then checked exactly at the rounded value and the next smaller one.
    """
    try:
        margin = float(margin)
    except (TypeError, ValueError):
        raise ParameterError(f"the accepted error must be a number, got {margin!r}", "give e.g. 100 records") from None
    if not math.isfinite(margin) or margin <= 0:
        raise ParameterError(f"the accepted error must be > 0 records, got {margin:g}", "give e.g. 100 records")
    from dpgui.core.quantiles import LATTICE_SLACK

    if margin <= LATTICE_SLACK:
        raise ParameterError(f"an error of ±{margin:g} records is below the {LATTICE_SLACK:g} record every 95 % margin "
                             "includes (the noise is whole numbers)", "accept an error above 1 record")
    check_noise(noise, NOISE_CHOICES)
    if noise == "gaussian" and privacy.delta <= 0:
        raise ParameterError("Gaussian noise needs δ > 0", "set δ, e.g. 1e-9, or choose Laplace or automatic noise")
    kinds = ["laplace", "gaussian"] if noise == "auto" and privacy.delta > 0 else ["laplace" if noise == "auto" else noise]
    plans: dict[str, Plan] = {}
    failures: list[ParameterError] = []
    for kind in kinds:
        try:
            plans[kind] = _plan_for_accuracy_with(bins, privacy, margin, where, shape, estimator, significant, kind)
        except ParameterError as exc:  # auto: the other noise may still meet the target (e.g. Gaussian needs ε > 100)
            if len(kinds) == 1:
                raise
            failures.append(exc)
    if not plans:
        raise failures[0]
    best = min(plans.values(), key=lambda p: p.privacy.epsilon)  # min keeps the first (Laplace) on a tie
    if noise == "auto" and len(kinds) == 2:
        figures = {kind: _figures(p) for kind, p in plans.items()}
        needed = {kind: p.privacy.epsilon for kind, p in plans.items()}
        best = replace(best, noise_choice=NoiseChoice("auto", best.noise, "epsilon", figures.get("laplace"),
                                                      figures.get("gaussian"), needed.get("laplace"),
                                                      needed.get("gaussian")))
    return best


def _plan_for_accuracy_with(bins: int, privacy: PrivacySpec, margin: float, where: str, shape: TreeShape | None,
                            estimator: str, significant: int, noise: str) -> Plan:
    """:func:`plan_for_accuracy` for one noise."""
    objective = "max" if where == "every" else "total"
    unit = privacy.with_epsilon(1.0)
    base = _best_plan(bins, unit, shape, "auto", estimator, objective, None, 6, noise)
    shares = np.asarray(base.level_budgets)
    limit = 100.0

    def plan_at(epsilon: float) -> Plan:
        spec = privacy.with_epsilon(epsilon)
        return Plan(base.shape, spec, split_budget(budget_total(spec, noise), shares), estimator, noise)

    def meets(epsilon: float) -> bool:
        try:
            return margin95(plan_at(epsilon), where) <= margin
        except ParameterError:  # an ε so small that the noise is beyond the sampler: not a usable plan
            return False

    def round_up(value: float) -> float:
        digits = significant - 1 - math.floor(math.log10(value))
        step = 10.0 ** -digits
        return round(math.ceil(value / step - 1e-9) * step, max(digits, 0))

    too_much = ParameterError(
        f"an error of ±{margin:g} records would need ε > {limit:g}",
        "accept a larger error, use fewer bins, or choose 'average' instead of 'every point'",
    )
    if not meets(limit):
        raise too_much
    lo, hi = 0.0, limit  # meets(hi) holds; meets(lo) fails (ε = 0 is no release)
    while hi - lo > hi * 10.0 ** -(significant + 2):
        mid = (lo + hi) / 2.0 if lo > 0 else hi / 2.0 if hi > 1e-6 else 0.0
        if mid <= 0.0:
            break
        if meets(mid):
            hi = mid
        else:
            lo = mid
    epsilon = min(limit, round_up(hi))
    while not meets(epsilon):  # only if rounding landed a hair short; bounded by the ε limit
        epsilon = round_up(epsilon + 10.0 ** (math.floor(math.log10(epsilon)) - significant + 1))
        if epsilon > limit:
            raise too_much
    while True:  # step down while the next smaller value still meets the target
        step = 10.0 ** (math.floor(math.log10(epsilon)) - significant + 1)
        smaller = round(epsilon - step, 12)
        if smaller <= 0 or not meets(smaller):
            return plan_at(epsilon)
        epsilon = smaller
