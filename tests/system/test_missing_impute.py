"""Missing values counted as a public value the officer chooses (``--missing impute:VALUE``, OpenDP's
impute-constant) instead of a leaf of their own; and a forced branching that never pads to the next
power because of the missing leaf. docs/privacy-model.md "Missing values".

Under change, imputing a public constant keeps N = all rows public and exact, and a value turning into
a missing one moves one record from its bin to the bin of the imputed value: a change of one record.
Under add/remove imputation is refused (a missing row is already dropped at no cost).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import numpy as np
import pytest

from cli_helpers import run_cli
from dpgui.core.mechanism import leaf_counts, release
from dpgui.core.missing import impute_missing
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.planner import auto_plan
from dpgui.core.tree import TreeShape
from dpgui.data.histogram import column_histogram, values_histogram
from dpgui.errors import ParameterError
from dpgui.report.ledger import Ledger

K, LOWER, UPPER = 8, 0.0, 10.0
VALUES = ["1", "7", "3", "9.5", "2", "2", "8", "4.4", "6"]


def _neighbours(tmp_path):
    """Two one-column CSVs that differ in one record: 7 in the first, an empty cell in the second."""
    with_value, with_missing = tmp_path / "a.csv", tmp_path / "b.csv"
    with_value.write_text("x\n" + "\n".join(VALUES) + "\n")
    with_missing.write_text("x\n" + "\n".join("" if v == "7" else v for v in VALUES) + "\n")
    return with_value, with_missing


# ---------------------------------------------------------------- the imputed bin is the histogram's bin
def test_imputed_value_lands_in_the_bin_the_histogram_counts_it_in():
    rng = np.random.default_rng(4)
    edges = np.linspace(LOWER, UPPER, K + 1)
    values = [*rng.uniform(-3, 13, 200), *edges, LOWER - 1e-9, UPPER, UPPER + 5, -1e300, 1e300, 0.3, 2.5]
    for value in values:
        expected = values_histogram([value], LOWER, UPPER, K) * 3  # the histogram's own binning rule
        assert np.array_equal(impute_missing(np.zeros(K, np.int64), 3, value, LOWER, UPPER), expected), value
    counts = np.arange(K, dtype=np.int64)
    assert np.array_equal(impute_missing(counts, 0, 5.0, LOWER, UPPER), counts)  # nothing missing: unchanged
    with pytest.raises(ParameterError, match="finite"):
        impute_missing(counts, 1, float("nan"), LOWER, UPPER)


# ---------------------------------------------------------------- privacy: a change of one record
def test_impute_keeps_n_public_and_moves_one_record_between_two_bins(tmp_path):
    a, b = _neighbours(tmp_path)
    ha, hb = (column_histogram(p, "x", LOWER, UPPER, K) for p in (a, b))
    privacy = PrivacySpec(1.0, "change", impute=0.0)
    plan = auto_plan(K, privacy)
    assert privacy.missing_rule == "impute" and not privacy.missing_leaf
    assert not plan.shape.missing_leaf and plan.shape.leaves == K and plan.missing_rule == "impute"
    ra = release(ha.counts, plan, SeededRandom(5), LOWER, UPPER, missing=ha.n_missing)
    rb = release(hb.counts, plan, SeededRandom(5), LOWER, UPPER, missing=hb.n_missing)
    assert ra.total == rb.total == 9  # N = all rows, public and exact for both neighbours
    assert ra.missing is None and rb.missing is None  # no count of their own
    # the same noise: each level differs by the move of one record from the bin of 7 to the bin of 0
    for level in range(1, plan.shape.height + 1):
        assert int(np.abs(np.asarray(ra.levels[level]) - np.asarray(rb.levels[level])).sum()) in (0, 2)
    assert plan.privacy.level_sensitivity == 2
    # what the tree counts: the value's bin for 0, the first bin for -50 (clamped like any other value)
    for value, index in ((0.0, 0), (-50.0, 0), (7.0, 5), (99.0, K - 1)):
        counts, left = leaf_counts(hb.counts, auto_plan(K, PrivacySpec(1.0, impute=value)), 1, LOWER, UPPER)
        expected = hb.counts.copy()
        expected[index] += 1
        assert left == 0 and np.array_equal(counts, expected), value
    assert np.array_equal(leaf_counts(hb.counts, auto_plan(K, PrivacySpec(1.0)), 1, LOWER, UPPER)[0], hb.counts)


def test_impute_is_refused_under_addremove_with_the_reason(capsys):
    with pytest.raises(ParameterError, match="already left out"):
        PrivacySpec(1.0, "addremove", impute=0.0)
    code, out, err = run_cli(["plan", "--bins", "64", "--epsilon", "1", "--neighbours", "addremove",
                              "--missing", "impute:0"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "add/remove" in err
    code, out, err = run_cli(["plan", "--bins", "64", "--epsilon", "1", "--missing", "impute:zero"], capsys)
    assert code == 2 and "must be a number" in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- the command line: plan, simulate, release
def test_plan_and_simulate_take_impute_and_say_so(capsys):
    code, out, err = run_cli(["plan", "--bins", "997", "--epsilon", "0.1", "--branching", "997", "--missing",
                              "impute:0", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["branching"] == [997] and data["padded_bins"] == 997 and data["missing_leaf"] is False
    assert data["missing_impute"] == 0.0 and Plan.from_json(data).privacy.impute == 0.0
    code, out, err = run_cli(["plan", "--bins", "997", "--epsilon", "0.1", "--missing", "impute:-2.5"], capsys)
    assert code == 0, err
    assert "missing values: counted as the public value -2.5" in out
    code, out, err = run_cli(["simulate", "--synthetic", "uniform", "--n", "100", "--bins", "97", "--epsilon", "1",
                              "--branching", "97", "--missing", "impute:0", "--trials", "5", "--seed", "3"], capsys)
    assert code == 0, err
    assert "branching 97," in out


def test_release_records_the_imputed_value_in_json_ledger_manifest_and_project(tmp_path, capsys):
    from dpgui.report.bundle import schema_problems
    from dpgui.report.cdf.bundle import ReleaseInfo, build_manifest, plan_from_manifest

    a, b = _neighbours(tmp_path)
    with Ledger() as ledger:
        ledger.set_cap("imp", 10)
    summaries = []
    for path in (a, b):
        code, out, err = run_cli(["release", str(path), "--column", "x", "--lower", "0", "--upper", "10", "--bins",
                                  str(K), "--epsilon", "1", "--dataset", "imp", "--missing", "impute:0",
                                  "--out", str(tmp_path / f"{path.stem}-out.csv"), "--json"], capsys)
        assert code == 0, err
        summaries.append(json.loads(out))
    for summary in summaries:
        assert summary["missing_values"]["rule"] == "impute" and summary["missing_values"]["value"] == 0.0
        assert "counted as the public value 0" in summary["missing_values"]["description"]
        assert summary["n_released"] == 9 and summary["missing_leaf"] is False
    # the two neighbours publish the same fields apart from the noisy values and the ids
    keys = set(summaries[0]) - {"release_id", "quantiles", "outputs"}
    assert {k: summaries[0][k] for k in keys if k != "projected"} == {k: summaries[1][k] for k in keys
                                                                      if k != "projected"}
    with Ledger() as ledger:
        recorded = ledger.release_output(summaries[1]["release_id"])
        assert recorded is not None
        assert recorded.params["missing"] == "impute" and recorded.params["plan"]["missing_impute"] == 0.0
    # the manifest: rule, value, schema version 5; the plan read back from it imputes the same value
    plan = auto_plan(K, PrivacySpec(1.0, impute=3.0))
    result = release(np.ones(K, np.int64), plan, SeededRandom(1), LOWER, UPPER, missing=2)
    info = ReleaseInfo("d", "x", "0" * 32, datetime(2030, 1, 1, tzinfo=timezone.utc), result.missing_rule)
    manifest = build_manifest(result, info, "n", b"csv", b"pdf", "ABCD")
    assert manifest["schema_version"] == 5 and schema_problems(manifest) == []
    assert manifest["missing_values"]["rule"] == "impute" and manifest["missing_values"]["value"] == 3.0
    assert manifest["missing_values"]["released_count"] is None
    assert plan_from_manifest(manifest) == plan and plan_from_manifest(manifest).privacy.impute == 3.0
    no_value = {**manifest, "missing_values": {k: v for k, v in manifest["missing_values"].items() if k != "value"}}
    assert schema_problems(no_value) != []


# ---------------------------------------------------------------- the missing leaf never adds a level
def test_a_forced_branching_never_pads_to_the_next_power_for_the_missing_leaf():
    flat = TreeShape.uniform(997, 997, missing_leaf=True)
    assert flat.branching == (998,) and flat.height == 1 and flat.leaves == 998  # was 997 x 997 = 994,009
    assert TreeShape.uniform(4096, 16, missing_leaf=True).branching == (17, 16, 16)  # was 16^4 = 65,536
    assert TreeShape.uniform(4000, 16, missing_leaf=True).branching == (16, 16, 16)  # room already
    assert TreeShape.uniform(4096, 16).branching == (16, 16, 16)
    with pytest.raises(ParameterError, match="5x16x16"):  # a typed vector is not changed: the fix is named
        TreeShape.parse(1024, "4x16x16", missing_leaf=True)


def test_paper_configurations_can_be_planned(capsys):
    """Rameshwar, Tandon and Sharma's configurations: a flat 997-bin tree, and 4096 bins with b = 16 and
    equal budgets; with the missing leaf (one more top branch) and with imputation (exactly their trees)."""
    for extra, branching in (([], [17, 16, 16]), (["--missing", "impute:0"], [16, 16, 16])):
        code, out, err = run_cli(["plan", "--bins", "4096", "--branching", "16", "--budgets", "equal",
                                  "--epsilon", "1", "--json", *extra], capsys)
        assert code == 0, err
        data = json.loads(out)
        assert data["branching"] == branching and data["level_epsilons"] == pytest.approx([1 / 3] * 3)
    plan = Plan(TreeShape(4096, (16, 16, 16)), PrivacySpec(1.0, impute=0.0),
                equal_budgets(TreeShape(4096, (16, 16, 16)), PrivacySpec(1.0)))
    assert plan.shape.padded_bins == 4096 and plan.missing_rule == "impute"
    code, out, err = run_cli(["plan", "--bins", "997", "--branching", "997", "--epsilon", "0.1", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["branching"] == [998]


def test_the_plan_says_why_the_top_level_has_one_more_branch(capsys):
    code, out, err = run_cli(["plan", "--bins", "4096", "--branching", "16", "--budgets", "equal", "--epsilon", "1"],
                             capsys)
    assert code == 0, err
    assert "17 x 16 x 16 (4352 leaves; the last of the 17 top branches only holds the missing values' leaf)" in out
    assert TreeShape.uniform(4096, 16, True).missing_branch and not TreeShape(4096, (17, 16, 16)).missing_branch
    assert not TreeShape.uniform(4000, 16, True).missing_branch
