"""``dpgui plan|release|simulate --spec``: a release plan file on the bundled flights sample (the CDF of distance,
the CDF of dep_delay for each carrier, the counts dest_tzone → dest, ε = 1): the optimised split beats the equal
split with equal weights and with 1:4:1, the release is one ledger entry and one bundle that verifies, a plan
over the budget left is refused naming the part, and the simulation matches each part's projection."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import run_cli, signing_key_options

from dpgui.data.sample import plan_sample_path
from dpgui.report.ledger import Ledger

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "flights-plan.toml"


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    """The example plan, its source the bundled sample wherever the tests run."""
    text = EXAMPLE.read_text(encoding="utf-8").replace('"../../resources/sample/flights_plan.parquet"',
                                                       json.dumps(plan_sample_path().as_posix()))
    path = tmp_path / "plan.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("weights", ["1,1,1", "1,4,1"])
def test_the_optimised_split_has_no_more_weighted_error_than_the_equal_split(plan_file, weights, capsys):
    code, out, err = run_cli(["plan", "--spec", str(plan_file), "--weights", weights, "--json"], capsys)
    assert code == 0, err
    plan = json.loads(out)
    w = [float(x) for x in weights.split(",")]
    used = sum(wi * part["margin95"] for wi, part in zip(w, plan["parts"]))  # recomputed here from the parts
    equal = sum(wi * part["equal_split"]["margin95"] for wi, part in zip(w, plan["parts"]))
    assert used == pytest.approx(plan["weighted_margin95"], rel=1e-9)
    assert equal == pytest.approx(plan["equal_split_weighted_margin95"], rel=1e-9)
    assert used <= equal
    assert sum(part["charged"]["epsilon"] for part in plan["parts"]) <= 1.0 + 1e-12  # the parts add up to ε


@pytest.mark.slow
def test_a_plan_file_releases_as_one_ledger_entry_and_one_bundle_that_verifies(plan_file, tmp_path, capsys):
    key = signing_key_options(tmp_path, capsys)
    bundles = tmp_path / "bundles"
    bundles.mkdir()
    with Ledger() as ledger:
        ledger.set_cap("flights-2013", 0.5)
    code, _, err = run_cli(["release", "--spec", str(plan_file), "--bundle", str(bundles), *key], capsys)
    assert code == 2 and "does not fit the budget left" in err and "not part 2 (CDF of dep_delay for each carrier)" in err
    assert list(bundles.iterdir()) == []
    with Ledger() as ledger:
        assert ledger.releases("flights-2013") == []
        ledger.set_cap("flights-2013", 2.0, reason="the plan's budget")
    code, out, err = run_cli(["release", "--spec", str(plan_file), "--bundle", str(bundles), "--json", *key], capsys)
    assert code == 0, err
    released = json.loads(out)
    with Ledger() as ledger:
        entries = ledger.releases("flights-2013")
    assert [e.release_id for e in entries] == [released["release_id"]]
    assert entries[0].epsilon == pytest.approx(sum(p["charged"]["epsilon"] for p in released["parts"]), rel=1e-12)
    manifest = Path(released["outputs"]["bundle"])
    stated = json.loads(manifest.read_text(encoding="utf-8"))["parts"][2]["manifest"]
    assert stated["projection"]["levels"], "the hierarchy part states its plan's errors, as its PDF pages do"
    assert sorted(p.name.split(".", 1)[1] for p in bundles.iterdir()) == [
        "csv", "manifest.json", "manifest.json.minisig", "part1.csv", "part2.csv", "part3.csv", "pdf"]
    code, out, _ = run_cli(["verify", str(manifest), "--pubkey", str(tmp_path / "keys" / "officer.pub")], capsys)
    assert code == 0 and "part 3 (Counts over dest_tzone → dest)" in out
    part = next(bundles.glob("*.part1.csv"))
    shutil.copy(next(bundles.glob("*.part3.csv")), part)  # a part swapped
    code, out, err = run_cli(["verify", str(manifest), "--pubkey", str(tmp_path / "keys" / "officer.pub")], capsys)
    assert code != 0 and "part 1 (CDF of distance)" in out + err


@pytest.mark.slow
def test_the_simulation_of_a_plan_matches_each_parts_projection_within_4_standard_errors(plan_file, capsys):
    code, out, err = run_cli(["simulate", "--spec", str(plan_file), "--trials", "300", "--seed", "3", "--json"], capsys)
    parts = json.loads(out)["parts"]
    assert [p["statistic"] for p in parts] == ["CDF of distance", "CDF of dep_delay for each carrier",
                                               "Counts over dest_tzone → dest"]
    for part in parts:  # recomputed here: the exit code says the same
        assert abs(part["simulated_se"] - part["projected_se"]) <= 4 * part["standard_error_of_simulated_se"], part
        assert part["standard_error_of_simulated_se"] < 0.2 * part["projected_se"]  # precise enough to catch 2×
    assert code == 0, err


@pytest.mark.slow
def test_a_plan_like_last_years_manifest_reruns_on_new_data_and_refuses_a_changed_schema(plan_file, tmp_path, capsys):
    import pandas as pd

    key = signing_key_options(tmp_path, capsys)
    bundles = tmp_path / "bundles"
    bundles.mkdir()
    with Ledger() as ledger:
        ledger.set_cap("flights-2013", 1.0)
        ledger.set_cap("flights-2014", 1.0)
    code, out, err = run_cli(["release", "--spec", str(plan_file), "--bundle", str(bundles), "--json", *key], capsys)
    assert code == 0, err
    last_year = Path(json.loads(out)["outputs"]["bundle"])
    frame = pd.read_parquet(plan_sample_path())
    frame.sample(frac=0.5, random_state=2014).to_parquet(tmp_path / "2014.parquet")
    frame.assign(distance=frame["distance"].astype(str)).to_parquet(tmp_path / "typed.parquet")
    frame.drop(columns=["carrier"]).to_parquet(tmp_path / "nogroup.parquet")
    like = ["--like", str(last_year), "--pubkey", str(tmp_path / "keys" / "officer.pub"), "--dataset", "flights-2014",
            "--epsilon", "0.8", "--bundle", str(bundles), *key]
    for source, problem in (("typed", "column 'distance' of the source holds text values, not numbers"),
                            ("nogroup", "statistic 2 (CDF of dep_delay for each carrier): the source has no column "
                                        "'carrier'")):
        code, _, err = run_cli(["release", *like, "--source", str(tmp_path / f"{source}.parquet")], capsys)
        assert code == 2 and problem in err
    with Ledger() as ledger:
        assert ledger.releases("flights-2014") == []  # refused before the spend
    code, out, err = run_cli(["release", *like, "--source", str(tmp_path / "2014.parquet"), "--json"], capsys)
    assert code == 0, err
    this_year = json.loads(Path(json.loads(out)["outputs"]["bundle"]).read_text(encoding="utf-8"))
    before = json.loads(last_year.read_text(encoding="utf-8"))
    assert [p["settings"] for p in this_year["parts"]] == [p["settings"] for p in before["parts"]]
    assert this_year["dataset"] == "flights-2014" and this_year["privacy"]["epsilon"] == 0.8
    assert this_year["privacy"]["unit"] == before["privacy"]["unit"]
    with Ledger() as ledger:
        assert len(ledger.releases("flights-2014")) == 1 and len(ledger.releases("flights-2013")) == 1
