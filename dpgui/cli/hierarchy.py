"""``dpgui hierarchy plan`` and ``dpgui hierarchy simulate``, and what ``hierarchy release`` shares with them:
the hierarchy of a prior file or of the data, its plan (:func:`dpgui.core.hierarchy.plan_hierarchy`) and
its stated errors.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dpgui.cli.rendering import _note_lines, _print, hierarchy_plan_text, privacy_unit_text
from dpgui.cli.requests import HierarchyOptions, HierarchySimulateRequest, privacy_unit_of
from dpgui.cli.sources import _check_data_columns, _check_no_source_options, _has_source, _open_data, _source_spec
from dpgui.errors import ParameterError
from dpgui.vocabulary import Allocation, Neighbours, Noise, PriorSource

if TYPE_CHECKING:  # imported where used, so that the start-up stays light
    from dpgui.core.hierarchy import Hierarchy, HierarchyPlan
    from dpgui.data.hierarchy import PathCounts


NODE_LIST_PRIOR_ONLY = "prior file"  # = report.hierarchy_bundle.NODE_LIST_FROM_PRIOR (not imported: --help stays light)
NODE_LIST_DATA_ONLY = ("data: the file was read for the node list only (its categories are published); "
                       "its counts were not used")
NODE_LIST_DATA_SIMULATED = ("data: the file was read for the node list and for the true counts of the simulated "
                            "releases; the optimiser did not use its counts")
NODE_LIST_DATA_COUNTS = ("data: the file was read for the node list and, with --counts-from-data, for the counts "
                         "the optimiser uses")


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


def hierarchy_privacy(options: HierarchyOptions) -> Any:
    """The :class:`~dpgui.core.plan.PrivacySpec` of the options: ε, the neighbour model, records per person, δ;
    with ``--person-column``, checked against its privacy unit (addremove, the same L) before anything is read."""
    from dpgui.core.plan import PrivacySpec

    privacy = PrivacySpec(options.epsilon, options.neighbours, options.records_per_person, options.delta_or_zero)
    privacy_unit_of(options.person_column, options.records_per_person, privacy)
    return privacy


def _assumed_records(options: HierarchyOptions, rows: int | None) -> int | None:
    """The records a plan without ``--prior`` projects its errors at: ``--n``, else under change the data's
    row count ``rows`` (N is public and published exactly), else None (add/remove: N is private)."""
    if options.prior is not None:
        return None
    if options.n is not None:
        return int(options.n)
    return rows if options.neighbours == Neighbours.CHANGE and rows else None


NO_RECORDS_NOTE = ("the errors are the noise's alone (no counts): give --n, a published estimate of the number of "
                   "records, or --prior, to see how useful small counts will be")


def hierarchy_plan(options: HierarchyOptions, hierarchy: Hierarchy, prior_levels: tuple[np.ndarray, ...] | None,
                   prior_source: str, rows: int | None = None) -> HierarchyPlan:
    """The plan of the command's options for ``hierarchy`` (its level sizes only: public; ``rows``: the
    data's N, used under change only, where it is public)."""
    from dpgui.core.hierarchy import plan_hierarchy

    if options.allocation != Allocation.UNIFORM and prior_levels is None:
        plan_needs_counts(options.allocation, options.target)
    return plan_hierarchy(hierarchy.level_sizes, hierarchy_privacy(options), noise=options.noise,
                          allocation=options.allocation, weights=options.weights, target_mse=options.target,
                          consistency=options.consistency, prior_levels=prior_levels, prior_source=prior_source,
                          hierarchy=hierarchy, alpha=options.alpha, assumed_records=_assumed_records(options, rows))


