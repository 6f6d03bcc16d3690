"""``dpgui plan`` and ``dpgui simulate``, and the CDF plan of the options that ``release`` uses too
(:mod:`dpgui.workspace.planning`: the one planning request of the window and the command line).
Nothing is spent; ``simulate`` reads the data only to simulate releases on it, and prints errors, never counts.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpgui.cli.rendering import _print, focus_text, plan_text, simulate_text
from dpgui.cli.requests import (
    CdfPlanOptions, PlanCommandRequest, SimulateRequest, _check_missing_option, privacy_unit_of,
)
from dpgui.cli.sources import _check_data_columns, _check_no_source_options, _has_source, _open_data, _source_spec
from dpgui.errors import ParameterError
from dpgui.vocabulary import AUTO, CDF_NOISES, AccuracyWhere, Noise, SourceKind, choices

if TYPE_CHECKING:  # imported where used, so that the start-up stays light
    from dpgui.core.plan import Plan


@dataclass(frozen=True)
class OptionsPlan:
    """The plan of a command's options, and ``--focus``'s offer for the output (None without a region)."""

    plan: Plan
    focus_offer: dict[str, Any] | None = None


def _make_plan(options: CdfPlanOptions, lower: float | None = None, upper: float | None = None,
               column: str = "") -> OptionsPlan:
    """The plan of the command's options (:func:`dpgui.workspace.planning.plan_cdf`): ``auto_plan`` at
    (ε, δ) with the requested noise (``--noise``, default auto; ``--delta``, default 0), or explicit
    ``--budgets`` in the unit of the one noise asked for (ε_l or ρ_l), built as given; then ``--focus``
    between the bounds ``lower`` and ``upper`` of ``column`` (named in the offer's words)."""
    from dpgui.core.missing import parse_missing_option
    from dpgui.core.plan import PrivacySpec
    from dpgui.core.tree import TreeShape
    from dpgui.workspace.planning import PlanRequest, plan_cdf, plan_noise

    delta = options.delta or 0.0
    noise = plan_noise(options.noise or AUTO, delta, not isinstance(options.budgets, str))
    _check_missing_option(options.missing, options.neighbours)
    privacy = PrivacySpec(options.epsilon, options.neighbours, options.records_per_person, delta,
                          parse_missing_option(options.missing))
    privacy_unit_of(options.person_column, options.records_per_person, privacy)  # refused before anything is read
    shape = None if options.branching == AUTO else TreeShape.parse(options.bins, options.branching,
                                                                   privacy.missing_leaf)
    request = PlanRequest(options.bins, privacy, shape, options.budgets, options.estimator, options.objective, noise)
    if not isinstance(options.budgets, str) and shape is not None and options.focus is not None:
        raise ParameterError("--focus optimises the level budgets, but --budgets gives them",
                             "leave out --budgets (or --focus)")
    default = plan_cdf(request).plan  # (budgets without a branching: auto_plan says so)
    if options.focus is None:
        return OptionsPlan(default)
    return _focus_plan(options.focus, lower, upper, column, request, default)


def _focus_plan(text: str, lower: float | None, upper: float | None, column: str, request: Any,
                default: Plan) -> OptionsPlan:
    """``--focus`` ``text`` between the bounds: the plan for the region if it lowers the region's 95 % margin
    by at least :data:`~dpgui.core.focus.WORTH_IT` (:func:`dpgui.workspace.planning.focus_plan`), else
    ``default``; the offer is returned for the output. Bad input (not numbers, inverted, outside the
    bounds, no bounds) is refused before anything is read or spent."""
    from dataclasses import replace

    from dpgui.core.focus import FocusChoice, value_span
    from dpgui.data.binning import check_bounds
    from dpgui.workspace.planning import focus_plan

    if lower is None or upper is None:
        raise ParameterError("--focus is in the column's units and needs the bounds",
                             "give --lower A --upper B (the bounds of the release) as well")
    lower, upper = check_bounds(lower, upper)
    choice = FocusChoice.parse(text)
    interval = choice.interval(lower, upper)
    if interval is None:  # "everywhere"
        return OptionsPlan(default)
    span = value_span(interval[0], interval[1], lower, upper, request.bins)
    planned = focus_plan(replace(request, focus=span), default)
    assert planned.offer is not None
    offer = {"values": list(interval), "region": str(choice.region),
             "words": choice.words(lower, upper, column), **planned.offer.to_json()}
    return OptionsPlan(planned.plan, offer)


def _focus_note(offer: dict[str, Any] | None, command: str) -> None:
    """One line on stderr when ``--focus`` gains too little: the plan for the whole range is used."""
    from dpgui.core.focus import WORTH_IT

    if offer is not None and not offer["worth_it"]:
        print(f"dpgui {command}: note: planning for {offer['words']} would lower its 95 % error margin only from "
              f"±{offer['default_margin95']:.4g} to ±{offer['focused_margin95']:.4g} records "
              f"({100 * offer['gain']:.0f} %, less than {100 * WORTH_IT:.0f} %), so the plan for the whole range is "
              "used", file=sys.stderr)


def _plan_json(plan: Plan, delta_given: bool, focus_offer: dict[str, Any] | None = None) -> dict[str, Any]:
    """``plan.to_json()`` as the commands print it. Without ``--delta``/``--noise`` (``delta_given``:
    :attr:`CdfPlanOptions.delta_given`) exactly the keys
    printed before δ existed (the plan's ``noise_choice`` is left out). With either: ``delta``,
    ``rho`` and ``level_rhos`` always (null for Laplace), and ``alternatives``: the projected
    ``total_sq_error``/``max_variance``/``max_std_error`` (counts²/records) of the best Laplace and the
    best Gaussian plan at this (ε, δ), null where not planned (Gaussian at δ = 0)."""
    out = plan.to_json()
    if focus_offer is not None:
        out["focus_offer"] = focus_offer
    if not delta_given:
        out.pop("noise_choice", None)
        return out
    out.setdefault("delta", plan.privacy.delta)
    out.setdefault("rho", None)
    out.setdefault("level_rhos", None)
    choice = plan.noise_choice.to_json() if plan.noise_choice is not None else None
    out["alternatives"] = {kind: choice[kind] if choice else None for kind in choices(*CDF_NOISES)}
    return out


def _delta_unused(plan: Plan) -> str | None:
    """One sentence when δ > 0 was given but the plan is Laplace (pure ε-DP: δ is not spent)."""
    if plan.noise == Noise.LAPLACE and plan.privacy.delta > 0:
        return (f"δ = {plan.privacy.delta:g} is unused: the plan's Laplace noise is pure ε-DP, so the release "
                "charges δ = 0")
    return None


def _note_delta_unused(plan: Plan, command: str) -> None:
    """:func:`_delta_unused` as one line on stderr (exit code unchanged)."""
    text = _delta_unused(plan)
    if text is not None:
        print(f"dpgui {command}: note: {text}", file=sys.stderr)


def _plan_report(plan: Plan, n: int | None, delta_given: bool,
                 focus_offer: dict[str, Any] | None = None) -> dict[str, Any]:
    from dpgui.core.margins import cdf_margins
    from dpgui.core.planner import baselines
    from dpgui.core.projection import project

    out = _plan_json(plan, delta_given, focus_offer)
    out["projected"] = project(plan).to_json(n)
    out["projected"]["margin95"] = cdf_margins(plan).to_json()
    out["baselines"] = baselines(plan.shape.bins, plan.privacy)
    best = out["baselines"]["paper_best"]["total_sq_error"]
    out["projected"]["ratio_to_paper_best"] = out["projected"]["total_sq_error"] / best
    return out


def cmd_plan(args: argparse.Namespace) -> int:
    """``dpgui plan``: an adapter of :func:`plan_command`."""
    return plan_command(PlanCommandRequest.of(args))


def plan_command(request: PlanCommandRequest) -> int:
    """The plan of the options with its projected errors, printed (nothing is read or spent)."""
    planned = _make_plan(request.options, request.lower, request.upper)
    plan = planned.plan
    n = request.n
    _warn_before_spend(plan, n, "plan")  # --n is typed by the user: public, or the user's own estimate
    report = _plan_report(plan, n, request.options.delta_given, planned.focus_offer)
    if request.json:
        _print(report, True)
        _note_delta_unused(plan, "plan")
    else:
        print(plan_text(report, n, request.options.person_column))
    _focus_note(planned.focus_offer, "plan")
    return 0


def _warn_before_spend(plan: Plan, n: int | None, command: str) -> None:
    """Warnings on stderr about ``plan`` for N records, before anything is spent: its 95 % margin at
    the worst CDF point (:func:`dpgui.core.planner.margin95`) larger than N (the counts would be mostly
    noise), and a spent δ ≥ 1/N (one person's record could be published outright). ``n``: a public N
    (change), or one the user typed; None (say nothing) for a private N — never the data's row count
    under add/remove, which would make the warning itself a release."""
    from dpgui.core.planner import margin95

    if n is None or n <= 0:
        return
    margin = margin95(plan, AccuracyWhere.EVERY)
    if margin > n:
        print(f"dpgui {command}: warning: the plan's 95 % margin at its worst CDF point, ± {margin:,.4g} records, is "
              f"larger than N = {n:,}: the released counts would be mostly noise; use fewer bins or a larger ε",
              file=sys.stderr)
    if plan.delta_spent > 0 and plan.delta_spent >= 1 / n:
        print(f"dpgui {command}: warning: δ = {plan.delta_spent:g} is not below 1/N = {1 / n:.3g}: with probability δ "
              f"the release may tell more about a person than ε allows; use a δ far below 1/N (e.g. {0.01 / n:.0e})",
              file=sys.stderr)


def cmd_simulate(args: argparse.Namespace) -> int:
    """``dpgui simulate``: an adapter of :func:`simulate_command`."""
    return simulate_command(SimulateRequest.of(args))


def simulate_command(request: SimulateRequest) -> int:
    """Monte-Carlo releases of the plan on the data or a synthetic shape (insecure seeded noise), printed
    with the plan's projection; nothing is spent, and no count is printed."""
    import secrets  # here: it loads OpenSSL, which the other commands do not need

    from dpgui.core.margins import cdf_margins
    from dpgui.core.projection import project
    from dpgui.core.simulation import simulate
    from dpgui.core.synthetic import synthetic_counts

    options = request.options
    seed = request.seed if request.seed is not None else secrets.randbits(63)
    from_data = request.synthetic is None
    if request.synthetic is None:
        from dpgui.data.binning import check_bounds
        from dpgui.data.readers import check_data_file

        if not _has_source(request.source):
            raise ParameterError("no data was given", "give --source URL|FILE (the data) or --synthetic uniform|normal")
        spec = _source_spec(request.source)
        if spec.kind == SourceKind.FILE:
            check_data_file(spec.location)
        missing = [name for name, value in (("column", request.column), ("lower", request.lower),
                                            ("upper", request.upper)) if value is None]
        if missing:
            raise ParameterError(f"--input needs --{missing[0]}", "give --column, --lower and --upper with --input")
        assert request.column is not None and request.lower is not None and request.upper is not None
        check_bounds(request.lower, request.upper)
        column, lower, upper = request.column, request.lower, request.upper
        planned = _make_plan(options, lower, upper, column)
        with _open_data(spec) as source:
            _check_data_columns(source, [column], numeric=True)
            histogram = source.histogram(column, lower, upper, options.bins)
        counts, n_missing = histogram.counts, histogram.n_missing
    else:
        _check_no_source_options(request.source, "--synthetic")
        if request.n is None:
            raise ParameterError("--synthetic needs --n", "give the number of records, e.g. --n 10000")
        planned = _make_plan(options, request.lower, request.upper, request.column or "")
        counts, n_missing = synthetic_counts(request.synthetic, request.n, options.bins, seed), 0
        lower, upper = 0.0, 1.0
    plan = planned.plan
    result = simulate(plan, counts, request.trials, request.consistency, seed, n_missing, lower, upper)
    # Under addremove N is private: a file's exact N is never printed (nor used for % of N).
    n_public = plan.privacy.root_public or not from_data
    # N as a release publishes it: under change all rows (missing values included), else the values.
    n = int(np.sum(counts)) + (n_missing if plan.privacy.root_public else 0)
    out = {
        "plan": _plan_json(plan, options.delta_given, planned.focus_offer),
        "consistency": request.consistency,
        "n": n if n_public else "N is private (addremove): not shown",
        "insecure_seeded_noise": True,
        **result.to_json(),
        "projected": {**project(plan).to_json(n if n > 0 and n_public else None),
                      "margin95": cdf_margins(plan).to_json()},
    }
    if request.json:
        _print(out, True)
    else:
        print(simulate_text(out, show_n=not from_data or plan.privacy.root_public))
        if planned.focus_offer is not None:
            print(focus_text(planned.focus_offer))
    _note_delta_unused(plan, "simulate")
    _focus_note(planned.focus_offer, "simulate")
    return 0
