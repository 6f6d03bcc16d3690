"""``dpgui hierarchy plan|release|simulate``: the group's parser (its options, their types with one-line
errors naming the option and the fix, and their choices from :mod:`dpgui.vocabulary`) and its dispatcher,
the group's line in :data:`dpgui.cli.commands.COMMANDS`. The commands are :mod:`dpgui.cli.hierarchy` (plan,
simulate) and :mod:`dpgui.cli.hierarchy_release` (release).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from dpgui.cli.arguments import (
    LARGEST_TRIALS, SOURCE_HELP, _add_privacy_options, _add_source_options, _comma_numbers, _int_at_least, _number,
    _Parser,
)
from dpgui.cli.hierarchy import cmd_hierarchy_plan, cmd_hierarchy_simulate
from dpgui.cli.hierarchy_release import cmd_hierarchy_release
from dpgui.vocabulary import AUTO, HIERARCHY_NOISES, Allocation, HierarchyConsistency, choices

HIERARCHY_NOISES_CLI = choices(AUTO, *HIERARCHY_NOISES)
HIERARCHY_CONSISTENCY_CLI = choices(AUTO, *HierarchyConsistency)
HIERARCHY_LEVELS = (2, 4)  # core.hierarchy.MIN_LEVELS, MAX_LEVELS (spelled here so that --help stays light)


def _levels(text: str) -> tuple[str, ...]:
    """``--levels C1,C2[,C3,C4]``: 2 to 4 distinct, non-empty column names, root level first."""
    low, high = HIERARCHY_LEVELS
    names = tuple(part.strip() for part in text.split(","))
    if any(not name for name in names):
        raise argparse.ArgumentTypeError(f"{text!r} has an empty column name; give e.g. --levels region,district")
    if len(names) < low:
        raise argparse.ArgumentTypeError(f"one level only ({text!r}): a hierarchy needs {low} to {high} nested columns; "
                                         "give e.g. --levels region,district")
    if len(names) > high:
        raise argparse.ArgumentTypeError(f"{len(names)} levels ({text!r}): at most {high} are supported; "
                                         "drop or merge levels, e.g. --levels state,county,tract")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"column {repeated[0]!r} is given twice; give each level column once")
    return names


def _allocation(text: str) -> tuple[Allocation, float | None]:
    """``--allocation uniform|optimal|target:TAU`` → (allocation, target weighted MSE or None)."""
    if text in choices(Allocation.UNIFORM, Allocation.OPTIMAL):
        return Allocation(text), None
    if text.startswith(f"{Allocation.TARGET}:"):
        value = text.removeprefix(f"{Allocation.TARGET}:")
        try:
            tau = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a number; give e.g. target:1000 (the weighted MSE "
                                             "to meet, records²)") from None
        if not (math.isfinite(tau) and tau > 0):
            raise argparse.ArgumentTypeError(f"the target must be a finite number > 0, got {value}; give e.g. target:1000")
        return Allocation.TARGET, tau
    raise argparse.ArgumentTypeError(f"{text!r} is not uniform, optimal or target:TAU; give e.g. optimal or target:1000")


def _weights(text: str) -> tuple[float, ...]:
    """``--weights w0,w1,…``: one finite weight ≥ 0 per level, root first (Ko, Ziani & Fioretto, eq. 5)."""
    values = _comma_numbers(text, f"{text!r} is not a list of numbers like 1,1,1")
    if any(not math.isfinite(v) or v < 0 for v in values) or not any(v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"weights must be finite, ≥ 0 and not all 0, got {text}; give e.g. 1,1,1")
    return values


def _alpha(text: str) -> float:
    """``--alpha A``: Ghazi et al.'s (2023) multiplicative error, 0 < α < 1."""
    value = _number(text, "α", "0.5")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"α must lie strictly between 0 and 1, got {text}; give e.g. 0.5")
    return value


def _add_hierarchy_options(parser: argparse.ArgumentParser, person: bool = True) -> None:
    low, high = HIERARCHY_LEVELS
    parser.add_argument("--levels", type=_levels, required=True, metavar="C1,C2[,C3,C4]",
                        help=f"{low} to {high} nested categorical columns, the top level first (each value belongs to "
                             "one parent); a numeric column is allowed: its values become category labels")
    _add_privacy_options(parser, "gaussian and multiplicative noise need δ > 0", person)
    parser.add_argument("--noise", choices=HIERARCHY_NOISES_CLI, default="auto",
                        metavar="laplace|gaussian|multiplicative|auto",
                        help="auto (default): the noise with the lower projected error (Laplace when δ = 0)")
    parser.add_argument("--allocation", type=_allocation, default=(Allocation.UNIFORM, None),
                        metavar="uniform|optimal|target:TAU",
                        help="level budgets: uniform (default), optimal (least weighted MSE within ε: program 6 of Ko, Ziani & "
                             "Fioretto 2025; needs node counts), target:TAU (least ε whose weighted MSE is ≤ TAU, "
                             "their program 7; needs node counts)")
    parser.add_argument("--weights", type=_weights, metavar="w0,w1,…",
                        help="the weight of each level in the weighted MSE, root first (default: equal)")
    parser.add_argument("--consistency", choices=HIERARCHY_CONSISTENCY_CLI, default="auto",
                        help="topdown (program 8 of Ko, Ziani & Fioretto 2025), gls (best linear unbiased, then integer), none "
                             "(each count clamped at 0); auto (default): the lower projected error")
    parser.add_argument("--alpha", type=_alpha, metavar="A",
                        help="the multiplicative error α of Ghazi et al. 2023, in (0, 1): needed by --noise multiplicative; with "
                             "δ > 0 the plan shows the multiplicative mechanism's and the Gaussian baseline's projected "
                             "α-mRMSE side by side (and auto may choose the multiplicative one); with δ = 0 it is "
                             "unused, and a note says so")
    parser.add_argument("--counts-from-data", action="store_true",
                        help="let the optimiser use the confidential counts of the data (recorded in the manifest); "
                             "by default it uses only the public --prior")
    parser.add_argument("--n", type=_int_at_least(1, "--n 12000"), metavar="N",
                        help="without --prior: the number of records at which the errors are projected, spread evenly "
                             "over the categories (recorded in the plan). Under change the data's N is used when --n is "
                             "not given (N is public); under addremove give a published estimate, never the data's count")
    parser.add_argument("--json", action="store_true", help="print JSON")