def _alpha_mrmse_json(options: HierarchyOptions, hierarchy: Hierarchy,
                      prior_levels: Sequence[np.ndarray] | None) -> dict[str, Any] | None:
    """With ``--alpha`` and δ > 0: Ghazi et al.'s (2023) projected α-mRMSE (records; per level and the maximum) of the
    multiplicative mechanism and of the Gaussian baseline side by side, and the one recommended."""
    if options.alpha is None or not options.delta_or_zero > 0:
        return None
    from dpgui.core.counting_trees_accuracy import recommend_alpha_mechanism

    choice, gaussian, multiplicative = recommend_alpha_mechanism(hierarchy.level_sizes, hierarchy_privacy(options),
                                                                 options.alpha, prior_levels)

    def figures(projection: Any) -> dict[str, Any]:
        return {"alpha_mrmse": float(projection.alpha_mrmse), "method": projection.method,
                "levels": [{"level": int(f.level), "nodes": int(f.nodes), "alpha_rmse": float(f.alpha_rmse)}
                           for f in projection.levels]}

    return {"alpha": options.alpha, "recommended": choice, "gaussian": figures(gaussian),
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
    from dpgui.workspace.publishing import errors_json

    errors = plan_errors(plan, hierarchy, levels, counts)
    warnings = errors.warnings(hierarchy.level_names) if errors.counts is not None else (NO_RECORDS_NOTE,)
    return errors_json(errors), warnings


def _budget_unit(plan: HierarchyPlan) -> str | None:
    return {Noise.LAPLACE: "epsilon", Noise.GAUSSIAN: "rho"}.get(Noise(plan.noise))


def _hierarchy_plan_json(plan: HierarchyPlan, hierarchy: Hierarchy, node_list: str, projection: dict[str, Any],
                         notes: Sequence[str]) -> dict[str, Any]:
    """What ``plan``/``release --json`` print about the plan: the levels, the node list's source, the
    level budgets (ε_ℓ for Laplace, ρ_ℓ for Gaussian, root first; the root's is 0 under change), the
    charge, and the projected bias², variance and MSE per level (sums over the level's nodes)."""
    from dpgui.workspace.publishing import charge_json

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


def _hierarchy_sources(options: HierarchyOptions, counting: bool) -> tuple[Hierarchy, Any, np.ndarray | None, str, str,
                                                                          tuple[str, ...], int | None]:
    """For ``plan`` and ``simulate``: the hierarchy, its prior levels (or None), the truth's leaf counts
    (``counting``: simulate needs them), the node list's and the counts' sources and notes, and the data's
    row count N (None with --prior; used only where N is public, under change)."""
    from dpgui.data.hierarchy import read_prior

    if options.prior is not None:
        if options.counts_from_data:
            raise ParameterError("--counts-from-data needs --input (the data), not --prior",
                                 "leave out --counts-from-data: the prior's counts are used")
        _check_no_source_options(options.source, "--prior")
        prior = read_prior(options.prior, options.levels)
        hierarchy, leaves = _hierarchy_tree(prior)
        return (hierarchy, hierarchy.aggregate(leaves), leaves, NODE_LIST_PRIOR_ONLY, PriorSource.FILE, tuple(prior.notes),
                None)
    if not _has_source(options.source):
        raise ParameterError("no data and no prior were given",
                             "give --source URL|FILE (the data) or --prior PRIOR.csv (public counts)")
    with _open_data(_source_spec(options.source)) as source:
        _check_data_columns(source, options.levels, numeric=False)
        data = source.path_counts(options.levels)
    hierarchy, leaves = _hierarchy_tree(data)
    rows = int(leaves.sum())
    if options.counts_from_data:
        return (hierarchy, hierarchy.aggregate(leaves), leaves, NODE_LIST_DATA_COUNTS, PriorSource.CONFIDENTIAL,
                tuple(data.notes), rows)
    return hierarchy, None, leaves if counting else None, NODE_LIST_DATA_ONLY, PriorSource.NONE, tuple(data.notes), rows


ALPHA_UNUSED = "α is used only with δ > 0 (the mechanisms of Ghazi et al. 2023 need (ε, δ))"


def check_hierarchy_delta(noise: str, delta: float, alpha: float | None) -> tuple[str, ...]:
    """Before anything is read: ``--noise multiplicative`` without ``--alpha``, and ``--noise
    gaussian|multiplicative`` with δ = 0 (both are (ε, δ)-DP), are refused; ``--alpha`` with δ = 0 is
    unused, and the returned note says so (printed with the others)."""
    if noise == Noise.MULTIPLICATIVE and alpha is None:
        raise ParameterError("--noise multiplicative needs --alpha, the multiplicative error of Ghazi et al. 2023",
                             "give --alpha A with 0 < A < 1, e.g. --alpha 0.5")
    if delta > 0:
        return ()
    if noise in (Noise.GAUSSIAN, Noise.MULTIPLICATIVE):
        raise ParameterError(f"--noise {noise} needs δ > 0 (it is (ε, δ)-DP)",
                             "give --delta D, e.g. --delta 1e-9, or choose --noise laplace")
    return (ALPHA_UNUSED,) if alpha is not None else ()


def _projection_counts_text(prior_source: str) -> str:
    from dpgui.core.hierarchy import counts_words

    return counts_words(prior_source) or "no counts"


def cmd_hierarchy_plan(args: argparse.Namespace) -> int:
    """``dpgui hierarchy plan``: an adapter of :func:`hierarchy_plan_command`."""
    return hierarchy_plan_command(HierarchyOptions.of(args))


def hierarchy_plan_command(options: HierarchyOptions) -> int:
    """A hierarchy's plan with its stated errors, printed (nothing is spent; the data is read for its node
    list, and for its counts only with ``--counts-from-data``)."""
    unused = check_hierarchy_delta(options.noise, options.delta_or_zero, options.alpha)
    hierarchy, prior_levels, _, node_list, prior_source, notes, rows = _hierarchy_sources(options, counting=False)
    notes += unused
    plan = hierarchy_plan(options, hierarchy, prior_levels, prior_source, rows)
    projection, warnings = _hierarchy_errors(plan, hierarchy, prior_levels, _projection_counts_text(prior_source))
    report = _hierarchy_plan_json(plan, hierarchy, node_list, projection, notes)
    report["warnings"] = list(warnings)
    report["alpha_mrmse"] = _alpha_mrmse_json(options, hierarchy, prior_levels)
    if options.json:
        _print(report, True)
    else:
        print(hierarchy_plan_text(report, privacy_unit_text(options.person_column, options.records_per_person)))
    _note_lines("plan", report["notes"])
    return 0


def plan_needs_counts(allocation: str, target: float | None) -> None:
    """The refusal of an ``allocation`` (``target``: its τ, None unless target) that needs node counts when
    none were given."""
    shown = allocation if target is None else f"target:{target:g}"
    raise ParameterError(f"--allocation {shown} needs node counts, and none were given",
                         "give --prior PRIOR.csv (public counts), or --counts-from-data (the data's own counts; "
                         "recorded in the manifest), or use --allocation uniform")


def cmd_hierarchy_simulate(args: argparse.Namespace) -> int:
    """``dpgui hierarchy simulate``: an adapter of :func:`hierarchy_simulate_command`."""
    return hierarchy_simulate_command(HierarchySimulateRequest.of(args))


def hierarchy_simulate_command(request: HierarchySimulateRequest) -> int:
    """Monte-Carlo releases of a hierarchy's plan (insecure seeded noise), printed per level beside the
    projection; nothing is spent, and no count is printed."""
    import secrets  # here: it loads OpenSSL, which the other commands do not need

    from dpgui.core.hierarchy import simulate_hierarchy
    from dpgui.formatting import format_level_margin
    from dpgui.workspace.publishing import projection_json

    options = request.options
    unused = check_hierarchy_delta(options.noise, options.delta_or_zero, options.alpha)
    seed = request.seed if request.seed is not None else secrets.randbits(63)
    hierarchy, prior_levels, leaves, node_list, prior_source, notes, rows = _hierarchy_sources(options, counting=True)
    notes += unused
    assert leaves is not None
    if node_list == NODE_LIST_DATA_ONLY:  # simulate does use the data's counts: they are its truth
        node_list = NODE_LIST_DATA_SIMULATED
    plan = hierarchy_plan(options, hierarchy, prior_levels, prior_source, rows)
    truth = hierarchy.aggregate(leaves)
    empirical = simulate_hierarchy(hierarchy, leaves, plan, trials=request.trials, seed=seed)
    projected, _ = _hierarchy_errors(plan, hierarchy, truth, "the simulated data's counts")
    report = _hierarchy_plan_json(plan, hierarchy, node_list, projected, notes)
    report.update({
        "trials": request.trials,
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
    if options.json:
        _print(report, True)
    else:
        lines = [f"Simulated {request.trials:,} releases (seed {seed}, INSECURE seeded noise: for study only, never "
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
