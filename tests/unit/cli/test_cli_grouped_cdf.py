"""``dpgui grouped release``: the CDF of a numeric column for each group of a public list, through the registry,
from a file to a signed bundle that ``dpgui verify`` accepts (and refuses once one byte changed), the ledger
charged the plan's ε once for every group; the CSV-only output."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from cli_helpers import run_cli, signing_key_options

ROWS = [("AA", 5.0), ("AA", 12.5), ("DL", -3.0), ("DL", 40.0), ("DL", 7.0), ("UA", 99.0), ("WN", 1.0), ("", 3.0)]


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "flights.csv"
    data.write_text("carrier,dep_delay\n" + "".join(f"{c},{d}\n" for c, d in ROWS), encoding="utf-8")
    return data


def test_grouped_release_signs_a_bundle_that_verifies_and_charges_once(tmp_path: Path, capsys) -> None:
    key = signing_key_options(tmp_path, capsys)
    groups = tmp_path / "carriers.txt"
    groups.write_text("AA\nDL\nB6\n", encoding="utf-8")  # B6 is absent from the data: released from zeros
    assert run_cli(["ledger", "cap", "flights", "2"], capsys)[0] == 0
    out = tmp_path / "out"
    out.mkdir()
    code, stdout, stderr = run_cli(
        ["grouped", "release", str(_data(tmp_path)), "--column", "dep_delay", "--group-column", "carrier",
         "--groups-file", str(groups), "--other", "other", "--lower", "-10", "--upper", "110", "--bins", "12",
         "--epsilon", "0.75", "--dataset", "flights", "--bundle", str(out), "--name", "grouped", "--json", *key],
        capsys)
    assert code == 0, stderr
    printed = json.loads(stdout)
    assert printed["groups"] == ["AA", "DL", "B6", "other"] and len(printed["released_group_sizes"]) == 4
    rows = list(csv.DictReader((out / "grouped.csv").open(encoding="utf-8")))
    assert len(rows) == 4 * 12 and [r["group"] for r in rows[::12]] == ["AA", "DL", "B6", "other"]
    assert [float(r["value"]) for r in rows[:12]] == [float(v) for v in range(0, 120, 10)]
    manifest = json.loads((out / "grouped.manifest.json").read_text(encoding="utf-8"))
    assert manifest["kind"] == "grouped_cdf" and manifest["released_groups"] == ["AA", "DL", "B6", "other"]
    assert manifest["group_sizes"]["released"] == "with noise" and manifest["other_groups"]["policy"] == "other"
    # the charge: pure ε-DP Laplace, the groups in parallel: ε once, δ = 0, ρ = ε²/2 (closed form)
    assert manifest["privacy"]["charged"] == {"epsilon": 0.75, "delta": 0.0, "rho": pytest.approx(0.75 ** 2 / 2)}
    code, stdout, _ = run_cli(["verify", str(out / "grouped.manifest.json"), "--pubkey",
                               str(tmp_path / "keys" / "officer.pub")], capsys)
    assert code == 0 and "VERIFIED" in stdout
    code, stdout, _ = run_cli(["ledger", "show", "--json"], capsys)
    dataset = json.loads(stdout)["datasets"][0]
    assert (dataset["epsilon_spent"], dataset["releases"]) == (0.75, 1)
    # quantiles are of one CDF: the grouped bundle is named for what it is, not refused by another's schema
    code, _, stderr = run_cli(["quantiles", str(out / "grouped.manifest.json")], capsys)
    assert code == 2 and "'grouped_cdf'" in stderr and "no quantiles of one CDF" in stderr and "schema" not in stderr

    # one byte changed in the CSV: the bundle no longer verifies
    data = bytearray((out / "grouped.csv").read_bytes())
    data[-3] = ord("7") if data[-3] != ord("7") else ord("8")
    (out / "grouped.csv").write_bytes(bytes(data))
    code, stdout, stderr = run_cli(["verify", str(out / "grouped.manifest.json"), "--pubkey",
                                    str(tmp_path / "keys" / "officer.pub")], capsys)
    assert code != 0 and "VERIFIED" not in stdout


def test_grouped_release_to_a_csv_and_a_refusal_before_the_spend(tmp_path: Path, capsys) -> None:
    assert run_cli(["ledger", "cap", "flights", "1"], capsys)[0] == 0
    base = ["grouped", "release", str(_data(tmp_path)), "--column", "dep_delay", "--group-column", "carrier",
            "--lower", "0", "--upper", "100", "--bins", "8", "--dataset", "flights"]
    code, _, stderr = run_cli([*base, "--groups", "AA,DL,AA", "--epsilon", "0.5", "--out", str(tmp_path / "x.csv")],
                              capsys)
    assert code == 2 and "listed twice" in stderr and not (tmp_path / "x.csv").exists()
    code, _, stderr = run_cli([*base, "--groups", "AA,DL", "--epsilon", "2", "--out", str(tmp_path / "x.csv")], capsys)
    assert code != 0 and not (tmp_path / "x.csv").exists()  # over the cap: refused before anything is read
    code, stdout, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert json.loads(stdout)["datasets"][0]["epsilon_spent"] == 0
    code, _, stderr = run_cli([*base, "--groups", "AA,DL", "--epsilon", "0.5", "--out", str(tmp_path / "x.csv")], capsys)
    assert code == 0, stderr
    rows = list(csv.DictReader((tmp_path / "x.csv").open(encoding="utf-8")))
    assert [r["group"] for r in rows[::8]] == ["AA", "DL"] and len(rows) == 16  # the others dropped
    code, stdout, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert json.loads(stdout)["datasets"][0]["epsilon_spent"] == 0.5


def test_the_same_table_is_known_whichever_groups_are_released(tmp_path: Path, capsys) -> None:
    """The data's identity is the table's (its columns and all its rows), not the released groups': a CDF of
    the table under one dataset name, then a grouped release of the same file under another name, leaving
    most groups out, is refused as the same data without ``--new-dataset``."""
    data = _data(tmp_path)
    for dataset in ("flights", "flights-again"):
        assert run_cli(["ledger", "cap", dataset, "2"], capsys)[0] == 0
    code, _, err = run_cli(["release", str(data), "--column", "dep_delay", "--lower", "-10", "--upper", "110",
                            "--bins", "12", "--epsilon", "0.5", "--dataset", "flights",
                            "--out", str(tmp_path / "cdf.csv")], capsys)
    assert code == 0, err
    code, _, err = run_cli(["grouped", "release", str(data), "--column", "dep_delay", "--group-column", "carrier",
                            "--groups", "AA", "--other", "drop", "--lower", "-10", "--upper", "110", "--bins", "12",
                            "--epsilon", "0.5", "--dataset", "flights-again", "--out", str(tmp_path / "g.csv")],
                           capsys)
    assert code == 2 and "same column names and number of rows as dataset 'flights'" in err, err
    assert not (tmp_path / "g.csv").exists()
