"""``dpgui counts release``: an adapter of the release flow (:class:`dpgui.workspace.flow.ReleaseFlow`,
through :func:`dpgui.workspace.counts.release_counts_through`) for the counts of the stated categories of
one column (the counts statistic of the registry) of a file, a database table or query, or Spark: the
budget checked, the column counted where the data lives, the dataset identity, the spend then the noise,
the PDF and the signed bundle.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpgui.cli.arguments import _add_source_options, _Parser, add_person_option
from dpgui.cli.interrupt import interrupt_names
from dpgui.cli.keys import _passphrase
from dpgui.cli.rendering import _print, privacy_unit_text
from dpgui.cli.requests import NeighboursRequest, SourceRequest, asked_neighbours, privacy_unit_of
from dpgui.cli.sources import _choose_neighbours, _open_data, _source_spec
from dpgui.errors import ParameterError
from dpgui.vocabulary import Neighbours, StatisticKind, choices


@dataclass(frozen=True)
class CountsReleaseRequest:
    """``dpgui counts release``: the data and the ``column``, the public categories as typed (``--categories``)
    or the file that lists them (``--categories-file``), ε, the neighbour model asked for, the records one
    person contributes, the ledger's ``dataset`` and ``--new-dataset``, the signed bundle's folder, key,
    passphrase file and name, and the person-ID column (None: L declared)."""

    source: SourceRequest
    neighbours: NeighboursRequest
    column: str
    categories: str | None
    categories_file: str | None
    epsilon: float
    records_per_person: int
    dataset: str
    new_dataset: bool
    bundle: str
    key: str
    passphrase_file: str | None
    name: str | None
    json: bool
    person_column: str | None = None

    @classmethod
    def of(cls, args: argparse.Namespace) -> CountsReleaseRequest:
        """The request, or a ParameterError for fewer than one record a person (checked first, as before)."""
        if args.records_per_person < 1:
            raise ParameterError(f"--records-per-person {args.records_per_person} is below 1",
                                 "use --records-per-person 1")
        return cls(SourceRequest.of(args), NeighboursRequest(asked_neighbours(args), SourceRequest.of(args)),
                   args.column, args.categories, args.categories_file, args.epsilon, args.records_per_person,
                   args.dataset, bool(args.new_dataset), args.bundle, args.key, args.passphrase_file, args.name,
                   bool(args.json), args.person_column)


def add_counts_parser(sub: Any) -> None:
    """``dpgui counts release INPUT --column C (--categories A,B | --categories-file F) --epsilon E --dataset ID
    --bundle DIR --key K`` on the CLI's subparsers ``sub`` (the data source options of every release)."""
    counts = sub.add_parser("counts", help="noisy counts of the stated categories of one column")
    counts_sub = counts.add_subparsers(dest="counts_command", parser_class=_Parser, metavar="{release}", required=True)
    rel = counts_sub.add_parser("release", help="release the count of each category into a signed bundle (spends ε)")
    rel.add_argument("input", metavar="INPUT", nargs="?", help="the data: a file, or a database URL (then --table "
                     "or --query); or give it with --source")
    rel.add_argument("--source", "--input", dest="source", metavar="URL|FILE", help="the same as INPUT")
    _add_source_options(rel)
    rel.add_argument("--column", required=True, metavar="NAME", help="the categorical column")
    listed = rel.add_mutually_exclusive_group(required=True)
    listed.add_argument("--categories", metavar="A,B,…",
                        help="the public categories, comma-separated (stated, never read from the data); a value of "
                             "the data that is none of them, or missing, is refused before anything is spent")
    listed.add_argument("--categories-file", metavar="FILE", help="a text file of the public categories, one a line")
    rel.add_argument("--epsilon", required=True, type=float, metavar="E", help="the privacy budget ε (pure ε-DP, "
                     "Laplace noise)")
    rel.add_argument("--neighbours", "--neighbors", choices=choices(*Neighbours), default=None,
                     help="change (the default, except for a --query) or addremove")
    rel.add_argument("--records-per-person", type=int, default=1, metavar="L",
                     help="maximum records one person contributes (default 1)")
    add_person_option(rel)
    rel.add_argument("--dataset", required=True, metavar="ID", help="the budget ledger's name for the data")
    rel.add_argument("--new-dataset", action="store_true",
                     help="confirm that ID is different data even though it has the same column names and row count "
                          "as another dataset in the ledger (refused without it)")
    rel.add_argument("--bundle", required=True, metavar="DIR", help="write the signed bundle into DIR")
    rel.add_argument("--key", required=True, metavar="NAME.key", help="secret key that signs the bundle")
    rel.add_argument("--passphrase-file", metavar="F", help="file whose first line is the key's passphrase")
    rel.add_argument("--name", metavar="NAME", help="bundle file name stem (default: dataset-column-counts-time-id)")
    rel.add_argument("--json", action="store_true", help="print what was released as JSON")


