"""``dpgui release --out OUT.csv`` writes what ``dpgui quantiles OUT.csv`` needs: the release record
``OUT.release.json`` beside the CSV (the plan, N as released, the missing values' count, the CSV's
SHA-256). A bare CSV is read back with its intervals; a CSV changed after it was written is refused;
the record is an output like the CSV (refused before the spend if it exists, unless ``--force``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli

DATASET = "wages"


@pytest.fixture
def folder(tmp_path, capsys) -> Path:
    (tmp_path / "wages.csv").write_text("wage\n" + "".join(f"{(i * 37) % 100}\n" for i in range(400)), encoding="utf-8")
    assert run_cli(["ledger", "cap", DATASET, "10", "--reason", "test"], capsys)[0] == 0
    return tmp_path


def _release(folder: Path, capsys, *extra: str, out: str = "out.csv") -> tuple[int, str, str]:
    return run_cli(["release", str(folder / "wages.csv"), "--column", "wage", "--lower", "0", "--upper", "100",
                    "--bins", "20", "--epsilon", "1", "--dataset", DATASET, "--out", str(folder / out), *extra], capsys)


def _spent(capsys) -> float:
    code, out, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert code == 0
    return json.loads(out)["datasets"][0]["epsilon_spent"]


@pytest.mark.slow
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_quantiles_reads_a_bare_out_csv_back_with_the_intervals_release_printed(folder, capsys, neighbours):
    code, out, err = _release(folder, capsys, "--json", "--neighbours", neighbours)
    assert code == 0, err
    printed = json.loads(out)
    assert printed["outputs"]["record"] == str(folder / "out.release.json")
    record = json.loads((folder / "out.release.json").read_text(encoding="utf-8"))
    assert record["csv"]["name"] == "out.csv" and len(record["csv"]["sha256"]) == 64
    assert record["n_released"] == printed["n_released"] and record["neighbours"] == neighbours
    code, out, err = run_cli(["quantiles", str(folder / "out.csv"), "--json"], capsys)
    assert code == 0, err
    read_back = json.loads(out)
    assert read_back["quantiles"] == printed["quantiles"]  # the same intervals, from the CSV and its record
    assert read_back["n"] == printed["n_released"] and read_back["record"] == str(folder / "out.release.json")


def test_a_csv_changed_after_it_was_written_is_not_read_with_its_record(folder, capsys):
    assert _release(folder, capsys)[0] == 0
    path = folder / "out.csv"
    path.write_text(path.read_text(encoding="utf-8").replace("\n", "\r\n"), encoding="utf-8")
    code, _, err = run_cli(["quantiles", str(path)], capsys)
    assert code == 2 and "out.csv is not the CSV that out.release.json was written with" in err


def test_a_renamed_copy_is_read_with_plan_naming_its_record(folder, capsys):
    assert _release(folder, capsys)[0] == 0
    copy = folder / "copy.csv"
    copy.write_bytes((folder / "out.csv").read_bytes())
    code, _, err = run_cli(["quantiles", str(copy)], capsys)
    assert code == 2 and "--plan OUT.release.json" in err and "copy.release.json" in err
    code, out, err = run_cli(["quantiles", str(copy), "--plan", str(folder / "out.release.json")], capsys)
    assert code == 0 and "copy.csv" in out, err


def test_an_existing_record_is_refused_before_the_spend_and_replaced_with_force(folder, capsys):
    (folder / "out.release.json").write_text("{}", encoding="utf-8")
    code, _, err = _release(folder, capsys)
    assert code == 2 and "out.release.json already exists" in err and "--force" in err
    assert not (folder / "out.csv").exists() and _spent(capsys) == 0
    code, _, err = _release(folder, capsys, "--force")
    assert code == 0, err
    assert json.loads((folder / "out.release.json").read_text(encoding="utf-8"))["csv"]["name"] == "out.csv"
    assert _spent(capsys) == 1
