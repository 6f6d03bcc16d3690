"""What the commands print: text for people and ``--json`` for programs (public values only: plans,
projections, released figures).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpgui.core.missing import MISSING_IMPUTE, MISSING_RULE_TEXT, missing_rule_for
from dpgui.vocabulary import AUTO, Estimator, Neighbours, Noise, Objective


def focus_text(offer: dict[str, Any]) -> str:
    """The region's offer in one line for people (``offer``: :attr:`~dpgui.cli.planning.OptionsPlan.focus_offer`):
    both 95 % margins there and how much smaller the one of the plan for it is (the figure the choice was
    made on)."""
    from dpgui.core.focus import WORTH_IT

    where = "on average" if offer["objective"] == Objective.TOTAL else "at the worst point"
    figures = (f"95 % error ±{offer['focused_margin95']:.4g} records {where} there with the plan for it, "
               f"±{offer['default_margin95']:.4g} with the plan for the whole range")
    if offer["worth_it"]:
        return (f"  region {offer['words']}: {figures} ({100 * offer['gain']:.0f} % smaller): "
                "this plan is optimised for it")
    return (f"  region {offer['words']}: {figures}; not {100 * WORTH_IT:.0f} % smaller ({100 * offer['gain']:.0f} %), "
            "so the plan for the whole range is used")


def _print(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(data, indent=2, default=_json_default))
        return
    for key, value in data.items():
        print(f"{key}: {json.dumps(value, default=_json_default)}")


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(type(value).__name__)


_OBJECTIVE_FIGURE = {"total": ("total_sq_error", "projected total squared error"),
                     "max": ("max_variance", "projected worst variance")}


def noise_text(report: dict[str, Any]) -> str:
    """Which noise the plan uses and why, in one line (``report``: :func:`_plan_json`'s keys with the
    noise choice); e.g. "Gaussian (automatic: projected total squared error 3.1e+06 vs 4.2e+06 with Laplace)"."""
    choice = report.get("noise_choice")
    from dpgui.core.noise_mechanisms import noise_named  # numpy: not for --help

    chosen = Noise.GAUSSIAN if noise_named(report["noise"]) is Noise.GAUSSIAN else Noise.LAPLACE
    other = Noise.LAPLACE if chosen is Noise.GAUSSIAN else Noise.GAUSSIAN
    text = chosen.words
    if not choice:
        return text
    key, label = _OBJECTIVE_FIGURE[choice["objective"]]
    mine, theirs = choice[chosen], choice[other]
    if choice["requested"] == AUTO:
        if theirs is None and not report.get("delta"):
            text += " (automatic: with δ = 0 only pure ε-DP Laplace noise is possible; give --delta for Gaussian)"
        elif theirs is None:
            text += f" (automatic: {other.words} noise is beyond the noise sampler at this ε and δ)"
        else:
            text += (f" (automatic: {label} {mine[key]:.3g} vs {theirs[key]:.3g} with {other.words})")
    else:
        text += " (as asked" + (f"; {label} {mine[key]:.3g}, {theirs[key]:.3g} with {other.words}"
                                if mine is not None and theirs is not None else "") + ")"
    return text


def _margin_line(margins: dict[str, float], n: int | None) -> str:
    """The stated 95 % margins of a CDF plan (``projected["margin95"]``), worded as the window and the
    PDF word them: "Projected 95 % margin …: ± … at the worst point of the CDF, ± … on average"."""
    from dpgui.core.margins import MARGIN_NAME
    from dpgui.formatting import cdf_margin_words

    return f"Projected {MARGIN_NAME}: {cdf_margin_words(margins['worst'], margins['average'], n)}"


def plan_text(report: dict[str, Any], n: int | None, person_column: str | None = None) -> str:
    """The plan in words, for people: tree, budgets, projected error, comparison with the paper; the privacy
    unit (``person_column``: the person-ID column that enforces L, None: L declared) in its words."""
    neighbours = ("change-one (N = all rows is public and published exactly)" if report["neighbours"] == Neighbours.CHANGE
                  else "add/remove-one (N is private and released with noise)")
    projected = report["projected"]
    lines = [
        f"Plan for K = {report['bins']} bins, total budget ε = {report['epsilon']:g}",
        f"  neighbours: {neighbours}",
        f"  {privacy_unit_text(person_column, report['records_per_person'])}",
        f"  missing values: {_missing_words(report)}",
        f"  tree: {_tree_words(report)}, "
        f"estimator: {'GLS (best linear unbiased)' if report['estimator'] == Estimator.GLS else 'covering sum'}",
    ]
    if "alternatives" in report:  # --delta or --noise given: say which noise, why, and in which unit
        from dpgui.core.noise_mechanisms import noise_named  # numpy: not for --help

        gaussian = noise_named(report["noise"]) is Noise.GAUSSIAN
        lines[0] += f", δ = {report['delta']:g}"
        lines.append(f"  noise: {noise_text(report)}")
        if gaussian:
            lines.append(f"  budget: ρ = {report['rho']:.4g} (zCDP), the largest ρ that is (ε, δ)-DP by the "
                         "Canonne–Kamath–Steinke conversion; the levels' budgets below are ρ")
        elif report["delta"] > 0:
            lines.append(f"  δ = {report['delta']:g} is unused: Laplace noise is pure ε-DP, so the release charges δ = 0")
    if report.get("level_rhos") is not None:
        for level, rho, sigma2 in zip(report["levels"], report["level_rhos"], report["level_sigma2"]):
            lines.append(f"  level {level}: ρ = {rho:.4g}" + (f", noise σ² = {sigma2:.4g}" if sigma2 else ", not released"))
    else:
        for level, eps, scale in zip(report["levels"], report["level_epsilons"], report["level_noise_scales"]):
            lines.append(f"  level {level}: ε = {eps:.4g}" + (f", noise scale {scale:.4g}" if scale else ", not released"))
    lines += [
        f"{_margin_line(projected['margin95'], n)} (of the cumulative counts, before consistency, which usually "
        "lowers it)",
        f"  total squared error {projected['total_sq_error']:.4g} = {projected['ratio_to_paper_best']:.3f} x "
        "the best tree of Rameshwar, Tandon & Sharma 2024: "
        f"{'x'.join(map(str, report['baselines']['paper_best']['branching']))}, "
        "equal budgets, covering sum",
    ]
    if report.get("focus_offer") is not None:
        lines.append(focus_text(report["focus_offer"]))
    return "\n".join(lines)


def _tree_words(report: dict[str, Any]) -> str:
    """The plan's tree in words (``report``: a plan's JSON), e.g. "17 x 16 x 16 (4352 leaves; the last of the 17
    top branches only holds the missing values' leaf)"."""
    from dpgui.core.tree import TreeShape

    shape = TreeShape(int(report["bins"]), tuple(report["branching"]), bool(report.get("missing_leaf")))
    extra = (f"; the last of the {shape.branching[0]} top branches only holds the missing values' leaf"
             if shape.missing_branch else "")
    return f"{' x '.join(map(str, shape.branching))} ({shape.padded_bins} leaves{extra})"


