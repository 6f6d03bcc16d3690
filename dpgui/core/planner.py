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

from dpgui.core.plan import OBJECTIVES, Plan, PrivacySpec, equal_budgets, split_budget
from dpgui.core.projection import (
    covering_total_coefficients,
    gls_total_coefficients,
    last_prefix,
    prefix_variances,
    total_sq_error,
    _gls_boundary_terms,
)
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


# ------------------------------------------------------------------ objective evaluation
class _Objective:
    """Projected error of one shape as a function of the noised levels' budgets."""

    def __init__(self, shape: TreeShape, privacy: PrivacySpec, estimator: str, objective: str,
                 prefixes: np.ndarray | None = None) -> None:
        self.shape, self.privacy, self.estimator, self.objective = shape, privacy, estimator, objective
        self.first = privacy.first_noised_level()
        self.delta = privacy.level_sensitivity
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
        v[self.first:] = laplace_variance(level_eps, self.delta)
        if self.privacy.root_public:
            v[0] = 0.0
        return v

    def _lambdas(self, v: np.ndarray) -> tuple[np.ndarray, float]:
        w = np.where(np.isinf(v), 0.0, 1.0 / np.where(v == 0, 1.0, v))
        w = np.where(v == 0, 0.0, w)
        tail = np.cumsum((w * np.asarray(self.shape.leaves_per_node, dtype=float))[::-1])[::-1]
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
) -> tuple[float, ...]:
    """Budgets of the noised levels (root first under add/remove) minimising the projected error.

    ``locked`` maps a level index (0 = root) to a budget kept fixed. Covering sum with the total
    objective uses Theorem IV.2's closed form generalised to padded trees (ε_l ∝ D_l^{1/3}, D_l
    the total covering count of level l). Otherwise the split is found numerically (SLSQP on the
    simplex; the max objective by cutting planes over the worst prefixes). Internal levels may get
    zero budget (not released) under GLS; the leaves always keep a positive budget.
    """
    direct = _optimise_budgets_at(shape, privacy, estimator, objective, locked)
    if privacy.epsilon == 1.0 or (estimator == "covering" and objective == "total"):
        return direct
    # Every level's variance scales as 1/ε², so the best *shares* do not depend on ε; SLSQP converges
    # more reliably at ε = 1 than at a small ε, where it can stop far from the optimum. Solve there too,
    # rescale, and keep whichever split is better at the real ε (exact discrete variances decide).
    unit = PrivacySpec(1.0, privacy.neighbours, privacy.records_per_person)
    unit_locked = {level: value / privacy.epsilon for level, value in (locked or {}).items()}
    try:
        shares = _optimise_budgets_at(shape, unit, estimator, objective, unit_locked)
    except ParameterError:
        return direct
    scaled = np.asarray(shares) * privacy.epsilon
    for level, value in (locked or {}).items():
        scaled[level - privacy.first_noised_level()] = value
    rescaled = _finish(scaled, privacy.epsilon)
    judge = _Objective(shape, privacy, estimator, objective)
    return rescaled if judge(np.asarray(rescaled)) < judge(np.asarray(direct)) else direct


