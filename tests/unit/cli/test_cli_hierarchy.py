"""``dpgui hierarchy plan|release|simulate``: the JSON contract, the ledger's record of each release,
signed bundles that verify, and bad input refused in one line with nothing spent and nothing written."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpgui.core.accounting import zcdp_rho
from dpgui.core.noise import laplace_scale
from dpgui.core.noise_moments import discrete_laplace_pmf
from dpgui.report.ledger import Ledger

from cli_helpers import run_cli
from hierarchy_world import LEVELS, _tree, _write_rows

def _truth(world: Path) -> dict[tuple[str, ...], int]:
    """The data's true count of every node path (root: ())."""
    counts: dict[tuple[str, ...], int] = {}
    with open(world / "data.csv", newline="", encoding="utf-8") as handle:
        for row in list(csv.reader(handle))[1:]:
            for depth in range(4):
                counts[tuple(row[:depth])] = counts.get(tuple(row[:depth]), 0) + 1
    return counts


def _plan(world: Path, *extra: str, source: str = "prior") -> dict:
    where = ["--prior", str(world / "prior.csv")] if source == "prior" else ["--input", str(world / "data.csv")]
    return ["hierarchy", "plan", "--levels", LEVELS, *where, "--epsilon", "1", *extra, "--json"]


def _release(world: Path, *extra: str, dataset: str = "schools", out: str | None = "out.csv") -> list[str]:
    """Without --prior the data's categories are the node list: declared public (--categories-public)."""
    outputs = ["--out", str(world / out)] if out else []
    declared = [] if "--prior" in extra else ["--categories-public"]
    return ["hierarchy", "release", str(world / "data.csv"), "--levels", LEVELS, "--epsilon", "1",
            "--dataset", dataset, *outputs, *declared, *extra]


def _bundle(world: Path, name: str = "rel") -> list[str]:
    return ["--bundle", str(world), "--key", str(world / "officer.key"), "--passphrase-file", str(world / "pass.txt"),
            "--name", name]


def _ledger(capsys) -> dict:
    code, out, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert code == 0
    return json.loads(out)


def _check_projection(report: dict, sizes: list[int]) -> None:
    rows = report["projected"]["levels"]
    assert [r["level"] for r in rows] == list(range(len(sizes)))
    assert [r["nodes"] for r in rows] == sizes
    for r in rows:
        assert r["bias2"] >= 0 and r["variance"] >= 0
        assert r["mse"] == pytest.approx(r["bias2"] + r["variance"], rel=1e-9, abs=1e-9)
    assert rows[0]["mse"] == 0  # change: the root N is public and exact
    assert all(r["mse"] > 0 for r in rows[1:])


