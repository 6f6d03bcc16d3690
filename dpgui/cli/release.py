"""``dpgui release`` (and ``dpgui quantiles``): an adapter of the release flow
(:class:`dpgui.workspace.flow.ReleaseFlow`): the options checked before anything is spent, the flow's
steps, the outputs written after the spend, and what is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpgui.cli.interrupt import interrupt_names
from dpgui.cli.keys import _passphrase
from dpgui.cli.planning import _focus_note, _make_plan, _note_delta_unused, _plan_json, _warn_before_spend
from dpgui.cli.rendering import _print, focus_text, privacy_unit_text
from dpgui.cli.requests import OutputRequest, QuantilesRequest, ReleaseRequest, privacy_unit_of
from dpgui.cli.sources import _check_data_columns, _open_data, _protected_paths, _source_spec
from dpgui.core.missing import MISSING_AUTO
from dpgui.errors import DpguiError, ParameterError
from dpgui.vocabulary import Noise, SourceKind

if TYPE_CHECKING:  # imported where used, so that the start-up stays light
    from dpgui.core.hierarchy import HierarchyPlan
    from dpgui.core.plan import Plan
    from dpgui.data.source import DataSource
    from dpgui.workspace.flow import ReleaseFlow


def _check_outputs(target: OutputRequest, protect: Sequence[str] = (), with_record: bool = False) -> None:
    """Every output target of a release, checked before anything is spent: --out (a new file in a
    writable folder, never the input, an existing file only with --force; ``with_record``: the same for
    the release record written beside it) and --bundle (a writable folder; with --name, none of the
    four files may exist). ``protect``: the data's own files (:func:`_protected_paths`)."""
    from dpgui.report.files import check_outside_input_folders, check_writable, same_file
    from dpgui.workspace.publishing import check_bundle_folder, check_bundle_target

    if target.out is not None:
        check_writable(target.out, protect=list(protect), overwrite=target.force)
        if with_record:  # and the release record beside it
            from dpgui.report.cdf.release_files import record_path

            check_writable(record_path(target.out), protect=list(protect), overwrite=target.force)
    if target.bundle is not None:
        check_outside_input_folders(target.bundle, protect)
        if target.name is None:
            check_bundle_folder(target.bundle)
        else:  # checks the folder too
            paths = check_bundle_target(target.bundle, target.name)
            if target.out is not None and any(same_file(Path(target.out), p) for p in paths.all()):
                raise ParameterError(f"--out {target.out} is one of the bundle's own files",
                                     "write --out elsewhere, or leave it out (the bundle holds the CSV)")
            for data in protect:
                if any(same_file(Path(data), p) for p in paths.all()):
                    raise ParameterError(f"the bundle would overwrite the input {data}", "choose another --name")


def cmd_release(args: argparse.Namespace) -> int:
    """``dpgui release``: an adapter of :func:`release_command`."""
    return release_command(ReleaseRequest.of(args))


