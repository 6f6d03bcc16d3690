"""The command line's parser: every command's options, their types (one-line errors naming the option
and the fix) and their choices (from :mod:`dpgui.vocabulary`). Nothing is read or computed here.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any, NoReturn

from dpgui.cli.counts import add_counts_parser
from dpgui.core.missing import MISSING_AUTO
from dpgui.core.synthetic import SYNTHETIC_KINDS
from dpgui.core.tree import MIN_BINS
from dpgui.data.file_types import FILE_TYPE_NAMES
from dpgui.errors import ParameterError
from dpgui.vocabulary import (
    AUTO, CDF_NOISES, HIERARCHY_NOISES, CdfConsistency, Estimator, HierarchyConsistency, Neighbours, Objective, choices,
)


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
#: ``--noise`` and ``--neighbours``: the vocabulary's tokens (stdlib only, so ``--help`` stays light).
NOISE_CHOICES_CLI = choices(AUTO, *CDF_NOISES)
NEIGHBOURS_CLI = choices(*Neighbours)


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
    parser.add_argument("--estimator", choices=choices(*Estimator), default=str(Estimator.GLS),
                        help="gls: best linear unbiased (default); covering: the covering sum of Rameshwar et al. 2024")
    parser.add_argument("--objective", choices=choices(*Objective), default=str(Objective.TOTAL),
                        help="minimise the total or the worst squared error of the cumulative counts")
    parser.add_argument("--missing", default=MISSING_AUTO, metavar="auto|impute:VALUE",
                        help="auto (default): missing values follow the neighbour model (docs/privacy-model.md): under change "
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
                                metavar="{plan,release,quantiles,verify,key,ledger,simulate,hierarchy,columns,counts}")
    _add_plan_parser(sub)
    _add_release_parser(sub)
    _add_output_parsers(sub)
    _add_simulate_parser(sub)
    _add_columns_parser(sub)
    _add_hierarchy_parser(sub)
    add_counts_parser(sub, _Parser, _add_source_options)
    return parser


def _add_plan_parser(sub: Any) -> None:
    plan = sub.add_parser("plan", help="choose a tree and budgets; show projected errors (spends nothing)")
    _add_plan_options(plan)
    plan.add_argument("--n", type=_int_at_least(1, "--n 10000", LARGEST_N), metavar="N", help="public N, to express CDF errors")
    plan.add_argument("--lower", type=_finite_float, metavar="A", help="public lower bound (for --focus)")
    plan.add_argument("--upper", type=_finite_float, metavar="B", help="public upper bound (for --focus)")
    plan.add_argument("--json", action="store_true", help="print JSON")


def _add_release_parser(sub: Any) -> None:
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
    rel.add_argument("--consistency", choices=choices(*CdfConsistency), default=str(CdfConsistency.L2))
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


def _add_output_parsers(sub: Any) -> None:
    """``quantiles``, ``verify``, ``key create``, ``ledger show|cap``: what is done with releases and keys."""
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


def _add_simulate_parser(sub: Any) -> None:
    sim = sub.add_parser("simulate", help="Monte-Carlo error of a plan on data or a synthetic shape (insecure noise)")
    _add_plan_options(sim)
    sim.add_argument("--consistency", choices=choices(*CdfConsistency), default=str(CdfConsistency.L2))
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


def _add_columns_parser(sub: Any) -> None:
    col = sub.add_parser("columns", help="the data's columns with their kinds, and who counts them (spends nothing; "
                         "prints no values)")
    col.add_argument("input", nargs="?", metavar="INPUT", help=f"{SOURCE_HELP}; or give it with --source")
    col.add_argument("--source", "--input", dest="source", metavar="URL|FILE", help="the same as INPUT")
    _add_source_options(col, releases=False)
    col.add_argument("--json", action="store_true")


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
