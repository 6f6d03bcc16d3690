"""The self-test's step for the CDF of a numeric column for each group: release, signed bundle and verification
on the bundled flights sample (``dep_delay`` for each ``carrier``), through the release flow."""

from __future__ import annotations

from dpgui.selftest.checks import EPSILON, Run, SelfTestFailure, require, verify_and_tamper

GROUPED_DATASET = "self-test-grouped"
#: The carriers, typed as a public list (the airlines that flew from New York in 2013: public knowledge, never
#: read from the data), and one that did not fly then (released from zeros plus noise).
CARRIERS = ("9E", "AA", "AS", "B6", "DL", "EV", "F9", "FL", "HA", "MQ", "OO", "UA", "US", "VX", "WN", "YV", "NK")
COLUMN, GROUP_COLUMN, LOWER, UPPER, BINS = "dep_delay", "carrier", -60.0, 300.0, 36


def grouped_cdf_step(run: Run) -> str:
    """The grouped CDF through :class:`~dpgui.workspace.flow.ReleaseFlow` on the bundled flights sample: the
    carriers as a public list, the rows of any other carrier counted in 'other', the first cap, the release
    (secure noise, the shared plan's ε charged once) in the throw-away ledger, its PDF, the signed bundle and its
    verification, with a one-byte change caught."""
    from dpgui.core.grouped_cdf import GroupList
    from dpgui.vocabulary import Neighbours, OtherGroups
    from dpgui.core.noise import SecureRandom
    from dpgui.core.plan import PrivacySpec
    from dpgui.data.sample import sample_dataset_path
    from dpgui.data.source import open_source
    from dpgui.data.source_spec import parse_source
    from dpgui.pdf.sections import report_pdf
    from dpgui.workspace.flow import ReleaseFlow
    from dpgui.workspace.statistics.grouped_cdf import GROUPED_CDF, GroupedCdfPlanRequest, GroupedCdfSpend

    groups = GroupList(CARRIERS, OtherGroups.OTHER)
    planned = GROUPED_CDF.plan(GroupedCdfPlanRequest(groups, BINS, PrivacySpec(EPSILON, Neighbours.CHANGE)))
    spend = GroupedCdfSpend(COLUMN, GROUP_COLUMN, LOWER, UPPER, planned.plan)
    spec = parse_source(sample_dataset_path())
    with ReleaseFlow.open(GROUPED_DATASET) as flow:
        flow.ledger.set_cap(GROUPED_DATASET, EPSILON, reason="dpgui --self-test (throw-away ledger)")
        done = flow.release(GROUPED_CDF, lambda: open_source(spec), spend, SecureRandom)
        release, info = done.release, done.info
        totals = flow.ledger.totals(GROUPED_DATASET)
    require(info.secure, "the release did not use the secure noise")
    require(release.labels == (*CARRIERS, "other"), "the released groups are not the public list and 'other'")
    require(totals.releases == 1 and abs(totals.epsilon_spent - EPSILON) < 1e-12,
            f"the ledger shows ε = {totals.epsilon_spent:g} spent in {totals.releases} release(s), not ε = "
            f"{EPSILON:g} once for all groups")
    key = run.values["key"]
    pdf = report_pdf(GROUPED_CDF.kind, release, info, key.public_key.key_id_hex)
    require(pdf.startswith(b"%PDF-"), f"the grouped CDF PDF is not a PDF ({len(pdf)} bytes)")
    (run.work / "grouped-bundle").mkdir()
    with ReleaseFlow.open(GROUPED_DATASET) as flow:
        paths = flow.sign(GROUPED_CDF, run.work / "grouped-bundle", GROUPED_DATASET, release, info, pdf, key)
        entry = flow.ledger.release(info.release_id)
        pointer = entry.bundle if entry is not None else None
    if pointer != str(paths.manifest.resolve()):
        raise SelfTestFailure("the ledger does not point to the grouped CDF bundle")
    checks = verify_and_tamper(paths.manifest, paths.csv, run.values["public_path"])
    return (f"{COLUMN} for each of {len(release.labels)} groups of {GROUP_COLUMN}: ε = {EPSILON:g} spent once, 95 % "
            f"margin ±{planned.margin95:,.0f} records; signed bundle verifies ({checks} checks), a one-byte change is "
            "caught")