def _missing_words(report: dict[str, Any]) -> str:
    """The plan's missing-value rule in words (``report``: a plan's JSON): imputed, the leaf, or dropped."""
    from dpgui.core.missing import missing_rule_text

    impute = report.get("missing_impute")
    if impute is not None:
        return missing_rule_text(MISSING_IMPUTE, impute)
    return (MISSING_RULE_TEXT[missing_rule_for(report["neighbours"])]
            + (" (the tree's leaf K + 1)" if report.get("missing_leaf") else ""))


def _one_line(text: str) -> str:
    """``text`` as one line of a terminal: runs of white space (a query's line breaks) as one space, any other
    control character escaped (:func:`~dpgui.formatting.printable_text`: a recorded text cannot start a line of
    its own)."""
    from dpgui.formatting import printable_text

    return printable_text(" ".join(text.split()))


NORM_LABELS = {"linf": "worst point (max |error|)", "l2": "L2 norm", "l1": "L1 norm (sum |error|)",
               "sq_l2": "squared L2 (sum error²)"}


def simulate_text(out: dict[str, Any], show_n: bool) -> str:
    """The Monte-Carlo result as a table for people: mean error ± its standard error, per norm,
    in records and as a share of the CDF, next to the plan's projection. ``show_n``: False when N
    is private (a data file under add/remove-one), so the table never prints it."""
    plan = out["plan"]
    lines = [
        f"Simulated {out['trials']:,} releases (seed {out['seed']}, INSECURE seeded noise: for study only, never publish)",
        f"  K = {plan['bins']} bins, ε = {plan['epsilon']:g}"
        + (f", δ = {plan['delta']:g}, {Noise(plan['noise'].removeprefix('discrete_')).words} noise"
           if "alternatives" in plan else "")
        + f", {plan['neighbours']} neighbours, branching "
        f"{' x '.join(map(str, plan['branching']))}, estimator {plan['estimator']}, consistency {out['consistency']}"
        + (f", N = {out['n']:,}" if show_n else " (N is private under add/remove-one: not shown)"),
        "",
        f"  {'error of the released cumulative counts':<42} {'records':>24} {'CDF':>24}",
    ]

    def cell(summary: dict[str, float], norm: str) -> str:
        mean, se = summary[f"mean_{norm}"], summary[f"se_{norm}"]
        return f"{mean:.4g} ± {se:.2g}" if math.isfinite(se) else f"{mean:.4g}"

    for norm in ("linf", "l2", "l1", "sq_l2"):
        lines.append(f"  {NORM_LABELS[norm]:<42} {cell(out['counts'], norm):>24} {cell(out['cdf'], norm):>24}")
    projected = out["projected"]
    lines += [
        "  (mean over the trials ± its standard error)",
        "",
        f"{_margin_line(projected['margin95'], out['n'] if show_n and isinstance(out['n'], int) else None)} "
        f"(before consistency); total squared error {projected['total_sq_error']:.4g}",
    ]
    return "\n".join(lines)


