"""The self-test's step for counts over a hierarchy: plan, release, signed bundle and verification on the
bundled flight_routes.parquet, through the flow the window uses."""

from __future__ import annotations

from dpgui.selftest.checks import EPSILON, Run, SelfTestFailure, require, verify_and_tamper

HIERARCHY_DATASET = "self-test-hierarchy"


def hierarchy_step(run: Run) -> str:
    """Counts over a hierarchy through the flow the window uses (dpgui.workspace.hierarchy) on the bundled
    flight_routes.parquet: plan, first cap, release (secure noise) in the throw-away ledger, its PDF, the
    signed bundle (the ledger points to it) and its verification, with a one-byte change caught."""
    import numpy as np

    from dpgui.core.hierarchy_errors import plan_errors
    from dpgui.core.noise import SecureRandom
    from dpgui.data.hierarchy import HIERARCHY_SAMPLE_LEVELS, hierarchy_sample_path
    from dpgui.pdf.sections import report_pdf
    from dpgui.report.hierarchy.bundle import errors_json
    from dpgui.workspace.flow import ReleaseFlow
    from dpgui.workspace.statistics.hierarchy import HIERARCHY
    from dpgui.workspace.hierarchy import (
        HierarchyRequest, check_hierarchy_budget, load_hierarchy, run_hierarchy_release, set_first_cap,
    )
    from dpgui.workspace.hierarchy_planning import HierarchyChoice, HierarchyPlanRequest
    from dpgui.workspace.release import FirstCapNeeded, Problem

    choice = HierarchyChoice(levels=HIERARCHY_SAMPLE_LEVELS, epsilon=EPSILON, categories_public=True)  # public sample
    loaded = load_hierarchy(hierarchy_sample_path(), choice)
    hierarchy = loaded.hierarchy
    plan = HIERARCHY.plan(HierarchyPlanRequest(loaded, choice)).plan
    request = HierarchyRequest(loaded, plan, HIERARCHY_DATASET, choice.categories_public)
    require(isinstance(check_hierarchy_budget(request), FirstCapNeeded), "a new dataset was not asked for its budget")
    check = set_first_cap(request, EPSILON, "dpgui --self-test (throw-away ledger)")
    if isinstance(check, Problem):
        raise SelfTestFailure(f"the budget ledger refused the hierarchy release: {check.message}")
    outcome = run_hierarchy_release(request, SecureRandom, lambda fraction, message: None, lambda: False)
    release, info = outcome.release, outcome.info
    require(info.secure, "the release did not use the secure noise")
    counts = [np.asarray(level, dtype=np.int64) for level in release.counts]
    require(all(bool(np.all(level >= 0)) for level in counts), "a released count is negative")
    for level in range(1, hierarchy.n_levels + 1):
        sums = np.zeros(len(counts[level - 1]), dtype=np.int64)
        np.add.at(sums, hierarchy.parents[level - 1], counts[level])
        require(bool(np.array_equal(sums, counts[level - 1])), f"a parent on level {level - 1} is not the sum of its "
               f"children ({release.plan.consistency} consistency)")
    require(int(counts[0][0]) == loaded.rows, "the root is not the public number of records N (change neighbours)")
    with ReleaseFlow.open(HIERARCHY_DATASET) as flow:
        left = flow.ledger.totals(HIERARCHY_DATASET).epsilon_remaining
    require(abs(left) < 1e-12, f"the ledger shows ε = {left:g} left after spending the whole cap")
    projection = errors_json(plan_errors(release.plan, hierarchy))  # the plan's stated errors, as published
    key = run.values["key"]
    pdf = report_pdf(HIERARCHY.kind, release, info, key.public_key.key_id_hex, projection)
    require(pdf.startswith(b"%PDF-"), f"the hierarchy PDF is not a PDF ({len(pdf)} bytes)")
    (run.work / "hierarchy-bundle").mkdir()
    with ReleaseFlow.open(HIERARCHY_DATASET) as flow:
        paths = flow.sign(HIERARCHY, run.work / "hierarchy-bundle", HIERARCHY_DATASET, release, info, pdf, key,
                                    projection)
        entry = flow.ledger.release(info.release_id)
        pointer = entry.bundle if entry is not None else None
    require(pointer == str(paths.manifest.resolve()), "the ledger does not point to the hierarchy bundle")
    checks = verify_and_tamper(paths.manifest, paths.csv, run.values["public_path"])
    run.values["hierarchy_paths"] = paths
    return (f"{' > '.join(hierarchy.level_names)}: {hierarchy.n_nodes:,} counts, {release.plan.noise} noise, "
            f"{release.plan.consistency} consistency, ε = {EPSILON:g} spent; signed bundle verifies ({checks} checks), "
            "a one-byte change is caught")