def _optimise_budgets_at(
    shape: TreeShape,
    privacy: PrivacySpec,
    estimator: str,
    objective: str,
    locked: Mapping[int, float] | None,
) -> tuple[float, ...]:
    """:func:`optimise_budgets` at the given ε, without the rescaling safeguard."""
    if objective not in OBJECTIVES:
        raise ParameterError(f"unknown objective {objective!r}", "use 'total' or 'max'")
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
    remaining = privacy.epsilon - locked_total
    if remaining < -1e-12 * privacy.epsilon or (free and remaining <= 0):
        raise ParameterError(
            f"locked levels use {locked_total:g} of ε = {privacy.epsilon:g}", "unlock a level or lower the locked budgets"
        )
    if not free:
        if abs(remaining) > 1e-9 * privacy.epsilon:
            raise ParameterError("all levels are locked but their budgets do not sum to ε", "unlock a level")
        return tuple(locked[lvl] for lvl in range(first, shape.height + 1))

    def assemble(free_values: np.ndarray) -> np.ndarray:
        out = np.empty(count)
        for lvl, value in locked.items():
            out[lvl - first] = value
        for lvl, value in zip(free, free_values):
            out[lvl - first] = value
        return out

    objective_fn = _Objective(shape, privacy, estimator, "total" if objective == "total" else "max",
                              prefixes=None if objective == "total" else np.empty(0, dtype=np.int64))
    if estimator == "covering" and objective == "total":
        d = objective_fn.digit_totals[free]
        weights = np.cbrt(np.maximum(d, 0.0))
        if weights.sum() <= 0:
            weights = np.ones(len(free))
        if shape.height not in free or weights[-1] <= 0:
            weights = np.where(np.arange(len(free)) == len(free) - 1, np.maximum(weights, 1e-9), weights)
        return _finish(assemble(np.asarray(split_budget(remaining, weights))), privacy.epsilon)

    x0 = np.full(len(free), remaining / len(free))
    leaf_free = shape.height in free
    bounds = [(0.0, remaining)] * len(free)
    if leaf_free:
        bounds[-1] = (remaining * 1e-3, remaining)
    constraint = {"type": "eq", "fun": lambda x: (np.sum(x) - remaining) / remaining}

    if objective == "total":
        from scipy.optimize import minimize  # here: the window starts without SciPy (tests/test_architecture.py)

        scale = objective_fn(assemble(x0))
        result = minimize(lambda x: objective_fn(assemble(x)) / scale, x0, method="SLSQP", bounds=bounds,
                          constraints=[constraint], options={"maxiter": 300, "ftol": 1e-12})
        best = result.x if result.success and objective_fn(assemble(result.x)) <= scale else x0
    else:
        best = _minimise_max(shape, privacy, estimator, assemble, x0, bounds, constraint)
    best = np.where(best < MIN_SHARE * remaining, 0.0, best) if estimator == "gls" else best
    if leaf_free and best[-1] <= 0:
        best[-1] = remaining * 1e-3
    best = np.asarray(split_budget(remaining, best)) if best.sum() > 0 else x0
    return _finish(assemble(best), privacy.epsilon)


def _minimise_max(shape: TreeShape, privacy: PrivacySpec, estimator: str, assemble: Callable[[np.ndarray], np.ndarray],
                  x0: np.ndarray, bounds: Sequence[tuple[float, float]], constraint: dict[str, Any]) -> np.ndarray:
    """min_x max_j Var Ĉ_j(x) by cutting planes: SLSQP in epigraph form over a growing set of prefixes."""
    from scipy.optimize import minimize  # here: the window starts without SciPy (tests/test_architecture.py)

    full = _Objective(shape, privacy, estimator, "max")
    active = _Objective(shape, privacy, estimator, "max", prefixes=np.empty(0, dtype=np.int64))
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


def _finish(level_eps: np.ndarray, epsilon: float) -> tuple[float, ...]:
    """Make the budgets sum to ε exactly (as floats) without touching zeros."""
    return split_budget(epsilon, np.maximum(level_eps, 0.0))


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
    best: tuple[TreeShape, float] | None = None
    for shape in candidate_shapes(bins):
        value = paper_error(shape, privacy)
        if best is None or value < best[1]:
            best = (shape, value)
    assert best is not None
    return best


def paper_error(shape: TreeShape, privacy: PrivacySpec) -> float:
    """What :func:`paper_best_shape` minimises: Σ_j Var Ĉ_j of the covering sum under equal budgets,
    with unrounded discrete-Laplace variances (:func:`laplace_variance`). O(h)."""
    return _Objective(shape, privacy, "covering", "total")(np.asarray(equal_budgets(shape, privacy)))


# ------------------------------------------------------------------ the auto-planner
def plan_error(plan: Plan, objective: str) -> float:
    """Exact projected error of a plan for an objective ('total' Σ_j Var, 'max' max_j Var)."""
    v = prefix_variances(plan)
    return float(v.sum() if objective == "total" else v.max())


