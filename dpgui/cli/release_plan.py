"""``dpgui plan --spec F``, ``dpgui release --spec F`` and ``dpgui simulate --spec F``: a release plan written as
a TOML file (:class:`~dpgui.workspace.plan_spec.PlanSpec`; docs/release-plans.md), through the plan's release
(:mod:`dpgui.workspace.release_plan`).

``--spec`` after ``plan`` or ``release`` selects these commands (:func:`spec_parser`): the plan
file holds the source, the dataset, the budget and the statistics, so the single statistic's options do not
apply. ``plan`` prints each statistic's share of the budget and its projected 95 % margin under the split
used and under the equal split (nothing read but what a statistic needs to plan, nothing spent);
``release`` checks the whole budget before reading, releases the plan with one ledger entry and writes one
signed bundle.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dpgui.cli.arguments import _int_at_least, _Parser
from dpgui.cli.rendering import _print
from dpgui.errors import ParameterError

__all__ = ["SPEC_WORDS", "PlanFileRequest", "cmd_plan_file", "spec_parser"]

#: The commands that take ``--spec``.
SPEC_WORDS = ("plan", "simulate")


def spec_parser(arguments: Sequence[str]) -> argparse.ArgumentParser | None:
    """The parser of ``dpgui plan|release --spec F …`` when ``arguments`` ask for a plan file, else None
    (the command is the single statistic's)."""
    if not arguments or arguments[0] not in SPEC_WORDS or not any(
            a == "--spec" or a.startswith("--spec=") for a in arguments[1:]):
        return None
    parser = _Parser(prog="dpgui", description="A release plan: several statistics of one table under one budget.")
    parser.set_defaults(version=False, self_test=False)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="{plan,simulate}", required=True)
    plan = sub.add_parser("plan", help="a release plan's split of the budget and projected errors (spends nothing)")
    _common(plan)
    plan.add_argument("--weights", metavar="W1,W2,…", help="each statistic's weight, in the file's order (default: "
                      "the file's, else 1)")
    sim = sub.add_parser("simulate", help="seeded releases of a plan on the data, against each statistic's "
                                          "projection (insecure noise; spends nothing, writes nothing)")
    _common(sim)
    sim.add_argument("--trials", type=_int_at_least(2, "--trials 200", 100_000), default=200, metavar="R",
                     help="simulated releases of the plan (default 200)")
    sim.add_argument("--seed", type=_int_at_least(0, "--seed 1"), default=1, metavar="S")
    return parser


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, metavar="PLAN.toml", help="the release plan file (docs/release-plans.md)")
    parser.add_argument("--json", action="store_true", help="print JSON")


@dataclass(frozen=True)
class PlanFileRequest:
    """A plan-file command's options: the ``command`` word, the plan file, ``--json``, ``--weights``, and for
    ``release`` where the bundle goes and what signs it, and ``--new-dataset``."""

    command: str
    spec: str
    json: bool = False
    weights: str | None = None
    bundle: str | None = None
    key: str | None = None
    passphrase_file: str | None = None
    name: str | None = None
    new_dataset: bool = False
    trials: int = 200
    seed: int = 1

    @classmethod
    def of(cls, args: argparse.Namespace) -> PlanFileRequest:
        return cls(args.command, args.spec, args.json, getattr(args, "weights", None), getattr(args, "bundle", None),
                   getattr(args, "key", None), getattr(args, "passphrase_file", None), getattr(args, "name", None),
                   getattr(args, "new_dataset", False), getattr(args, "trials", 200), getattr(args, "seed", 1))


def cmd_plan_file(args: argparse.Namespace) -> int:
    """Run the parsed plan-file command; DpguiErrors propagate to :func:`dpgui.cli.main`'s one line."""
    from dpgui.workspace.plan_spec import PlanSpec

    request = PlanFileRequest.of(args)
    spec = PlanSpec.read(request.spec)
    if request.command == "plan":
        return _plan(spec, request)
    if request.command == "simulate":
        return _simulate(spec, request)
    raise AssertionError(request.command)  # the parser knows only these words


