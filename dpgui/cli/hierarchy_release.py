"""``dpgui hierarchy release``: an adapter of the release flow (:class:`dpgui.workspace.flow.ReleaseFlow`)
for counts over a hierarchy: the options checked before anything is spent, the public prior read, the
flow's steps, the outputs written after the spend, and what is printed.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpgui.cli.hierarchy import (
    NODE_LIST_PRIOR_ONLY, _hierarchy_errors, _hierarchy_plan_json, _hierarchy_tree, check_hierarchy_delta,
    hierarchy_plan, hierarchy_privacy, plan_needs_counts,
)
from dpgui.cli.interrupt import interrupt_names
from dpgui.cli.keys import _passphrase
from dpgui.cli.release import (
    _budget_words, _check_charge, _check_dataset_identity, _check_outputs, _check_release_options, _write_outputs,
)
from dpgui.cli.rendering import _note_lines, _print, privacy_unit_text
from dpgui.cli.requests import HierarchyOptions, HierarchyReleaseRequest, privacy_unit_of
from dpgui.cli.sources import _check_data_columns, _open_data, _protected_paths, _source_spec
from dpgui.errors import DataError, ParameterError
from dpgui.vocabulary import Allocation, Noise, PriorSource, SourceKind

if TYPE_CHECKING:  # imported where used, so that the start-up stays light
    from dpgui.core.hierarchy import Hierarchy, HierarchyPlan
    from dpgui.data.hierarchy import PathCounts
    from dpgui.data.source import DataSource
    from dpgui.data.source_spec import SourceSpec
    from dpgui.workspace.flow import ReleaseFlow


def _provisional_charges(options: HierarchyOptions) -> tuple[tuple[float, float, float | None], ...]:
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
    privacy = hierarchy_privacy(options)
    laplace = (privacy.epsilon, 0.0, privacy.epsilon**2 / 2.0)
    if privacy.rho is None or options.noise == Noise.LAPLACE:  # δ = 0: Laplace (other noises are refused earlier)
        return (laplace,)
    gaussian = (privacy.epsilon, privacy.delta, privacy.rho)
    multiplicative = (privacy.epsilon, privacy.delta, None)
    if options.noise == Noise.GAUSSIAN:
        return (gaussian,)
    if options.noise == Noise.MULTIPLICATIVE:
        return (multiplicative,)
    return (laplace, gaussian) + ((multiplicative,) if options.alpha is not None else ())


def _check_provisional_charge(flow: ReleaseFlow, charges: Sequence[tuple[float, float, float | None]]) -> None:
    """The ledger check before the data is read: passes if one of ``charges`` (:func:`_provisional_charges`)
    fits the dataset's cap; otherwise raises the refusal of the first. No cap: refused at once."""
    flow.check_any(charges, lambda charge: _check_charge(flow, charge))


def _check_categories_declared(request: HierarchyReleaseRequest) -> None:
    """Without ``--prior`` a release publishes the data's own categories as its node list, which
    differential privacy does not cover: the user must declare them public (``--categories-public``)."""
    if request.options.prior is None and not request.categories_public:
        raise ParameterError("without --prior the release publishes the data's own categories as the node list, and "
                             "they were not declared public (a rare category reveals that someone is in it; "
                             "differential privacy does not cover the node list)",
                             "give --categories-public if they are public (e.g. an official list), or --prior "
                             "PRIOR.csv with a public list of the categories")


def _check_out_is_not_the_prior(out: str | None, prior: str | None) -> None:
    """``--out`` never replaces the ``--prior`` file, not even with ``--force``, nor through another path or
    a (symbolic or hard) link: the same-file check :func:`_check_outputs` applies to the input."""
    from dpgui.report.files import same_file

    if out is not None and prior is not None and same_file(Path(out), Path(prior)):
        raise DataError(f"output {out} is the prior file {prior}",
                        "choose another output file name; dpgui never overwrites its input or its prior")


@dataclass(frozen=True, eq=False)
class PublicPrior:
    """What a release takes from ``--prior`` before the ledger is asked (public): the tree (the node list),
    its level counts for the optimiser, the file's name and SHA-256 (of the bytes the plan used), its notes,
    the plan made on it, and its path counts (to refuse the data given as its own prior)."""

    hierarchy: Hierarchy
    levels: tuple[np.ndarray, ...]
    name: str
    sha256: str
    notes: tuple[str, ...]
    plan: HierarchyPlan
    counts: PathCounts


