"""``dpgui counts release``: an adapter of the release flow (:class:`dpgui.workspace.flow.ReleaseFlow`) for
the counts of the stated categories of one column of a file (the counts statistic of the registry): the
budget checked, the column counted, the spend then the noise, the PDF and the signed bundle.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from dpgui.vocabulary import Neighbours, choices

from dpgui.cli.keys import _passphrase
from dpgui.cli.sources import _open_data


def add_counts_parser(sub: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """``dpgui counts release FILE --column C --categories A,B --epsilon E --dataset ID --bundle DIR --key K``
    (``parser_class``: the CLI's parser, which words its errors)."""
    counts = sub.add_parser("counts", help="noisy counts of the stated categories of one column of a file")
    counts_sub = counts.add_subparsers(dest="counts_command", parser_class=parser_class, metavar="{release}", required=True)
    rel = counts_sub.add_parser("release", help="release the count of each category into a signed bundle (spends ε)")
    rel.add_argument("input", metavar="FILE", help="the data file")
    rel.add_argument("--column", required=True, metavar="NAME", help="the categorical column")
    rel.add_argument("--categories", required=True, metavar="A,B,…",
                     help="the public categories, comma-separated; other and missing values are counted in one more row")
    rel.add_argument("--epsilon", required=True, type=float, metavar="E", help="the privacy budget ε (pure ε-DP)")
    rel.add_argument("--neighbours", choices=choices(*Neighbours), default=None, help="change (default) or addremove")
    rel.add_argument("--dataset", required=True, metavar="ID", help="the budget ledger's name for the data")
    rel.add_argument("--bundle", required=True, metavar="DIR", help="write the signed bundle into DIR")
    rel.add_argument("--key", required=True, metavar="NAME.key", help="secret key that signs the bundle")
    rel.add_argument("--passphrase-file", metavar="F", help="file whose first line is the key's passphrase")
    rel.add_argument("--name", metavar="NAME", help="bundle file name stem (default: dataset-column-counts-id)")


def cmd_counts(args: argparse.Namespace) -> int:
    """The counts statistic through the release flow: check, count, spend then noise, PDF, signed bundle.
    Files only; the dataset-identity step of ``dpgui release`` is not run."""
    from dpgui.core.counts import CountsPlan
    from dpgui.core.noise import SecureRandom
    from dpgui.core.plan import PrivacySpec
    from dpgui.data.source import SourceSpec
    from dpgui.report.keystore import load_secret_key
    from dpgui.vocabulary import StatisticKind
    from dpgui.workspace.flow import ReleaseFlow
    from dpgui.workspace.publishing import charge_text, check_bundle_target
    from dpgui.workspace.statistics import statistic
    from dpgui.workspace.statistics.counts import CountsSpend

    counts = statistic(StatisticKind.COUNTS)
    categories = tuple(c.strip() for c in args.categories.split(","))
    plan = CountsPlan(categories, PrivacySpec(args.epsilon, Neighbours(args.neighbours or Neighbours.CHANGE)))
    spend = CountsSpend(args.column, plan)
    key = load_secret_key(Path(args.key), _passphrase(args.passphrase_file, False))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the PDF needs no screen
    from dpgui.pdf.counts import render_counts_pdf

    with ReleaseFlow.open(args.dataset) as flow:
        flow.check(plan)
        with _open_data(SourceSpec("file", args.input)) as data:
            true_counts = counts.count(data, spend)  # CONFIDENTIAL: into the release only
            record = data.public_record()
        release, info = flow.spend(counts, spend, true_counts, SecureRandom(), data_record=record)
        name = args.name or f"{args.dataset}-{args.column}-counts-{info.release_id[:8]}"
        check_bundle_target(args.bundle, name)
        paths = flow.sign(counts, args.bundle, name, release, info,
                          render_counts_pdf(release, info, key.public_key.key_id_hex), key)
    print(f"released {counts.title} ({charge_text(plan)}), ledger release {info.release_id}; bundle {paths.manifest}")
    return 0
