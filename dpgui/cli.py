"""Command line: the same plan → release workflow as the app, headless and scriptable.

    dpgui [FILE] [--column COL]   opens the desktop app (the start page without FILE)

    dpgui plan --bins K --epsilon E [--delta D] [--noise auto|laplace|gaussian] [plan options] [--n N] [--json]
    dpgui release INPUT|--source URL|FILE [source options] --column COL --lower A --upper B --bins K --epsilon E [plan options]
                  --dataset ID [--new-dataset] [--consistency l2|l1|none] [--json] [--probabilities P1,P2,…]
                  (--out OUT.csv [--force] | --bundle DIR --key NAME.key [--passphrase-file F] [--name NAME])
    dpgui quantiles NAME.manifest.json|RELEASE.csv [--plan RELEASE.json] [--probabilities 0.1,0.5,0.9] [--json]
    dpgui verify DIR/NAME.manifest.json --pubkey NAME.pub
    dpgui key create NAME [--passphrase-file F] [--dir D]
    dpgui ledger show [--dataset ID] [--json]
    dpgui ledger cap ID EPSILON [--delta D] [--reason TEXT]
    dpgui simulate [plan options] [--consistency …] --trials R [--seed S] [--json]
                  (--source URL|FILE [source options] --column COL --lower A --upper B | --synthetic uniform|normal --n N)
    dpgui columns --source URL|FILE [source options] [--json]
    dpgui hierarchy plan --levels C1,C2[,C3,C4] (--source URL|FILE | --prior PRIOR.csv) --epsilon E [hierarchy options] [--json]
    dpgui hierarchy release INPUT|--source URL|FILE --levels … --epsilon E (--prior PRIOR.csv | --categories-public)
                  [hierarchy options]
                  --dataset ID [--new-dataset] (--out OUT.csv [--force] | --bundle DIR --key NAME.key [--passphrase-file F]
                  [--name NAME]) [--json]
    dpgui hierarchy simulate --levels … (--source URL|FILE | --prior PRIOR.csv) --epsilon E [hierarchy options]
                  --trials R [--seed S] [--json]
      hierarchy options: [--delta D] [--noise laplace|gaussian|multiplicative|auto] [--alpha A]
                  [--allocation uniform|optimal|target:TAU] [--weights w0,w1,…] [--consistency topdown|gls|none|auto]
                  [--neighbours change|addremove] [--records-per-person L] [--counts-from-data]
      source options: [--table T | --query Q] [--engine local|spark] [--spark-master URL]
                  [--delimiter comma|semicolon|tab|pipe] [--decimal .|,] [--encoding ENC]
      (--input and INPUT are --source; the data is read only through dpgui.data.source: a file on this
      computer, a database URL without password — the database counts —, or Spark; docs/cli.md)

Exit codes: 0 success, 2 bad input (one line on stderr naming the argument and the fix), 1 an
internal error. Nothing is written unless the whole release succeeded. Every release is first
recorded in the budget ledger (``$DPGUI_HOME``), which refuses it if the dataset's cap would be
exceeded; everything that can be checked (the input file, the plan and the noise sampler's limits,
every output target, the key) is checked before that, so bad input is never charged. ``verify``
exits 0 only when every check holds, otherwise 1 with one line saying what failed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from collections.abc import Callable, Sequence

if sys.argv[1:2] == ["plan"]:
    # `dpgui plan` does no linear algebra that threads would speed up (vectors, and eigenproblems of a few
    # dozen rows), and OpenBLAS starts its pool of threads when NumPy is imported: on a busy two-core
    # machine that took ~0.06 s of the 0.3 s the answer may take (issue 17). The user's setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # (after the thread setting, which must come first)

from dpgui.core.missing import (IMPUTE_PREFIX, MISSING_AUTO, MISSING_IMPUTE, MISSING_RULE_TEXT,
                                missing_rule_for)
from dpgui.core.tree import MIN_BINS
from dpgui.core.synthetic import SYNTHETIC_KINDS
from dpgui.data.file_types import FILE_TYPE_NAMES
from dpgui.errors import DataError, DpguiError, ParameterError
from dpgui.vocabulary import Neighbours, Noise, PriorSource

if TYPE_CHECKING:  # imported where used, so that the start-up stays light
    from dpgui.core.hierarchy import Hierarchy, HierarchyPlan
    from dpgui.core.plan import Plan
    from dpgui.data.hierarchy import PathCounts
    from dpgui.data.source import DataSource, SourceSpec


# ------------------------------------------------------------------ argument types (one-line errors)
def _number(text: str, what: str, example: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; give e.g. {example}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number; give e.g. {example}")
    return value


def _positive_float(text: str) -> float:
    value = _number(text, "value", "1 or 0.5")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}; give e.g. 1 or 0.5")
    return value


def _finite_float(text: str) -> float:
    return _number(text, "bound", "0 or 100")


#: The largest whole number an option takes unless it says otherwise: far beyond every real use, and
#: still a double (a 300-digit --records-per-person would overflow the arithmetic, not be refused).
LARGEST_WHOLE_NUMBER = 10**30
#: ``--n``: counts of records stay exact in double precision up to 2^53.
LARGEST_N = 2**53
#: ``--trials``: a Monte-Carlo study that finishes.
LARGEST_TRIALS = 10**7


def _int_at_least(minimum: int, example: str, maximum: int = LARGEST_WHOLE_NUMBER) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number; give e.g. {example}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}; give e.g. {example}")
        if value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum:.3g}, got a number of {len(str(value))} digits; "
                                             f"give e.g. {example}")
        return value

    parse.__name__ = "whole number"
    return parse


def _delta(text: str) -> float:
    """``--delta`` of a release: 0 ≤ δ ≤ MAX_DELTA (0: pure ε-DP), with the engine's one-line message."""
    from dpgui.core.plan import check_delta

    try:
        return check_delta(text, "δ")
    except ParameterError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _cap_delta(text: str) -> float:
    """``ledger cap --delta``: a probability 0 ≤ δ < 1, the total δ of all releases of a dataset."""
    from dpgui.core.plan import check_delta

    try:
        return check_delta(text, "δ", largest=None)
    except ParameterError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _comma_numbers(text: str, not_numbers: str) -> tuple[float, ...]:
    """A comma-separated list of numbers (``--budgets``, ``--probabilities``, ``--weights``); ``not_numbers``:
    the one-line message when a part is not a number."""
    try:
        return tuple(float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(not_numbers) from None


def _budgets(text: str) -> str | tuple[float, ...]:
    if text in ("auto", "equal"):
        return text
    values = _comma_numbers(text, f"{text!r} is not auto, equal or a list like 0.3,0.3,0.4")
    if any(not math.isfinite(v) or v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"budgets must be finite and ≥ 0, got {text}")
    return values


def _probabilities(text: str) -> tuple[float, ...]:
    values = _comma_numbers(text, f"{text!r} is not a list of probabilities like 0.1,0.5,0.9")
    if any(not (math.isfinite(v) and 0 <= v <= 1) for v in values):
        raise argparse.ArgumentTypeError(f"probabilities must lie in [0, 1], got {text}; give e.g. 0.1,0.5,0.9")
    return values


#: ``--delimiter``: the separator itself or its name.
DELIMITER_WORDS = {",": ",", "comma": ",", ";": ";", "semicolon": ";", "\t": "\t", "\\t": "\t", "tab": "\t",
                   "|": "|", "pipe": "|", "bar": "|"}
#: ``--decimal``: the mark itself or its name.
DECIMAL_WORDS = {".": ".", "point": ".", "dot": ".", ",": ",", "comma": ","}


def _delimiter(text: str) -> str:
    value = DELIMITER_WORDS.get(text if len(text) == 1 else text.lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a field separator; give comma, semicolon, tab or pipe "
                                         "(or the character itself)")
    return value


def _decimal(text: str) -> str:
    value = DECIMAL_WORDS.get(text.lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a decimal mark; give '.' (point) or ',' (comma)")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors in one line and exits 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


DEFAULT_PROBABILITIES = (0.1, 0.25, 0.5, 0.75, 0.9)
#: ``--noise`` (dpgui.core.plan.NOISE_CHOICES, spelled here so that ``--help`` stays light).
NOISE_CHOICES_CLI = ("auto", "laplace", "gaussian")
#: ``--neighbours`` (dpgui.core.plan.NEIGHBOURS, spelled here for the same reason).
NEIGHBOURS_CLI = ("change", "addremove")


def _add_privacy_options(parser: argparse.ArgumentParser, delta_use: str) -> None:
    """``--epsilon``, ``--delta`` (``delta_use``: what δ > 0 allows), ``--neighbours`` and ``--records-per-person``:
    the privacy options of a CDF and of a hierarchy."""
    parser.add_argument("--epsilon", type=_positive_float, required=True, metavar="E", help="total privacy budget ε > 0")
    parser.add_argument("--delta", type=_delta, metavar="D",
                        help=f"total δ, 0 ≤ δ ≤ 0.001, far below 1/N (default 0: pure ε-DP); {delta_use}")
    parser.add_argument("--neighbours", "--neighbors", choices=NEIGHBOURS_CLI, default=None,
                        help="change: N is public and published exactly (the default, except for a --query); "
                             "addremove: N is private (the default for a --query: the number of rows it returns is "
                             "not public; change needs --n-public)")
    parser.add_argument("--records-per-person", type=_int_at_least(1, "--records-per-person 1"), default=1,
                        metavar="L", help="maximum records one person contributes (default 1)")


SOURCE_HELP = (f"the confidential data: a {FILE_TYPE_NAMES} file (or a folder of Parquet files), or a database URL "
               "without password, e.g. postgresql://alice@db.example.org/census or sqlite:///path/to.db "
               "(then --table or --query)")


def _add_source_options(parser: argparse.ArgumentParser, releases: bool = True) -> None:
    """Where the data lives besides its location (docs/cli.md "Data sources"): ``--table`` / ``--query``
    (databases, Spark), ``--engine`` / ``--spark-master``, the CSV dialect and a file's encoding; with
    ``releases`` (commands with a neighbour model) ``--n-public``, the statement that a query's row count is public."""
    group = parser.add_argument_group("data source (see docs/cli.md)")
    group.add_argument("--table", metavar="T", help="a database or Spark table to read (not with --query)")
    group.add_argument("--query", metavar="Q", help="one read-only SELECT to read instead of a table (recorded in "
                       "the manifest; a query that writes is refused before it runs)")
    if releases:
        group.add_argument("--n-public", action="store_true",
                           help="state that the number of rows the --query returns is public (e.g. published "
                                "elsewhere): needed for --neighbours change, which publishes it exactly; recorded in "
                                "the manifest and the ledger")
    group.add_argument("--engine", default="local", metavar="local|spark",
                       help="local (default): this computer counts a file, the database counts a URL; spark: Spark "
                            "SQL counts (needs the dpgui[spark] extra)")
    group.add_argument("--spark-master", metavar="URL", help="with --engine spark: the Spark master (default local[2])")
    group.add_argument("--delimiter", type=_delimiter, metavar="comma|semicolon|tab|pipe",
                       help="a CSV's field separator, as you state it (default: comma, tab for .tsv; a file whose "
                            "first lines suggest another is refused until you state it); alone, the decimal mark is '.'")
    group.add_argument("--decimal", type=_decimal, metavar="'.'|','",
                       help="a CSV's decimal mark, as you state it (default: '.'); alone, the separator is ';' for "
                            "',' and ',' for '.'")
    group.add_argument("--encoding", metavar="ENC", help="the text encoding of a SAS, Stata or SPSS file when it is not the "
                       "file's own, or of a CSV read by Spark (e.g. latin-1, cp1252)")


def _add_plan_options(parser: argparse.ArgumentParser, bins_required: bool = True) -> None:
    parser.add_argument("--bins", type=_int_at_least(MIN_BINS, "--bins 256"), required=bins_required, metavar="K",
                        help="number of equal-width bins K (public)")
    _add_privacy_options(parser, "δ > 0 allows Gaussian noise (e.g. 1e-9, well below 1/N)")
    parser.add_argument("--noise", choices=NOISE_CHOICES_CLI, metavar="auto|laplace|gaussian",
                        help="auto (default): the noise with the lower projected error at (ε, δ), Laplace when "
                             "δ = 0; laplace: pure ε-DP (δ unused); gaussian: discrete Gaussian under zCDP (needs --delta)")
    parser.add_argument("--branching", default="auto", metavar="auto|B|B1xB2x…",
                        help="tree shape: auto (optimised), a factor B, or factors like 4x16x16")
    parser.add_argument("--budgets", type=_budgets, default="auto", metavar="auto|equal|e1,e2,…",
                        help="per-level budgets (root first under addremove); must sum to ε, or to ρ with --noise gaussian")
    parser.add_argument("--estimator", choices=("gls", "covering"), default="gls",
                        help="gls: best linear unbiased (default); covering: the covering sum of Rameshwar et al. 2024")
    parser.add_argument("--objective", choices=("total", "max"), default="total",
                        help="minimise the total or the worst squared error of the cumulative counts")
    parser.add_argument("--missing", default=MISSING_AUTO, metavar="auto|impute:VALUE",
                        help="auto (default): missing values follow the neighbour model (docs/design.md): under change "
                             "they are counted in a noised 'missing' bucket (a leaf of the tree) and N = all rows; under "
                             "addremove they are dropped. impute:VALUE (change only): they are counted as the public "
                             "value VALUE (clamped into the bounds), with no leaf of their own")
    parser.add_argument("--focus", metavar="LO:HI|lower|upper|middle",
                        help="where you need accuracy, in the column's units (needs --lower/--upper; --focus=-5:10 "
                             "for a negative end), or a part of the range between the bounds (not of the data): lower "
                             "= its lowest 10 %%, upper = its highest 10 %%, middle = its middle 20 %%. The plan is "
                             "optimised for that region when that lowers its 95 %% error margin by at least 5 %%, else "
                             "the plan for the whole range is kept (said in a note)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dpgui", description="Differentially private CDF releases.")
    parser.add_argument("--version", action="store_true", help="print the versions of dpgui and its libraries")
    parser.add_argument("--self-test", action="store_true",
                        help="run the whole workflow headless on the bundled sample (throw-away key and ledger); "
                             "exit 0 only if every step passed")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser,
                                metavar="{plan,release,quantiles,verify,key,ledger,simulate,hierarchy,columns}")

    plan = sub.add_parser("plan", help="choose a tree and budgets; show projected errors (spends nothing)")
    _add_plan_options(plan)
    plan.add_argument("--n", type=_int_at_least(1, "--n 10000", LARGEST_N), metavar="N", help="public N, to express CDF errors")
    plan.add_argument("--lower", type=_finite_float, metavar="A", help="public lower bound (for --focus)")
    plan.add_argument("--upper", type=_finite_float, metavar="B", help="public upper bound (for --focus)")
    plan.add_argument("--json", action="store_true", help="print JSON")

    rel = sub.add_parser("release", help="release a DP CDF of a numeric column to CSV (spends ε)")
    rel.add_argument("input", nargs="?", metavar="INPUT", help=f"{SOURCE_HELP}; or give it with --source")
    rel.add_argument("--source", "--input", dest="source", metavar="URL|FILE", help="the same as INPUT")
    _add_source_options(rel)
    rel.add_argument("--column", required=True, metavar="COL")
    rel.add_argument("--lower", type=_finite_float, required=True, metavar="A", help="public lower bound")
    rel.add_argument("--upper", type=_finite_float, required=True, metavar="B", help="public upper bound (exclusive)")
    rel.add_argument("--whole-numbers", action="store_true",
                     help="state that the column holds whole numbers (from what it means, never read from the data; a "
                          "file's declared integer type says so by itself): bins centred on whole numbers are "
                          "suggested, quantiles are then whole numbers, and the statement is recorded")
    _add_plan_options(rel)
    rel.add_argument("--consistency", choices=("l2", "l1", "none"), default="l2")
    rel.add_argument("--dataset", metavar="ID", help="required: the budget ledger's name for the data, the same for "
                     "every file about these people (a file name is not an identity: a copy would get a fresh "
                     "budget); set its cap first with 'dpgui ledger cap ID EPSILON'")
    rel.add_argument("--new-dataset", action="store_true",
                     help="confirm that ID is different data even though the file has the same column names and row "
                          "count as another dataset in the ledger (refused without it)")
    rel.add_argument("--out", metavar="OUT.csv", help="write the released CSV only (unsigned); never the input, "
                     "and an existing file only with --force")
    rel.add_argument("--force", action="store_true",
                     help="let --out replace an existing file (never the input or the prior)")
    rel.add_argument("--probabilities", type=_probabilities, default=DEFAULT_PROBABILITIES, metavar="P1,P2,…",
                     help="quantiles printed with --json (default 0.1,0.25,0.5,0.75,0.9)")
    rel.add_argument("--bundle", metavar="DIR", help="write a signed bundle (CSV, PDF, manifest, signature) into DIR")
    rel.add_argument("--key", metavar="NAME.key", help="secret key that signs the bundle (see 'dpgui key create')")
    rel.add_argument("--passphrase-file", metavar="F", help="file whose first line is the key's passphrase "
                     "(default: ask on the terminal)")
    rel.add_argument("--name", metavar="NAME", help="bundle file name stem (default: dataset-column-time-id)")
    rel.add_argument("--json", action="store_true")

    qua = sub.add_parser("quantiles", help="quantiles of a released CDF with their 95 %% intervals (spends nothing)")
    qua.add_argument("release", metavar="NAME.manifest.json|RELEASE.csv",
                     help="a bundle's manifest, or a released CSV (its plan from the manifest beside it or --plan)")
    qua.add_argument("--plan", metavar="RELEASE.json", help="for a CSV written with --out: the JSON that "
                     "'dpgui release --json' printed (it holds the plan)")
    qua.add_argument("--probabilities", type=_probabilities, default=DEFAULT_PROBABILITIES, metavar="P1,P2,…",
                     help="which quantiles (default 0.1,0.25,0.5,0.75,0.9)")
    qua.add_argument("--json", action="store_true")

    ver = sub.add_parser("verify", help="check a bundle's signature, schema and file hashes (exit 0 only if all hold)")
    ver.add_argument("manifest", metavar="NAME.manifest.json")
    ver.add_argument("--pubkey", required=True, metavar="KEY.pub", help="the signer's public key (minisign format)")

    key = sub.add_parser("key", help="create signing keys")
    key_sub = key.add_subparsers(dest="key_command", parser_class=_Parser, metavar="{create}", required=True)
    create = key_sub.add_parser("create", help="write NAME.key (secret, encrypted, user-only) and NAME.pub")
    create.add_argument("name", metavar="NAME")
    create.add_argument("--passphrase-file", metavar="F", help="file whose first line is the new passphrase "
                        "(default: ask twice on the terminal)")
    create.add_argument("--dir", default=".", metavar="D", help="folder for the two files (default: here)")

    ledger = sub.add_parser("ledger", help="the privacy-budget ledger: spent budget per dataset, and caps")
    ledger_sub = ledger.add_subparsers(dest="ledger_command", parser_class=_Parser, metavar="{show,cap}", required=True)
    show = ledger_sub.add_parser("show", help="budget spent and left per dataset, its cap history, and the releases")
    show.add_argument("--dataset", metavar="ID")
    show.add_argument("--json", action="store_true")
    cap = ledger_sub.add_parser("cap", help="set or change a dataset's total budget (logged)")
    cap.add_argument("dataset", metavar="ID")
    cap.add_argument("epsilon", type=_positive_float, metavar="EPSILON")
    cap.add_argument("--delta", type=_cap_delta, default=0.0, metavar="D",
                     help="total δ allowed, 0 ≤ δ < 1 (default 0: pure ε-DP; Gaussian releases need δ > 0)")
    cap.add_argument("--reason", default="", metavar="TEXT",
                     help="why the cap is set or changed (kept in the log; required to raise a cap)")

    sim = sub.add_parser("simulate", help="Monte-Carlo error of a plan on data or a synthetic shape (insecure noise)")
    _add_plan_options(sim)
    sim.add_argument("--consistency", choices=("l2", "l1", "none"), default="l2")
    sim.add_argument("--trials", type=_int_at_least(1, "--trials 1000", LARGEST_TRIALS), default=100, metavar="R",
                     help="number of simulated releases (default 100, as in the tables of Rameshwar, Tandon & Sharma)")
    sim.add_argument("--seed", type=_int_at_least(0, "--seed 1"), metavar="S")
    sim.add_argument("--json", action="store_true")
    source = sim.add_mutually_exclusive_group()
    source.add_argument("--source", "--input", dest="input", metavar="URL|FILE", help=f"simulate on this data: {SOURCE_HELP}")
    source.add_argument("--synthetic", choices=SYNTHETIC_KINDS,
                        help="or on a synthetic column of --n values (lognormal: heavy-tailed, like wages)")
    _add_source_options(sim)
    sim.add_argument("--column", metavar="COL")
    sim.add_argument("--lower", type=_finite_float, metavar="A")
    sim.add_argument("--upper", type=_finite_float, metavar="B")
    sim.add_argument("--n", type=_int_at_least(1, "--n 10000", LARGEST_N), metavar="N")
    col = sub.add_parser("columns", help="the data's columns with their kinds, and who counts them (spends nothing; "
                         "prints no values)")
    col.add_argument("input", nargs="?", metavar="INPUT", help=f"{SOURCE_HELP}; or give it with --source")
    col.add_argument("--source", "--input", dest="source", metavar="URL|FILE", help="the same as INPUT")
    _add_source_options(col, releases=False)
    col.add_argument("--json", action="store_true")
    _add_hierarchy_parser(sub)
    _add_counts_parser(sub)
    return parser


# ------------------------------------------------------------------ commands
def _delta_options_given(args: argparse.Namespace) -> bool:
    """Did the user give ``--delta`` or ``--noise``? Without either, every output is what it was
    before δ existed (pure ε-DP, Laplace; no δ keys, no noise choice in the JSON)."""
    return getattr(args, "delta", None) is not None or getattr(args, "noise", None) is not None


def _noise_request(args: argparse.Namespace) -> str:
    """The noise to plan with, from ``--noise`` (default auto) and ``--delta`` (default 0); refuses
    Gaussian noise without δ and explicit ``--budgets`` without a noise to give them a unit."""
    delta = args.delta or 0.0
    noise: str = args.noise or "auto"
    if noise == "gaussian" and delta <= 0:
        raise ParameterError("--noise gaussian needs δ > 0 (with δ = 0, the default, only pure ε-DP Laplace noise is "
                             "possible)", "give --delta D, e.g. --delta 1e-9, or use --noise laplace")
    if noise == "auto" and not isinstance(args.budgets, str):
        if delta > 0:
            raise ParameterError("explicit --budgets are in the unit of one noise (ε_l for Laplace, ρ_l for Gaussian), "
                                 "and --noise auto has not chosen one", "add --noise laplace or --noise gaussian")
        noise = "laplace"  # δ = 0: Laplace is the only noise, as before δ existed
    return noise


def _make_plan(args: argparse.Namespace, bins: int) -> Plan:
    """The plan of the command's options: ``auto_plan`` at (ε, δ) with the requested noise.

    Explicit ``--budgets`` are in the unit of the one noise asked for (ε_l or ρ_l), so that plan is
    built as given, and only its own noise's figures are in its noise choice (the other noise would
    need budgets of another unit)."""
    from dataclasses import replace

    from dpgui.core.plan import NoiseChoice, Plan, PrivacySpec
    from dpgui.core.planner import auto_plan
    from dpgui.core.projection import prefix_variances
    from dpgui.core.tree import TreeShape

    from dpgui.core.missing import parse_missing_option

    args.focus_offer = None  # set by --focus (_focus_plan)
    noise = _noise_request(args)
    _check_missing_option(args.missing, args.neighbours)
    privacy = PrivacySpec(args.epsilon, args.neighbours, args.records_per_person, args.delta or 0.0,
                          parse_missing_option(args.missing))
    shape = None if args.branching == "auto" else TreeShape.parse(bins, args.branching, privacy.missing_leaf)
    if isinstance(args.budgets, str) or shape is None:  # (budgets without a branching: auto_plan says so)
        default = auto_plan(bins, privacy, shape, args.budgets, args.estimator, args.objective, noise=noise)
        return _focus_plan(args, bins, default, shape)
    if getattr(args, "focus", None) is not None:
        raise ParameterError("--focus optimises the level budgets, but --budgets gives them",
                             "leave out --budgets (or --focus)")
    plan = Plan(shape, privacy, tuple(args.budgets), args.estimator, Noise(noise))
    variances = prefix_variances(plan)
    figures = (float(variances.sum()), float(variances.max()))
    return replace(plan, noise_choice=NoiseChoice(noise, Noise(noise), args.objective, figures if noise == "laplace" else None,
                                                  figures if noise == "gaussian" else None))


def _focus_plan(args: argparse.Namespace, bins: int, default: Plan, shape: Any) -> Plan:
    """``--focus``: the plan for the region if it lowers the region's 95 % margin by at least
    :data:`~dpgui.core.focus.WORTH_IT` (:func:`dpgui.core.focus.focus_offer`), else ``default``; the offer
    is kept in ``args.focus_offer`` for the output. Bad input (not numbers, inverted, outside the bounds,
    no bounds) is refused before anything is read or spent."""
    text = getattr(args, "focus", None)
    if text is None:
        return default
    from dpgui.core.focus import FocusChoice, focus_offer, value_span
    from dpgui.data.histogram import check_bounds

    if getattr(args, "lower", None) is None or getattr(args, "upper", None) is None:
        raise ParameterError("--focus is in the column's units and needs the bounds",
                             "give --lower A --upper B (the bounds of the release) as well")
    lower, upper = check_bounds(args.lower, args.upper)
    choice = FocusChoice.parse(text)
    interval = choice.interval(lower, upper)
    if interval is None:  # "everywhere"
        return default
    span = value_span(interval[0], interval[1], lower, upper, bins)
    offer = focus_offer(bins, default.privacy, span, shape, default.estimator, args.objective, default.noise,
                        default=default)
    args.focus_offer = {"values": list(interval), "region": str(choice.region),
                        "words": choice.words(lower, upper, getattr(args, "column", None) or ""), **offer.to_json()}
    return offer.plan


def _focus_note(args: argparse.Namespace, command: str) -> None:
    """One line on stderr when ``--focus`` gains too little: the plan for the whole range is used."""
    from dpgui.core.focus import WORTH_IT

    offer = getattr(args, "focus_offer", None)
    if offer is not None and not offer["worth_it"]:
        print(f"dpgui {command}: note: planning for {offer['words']} would lower its 95 % error margin only from "
              f"±{offer['default_margin95']:.4g} to ±{offer['focused_margin95']:.4g} records "
              f"({100 * offer['gain']:.0f} %, less than {100 * WORTH_IT:.0f} %), so the plan for the whole range is "
              "used", file=sys.stderr)


def focus_text(offer: dict[str, Any]) -> str:
    """The region's offer in one line for people (``offer``: ``args.focus_offer``): both 95 % margins
    there and how much smaller the one of the plan for it is (the figure the choice was made on)."""
    from dpgui.core.focus import WORTH_IT

    where = "on average" if offer["objective"] == "total" else "at the worst point"
    figures = (f"95 % error ±{offer['focused_margin95']:.4g} records {where} there with the plan for it, "
               f"±{offer['default_margin95']:.4g} with the plan for the whole range")
    if offer["worth_it"]:
        return (f"  region {offer['words']}: {figures} ({100 * offer['gain']:.0f} % smaller): "
                "this plan is optimised for it")
    return (f"  region {offer['words']}: {figures}; not {100 * WORTH_IT:.0f} % smaller ({100 * offer['gain']:.0f} %), "
            "so the plan for the whole range is used")


def _plan_json(plan: Plan, args: argparse.Namespace) -> dict[str, Any]:
    """``plan.to_json()`` as the commands print it. Without ``--delta``/``--noise`` exactly the keys
    printed before δ existed (the plan's ``noise_choice`` is left out). With either: ``delta``,
    ``rho`` and ``level_rhos`` always (null for Laplace), and ``alternatives``: the projected
    ``total_sq_error``/``max_variance``/``max_std_error`` (counts²/records) of the best Laplace and the
    best Gaussian plan at this (ε, δ), null where not planned (Gaussian at δ = 0)."""
    out = plan.to_json()
    if getattr(args, "focus_offer", None) is not None:
        out["focus_offer"] = args.focus_offer
    if not _delta_options_given(args):
        out.pop("noise_choice", None)
        return out
    out.setdefault("delta", plan.privacy.delta)
    out.setdefault("rho", None)
    out.setdefault("level_rhos", None)
    choice = plan.noise_choice.to_json() if plan.noise_choice is not None else None
    out["alternatives"] = {kind: choice[kind] if choice else None for kind in ("laplace", "gaussian")}
    return out


def _delta_unused(plan: Plan) -> str | None:
    """One sentence when δ > 0 was given but the plan is Laplace (pure ε-DP: δ is not spent)."""
    if plan.noise == "laplace" and plan.privacy.delta > 0:
        return (f"δ = {plan.privacy.delta:g} is unused: the plan's Laplace noise is pure ε-DP, so the release "
                "charges δ = 0")
    return None


def _note_delta_unused(plan: Plan, command: str) -> None:
    """:func:`_delta_unused` as one line on stderr (exit code unchanged)."""
    text = _delta_unused(plan)
    if text is not None:
        print(f"dpgui {command}: note: {text}", file=sys.stderr)


def _plan_report(plan: Plan, n: int | None, args: argparse.Namespace) -> dict[str, Any]:
    from dpgui.core.margins import cdf_margins
    from dpgui.core.planner import baselines
    from dpgui.core.projection import project

    out = _plan_json(plan, args)
    out["projected"] = project(plan).to_json(n)
    out["projected"]["margin95"] = cdf_margins(plan).to_json()
    out["baselines"] = baselines(plan.shape.bins, plan.privacy)
    best = out["baselines"]["paper_best"]["total_sq_error"]
    out["projected"]["ratio_to_paper_best"] = out["projected"]["total_sq_error"] / best
    return out


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


def cmd_plan(args: argparse.Namespace) -> int:
    plan = _make_plan(args, args.bins)
    _warn_before_spend(plan, args.n, "plan")  # --n is typed by the user: public, or the user's own estimate
    report = _plan_report(plan, args.n, args)
    if args.json:
        _print(report, True)
        _note_delta_unused(plan, "plan")
    else:
        print(plan_text(report, args.n))
    _focus_note(args, "plan")
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
    margin = margin95(plan, "every")
    if margin > n:
        print(f"dpgui {command}: warning: the plan's 95 % margin at its worst CDF point, ± {margin:,.4g} records, is "
              f"larger than N = {n:,}: the released counts would be mostly noise; use fewer bins or a larger ε",
              file=sys.stderr)
    if plan.delta_spent > 0 and plan.delta_spent >= 1 / n:
        print(f"dpgui {command}: warning: δ = {plan.delta_spent:g} is not below 1/N = {1 / n:.3g}: with probability δ "
              f"the release may tell more about a person than ε allows; use a δ far below 1/N (e.g. {0.01 / n:.0e})",
              file=sys.stderr)


NOISE_NAMES = {"laplace": "Laplace", "gaussian": "Gaussian"}
_OBJECTIVE_FIGURE = {"total": ("total_sq_error", "projected total squared error"),
                     "max": ("max_variance", "projected worst variance")}


def noise_text(report: dict[str, Any]) -> str:
    """Which noise the plan uses and why, in one line (``report``: :func:`_plan_json`'s keys with the
    noise choice); e.g. "Gaussian (automatic: projected total squared error 3.1e+06 vs 4.2e+06 with Laplace)"."""
    choice = report.get("noise_choice")
    chosen = "gaussian" if report["noise"] == "discrete_gaussian" else "laplace"
    other = "laplace" if chosen == "gaussian" else "gaussian"
    text = NOISE_NAMES[chosen]
    if not choice:
        return text
    key, label = _OBJECTIVE_FIGURE[choice["objective"]]
    mine, theirs = choice[chosen], choice[other]
    if choice["requested"] == "auto":
        if theirs is None and not report.get("delta"):
            text += " (automatic: with δ = 0 only pure ε-DP Laplace noise is possible; give --delta for Gaussian)"
        elif theirs is None:
            text += f" (automatic: {NOISE_NAMES[other]} noise is beyond the noise sampler at this ε and δ)"
        else:
            text += (f" (automatic: {label} {mine[key]:.3g} vs {theirs[key]:.3g} with {NOISE_NAMES[other]})")
    else:
        text += " (as asked" + (f"; {label} {mine[key]:.3g}, {theirs[key]:.3g} with {NOISE_NAMES[other]}"
                                if mine is not None and theirs is not None else "") + ")"
    return text


def _margin_line(margins: dict[str, float], n: int | None) -> str:
    """The stated 95 % margins of a CDF plan (``projected["margin95"]``), worded as the window and the
    PDF word them: "Projected 95 % margin …: ± … at the worst point of the CDF, ± … on average"."""
    from dpgui.core.margins import MARGIN_NAME
    from dpgui.formatting import cdf_margin_words

    return f"Projected {MARGIN_NAME}: {cdf_margin_words(margins['worst'], margins['average'], n)}"


def plan_text(report: dict[str, Any], n: int | None) -> str:
    """The plan in words, for people: tree, budgets, projected error, comparison with the paper."""
    neighbours = ("change-one (N = all rows is public and published exactly)" if report["neighbours"] == "change"
                  else "add/remove-one (N is private and released with noise)")
    projected = report["projected"]
    lines = [
        f"Plan for K = {report['bins']} bins, total budget ε = {report['epsilon']:g}",
        f"  neighbours: {neighbours}; up to {report['records_per_person']} record(s) per person",
        f"  missing values: {_missing_words(report)}",
        f"  tree: {_tree_words(report)}, "
        f"estimator: {'GLS (best linear unbiased)' if report['estimator'] == 'gls' else 'covering sum'}",
    ]
    if "alternatives" in report:  # --delta or --noise given: say which noise, why, and in which unit
        gaussian = report["noise"] == "discrete_gaussian"
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


def _passphrase(path: str | None, confirm: bool) -> str:
    """The passphrase from ``--passphrase-file``, else asked on the terminal (twice when ``confirm``)."""
    from dpgui.report.keystore import read_passphrase_file

    if path is not None:
        return read_passphrase_file(Path(path))
    if not sys.stdin.isatty():
        raise ParameterError("no passphrase given and no terminal to ask on", "give --passphrase-file F")
    import getpass

    try:
        first = getpass.getpass("Passphrase: ")
        if confirm and getpass.getpass("Passphrase again: ") != first:
            raise ParameterError("the two passphrases differ", "type the same passphrase twice")
    except EOFError:  # Ctrl-D at the prompt
        raise ParameterError("no passphrase was typed (the input ended)",
                             "type the passphrase and press Enter, or give --passphrase-file F") from None
    return first


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


def _check_missing_option(missing: str, neighbours: str) -> None:
    """``--missing``: "auto" (the default), the neighbour model's own rule, or ``impute:VALUE`` (its value
    is checked by the plan's privacy: a number, change only); anything else is refused before anything
    is read or spent, saying what happens instead."""
    if neighbours not in tuple(Neighbours):
        return  # reported by the plan, with its own message
    rule = missing_rule_for(neighbours)
    instead = f"leave out --missing: under {neighbours} missing values are {MISSING_RULE_TEXT[rule]}"
    if neighbours == "change":
        instead += ", or give impute:VALUE to count them as a value you choose"
    if str(missing).strip().lower().startswith(IMPUTE_PREFIX):
        return
    if missing not in (MISSING_AUTO, rule):
        raise ParameterError(f"--missing {missing} is not a rule of the {neighbours} model", instead)


# ------------------------------------------------------------------ the data source (dpgui.data.source only)
def _location(args: argparse.Namespace) -> str | None:
    """The data's location: INPUT or ``--source``/``--input`` (one of them), None if neither."""
    positional, option = getattr(args, "input", None), getattr(args, "source", None)
    if positional is not None and option is not None:
        raise ParameterError(f"the data was given twice (INPUT {positional!r} and --source {option!r})",
                             "give it once: INPUT or --source URL|FILE")
    return positional if positional is not None else option


def _has_source(args: argparse.Namespace) -> bool:
    """Was a data source given: a location, or (Spark) a catalogue table?"""
    return _location(args) is not None or (args.engine == "spark" and args.table is not None)


def _source_spec(args: argparse.Namespace) -> SourceSpec:
    """The :class:`~dpgui.data.source.SourceSpec` of the command's options (nothing is opened), or the
    ParameterError of :func:`~dpgui.data.source.parse_source` (a password in a URL, a table for a
    file, table and query, an unknown engine, …). ``--delimiter`` alone keeps the decimal point;
    ``--decimal ,`` alone means ';'-separated, ``--decimal .`` alone ','-separated."""
    from dpgui.data.file_types import CsvDialect, format_of_name
    from dpgui.data.source import parse_source
    from dpgui.data.source_spec import sqlite_url_note

    location = _location(args)
    if location is None and not (args.engine == "spark" and args.table is not None):
        raise ParameterError("no data was given", "give a data file or a database URL: INPUT or --source URL|FILE")
    dialect = None
    if args.delimiter is not None or args.decimal is not None:
        decimal = args.decimal or "."
        delimiter = args.delimiter or (";" if decimal == "," else ",")
        dialect = CsvDialect.checked(delimiter, decimal)
    spec = parse_source(location or "", table=args.table, query=args.query, engine=args.engine,
                        spark_master=args.spark_master, dialect=dialect, encoding=args.encoding,
                        row_count_public=getattr(args, "n_public", False))
    note = sqlite_url_note(location or "", spec.location) if spec.kind == "database" else None
    if note is not None:  # sqlite:///srv/x.db read as /srv/x.db
        command = " ".join(filter(None, (args.command, getattr(args, "hierarchy_command", None))))
        print(f"dpgui {command}: note: {note}", file=sys.stderr)
    if spec.kind == "file" and dialect is not None and format_of_name(spec.location) not in ("csv", "tsv"):
        raise ParameterError(f"--delimiter/--decimal were given for '{Path(spec.location).name}', which is not a "
                             "CSV or TSV file", "drop --delimiter and --decimal")
    return spec


def _password_prompt(display_url: str) -> str | None:
    """Ask for a database password on the terminal (never echoed); None (cancelled) when the input ended."""
    import getpass

    try:
        return getpass.getpass(f"Password for {display_url}: ")
    except EOFError:
        return None


def _open_data(spec: SourceSpec) -> DataSource:
    """:func:`~dpgui.data.source.open_source`; a database password comes from DPGUI_DB_PASSWORD, the keyring,
    or (only when stdin is a terminal) a prompt; without any, the server's refusal says to set
    DPGUI_DB_PASSWORD (libpq's PGPASSWORD and ~/.pgpass work too). Errors: DataError with the fix."""
    from dpgui.data.source import open_source

    return open_source(spec, password_prompt=_password_prompt if sys.stdin.isatty() else None)


def _protected_paths(spec: SourceSpec) -> list[str]:
    """Files an output must never replace (nor, for a folder, write into): :func:`dpgui.data.source.local_paths`."""
    from dpgui.data.source import local_paths

    return local_paths(spec)


def _choose_neighbours(args: argparse.Namespace) -> None:
    """``--neighbours`` of a command that has one: the model asked for, or the data source's default —
    ``change`` for a file or a table, ``addremove`` for a ``--query`` without ``--n-public``
    (:func:`dpgui.data.source.neighbours_for`, which refuses ``change`` for such a query). Decided from
    the options alone, before anything is read or spent; ``args.neighbours`` is set to the model."""
    if not hasattr(args, "neighbours"):
        return
    from dpgui.vocabulary import Neighbours

    if getattr(args, "synthetic", None) is not None or "engine" not in args or not _has_source(args):
        args.neighbours = str(Neighbours(args.neighbours or Neighbours.CHANGE))  # no source: --n-public is refused later
        return
    from dpgui.data.source import neighbours_for

    spec = _source_spec(args)
    if spec.row_count_public and args.neighbours == Neighbours.ADDREMOVE:
        raise ParameterError("--n-public says that the query's row count may be published, and --neighbours addremove "
                             "keeps it private", "drop --n-public, or use --neighbours change")
    chosen = neighbours_for(spec, args.neighbours)
    if args.neighbours is None and chosen is Neighbours.ADDREMOVE:
        args.neighbours_note = QUERY_ROWS_NOTE  # said once the command has succeeded (an error stays one line)
    args.neighbours = str(chosen)


#: Said on stderr after a command that took ``addremove`` as a query's default model.
QUERY_ROWS_NOTE = ("note: the data is a query, and the number of rows it returns is not public, so the neighbour "
                   "model is addremove (N is private); if that number is public, give --n-public")


def _check_no_source_options(args: argparse.Namespace, instead: str) -> None:
    """``--synthetic`` or ``--prior`` read no data source: its options would be silently unused."""
    given = [option for option, value in (("--table", args.table), ("--query", args.query),
                                          ("--spark-master", args.spark_master), ("--delimiter", args.delimiter),
                                          ("--decimal", args.decimal), ("--encoding", args.encoding))
             if value is not None] + (["--engine"] if args.engine != "local" else []) + (
                 ["--n-public"] if getattr(args, "n_public", False) else [])
    if given:
        raise ParameterError(f"{given[0]} describes a data source, and {instead} reads none",
                             f"drop {given[0]}, or give the data with --source instead of {instead}")


def _check_data_columns(source: DataSource, columns: Sequence[str], numeric: bool) -> None:
    """Before the ledger is asked: every column exists (and, ``numeric``, holds numbers) in a database
    or Spark source (its schema only). A file's reader makes the same checks, naming the row of a
    non-number, while it counts, still before the spend."""
    if source.spec.kind == "file":
        return
    found = {c.name: c for c in source.columns()}
    where = source.spec.display_name()
    for column in columns:
        info = found.get(column)
        if info is None:
            from dpgui.data.readers import column_not_found

            raise column_not_found(column, where, list(found))
        if numeric and info.kind not in ("numeric", "empty"):
            raise DataError(f"column '{column}' in {where} is not numeric (it holds {info.kind}, {info.dtype})",
                            "choose a numeric column, or convert it in --query (e.g. CAST(x AS double precision))")


def _check_outputs(args: argparse.Namespace, protect: Sequence[str] = (), with_record: bool = False) -> None:
    """Every output target of a release, checked before anything is spent: --out (a new file in a
    writable folder, never the input, an existing file only with --force; ``with_record``: the same for
    the release record written beside it) and --bundle (a writable folder; with --name, none of the
    four files may exist). ``protect``: the data's own files (:func:`_protected_paths`)."""
    from dpgui.report.bundle import check_bundle_folder, check_bundle_target
    from dpgui.report.files import check_outside_input_folders, check_writable, same_file

    if args.out is not None:
        check_writable(args.out, protect=list(protect), overwrite=args.force)
        if with_record:  # and the release record beside it
            from dpgui.report.cdf.release_files import record_path

            check_writable(record_path(args.out), protect=list(protect), overwrite=args.force)
    if args.bundle is not None:
        check_outside_input_folders(args.bundle, protect)
        if args.name is None:
            check_bundle_folder(args.bundle)
        else:  # checks the folder too
            paths = check_bundle_target(args.bundle, args.name)
            if args.out is not None and any(same_file(Path(args.out), p) for p in paths.all()):
                raise ParameterError(f"--out {args.out} is one of the bundle's own files",
                                     "write --out elsewhere, or leave it out (the bundle holds the CSV)")
            for data in protect:
                if any(same_file(Path(data), p) for p in paths.all()):
                    raise ParameterError(f"the bundle would overwrite the input {data}", "choose another --name")


def cmd_release(args: argparse.Namespace) -> int:
    from dpgui.core.noise import SecureRandom
    from dpgui.core.quantiles import quantiles
    from dpgui.data.histogram import check_bounds
    from dpgui.data.readers import check_data_file
    from dpgui.report.cdf.bundle import default_bundle_name
    from dpgui.report.cdf.csv_export import write_release_csv
    from dpgui.report.keystore import load_secret_key
    from dpgui.report.ledger import Ledger
    from dpgui.report.publish import charge_text
    from dpgui.report.cdf.publish import sign_release, spend_and_release
    from dpgui.report.cdf.release_files import write_record
    from dpgui.workspace.release import new_release_id

    _check_missing_option(args.missing, args.neighbours)
    # Everything that can fail is checked before the budget is spent, the source first (a mistyped
    # path or a password in a URL is reported as such, not as a dataset without a budget).
    spec = _source_spec(args)
    if spec.kind == "file":
        check_data_file(spec.location)
    _check_release_options(args)
    check_bounds(args.lower, args.upper)
    _check_outputs(args, _protected_paths(spec), with_record=True)
    dataset = args.dataset
    plan = _make_plan(args, args.bins)  # checks every limit of the noise sampler
    key = None
    if args.bundle is not None:
        key = load_secret_key(Path(args.key), _passphrase(args.passphrase_file, False))
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the PDF needs no screen
        from dpgui.pdf.cdf import render_release_pdf
    with _open_data(spec) as source, Ledger() as ledger:  # connected (password asked) before the ledger
        _check_data_columns(source, [args.column], numeric=True)
        _check_charge(ledger, dataset, plan)  # no cap, or too little left: refused before reading
        # No refusal that depends on the values (e.g. all missing): that would itself be a release.
        whole = _whole_numbers(args, source)  # public: the statement or the file's declared type
        _whole_number_note(whole, args)
        hist = source.histogram(args.column, args.lower, args.upper, args.bins)
        _warn_before_spend(plan, hist.n_rows if plan.privacy.root_public else None, "release")  # N only if public
        _check_dataset_identity(ledger, dataset, [c.name for c in source.columns()], hist.n_rows, args.new_dataset)
        args.release_id = new_release_id()  # known before the spend: an interruption can ask the ledger about it
        result, info = spend_and_release(ledger, dataset, args.column, MISSING_AUTO, hist.counts, plan, SecureRandom(),
                                         args.lower, args.upper, args.consistency, n_missing=hist.n_missing,
                                         release_id=args.release_id, source_record=source.public_record(),
                                         whole_numbers=whole)

        def bundle() -> Path:
            assert key is not None
            pdf = render_release_pdf(result, info, key.public_key.key_id_hex)
            name = args.name or default_bundle_name(info)
            return sign_release(ledger, args.bundle, name, result, info, pdf, key).manifest  # checks the ledger's record

        record = _release_record(args, plan, result, info, whole)
        outputs = _write_outputs(args, plan, info.release_id, lambda out: write_release_csv(result, out),
                                 bundle if key is not None else None, record=lambda csv: write_record(csv, record))
    summary = {**record, "outputs": outputs,
               "quantiles": [_quantile_json(q) for q in quantiles(result, args.probabilities, whole is not None)]}
    if args.json:
        _print(summary, True)
    else:
        where = " and ".join(outputs.values())
        noise = f"{NOISE_NAMES[plan.noise]} noise, " if _delta_options_given(args) else ""
        print(f"released {plan.shape.bins} cumulative counts to {where} "
              f"({charge_text(plan, with_rho=True)} from dataset {dataset!r}, {noise}{plan.privacy.neighbours} neighbours, "
              f"branching {plan.shape.label}; missing values: {summary['missing_values']['description']})")
        if args.focus_offer is not None:
            print(focus_text(args.focus_offer).strip())
    _note_delta_unused(plan, "release")
    _focus_note(args, "release")
    return 0


def _release_record(args: argparse.Namespace, plan: Plan, result: Any, info: Any, whole: Any) -> dict[str, Any]:
    """What ``release --json`` prints about a release (its outputs and quantiles aside), and what the
    release record beside ``--out`` holds (:mod:`dpgui.report.cdf.release_files`): public values only.
    ``whole``: the whole-number statement (public: the user's or the file's declared type), or None."""
    from dpgui.report.cdf.bundle import missing_values_json

    summary = _plan_json(plan, args)
    summary.update({
        "dataset": args.dataset,
        "release_id": info.release_id,
        "consistency": args.consistency,
        "n_released": result.total,
        "n_public": plan.privacy.root_public,
        "missing_values": missing_values_json(result, info.missing),
        "secure_noise": result.secure,
        "projected": {"total_sq_error": float((result.std_error**2).sum()),
                      "max_variance": float((result.std_error**2).max())},
        "bounds": [args.lower, args.upper],
        "source": info.source,
    })
    if whole is not None:
        summary["whole_numbers"] = str(whole)
    return summary


def _check_release_options(args: argparse.Namespace) -> None:
    """``release`` and ``hierarchy release``: a dataset to charge and somewhere to write (before anything is read)."""
    if args.dataset is None:
        raise ParameterError("--dataset is missing: the budget ledger adds up ε per dataset name, and a file name is "
                             "not one (a copy or a renamed file would get a fresh budget)",
                             "give --dataset ID, the same name for every file about these people "
                             "(see 'dpgui ledger show')")
    if args.out is None and args.bundle is None:
        raise ParameterError("nowhere to write the release", "give --bundle DIR --key NAME.key (signed) or --out OUT.csv")
    if args.bundle is not None and args.key is None:
        raise ParameterError("--bundle needs a signing key", "give --key NAME.key (create one with 'dpgui key create NAME')")
    if args.force and args.out is None:
        raise ParameterError("--force only applies to --out", "leave --force out (a bundle is never overwritten)")


def _write_outputs(args: argparse.Namespace, plan: Plan | HierarchyPlan, release_id: str,
                   write_csv: Callable[[str], Path], write_bundle: Callable[[], Path] | None,
                   prepare: Callable[[], None] | None = None,
                   record: Callable[[Path], Path] | None = None) -> dict[str, str]:
    """After the spend: ``prepare()`` (what the outputs need), ``--out`` (``write_csv(args.out)``, then
    ``record(csv)``: the release record beside it), then the signed bundle (``write_bundle()``, its
    manifest's path). Returns {"csv": …, "record": …, "bundle": …} as written; any failure says that the
    budget was spent, under which ledger id, and what was written."""
    from dpgui.report.publish import charge_text

    outputs: dict[str, str] = {}
    try:
        if prepare is not None:
            prepare()
        if args.out is not None:
            csv_path = write_csv(args.out)
            outputs["csv"] = str(csv_path)
            if record is not None:
                outputs["record"] = str(record(csv_path))
        if write_bundle is not None:
            outputs["bundle"] = str(write_bundle())
    except Exception as err:  # past the spend, any failure must say that ε was spent
        written = f"{' and '.join(outputs.values())} was written" if outputs else "nothing was written"
        raise DpguiError(f"{charge_text(plan, with_rho=True)} was spent (ledger release {release_id}) but the "
                         f"output could not be written: {err}; {written}", "fix the folder and release again") from err
    return outputs


def _check_charge(ledger: Any, dataset: str, plan: Plan | HierarchyPlan) -> None:
    """Would the release's (ε, δ, ρ) (:meth:`Plan.ledger_charge`, :meth:`HierarchyPlan.ledger_charge`)
    fit the dataset's cap? Raises the ledger's refusal, before any data is read (:func:`_check_ledger_charge`)."""
    _check_ledger_charge(ledger, dataset, plan.ledger_charge())  # = publish.check_release_budget for a CDF plan


def _check_ledger_charge(ledger: Any, dataset: str, charge: tuple[float, float, float | None]) -> None:
    """Would a release charging (ε, δ, ρ) fit the dataset's cap? Raises the ledger's refusal. A release
    with δ > 0 on a dataset whose cap has δ = 0 can never fit: that refusal names the fix (raise the
    cap's δ, or Laplace noise)."""
    import shlex

    from dpgui.report.ledger import BudgetExceeded

    try:
        ledger.check_spend(dataset, *charge)
    except BudgetExceeded as err:
        if err.short_of == "cap_delta":  # the ledger's refusal, with the CLI's own fix
            delta = charge[1]
            raise ParameterError(
                f"dataset {dataset!r} has a cap with δ = 0 (pure ε-DP), and this release needs δ = {delta:g}",
                f"raise the cap's δ with `dpgui ledger cap {shlex.quote(dataset)} {err.totals.cap_epsilon:g} --delta "
                f"{delta:g} --reason TEXT`, or release with --noise laplace") from None
        raise


def _whole_numbers(args: argparse.Namespace, source: Any) -> Any:
    """Why the released column is known to hold whole numbers (:class:`dpgui.core.quantiles.WholeNumbers`):
    ``--whole-numbers`` (the officer's statement), else a file's declared integer type (Parquet, Stata, a
    published schema beside it); None. Public information only: never the cells."""
    from dpgui.core.quantiles import WholeNumbers

    if args.whole_numbers:
        return WholeNumbers.STATED
    if source.spec.kind != "file":
        return None
    from dpgui.data.public_bounds import find_schema_for, whole_number_reason

    info = next((c for c in source.columns() if c.name == args.column), None)
    if info is None:
        return None
    path = Path(source.spec.location)
    reason = whole_number_reason(info, source.spec.public_record()["format"], find_schema_for(path))
    return WholeNumbers.TYPE if reason is not None else None


def _whole_number_note(whole: Any, args: argparse.Namespace) -> None:
    """A note on stderr when the column holds whole numbers but the bins are not centred on them: the
    options that centre them (:func:`dpgui.data.public_bounds.whole_number_bins`)."""
    if whole is None:
        return
    from dpgui.core.quantiles import whole_number_step
    from dpgui.data.public_bounds import whole_number_bins

    if whole_number_step(args.lower, args.upper, args.bins) is not None:
        return
    try:
        lower, upper, bins, step = whole_number_bins(args.lower, args.upper, args.bins)
    except DpguiError:
        return
    per = "each value in the middle of its own bin" if step == 1 else f"{step} whole numbers in each bin"
    print(f"dpgui release: note: '{args.column}' holds whole numbers ({whole.description}); bins centred on them "
          f"(--lower {lower:g} --upper {upper:g} --bins {bins}) would put {per} and give whole-number quantiles",
          file=sys.stderr)


def _quantile_json(q: Any) -> dict[str, Any]:
    """A quantile (dpgui.core.quantiles.Quantile) as JSON: every field it has, the 95 % interval included."""
    from dataclasses import asdict

    return asdict(q)


def _check_dataset_identity(ledger: Any, dataset: str, columns: Sequence[str], n_rows: int, confirmed: bool) -> None:
    """The rule of docs/design.md, "Dataset identity": a dataset name with no release yet whose file
    has the same column names and row count as another ledgered dataset is refused (exit 2) unless
    ``--new-dataset`` confirms it is different data. A new dataset confirmed so gets a warning on stderr
    that says nothing of the data (not whether its row count matched another's: under add/remove the row
    count is confidential, and stderr is published). The data's fingerprint (its ``columns``' names and
    ``n_rows``, from any source: file, database, Spark) is recorded under ``dataset`` (local ledger only),
    before the spend."""
    from dpgui.report.ledger import data_fingerprint, datasets_like, is_new_dataset, record_fingerprint, same_data_warning

    fingerprint = data_fingerprint(ledger, list(columns), n_rows)  # the schema only
    if is_new_dataset(ledger, dataset):
        others = datasets_like(ledger, fingerprint, dataset)
        if others and not confirmed:
            raise ParameterError(same_data_warning(others, dataset),
                                 f"if it is the same data, give --dataset {others[0]}; if it is different data, "
                                 "add --new-dataset")
        if confirmed:
            print(f"dpgui release: warning: {dataset!r} is released as a new dataset because --new-dataset was "
                  "given; if it is a copy, a rename or a new version of a ledgered dataset, it now has a fresh "
                  "budget", file=sys.stderr)
    record_fingerprint(ledger, dataset, fingerprint)


def cmd_verify(args: argparse.Namespace) -> int:
    from dpgui.formatting import printable_text
    from dpgui.workspace.statistics import verify
    from dpgui.report.keystore import load_public_key

    try:
        key = load_public_key(args.pubkey)
    except DpguiError as err:
        print(f"FAILED: the public key: {printable_text(str(err))}", file=sys.stderr)
        return 1
    result = verify(args.manifest, key)
    if not result.ok:
        print(f"FAILED: {printable_text(result.failure or '')}", file=sys.stderr)
        return 1
    for text, _ in result.checks:
        print(f"ok: {text}")
    manifest = result.manifest or {}
    privacy = manifest.get("privacy", {})
    delta = f", δ = {privacy['delta']:g}" if isinstance(privacy.get("delta"), (int, float)) and privacy["delta"] > 0 else ""
    print(f"VERIFIED: release {manifest.get('release_id')} of dataset {manifest.get('dataset')!r}, "
          f"ε = {privacy.get('epsilon')}{delta}, signed by key {result.key_id}")
    return 0


def cmd_key(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dpgui.report.keystore import create_key

    files = create_key(args.name, _passphrase(args.passphrase_file, True), Path(args.dir))
    print(f"created key {files.key_id_hex}:\n  secret (keep it private): {files.secret_path}\n"
          f"  public (give it to anyone who verifies): {files.public_path}")
    return 0


def cmd_ledger(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from dpgui.formatting import printable_text
    from dpgui.report.ledger import Ledger
    from dpgui.workspace.statistics import release_words

    with Ledger() as ledger:
        if args.ledger_command == "cap":
            ledger.set_cap(args.dataset, args.epsilon, args.delta, args.reason)
            totals = ledger.totals(args.dataset)
            print(f"dataset {args.dataset!r}: cap ε = {totals.cap_epsilon:g}, δ = {totals.cap_delta:g}; "
                  f"spent ε = {totals.epsilon_spent:g}; left ε = {totals.epsilon_remaining:g}")
            return 0
        datasets = [ledger.totals(args.dataset)] if args.dataset else ledger.datasets()
        releases = ledger.releases(args.dataset)
        history = {t.dataset_id: ledger.cap_history(t.dataset_id) for t in datasets}
        if args.json:
            _print({"datasets": [asdict(t) for t in datasets], "releases": [asdict(r) for r in releases],
                    "cap_history": {d: [asdict(c) for c in changes] for d, changes in history.items()}}, True)
            return 0
        if not datasets:
            print("the ledger is empty: set a dataset's budget with 'dpgui ledger cap ID EPSILON'")
        for t in datasets:
            print(f"{t.dataset_id}: spent ε = {t.epsilon_spent:g} of {t.cap_epsilon:g} (left {t.epsilon_remaining:g}), "
                  f"δ = {t.delta_spent:g} of {t.cap_delta:g}, {t.releases} release(s)"
                  + (f"; by zCDP accounting (ρ = {t.rho_spent:.4g}) ε = {t.zcdp_epsilon:g} at δ = {t.cap_delta:g}"
                     if t.accounting == "zcdp" and t.zcdp_epsilon is not None and t.rho_spent is not None else ""))
            for c in history[t.dataset_id]:
                change = (f"cap set to ε = {c.new_epsilon:g}, δ = {c.new_delta:g}" if c.old_epsilon is None else
                          f"cap changed from ε = {c.old_epsilon:g}, δ = {c.old_delta:g} to ε = {c.new_epsilon:g}, "
                          f"δ = {c.new_delta:g}")
                print(f"  {c.changed_utc}  {change}"
                      + (f"  reason: {printable_text(c.reason)}" if c.reason else "  (no reason given)"))
        if releases:
            print("releases (newest first):")
        for r in releases:
            charge = (f"ε = {r.epsilon:g}" + (f", δ = {r.delta:g}" if r.delta > 0 else "")  # δ even without a ρ
                      + (f", ρ = {r.rho:.4g}" if r.delta > 0 and r.rho is not None else ""))
            print(f"  {r.created_utc}  {r.dataset_id}  {charge}  release {r.release_id}"
                  + (f"  bundle {printable_text(r.bundle)}" if r.bundle else ""))
            print(f"      {_one_line(release_words(r.description))}")
    return 0


def _one_line(text: str) -> str:
    """``text`` as one line of a terminal: runs of white space (a query's line breaks) as one space, any other
    control character escaped (:func:`~dpgui.formatting.printable_text`: a recorded text cannot start a line of
    its own)."""
    from dpgui.formatting import printable_text

    return printable_text(" ".join(text.split()))


def cmd_simulate(args: argparse.Namespace) -> int:
    import secrets  # here: it loads OpenSSL, which the other commands do not need

    from dpgui.core.margins import cdf_margins
    from dpgui.core.projection import project
    from dpgui.core.simulation import simulate
    from dpgui.core.synthetic import synthetic_counts

    seed = args.seed if args.seed is not None else secrets.randbits(63)
    from_data = args.synthetic is None
    if from_data:
        from dpgui.data.histogram import check_bounds
        from dpgui.data.readers import check_data_file

        if not _has_source(args):
            raise ParameterError("no data was given", "give --source URL|FILE (the data) or --synthetic uniform|normal")
        spec = _source_spec(args)
        if spec.kind == "file":
            check_data_file(spec.location)
        missing = [name for name in ("column", "lower", "upper") if getattr(args, name) is None]
        if missing:
            raise ParameterError(f"--input needs --{missing[0]}", "give --column, --lower and --upper with --input")
        check_bounds(args.lower, args.upper)
        plan = _make_plan(args, args.bins)
        with _open_data(spec) as source:
            _check_data_columns(source, [args.column], numeric=True)
            histogram = source.histogram(args.column, args.lower, args.upper, args.bins)
        counts, n_missing = histogram.counts, histogram.n_missing
    else:
        _check_no_source_options(args, "--synthetic")
        if args.n is None:
            raise ParameterError("--synthetic needs --n", "give the number of records, e.g. --n 10000")
        plan = _make_plan(args, args.bins)
        counts, n_missing = synthetic_counts(args.synthetic, args.n, args.bins, seed), 0
    lower, upper = (args.lower, args.upper) if from_data else (0.0, 1.0)
    result = simulate(plan, counts, args.trials, args.consistency, seed, n_missing, lower, upper)
    # Under addremove N is private: a file's exact N is never printed (nor used for % of N).
    n_public = plan.privacy.root_public or not from_data
    # N as a release publishes it: under change all rows (missing values included), else the values.
    n = int(np.sum(counts)) + (n_missing if plan.privacy.root_public else 0)
    out = {
        "plan": _plan_json(plan, args),
        "consistency": args.consistency,
        "n": n if n_public else "N is private (addremove): not shown",
        "insecure_seeded_noise": True,
        **result.to_json(),
        "projected": {**project(plan).to_json(n if n > 0 and n_public else None),
                      "margin95": cdf_margins(plan).to_json()},
    }
    if args.json:
        _print(out, True)
    else:
        print(simulate_text(out, show_n=not from_data or plan.privacy.root_public))
        if args.focus_offer is not None:
            print(focus_text(args.focus_offer))
    _note_delta_unused(plan, "simulate")
    _focus_note(args, "simulate")
    return 0


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
        + (f", δ = {plan['delta']:g}, {NOISE_NAMES[plan['noise'].removeprefix('discrete_')]} noise"
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


def cmd_quantiles(args: argparse.Namespace) -> int:
    from dpgui.core.quantiles import quantiles
    from dpgui.report.cdf.release_files import read_release

    release, facts = read_release(args.release, args.plan)
    found = quantiles(release, args.probabilities, "whole_numbers" in facts)
    if args.json:
        _print({**facts, "quantiles": [_quantile_json(q) for q in found]}, True)
        return 0
    delta = f", δ = {facts['delta']:g}, {NOISE_NAMES[facts['noise']]} noise" if facts["delta"] > 0 else ""
    print(f"Quantiles of the released CDF in {Path(facts['csv']).name} (K = {facts['bins']}, bounds "
          f"[{release.lower:g}, {release.upper:g}), N = {facts['n']:,.0f}, ε = {facts['epsilon']:g}{delta}); "
          "the interval is the 95 % interval")
    print(f"  {'p':>6}  {'value':>14}  {'95 % interval':>31}")
    for q in found:
        print(f"  {q.probability:>6g}  {q.value:>14.6g}  [{q.low:>13.6g}, {q.high:>13.6g}]")
    if found and found[0].whole:
        print("(the values are whole numbers and the bins are centred on them: estimates and intervals are whole "
              "numbers, both ends included)")
    if "note" in facts:
        print(f"note: {facts['note']}")
    if "manifest" in facts:
        print(f"(read from {facts['manifest']}; its signature was not checked here: use 'dpgui verify')")
    elif "record" in facts:
        print(f"(its plan read from {facts['record']})")
    return 0


def version_text() -> str:
    """``dpgui --version``: dpgui, Python, Qt and the libraries whose versions the manifests record."""
    from dpgui.report.bundle import software_versions

    versions = software_versions()
    lines = [f"dpgui {versions.pop('dpgui')}" + (" (frozen app)" if getattr(sys, "frozen", False) else "")]
    try:
        import PySide6
        from PySide6.QtCore import qVersion

        versions["PySide6"] = f"{PySide6.__version__} (Qt {qVersion()})"
    except ImportError as err:
        versions["PySide6"] = f"not loadable ({err})"
    lines += [f"  {name} {version}" for name, version in versions.items()]
    return "\n".join(lines)


# ------------------------------------------------------------------ dpgui hierarchy plan|release|simulate
HIERARCHY_NOISES_CLI = ("auto", "laplace", "gaussian", "multiplicative")  # core.hierarchy.HIERARCHY_NOISE_CHOICES
HIERARCHY_CONSISTENCY_CLI = ("auto", "topdown", "gls", "none")
HIERARCHY_LEVELS = (2, 4)  # core.hierarchy.MIN_LEVELS, MAX_LEVELS (spelled here so that --help stays light)
NODE_LIST_PRIOR_ONLY = "prior file"  # = report.hierarchy_bundle.NODE_LIST_FROM_PRIOR (not imported: --help stays light)
NODE_LIST_DATA_ONLY = ("data: the file was read for the node list only (its categories are published); "
                       "its counts were not used")
NODE_LIST_DATA_SIMULATED = ("data: the file was read for the node list and for the true counts of the simulated "
                            "releases; the optimiser did not use its counts")
NODE_LIST_DATA_COUNTS = ("data: the file was read for the node list and, with --counts-from-data, for the counts "
                         "the optimiser uses")


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


def _allocation(text: str) -> tuple[str, float | None]:
    """``--allocation uniform|optimal|target:TAU`` → (allocation, target weighted MSE or None)."""
    if text in ("uniform", "optimal"):
        return text, None
    if text.startswith("target:"):
        value = text.removeprefix("target:")
        try:
            tau = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a number; give e.g. target:1000 (the weighted MSE "
                                             "to meet, records²)") from None
        if not (math.isfinite(tau) and tau > 0):
            raise argparse.ArgumentTypeError(f"the target must be a finite number > 0, got {value}; give e.g. target:1000")
        return "target", tau
    raise argparse.ArgumentTypeError(f"{text!r} is not uniform, optimal or target:TAU; give e.g. optimal or target:1000")


def _weights(text: str) -> tuple[float, ...]:
    """``--weights w0,w1,…``: one finite weight ≥ 0 per level, root first (paper 001 eq. 5)."""
    values = _comma_numbers(text, f"{text!r} is not a list of numbers like 1,1,1")
    if any(not math.isfinite(v) or v < 0 for v in values) or not any(v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"weights must be finite, ≥ 0 and not all 0, got {text}; give e.g. 1,1,1")
    return values


def _alpha(text: str) -> float:
    """``--alpha A``: paper 004's multiplicative error, 0 < α < 1."""
    value = _number(text, "α", "0.5")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"α must lie strictly between 0 and 1, got {text}; give e.g. 0.5")
    return value


def _add_hierarchy_options(parser: argparse.ArgumentParser) -> None:
    low, high = HIERARCHY_LEVELS
    parser.add_argument("--levels", type=_levels, required=True, metavar="C1,C2[,C3,C4]",
                        help=f"{low} to {high} nested categorical columns, the top level first (each value belongs to "
                             "one parent); a numeric column is allowed: its values become category labels")
    _add_privacy_options(parser, "gaussian and multiplicative noise need δ > 0")
    parser.add_argument("--noise", choices=HIERARCHY_NOISES_CLI, default="auto",
                        metavar="laplace|gaussian|multiplicative|auto",
                        help="auto (default): the noise with the lower projected error (Laplace when δ = 0)")
    parser.add_argument("--allocation", type=_allocation, default=("uniform", None), metavar="uniform|optimal|target:TAU",
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


def _add_hierarchy_parser(sub: Any) -> None:
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
    _add_hierarchy_options(sim)
    _add_source_options(sim)
    sim.add_argument("--trials", type=_int_at_least(2, "--trials 200", LARGEST_TRIALS), required=True, metavar="R",
                     help="number of simulated releases")
    sim.add_argument("--seed", type=_int_at_least(0, "--seed 1"), metavar="S")


def _hierarchy_tree(counts: PathCounts) -> tuple[Hierarchy, np.ndarray]:
    """The hierarchy of path counts (:attr:`PathCounts.hierarchy`) and its leaf counts (int64, in the
    hierarchy's leaf order). A value under two parents is a DataError with the fix."""
    return counts.hierarchy, _leaf_counts(counts.hierarchy, counts)


def _leaf_counts(hierarchy: Hierarchy, counts: PathCounts) -> np.ndarray:
    """The count of every leaf of ``hierarchy`` from path counts; a path that is not a leaf of it is a
    DataError naming the first few (from :meth:`Hierarchy.leaf_index`). O(paths)."""
    leaves = np.zeros(hierarchy.level_sizes[-1], dtype=np.int64)
    if len(counts.paths):
        np.add.at(leaves, hierarchy.leaf_index(counts.paths), np.asarray(counts.counts, dtype=np.int64))
    return leaves


def _hierarchy_privacy(args: argparse.Namespace) -> Any:
    from dpgui.core.plan import PrivacySpec

    return PrivacySpec(args.epsilon, args.neighbours, args.records_per_person, args.delta or 0.0)


def _assumed_records(args: argparse.Namespace, rows: int | None) -> int | None:
    """The records a plan without ``--prior`` projects its errors at: ``--n``, else under change the data's
    row count ``rows`` (N is public and published exactly), else None (add/remove: N is private)."""
    if args.prior is not None:
        return None
    if args.n is not None:
        return int(args.n)
    return rows if args.neighbours == "change" and rows else None


NO_RECORDS_NOTE = ("the errors are the noise's alone (no counts): give --n, a published estimate of the number of "
                   "records, or --prior, to see how useful small counts will be")


def _hierarchy_plan(args: argparse.Namespace, hierarchy: Hierarchy, prior_levels: tuple[np.ndarray, ...] | None,
                    prior_source: str, rows: int | None = None) -> HierarchyPlan:
    """The plan of the command's options for ``hierarchy`` (its level sizes only: public; ``rows``: the
    data's N, used under change only, where it is public)."""
    from dpgui.core.hierarchy import plan_hierarchy

    allocation, target = args.allocation
    if allocation != "uniform" and prior_levels is None:
        _hierarchy_plan_needs_counts(args)
    return plan_hierarchy(hierarchy.level_sizes, _hierarchy_privacy(args), noise=args.noise, allocation=allocation,
                          weights=args.weights, target_mse=target, consistency=args.consistency,
                          prior_levels=prior_levels, prior_source=prior_source, hierarchy=hierarchy,
                          alpha=args.alpha, assumed_records=_assumed_records(args, rows))


def _alpha_mrmse_json(args: argparse.Namespace, hierarchy: Hierarchy,
                      prior_levels: Sequence[np.ndarray] | None) -> dict[str, Any] | None:
    """With ``--alpha`` and δ > 0: paper 004's projected α-mRMSE (records; per level and the maximum) of the
    multiplicative mechanism and of the Gaussian baseline side by side, and the one recommended."""
    if args.alpha is None or not (args.delta or 0.0) > 0:
        return None
    from dpgui.core.counting_trees import recommend_alpha_mechanism

    choice, gaussian, multiplicative = recommend_alpha_mechanism(hierarchy.level_sizes, _hierarchy_privacy(args),
                                                                 args.alpha, prior_levels)

    def figures(projection: Any) -> dict[str, Any]:
        return {"alpha_mrmse": float(projection.alpha_mrmse), "method": projection.method,
                "levels": [{"level": int(f.level), "nodes": int(f.nodes), "alpha_rmse": float(f.alpha_rmse)}
                           for f in projection.levels]}

    return {"alpha": args.alpha, "recommended": choice, "gaussian": figures(gaussian),
            "multiplicative": figures(multiplicative)}


def _hierarchy_errors(plan: HierarchyPlan, hierarchy: Hierarchy, levels: Sequence[np.ndarray] | None,
                      counts: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The plan's stated errors as JSON (:func:`dpgui.report.hierarchy.bundle.errors_json` of
    :func:`dpgui.core.hierarchy_errors.plan_errors`, the figures the window and the PDF state): per level
    bias², variance and MSE (sums over the level's nodes, records²), the 95 % margin of one count and how
    useful the counts will be, at ``levels`` (root first; public: a prior, or the data's when opted in,
    named by ``counts``), else at the plan's assumed records spread evenly, else the noise's alone; and
    the warnings: levels that will be mostly noise, or that no counts were known."""
    from dpgui.core.hierarchy_errors import plan_errors
    from dpgui.report.hierarchy.bundle import errors_json

    errors = plan_errors(plan, hierarchy, levels, counts)
    warnings = errors.warnings(hierarchy.level_names) if errors.counts is not None else (NO_RECORDS_NOTE,)
    return errors_json(errors), warnings


def _budget_unit(plan: HierarchyPlan) -> str | None:
    return {"laplace": "epsilon", "gaussian": "rho"}.get(plan.noise)


def _hierarchy_plan_json(plan: HierarchyPlan, hierarchy: Hierarchy, node_list: str, projection: dict[str, Any],
                         notes: Sequence[str]) -> dict[str, Any]:
    """What ``plan``/``release --json`` print about the plan: the levels, the node list's source, the
    level budgets (ε_ℓ for Laplace, ρ_ℓ for Gaussian, root first; the root's is 0 under change), the
    charge, and the projected bias², variance and MSE per level (sums over the level's nodes)."""
    from dpgui.report.hierarchy.bundle import charge_json

    return {
        "levels": list(hierarchy.level_names),
        "level_sizes": [int(n) for n in hierarchy.level_sizes],
        "nodes": int(hierarchy.n_nodes),
        "node_list_source": node_list,
        "prior_source": plan.prior_source,
        "counts_from_data": plan.prior_source == PriorSource.CONFIDENTIAL,
        "noise": plan.noise,
        "budget_unit": _budget_unit(plan),
        "level_budgets": [float(b) for b in plan.level_budgets],
        "allocation": plan.allocation,
        "consistency": plan.consistency,
        "charge": charge_json(plan),
        "plan": plan.to_json(),
        "projected": projection,
        "notes": list(dict.fromkeys((*notes, *plan.notes))),
    }


def _hierarchy_sources(args: argparse.Namespace, counting: bool) -> tuple[Hierarchy, Any, np.ndarray | None, str, str,
                                                                          tuple[str, ...], int | None]:
    """For ``plan`` and ``simulate``: the hierarchy, its prior levels (or None), the truth's leaf counts
    (``counting``: simulate needs them), the node list's and the counts' sources and notes, and the data's
    row count N (None with --prior; used only where N is public, under change)."""
    from dpgui.data.hierarchy import read_prior

    if args.prior is not None:
        if args.counts_from_data:
            raise ParameterError("--counts-from-data needs --input (the data), not --prior",
                                 "leave out --counts-from-data: the prior's counts are used")
        _check_no_source_options(args, "--prior")
        prior = read_prior(args.prior, args.levels)
        hierarchy, leaves = _hierarchy_tree(prior)
        return (hierarchy, hierarchy.aggregate(leaves), leaves, NODE_LIST_PRIOR_ONLY, PriorSource.FILE, tuple(prior.notes),
                None)
    if not _has_source(args):
        raise ParameterError("no data and no prior were given",
                             "give --source URL|FILE (the data) or --prior PRIOR.csv (public counts)")
    with _open_data(_source_spec(args)) as source:
        _check_data_columns(source, args.levels, numeric=False)
        data = source.path_counts(args.levels)
    hierarchy, leaves = _hierarchy_tree(data)
    rows = int(leaves.sum())
    if args.counts_from_data:
        return (hierarchy, hierarchy.aggregate(leaves), leaves, NODE_LIST_DATA_COUNTS, PriorSource.CONFIDENTIAL,
                tuple(data.notes), rows)
    return hierarchy, None, leaves if counting else None, NODE_LIST_DATA_ONLY, PriorSource.NONE, tuple(data.notes), rows


ALPHA_UNUSED = "α is used only with δ > 0 (the mechanisms of Ghazi et al. 2023 need (ε, δ))"


def _check_hierarchy_delta(args: argparse.Namespace) -> tuple[str, ...]:
    """Before anything is read: ``--noise multiplicative`` without ``--alpha``, and ``--noise
    gaussian|multiplicative`` with δ = 0 (both are (ε, δ)-DP), are refused; ``--alpha`` with δ = 0 is
    unused, and the returned note says so (printed with the others)."""
    if args.noise == "multiplicative" and args.alpha is None:
        raise ParameterError("--noise multiplicative needs --alpha, the multiplicative error of Ghazi et al. 2023",
                             "give --alpha A with 0 < A < 1, e.g. --alpha 0.5")
    if (args.delta or 0.0) > 0:
        return ()
    if args.noise in ("gaussian", "multiplicative"):
        raise ParameterError(f"--noise {args.noise} needs δ > 0 (it is (ε, δ)-DP)",
                             "give --delta D, e.g. --delta 1e-9, or choose --noise laplace")
    return (ALPHA_UNUSED,) if args.alpha is not None else ()


def _projection_counts_text(prior_source: str) -> str:
    from dpgui.core.hierarchy import counts_words

    return counts_words(prior_source) or "no counts"


def _note_lines(command: str, notes: Sequence[str]) -> None:
    for note in notes:
        print(f"dpgui hierarchy {command}: note: {note}", file=sys.stderr)


def cmd_hierarchy_plan(args: argparse.Namespace) -> int:
    unused = _check_hierarchy_delta(args)
    hierarchy, prior_levels, _, node_list, prior_source, notes, rows = _hierarchy_sources(args, counting=False)
    notes += unused
    plan = _hierarchy_plan(args, hierarchy, prior_levels, prior_source, rows)
    projection, warnings = _hierarchy_errors(plan, hierarchy, prior_levels, _projection_counts_text(prior_source))
    report = _hierarchy_plan_json(plan, hierarchy, node_list, projection, notes)
    report["warnings"] = list(warnings)
    report["alpha_mrmse"] = _alpha_mrmse_json(args, hierarchy, prior_levels)
    if args.json:
        _print(report, True)
    else:
        print(hierarchy_plan_text(report))
    _note_lines("plan", report["notes"])
    return 0


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


def hierarchy_plan_text(report: dict[str, Any]) -> str:
    """A hierarchy plan in words: levels, node list source, budgets per level and the projected error."""
    unit = {"epsilon": "ε", "rho": "ρ"}.get(report["budget_unit"] or "", "")
    charge = report["charge"]
    lines = [
        f"Plan for counts over {' > '.join(report['levels'])} ({report['nodes']:,} nodes, "
        f"{', '.join(f'{n:,}' for n in report['level_sizes'])} per level), {report['noise']} noise, "
        + ("no level budgets (the rounds of Ghazi et al. 2023)" if report["noise"] == "multiplicative"
           else f"{report['allocation']} allocation") + f", {report['consistency']} consistency",
        f"  node list: {report['node_list_source']}; optimiser counts: {report['prior_source']}",
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


def _provisional_charges(args: argparse.Namespace) -> tuple[tuple[float, float, float | None], ...]:
    """The (ε, δ, ρ) charge at the stated ε and δ of every noise the options can lead to, for the ledger
    check before the data is read when the plan needs the data (its node list or, opted in, its counts):
    Laplace (ε, 0, ε²/2; pure ε-DP is ε²/2-zCDP), Gaussian (ε, δ, ρ of CKS), multiplicative (ε, δ, no ρ).
    An explicit noise has one; auto has Laplace's alone at δ = 0, and with δ > 0 Laplace's, Gaussian's
    and (with --alpha) the multiplicative one's. Each is the full charge of its noise's plan with the
    uniform or optimal allocation; with the target allocation the plan may charge less (the least ε that
    meets τ), and the stated ε, its ceiling, is what is checked here.

    :func:`_check_provisional_charge` refuses only when none of them fits, so it never refuses a release
    whose plan would fit (but the ceiling of a target). It may let through one whose plan does not (auto
    may choose a noise that does not fit): the exact charge (:meth:`HierarchyPlan.ledger_charge`) is
    checked once the plan is made, before the spend, and the spend checks it again."""
    privacy = _hierarchy_privacy(args)
    laplace = (privacy.epsilon, 0.0, privacy.epsilon**2 / 2.0)
    if privacy.rho is None or args.noise == "laplace":  # δ = 0: Laplace (other noises are refused earlier)
        return (laplace,)
    gaussian = (privacy.epsilon, privacy.delta, privacy.rho)
    multiplicative = (privacy.epsilon, privacy.delta, None)
    if args.noise == "gaussian":
        return (gaussian,)
    if args.noise == "multiplicative":
        return (multiplicative,)
    return (laplace, gaussian) + ((multiplicative,) if args.alpha is not None else ())


def _check_provisional_charge(ledger: Any, dataset: str, charges: Sequence[tuple[float, float, float | None]]) -> None:
    """The ledger check before the data is read: passes if one of ``charges`` (:func:`_provisional_charges`)
    fits the dataset's cap; otherwise raises the refusal of the first. No cap: refused at once."""
    from dpgui.report.ledger import BudgetExceeded

    refusals: list[DpguiError] = []
    for charge in charges:
        try:
            _check_ledger_charge(ledger, dataset, charge)
            return
        except (BudgetExceeded, ParameterError) as err:  # ParameterError: δ > 0 on a cap with δ = 0
            refusals.append(err)
    raise refusals[0]


def _check_categories_declared(args: argparse.Namespace) -> None:
    """Without ``--prior`` a release publishes the data's own categories as its node list, which
    differential privacy does not cover: the user must declare them public (``--categories-public``)."""
    if args.prior is None and not args.categories_public:
        raise ParameterError("without --prior the release publishes the data's own categories as the node list, and "
                             "they were not declared public (a rare category reveals that someone is in it; "
                             "differential privacy does not cover the node list)",
                             "give --categories-public if they are public (e.g. an official list), or --prior "
                             "PRIOR.csv with a public list of the categories")


def _check_out_is_not_the_prior(args: argparse.Namespace) -> None:
    """``--out`` never replaces the ``--prior`` file, not even with ``--force``, nor through another path or
    a (symbolic or hard) link: the same-file check :func:`_check_outputs` applies to the input."""
    from dpgui.report.files import same_file

    if args.out is not None and args.prior is not None and same_file(Path(args.out), Path(args.prior)):
        raise DataError(f"output {args.out} is the prior file {args.prior}",
                        "choose another output file name; dpgui never overwrites its input or its prior")


def cmd_hierarchy_release(args: argparse.Namespace) -> int:
    from dpgui.core.noise import SecureRandom
    from dpgui.data.hierarchy import check_prior_is_not_the_data, read_prior
    from dpgui.data.readers import check_data_file
    from dpgui.report.files import sha256_regular_file
    from dpgui.report.hierarchy.bundle import (
        NODE_LIST_FROM_DATA, NODE_LIST_FROM_PRIOR, default_hierarchy_bundle_name, write_hierarchy_csv,
    )
    from dpgui.report.hierarchy.publish import sign_hierarchy_release, spend_and_release_hierarchy
    from dpgui.report.publish import charge_text
    from dpgui.report.keystore import load_secret_key
    from dpgui.report.ledger import Ledger
    from dpgui.workspace.release import new_release_id

    # Everything that can fail is checked before the budget is spent (cmd_release's order), the
    # declaration of the node list first: it needs neither the data nor the ledger.
    _check_categories_declared(args)
    spec = _source_spec(args)
    if spec.kind == "file":
        check_data_file(spec.location)
    protect = _protected_paths(spec)
    _check_release_options(args)
    unused = _check_hierarchy_delta(args)
    if args.prior is not None and args.counts_from_data:
        raise ParameterError("--counts-from-data and --prior both give the optimiser its counts",
                             "leave out one: --prior (public counts) or --counts-from-data (the data's own counts)")
    _check_out_is_not_the_prior(args)
    _check_outputs(args, protect)
    dataset = args.dataset
    # The public prior: the node list and the optimiser's counts, read before the ledger is asked.
    hierarchy: Hierarchy | None = None
    prior_levels: tuple[np.ndarray, ...] | None = None
    prior_name = prior_sha256 = None
    notes: tuple[str, ...] = ()
    plan: HierarchyPlan | None = None
    prior: PathCounts | None = None
    if args.prior is not None:
        # hashed before and after it is read: the recorded hash is of the bytes the plan used
        prior_sha256 = sha256_regular_file(args.prior, "prior file")
        prior = read_prior(args.prior, args.levels)
        if sha256_regular_file(args.prior, "prior file") != prior_sha256:
            raise DataError(f"the prior file {args.prior} changed while it was read",
                            "release again when the file is complete")
        hierarchy, prior_leaves = _hierarchy_tree(prior)
        prior_levels = hierarchy.aggregate(prior_leaves)
        prior_name = Path(args.prior).name
        notes = tuple(prior.notes)
        plan = _hierarchy_plan(args, hierarchy, prior_levels, PriorSource.FILE)  # the whole plan before the data
    elif args.allocation[0] != "uniform" and not args.counts_from_data:
        _hierarchy_plan_needs_counts(args)
    key = None
    if args.bundle is not None:
        key = load_secret_key(Path(args.key), _passphrase(args.passphrase_file, False))
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the PDF needs no screen
        from dpgui.pdf.hierarchy import render_hierarchy_pdf
    with _open_data(spec) as source, Ledger() as ledger:  # connected (password asked) before the ledger
        _check_data_columns(source, args.levels, numeric=False)
        # No cap, or too little left: refused before the data is read (with the exact plan when the
        # prior gives it, else unless one of the charges the options can lead to fits).
        if plan is not None:
            _check_charge(ledger, dataset, plan)
        else:
            _check_provisional_charge(ledger, dataset, _provisional_charges(args))
        data = source.path_counts(args.levels)
        if prior is not None:  # the data as its own "public" prior (a copy, a re-export): refused before the spend
            check_prior_is_not_the_data(prior, data, Path(args.prior).name)
        _check_dataset_identity(ledger, dataset, [c.name for c in source.columns()], data.rows, args.new_dataset)
        notes = tuple(dict.fromkeys(notes + tuple(data.notes)))
        if hierarchy is None:  # the data's categories are the (published) node list
            hierarchy, leaves = _hierarchy_tree(data)
        else:  # every path of the data must be in the prior's tree
            leaves = _leaf_counts(hierarchy, data)
        if plan is None:
            if args.counts_from_data:
                prior_levels = hierarchy.aggregate(leaves)
            plan = _hierarchy_plan(args, hierarchy, prior_levels,
                                   PriorSource.CONFIDENTIAL if args.counts_from_data else PriorSource.NONE,
                                   int(leaves.sum()))
            _check_charge(ledger, dataset, plan)
        args.release_id = new_release_id()  # known before the spend: an interruption can ask the ledger about it
        result, info = spend_and_release_hierarchy(
            ledger, dataset, hierarchy, leaves, plan, SecureRandom(),
            node_list_source=NODE_LIST_FROM_PRIOR if args.prior is not None else NODE_LIST_FROM_DATA,
            counts_from_data=bool(args.counts_from_data), prior_name=prior_name, prior_sha256=prior_sha256,
            notes=notes, release_id=args.release_id, source_record=source.public_record())
        # The projection published with the release: the plan's stated errors (those `hierarchy plan` and the
        # window state) at the prior's counts, else at the plan's assumed records, else the noise's alone —
        # never at the confidential counts. Past the spend, so it runs inside _write_outputs: its failure too
        # says that ε was spent.
        projected: dict[str, Any] = {}
        warnings: list[str] = []

        def project() -> None:
            public = prior_levels if args.prior is not None else None
            figures, said = _hierarchy_errors(plan, hierarchy, public, "the prior's counts")
            projected.update(figures)
            warnings.extend(said)

        def bundle() -> Path:
            assert key is not None and hierarchy is not None and plan is not None
            pdf = render_hierarchy_pdf(result, info, projected, key.public_key.key_id_hex)
            name = args.name or default_hierarchy_bundle_name(info, hierarchy.level_names)
            return sign_hierarchy_release(ledger, args.bundle, name, result, info, pdf, key, projected).manifest

        outputs = _write_outputs(args, plan, info.release_id, lambda out: write_hierarchy_csv(result, out),
                                 bundle if key is not None else None, prepare=project)
    node_list = NODE_LIST_PRIOR_ONLY if args.prior is not None else (
        "data (declared public with --categories-public: its categories are published as the node list)")
    summary = _hierarchy_plan_json(plan, hierarchy, node_list, projected, notes + unused)
    summary["warnings"] = warnings
    summary.update({
        "outputs": outputs,
        "dataset": dataset,
        "release_id": info.release_id,
        "secure_noise": info.secure,
        "n_released": int(np.asarray(result.counts[0])[0]),
        "n_public": bool(plan.privacy.root_public),
        "source": info.source,
    })
    if args.json:
        _print(summary, True)
    else:
        print(f"released {hierarchy.n_nodes:,} node counts over {' > '.join(hierarchy.level_names)} to "
              f"{' and '.join(outputs.values())} ({charge_text(plan, with_rho=True)} from dataset {dataset!r}, {plan.noise} "
              f"noise, {plan.privacy.neighbours} neighbours, {plan.consistency} consistency; node list: {node_list})")
    _note_lines("release", summary["notes"])
    return 0


def _hierarchy_plan_needs_counts(args: argparse.Namespace) -> None:
    allocation, target = args.allocation
    shown = allocation if target is None else f"target:{target:g}"
    raise ParameterError(f"--allocation {shown} needs node counts, and none were given",
                         "give --prior PRIOR.csv (public counts), or --counts-from-data (the data's own counts; "
                         "recorded in the manifest), or use --allocation uniform")


def cmd_hierarchy_simulate(args: argparse.Namespace) -> int:
    import secrets  # here: it loads OpenSSL, which the other commands do not need

    from dpgui.core.hierarchy import simulate_hierarchy
    from dpgui.formatting import format_level_margin
    from dpgui.report.hierarchy.bundle import projection_json

    unused = _check_hierarchy_delta(args)
    seed = args.seed if args.seed is not None else secrets.randbits(63)
    hierarchy, prior_levels, leaves, node_list, prior_source, notes, rows = _hierarchy_sources(args, counting=True)
    notes += unused
    assert leaves is not None
    if node_list == NODE_LIST_DATA_ONLY:  # simulate does use the data's counts: they are its truth
        node_list = NODE_LIST_DATA_SIMULATED
    plan = _hierarchy_plan(args, hierarchy, prior_levels, prior_source, rows)
    truth = hierarchy.aggregate(leaves)
    empirical = simulate_hierarchy(hierarchy, leaves, plan, trials=args.trials, seed=seed)
    projected, _ = _hierarchy_errors(plan, hierarchy, truth, "the simulated data's counts")
    report = _hierarchy_plan_json(plan, hierarchy, node_list, projected, notes)
    report.update({
        "trials": args.trials,
        "seed": seed,
        "insecure_seeded_noise": True,
        "empirical": projection_json(empirical, "the simulated data's counts"),
        "side_by_side": [
            {"level": int(e.level), "nodes": int(e.nodes),
             "empirical": {"bias2": float(e.bias2), "variance": float(e.variance), "mse": float(e.mse),
                           "margin95": e.margin95},
             "projected": {key: float(p[key]) for key in ("bias2", "variance", "mse", "margin95")}}
            for e, p in zip(empirical.levels, projected["levels"])],
    })
    if args.json:
        _print(report, True)
    else:
        lines = [f"Simulated {args.trials:,} releases (seed {seed}, INSECURE seeded noise: for study only, never "
                 "publish)", f"  {'level':<8}{'nodes':>10}{'MSE simulated':>16}{'MSE projected':>16}"
                 f"{'bias² sim.':>14}{'bias² proj.':>14}{'95 % margin sim.':>20}{'95 % margin proj.':>20}"]
        for row in report["side_by_side"]:
            e, p = row["empirical"], row["projected"]
            lines.append(f"  {row['level']:<8}{row['nodes']:>10,}{e['mse']:>16.4g}{p['mse']:>16.4g}{e['bias2']:>14.4g}"
                         f"{p['bias2']:>14.4g}{format_level_margin(e['margin95']):>20}"
                         f"{format_level_margin(p['margin95']):>20}")
        print("\n".join(lines))
    _note_lines("simulate", report["notes"])
    return 0


HIERARCHY_COMMANDS = {"plan": cmd_hierarchy_plan, "release": cmd_hierarchy_release, "simulate": cmd_hierarchy_simulate}


def cmd_hierarchy(args: argparse.Namespace) -> int:
    """``dpgui hierarchy plan|release|simulate``."""
    return HIERARCHY_COMMANDS[args.hierarchy_command](args)


def cmd_columns(args: argparse.Namespace) -> int:
    """``dpgui columns --source …``: the source's columns (name, kind, storage type), who counts it, the
    source's public record and, for a CSV file, the dialect it is read with — stated, or its name's
    default — and the one its first lines suggest; the schema only (a database: one query with no rows;
    a CSV: its head). A CSV whose head suggests another dialect than its name's default, with none
    stated, is listed as the suggestion reads it, and said to be refused by a release until stated."""
    from dataclasses import replace

    from dpgui.data.csv_dialect import UnstatedDialect

    spec = _source_spec(args)
    suggested = None
    try:
        source = _open_data(spec)
    except UnstatedDialect as refused:
        suggested = refused.suggestion
        source = _open_data(replace(spec, dialect=suggested.dialect))
    with source:
        columns = source.columns()
        record = source.public_record()
        dialect = _dialect_view(source, suggested)
    if suggested is not None:
        record.pop("dialect", None)  # no release reads it so until a dialect is stated
    if args.json:
        listed: dict[str, Any] = {"source": record}
        if dialect is not None:
            listed["dialect"] = dialect
        listed["columns"] = [{"name": c.name, "kind": c.kind, "dtype": c.dtype} for c in columns]
        _print(listed, True)
        return 0
    print(f"{spec.display_name()}: {len(columns)} column(s), counted by {source.engine}")
    if dialect is not None:
        read_as = f"{dialect['delimiter_name']}-separated, decimal {dialect['decimal_name']}"
        if dialect["origin"] == "suggested":
            print(f"  read as {read_as}: suggested by its first lines, not stated; a release refuses the file until "
                  f"you state its dialect: {dialect['state_with']}")
        else:
            origin = "as stated" if dialect["origin"] == "stated" else "the default for its name"
            print(f"  read as {read_as} ({origin}); its first lines suggest {dialect['suggestion']['words']}")
    width = max((len(c.name) for c in columns), default=4)
    for c in columns:
        print(f"  {c.name:<{width}}  {c.kind:<8}  {c.dtype}")
    return 0


def _dialect_view(source: DataSource, refused: Any) -> dict[str, Any] | None:
    """For ``columns``: the CSV dialect the source reads with, its origin ("stated", "default", or
    "suggested" when ``refused`` — the :class:`~dpgui.data.csv_dialect.DetectedDialect` of a file
    refused without a stated dialect), what the first lines suggest, and the options that state it.
    None for a source that is not a CSV file read on this computer."""
    from dpgui.data.csv_dialect import detect_dialect, stated_dialect_options
    from dpgui.data.file_types import CSV_DECIMALS, CSV_DELIMITERS

    used = source.csv_dialect
    if used is None or source.spec.kind != "file":
        return None
    suggestion = refused if refused is not None else detect_dialect(source.spec.location)
    origin = "suggested" if refused is not None else getattr(source.csv_dialect_origin, "value", "stated")
    suggested = suggestion.dialect
    words = suggested.describe() + ("" if suggestion.detected else " (nothing in them decides: the default)")
    return {"delimiter": used.delimiter, "decimal": used.decimal, "origin": origin,
            "delimiter_name": CSV_DELIMITERS[used.delimiter], "decimal_name": CSV_DECIMALS[used.decimal],
            "suggestion": {"delimiter": suggested.delimiter, "decimal": suggested.decimal,
                           "detected": suggestion.detected, "reason": suggestion.reason, "words": words},
            "state_with": stated_dialect_options(suggested)}


def _add_counts_parser(sub: Any) -> None:
    counts = sub.add_parser("counts", help="noisy counts of the stated categories of one column of a file")
    counts_sub = counts.add_subparsers(dest="counts_command", parser_class=_Parser, metavar="{release}", required=True)
    rel = counts_sub.add_parser("release", help="release the count of each category into a signed bundle (spends ε)")
    rel.add_argument("input", metavar="FILE", help="the data file")
    rel.add_argument("--column", required=True, metavar="NAME", help="the categorical column")
    rel.add_argument("--categories", required=True, metavar="A,B,…",
                     help="the public categories, comma-separated; other and missing values are counted in one more row")
    rel.add_argument("--epsilon", required=True, type=float, metavar="E", help="the privacy budget ε (pure ε-DP)")
    rel.add_argument("--neighbours", choices=NEIGHBOURS_CLI, default=None, help="change (default) or addremove")
    rel.add_argument("--dataset", required=True, metavar="ID", help="the budget ledger's name for the data")
    rel.add_argument("--bundle", required=True, metavar="DIR", help="write the signed bundle into DIR")
    rel.add_argument("--key", required=True, metavar="NAME.key", help="secret key that signs the bundle")
    rel.add_argument("--passphrase-file", metavar="F", help="file whose first line is the key's passphrase")
    rel.add_argument("--name", metavar="NAME", help="bundle file name stem (default: dataset-column-counts-id)")


def cmd_counts(args: argparse.Namespace) -> int:
    """``dpgui counts release``: the counts statistic through the registry (budget check, count, spend then
    noise, PDF, signed bundle). Files only; the dataset-identity step of ``dpgui release`` is not run."""
    from dpgui.pdf.counts import render_counts_pdf
    from dpgui.core.counts import CountsPlan
    from dpgui.core.noise import SecureRandom
    from dpgui.core.plan import PrivacySpec
    from dpgui.data.source import SourceSpec
    from dpgui.report.bundle import check_bundle_target
    from dpgui.report.keystore import load_secret_key
    from dpgui.report.ledger import Ledger
    from dpgui.report.publish import charge_text, check_release_budget
    from dpgui.vocabulary import Neighbours, StatisticKind
    from dpgui.workspace.statistics import statistic
    from dpgui.workspace.statistics.counts import CountsSpend

    counts = statistic(StatisticKind.COUNTS)
    categories = tuple(c.strip() for c in args.categories.split(","))
    plan = CountsPlan(categories, PrivacySpec(args.epsilon, Neighbours(args.neighbours)))
    spend = CountsSpend(args.column, plan)
    key = load_secret_key(Path(args.key), _passphrase(args.passphrase_file, False))
    with Ledger() as ledger:
        check_release_budget(ledger, args.dataset, plan)
        with _open_data(SourceSpec("file", args.input)) as data:
            true_counts = counts.count(data, spend)  # CONFIDENTIAL: into the release only
            record = data.public_record()
        release, info = counts.release(ledger, args.dataset, spend, true_counts, SecureRandom(), source_record=record)
        name = args.name or f"{args.dataset}-{args.column}-counts-{info.release_id[:8]}"
        check_bundle_target(args.bundle, name)
        paths = counts.sign(ledger, args.bundle, name, release, info,
                            render_counts_pdf(release, info, key.public_key.key_id_hex), key)
    print(f"released {counts.title} ({charge_text(plan)}), ledger release {info.release_id}; bundle {paths.manifest}")
    return 0


COMMANDS = {"plan": cmd_plan, "release": cmd_release, "quantiles": cmd_quantiles, "verify": cmd_verify,
            "key": cmd_key, "ledger": cmd_ledger, "simulate": cmd_simulate, "hierarchy": cmd_hierarchy,
            "columns": cmd_columns, "counts": cmd_counts}


def _no_desktop() -> bool:
    """True on Linux and the BSDs when no display server is named and no Qt platform is forced
    (on a server, over plain ssh). Windows and macOS always have their desktop."""
    if sys.platform in ("win32", "darwin") or os.environ.get("QT_QPA_PLATFORM"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _gui(argv: list[str]) -> int:
    """``dpgui [FILE] [--column NAME]``: the desktop window (start page without FILE)."""
    parser = _Parser(prog="dpgui", description="Open the desktop app (on FILE if given).")
    parser.add_argument("file", nargs="?", help=f"a {FILE_TYPE_NAMES} file to open")
    parser.add_argument("--column", help="the column to select after opening FILE")
    args = parser.parse_args(argv)
    if _no_desktop():
        # Qt would abort here with a misleading "reinstall" message (and a core dump).
        print("dpgui: error: the window needs a graphical desktop, and none was found (neither DISPLAY nor "
              "WAYLAND_DISPLAY is set); start dpgui from the desktop, or use the commands: dpgui --help",
              file=sys.stderr)
        return 2
    try:
        from dpgui.app.main import run_gui
    except ImportError as err:  # e.g. Qt's system libraries missing on a server
        print(f"dpgui: error: the desktop app cannot start ({err}); install the Qt libraries or use "
              "the commands plan, release, simulate", file=sys.stderr)
        return 2
    return run_gui(args.file, args.column)


def _spent_note(args: argparse.Namespace) -> str:
    """After an interrupted release: whether the ledger recorded its spend (asked, not assumed)."""
    release_id = getattr(args, "release_id", None)
    if release_id is None:
        releasing = args.command == "release" or getattr(args, "hierarchy_command", None) == "release"
        return " and nothing was spent" if releasing else ""
    try:
        from dpgui.report.ledger import Ledger

        with Ledger() as ledger:
            spent = ledger.release(release_id) is not None
    except Exception:  # noqa: BLE001 — unknown: say where to look
        return f"; check 'dpgui ledger show' for release {release_id}"
    return f", but its ε was spent (ledger release {release_id})" if spent else " and nothing was spent"


#: Options whose value may be a negative number: argparse takes "-1e-9" (but not "-1") for an option.
NUMBER_OPTIONS = ("--epsilon", "--delta", "--lower", "--upper", "--focus")


def _join_negative_numbers(arguments: list[str]) -> list[str]:
    """``--delta -1e-9`` as ``--delta=-1e-9``, so that the value reaches its own check (and its one-line
    message) instead of argparse's "expected one argument"."""
    out: list[str] = []
    i = 0
    while i < len(arguments):
        arg = arguments[i]
        following = arguments[i + 1] if i + 1 < len(arguments) else ""
        if arg in NUMBER_OPTIONS and following.startswith("-") and not following.startswith("--"):
            out.append(f"{arg}={following}")
            i += 2
            continue
        out.append(arg)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from dpgui.formatting import printable_text

    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or (arguments[0] not in COMMANDS and not arguments[0].startswith("-")) or (
            arguments[0] == "--column"):
        return _gui(arguments)
    parser = build_parser()
    args = parser.parse_args(_join_negative_numbers(arguments))
    if args.version:
        print(version_text())
        return 0
    if args.self_test:
        from dpgui.selftest import run_self_test

        return run_self_test()
    if args.command is None:
        parser.print_help()
        return 0
    command = " ".join(filter(None, (args.command, getattr(args, "hierarchy_command", None))))  # "hierarchy release"
    try:
        _choose_neighbours(args)
        code = COMMANDS[args.command](args)
        if code == 0 and getattr(args, "neighbours_note", None):
            print(f"dpgui {command}: {args.neighbours_note}", file=sys.stderr)
        sys.stdout.flush()  # here, so that a reader that stopped early (| head) is caught below
        return code
    except BrokenPipeError:
        # The reader of our output went away (``dpgui ledger show | head``): not an error of dpgui.
        # Point stdout at /dev/null so that the interpreter's last flush does not complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except DpguiError as err:  # one line, whatever the user typed into the names it quotes (a LF, an ESC)
        print(f"dpgui {command}: error: {printable_text(str(err))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"dpgui {command}: interrupted; nothing was written{_spent_note(args)}", file=sys.stderr)
        return 130
    except MemoryError:
        print(f"dpgui {command}: error: out of memory; use fewer bins or a smaller file", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
