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
import os
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpgui.cli.arguments import _int_at_least, _Parser
from dpgui.cli.interrupt import interrupt_names
from dpgui.cli.keys import _passphrase
from dpgui.cli.rendering import _print
from dpgui.errors import DataError, ParameterError

__all__ = ["SPEC_WORDS", "PlanFileRequest", "cmd_plan_file", "spec_parser"]

#: The commands that take ``--spec``.
SPEC_WORDS = ("plan", "release", "simulate")


def spec_parser(arguments: Sequence[str]) -> argparse.ArgumentParser | None:
    """The parser of ``dpgui plan|release --spec F …`` when ``arguments`` ask for a plan file, else None
    (the command is the single statistic's)."""
    if not arguments or arguments[0] not in SPEC_WORDS or not any(
            a in ("--spec", "--like") or a.startswith(("--spec=", "--like=")) for a in arguments[1:]):
        return None
    parser = _Parser(prog="dpgui", description="A release plan: several statistics of one table under one budget.")
    parser.set_defaults(version=False, self_test=False)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="{plan,release,simulate}", required=True)
    plan = sub.add_parser("plan", help="a release plan's split of the budget and projected errors (spends nothing)")
    _common(plan)
    plan.add_argument("--weights", metavar="W1,W2,…", help="each statistic's weight, in the file's order (default: "
                      "the file's, else 1)")
    plan.add_argument("--write-spec", metavar="PLAN.toml", help="write the plan (e.g. one made --like a manifest) "
                      "as a plan file, never over an existing file")
    rel = sub.add_parser("release", help="release a plan with one ledger entry and one signed bundle (spends ε)")
    _common(rel)
    rel.add_argument("--bundle", required=True, metavar="DIR", help="write the plan's signed bundle into DIR")
    rel.add_argument("--key", required=True, metavar="NAME.key", help="secret key that signs the bundle")
    rel.add_argument("--passphrase-file", metavar="F", help="file whose first line is the key's passphrase")
    rel.add_argument("--name", metavar="NAME", help="bundle file name stem (default: dataset-plan-time-id)")
    rel.add_argument("--new-dataset", action="store_true",
                     help="confirm that the dataset is different data even though the source has the same column "
                          "names and row count as another dataset in the ledger")
    sim = sub.add_parser("simulate", help="seeded releases of a plan on the data, against each statistic's "
                                          "projection (insecure noise; spends nothing, writes nothing)")
    _common(sim)
    sim.add_argument("--trials", type=_int_at_least(2, "--trials 200", 100_000), default=200, metavar="R",
                     help="simulated releases of the plan (default 200)")
    sim.add_argument("--seed", type=_int_at_least(0, "--seed 1"), default=1, metavar="S")
    return parser