def _read_public_prior(options: HierarchyOptions, prior_file: str) -> PublicPrior:
    """``prior_file`` (``--prior``), hashed before and after it is read (the recorded hash is of the bytes the plan used),
    and the whole plan made on it, before the data is read."""
    from dpgui.data.hierarchy import read_prior
    from dpgui.report.files import sha256_regular_file

    sha256 = sha256_regular_file(prior_file, "prior file")
    prior = read_prior(prior_file, options.levels)
    if sha256_regular_file(prior_file, "prior file") != sha256:
        raise DataError(f"the prior file {prior_file} changed while it was read",
                        "release again when the file is complete")
    hierarchy, prior_leaves = _hierarchy_tree(prior)
    levels = hierarchy.aggregate(prior_leaves)
    plan = hierarchy_plan(options, hierarchy, levels, PriorSource.FILE)
    return PublicPrior(hierarchy, levels, Path(prior_file).name, sha256, tuple(prior.notes), plan, prior)


def _check_hierarchy_release_options(request: HierarchyReleaseRequest) -> tuple[SourceSpec, str, tuple[str, ...]]:
    """Everything that can be checked before the data or the ledger (cmd_release's order), the declaration
    of the node list first: the source, the options, the outputs. Returns the source, the dataset and the
    notes of unused options."""
    from dpgui.data.readers import check_data_file

    options = request.options
    _check_categories_declared(request)
    spec = _source_spec(options.source)
    if spec.kind == SourceKind.FILE:
        check_data_file(spec.location)
    protect = _protected_paths(spec)
    dataset = _check_release_options(request.dataset, request.outputs)
    unused = check_hierarchy_delta(options.noise, options.delta_or_zero, options.alpha)
    if options.prior is not None and options.counts_from_data:
        raise ParameterError("--counts-from-data and --prior both give the optimiser its counts",
                             "leave out one: --prior (public counts) or --counts-from-data (the data's own counts)")
    _check_out_is_not_the_prior(request.outputs.out, options.prior)
    _check_outputs(request.outputs, protect)
    return spec, dataset, unused


def _plan_on_the_data(options: HierarchyOptions, flow: ReleaseFlow, source: DataSource, prior: PublicPrior | None
                      ) -> tuple[Hierarchy, HierarchyPlan, tuple[str, ...]]:
    """The tree, the plan and the notes of a release, from the data's paths read for the plan
    (:meth:`ReleaseFlow.read_paths`; CONFIDENTIAL, never released: the release counts again through the
    flow, on the tree the plan was made for). Without ``--prior`` the data's categories are the node list
    (declared public) and, with ``--counts-from-data``, its counts the optimiser's; with it, the data as its
    own "public" prior (a copy, a re-export) is refused before the spend. O(rows)."""
    from dpgui.data.hierarchy import check_prior_is_not_the_data

    data = flow.read_paths(source, options.levels)
    notes = tuple(dict.fromkeys((prior.notes if prior else ()) + tuple(data.notes)))
    if prior is not None:
        check_prior_is_not_the_data(prior.counts, data, prior.name)
        return prior.hierarchy, prior.plan, notes
    hierarchy, leaves = _hierarchy_tree(data)
    prior_levels = hierarchy.aggregate(leaves) if options.counts_from_data else None
    plan = hierarchy_plan(options, hierarchy, prior_levels, PriorSource.CONFIDENTIAL if options.counts_from_data
                          else PriorSource.NONE, int(leaves.sum()))
    return hierarchy, plan, notes


def cmd_hierarchy_release(args: argparse.Namespace) -> int:
    """``dpgui hierarchy release``: an adapter of :func:`hierarchy_release_command`."""
    return hierarchy_release_command(HierarchyReleaseRequest.of(args))