def _note_lines(command: str, notes: Sequence[str]) -> None:
    for note in notes:
        print(f"dpgui hierarchy {command}: note: {note}", file=sys.stderr)


def hierarchy_margin_lines(report: dict[str, Any]) -> list[str]:
    """The stated errors of a hierarchy plan (``report["projected"]``, :func:`_hierarchy_errors`) as a table:
    per level the 95 % margin of one count, the middle category's count, the margin as a share of it and
    the share of categories below the margin; then the warnings. Worded as the window and the PDF."""
    from dpgui.core.hierarchy_errors import basis_words
    from dpgui.core.margins import MARGIN_NAME
    from dpgui.formatting import format_level_margin, format_relative_margin, format_share_whole

    projected = report["projected"]
    names = ["all records", *report["levels"]]
    lines = [f"Projected {MARGIN_NAME} of one published count, {basis_words(projected['counts'])}:",
             f"  {'level':<8}{'name':<16}{'categories':>12}{MARGIN_NAME:>22}{'median count':>14}"
             f"{'margin/count':>14}{'below margin':>14}"]
    for row in projected["levels"]:
        median = row.get("median_count")
        relative = row.get("relative_margin")
        if median is not None and relative is None:  # null in the JSON: the middle category is empty
            relative = math.inf
        lines.append(f"  {row['level']:<8}{names[row['level']][:15]:<16}{row['nodes']:>12,}"
                     f"{format_level_margin(row['margin95']):>22}{'—' if median is None else f'{median:,.0f}':>14}"
                     f"{format_relative_margin(relative):>14}{format_share_whole(row.get('share_below_margin')):>14}")
    lines += [f"  warning: {w}" for w in report.get("warnings", ())]
    return lines


def privacy_unit_text(person_column: str | None, records_per_person: int) -> str:
    """The privacy unit in words (:func:`dpgui.core.privacy_unit.privacy_unit_words`): L enforced by the person-ID
    column ``person_column``, or declared (None)."""
    from dpgui.core.privacy_unit import PrivacyUnit, privacy_unit_words  # numpy: not for --help

    unit = None if person_column is None else PrivacyUnit(person_column, records_per_person)
    return privacy_unit_words(unit, records_per_person)


def hierarchy_plan_text(report: dict[str, Any], unit_words: str | None = None) -> str:
    """A hierarchy plan in words: levels, node list source, the privacy unit (``unit_words``,
    :func:`privacy_unit_text`; None: not said), budgets per level and the projected error."""
    unit = {"epsilon": "ε", "rho": "ρ"}.get(report["budget_unit"] or "", "")
    charge = report["charge"]
    lines = [
        f"Plan for counts over {' > '.join(report['levels'])} ({report['nodes']:,} nodes, "
        f"{', '.join(f'{n:,}' for n in report['level_sizes'])} per level), {report['noise']} noise, "
        + ("no level budgets (the rounds of Ghazi et al. 2023)" if report["noise"] == Noise.MULTIPLICATIVE
           else f"{report['allocation']} allocation") + f", {report['consistency']} consistency",
        f"  node list: {report['node_list_source']}; optimiser counts: {report['prior_source']}",
        *([f"  {unit_words}"] if unit_words is not None else []),
        f"  charge: ε = {charge['epsilon']:g}" + (f", δ = {charge['delta']:g}" if charge["delta"] > 0 else "")
        + (f", ρ = {charge['rho']:.4g}" if charge["rho"] is not None else ""),
        f"  {'level':<8}{'nodes':>10}{'budget':>14}{'bias²':>14}{'variance':>14}{'MSE':>14}",
    ]
    budgets = report["level_budgets"] or [None] * len(report["projected"]["levels"])
    for row, budget in zip(report["projected"]["levels"], budgets):
        shown = "-" if budget is None else f"{unit} {budget:.4g}"
        lines.append(f"  {row['level']:<8}{row['nodes']:>10,}{shown:>14}{row['bias2']:>14.4g}{row['variance']:>14.4g}"
                     f"{row['mse']:>14.4g}")
    lines.append(f"  weighted MSE {report['projected']['weighted_mse']:.4g} ({report['projected']['method']}; at "
                 f"{report['projected']['counts']}); sums over each level's nodes, records²")
    lines += hierarchy_margin_lines(report)
    alpha = report.get("alpha_mrmse")
    if alpha:
        lines.append(f"  Ghazi et al. 2023, α = {alpha['alpha']:g}: projected α-mRMSE "
                     f"{alpha['multiplicative']['alpha_mrmse']:.4g} "
                     f"(multiplicative) vs {alpha['gaussian']['alpha_mrmse']:.4g} (Gaussian baseline); "
                     f"recommended: {alpha['recommended']}")
    return "\n".join(lines)
