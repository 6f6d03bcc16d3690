"""The self-test's step for a release plan: two statistics of the bundled plan sample under one budget, through
the plan file's reader, the plan's release (one ledger entry), its PDF, its signed bundle and its verification."""

from __future__ import annotations

from dpgui.selftest.checks import EPSILON, Run, SelfTestFailure, require, verify_and_tamper

PLAN_DATASET = "self-test-plan"


def release_plan_step(run: Run) -> str:
    """A plan of the CDF of ``distance`` and the counts of ``origin`` (public list of New York's three airports) at
    ε = 1, read as a plan file is read, split, released through :func:`dpgui.workspace.release_plan.release_plan`
    (one spend in the throw-away ledger), drawn (summary and parts), signed and verified, with a one-byte change to
    a part's CSV caught."""
    from dpgui.core.noise import SecureRandom
    from dpgui.data.sample import plan_sample_path
    from dpgui.data.source import open_source
    from dpgui.data.source_spec import parse_source
    from dpgui.pdf.plan import plan_report_pdf
    from dpgui.report.ledger import Ledger
    from dpgui.workspace.plan_spec import PlanSpec, plan_items
    from dpgui.workspace.plan_split import split_plan
    from dpgui.workspace.release_plan import plan_summary, release_plan, sign_plan

    spec = PlanSpec.from_dict({
        "dataset": PLAN_DATASET, "source": str(plan_sample_path()), "epsilon": EPSILON,
        "statistic": [{"kind": "cdf", "column": "distance", "lower": 0, "upper": 5000, "bins": 250},
                      {"kind": "counts", "column": "origin", "categories": ["EWR", "JFK", "LGA"], "weight": 2}]})
    source = parse_source(spec.source)
    with open_source(source) as data:
        items = plan_items(spec, data)
    split = split_plan([item.part for item in items], spec.epsilon, spec.delta)
    with Ledger() as ledger:
        ledger.set_cap(PLAN_DATASET, EPSILON, reason="dpgui --self-test (throw-away ledger)")
        released = release_plan(ledger, PLAN_DATASET, items, split, lambda: open_source(source), SecureRandom,
                                epsilon=spec.epsilon, delta=spec.delta)
        entries = ledger.releases(PLAN_DATASET)
        require(len(entries) == 1 and abs(entries[0].epsilon - split.charge.epsilon) < 1e-12,
                f"the plan is {len(entries)} ledger entries, not one charged ε = {split.charge.epsilon:g}")
        summary = plan_summary(released, spec.epsilon, spec.delta, spec.unit_words(), spec.unit)
        key = run.values["key"]
        pdf = plan_report_pdf(released, summary, key.public_key.key_id_hex, PLAN_DATASET)
        require(pdf.startswith(b"%PDF-"), f"the plan's PDF is not a PDF ({len(pdf)} bytes)")
        (run.work / "plan-bundle").mkdir()
        paths = sign_plan(ledger, released, summary, run.work / "plan-bundle", PLAN_DATASET, pdf, key)
        entry = ledger.release(released.plan_id)
    if entry is None or entry.bundle != str(paths.manifest.resolve()):
        raise SelfTestFailure("the ledger does not point to the plan's bundle")
    checks = verify_and_tamper(paths.manifest, paths.csv.with_name(f"{PLAN_DATASET}.part2.csv"),
                               run.values["public_path"])
    return (f"{len(items)} statistics at ε = {EPSILON:g} in one ledger entry ({split.chosen} split: ε "
            f"{', '.join(f'{p.budget:.3f}' for p in split.parts)}); signed bundle verifies ({checks} checks), a "
            "one-byte change to a part is caught")