def release_command(request: ReleaseRequest) -> int:
    """A CDF release through :class:`~dpgui.workspace.flow.ReleaseFlow`: every option and output checked,
    the plan made, the budget checked before the data is read, the spend, the outputs written, and what
    is printed (public values only)."""
    from contextlib import nullcontext

    from dpgui.core.noise import SecureRandom
    from dpgui.core.quantiles import quantiles
    from dpgui.data.binning import check_bounds
    from dpgui.data.readers import check_data_file
    from dpgui.report.cdf.csv_export import write_release_csv
    from dpgui.report.keystore import load_secret_key
    from dpgui.report.cdf.release_files import write_record
    from dpgui.workspace.flow import ReleaseFlow
    from dpgui.workspace.statistics.cdf import CDF, CdfSpend
    from dpgui.workspace.publishing import charge_text
    from dpgui.workspace.release import new_release_id

    # Everything that can fail is checked before the budget is spent, the source first (a mistyped
    # path or a password in a URL is reported as such, not as a dataset without a budget).
    spec = _source_spec(request.source)
    if spec.kind == SourceKind.FILE:
        check_data_file(spec.location)
    target, column, options = request.outputs, request.column, request.options
    dataset = _check_release_options(request.dataset, target)
    check_bounds(request.lower, request.upper)
    _check_outputs(target, _protected_paths(spec), with_record=True)
    planned = _make_plan(options, request.lower, request.upper, column)  # checks every limit of the noise sampler
    plan = planned.plan
    key = None
    if target.bundle is not None and target.key is not None:  # (--bundle without --key: refused above)
        key = load_secret_key(Path(target.key), _passphrase(target.passphrase_file, False))
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the PDF needs no screen
        from dpgui.pdf.sections import report_pdf
    with _open_data(spec) as source, ReleaseFlow.open(dataset) as flow:  # connected (password asked) before the ledger
        _check_data_columns(source, [column], numeric=True)
        # No refusal that depends on the values (e.g. all missing): that would itself be a release.
        whole = _whole_numbers(request.whole_numbers, column, source)  # public: the statement or the declared type
        spend = CdfSpend(column, request.lower, request.upper, options.bins, plan, request.consistency, MISSING_AUTO,
                         whole, privacy_unit_of(options.person_column, options.records_per_person))

        def counted(data: DataSource, hist: Any) -> None:
            _warn_before_spend(plan, hist.n_rows if plan.privacy.root_public else None, "release")  # N only if public
            _check_dataset_identity(flow, [c.name for c in data.columns()], hist.n_rows, request.new_dataset)

        release_id = new_release_id()  # known before the spend: an interruption asks the ledger about it
        with interrupt_names(release_id), _budget_words(dataset, plan.ledger_charge()):  # refused before reading
            done = flow.release(CDF, lambda: nullcontext(source), spend, SecureRandom, release_id=release_id,
                                checked=lambda _: _whole_number_note(whole, request), counted=counted)
        result, info = done.release, done.info

        def bundle() -> Path:
            assert key is not None and target.bundle is not None
            pdf = report_pdf(CDF.kind, result, info, key.public_key.key_id_hex)
            name = target.name or CDF.bundle_name(result, info)
            return flow.sign(CDF, target.bundle, name, result, info, pdf, key).manifest  # checks the ledger's record

        record = _release_record(request, plan, result, info, whole, planned.focus_offer)
        with interrupt_names(release_id):
            outputs = _write_outputs(target, plan, info.release_id, lambda out: write_release_csv(result, out),
                                     bundle if key is not None else None, record=lambda csv: write_record(csv, record))
    summary = {**record, "outputs": outputs,
               "quantiles": [_quantile_json(q) for q in quantiles(result, request.probabilities, whole is not None)]}
    if request.json:
        _print(summary, True)
    else:
        where = " and ".join(outputs.values())
        noise = f"{Noise(plan.noise).words} noise, " if options.delta_given else ""
        print(f"released {plan.shape.bins} cumulative counts to {where} "
              f"({charge_text(plan, with_rho=True)} from dataset {dataset!r}, {noise}{plan.privacy.neighbours} neighbours, "
              f"branching {plan.shape.label}; missing values: {summary['missing_values']['description']})")
        print(privacy_unit_text(options.person_column, options.records_per_person))
        if planned.focus_offer is not None:
            print(focus_text(planned.focus_offer).strip())
    _note_delta_unused(plan, "release")
    _focus_note(planned.focus_offer, "release")
    return 0


def _release_record(request: ReleaseRequest, plan: Plan, result: Any, info: Any, whole: Any,
                    focus_offer: dict[str, Any] | None) -> dict[str, Any]:
    """What ``release --json`` prints about a release (its outputs and quantiles aside), and what the
    release record beside ``--out`` holds (:mod:`dpgui.report.cdf.release_files`): public values only.
    ``whole``: the whole-number statement (public: the user's or the file's declared type), or None."""
    from dpgui.workspace.publishing import missing_values_json

    summary = _plan_json(plan, request.options.delta_given, focus_offer)
    summary.update({
        "dataset": request.dataset,
        "release_id": info.release_id,
        "consistency": request.consistency,
        "n_released": result.total,
        "n_public": plan.privacy.root_public,
        "missing_values": missing_values_json(result, info.missing),
        "secure_noise": result.secure,
        "projected": {"total_sq_error": float((result.std_error**2).sum()),
                      "max_variance": float((result.std_error**2).max())},
        "bounds": [request.lower, request.upper],
        "source": info.source,
    })
    if whole is not None:
        summary["whole_numbers"] = str(whole)
    return summary


