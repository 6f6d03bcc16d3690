"""Step 2's sentences about a plan: the tree in one sentence, and the noise note (which noise the plan uses and
why, with the projected errors of both noises when δ > 0). Public values only (the plan, its projection)."""

from __future__ import annotations

import math

from dpgui.app import text
from dpgui.core.missing import missing_rule_text
from dpgui.core.plan import Plan
from dpgui.core.planner import average_margin95
from dpgui.core.projection_curves import ProjectedCurves
from dpgui.core.quantiles import noise_margin
from dpgui.formatting import format_margin_records
from dpgui.vocabulary import AUTO, Noise, Objective


def plan_words(plan: Plan) -> str:
    """The tree in one sentence: bins, branching, budget and noise, and what happens to missing values."""
    branching = " × ".join(map(str, plan.shape.branching))
    missing = (missing_rule_text(plan.missing_rule, plan.privacy.impute)
               + (" (the tree's leaf K + 1)" if plan.shape.missing_leaf else ""))
    privacy = plan.privacy
    budget = f"ε = {privacy.epsilon:g}"
    if privacy.delta > 0:
        budget += f", δ = {text.format_delta(privacy.delta)}"
    if plan.noise == Noise.GAUSSIAN:
        budget += f", Gaussian noise (ρ = {plan.budget_total:.4g})"
    else:
        budget += ", Laplace noise" + (" (δ not used)" if privacy.delta > 0 else "")
    extra = (f" (the last of the {plan.shape.branching[0]} top branches only holds the missing values' leaf)"
             if plan.shape.missing_branch else "")
    return (f"Tree: {plan.shape.bins:,} bins, branching {branching}{extra}, {budget}. "
            f"Missing values: {missing}.")


def noise_words(plan: Plan, requested: str, objective: str, projection: ProjectedCurves | None = None) -> str:
    """The noise note: which noise the plan uses and why, in plain words; with the projection of
    the plan and of the other noise's best plan (``projection.alternative``) the two projected
    errors, on the objective the planner compared (the worst point, or on average). ``requested``: the
    noise chosen on the page (or "auto"); ``objective``: the planner's ("total" or "max")."""
    privacy, name = plan.privacy, text.NOISE_NAMES[plan.noise]
    if privacy.delta <= 0:
        return "Laplace noise: with δ = 0 (pure ε-DP) it is the only noise possible."
    comparison = ""
    other = text.NOISE_NAMES[Noise.LAPLACE if plan.noise == Noise.GAUSSIAN else Noise.GAUSSIAN]
    worst = objective == Objective.MAX
    where = "at the worst point" if worst else "on average"
    mine: float | None = None
    theirs: float | None = None
    if projection is not None and projection.plan is plan and projection.alternative is not None:
        mine = projection.worst if worst else projection.rms
        theirs = projection.alternative_worst if worst else projection.alternative_rms
    elif (plan.noise_choice is not None and plan.noise_choice.objective in (Objective.TOTAL, Objective.MAX)
          and None not in (plan.noise_choice.laplace, plan.noise_choice.gaussian)):
        figures = plan.noise_choice
        pairs = {name: pair for name, pair in (("laplace", figures.laplace), ("gaussian", figures.gaussian))
                 if pair is not None}
        index = 1 if figures.objective == Objective.MAX else 0
        where = "at the worst point" if index else "on average"

        def margin(pair: tuple[float, float]) -> float:
            if index:
                return float(noise_margin(math.sqrt(pair[1])))
            return average_margin95(pair[0], plan.shape, privacy.root_public)
        mine = margin(pairs[plan.noise])
        theirs = margin(pairs[Noise.LAPLACE if plan.noise == Noise.GAUSSIAN else Noise.GAUSSIAN])
    if mine is not None and theirs is not None:
        comparison = (f"projected error {format_margin_records(mine)} {where}, against "
                      f"{format_margin_records(theirs)} with {other} noise at this δ")
    choice = plan.noise_choice
    if requested == AUTO and (choice is None or choice.requested == AUTO):
        head = f"Automatic chose <b>{name}</b> noise"
        if choice is not None and choice.objective == "epsilon":  # accuracy first: the smaller ε decided
            needs = {"laplace": choice.laplace_epsilon, "gaussian": choice.gaussian_epsilon}
            theirs_eps = needs[Noise.LAPLACE if plan.noise == Noise.GAUSSIAN else Noise.GAUSSIAN]
            head += f": it reaches the accepted error at ε = {plan.privacy.epsilon:g}"
            head += (f", against ε = {theirs_eps:g} with {other} noise" if theirs_eps is not None
                     else f"; {other} noise cannot reach it")
            return head + "."
        return head + (f": {comparison}." if comparison else ".")
    if requested == AUTO:
        return (f"<b>{name}</b> noise: the locked levels' budgets are in {plan.budget_name}, so Automatic keeps "
                f"{name} noise. Unlock every level (then Auto-optimize) to let it choose again."
                + (f" Now: {comparison}." if comparison else ""))
    better = ""
    if mine is not None and theirs is not None and theirs < mine:
        better = f" {other} noise would be more accurate here (choose Automatic to use it)."
    if plan.noise == Noise.LAPLACE:
        return ("<b>Laplace</b> noise gives pure ε-DP: δ is not used (no δ is spent)."
                + (f" It gives a {comparison}." if comparison else "") + better)
    words = (f"<b>Gaussian</b> noise: its privacy is counted as ρ = {plan.budget_total:.4g} (zero-concentrated "
             f"DP), which guarantees ε = {privacy.epsilon:g} with δ = {text.format_delta(privacy.delta)}.")
    return words + (f" It gives a {comparison}." if comparison else "") + better
