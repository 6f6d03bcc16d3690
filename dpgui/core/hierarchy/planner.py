"""The planner of hierarchy releases (:func:`plan_hierarchy`): the noise, the level budgets (Ko, Ziani &
Fioretto's programs) and the consistency step, each automatic choice said in the plan's notes."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from dpgui.core.counting_trees import multiplicative_params
from dpgui.core.counting_trees_accuracy import recommend_alpha_mechanism
from dpgui.core.hierarchy.plan import (
    MAX_LEVEL_WEIGHT, MIN_LEVEL_WEIGHT, HierarchyPlan, _check_choice, _check_level_sizes, _member, _usable_weight,
    assumed_levels, check_assumed_records,
)
from dpgui.core.hierarchy.projection import (
    _check_prior, _closed_form_levels, _weighted, counts_projected_on, project_hierarchy, projection_trials,
)
from dpgui.core.hierarchy.release import INTERVAL_LEVEL
from dpgui.core.hierarchy.tree import Hierarchy
from dpgui.core.hierarchy_budget import (
    least_budget_for_target, optimal_allocation,
)
from dpgui.core.noise_mechanisms import mechanism_for
from dpgui.core.plan import PrivacySpec, budget_total, split_budget
from dpgui.errors import ParameterError
from dpgui.vocabulary import AUTO, CDF_NOISES, HIERARCHY_NOISES, Allocation, HierarchyConsistency, Noise, PriorSource


def _uniform_budgets(sizes: Sequence[int], privacy: PrivacySpec, noise: str) -> tuple[float, ...]:
    first = privacy.first_noised_level()
    shares = split_budget(budget_total(privacy, noise), [1.0] * (len(sizes) - first))
    return (0.0,) * first + tuple(shares)


def _budgets_for(sizes: tuple[int, ...], privacy: PrivacySpec, noise: Noise, allocation: str, weights: tuple[float, ...],
                 prior: tuple[np.ndarray, ...] | None, target_mse: float | None) -> tuple[PrivacySpec, tuple[float, ...]]:
    """(the plan's privacy spec, level budgets) of one noise: uniform, program (6) or program (7)."""
    if allocation == Allocation.UNIFORM:
        return privacy, _uniform_budgets(sizes, privacy, noise)
    assert prior is not None
    if allocation == Allocation.OPTIMAL:
        return privacy, optimal_allocation(prior, privacy, weights, noise)
    assert target_mse is not None

    def epsilon_of(budgets: tuple[float, ...]) -> float:  # refused above the ε allowed
        need = math.fsum(budgets)
        eps = float(mechanism_for(noise).epsilon_of(Fraction(need), privacy.delta))
        if eps > privacy.epsilon * (1 + 1e-12):
            raise ParameterError(f"the target weighted MSE {target_mse:g} needs ε = {eps:.4g} with {noise} noise, "
                                 f"more than the ε = {privacy.epsilon:g} allowed", "raise ε or the target")
        return eps

    least = least_budget_for_target(prior, privacy, weights, target_mse, noise)
    least_epsilon = epsilon_of(least)  # before the rounding steps, which build plans at that ε
    try:
        budgets = _meet_target(sizes, privacy, noise, weights, prior, target_mse, least)
    except ParameterError as err:
        if "sampler" not in err.problem and least_epsilon > 0:  # (a Gaussian ρ that small converts to ε = 0)
            raise
        raise ParameterError(f"the target weighted MSE {target_mse:g} is met with ε = {least_epsilon:.3g}, whose noise is "
                             "beyond the noise sampler's limit", "give a smaller target") from None
    need = math.fsum(budgets)
    eps = epsilon_of(budgets)
    spec = privacy.with_epsilon(eps)
    if noise.is_zcdp:  # the ρ of the rounded-up ε is ≥ the need: scale the budgets up to it
        total = budget_total(spec, Noise.GAUSSIAN)
        budgets = tuple(b * total / need for b in budgets)
    return spec, budgets


def _multiplicative_plan(sizes: tuple[int, ...], privacy: PrivacySpec, weights: tuple[float, ...], allocation: str,
                         consistency: str, prior_source: PriorSource, alpha: float | None, notes: list[str],
                         assumed_records: int | None = None) -> HierarchyPlan:
    if alpha is None:
        raise ParameterError("the multiplicative mechanism (Ghazi et al. 2023) needs α, its multiplicative error",
                             "give α in (0, 1), e.g. 0.5")
    if allocation != Allocation.UNIFORM:
        raise ParameterError("the multiplicative mechanism spends its budget by the rounds of Ghazi et al. 2023, not by "
                             f"a {allocation} allocation", "use the uniform allocation with multiplicative noise")
    if consistency in (HierarchyConsistency.TOPDOWN, HierarchyConsistency.GLS):
        raise ParameterError("the multiplicative mechanism's counts are bucketed upper estimates; making them consistent "
                             "would void its (α, η) guarantee", "use consistency none with multiplicative noise")
    if consistency == AUTO:
        notes.append("consistency: none (the multiplicative mechanism's (α, η) guarantee is for its own counts)")
    params = multiplicative_params(sizes, privacy, alpha, 1.0 - INTERVAL_LEVEL)
    return HierarchyPlan(sizes, privacy, Noise.MULTIPLICATIVE, (), weights, Allocation.UNIFORM, HierarchyConsistency.NONE,
                         None, prior_source, params,
                         tuple(notes), assumed_records)


def plan_hierarchy(level_sizes: Sequence[int], privacy: PrivacySpec, *, noise: str = AUTO, allocation: str = Allocation.UNIFORM,
                   weights: Sequence[float] | None = None, target_mse: float | None = None, consistency: str = AUTO,
                   prior_levels: Sequence[npt.ArrayLike] | None = None, prior_source: str = PriorSource.NONE,
                   alpha: float | None = None, hierarchy: Hierarchy | None = None, trials: int | None = None,
                   assumed_records: int | None = None) -> HierarchyPlan:
    """The plan of a hierarchy release: noise, level budgets, weights, consistency. Public: it depends on
    the tree's shape, the privacy spec and the public prior only.

    ``allocation``: ``uniform`` (equal budget per noised level; needs no counts), ``optimal``
    (program 6 within ε or ρ) or ``target`` (program 7 with τ = ``target_mse``: the least ε, which must
    not exceed ``privacy.epsilon``; the plan's spec carries that ε). The last two need ``prior_levels``
    (public counts, root first; ``prior_source`` says where they come from). ``custom`` (level budgets
    set by hand) is a plan's record of budgets the officer typed, never planned: ParameterError.

    ``noise="auto"``: with δ > 0 and α given, Ghazi et al.'s multiplicative mechanism if its projected
    α-mRMSE is below the Gaussian baseline's (:func:`counting_trees_accuracy.recommend_alpha_mechanism`);
    otherwise laplace or (δ > 0) gaussian, the one with the lower eq. (5) weighted MSE of its clamped
    counts (closed form on the prior; without a prior: Σ w_ℓ n_ℓ · noise variance, the large-count
    limit), or — for the target allocation — the one that meets τ with the smaller ε.
    ``consistency="auto"``: topdown or gls, the lower Monte Carlo projected weighted MSE on the prior
    (:func:`project_hierarchy`, seeded; ``trials`` is used by multiplicative projections only);
    without ``prior_levels`` and ``hierarchy``: topdown. Every automatic choice is said in
    ``notes``. ``assumed_records``: recorded in the plan (:attr:`HierarchyPlan.assumed_records`) for the
    projections; it chooses nothing. O(distinct prior counts) for the programs; the Monte Carlo
    O(trials · nodes).
    """
    assumed = None if assumed_records is None else check_assumed_records(assumed_records)
    sizes, w, prior, source = _checked_request(level_sizes, hierarchy, noise, allocation, consistency, prior_source,
                                               weights, prior_levels, target_mse)
    notes: list[str] = []
    # Figures computed on opted-in confidential counts stay out of the notes (published in the
    # manifest): the opt-in covers the choices made on them, not their projected errors.
    confidential = prior is not None and source == PriorSource.CONFIDENTIAL

    def shown(figures: str) -> str:
        return "figures on the confidential counts, not published" if confidential else figures

    counts_words = counts_projected_on(source if prior is not None else PriorSource.NONE)

    if noise in (Noise.GAUSSIAN, Noise.MULTIPLICATIVE) and privacy.delta <= 0:
        raise ParameterError(f"{noise} noise needs δ > 0", "set δ, e.g. 1e-9, or choose Laplace noise")
    if noise == Noise.MULTIPLICATIVE:
        return _multiplicative_plan(sizes, privacy, w, allocation, consistency, source, alpha, notes, assumed)
    if noise == AUTO and privacy.delta > 0:
        if alpha is not None and allocation == Allocation.UNIFORM and consistency in (AUTO, HierarchyConsistency.NONE):
            if _multiplicative_wins(sizes, privacy, alpha, prior, notes, shown):
                return _multiplicative_plan(sizes, privacy, w, allocation, consistency, source, alpha, notes, assumed)
        elif alpha is None:
            notes.append("multiplicative (Ghazi et al. 2023) not considered: no α given")
    if allocation != Allocation.UNIFORM and prior is None:
        raise ParameterError(f"the {allocation} allocation needs node counts (the programs of Ko, Ziani & Fioretto 2025)",
                             "give a public prior (--prior), opt in to counts from the data, or use the uniform allocation")
    candidates = (list(CDF_NOISES) if privacy.delta > 0 else [Noise.LAPLACE]) if noise == AUTO else [Noise(noise)]
    target = None if target_mse is None else float(target_mse)
    scored, refused = _score_noises(sizes, privacy, candidates, Allocation(allocation), w, prior, target, source)
    if not scored:
        raise refused[0]
    _, nz, spec, budgets = min(scored, key=lambda item: item[0])
    if len(candidates) > 1:
        if allocation == Allocation.TARGET:
            how = "ε that meets the target (program 7)"
        elif prior is not None:
            how = f"weighted MSE (eq. 5) of the clamped counts on {counts_words}"
        else:
            how = "noise variance Σ w_ℓ n_ℓ Var (no prior counts)"
        figures = ", ".join(f"{n} {s:.4g}" for s, n, _, _ in scored)
        dropped = f"; {len(refused)} noise(s) need more than ε = {privacy.epsilon:g}" if refused else ""
        notes.append(f"noise: {nz}, the lower {how}: {shown(figures) if prior is not None else figures}{dropped}")
    if consistency != AUTO:
        return HierarchyPlan(sizes, spec, nz, budgets, w, Allocation(allocation), HierarchyConsistency(consistency), target,
                             source, None, tuple(notes), assumed)
    base = HierarchyPlan(sizes, spec, nz, budgets, w, Allocation(allocation), HierarchyConsistency.TOPDOWN, target,
                         source, None, tuple(notes), assumed)
    return _choose_consistency(base, prior, hierarchy, trials, f"on {counts_words}", shown)


def _checked_request(level_sizes: Sequence[int], hierarchy: Hierarchy | None, noise: str, allocation: str,
                     consistency: str, prior_source: str, weights: Sequence[float] | None,
                     prior_levels: Sequence[npt.ArrayLike] | None, target_mse: float | None,
                     ) -> tuple[tuple[int, ...], tuple[float, ...], tuple[np.ndarray, ...] | None, PriorSource]:
    """:func:`plan_hierarchy`'s arguments checked (ParameterError or DataError with the fix): the level sizes,
    the weights, the prior's levels (None without) and where they come from (a prior file when given
    without saying)."""
    sizes = _check_level_sizes(level_sizes)
    if hierarchy is not None and hierarchy.level_sizes != sizes:
        raise ParameterError(f"the tree has {hierarchy.level_sizes} nodes per level, the plan {sizes}", "plan for this tree")
    _check_choice(noise, (*HIERARCHY_NOISES, AUTO), "noise")
    _check_choice(allocation, tuple(Allocation), "allocation")
    if allocation == Allocation.CUSTOM:
        raise ParameterError("the custom allocation is level budgets set by hand: the planner cannot invent them",
                             "plan with the uniform, optimal or target allocation, then set the level budgets")
    _check_choice(consistency, (*HierarchyConsistency, AUTO), "consistency")
    source = _member(PriorSource, prior_source, "prior source")
    w = tuple([1.0] * len(sizes) if weights is None else [float(x) for x in weights])
    if len(w) != len(sizes) or not all(_usable_weight(x) for x in w):
        raise ParameterError(f"weights {list(w)} are not one weight per level (root first), each 0 or from "
                             f"{MIN_LEVEL_WEIGHT:g} to {MAX_LEVEL_WEIGHT:g}", f"give {len(sizes)} weights, e.g. 1 each")
    prior = None if prior_levels is None else _check_prior(prior_levels, sizes)
    if prior is not None and source == PriorSource.NONE:
        source = PriorSource.FILE
    if allocation == Allocation.TARGET and target_mse is None:
        raise ParameterError("the target allocation needs a target weighted MSE", "give target:TAU, e.g. target:1000")
    return sizes, w, prior, source


def _multiplicative_wins(sizes: tuple[int, ...], privacy: PrivacySpec, alpha: float, prior: tuple[np.ndarray, ...] | None,
                         notes: list[str], shown: Callable[[str], str]) -> bool:
    """Whether Ghazi et al.'s multiplicative mechanism has the lower projected α-mRMSE than the Gaussian
    baseline (:func:`counting_trees_accuracy.recommend_alpha_mechanism`); the comparison is added to ``notes``."""
    choice, gauss, mult = recommend_alpha_mechanism(sizes, privacy, alpha, prior)
    if choice == Noise.MULTIPLICATIVE:
        notes.append("noise: multiplicative, projected α-mRMSE below the Gaussian baseline's (α = "
                     f"{alpha:g}; {shown(f'{mult.alpha_mrmse:.4g} against {gauss.alpha_mrmse:.4g}')})")
        return True
    notes.append("multiplicative not chosen: projected α-mRMSE not below the Gaussian baseline's (α = "
                 f"{alpha:g}; {shown(f'{mult.alpha_mrmse:.4g} against {gauss.alpha_mrmse:.4g}')})")
    return False


def _score_noises(sizes: tuple[int, ...], privacy: PrivacySpec, candidates: Sequence[Noise], allocation: Allocation,
                  w: tuple[float, ...], prior: tuple[np.ndarray, ...] | None, target: float | None, source: PriorSource,
                  ) -> tuple[list[tuple[float, Noise, PrivacySpec, tuple[float, ...]]], list[ParameterError]]:
    """(score, noise, its plan's privacy spec, its level budgets) of each candidate noise, lower is better (one
    candidate: score 0), and the refusals of the noises that cannot meet a target within ε."""
    scored: list[tuple[float, Noise, PrivacySpec, tuple[float, ...]]] = []
    refused: list[ParameterError] = []
    for nz in candidates:
        try:
            spec, budgets = _budgets_for(sizes, privacy, nz, allocation, w, prior, target)
        except ParameterError as exc:  # auto + target: a noise that needs more than ε drops out
            if len(candidates) == 1 or allocation != Allocation.TARGET:
                raise
            refused.append(exc)
            continue
        if len(candidates) == 1:
            scored.append((0.0, nz, spec, budgets))
            break
        if allocation == Allocation.TARGET:  # program (7): both meet τ; the better needs the smaller ε
            score = spec.epsilon
        else:
            probe = HierarchyPlan(sizes, spec, nz, budgets, w, allocation, HierarchyConsistency.NONE, target, source)
            if prior is None:
                score = math.fsum(wl * n * v for wl, n, v in zip(w, sizes, probe.level_noise_variances()))
            else:
                score = _weighted(probe, _closed_form_levels(probe, prior))
        scored.append((score, nz, spec, budgets))
    return scored, refused


def _choose_consistency(base: HierarchyPlan, prior: tuple[np.ndarray, ...] | None, hierarchy: Hierarchy | None,
                        trials: int | None, where: str, shown: Callable[[str], str]) -> HierarchyPlan:
    """consistency auto: ``base`` (topdown) or its gls twin, the lower Monte Carlo projected weighted MSE on
    ``prior`` (or on the plan's assumed records spread evenly); topdown without counts or tree."""
    assumed = base.assumed_records
    if prior is None and assumed is not None and hierarchy is not None:
        prior, where = assumed_levels(hierarchy, assumed), f"at {assumed:,} records spread evenly"
    if prior is None or hierarchy is None:
        missing = "counts (a public prior, or a number of records)" if prior is None else "the tree"
        return _with_note(base, f"consistency: topdown by default (projecting topdown against gls needs {missing})")
    runs = projection_trials(base.level_sizes) if trials is None else int(trials)
    projected = []
    for method in (HierarchyConsistency.TOPDOWN, HierarchyConsistency.GLS):
        plan = replace(base, consistency=method)
        projected.append((project_hierarchy(plan, prior, trials=runs, seed=0, hierarchy=hierarchy).weighted_mse, method, plan))
    best = min(projected, key=lambda item: item[0])
    return _with_note(best[2], f"consistency: {best[1]}, the lower projected weighted MSE (simulated {where}): "
                      + shown(", ".join(f"{m} {s:.4g}" for s, m, _ in projected)))


def _meet_target(sizes: tuple[int, ...], privacy: PrivacySpec, noise: Noise, weights: tuple[float, ...],
                 prior: tuple[np.ndarray, ...], tau: float, budgets: tuple[float, ...]) -> tuple[float, ...]:
    """Program (7)'s budgets, raised by the least factor that keeps eq. (5) ≤ τ at the scales a release
    really uses (laplace_scale/gaussian_sigma2 round the scale up by ≤ 2⁻¹⁶ relative, or one
    2⁻¹⁶ step for tiny scales). A few multiplicative steps, each by the square root of the excess."""
    factor = 1.0
    for _ in range(60):
        scaled = tuple(b * factor for b in budgets)
        total = math.fsum(scaled)
        eps = float(mechanism_for(noise).epsilon_of(Fraction(total), privacy.delta))
        pr = privacy.with_epsilon(eps)
        if noise.is_zcdp:
            scaled = tuple(b * budget_total(pr, Noise.GAUSSIAN) / total for b in scaled)
        plan = HierarchyPlan(sizes, pr, noise, scaled, weights, Allocation.TARGET, HierarchyConsistency.NONE, tau)
        achieved = _weighted(plan, _closed_form_levels(plan, prior))
        if achieved <= tau:
            return scaled
        factor *= math.sqrt(achieved / tau) * (1.0 + 1e-12)
    raise ParameterError("the target allocation could not meet τ at the sampler's scales", "raise the target")


def _with_note(plan: HierarchyPlan, note: str) -> HierarchyPlan:
    return replace(plan, notes=(*plan.notes, note))