def _check_release_options(dataset: str | None, target: OutputRequest) -> str:
    """``release`` and ``hierarchy release``: a dataset to charge and somewhere to write (before anything is
    read). Returns the dataset."""
    if dataset is None:
        raise ParameterError("--dataset is missing: the budget ledger adds up ε per dataset name, and a file name is "
                             "not one (a copy or a renamed file would get a fresh budget)",
                             "give --dataset ID, the same name for every file about these people "
                             "(see 'dpgui ledger show')")
    if target.out is None and target.bundle is None:
        raise ParameterError("nowhere to write the release", "give --bundle DIR --key NAME.key (signed) or --out OUT.csv")
    if target.bundle is not None and target.key is None:
        raise ParameterError("--bundle needs a signing key", "give --key NAME.key (create one with 'dpgui key create NAME')")
    if target.force and target.out is None:
        raise ParameterError("--force only applies to --out", "leave --force out (a bundle is never overwritten)")
    return dataset


def _write_outputs(target: OutputRequest, plan: Plan | HierarchyPlan, release_id: str,
                   write_csv: Callable[[str], Path], write_bundle: Callable[[], Path] | None,
                   prepare: Callable[[], None] | None = None,
                   record: Callable[[Path], Path] | None = None) -> dict[str, str]:
    """After the spend: ``prepare()`` (what the outputs need), ``--out`` (``write_csv(target.out)``, then
    ``record(csv)``: the release record beside it), then the signed bundle (``write_bundle()``, its
    manifest's path). Returns {"csv": …, "record": …, "bundle": …} as written; any failure says that the
    budget was spent, under which ledger id, and what was written (:meth:`ReleaseFlow.write`)."""
    from dpgui.workspace.flow import ReleaseFlow

    written: dict[str, Path] = {}

    def csv() -> Path | None:
        if prepare is not None:
            prepare()
        if target.out is None:
            return None
        written["csv"] = write_csv(target.out)
        return written["csv"]

    steps: list[tuple[str, Callable[[], Path | None]]] = [("csv", csv)]
    if record is not None:
        steps.append(("record", lambda: record(written["csv"]) if "csv" in written else None))
    if write_bundle is not None:
        steps.append(("bundle", write_bundle))
    return ReleaseFlow.write(plan, release_id, steps, "fix the folder and release again")


@contextmanager
def _budget_words(dataset: str, charge: tuple[float, float, float | None]) -> Iterator[None]:
    """The ledger's refusals of a release charging (ε, δ, ρ), in the CLI's words: a release with δ > 0 on a
    dataset whose cap has δ = 0 can never fit, and that refusal names the fix (raise the cap's δ, or Laplace
    noise); the others as the ledger says them."""
    import shlex

    from dpgui.workspace.flow import BudgetExceeded

    try:
        yield
    except BudgetExceeded as err:
        from dpgui.core.accounting import Shortfall

        if err.short_of is Shortfall.CAP_DELTA:  # the ledger's refusal, with the CLI's own fix
            delta = charge[1]
            raise ParameterError(
                f"dataset {dataset!r} has a cap with δ = 0 (pure ε-DP), and this release needs δ = {delta:g}",
                f"raise the cap's δ with `dpgui ledger cap {shlex.quote(dataset)} {err.totals.cap_epsilon:g} "
                f"--delta {delta:g} --reason TEXT`, or release with --noise laplace") from None
        raise


def _check_charge(flow: ReleaseFlow, charge: tuple[float, float, float | None]) -> None:
    """Would a release charging (ε, δ, ρ) (:meth:`HierarchyPlan.ledger_charge`) fit the dataset's cap? Raises
    the ledger's refusal in the CLI's words (:func:`_budget_words`), before any data is read."""
    with _budget_words(flow.dataset, charge):
        flow.check_charge(charge)