def auto_plan(
    bins: int,
    privacy: PrivacySpec,
    shape: TreeShape | None = None,
    budgets: str | Sequence[float] = "auto",
    estimator: str = "gls",
    objective: str = "total",
    locked: Mapping[int, float] | None = None,
    shortlist: int = 6,
) -> Plan:
    """The plan with the least projected error for ``objective``.

    ``shape=None`` searches :func:`candidate_shapes` (with the missing leaf when the neighbour model
    counts missing values in one, :attr:`PrivacySpec.missing_leaf`); ``budgets`` is "auto" (optimised, with
    ``locked`` levels fixed), "equal", or explicit per-level budgets (root first under add/remove).
    Candidates are ranked by the closed-form total under equal budgets; the best ``shortlist``
    get their budgets optimised and the winner is chosen on the exact objective.
    """
    bins = check_bins(bins)
    if objective not in OBJECTIVES:
        raise ParameterError(f"unknown objective {objective!r}", "use 'total' or 'max'")
    shapes = [shape] if shape is not None else candidate_shapes(bins, missing_leaf=privacy.missing_leaf)
    if not isinstance(budgets, str):
        if shape is None:
            raise ParameterError("explicit budgets need an explicit branching", "give --branching as well")
        return Plan(shape, privacy, tuple(float(e) for e in budgets), estimator)
    if budgets not in ("auto", "equal"):
        raise ParameterError(f"unknown budgets {budgets!r}", "use auto, equal, or a comma-separated list")
    if len(shapes) > shortlist:
        scored = sorted(
            shapes,
            key=lambda s: _Objective(s, privacy, estimator, "total")(np.asarray(equal_budgets(s, privacy))),
        )
        shapes = scored[:shortlist]
    best: tuple[Plan, float] | None = None
    for candidate in shapes:
        if budgets == "equal":
            eps = equal_budgets(candidate, privacy)
        else:
            eps = optimise_budgets(candidate, privacy, estimator, objective, locked)
        plan = Plan(candidate, privacy, eps, estimator)
        value = plan_error(plan, objective) if objective == "max" or len(shapes) == 1 else _Objective(
            candidate, privacy, estimator, "total")(np.asarray(eps))
        if best is None or value < best[1]:
            best = (plan, value)
    assert best is not None
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
    Exact (discrete-Laplace variances); O(h) for 'average', O(K·h) for 'every'."""
    from dpgui.core.quantiles import noise_margin

    if where not in ACCURACY_WHERE:
        raise ParameterError(f"unknown accuracy target {where!r}", "use 'every' or 'average'")
    if where == "every":
        return float(noise_margin(math.sqrt(float(prefix_variances(plan).max()))))
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
) -> Plan:
    """The plan with the smallest ε (to ``significant`` digits, rounded up) whose 95 % margin
    (:func:`margin95`, in records) is at most ``margin``. ``privacy.epsilon`` is ignored; its
    neighbour model and records per person are kept.

    The best budget *shares* do not depend on ε (every level's Laplace variance scales as 1/ε²), so
    the shape and shares are optimised once at ε = 1 and scaled; ε is then found by scaling and a
    few exact checks (discrete-Laplace scales are rounded up, so the 1/ε law is only approximate).
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
    objective = "max" if where == "every" else "total"
    unit = PrivacySpec(1.0, privacy.neighbours, privacy.records_per_person)
    base = auto_plan(bins, unit, shape=shape, estimator=estimator, objective=objective)
    shares = np.asarray(base.level_epsilons)

    def plan_at(epsilon: float) -> Plan:
        spec = PrivacySpec(epsilon, privacy.neighbours, privacy.records_per_person)
        return Plan(base.shape, spec, split_budget(epsilon, shares), estimator)

    def round_up(value: float) -> float:
        digits = significant - 1 - math.floor(math.log10(value))
        step = 10.0 ** -digits
        return round(math.ceil(value / step - 1e-9) * step, max(digits, 0))

    limit = 100.0
    # the margin is 2.2·SE + 1 and SE scales about as 1/ε: solve for the part that scales
    epsilon = round_up((margin95(base, where) - LATTICE_SLACK) / (margin - LATTICE_SLACK))
    for _ in range(60):
        if epsilon > limit:
            raise ParameterError(
                f"an error of ±{margin:g} records would need ε > {limit:g}",
                "accept a larger error, use fewer bins, or choose 'average' instead of 'every point'",
            )
        if margin95(plan_at(epsilon), where) <= margin:
            break
        epsilon = round_up(epsilon * 1.001 + 10.0 ** (math.floor(math.log10(epsilon)) - significant + 1))
    # Step down while the next smaller value still meets the target (scales round up, so 1/ε overshoots).
    while True:
        step = 10.0 ** (math.floor(math.log10(epsilon)) - significant + 1)
        smaller = round(epsilon - step, 12)
        if smaller <= 0 or margin95(plan_at(smaller), where) > margin:
            return plan_at(epsilon)
        epsilon = smaller