def _common(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--spec", metavar="PLAN.toml", help="the release plan file (docs/release-plans.md)")
    which.add_argument("--like", metavar="NAME.manifest.json",
                       help="a new plan like a signed release plan's: the same statistics, public parameters, weights "
                            "and privacy unit, on --source, charged to --dataset with a new --epsilon (needs --pubkey)")
    like = parser.add_argument_group("with --like")
    like.add_argument("--pubkey", metavar="KEY.pub", help="the public key the manifest was signed with (checked first)")
    like.add_argument("--source", metavar="URL|FILE", help="the new data")
    like.add_argument("--dataset", metavar="ID", help="the budget ledger's name for the new data")
    like.add_argument("--epsilon", type=float, metavar="E", help="the new plan's whole ε")
    like.add_argument("--delta", type=float, default=0.0, metavar="D", help="the new plan's whole δ (default 0)")
    parser.add_argument("--json", action="store_true", help="print JSON")


@dataclass(frozen=True)
class PlanFileRequest:
    """A plan-file command's options: the ``command`` word, the plan file, ``--json``, ``--weights``, and for
    ``release`` where the bundle goes and what signs it, and ``--new-dataset``."""

    command: str
    spec: str | None
    json: bool = False
    weights: str | None = None
    bundle: str | None = None
    key: str | None = None
    passphrase_file: str | None = None
    name: str | None = None
    new_dataset: bool = False
    trials: int = 200
    seed: int = 1
    like: str | None = None
    pubkey: str | None = None
    source: str | None = None
    dataset: str | None = None
    epsilon: float | None = None
    delta: float = 0.0
    write_spec: str | None = None

    @classmethod
    def of(cls, args: argparse.Namespace) -> PlanFileRequest:
        return cls(args.command, args.spec, args.json, getattr(args, "weights", None), getattr(args, "bundle", None),
                   getattr(args, "key", None), getattr(args, "passphrase_file", None), getattr(args, "name", None),
                   getattr(args, "new_dataset", False), getattr(args, "trials", 200), getattr(args, "seed", 1),
                   args.like, args.pubkey, args.source, args.dataset, args.epsilon, args.delta,
                   getattr(args, "write_spec", None))


def cmd_plan_file(args: argparse.Namespace) -> int:
    """Run the parsed plan-file command; DpguiErrors propagate to :func:`dpgui.cli.main`'s one line."""
    from dpgui.workspace.plan_spec import PlanSpec

    request = PlanFileRequest.of(args)
    spec = _like(request) if request.like is not None else PlanSpec.read(str(request.spec))
    if request.write_spec is not None:
        from dpgui.report.files import write_text_atomic

        if Path(request.write_spec).exists():
            raise ParameterError(f"{request.write_spec} already exists", "give a new file name for the plan")
        write_text_atomic(request.write_spec, spec.to_toml())
    if request.command == "plan":
        return _plan(spec, request)
    if request.command == "simulate":
        return _simulate(spec, request)
    if request.command == "release":
        return _release(spec, request)
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
        items = [PlanItem(replace(i.part, weight=w), i.spend_of, i.subject, {**i.settings, "weight": w})
                 for i, w in zip(items, weights)]
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
    sensitivity = spec.privacy.spec().sensitivity  # the same for every part: one level of its noised counts
    summary = {"dataset": spec.dataset, "epsilon": spec.epsilon, "delta": spec.delta, "split": str(split.chosen),
               "privacy_unit": spec.unit_words(),
               "sensitivity_per_level": {"l1": sensitivity.l1, "l2_squared": sensitivity.l2_squared},
               "weighted_margin95": split.weighted_margin, "equal_split_weighted_margin95": split.equal.weighted_margin,
               "charged": {"epsilon": split.charge.epsilon, "delta": split.charge.delta, "rho": split.charge.rho},
               "parts": rows}
    if request.json:
        _print(summary, True)
        return 0
    from dpgui.core.accounting import Accounting

    unit = "ρ" if split.split.accounting is Accounting.ZCDP else "ε"
    print(f"release plan of {len(items)} statistics on dataset {spec.dataset!r}, ε = {spec.epsilon:g}"
          + (f", δ = {spec.delta:g}" if spec.delta > 0 else "") + " (95 % margins in records):")
    for row, used in zip(rows, split.parts):
        print(f"  {row['part']}. {row['statistic']} (weight {row['weight']:g}): {unit} = {used.budget:.4g}, margin "
              f"± {row['margin95']:,.1f}; equal split: {unit} = {row['equal_split']['budget']:.4g}, margin "
              f"± {row['equal_split']['margin95']:,.1f}")
    print(f"{spec.unit_words()}; one person moves each level of every statistic's noised counts by at most "
          f"{sensitivity.l1:,} in L1 ({sensitivity.l2_squared:,} in squared L2), and the statistics' budgets add up")
    print(f"weighted sum of margins: {split.weighted_margin:,.1f} with the {split.chosen} split, "
          f"{split.equal.weighted_margin:,.1f} with the equal split; nothing was spent")
    return 0


def _release(spec: Any, request: PlanFileRequest) -> int:
    from dpgui.cli.release import _check_dataset_identity
    from dpgui.core.noise import SecureRandom
    from dpgui.report.keystore import load_secret_key
    from dpgui.workspace.flow import ReleaseFlow
    from dpgui.workspace.publishing import check_bundle_folder
    from dpgui.workspace.release import new_release_id
    from dpgui.workspace.release_plan import check_whole_budget, plan_summary, release_plan, sign_plan

    folder, key_path = request.bundle, request.key
    assert folder is not None and key_path is not None  # the release parser requires both
    check_bundle_folder(folder)
    key = load_secret_key(Path(key_path), _passphrase(request.passphrase_file, False))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the PDF needs no screen
    from dpgui.pdf.plan import plan_report_pdf

    plan_id = new_release_id()  # known before the spend: an interruption can ask the ledger about it
    with ReleaseFlow.open(spec.dataset) as flow:
        check_whole_budget(flow.ledger, spec.dataset, spec.epsilon, spec.delta, spec.titles(),
                           [p.lock for p in spec.parts])  # before anything is read
        with _open(spec) as data:
            items, split = _planned(spec, data)
            with interrupt_names(plan_id):
                released = release_plan(
                    flow.ledger, spec.dataset, items, split, lambda: nullcontext(data), SecureRandom,
                    epsilon=spec.epsilon, delta=spec.delta, plan_id=plan_id,
                    counted=lambda source, counts: _check_dataset_identity(
                        flow, [c.name for c in source.columns()], source.row_count(), request.new_dataset))
        summary = plan_summary(released, spec.epsilon, spec.delta, spec.unit_words(), spec.unit)
        name = request.name or f"{spec.dataset}-plan-{released.created_utc:%Y%m%dT%H%M%SZ}-{plan_id[:8]}"

        def bundle() -> Path | None:  # past the spend: a failure says that ε was spent (ReleaseFlow.write)
            pdf = plan_report_pdf(released, summary, key.public_key.key_id_hex, name)
            return sign_plan(flow.ledger, released, summary, folder, name, pdf, key).manifest

        with interrupt_names(plan_id):
            written = flow.write(split.charge, plan_id, [("bundle", bundle)],
                                 "fix the folder; the plan's budget is spent (a new release spends again)")
    rows = _split_rows(items, split)
    if request.json:
        _print({"kind": "plan", "release_id": plan_id, "dataset": spec.dataset, "split": str(split.chosen),
                "parts": [{**row, "release_id": part.release_id} for row, part in zip(rows, released.parts)],
                "outputs": written}, True)
    else:
        print(f"released the plan of {len(items)} statistics on dataset {spec.dataset!r} "
              f"(ε = {split.charge.epsilon:.6g} in one ledger entry, release {plan_id}); written: {written['bundle']}")
    return 0


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


def _like(request: PlanFileRequest) -> Any:
    """The plan made like the signed plan manifest ``--like`` (its signature and files checked first with
    ``--pubkey``) on ``--source``, charged to ``--dataset`` with the new ``--epsilon`` (and ``--delta``)."""
    from dpgui.formatting import printable_text
    from dpgui.report.keystore import load_public_key
    from dpgui.workspace.plan_spec import PlanSpec
    from dpgui.workspace.statistics import verify

    missing = [f"--{name}" for name, value in (("pubkey", request.pubkey), ("source", request.source),
                                                ("dataset", request.dataset), ("epsilon", request.epsilon))
               if value is None]
    if missing:
        raise ParameterError(f"--like needs {', '.join(missing)}", "give the signer's public key, the new data, "
                             "the ledger's name for it and the new plan's ε")
    assert request.like is not None and request.pubkey is not None and request.epsilon is not None
    verification = verify(request.like, load_public_key(Path(request.pubkey)))
    if not verification.ok or verification.manifest is None:
        raise DataError(f"the manifest {Path(request.like).name} does not verify: "
                        f"{printable_text(verification.failure or '')}",
                        "give the signed manifest of last release's bundle, with its signer's public key")
    return PlanSpec.like(verification.manifest, str(request.dataset), str(request.source), request.epsilon,
                         request.delta)