def _whole_numbers(stated: bool, column: str, source: Any) -> Any:
    """Why the released ``column`` is known to hold whole numbers (:class:`dpgui.core.quantiles.WholeNumbers`):
    ``--whole-numbers`` (``stated``: the officer's statement), else a file's declared integer type (Parquet,
    Stata, a published schema beside it); None. Public information only: never the cells."""
    from dpgui.core.quantiles import WholeNumbers

    if stated:
        return WholeNumbers.STATED
    if source.spec.kind != SourceKind.FILE:
        return None
    from dpgui.data.public_bounds import find_schema_for, whole_number_reason

    info = next((c for c in source.columns() if c.name == column), None)
    if info is None:
        return None
    path = Path(source.spec.location)
    reason = whole_number_reason(info, source.spec.public_record()["format"], find_schema_for(path))
    return WholeNumbers.TYPE if reason is not None else None


def _whole_number_note(whole: Any, request: ReleaseRequest) -> None:
    """A note on stderr when the column holds whole numbers but the bins are not centred on them: the
    options that centre them (:func:`dpgui.data.public_bounds.whole_number_bins`)."""
    if whole is None:
        return
    from dpgui.core.quantiles import whole_number_step
    from dpgui.data.public_bounds import whole_number_bins

    if whole_number_step(request.lower, request.upper, request.options.bins) is not None:
        return
    try:
        lower, upper, bins, step = whole_number_bins(request.lower, request.upper, request.options.bins)
    except DpguiError:
        return
    per = "each value in the middle of its own bin" if step == 1 else f"{step} whole numbers in each bin"
    print(f"dpgui release: note: '{request.column}' holds whole numbers ({whole.description}); bins centred on them "
          f"(--lower {lower:g} --upper {upper:g} --bins {bins}) would put {per} and give whole-number quantiles",
          file=sys.stderr)


def _quantile_json(q: Any) -> dict[str, Any]:
    """A quantile (dpgui.core.quantiles.Quantile) as JSON: every field it has, the 95 % interval included."""
    from dataclasses import asdict

    return asdict(q)


def _check_dataset_identity(flow: ReleaseFlow, columns: Sequence[str], n_rows: int, confirmed: bool) -> None:
    """The rule of docs/privacy-model.md, "Dataset identity" (:meth:`ReleaseFlow.identity`): a dataset name with no
    release yet whose file has the same column names and row count as another ledgered dataset is refused
    (exit 2) unless ``--new-dataset`` confirms it is different data. A new dataset confirmed so gets a warning
    on stderr that says nothing of the data (not whether its row count matched another's: under add/remove the
    row count is confidential, and stderr is published). The data's fingerprint (its ``columns``' names and
    ``n_rows``, from any source: file, database, Spark) is recorded under the dataset (local ledger only),
    before the spend (:meth:`ReleaseFlow.record`)."""
    from dpgui.workspace.flow import same_data_warning

    identity = flow.identity(columns, n_rows)  # the schema only
    dataset = flow.dataset
    if identity.may_be_renamed and not confirmed:
        raise ParameterError(same_data_warning(identity.similar, dataset),
                             f"if it is the same data, give --dataset {identity.similar[0]}; if it is different "
                             "data, add --new-dataset")
    if identity.is_new and confirmed:
        print(f"dpgui release: warning: {dataset!r} is released as a new dataset because --new-dataset was "
              "given; if it is a copy, a rename or a new version of a ledgered dataset, it now has a fresh "
              "budget", file=sys.stderr)
    flow.record(identity)


def cmd_quantiles(args: argparse.Namespace) -> int:
    """``dpgui quantiles``: an adapter of :func:`quantiles_command`."""
    return quantiles_command(QuantilesRequest.of(args))


def quantiles_command(request: QuantilesRequest) -> int:
    """The quantiles of a released CDF with their 95 % intervals, printed (nothing is spent)."""
    from dpgui.core.quantiles import quantiles
    from dpgui.report.cdf.release_files import read_release

    release, facts = read_release(request.release, request.plan)
    found = quantiles(release, request.probabilities, "whole_numbers" in facts)
    if request.json:
        _print({**facts, "quantiles": [_quantile_json(q) for q in found]}, True)
        return 0
    delta = f", δ = {facts['delta']:g}, {Noise(facts['noise']).words} noise" if facts["delta"] > 0 else ""
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
