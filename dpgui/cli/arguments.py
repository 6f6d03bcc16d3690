"""The command line's parser pieces: the option adders the commands share (privacy, data source, plan),
the options' types (one-line errors naming the option and the fix) and their choices (from
:mod:`dpgui.vocabulary`), and the parsers of the core commands (plan, release, quantiles, verify, key,
ledger, simulate, columns). A statistic's command group has its parser in its own module; the table
:data:`dpgui.cli.commands.COMMANDS` puts them together. Nothing is read or computed here.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any, NoReturn

from dpgui.core.missing import MISSING_AUTO
from dpgui.core.synthetic import SYNTHETIC_KINDS
from dpgui.core.tree import MIN_BINS
from dpgui.data.file_types import FILE_TYPE_NAMES
from dpgui.errors import ParameterError
from dpgui.vocabulary import AUTO, CDF_NOISES, CdfConsistency, Estimator, Neighbours, Objective, choices


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


def _add_privacy_options(parser: argparse.ArgumentParser, delta_use: str, person: bool = True) -> None:
    """``--epsilon``, ``--delta`` (``delta_use``: what δ > 0 allows), ``--neighbours``, ``--records-per-person``
    and (``person``: a command that reads the data and releases or plans a release) ``--person-column``: the
    privacy options of a CDF, a grouped CDF and a hierarchy."""
    parser.add_argument("--epsilon", type=_positive_float, required=True, metavar="E", help="total privacy budget ε > 0")
    parser.add_argument("--delta", type=_delta, metavar="D",
                        help=f"total δ, 0 ≤ δ ≤ 0.001, far below 1/N (default 0: pure ε-DP); {delta_use}")
    parser.add_argument("--neighbours", "--neighbors", choices=NEIGHBOURS_CLI, default=None,
                        help="change: N is public and published exactly (the default, except for a --query); "
                             "addremove: N is private (the default for a --query: the number of rows it returns is "
                             "not public; change needs --n-public)")
    parser.add_argument("--records-per-person", type=_int_at_least(1, "--records-per-person 1"), default=1,
                        metavar="L", help="maximum records one person contributes (default 1)")
    if person:
        add_person_option(parser)


#: ``--person-column``'s help: what it enforces and what it asks of the neighbour model.
PERSON_HELP = ("the person-ID column (e.g. tailnum): dpgui then keeps at most --records-per-person rows of each of its "
               "values (chosen at random, not by their values), so L is enforced, not only declared; the neighbour "
               "model is then addremove (the default with it; change is refused: the number of rows kept is not "
               "public). Without it, --records-per-person is your declaration, not checked")


def add_person_option(parser: argparse.ArgumentParser) -> None:
    """``--person-column NAME`` (None: no person-ID column, L declared): the privacy unit of a release or plan."""
    parser.add_argument("--person-column", metavar="NAME", default=None, help=PERSON_HELP)


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


def _add_plan_options(parser: argparse.ArgumentParser, bins_required: bool = True, person: bool = True) -> None:
    parser.add_argument("--bins", type=_int_at_least(MIN_BINS, "--bins 256"), required=bins_required, metavar="K",
                        help="number of equal-width bins K (public)")
    _add_privacy_options(parser, "δ > 0 allows Gaussian noise (e.g. 1e-9, well below 1/N)", person)
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


#: Where a plan, release or simulation of several statistics under one budget is (dpgui.cli.release_plan).
PLAN_FILE_EPILOG = ("Several statistics of one table under one budget: dpgui {word} --spec PLAN.toml (a release plan "
                    "file, docs/release-plans.md; dpgui {word} --spec PLAN.toml --help).")


def add_plan_parser(sub: Any) -> None:
    plan = sub.add_parser("plan", help="choose a tree and budgets; show projected errors (spends nothing)",
                         epilog=PLAN_FILE_EPILOG.format(word="plan"))
    _add_plan_options(plan)
    plan.add_argument("--n", type=_int_at_least(1, "--n 10000", LARGEST_N), metavar="N", help="public N, to express CDF errors")
    plan.add_argument("--lower", type=_finite_float, metavar="A", help="public lower bound (for --focus)")
    plan.add_argument("--upper", type=_finite_float, metavar="B", help="public upper bound (for --focus)")
    plan.add_argument("--json", action="store_true", help="print JSON")


def add_release_parser(sub: Any) -> None:
    rel = sub.add_parser("release", help="release a DP CDF of a numeric column to CSV (spends ε)",
                         epilog=PLAN_FILE_EPILOG.format(word="release"))
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


def add_quantiles_parser(sub: Any) -> None:
    """``quantiles``: the quantiles of a released CDF."""
    qua = sub.add_parser("quantiles", help="quantiles of a released CDF with their 95 %% intervals (spends nothing)")
    qua.add_argument("release", metavar="NAME.manifest.json|RELEASE.csv",
                     help="a bundle's manifest, or a released CSV (its plan from the manifest beside it or --plan)")
    qua.add_argument("--plan", metavar="RELEASE.json", help="for a CSV written with --out: the JSON that "
                     "'dpgui release --json' printed (it holds the plan)")
    qua.add_argument("--probabilities", type=_probabilities, default=DEFAULT_PROBABILITIES, metavar="P1,P2,…",
                     help="which quantiles (default 0.1,0.25,0.5,0.75,0.9)")
    qua.add_argument("--json", action="store_true")


def add_verify_parser(sub: Any) -> None:
    """``verify``: a bundle's checks."""
    ver = sub.add_parser("verify", help="check a bundle's signature, schema and file hashes (exit 0 only if all hold)")
    ver.add_argument("manifest", metavar="NAME.manifest.json")
    ver.add_argument("--pubkey", required=True, metavar="KEY.pub", help="the signer's public key (minisign format)")


def add_key_parser(sub: Any) -> None:
    """``key create``: a signing key pair."""
    key = sub.add_parser("key", help="create signing keys")
    key_sub = key.add_subparsers(dest="key_command", parser_class=_Parser, metavar="{create}", required=True)
    create = key_sub.add_parser("create", help="write NAME.key (secret, encrypted, user-only) and NAME.pub")
    create.add_argument("name", metavar="NAME")
    create.add_argument("--passphrase-file", metavar="F", help="file whose first line is the new passphrase "
                        "(default: ask twice on the terminal)")
    create.add_argument("--dir", default=".", metavar="D", help="folder for the two files (default: here)")


def add_ledger_parser(sub: Any) -> None:
    """``ledger show|cap``: the budget ledger."""
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


def add_simulate_parser(sub: Any) -> None:
    sim = sub.add_parser("simulate", help="Monte-Carlo error of a plan on data or a synthetic shape (insecure noise)",
                         epilog=PLAN_FILE_EPILOG.format(word="simulate"))
    _add_plan_options(sim, person=False)
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


def add_columns_parser(sub: Any) -> None:
    col = sub.add_parser("columns", help="the data's columns with their kinds, and who counts them (spends nothing; "
                         "prints no values)")
    col.add_argument("input", nargs="?", metavar="INPUT", help=f"{SOURCE_HELP}; or give it with --source")
    col.add_argument("--source", "--input", dest="source", metavar="URL|FILE", help="the same as INPUT")
    _add_source_options(col, releases=False)
    col.add_argument("--json", action="store_true")
