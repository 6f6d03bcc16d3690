"""The self-test's step for the counts of one column: release, signed bundle and verification on the bundled
flight_routes.parquet, through the flow the window uses."""

from __future__ import annotations

from dpgui.selftest.checks import EPSILON, Run, SelfTestFailure, require, verify_and_tamper

COUNTS_DATASET = "self-test-counts"


def counts_step(run: Run) -> str:
    """The counts of one column through the flow the window uses (dpgui.workspace.counts) on the bundled
    flight_routes.parquet: its public time zones as the stated categories, first cap, release (secure noise) in
    the throw-away ledger, its PDF, the signed bundle and its verification, with a one-byte change caught."""
    import pyarrow.parquet as pq

    from dpgui.core.noise import SecureRandom
    from dpgui.data.hierarchy import hierarchy_sample_path
    from dpgui.data.source_spec import parse_source
    from dpgui.pdf.sections import report_pdf
    from dpgui.workspace.counts import CountsRequest, check_counts_budget, counts_plan, run_counts_release
    from dpgui.workspace.counts import set_counts_first_cap
    from dpgui.workspace.flow import ReleaseFlow
    from dpgui.workspace.release import FirstCapNeeded, Problem
    from dpgui.workspace.statistics.counts import COUNTS
    from dpgui.vocabulary import Neighbours

    column, sample = "dest_tzone", hierarchy_sample_path()
    categories = tuple(sorted(str(v) for v in pq.read_table(sample, columns=[column]).column(column).unique()))
    plan = counts_plan(categories, EPSILON, Neighbours.CHANGE)  # the sample's time zones are public
    request = CountsRequest(parse_source(sample), column, plan, COUNTS_DATASET)
    require(isinstance(check_counts_budget(request), FirstCapNeeded), "a new dataset was not asked for its budget")
    check = set_counts_first_cap(request, EPSILON)
    if isinstance(check, Problem):
        raise SelfTestFailure(f"the budget ledger refused the counts release: {check.message}")
    outcome = run_counts_release(request, SecureRandom, lambda fraction, message: None, lambda: False)
    release, info = outcome.release, outcome.info
    require(info.secure, "the release did not use the secure noise")
    require(len(release.counts) == len(categories), f"{len(release.counts)} counts for {len(categories)} categories")
    with ReleaseFlow.open(COUNTS_DATASET) as flow:
        left = flow.ledger.totals(COUNTS_DATASET).epsilon_remaining
    require(abs(left) < 1e-12, f"the ledger shows ε = {left:g} left after spending the whole cap")
    key = run.values["key"]
    pdf = report_pdf(COUNTS.kind, release, info, key.public_key.key_id_hex)
    require(pdf.startswith(b"%PDF-"), f"the counts PDF is not a PDF ({len(pdf)} bytes)")
    (run.work / "counts-bundle").mkdir()
    with ReleaseFlow.open(COUNTS_DATASET) as flow:
        paths = flow.sign(COUNTS, run.work / "counts-bundle", COUNTS_DATASET, release, info, pdf, key)
        entry = flow.ledger.release(info.release_id)
        pointer = entry.bundle if entry is not None else None
    require(pointer == str(paths.manifest.resolve()), "the ledger does not point to the counts bundle")
    checks = verify_and_tamper(paths.manifest, paths.csv, run.values["public_path"])
    return (f"column {column}: {len(categories)} stated categories, ε = {EPSILON:g} spent; signed bundle verifies "
            f"({checks} checks), a one-byte change is caught")
