"""``dpgui grouped release``: an adapter of the release flow (:class:`dpgui.workspace.flow.ReleaseFlow`) for the
CDF of a numeric column for each group of a public list (the grouped CDF statistic of the registry), from a
file, a database table or query, or Spark: the plan shared by every group, the budget checked before the data
is read, the histograms counted where the data lives, the dataset identity, the spend (the shared plan's
charge, once) then the noise, and the outputs — the CSV (``--out``) or the PDF and the signed bundle.
"""

from __future__ import annotations

import argparse
import os
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpgui.cli.arguments import _add_privacy_options, _add_source_options, _finite_float, _int_at_least, _Parser
from dpgui.cli.interrupt import interrupt_names
from dpgui.cli.keys import _passphrase
from dpgui.cli.rendering import _print, privacy_unit_text
from dpgui.cli.requests import NeighboursRequest, OutputRequest, SourceRequest, asked_neighbours, privacy_unit_of
from dpgui.cli.sources import _choose_neighbours, _open_data, _protected_paths, _source_spec
from dpgui.core.tree import MIN_BINS
from dpgui.vocabulary import CdfConsistency, Neighbours, StatisticKind, choices

#: ``--other``: what becomes of the rows of a group not in the list (stdlib only, so ``--help`` stays light).
OTHER_CHOICES = ("drop", "other")


@dataclass(frozen=True)
class GroupedReleaseRequest:
    """``dpgui grouped release``: the data, the numeric ``column`` and the ``group_column``, the public groups as
    typed (``--groups``) or the file that lists them (``--groups-file``), what becomes of the rows of other groups
    (``--other``), the public bounds and bins, ε and δ, the neighbour model asked for, the records one person
    contributes, the ledger's ``dataset`` and ``--new-dataset``, the outputs (``--out`` or the signed bundle) and
    the person-ID column (None: L declared)."""

    source: SourceRequest
    neighbours: NeighboursRequest
    column: str
    group_column: str
    groups: str | None
    groups_file: str | None
    other: str
    lower: float
    upper: float
    bins: int
    epsilon: float
    delta: float
    records_per_person: int
    consistency: CdfConsistency
    dataset: str | None
    new_dataset: bool
    outputs: OutputRequest
    json: bool
    person_column: str | None = None

    @classmethod
    def of(cls, args: argparse.Namespace) -> GroupedReleaseRequest:
        source = SourceRequest.of(args)
        return cls(source, NeighboursRequest(asked_neighbours(args), source), args.column, args.group_column,
                   args.groups, args.groups_file, args.other, args.lower, args.upper, args.bins, args.epsilon,
                   args.delta or 0.0, args.records_per_person, CdfConsistency(args.consistency), args.dataset,
                   bool(args.new_dataset), OutputRequest.of(args), bool(args.json), args.person_column)


def add_grouped_parser(sub: Any) -> None:
    """``dpgui grouped release INPUT --column C --group-column G (--groups A,B | --groups-file F) [--other
    drop|other] --lower A --upper B --bins K --epsilon E [--delta D] --dataset ID (--bundle DIR --key K | --out
    OUT.csv)`` on the CLI's subparsers ``sub`` (the data source and privacy options of every release)."""
    grouped = sub.add_parser("grouped", help="the CDF of a numeric column for each group of a public list")
    grouped_sub = grouped.add_subparsers(dest="grouped_command", parser_class=_Parser, metavar="{release}",
                                         required=True)
    rel = grouped_sub.add_parser("release", help="release each group's CDF and noisy size (spends ε once for all "
                                 "groups)")
    rel.add_argument("input", metavar="INPUT", nargs="?", help="the data: a file, or a database URL (then --table "
                     "or --query); or give it with --source")
    rel.add_argument("--source", "--input", dest="source", metavar="URL|FILE", help="the same as INPUT")
    _add_source_options(rel)
    rel.add_argument("--column", required=True, metavar="NAME", help="the numeric column")
    rel.add_argument("--group-column", required=True, metavar="NAME", help="the categorical column of the groups")
    listed = rel.add_mutually_exclusive_group(required=True)
    listed.add_argument("--groups", metavar="A,B,…", help="the public groups, comma-separated (stated, never read "
                        "from the data); a listed group absent from the data is released too (zeros plus noise)")
    listed.add_argument("--groups-file", metavar="FILE", help="a text file of the public groups, one a line")
    rel.add_argument("--other", choices=OTHER_CHOICES, default="drop",
                     help="the rows whose group is not listed (or missing): drop (default) them, or count them in one "
                          "more group 'other'")
    rel.add_argument("--lower", type=_finite_float, required=True, metavar="A", help="public lower bound")
    rel.add_argument("--upper", type=_finite_float, required=True, metavar="B", help="public upper bound (exclusive)")
    rel.add_argument("--bins", type=_int_at_least(MIN_BINS, "--bins 64"), required=True, metavar="K",
                     help="number of equal-width bins K (public), the same for every group")
    _add_privacy_options(rel, "δ > 0 lets the planner choose Gaussian noise when it is more accurate")
    rel.add_argument("--consistency", choices=choices(*CdfConsistency), default=str(CdfConsistency.L2))
    rel.add_argument("--dataset", metavar="ID", help="required: the budget ledger's name for the data")
    rel.add_argument("--new-dataset", action="store_true",
                     help="confirm that ID is different data even though it has the same column names and row count "
                          "as another dataset in the ledger (refused without it)")
    rel.add_argument("--out", metavar="OUT.csv", help="write the released CSV only (unsigned); never the input, and "
                     "an existing file only with --force")
    rel.add_argument("--force", action="store_true", help="let --out replace an existing file (never the input)")
    rel.add_argument("--bundle", metavar="DIR", help="write a signed bundle (CSV, PDF, manifest, signature) into DIR")
    rel.add_argument("--key", metavar="NAME.key", help="secret key that signs the bundle")
    rel.add_argument("--passphrase-file", metavar="F", help="file whose first line is the key's passphrase")
    rel.add_argument("--name", metavar="NAME", help="bundle file name stem (default: dataset-column-by-group-time-id)")
    rel.add_argument("--json", action="store_true", help="print what was released as JSON")


