"""The one planning request of a CDF release (no Qt): what the officer or the command asked for
(:class:`PlanRequest`) → the plan, the offer for the region the officer needs accurate, and the best
plan with the other noise, for comparison (:func:`plan_cdf`, :func:`other_noise_plan`).

The planning policy lives here once: the noise (``auto``: the planner picks Laplace or Gaussian at
(ε, δ); δ = 0 allows Laplace only; explicit level budgets are in one noise's unit and need that noise
named), the locked level budgets (in the unit of the noise they were set for), and the region (a plan
made for it is taken only if it lowers the region's 95 % margin by :data:`dpgui.core.focus.WORTH_IT`).

Cost: no data is read and nothing is spent: a plan depends on public settings only (K, the tree, ε,
δ, the neighbour model). Time: the planner's, from milliseconds to a few seconds at K = 2²⁰; the
window runs it on a worker thread, the command line on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from dpgui.core.focus import FocusOffer, focus_offer
from dpgui.core.plan import NoiseChoice, Plan, PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.projection import Span, prefix_variances
from dpgui.core.tree import TreeShape
from dpgui.errors import ParameterError
from dpgui.vocabulary import AUTO, Estimator, Noise, Objective

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class PlanRequest:
    """What a CDF plan is asked for, all public: K ``bins``, the ``privacy`` (ε, δ, neighbours, records per
    person, missing rule), the tree (``shape``; None: the best branching), the level ``budgets``
    ("auto" or another planner word, or explicit budgets in the unit of ``noise``), the estimator and the
    objective, the ``noise`` (a :class:`~dpgui.vocabulary.Noise` or ``auto``), level budgets ``locked``
    by the officer (in the current plan's unit) and the CDF points of the region the officer needs
    accurate (``focus``; None: everywhere)."""

    bins: int
    privacy: PrivacySpec
    shape: TreeShape | None = None
    budgets: str | tuple[float, ...] = "auto"
    estimator: str = Estimator.GLS
    objective: str = Objective.TOTAL
    noise: str = AUTO
    locked: Mapping[int, float] | None = None
    focus: Span | None = None

    def at_budget(self, epsilon: float, delta: float) -> PlanRequest:
        """The same request at (ε, δ), the rest of the privacy spec unchanged: the planner's level budgets
        (explicit or locked ones are in the unit of the request's own budget, so they are left out)."""
        p = self.privacy
        budgets = "auto" if isinstance(self.budgets, tuple) else self.budgets
        return replace(self, privacy=PrivacySpec(epsilon, p.neighbours, p.records_per_person, delta, p.impute),
                       budgets=budgets, locked=None)


@dataclass(frozen=True)
class PlannedCdf:
    """The plan to release with, and the answer for the region (None without one): the plan made for the
    region, the plan for the whole range, and which one :attr:`plan` is."""

    plan: Plan
    offer: FocusOffer | None = None


def plan_noise(noise: str, delta: float, explicit_budgets: bool) -> str:
    """The noise to plan with: ``noise`` as asked, ``auto`` left to the planner; Gaussian noise without δ
    is refused, and explicit budgets without a named noise (they have no unit) too, but at δ = 0 where
    Laplace is the only noise."""
    if noise == Noise.GAUSSIAN and delta <= 0:
        raise ParameterError("--noise gaussian needs δ > 0 (with δ = 0, the default, only pure ε-DP Laplace noise is "
                             "possible)", "give --delta D, e.g. --delta 1e-9, or use --noise laplace")
    if noise == AUTO and explicit_budgets:
        if delta > 0:
            raise ParameterError("explicit --budgets are in the unit of one noise (ε_l for Laplace, ρ_l for Gaussian), "
                                 "and --noise auto has not chosen one", "add --noise laplace or --noise gaussian")
        return str(Noise.LAPLACE)  # δ = 0: Laplace is the only noise
    return noise


def plan_cdf(request: PlanRequest, progress: Progress | None = None) -> PlannedCdf:
    """The plan of ``request``: :func:`~dpgui.core.planner.auto_plan` at (ε, δ) with the requested noise
    and locks, then, with a region, :func:`focus_plan`. Explicit budgets with a tree are built as given
    (no region: the planner would choose them), and only their own noise's figures are in the plan's noise
    choice (the other noise's budgets would be in another unit). ``progress(fraction, words)`` is told of
    each stage."""
    tell = progress or (lambda fraction, words: None)
    if isinstance(request.budgets, tuple) and request.shape is not None:
        if request.focus is not None:
            raise ParameterError("a plan for a region optimises the level budgets, and they were given",
                                 "leave out the level budgets, or the region")
        return PlannedCdf(_explicit_plan(request))
    tell(0.0, "Planning…")
    plan = auto_plan(request.bins, request.privacy, request.shape, request.budgets, request.estimator,
                     request.objective, request.locked or None, noise=request.noise)
    if request.focus is None:
        return PlannedCdf(plan)
    tell(0.5, "Planning for the region you need accurate…")
    return focus_plan(request, plan)


def focus_plan(request: PlanRequest, default: Plan) -> PlannedCdf:
    """The answer for ``request``'s region (:func:`~dpgui.core.focus.focus_offer`): the plan made for its CDF
    points if it lowers their 95 % margin by :data:`~dpgui.core.focus.WORTH_IT`, else ``default`` (the plan
    for the whole range, :func:`plan_cdf`'s for the request without a region)."""
    assert request.focus is not None
    offer = focus_offer(request.bins, request.privacy, request.focus, request.shape, default.estimator,
                        request.objective, default.noise, locked=request.locked or None, default=default)
    return PlannedCdf(offer.plan, offer)


def _explicit_plan(request: PlanRequest) -> Plan:
    assert request.shape is not None and isinstance(request.budgets, tuple)
    plan = Plan(request.shape, request.privacy, request.budgets, Estimator(request.estimator), Noise(request.noise))
    variances = prefix_variances(plan)
    figures = (float(variances.sum()), float(variances.max()))
    return replace(plan, noise_choice=NoiseChoice(request.noise, Noise(request.noise), request.objective,
                                                  figures if request.noise == Noise.LAPLACE else None,
                                                  figures if request.noise == Noise.GAUSSIAN else None))


def other_noise_plan(plan: Plan, shape: TreeShape | None, objective: str) -> Plan | None:
    """The best plan with the noise ``plan`` does not use, at its (ε, δ), K, estimator and ``shape``
    (None: the best branching), without locked levels; None when δ = 0. A Laplace plan does not
    depend on δ, so the Laplace one is planned at δ = 0 (one noise) and carried to the plan's δ."""
    privacy = plan.privacy
    if privacy.delta <= 0:
        return None
    bins = plan.shape.bins
    if plan.noise == Noise.GAUSSIAN:
        laplace = auto_plan(bins, privacy.pure(), shape=shape, estimator=plan.estimator, objective=objective,
                            noise=Noise.LAPLACE)
        return Plan(laplace.shape, privacy, laplace.level_budgets, laplace.estimator, Noise.LAPLACE)
    return auto_plan(bins, privacy, shape=shape, estimator=plan.estimator, objective=objective, noise=Noise.GAUSSIAN)
