"""Missing values are handled by a rule the neighbour model fixes, never the data.

Under change, missing values are the tree's leaf K+1 and N = all rows (a value turning into a missing
one moves one record between two leaves: the change-one neighbour); under add/remove they are dropped
(one removal: a neighbour) and N is noised. docs/privacy-model.md "Missing values".
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from dpgui.core.mechanism import release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.planner import auto_plan
from dpgui.core.projection import prefix_variances
from dpgui.core.tree import TreeShape
from dpgui.data.histogram import column_histogram
from dpgui.errors import ParameterError
from dpgui.report.ledger import Ledger

from cli_helpers import run_cli

K, LOWER, UPPER = 8, 0.0, 10.0
VALUES = ["1", "7", "3", "9.5", "2", "2", "8", "4.4", "6"]


def _neighbours(tmp_path):
    """Two one-column CSVs that differ in one record: 7 in the first, an empty cell (a blank line,
    as a one-column CSV writes it) in the second."""
    with_value, with_missing = tmp_path / "a.csv", tmp_path / "b.csv"
    with_value.write_text("x\n" + "\n".join(VALUES) + "\n")
    with_missing.write_text("x\n" + "\n".join("" if v == "7" else v for v in VALUES) + "\n")
    return with_value, with_missing


def _independent_level_sensitivity(shape: TreeShape, records_per_person: int) -> int:
    """Max over change-one moves (L records from real leaves to real leaves, missing leaf included)
    of the L1 change of one level's node counts, by brute force over leaf pairs (no mechanism code)."""
    sizes = [shape.padded_bins]
    for b in shape.branching:
        sizes.append(sizes[-1] // b)
    worst = 0
    for a in range(shape.leaves):
        for b in range(shape.leaves):
            for size in sizes[1:]:
                moved = 0 if a // size == b // size else 2
                worst = max(worst, moved)
    return worst * records_per_person


# ---------------------------------------------------------------- (a) privacy under change
def test_change_neighbours_publish_the_same_n_and_move_two_leaf_paths(tmp_path):
    a, b = _neighbours(tmp_path)
    ha, hb = (column_histogram(p, "x", LOWER, UPPER, K) for p in (a, b))
    assert (ha.n_rows, ha.n_missing, hb.n_rows, hb.n_missing) == (9, 0, 9, 1)
    plan = auto_plan(K, PrivacySpec(1.0, "change"))
    shape = plan.shape
    assert shape.missing_leaf and shape.leaves == K + 1 and shape.padded_bins >= K + 1
    # the same seed: the noise is the same, so the released levels differ exactly as the true ones
    ra = release(ha.counts, plan, SeededRandom(11), LOWER, UPPER, "l2", missing=ha.n_missing)
    rb = release(hb.counts, plan, SeededRandom(11), LOWER, UPPER, "l2", missing=hb.n_missing)
    assert ra.total == rb.total == 9  # the published N: all rows, identical for the two neighbours
    assert int(ra.levels[0][0]) == int(rb.levels[0][0]) == 9
    # independent: the 7 is in leaf floor(7 / 10 * 8) = 5; the empty cell in leaf K (the missing leaf)
    leaf_value, leaf_missing = 5, K
    sizes = [shape.padded_bins // int(np.prod(shape.branching[:lvl])) for lvl in range(shape.height + 1)]
    spent = Fraction(0)
    for level in range(1, shape.height + 1):
        diff = np.asarray(ra.levels[level]) - np.asarray(rb.levels[level])
        expected = np.zeros(diff.size, dtype=np.int64)
        expected[leaf_value // sizes[level]] += 1
        expected[leaf_missing // sizes[level]] -= 1
        np.testing.assert_array_equal(diff, expected)
        spent += Fraction(int(np.abs(diff).sum())) / plan.scales[level]
    # the sensitivity the mechanism uses is the independent worst case over every change-one move ...
    assert plan.privacy.level_sensitivity == _independent_level_sensitivity(shape, 1) == 2
    # ... and this pair's privacy loss Σ_l ‖Δ_l‖₁ / t_l stays within ε
    assert float(spent) <= plan.privacy.epsilon * (1 + 1e-12)
    # the released missing count is N − C_K, its standard error that of Ĉ_K
    assert rb.missing == rb.total - rb.cumulative[-1] and rb.values_total == rb.cumulative[-1]
    assert rb.missing_std_error == pytest.approx(float(np.sqrt(prefix_variances(plan, [K])[0])))


def test_independent_sensitivity_with_records_per_person():
    shape = TreeShape(10, (4, 3), missing_leaf=True)
    plan = Plan(shape, PrivacySpec(1.0, "change", 3), equal_budgets(shape, PrivacySpec(1.0, "change", 3)))
    assert plan.privacy.level_sensitivity == _independent_level_sensitivity(shape, 3) == 6


def test_projection_plans_for_the_leaves_released():
    """Shown before release: the plan's variances cover K+1 leaves; the K released points are noised,
    prefix K+1 = N is exact, and the release's standard errors are those of the first K prefixes."""
    plan = auto_plan(K, PrivacySpec(1.0, "change"))
    v = prefix_variances(plan)
    assert v.size == K + 1 and v[-1] == 0.0 and np.all(v[:K] > 0)
    rel = release(np.ones(K, dtype=np.int64), plan, SeededRandom(1), LOWER, UPPER, missing=2)
    np.testing.assert_allclose(rel.std_error, np.sqrt(v[:K]))
    assert rel.cumulative.size == K and rel.total == K + 2


def test_released_missing_count_is_unbiased():
    """Consistency 'none': the released missing count N − Ĉ_K is unbiased. 2,000 releases; the
    mean is within 4 SE of the truth (a factor-2 error in it, or dropping the leaf, is ≥ 20 SE off)."""
    plan = auto_plan(K, PrivacySpec(0.5, "change"))
    counts = np.array([3, 1, 4, 1, 5, 9, 2, 6], dtype=np.int64)
    source = SeededRandom(2024)
    got = np.array([release(counts, plan, source, LOWER, UPPER, "none", missing=40).missing for _ in range(2000)])
    se = float(np.sqrt(prefix_variances(plan, [K])[0])) / np.sqrt(got.size)
    assert abs(got.mean() - 40) < 4 * se
    assert 20 * se < 40 * 0.5


# ---------------------------------------------------------------- (b) + (c) the old leak, end to end
def test_cli_publishes_the_same_n_for_neighbouring_files(tmp_path, capsys):
    """On the starting code the published N was the number of values (blank line skipped): 9 and 8,
    so a value turning into an empty cell changed the published N with certainty."""
    a, b = _neighbours(tmp_path)
    with Ledger() as ledger:
        ledger.set_cap("nb", 10)
    summaries = []
    for path in (a, b):
        code, out, err = run_cli(["release", str(path), "--column", "x", "--lower", "0", "--upper", "10", "--bins", str(K),
                               "--epsilon", "1", "--dataset", "nb", "--out", str(tmp_path / f"{path.stem}-out.csv"),
                               "--json"], capsys)
        assert code == 0, err
        summaries.append(json.loads(out))
    assert [s["n_public"] for s in summaries] == [True, True]
    assert [s["n_released"] for s in summaries] == [9, 9]  # the starting code published 9 and 8
    for summary in summaries:
        assert summary["missing_values"]["rule"] == "bucket"
        assert "N = all rows" in summary["missing_values"]["description"]


# ---------------------------------------------------------------- (d) --missing error is refused
def test_missing_error_is_refused_before_anything_is_spent(tmp_path, capsys):
    _, b = _neighbours(tmp_path)
    with Ledger() as ledger:
        ledger.set_cap("nb", 10)
    code, out, err = run_cli(["release", str(b), "--column", "x", "--lower", "0", "--upper", "10", "--bins", str(K),
                           "--epsilon", "1", "--dataset", "nb", "--out", str(tmp_path / "o.csv"), "--missing", "error"],
                          capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--missing error is not a rule of the change model" in err and "noised 'missing' bucket" in err
    with Ledger() as ledger:
        assert ledger.totals("nb").epsilon_spent == 0 and ledger.releases("nb") == []
    assert not (tmp_path / "o.csv").exists()


def test_spend_and_release_refuses_error_and_plans_without_the_missing_leaf(tmp_path):
    from dpgui.report.cdf.publish import spend_and_release

    counts = np.ones(K, dtype=np.int64)
    legacy = Plan(TreeShape(K, (K,)), PrivacySpec(1.0, "change"), (1.0,))  # a plan of an older version
    with Ledger() as ledger:
        ledger.set_cap("d", 10)
        with pytest.raises(ParameterError, match="not a missing-value rule"):
            spend_and_release(ledger, "d", "x", "error", counts, auto_plan(K, PrivacySpec(1.0)), SeededRandom(1),
                              LOWER, UPPER, "l2", n_missing=0)
        with pytest.raises(ParameterError, match="leaf of their own"):
            spend_and_release(ledger, "d", "x", "auto", counts, legacy, SeededRandom(1), LOWER, UPPER, "l2", n_missing=0)
        assert ledger.totals("d").epsilon_spent == 0 and ledger.releases("d") == []


# ---------------------------------------------------------------- (e) add/remove: dropped, N noised
def test_addremove_drops_missing_values_and_noises_n(tmp_path):
    a, b = _neighbours(tmp_path)
    ha, hb = (column_histogram(p, "x", LOWER, UPPER, K) for p in (a, b))
    plan = auto_plan(K, PrivacySpec(1.0, "addremove"))
    assert not plan.shape.missing_leaf and plan.shape.leaves == K and plan.missing_rule == "drop"
    ra = release(ha.counts, plan, SeededRandom(5), LOWER, UPPER, missing=ha.n_missing)
    rb = release(hb.counts, plan, SeededRandom(5), LOWER, UPPER, missing=hb.n_missing)
    assert ra.missing is None and rb.missing is None
    # the value turned missing is one removal: each released level (root included) moves by one node
    for level in range(plan.shape.height + 1):
        if ra.levels[level] is None:
            continue
        assert int(np.abs(np.asarray(ra.levels[level]) - np.asarray(rb.levels[level])).sum()) == 1
    assert plan.privacy.level_sensitivity == 1
    # N is the noised total of the values: it varies from release to release around 8
    totals = {release(hb.counts, plan, SeededRandom(seed), LOWER, UPPER, missing=1).total for seed in range(20)}
    assert len(totals) > 1
    assert plan.privacy.root_public is False


def test_manifest_says_which_rule():
    from datetime import datetime, timezone

    from dpgui.report.bundle import schema_problems
    from dpgui.report.cdf.bundle import ReleaseInfo, build_manifest, missing_values_json

    change = release(np.ones(K, dtype=np.int64), auto_plan(K, PrivacySpec(1.0)), SeededRandom(1), missing=3)
    addremove = release(np.ones(K, dtype=np.int64), auto_plan(K, PrivacySpec(1.0, "addremove")), SeededRandom(1),
                        missing=3)
    bucket = missing_values_json(change, change.missing_rule)
    assert bucket["rule"] == "bucket" and bucket["description"] == "counted in a noised 'missing' bucket; N = all rows"
    assert bucket["released_count"] == change.total - change.cumulative[-1] and bucket["std_error"] > 0
    drop = missing_values_json(addremove, addremove.missing_rule)
    assert drop == {"rule": "drop", "description": "dropped (a neighbour under add/remove)", "released_count": None,
                    "std_error": None}
    # the schema takes the new object and, from older manifests, the bare policy names
    info = ReleaseInfo("d", "x", "0" * 32, datetime(2030, 1, 1, tzinfo=timezone.utc), "bucket")
    manifest = build_manifest(change, info, "n", b"csv", b"pdf", "ABCD")
    assert manifest["missing_values"]["rule"] == "bucket" and schema_problems(manifest) == []
    assert manifest["total_records"] == {"public": True, "value": K + 3, "released_estimate": float(K + 3)}
    for legacy in ("drop", "error"):
        assert schema_problems({**manifest, "missing_values": legacy}) == []
    assert schema_problems({**manifest, "missing_values": "skip"}) != []


@pytest.mark.parametrize("epsilon,bins", [(0.5, 16), (2.0, 64)])
def test_the_missing_count_interval_holds_the_true_count(epsilon, bins):
    """The window's and the PDF's "95 % interval" of the released missing count holds the true
    number of missing values in ≥ 95 % of releases (binomial tolerance: 2 standard errors)."""
    from dpgui.core.quantiles import missing_interval95

    counts = np.full(bins, 30)
    true_missing = 17
    plan = auto_plan(bins, PrivacySpec(epsilon))
    source = SeededRandom(2024)
    trials = 600
    hits = 0
    for _ in range(trials):
        rel = release(counts, plan, source, 0.0, float(bins), "l2", missing=true_missing)
        low, high = missing_interval95(rel)
        assert low <= rel.missing <= high and low >= 0 and high <= rel.total
        hits += low <= true_missing <= high
    assert hits / trials >= 0.95 - 2 * np.sqrt(0.95 * 0.05 / trials)
    dropped = release(counts, auto_plan(bins, PrivacySpec(epsilon, "addremove")), source, 0.0, float(bins), "l2",
                      missing=true_missing)
    assert missing_interval95(dropped) is None


# ---------------------------------------------------------------- (f) simulate on a file, as a release would
@pytest.mark.parametrize(("neighbours", "shown_n"), [("change", 9), ("addremove", None)])
def test_simulate_counts_missing_values_as_a_release_does(tmp_path, capsys, neighbours, shown_n):
    """`simulate --input` builds the tree a release would: under change the missing value is in the
    missing leaf and N = all 9 rows (not the 8 values); under add/remove N is not shown at all."""
    _, with_missing = _neighbours(tmp_path)
    code, out, _ = run_cli(["simulate", "--input", str(with_missing), "--column", "x", "--lower", str(LOWER),
                            "--upper", str(UPPER), "--bins", str(K), "--epsilon", "1", "--trials", "50",
                            "--seed", "3", "--neighbours", neighbours, "--json"], capsys)
    assert code == 0
    summary = json.loads(out)
    if shown_n is None:
        assert summary["n"] == "N is private (addremove): not shown"
    else:
        assert summary["n"] == shown_n


def test_simulated_error_matches_the_projection_with_missing_values():
    """With the missing leaf filled the simulated mean squared error without consistency is the exact
    projection's total (unbiased estimator), within 4 standard errors: the missing leaf is noised as
    in a release."""
    from dpgui.core.simulation import simulate

    plan = auto_plan(K, PrivacySpec(0.5))
    assert plan.shape.missing_leaf
    counts = np.array([5, 0, 3, 9, 1, 1, 4, 2])
    result = simulate(plan, counts, 3000, "none", seed=11, n_missing=40)
    summary = result.summary(result.counts)
    expected = float(prefix_variances(plan)[:K].sum())
    assert abs(summary["mean_sq_l2"] - expected) < 4 * summary["se_sq_l2"]