# ---------------------------------------------------------------- plan
@pytest.mark.parametrize("allocation", ["uniform", "optimal"])
def test_plan_from_a_prior_prints_level_budgets_summing_to_epsilon_and_the_projection(world, capsys, allocation):
    code, out, err = run_cli(_plan(world, "--allocation", allocation, "--consistency", "none"), capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["levels"] == LEVELS.split(",")
    assert report["node_list_source"] == "prior file" and report["prior_source"] == "prior file"
    assert report["counts_from_data"] is False
    assert report["budget_unit"] == "epsilon" and report["noise"] == "laplace"
    assert report["level_budgets"][0] == 0  # change: the root takes no budget
    assert math.fsum(report["level_budgets"]) == pytest.approx(1.0, rel=1e-9)
    assert report["charge"] == {"epsilon": 1.0, "delta": 0.0, "rho": 0.5}
    sizes = report["level_sizes"]
    assert sizes[0] == 1 and report["nodes"] == sum(sizes)
    _check_projection(report, sizes)
    assert report["projected"]["method"] == "closed form" and report["projected"]["counts"] == "the prior's counts"
    # the variance of the clamped count is at most the noise's (independently: the discrete Laplace's)
    for row, budget in zip(report["projected"]["levels"][1:], report["level_budgets"][1:]):
        t = laplace_scale(2, budget)
        q = math.exp(-1 / float(t))
        assert row["variance"] <= row["nodes"] * 2 * q / (1 - q) ** 2 * (1 + 1e-9)


def test_optimal_allocation_beats_uniform_on_the_weighted_mse(world, capsys):
    figures = {}
    for allocation in ("uniform", "optimal"):
        code, out, err = run_cli(_plan(world, "--allocation", allocation, "--consistency", "none",
                                       "--weights", "0,1,1,2"), capsys)
        assert code == 0, err
        figures[allocation] = json.loads(out)["projected"]["weighted_mse"]
    assert figures["optimal"] < figures["uniform"]


def test_plan_with_a_target_charges_the_least_epsilon_that_meets_it(world, capsys):
    code, out, err = run_cli(_plan(world, "--allocation", "optimal", "--consistency", "none"), capsys)
    assert code == 0, err
    at_one = json.loads(out)["projected"]["weighted_mse"]
    code, out, err = run_cli(_plan(world, "--allocation", f"target:{2 * at_one}", "--consistency", "none"), capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["allocation"] == "target"
    assert report["charge"]["epsilon"] < 1
    # met at the noise scales as rounded (exact rationals ≥ Δ/ε_ℓ), and the least ε: close to the target
    assert report["projected"]["weighted_mse"] <= 2 * at_one * (1 + 1e-12)
    assert report["projected"]["weighted_mse"] == pytest.approx(2 * at_one, rel=1e-3)


def test_plan_gaussian_budgets_are_rho_and_sum_to_the_cks_rho(world, capsys):
    code, out, err = run_cli(_plan(world, "--delta", "1e-7", "--noise", "gaussian"), capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["budget_unit"] == "rho"
    rho = zcdp_rho(1.0, 1e-7)
    assert math.fsum(report["level_budgets"]) == pytest.approx(rho, rel=1e-9)
    assert report["charge"]["delta"] == 1e-7 and report["charge"]["rho"] == pytest.approx(rho, rel=1e-12)


def test_plan_with_alpha_shows_both_mechanisms_projected_alpha_mrmse(world, capsys):
    code, out, err = run_cli(_plan(world, "--delta", "1e-7", "--alpha", "0.5"), capsys)
    assert code == 0, err
    figures = json.loads(out)["alpha_mrmse"]
    assert figures["alpha"] == 0.5 and figures["recommended"] in ("gaussian", "multiplicative")
    for mechanism in ("gaussian", "multiplicative"):
        levels = figures[mechanism]["levels"]
        assert [f["level"] for f in levels] == [0, 1, 2, 3]
        assert figures[mechanism]["alpha_mrmse"] == pytest.approx(max(f["alpha_rmse"] for f in levels))
    lower = min(("gaussian", "multiplicative"), key=lambda m: figures[m]["alpha_mrmse"])
    assert figures["recommended"] == lower
    code, out, err = run_cli(_plan(world, "--alpha", "0.5"), capsys)  # δ = 0: no (ε, δ) mechanism to compare
    assert code == 0 and json.loads(out)["alpha_mrmse"] is None


@pytest.mark.slow
def test_multiplicative_release_charges_epsilon_and_delta_without_rho(world, capsys):
    code, out, err = run_cli(_release(world, "--delta", "1e-7", "--noise", "multiplicative", "--alpha", "0.5",
                                      "--json", *_bundle(world, "mult"), out=None), capsys)
    assert code == 0, err
    entry = _ledger(capsys)["releases"][0]
    assert (entry["epsilon"], entry["delta"], entry["rho"]) == (1.0, 1e-7, None)
    assert entry["mechanism"] == "sparse_vector_hierarchy"
    manifest = json.loads((world / "mult.manifest.json").read_text(encoding="utf-8"))
    assert manifest["noise"] == "multiplicative" and manifest["ledger"]["charged"]["rho"] is None
    code, out, err = run_cli(["verify", str(world / "mult.manifest.json"), "--pubkey", str(world / "officer.pub")],
                             capsys)
    assert code == 0, err
    code, out, err = run_cli(["ledger", "show"], capsys)
    assert "δ = 1e-07" in out  # the δ of a release without a ρ is shown too


def test_plan_from_the_data_reads_it_for_the_node_list_only(world, capsys):
    code, out, err = run_cli(_plan(world, source="input"), capsys)
    assert code == 0, err
    report = json.loads(out)
    assert "node list only" in report["node_list_source"] and "counts were not used" in report["node_list_source"]
    assert report["counts_from_data"] is False and report["prior_source"] == "none"
    # under change N is public: the errors are projected at N records spread evenly, and the plan records N
    truth = _truth(world)
    n = truth[()]
    assert report["projected"]["counts"] == f"{n:,} records (N, public under change) assumed spread evenly over the categories"
    assert report["plan"]["assumed_records"] == n
    # the data's node list: 4 regions, the true number of districts and schools
    assert report["level_sizes"] == [1] + [sum(1 for p in truth if len(p) == d) for d in (1, 2, 3)]
    # under add/remove N is private: the data's row count is never used; the noise alone, or a typed estimate
    code, out, err = run_cli(_plan(world, "--neighbours", "addremove", source="input"), capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["projected"]["counts"] == "no counts (the noise alone)" and "assumed_records" not in report["plan"]
    assert report["projected"]["method"].startswith("noise only")
    assert all(r["bias2"] == 0 and r["median_count"] is None for r in report["projected"]["levels"])
    assert report["warnings"] and "--n" in report["warnings"][0]
    code, out, err = run_cli(_plan(world, "--neighbours", "addremove", "--n", "5000", source="input"), capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["plan"]["assumed_records"] == 5000 and report["projected"]["counts"].startswith("5,000 records")


def test_plan_optimal_needs_counts_and_takes_the_data_only_when_opted_in(world, capsys):
    code, out, err = run_cli(_plan(world, "--allocation", "optimal", source="input"), capsys)
    assert code == 2 and out == ""
    assert "--prior" in err and "--counts-from-data" in err and len(err.strip().splitlines()) == 1
    code, out, err = run_cli(_plan(world, "--allocation", "optimal", "--counts-from-data", source="input"), capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["counts_from_data"] is True and report["prior_source"] == "confidential data (opted in)"
    assert "--counts-from-data" in report["node_list_source"]


def test_plan_text_lists_the_levels(world, capsys):
    code, out, err = run_cli(_plan(world)[:-1], capsys)
    assert code == 0, err
    assert "region > district > school" in out and "weighted MSE" in out and "ε = 1" in out


# ---------------------------------------------------------------- release
@pytest.mark.slow
def test_release_to_csv_records_epsilon_in_the_ledger_and_writes_a_consistent_tree(world, capsys):
    before = _ledger(capsys)
    code, out, err = run_cli(_release(world, "--consistency", "topdown", "--json"), capsys)
    assert code == 0, err
    summary = json.loads(out)
    after = _ledger(capsys)
    assert len(after["releases"]) == len(before["releases"]) + 1
    entry = after["releases"][0]
    assert entry["release_id"] == summary["release_id"] and entry["dataset_id"] == "schools"
    assert (entry["epsilon"], entry["delta"], entry["rho"]) == (1.0, 0.0, 0.5)  # pure ε-DP is ε²/2-zCDP
    assert entry["mechanism"] == "discrete_laplace_hierarchy"
    assert entry["description"]["node_list_source"] == "data (declared public)"
    assert summary["secure_noise"] is True and summary["outputs"]["csv"] == str(world / "out.csv")
    assert math.fsum(summary["level_budgets"]) == pytest.approx(1.0)
    _check_projection(summary, summary["level_sizes"])
    # the published projection is the plan's (the figures `hierarchy plan` states), at N spread evenly (change)
    assert summary["projected"]["counts"] == (f"{summary['n_released']:,} records (N, public under change) assumed "
                                              "spread evenly over the categories")
    with open(world / "out.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["level", "level_name", "path", "released_count", "ci95_low", "ci95_high"]
    truth = _truth(world)
    assert len(rows) == len(truth) == summary["nodes"]
    released = {(): 0}
    for row in rows:
        path = tuple(row["path"].split(" > ")) if row["path"] else ()
        assert int(row["level"]) == len(path)
        count, low, high = int(row["released_count"]), int(row["ci95_low"]), int(row["ci95_high"])
        assert 0 <= low <= count <= high
        released[path] = count
    assert set(released) == set(truth)
    assert released[()] == truth[()] == summary["n_released"]  # change: N exact
    for path in released:  # every parent is the sum of its children
        children = [c for c in released if len(c) == len(path) + 1 and c[:len(path)] == path]
        if children:
            assert released[path] == sum(released[c] for c in children)


def test_gaussian_release_charges_epsilon_delta_and_rho(world, capsys):
    code, out, err = run_cli(_release(world, "--delta", "1e-7", "--noise", "gaussian", "--json"), capsys)
    assert code == 0, err
    entry = _ledger(capsys)["releases"][0]
    assert entry["epsilon"] == 1.0 and entry["delta"] == 1e-7
    assert entry["rho"] == pytest.approx(zcdp_rho(1.0, 1e-7), rel=1e-12)
    assert entry["mechanism"] == "discrete_gaussian_hierarchy"
    assert math.fsum(json.loads(out)["level_budgets"]) == pytest.approx(entry["rho"], rel=1e-9)


@pytest.mark.slow
def test_signed_bundle_from_a_prior_verifies_and_a_changed_csv_fails(world, capsys):
    code, out, err = run_cli(_release(world, "--prior", str(world / "prior.csv"), "--allocation", "optimal",
                                      "--json", *_bundle(world), out=None), capsys)
    assert code == 0, err
    summary = json.loads(out)
    manifest_path = world / "rel.manifest.json"
    assert summary["outputs"]["bundle"] == str(manifest_path)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    # version 4: the CLI records the data source (a CSV counted on this computer; never its path)
    assert manifest["kind"] == "hierarchy" and manifest["schema_version"] == 4
    assert manifest["source"] == {"kind": "file", "format": "csv", "engine": "this computer",
                                  "dialect": {"delimiter": ",", "decimal": ".", "origin": "default"}}
    assert manifest["prior"]["source"] == "prior file" and manifest["prior"]["counts_from_data"] is False
    assert manifest["prior"]["file"]["name"] == "prior.csv"
    assert manifest["hierarchy"]["node_list_source"] == "prior file"
    assert manifest["hierarchy"]["levels"] == LEVELS.split(",")
    assert manifest["ledger"]["release_id"] == summary["release_id"]
    assert manifest["ledger"]["charged"] == {"epsilon": 1.0, "delta": 0.0, "rho": 0.5}
    assert manifest["plan"]["allocation"] == "optimal"
    entry = _ledger(capsys)["releases"][0]
    assert entry["bundle"] == str(manifest_path.resolve())
    # the prior's extra school (count 0 in the prior, absent from the data) is a published node
    with open(world / "rel.csv", newline="", encoding="utf-8") as handle:
        paths = [row["path"] for row in csv.DictReader(handle)]
    assert "R1 > R1-D1 > R1-D1-S9" in paths
    assert (world / "rel.pdf").read_bytes().startswith(b"%PDF")
    code, out, err = run_cli(["verify", str(manifest_path), "--pubkey", str(world / "officer.pub")], capsys)
    assert code == 0, err
    assert "schema version 4" in out and "VERIFIED" in out
    code, out, err = run_cli(["quantiles", str(manifest_path)], capsys)  # a CDF-only command says so
    assert code == 2 and "hierarchy" in err and "no quantiles" in err
    text = (world / "rel.csv").read_text(encoding="utf-8")
    (world / "rel.csv").write_text(text.replace("\n1,", "\n1,1", 1), encoding="utf-8")
    code, out, err = run_cli(["verify", str(manifest_path), "--pubkey", str(world / "officer.pub")], capsys)
    assert code == 1 and "FAILED" in err and "rel.csv" in err


@pytest.mark.slow
def test_counts_from_data_are_recorded_in_the_manifest(world, capsys):
    code, _out, err = run_cli(_release(world, "--allocation", "optimal", "--counts-from-data", "--json",
                                      *_bundle(world, "opted"), out=None), capsys)
    assert code == 0, err
    manifest = json.loads((world / "opted.manifest.json").read_text(encoding="utf-8"))
    assert manifest["prior"] == {"source": "confidential data (opted in)", "counts_from_data": True, "file": None}
    assert manifest["hierarchy"]["node_list_source"] == "data (declared public)"
    assert _ledger(capsys)["releases"][0]["description"]["counts_from_data"] is True


def test_a_release_is_refused_before_the_data_is_read_without_a_cap(world, capsys, monkeypatch):
    import dpgui.data.hierarchy

    def never(*args, **kwargs):
        raise AssertionError("the data was read")

    monkeypatch.setattr(dpgui.data.hierarchy, "count_paths", never)
    code, _out, err = run_cli(_release(world, dataset="nocap"), capsys)
    assert code == 2 and "no privacy budget is set" in err and "AssertionError" not in err
    code, _out, err = run_cli(_release(world, "--epsilon", "20"), capsys)  # more than the cap of 10
    assert code == 2 and "AssertionError" not in err
    code, _out, err = run_cli(_release(world, "--delta", "1e-7", "--noise", "gaussian", dataset="pure"), capsys)
    assert code == 2 and "δ = 0" in err and "--noise laplace" in err and "AssertionError" not in err
    assert not (world / "out.csv").exists()
    with pytest.raises(AssertionError, match="the data was read"):  # with a cap, the same release reaches the data
        run_cli(_release(world), capsys)


# ---------------------------------------------------------------- simulate
def test_simulate_matches_the_closed_form_within_its_standard_error(tmp_path, capsys):
    """Large counts (no clamping): each node's error is the level's discrete Laplace noise Z, so the
    level's summed squared error over R trials has standard error sqrt(n (E Z⁴ − (E Z²)²) / R)."""
    prior = _write_rows(tmp_path / "big.csv", [*LEVELS.split(","), "count"],
                        [[*path, n] for path, n in _tree(11, 2000, 4000)])
    trials = 400
    code, out, err = run_cli(["hierarchy", "simulate", "--levels", LEVELS, "--prior", str(prior), "--epsilon", "1",
                              "--consistency", "none", "--trials", str(trials), "--seed", "3", "--json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["insecure_seeded_noise"] is True and report["seed"] == 3 and report["trials"] == trials
    assert report["projected"]["method"] == "closed form"
    for row, budget in zip(report["side_by_side"][1:], report["level_budgets"][1:]):
        t = laplace_scale(2, budget)
        support = np.arange(-400, 401)
        pmf = discrete_laplace_pmf(support, t)
        second, fourth = float(np.sum(pmf * support**2.0)), float(np.sum(pmf * support**4.0))
        se = math.sqrt(row["nodes"] * (fourth - second**2) / trials)
        assert row["projected"]["mse"] == pytest.approx(row["nodes"] * second, rel=1e-6)
        assert abs(row["empirical"]["mse"] - row["projected"]["mse"]) < 4 * se, (row, se)


def test_simulate_on_the_data_with_consistency_prints_both_sides(world, capsys):
    code, out, err = run_cli(["hierarchy", "simulate", "--levels", LEVELS, "--input", str(world / "data.csv"),
                              "--epsilon", "1", "--trials", "20", "--seed", "1", "--json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert len(report["side_by_side"]) == 4
    for row in report["side_by_side"][1:]:
        assert row["empirical"]["mse"] > 0 and row["projected"]["mse"] > 0
        assert 0.2 < row["empirical"]["mse"] / row["projected"]["mse"] < 5


# ---------------------------------------------------------------- bad input: exit 2, one line, nothing spent or written
def _two_parents(world: Path) -> Path:
    return _write_rows(world / "input-bad.csv", LEVELS.split(","), [["OR", "Portland", "A"], ["ME", "Portland", "B"]])


def _empty_value(world: Path) -> Path:
    return _write_rows(world / "input-bad.csv", LEVELS.split(","), [["OR", "Salem", "A"], ["OR", " ", "B"]])


def _missing_value(world: Path) -> Path:
    return _write_rows(world / "input-bad.csv", LEVELS.split(","), [["OR", "Salem", "A"], ["OR", "", "B"]])


def _million_values(world: Path) -> Path:
    n = 1_000_000
    table = pa.table({"region": pa.array(["A", "B"] * (n // 2)),
                      "district": pa.array(["A-1", "B-1"] * (n // 2)),
                      "school": pa.array([f"S{i}" for i in range(n)])})
    pq.write_table(table, world / "input-bad.parquet")
    return world / "input-bad.parquet"


def _not_in_prior(world: Path) -> Path:
    rows = [["R1", "R1-D1", "R1-D1-S1"], ["R7", "R7-D1", "R7-D1-S1"]]
    return _write_rows(world / "input-bad.csv", LEVELS.split(","), rows)


BAD_INPUTS = [
    ("a value under two parents", _two_parents, [], ["two parents", "'district'", "'region'", "PARENT/VALUE"]),
    ("an empty level value", _empty_value, [], ["district", "empty"]),
    ("missing values", _missing_value, [], ["district", "missing"]),
    ("10^6 distinct values in a level", _million_values, [], ["school", "500,000"]),
    ("a path that is not in the prior", _not_in_prior, ["--prior", "prior.csv"], ["1 path(s)", "prior"]),
    ("one level only", None, ["--levels", "region"], ["one level only", "--levels region,district"]),
    ("more than 4 levels", None, ["--levels", "a,b,c,d,e"], ["5 levels", "at most 4"]),
    ("a level column that does not exist", None, ["--levels", "region,county"], ["county"]),
    ("gaussian without delta", None, ["--noise", "gaussian"], ["δ"]),
    ("optimal without counts", None, ["--allocation", "optimal"], ["--prior", "--counts-from-data"]),
    ("a bad target", None, ["--allocation", "target:-3"], ["target", "> 0"]),
    ("no dataset", None, ["--dataset"], []),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_exits_2_in_one_line_with_nothing_spent_or_written(world, capsys, case):
    _, make, extra, words = case
    data = make(world) if make is not None else world / "data.csv"
    extra = [str(world / e) if e == "prior.csv" else e for e in extra]
    args = ["hierarchy", "release", str(data), "--levels", LEVELS, "--epsilon", "1", "--dataset", "schools",
            *_bundle(world, "rel-bad"), "--out", str(world / "out.csv"), "--categories-public"]
    if extra[:1] == ["--levels"]:
        args[args.index("--levels") + 1] = extra[1]
        extra = extra[2:]
    if extra == ["--dataset"]:
        i = args.index("--dataset")
        del args[i:i + 2]
        extra = []
    before = _ledger(capsys)
    files = sorted(p.name for p in world.iterdir())
    code, out, err = run_cli(args + extra, capsys)
    assert code == 2, (out, err)
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for word in words:
        assert word.lower() in lines[0].lower(), lines[0]
    assert _ledger(capsys) == before  # nothing spent
    assert sorted(p.name for p in world.iterdir()) == files  # nothing written


@pytest.mark.slow
def test_a_numeric_level_column_is_allowed_and_said_so_only_from_the_files_types(world, capsys):
    """A level column of numbers is allowed. A Parquet file's own type says it is numeric: noted. A CSV's
    "type" would be read from its cells (one record's value would decide the note): nothing is said."""
    rows = [["OR", "97201"], ["OR", "97202"], ["WA", "98101"]] * 30
    data = _write_rows(world / "numeric.csv", ["state", "zip"], rows)
    pq.write_table(pa.table({"state": [r[0] for r in rows], "zip": [int(r[1]) for r in rows]}), world / "numeric.parquet")
    for source, noted in ((data, False), (world / "numeric.parquet", True)):
        code, out, err = run_cli(["hierarchy", "release", str(source), "--levels", "state,zip", "--epsilon", "1",
                                  "--dataset", "schools", "--out", str(world / f"zip-{noted}.csv"),
                                  "--categories-public", "--json"], capsys)
        assert code == 0, err
        summary = json.loads(out)
        said = [note for note in summary["notes"] if "zip" in note and "categories" in note]
        assert bool(said) == noted and (("zip" in err) == noted), (summary["notes"], err)
        assert summary["level_sizes"] == [1, 2, 3]


# ---------------------------------------------------------------- the bundled sample
@pytest.mark.slow
def test_the_bundled_hierarchy_sample_plans_and_releases(tmp_path, capsys):
    from dpgui.data.hierarchy import HIERARCHY_SAMPLE_LEVELS, hierarchy_sample_path

    sample = str(hierarchy_sample_path())
    levels = ",".join(HIERARCHY_SAMPLE_LEVELS)
    code, out, err = run_cli(["hierarchy", "plan", "--levels", levels, "--input", sample, "--epsilon", "0.5",
                              "--counts-from-data", "--allocation", "optimal", "--consistency", "none", "--json"], capsys)
    assert code == 0, err
    plan = json.loads(out)
    assert plan["level_sizes"][0] == 1 and len(plan["level_sizes"]) == 4
    assert math.fsum(plan["level_budgets"]) == pytest.approx(0.5)
    with Ledger() as ledger:
        ledger.set_cap("flight-routes", 5)
    code, out, err = run_cli(["hierarchy", "release", sample, "--levels", levels, "--epsilon", "0.5",
                              "--dataset", "flight-routes", "--out", str(tmp_path / "routes.csv"),
                              "--categories-public", "--json"], capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["n_released"] == 336_776 and summary["level_sizes"] == plan["level_sizes"]
    with open(tmp_path / "routes.csv", newline="", encoding="utf-8") as handle:
        assert sum(1 for _ in csv.DictReader(handle)) == summary["nodes"]