def hierarchy_release_command(request: HierarchyReleaseRequest) -> int:
    """Counts over a hierarchy released through the release flow (``ReleaseFlow.release(HIERARCHY, …)``):
    the options checked, the public prior read and the ledger asked before the data is read; the spend, then
    the outputs; what is printed (public values only: the data's paths read for the plan stay inside)."""
    from contextlib import nullcontext

    from dpgui.core.noise import SecureRandom
    from dpgui.report.keystore import load_secret_key
    from dpgui.workspace.flow import ReleaseFlow
    from dpgui.workspace.statistics.hierarchy import HIERARCHY, HierarchySpend
    from dpgui.workspace.publishing import write_hierarchy_csv
    from dpgui.workspace.release import new_release_id

    options, target = request.options, request.outputs
    spec, dataset, unused = _check_hierarchy_release_options(request)
    # The public prior: the node list and the optimiser's counts, read before the ledger is asked.
    prior = _read_public_prior(options, options.prior) if options.prior is not None else None
    if prior is None and options.allocation != Allocation.UNIFORM and not options.counts_from_data:
        plan_needs_counts(options.allocation, options.target)
    key = None
    if target.bundle is not None and target.key is not None:  # (--bundle without --key: refused above)
        key = load_secret_key(Path(target.key), _passphrase(target.passphrase_file, False))
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the PDF needs no screen
        from dpgui.pdf.sections import report_pdf
    with _open_data(spec) as source, ReleaseFlow.open(dataset) as flow:  # connected (password asked) first
        _check_data_columns(source, options.levels, numeric=False)
        # No cap, or too little left: refused before the data is read (with the exact plan when the
        # prior gives it, else unless one of the charges the options can lead to fits).
        if prior is not None:
            _check_charge(flow, prior.plan.ledger_charge())
        else:
            _check_provisional_charge(flow, _provisional_charges(options))
        hierarchy, plan, notes = _plan_on_the_data(options, flow, source, prior)
        release_id = new_release_id()  # known before the spend: an interruption can ask the ledger about it
        spend = HierarchySpend(hierarchy, plan, prior is not None, options.counts_from_data,
                               prior.name if prior else None, prior.sha256 if prior else None, notes,
                               privacy_unit_of(options.person_column, options.records_per_person))

        def counted(counted_source: DataSource, leaf_counts: np.ndarray) -> None:
            _check_dataset_identity(flow, [c.name for c in counted_source.columns()], int(leaf_counts.sum()),
                                    request.new_dataset)

        with interrupt_names(release_id), _budget_words(dataset, plan.ledger_charge()):  # the exact charge
            done = flow.release(HIERARCHY, lambda: nullcontext(source), spend, SecureRandom, release_id=release_id,
                                counted=counted)
        result, info = done.release, done.info
        with interrupt_names(release_id):
            # The projection published with the release: the plan's stated errors (those `hierarchy plan` and
            # the window state) at the prior's counts, else at the plan's assumed records, else the noise's
            # alone — never at the confidential counts. Past the spend, so it runs inside _write_outputs: its
            # failure too says that ε was spent.
            projected: dict[str, Any] = {}
            warnings: list[str] = []

            def project() -> None:
                figures, said = _hierarchy_errors(plan, hierarchy, prior.levels if prior else None,
                                                  "the prior's counts")
                projected.update(figures)
                warnings.extend(said)

            def bundle() -> Path:
                assert key is not None and target.bundle is not None
                pdf = report_pdf(HIERARCHY.kind, result, info, key.public_key.key_id_hex, projected)
                name = target.name or HIERARCHY.bundle_name(result, info)
                return flow.sign(HIERARCHY, target.bundle, name, result, info, pdf, key, projected).manifest

            outputs = _write_outputs(target, plan, info.release_id, lambda out: write_hierarchy_csv(result, out),
                                     bundle if key is not None else None, prepare=project)
    _print_hierarchy_release(request, plan, hierarchy, result, info, outputs, projected, warnings, notes + unused)
    return 0


def _print_hierarchy_release(request: HierarchyReleaseRequest, plan: HierarchyPlan, hierarchy: Hierarchy,
                             result: Any, info: Any, outputs: dict[str, str], projected: dict[str, Any],
                             warnings: list[str], notes: tuple[str, ...]) -> None:
    """What ``hierarchy release`` prints (public values only): the JSON summary, or one line; then its notes."""
    from dpgui.workspace.publishing import charge_text

    node_list = NODE_LIST_PRIOR_ONLY if request.options.prior is not None else (
        "data (declared public with --categories-public: its categories are published as the node list)")
    summary = _hierarchy_plan_json(plan, hierarchy, node_list, projected, notes)
    summary["warnings"] = warnings
    summary.update({
        "outputs": outputs,
        "dataset": request.dataset,
        "release_id": info.release_id,
        "secure_noise": info.secure,
        "n_released": int(np.asarray(result.counts[0])[0]),
        "n_public": bool(plan.privacy.root_public),
        "source": info.source,
    })
    if request.options.json:
        _print(summary, True)
    else:
        print(f"released {hierarchy.n_nodes:,} node counts over {' > '.join(hierarchy.level_names)} to "
              f"{' and '.join(outputs.values())} ({charge_text(plan, with_rho=True)} from dataset {request.dataset!r}, "
              f"{plan.noise} noise, {plan.privacy.neighbours} neighbours, {plan.consistency} consistency; node list: "
              f"{node_list})")
        print(privacy_unit_text(request.options.person_column, request.options.records_per_person))
    _note_lines("release", summary["notes"])