def _weights(spec: Any, text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        weights = [float(w) for w in text.split(",")]
    except ValueError:
        weights = []
    if len(weights) != len(spec.parts) or not all(w > 0 for w in weights):
        raise ParameterError(f"--weights must give {len(spec.parts)} numbers > 0, one per statistic",
                             "e.g. --weights " + ",".join("1" for _ in spec.parts))
    return weights


def _planned(spec: Any, data: Any, weights: list[float] | None = None) -> tuple[list[Any], Any]:
    """The plan's items and their split (the items' weights replaced by ``weights``)."""
    from dataclasses import replace

    from dpgui.workspace.plan_spec import plan_items
    from dpgui.workspace.plan_split import split_plan
    from dpgui.workspace.release_plan import PlanItem

    items = plan_items(spec, data)
    if weights is not None:
        items = [PlanItem(replace(i.part, weight=w), i.spend_of, i.subject) for i, w in zip(items, weights)]
    return items, split_plan([i.part for i in items], spec.epsilon, spec.delta)


def _open(spec: Any) -> Any:
    from dpgui.cli.sources import _open_data
    from dpgui.data.source_spec import parse_source

    return _open_data(parse_source(spec.source))


def _split_rows(items: Sequence[Any], split: Any) -> list[dict[str, Any]]:
    rows = []
    for i, (item, used, equal) in enumerate(zip(items, split.parts, split.equal.shares), 1):
        c = used.charge
        rows.append({"part": i, "statistic": item.title, "weight": item.part.weight,
                     "charged": {"epsilon": c.epsilon, "delta": c.delta, "rho": c.rho}, "margin95": used.margin95,
                     "equal_split": {"budget": equal.budget, "margin95": equal.margin95}})
    return rows


def _plan(spec: Any, request: PlanFileRequest) -> int:
    with _open(spec) as data:
        items, split = _planned(spec, data, _weights(spec, request.weights))
    rows = _split_rows(items, split)
    summary = {"dataset": spec.dataset, "epsilon": spec.epsilon, "delta": spec.delta, "split": str(split.chosen),
               "weighted_margin95": split.weighted_margin, "equal_split_weighted_margin95": split.equal.weighted_margin,
               "charged": {"epsilon": split.charge.epsilon, "delta": split.charge.delta, "rho": split.charge.rho},
               "parts": rows}
    if request.json:
        _print(summary, True)
        return 0
    unit = "ρ" if split.split.accounting == "zcdp" else "ε"
    print(f"release plan of {len(items)} statistics on dataset {spec.dataset!r}, ε = {spec.epsilon:g}"
          + (f", δ = {spec.delta:g}" if spec.delta > 0 else "") + " (95 % margins in records):")
    for row, used in zip(rows, split.parts):
        print(f"  {row['part']}. {row['statistic']} (weight {row['weight']:g}): {unit} = {used.budget:.4g}, margin "
              f"± {row['margin95']:,.1f}; equal split: {unit} = {row['equal_split']['budget']:.4g}, margin "
              f"± {row['equal_split']['margin95']:,.1f}")
    print(f"weighted sum of margins: {split.weighted_margin:,.1f} with the {split.chosen} split, "
          f"{split.equal.weighted_margin:,.1f} with the equal split; nothing was spent")
    return 0


def _unit_words(spec: Any) -> str:
    from dpgui.workspace.release_plan import privacy_unit_words

    return privacy_unit_words(spec.records_per_person, spec.person_column)


def _simulate(spec: Any, request: PlanFileRequest) -> int:
    from dpgui.workspace.plan_simulation import simulate_plan

    with _open(spec) as data:
        items, split = _planned(spec, data)
        results = simulate_plan(items, split, data, request.trials, request.seed)
    rows = [{"part": i, "statistic": r.title, "projected_se": r.projected_se, "simulated_se": r.simulated_se,
             "standard_error_of_simulated_se": r.se_of_se, "errors_measured": r.errors, "within_4_se": r.within(4.0)}
            for i, r in enumerate(results, 1)]
    if request.json:
        _print({"trials": request.trials, "seed": request.seed, "parts": rows}, True)
    else:
        print(f"{request.trials} seeded releases of the plan (insecure noise: nothing spent, nothing written); "
              "standard errors in records:")
        for row in rows:
            print(f"  {row['part']}. {row['statistic']}: projected {row['projected_se']:.3f}, simulated "
                  f"{row['simulated_se']:.3f} ± {row['standard_error_of_simulated_se']:.3f} "
                  f"({'within' if row['within_4_se'] else 'NOT within'} 4 standard errors)")
    return 0 if all(row["within_4_se"] for row in rows) else 1