def cmd_counts(args: argparse.Namespace) -> int:
    """``dpgui counts release``: :func:`counts_release_command` of the typed request."""
    return counts_release_command(CountsReleaseRequest.of(args))


def counts_release_command(request: CountsReleaseRequest) -> int:
    """The counts statistic through the release flow: check, count, identity, spend then noise, PDF, bundle."""
    from dpgui.cli.release import _check_dataset_identity
    from dpgui.core.noise import SecureRandom
    from dpgui.report.keystore import load_secret_key
    from dpgui.workspace.counts import counts_plan, parse_categories, read_categories, release_counts_through
    from dpgui.workspace.flow import ReleaseFlow
    from dpgui.workspace.publishing import charge_text, check_bundle_target
    from dpgui.workspace.release import new_release_id
    from dpgui.workspace.statistics import statistic
    from dpgui.workspace.statistics.counts import CountsSpend

    spec = _source_spec(request.source)
    neighbours = Neighbours(_choose_neighbours(request.neighbours).neighbours or Neighbours.CHANGE)
    categories = (read_categories(request.categories_file) if request.categories_file is not None
                  else parse_categories(request.categories or ""))
    plan = counts_plan(categories, request.epsilon, neighbours, request.records_per_person)
    unit = privacy_unit_of(request.person_column, request.records_per_person, plan.privacy)  # before anything is read
    spend = CountsSpend(request.column, plan, unit)
    counts = statistic(StatisticKind.COUNTS)
    key = load_secret_key(Path(request.key), _passphrase(request.passphrase_file, False))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the PDF needs no screen
    from dpgui.pdf.sections import report_pdf

    release_id = new_release_id()  # known before the spend: an interruption can ask the ledger about it
    with ReleaseFlow.open(request.dataset) as flow, interrupt_names(release_id):
        done = release_counts_through(
            flow, lambda: _open_data(spec), spend, SecureRandom, release_id=release_id,
            identify=lambda columns, rows: _check_dataset_identity(flow, columns, rows, request.new_dataset))
        name = request.name or counts.bundle_name(done.release, done.info)

        def sign() -> Path:  # past the spend: a failure says that ε was spent (ReleaseFlow.write)
            check_bundle_target(request.bundle, name)
            pdf = report_pdf(StatisticKind.COUNTS, done.release, done.info, key.public_key.key_id_hex)
            return flow.sign(counts, request.bundle, name, done.release, done.info, pdf, key).manifest

        written = flow.write(plan, release_id, [("bundle", sign)], "sign the release again from the window's session "
                             "list, or release again once the problem is fixed")
    epsilon, delta, rho = plan.ledger_charge()
    if request.json:  # public values only: the released (noisy) counts, the plan's figures, the bundle
        _print({"kind": str(StatisticKind.COUNTS), "release_id": release_id, "dataset": request.dataset,
                "column": request.column, "categories": list(plan.categories),
                "released_count": done.release.counts.tolist(), "margin95": plan.margin, "std_error": plan.std_error,
                "charged": {"epsilon": epsilon, "delta": delta, "rho": rho}, "bundle": written["bundle"]}, True)
    else:
        print(f"released {counts.title} ({charge_text(plan)}), ledger release {release_id}; bundle {written['bundle']}")
        print(privacy_unit_text(request.person_column, request.records_per_person))
    return 0