def add_hierarchy_parser(sub: Any) -> None:
    """``dpgui hierarchy plan|release|simulate`` on the CLI's subparsers ``sub``."""
    hier = sub.add_parser("hierarchy", help="counts over a categorical hierarchy of 2 to 4 nested columns")
    hier_sub = hier.add_subparsers(dest="hierarchy_command", parser_class=_Parser, metavar="{plan,release,simulate}",
                                   required=True)
    plan = hier_sub.add_parser("plan", help="level budgets and the projected error per level (spends nothing)")
    source = plan.add_mutually_exclusive_group()
    source.add_argument("--source", "--input", dest="input", metavar="URL|FILE", help=f"{SOURCE_HELP}: read for its "
                        "node list only (its counts only with --counts-from-data)")
    source.add_argument("--prior", metavar="PRIOR.csv", help="a public prior: the level columns and a count column "
                        "(or raw rows); gives the node list and the counts")
    _add_hierarchy_options(plan)
    _add_source_options(plan)

    rel = hier_sub.add_parser("release", help="release the count of every node (spends ε)")
    rel.add_argument("input", nargs="?", metavar="INPUT", help=f"{SOURCE_HELP}; or give it with --source")
    rel.add_argument("--source", "--input", dest="source", metavar="URL|FILE", help="the same as INPUT")
    _add_source_options(rel)
    rel.add_argument("--prior", metavar="PRIOR.csv", help="a public prior: the node list (every path of the data must "
                     "be in it) and the counts the optimiser uses; without it, the data's categories are published "
                     "as the node list (then --categories-public is required)")
    rel.add_argument("--categories-public", action="store_true",
                     help="declare that the data's categories are public (e.g. an official list): without --prior the "
                          "release publishes every category found in the data, and differential privacy does not cover "
                          "that list (a rare category reveals that someone is in it); required without --prior, "
                          "recorded in the manifest (node list: data, declared public); not needed with --prior (its "
                          "list is public), and then it changes nothing")
    _add_hierarchy_options(rel)
    rel.add_argument("--dataset", metavar="ID", help="required: the budget ledger's name for the data (see "
                     "'dpgui release --help'); set its cap first with 'dpgui ledger cap ID EPSILON'")
    rel.add_argument("--new-dataset", action="store_true",
                     help="confirm that ID is different data even though the file looks like another dataset's")
    rel.add_argument("--out", metavar="OUT.csv", help="write the released CSV only (unsigned); an existing file "
                     "only with --force")
    rel.add_argument("--force", action="store_true",
                     help="let --out replace an existing file (never the input or the prior)")
    rel.add_argument("--bundle", metavar="DIR", help="write a signed bundle (CSV, PDF, manifest, signature) into DIR")
    rel.add_argument("--key", metavar="NAME.key", help="secret key that signs the bundle (see 'dpgui key create')")
    rel.add_argument("--passphrase-file", metavar="F", help="file whose first line is the key's passphrase")
    rel.add_argument("--name", metavar="NAME", help="bundle file name stem (default: dataset-levels-time-id)")

    sim = hier_sub.add_parser("simulate", help="Monte-Carlo error per level, next to the projection (insecure noise)")
    source = sim.add_mutually_exclusive_group()
    source.add_argument("--source", "--input", dest="input", metavar="URL|FILE", help=f"simulate on this data: {SOURCE_HELP}")
    source.add_argument("--prior", metavar="PRIOR.csv", help="or on the counts of a prior file")
    _add_hierarchy_options(sim, person=False)
    _add_source_options(sim)
    sim.add_argument("--trials", type=_int_at_least(2, "--trials 200", LARGEST_TRIALS), required=True, metavar="R",
                     help="number of simulated releases")
    sim.add_argument("--seed", type=_int_at_least(0, "--seed 1"), metavar="S")


HIERARCHY_COMMANDS = {"plan": cmd_hierarchy_plan, "release": cmd_hierarchy_release, "simulate": cmd_hierarchy_simulate}


def cmd_hierarchy(args: argparse.Namespace) -> int:
    """``dpgui hierarchy plan|release|simulate``."""
    return HIERARCHY_COMMANDS[args.hierarchy_command](args)