def cmd_grouped(args: argparse.Namespace) -> int:
    """``dpgui grouped release``: :func:`grouped_release_command` of the typed request."""
    return grouped_release_command(GroupedReleaseRequest.of(args))


def grouped_release_command(request: GroupedReleaseRequest) -> int:
    """The grouped CDF statistic through the release flow: every option and output checked, the groups and the
    shared plan made, the ledger's check before the data is read, the count, the identity, the spend (once)
    then the noise, the CSV or the PDF and the signed bundle, and what is printed (public values only)."""
    from dpgui.cli.release import _budget_words, _check_dataset_identity, _check_outputs, _check_release_options
    from dpgui.core.noise import SecureRandom
    from dpgui.core.plan import PrivacySpec
    from dpgui.data.binning import check_bounds
    from dpgui.report.files import write_text_atomic
    from dpgui.report.keystore import load_secret_key
    from dpgui.vocabulary import AUTO, Noise
    from dpgui.workspace.flow import ReleaseFlow
    from dpgui.workspace.grouped_cdf import parse_groups, read_groups, release_grouped_through
    from dpgui.workspace.publishing import charge_text, check_bundle_target
    from dpgui.workspace.release import new_release_id
    from dpgui.workspace.statistics.grouped_cdf import GROUPED_CDF, GroupedCdfPlanRequest, GroupedCdfSpend

    spec = _source_spec(request.source)
    target = request.outputs
    dataset = _check_release_options(request.dataset, target)
    check_bounds(request.lower, request.upper)
    _check_outputs(target, _protected_paths(spec))
    neighbours = Neighbours(_choose_neighbours(request.neighbours).neighbours or Neighbours.CHANGE)
    groups = (read_groups(request.groups_file, request.other) if request.groups_file is not None
              else parse_groups(request.groups or "", request.other))
    privacy = PrivacySpec(request.epsilon, neighbours, request.records_per_person, request.delta)
    unit = privacy_unit_of(request.person_column, request.records_per_person, privacy)  # before anything is read
    planned = GROUPED_CDF.plan(GroupedCdfPlanRequest(groups, request.bins, privacy,
                                                     AUTO if request.delta > 0 else Noise.LAPLACE))
    plan = planned.plan
    spend = GroupedCdfSpend(request.column, request.group_column, request.lower, request.upper, plan,
                            request.consistency, unit)
    key = None
    if target.bundle is not None and target.key is not None:  # (--bundle without --key: refused above)
        key = load_secret_key(Path(target.key), _passphrase(target.passphrase_file, False))
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the PDF needs no screen
        from dpgui.pdf.sections import report_pdf

    release_id = new_release_id()  # known before the spend: an interruption can ask the ledger about it
    with _open_data(spec) as source, ReleaseFlow.open(dataset) as flow:
        with interrupt_names(release_id), _budget_words(dataset, plan.ledger_charge()):  # refused before reading
            done = release_grouped_through(
                flow, lambda: nullcontext(source), spend, SecureRandom, release_id=release_id,
                identify=lambda columns, rows: _check_dataset_identity(flow, columns, rows, request.new_dataset))
        release, info = done.release, done.info

        def csv() -> Path | None:
            return None if target.out is None else write_text_atomic(target.out, GROUPED_CDF.csv_text(release))

        def bundle() -> Path | None:  # past the spend: a failure says that ε was spent (ReleaseFlow.write)
            if key is None or target.bundle is None:
                return None
            name = target.name or GROUPED_CDF.bundle_name(release, info)
            check_bundle_target(target.bundle, name)
            pdf = report_pdf(StatisticKind.GROUPED_CDF, release, info, key.public_key.key_id_hex)
            return flow.sign(GROUPED_CDF, target.bundle, name, release, info, pdf, key).manifest

        with interrupt_names(release_id):
            written = flow.write(plan, release_id, [("csv", csv), ("bundle", bundle)],
                                 "fix the folder and release again (a new release spends budget)")
    epsilon, delta, rho = plan.ledger_charge()
    if request.json:  # public values only: the released (noisy) sizes, the plan's figures, the outputs
        _print({"kind": str(StatisticKind.GROUPED_CDF), "release_id": release_id, "dataset": dataset,
                "column": request.column, "group_column": request.group_column, "groups": list(plan.labels),
                "other_groups": str(groups.other), "noise": str(plan.tree.noise), "bins": request.bins,
                "bounds": [request.lower, request.upper], "released_group_sizes": release.totals.tolist(),
                "margin95": planned.margin95, "charged": {"epsilon": epsilon, "delta": delta, "rho": rho},
                "outputs": written}, True)
    else:
        where = " and ".join(written.values())
        print(f"released the CDF of {request.column!r} for {len(plan.labels)} groups of {request.group_column!r} "
              f"({charge_text(plan)} once for all groups), ledger release {release_id}; written: {where}")
        print(privacy_unit_text(request.person_column, request.records_per_person))
    return 0
