"""Optimisers and the auto-planner (Rameshwar, Tandon & Sharma §IV–V and beyond; docs/engine.md, "Per-level
budgets: the planner").

Everything here is data-independent: it sees K, ε, the neighbour model and records per person,
never the confidential counts, so planning costs no privacy.

* :func:`theorem_iv2_budgets` / :func:`theorem_iv2_branching` — Rameshwar, Tandon & Sharma Theorem IV.2 (both parts).
* :func:`paper_best_shape` — Rameshwar, Tandon & Sharma §V: integer heights and factorisations with K̄ ∈ [K, 2K],
  equal budgets, covering-sum estimator (the ``paper_best`` baseline).
* :func:`optimise_budgets` — per-level budgets minimising the exact projected error of the chosen
  estimator (closed form for covering + total, numerical for GLS or the max objective), with
  locked levels kept fixed.
* :func:`auto_plan` — searches shape × budget split for the least projected error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from dpgui.core.level_budgets import _Objective, level_variance, optimise_budgets
from dpgui.core.noise_mechanisms import mechanism_for
from dpgui.core.plan import (
    ACCURACY_FIRST, NoiseChoice, Plan, PrivacySpec, budget_total, check_noise, equal_budgets, split_budget,
)
from dpgui.core.projection import (
    Span, TotalCoefficients, _gls_block_numerator, _sum_floor_mod, check_span, gls_total_coefficients, last_prefix,
    max_prefix_variance, prefix_variances, total_coefficients, total_from_coefficients, total_sq_error,
)
from dpgui.core.tree import TreeShape, check_bins
from dpgui.errors import ParameterError
from dpgui.vocabulary import AUTO, CDF_NOISES, AccuracyWhere, Estimator, Noise, Objective


# ------------------------------------------------------------------ Rameshwar, Tandon & Sharma, Theorem IV.2
def theorem_iv2_budgets(branching: Sequence[float], epsilon: float) -> tuple[float, ...]:
    """ε_i = ε (n_i − 1)^{1/3} / Σ_j (n_j − 1)^{1/3}: optimal split for given n (covering sum)."""
    return split_budget(epsilon, [(n - 1) ** (1 / 3) for n in branching])


def theorem_iv2_branching(level_epsilons: Sequence[float], bins: float) -> np.ndarray:
    """n_i = K^{1/h} ε_i² / (Π_j ε_j²)^{1/h}: optimal real branching for given budgets."""
    eps = np.asarray(level_epsilons, dtype=float)
    h = eps.size
    result: np.ndarray = bins ** (1 / h) * eps**2 / np.exp(np.mean(np.log(eps**2)))
    return result


# ------------------------------------------------------------------ shapes
def candidate_shapes(bins: int, max_padding: float = 2.0, missing_leaf: bool = False) -> list[TreeShape]:
    """Integer branching vectors worth trying for K bins, with n ≤ K̄ ≤ max_padding·n for the n = K real
    leaves (n = K + 1 with ``missing_leaf``, the change model's leaf for missing values).

    Families: the flat histogram (K); near-equal vectors (entries b−1, b, b+1; the exchange argument of Rameshwar, Tandon & Sharma
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
    """Rameshwar, Tandon & Sharma §V: the integer shape with least exact covering-sum error under equal budgets.

    A reference mechanism as the paper defines it: K leaves, no leaf for missing values."""
    shape = _least_totals(candidate_shapes(bins), privacy, Estimator.COVERING, Noise.LAPLACE, _equal_weights(privacy), 1)[0]
    return shape, paper_error(shape, privacy)


def paper_error(shape: TreeShape, privacy: PrivacySpec) -> float:
    """What :func:`paper_best_shape` minimises: Σ_j Var Ĉ_j of the covering sum under equal budgets,
    with unrounded discrete-Laplace variances (:func:`level_variance`). O(h)."""
    return _Objective(shape, privacy, Estimator.COVERING, Objective.TOTAL)(np.asarray(equal_budgets(shape, privacy)))


#: Budget weights of a shape's noised levels (root first under add/remove), for :func:`split_budget`.
Weights = Callable[[TreeShape], Sequence[float]]


def _equal_weights(privacy: PrivacySpec) -> Weights:
    """:func:`equal_budgets` as weights: 1 for every noised level."""
    return lambda s: [1.0] * (s.height + 1 - privacy.first_noised_level())


def _theorem_weights(privacy: PrivacySpec, noise: str) -> Weights:
    """Theorem IV.2's split as weights: (n_l − 1)^{1/3} (Laplace) or (n_l − 1)^{1/2} (Gaussian, by Lagrange) for
    the level below each branching; 0 for the root under add/remove (not released)."""
    power = 1.0 / (mechanism_for(noise).budget_power + 1)
    root = [0.0] if privacy.first_noised_level() == 0 else []
    return lambda s: root + [(n - 1) ** power for n in s.branching]


def _least_totals(shapes: Sequence[TreeShape], privacy: PrivacySpec, estimator: str, noise: str, weights: Weights,
                  count: int) -> list[TreeShape]:
    """``sorted(shapes, key=exact)[:count]`` (stable) for exact = :func:`_projected_total` with the padding
    unknown (``known_zeros=False``, O(h)) at ``split_budget(total, weights(shape))``, at a fraction of the
    cost: every shape is scanned by :func:`_scan_totals` (relative error ~1e-14), and only the near-ties of
    the ``count``-th smallest (within 1e-9) get the exact figure, so that the choice and its order are the
    same."""
    approx = _scan_totals(shapes, privacy, estimator, noise, weights)
    kept = min(count, len(shapes))
    cut = float(np.partition(approx, kept - 1)[kept - 1]) * (1 + 1e-9)
    near = np.flatnonzero(approx <= cut).tolist()
    total = budget_total(privacy, noise)
    exact = {i: _projected_total(shapes[i], privacy, estimator, split_budget(total, weights(shapes[i])), noise, False)
             for i in near}
    return [shapes[i] for i in sorted(near, key=lambda i: exact[i])[:count]]


def _scan_totals(shapes: Sequence[TreeShape], privacy: PrivacySpec, estimator: str, noise: str,
                 weights: Weights) -> np.ndarray:
    """Σ_j Var Ĉ_j of each shape at ``split_budget(total, weights(shape))``, GLS with the padding unknown,
    up to rounding (relative ~1e-14): :func:`_projected_total` with ``known_zeros=False``, for all shapes of
    a height at once. projection.py's closed-form sums (:func:`~dpgui.core.projection._gls_block_numerator`,
    :func:`~dpgui.core.projection._sum_floor_mod`) are plain arithmetic and run here on float arrays, one
    entry per shape, instead of exact integers one shape at a time: at 10⁶ bins there are ~900 candidate
    shapes, and ``dpgui plan`` has 0.3 s in all. The weights must be > 0 below the root. O(h) array
    operations per height."""
    first, root_public = privacy.first_noised_level(), privacy.root_public
    total = budget_total(privacy, noise)
    out = np.empty(len(shapes))
    by_height: dict[int, list[int]] = {}
    for i, shape in enumerate(shapes):
        by_height.setdefault(shape.height, []).append(i)
    for height, index in by_height.items():
        group = [shapes[i] for i in index]
        branching = np.array([shape.branching for shape in group], dtype=float)
        sizes = np.array([shape.leaves_per_node for shape in group], dtype=float)  # s_0 = K̄, …, s_h = 1
        last = np.array([last_prefix(shape, root_public) for shape in group], dtype=float)
        w = np.array([weights(shape) for shape in group], dtype=float)
        v = np.full((len(group), height + 1), np.inf)
        v[:, first:] = level_variance(total * w / w.sum(axis=1, keepdims=True), privacy, noise)
        if root_public:
            v[:, 0] = 0.0
        if estimator == Estimator.COVERING:  # Σ_l D_l v_l, D_l = Σ_j d_l(j) over j ≤ last (d_l(0) = 0)
            root = np.isfinite(v[:, 0])  # a root not released moves its count to level 1 (no modulus there)
            d = np.empty_like(v)
            d[:, 0] = np.where(root, _sum_floor_mod(last + 1, sizes[:, 0], None), 0.0)  # type: ignore[arg-type]
            d[:, 1] = np.where(root, _sum_floor_mod(last + 1, sizes[:, 1], branching[:, 0]),  # type: ignore[arg-type]
                               _sum_floor_mod(last + 1, sizes[:, 1], None))  # type: ignore[arg-type]
            for level in range(2, height + 1):
                d[:, level] = _sum_floor_mod(last + 1, sizes[:, level], branching[:, level - 1])  # type: ignore[arg-type]
            out[index] = np.sum(d * np.where(np.isinf(v), 0.0, v), axis=1)
            continue
        # GLS: Σ_m A_m/λ_m + A_c/λ_c, A_m = (numerator over j ≤ last)/s_m (prefix 0 adds 0), λ_m = Σ_{l>m} s_l/v_l
        levels = np.empty((len(group), height))
        for m in range(height):
            child, b = sizes[:, m + 1], branching[:, m]
            q, r = np.divmod(last + 1, sizes[:, m])
            levels[:, m] = (q * _gls_block_numerator(sizes[:, m], child, b)  # type: ignore[arg-type]
                            + _gls_block_numerator(r, child, b)) / sizes[:, m]  # type: ignore[arg-type]
        constant = last * (last + 1) * (2 * last + 1) / 6 / sizes[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            # 1/inf = 0: not released; a public root's 1/0 = inf makes λ_c = inf
            tail = np.cumsum((sizes / v)[:, ::-1], axis=1)[:, ::-1]
            value = np.sum(levels / tail[:, 1:], axis=1) + constant / tail[:, 0]
        out[index] = np.where(np.isnan(value), np.inf, value)
    return out


# ------------------------------------------------------------------ the auto-planner
def plan_error(plan: Plan, objective: str, focus: Span | None = None) -> float:
    """Exact projected error of a plan for an objective ('total' Σ_j Var, 'max' max_j Var), counts², over
    the CDF points j of ``focus`` (prefix lengths first..last; None: every one). Without a focus O(h³) for
    'total' and O(K̄ + h³) for 'max' (:func:`total_sq_error`, :func:`max_prefix_variance`); with one
    O(len·h²)."""
    if focus is None:
        return total_sq_error(plan) if objective == Objective.TOTAL else max_prefix_variance(plan)
    first, last = check_span(plan.shape, plan.privacy.root_public, focus)
    if last < first:
        return 0.0
    v = prefix_variances(plan, np.arange(first, last + 1, dtype=np.int64))
    return float(v.sum() if objective == Objective.TOTAL else v.max())


def focus_error(plan: Plan, objective: str, focus: Span | None) -> float:
    """:func:`plan_error` in O(h) for 'total' (the closed-form sum over the span), O(len·h) for 'max'."""
    if objective == Objective.MAX:
        return plan_error(plan, objective, focus)
    coefficients = total_coefficients(plan.shape, plan.estimator, plan.released(), plan.privacy.root_public, focus)
    return total_from_coefficients(plan.shape, plan.estimator, coefficients, plan.level_variances())


def auto_plan(
    bins: int,
    privacy: PrivacySpec,
    shape: TreeShape | None = None,
    budgets: str | Sequence[float] = "auto",
    estimator: str = Estimator.GLS,
    objective: str = Objective.TOTAL,
    locked: Mapping[int, float] | None = None,
    shortlist: int = 6,
    noise: str = Noise.LAPLACE,
    focus: Span | None = None,
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

    ``focus`` (prefix lengths first..last; None: every CDF point) is where the error counts: the shape
    and level budgets minimise ``objective`` over those CDF points only. The noise is the one the plan
    without focus has (chosen on the whole range: the focus moves accuracy between regions, not between
    noises), and that plan is a candidate too, so the result's error in the focus is never above its
    error there. The result records ``focus`` when its shape or budgets differ from that plan's.
    """
    if focus is not None:
        default = auto_plan(bins, privacy, shape, budgets, estimator, objective, locked, shortlist, noise)
        return focused_plan(default, focus, shape, budgets, locked, max(shortlist, FOCUS_SHORTLIST), objective)
    bins = check_bins(bins)
    if objective not in tuple(Objective):
        raise ParameterError(f"unknown objective {objective!r}", "use 'total' or 'max'")
    check_noise(noise, (AUTO, *CDF_NOISES))
    if noise == Noise.GAUSSIAN and privacy.delta <= 0:
        raise ParameterError("Gaussian noise needs δ > 0 (with δ = 0 only pure ε-DP Laplace noise is possible)",
                             "set δ, e.g. 1e-9, or choose Laplace or automatic noise")
    if noise == AUTO and (locked or not isinstance(budgets, str)):
        raise ParameterError("level budgets are in the unit of one noise (ε for Laplace, ρ for Gaussian)",
                             "choose Laplace or Gaussian noise before setting level budgets")
    if privacy.delta <= 0 and noise == AUTO:
        noise_used = [Noise.LAPLACE]
    elif privacy.delta <= 0:
        noise_used = [Noise(noise)]
    else:
        noise_used = list(CDF_NOISES)
    plans: dict[Noise, Plan] = {}
    failures: list[ParameterError] = []
    for kind in noise_used:
        # The other noise (planned only to show what it would give) gets its own best budgets: explicit or
        # locked budgets are in the unit of the requested noise (ε or ρ) and mean nothing for it.
        side = noise not in (AUTO, kind)
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
    if noise == AUTO:
        index = _OBJECTIVE_INDEX[Objective(objective)]
        chosen = min(plans, key=lambda kind: (figures[kind][index], kind != Noise.LAPLACE))  # Laplace on a tie
    else:
        chosen = Noise(noise)
    other = next((plan for kind, plan in plans.items() if kind != chosen), None)
    choice = NoiseChoice(noise, chosen, objective, figures.get(Noise.LAPLACE), figures.get(Noise.GAUSSIAN), alternative=other)
    return replace(plans[chosen], noise_choice=choice)


_OBJECTIVE_INDEX = {Objective.TOTAL: 0, Objective.MAX: 1}

#: Candidate shapes whose budgets are optimised for a focus (ranked as without focus, over the span):
#: which shapes suit a region is less predictable from equal budgets than for the whole range.
FOCUS_SHORTLIST = 12


def focused_plan(default: Plan, focus: Span, shape: TreeShape | None = None, budgets: str | Sequence[float] = "auto",
                 locked: Mapping[int, float] | None = None, shortlist: int = FOCUS_SHORTLIST,
                 objective: str | None = None) -> Plan:
    """The plan for the CDF points of ``focus`` (prefix lengths) with ``default``'s noise, privacy and
    estimator: the least error in the focus among ``default`` and the best focused plan
    (:func:`auto_plan`'s search with ``focus``). ``objective`` defaults to the one recorded in
    ``default``'s noise choice, else 'total'. Explicit budgets are kept as they are (nothing to
    optimise). Raises ParameterError if the focus holds no noised CDF point."""
    objective = objective or (default.noise_choice.objective if default.noise_choice is not None
                              and default.noise_choice.objective in tuple(Objective) else Objective.TOTAL)
    privacy = default.privacy
    try:
        first, last = check_span(default.shape, privacy.root_public, focus)
    except ValueError:
        raise ParameterError(f"the region (CDF points {focus[0]}..{focus[1]}) is not inside the "
                             f"{default.shape.leaves} points of the release", "choose a region inside the bounds") from None
    if last < first:
        raise ParameterError("the region holds no noised CDF point (only N, which is exact)",
                             "choose a region below the upper bound")
    if not isinstance(budgets, str):
        return default
    candidate = _best_plan(default.shape.bins, privacy, shape, budgets, default.estimator, objective, locked,
                           shortlist, default.noise, (first, last))
    if focus_error(candidate, objective, (first, last)) >= focus_error(default, objective, (first, last)):
        return default
    choice = default.noise_choice
    if choice is not None:  # the chosen noise's figures are now this plan's
        figures = _figures(candidate)
        choice = replace(choice, laplace=figures) if default.noise is Noise.LAPLACE else replace(choice, gaussian=figures)
    return replace(candidate, noise_choice=choice, focus=(first, last))


def _figures(plan: Plan) -> tuple[float, float]:
    """(exact Σ_j Var Ĉ_j, exact max_j Var Ĉ_j) of a plan, counts². O(K̄ + h³)."""
    return total_sq_error(plan), max_prefix_variance(plan)


def _distinct(shapes: Sequence[TreeShape]) -> list[TreeShape]:
    """The shapes with the top factor cut to the fewest level-1 nodes that hold the real leaves, each once (in
    the given order). Level-1 nodes wholly inside the padding hold known zeros: every estimator's error is the
    same without them, and the tree is smaller. O(#shapes·h)."""
    out: dict[tuple[int, ...], TreeShape] = {}
    for s in shapes:
        top = -(-s.leaves // s.leaves_per_node[1]) if s.height > 1 else s.branching[0]
        branching = (top,) + s.branching[1:] if top >= 2 else s.branching
        out.setdefault(branching, s if branching == s.branching else TreeShape(s.bins, branching, s.missing_leaf))
    return list(out.values())


def _projected_total(shape: TreeShape, privacy: PrivacySpec, estimator: str, level_budgets: Sequence[float],
                     noise: str, known_zeros: bool = True) -> float:
    """Exact Σ_j Var Ĉ_j (:func:`~dpgui.core.projection.total_from_coefficients`) of a plan with these budgets, at
    the planner's unrounded noise variances (:func:`level_variance`). GLS takes the padding as known zeros; with
    ``known_zeros=False`` it is the total of GLS with the padding unknown, an upper bound (knowing more only
    lowers the variance) that costs O(h) instead of O(h³)."""
    variances = np.full(shape.height + 1, np.inf)
    variances[privacy.first_noised_level():] = level_variance(np.asarray(level_budgets, dtype=float), privacy, noise)
    if privacy.root_public:
        variances[0] = 0.0
    if estimator == Estimator.GLS and np.isinf(variances[-1]):
        return math.inf
    if estimator == Estimator.GLS and not known_zeros:
        coefficients = TotalCoefficients(*gls_total_coefficients(shape, privacy.root_public))
    else:
        released = [bool(r) for r in np.isfinite(variances)]
        coefficients = total_coefficients(shape, estimator, released, privacy.root_public)
    return total_from_coefficients(shape, estimator, coefficients, variances)


def _best_plan(bins: int, privacy: PrivacySpec, shape: TreeShape | None, budgets: str | Sequence[float],
               estimator: str, objective: str, locked: Mapping[int, float] | None, shortlist: int, noise: str,
               focus: Span | None = None) -> Plan:
    """:func:`auto_plan` for one noise (no noise choice attached), the error over ``focus``."""
    shapes = [shape] if shape is not None else _distinct(candidate_shapes(bins, missing_leaf=privacy.missing_leaf))
    if not isinstance(budgets, str):
        if shape is None:
            raise ParameterError("explicit budgets need an explicit branching", "give --branching as well")
        return Plan(shape, privacy, tuple(float(e) for e in budgets), Estimator(estimator), Noise(noise))
    if budgets not in (AUTO, "equal"):
        raise ParameterError(f"unknown budgets {budgets!r}", "use auto, equal, or a comma-separated list")
    # Candidates are ranked by their exact total at a first split: equal budgets, or for "auto" the covering
    # sum's optimal split (closed form, ε_l ∝ D_l^{1/3}), which ranks shapes by their optimised GLS error far
    # better than equal budgets do (these misjudge the order of the factors); the best get optimised. To stay
    # fast over ~900 shapes (K = 10⁶) they are first pre-ranked by the O(h) unknown-padding total (an upper
    # bound: knowing the zeros only lowers the variance) at Theorem IV.2's split (ε_l ∝ (n_l − 1)^{1/3},
    # ρ_l ∝ (n_l − 1)^{1/2}; root not released under add/remove), and the best 6·shortlist ranked exactly.
    # (Checked for K ∈ {256, 4096, 65536, 10⁶}, both models: the exact ranking's best six were always among
    # the pre-ranking's best 27.)
    if budgets == "equal":
        def first_budgets(s: TreeShape) -> tuple[float, ...]:
            return equal_budgets(s, privacy, noise)

        rough_weights = _equal_weights(privacy)
    else:
        def first_budgets(s: TreeShape) -> tuple[float, ...]:
            return optimise_budgets(s, privacy, Estimator.COVERING, Objective.TOTAL, noise=noise)

        rough_weights = _theorem_weights(privacy, noise)
    if len(shapes) > shortlist:
        if focus is None:
            pool = _least_totals(shapes, privacy, estimator, noise, rough_weights, 6 * shortlist)
            shapes = sorted(pool,
                            key=lambda s: _projected_total(s, privacy, estimator, first_budgets(s), noise))[:shortlist]
        else:
            # Equal budgets misjudge shapes for a region; half the list is ranked at the covering sum's
            # closed-form budgets for the region instead (O(h) a shape), which follow the region's levels.
            scored = sorted(shapes, key=lambda s: _Objective(s, privacy, estimator, Objective.TOTAL, noise=noise, span=focus)(
                np.asarray(equal_budgets(s, privacy, noise))))

            def at_covering_budgets(s: TreeShape) -> float:
                level_budgets = optimise_budgets(s, privacy, Estimator.COVERING, Objective.TOTAL, None, noise, focus)
                return _Objective(s, privacy, estimator, Objective.TOTAL, noise=noise, span=focus)(np.asarray(level_budgets))

            half = max(1, shortlist // 2)
            chosen: dict[TreeShape, None] = dict.fromkeys(scored[:half])
            for s in sorted(shapes, key=at_covering_budgets):
                if len(chosen) >= shortlist:
                    break
                chosen.setdefault(s)
            shapes = list(chosen)
    best: tuple[Plan, float] | None = None
    failure: ParameterError | None = None
    for candidate in shapes:
        if budgets == "equal":
            level_budgets = equal_budgets(candidate, privacy, noise)
        else:
            level_budgets = optimise_budgets(candidate, privacy, estimator, objective, locked, noise, focus)
            if objective == Objective.TOTAL and not locked and estimator == Estimator.GLS and focus is None:
                # the search can stop in a worse local optimum than its first split (SLSQP did at 4x9x9, add/remove,
                # ε = 1)
                start = first_budgets(candidate)
                if (_projected_total(candidate, privacy, estimator, start, noise)
                        < _projected_total(candidate, privacy, estimator, level_budgets, noise)):
                    level_budgets = start
        try:
            plan = Plan(candidate, privacy, level_budgets, Estimator(estimator), Noise(noise))
        except ParameterError as exc:  # a level's noise beyond the sampler on this shape: try the others
            failure = failure or exc
            continue
        value = plan_error(plan, objective, focus) if objective == Objective.MAX or len(shapes) == 1 else _Objective(
            candidate, privacy, estimator, Objective.TOTAL, noise=noise, span=focus)(np.asarray(level_budgets))
        # on a tie (e.g. 2x8 with level 1 not released is the flat 9 with known zeros) the smaller tree wins
        if best is None or value < best[1] * (1 - 1e-9) or (
                value <= best[1] * (1 + 1e-9) and candidate.node_count < best[0].shape.node_count):
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
    from dpgui.core.noise import laplace_scale
    from dpgui.core.noise_moments import discrete_laplace_variance

    out: dict[str, dict[str, object]] = {}
    noised_prefixes = last_prefix(TreeShape(bins, (bins,)), privacy.root_public)
    ind_sensitivity = noised_prefixes * privacy.records_per_person
    ind_var = discrete_laplace_variance(float(laplace_scale(ind_sensitivity, privacy.epsilon)))
    out["ind"] = {"total_sq_error": noised_prefixes * ind_var, "branching": None}
    for name, shape in (("hist", TreeShape(bins, (bins,))), ("binary", TreeShape.uniform(bins, 2))):
        plan = Plan(shape, privacy, equal_budgets(shape, privacy), Estimator.COVERING)
        out[name] = {"total_sq_error": total_sq_error(plan), "branching": list(shape.branching)}
    shape, _ = paper_best_shape(bins, privacy)
    plan = Plan(shape, privacy, equal_budgets(shape, privacy), Estimator.COVERING)
    out["paper_best"] = {"total_sq_error": total_sq_error(plan), "branching": list(shape.branching)}
    return out


# ------------------------------------------------------------------ accuracy first

def margin95(plan: Plan, where: str, focus: Span | None = None) -> float:
    """The plan's 95 % error margin in records: ``noise_margin`` (2.2·SE + 1, the half-width of the
    95 % band published with each count, which holds the true count with probability ≥ 95 %) at the
    worst CDF point ('every') or at the root-mean-square SE over the noised CDF points ('average'),
    of ``focus`` (prefix lengths first..last) if given. Exact (discrete-Laplace variances); O(h³) for
    'average', O(K̄ + h³) for 'every' (O(len·h²) with a focus)."""
    from dpgui.core.quantiles import noise_margin

    if where not in tuple(AccuracyWhere):
        raise ParameterError(f"unknown accuracy target {where!r}", "use 'every' or 'average'")
    if focus is not None:
        first, last = check_span(plan.shape, plan.privacy.root_public, focus)
        if where == AccuracyWhere.EVERY:
            return float(noise_margin(math.sqrt(focus_error(plan, Objective.MAX, focus))))
        return float(noise_margin(math.sqrt(focus_error(plan, Objective.TOTAL, focus) / max(1, last - first + 1))))
    if where == AccuracyWhere.EVERY:
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
    where: str = AccuracyWhere.EVERY,
    shape: TreeShape | None = None,
    estimator: str = Estimator.GLS,
    significant: int = 3,
    noise: str = Noise.LAPLACE,
    focus: Span | None = None,
) -> Plan:
    """The plan with the smallest ε (to ``significant`` digits, rounded up) whose 95 % margin (:func:`margin95`,
    in records; over the CDF points of ``focus`` if given) is at most ``margin``. ``privacy.epsilon`` is
    ignored; its δ, neighbour model and records per person are kept. ``noise`` "auto" plans both noises
    (Gaussian only when δ > 0) and returns the one needing the smaller ε (Laplace on a tie); a noise that cannot
    meet the target at any ε ≤ 100 is left out (its figures None), and only if neither can is the target
    refused.

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
    check_noise(noise, (AUTO, *CDF_NOISES))
    if noise == Noise.GAUSSIAN and privacy.delta <= 0:
        raise ParameterError("Gaussian noise needs δ > 0", "set δ, e.g. 1e-9, or choose Laplace or automatic noise")
    kinds = list(CDF_NOISES) if noise == AUTO and privacy.delta > 0 else [Noise.LAPLACE if noise == AUTO else Noise(noise)]
    plans: dict[Noise, Plan] = {}
    failures: list[ParameterError] = []
    for kind in kinds:
        try:
            plans[kind] = _plan_for_accuracy_with(bins, privacy, margin, where, shape, estimator, significant, kind,
                                                  focus)
        except ParameterError as exc:  # auto: the other noise may still meet the target (e.g. Gaussian needs ε > 100)
            if len(kinds) == 1:
                raise
            failures.append(exc)
    if not plans:
        raise failures[0]
    best = min(plans.values(), key=lambda p: p.privacy.epsilon)  # min keeps the first (Laplace) on a tie
    if noise == AUTO and len(kinds) == 2:
        figures = {kind: _figures(p) for kind, p in plans.items()}
        needed = {kind: p.privacy.epsilon for kind, p in plans.items()}
        best = replace(best, noise_choice=NoiseChoice(AUTO, best.noise, ACCURACY_FIRST, figures.get(Noise.LAPLACE),
                                                      figures.get(Noise.GAUSSIAN), needed.get(Noise.LAPLACE),
                                                      needed.get(Noise.GAUSSIAN)))
    return best


def _plan_for_accuracy_with(bins: int, privacy: PrivacySpec, margin: float, where: str, shape: TreeShape | None,
                            estimator: str, significant: int, noise: str, focus: Span | None = None) -> Plan:
    """:func:`plan_for_accuracy` for one noise (with a focus: the plan for it, or the plan for the whole
    range where that is no worse in the focus)."""
    objective = Objective.MAX if where == AccuracyWhere.EVERY else Objective.TOTAL
    unit = privacy.with_epsilon(1.0)
    base = _best_plan(bins, unit, shape, "auto", estimator, objective, None, 6, noise)
    if focus is not None:
        base = focused_plan(base, focus, shape, objective=objective)
    shares = np.asarray(base.level_budgets)
    limit = 100.0

    def plan_at(epsilon: float) -> Plan:
        spec = privacy.with_epsilon(epsilon)
        return Plan(base.shape, spec, split_budget(budget_total(spec, noise), shares), Estimator(estimator), Noise(noise),
                    focus=base.focus)

    def meets(epsilon: float) -> bool:
        try:
            return margin95(plan_at(epsilon), where, focus) <= margin
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
