"""``dpgui counts release``: the toy third statistic, through the registry, from a file to a signed bundle
that ``dpgui verify`` accepts, the ledger charged the ε given."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from cli_helpers import run_cli, signing_key_options


def test_counts_release_signs_a_bundle_that_verifies(tmp_path: Path, capsys) -> None:
    data = tmp_path / "people.csv"
    data.write_text("state\nOR\nOR\nWA\n", encoding="utf-8")
    (tmp_path / "pass.txt").write_text("a long passphrase\n", encoding="utf-8")
    keys = tmp_path / "keys"
    assert run_cli(["key", "create", "officer", "--dir", str(keys), "--passphrase-file", str(tmp_path / "pass.txt")],
                   capsys)[0] == 0
    assert run_cli(["ledger", "cap", "people", "1"], capsys)[0] == 0
    out = tmp_path / "out"
    out.mkdir()
    code, stdout, stderr = run_cli(["counts", "release", str(data), "--column", "state", "--categories", "OR,WA",
                                    "--epsilon", "0.5", "--dataset", "people", "--bundle", str(out), "--key",
                                    str(keys / "officer.key"), "--passphrase-file", str(tmp_path / "pass.txt"),
                                    "--name", "toy"], capsys)
    assert code == 0, stderr
    rows = list(csv.DictReader((out / "toy.csv").open(encoding="utf-8")))
    assert [r["category"] for r in rows] == ["OR", "WA"]
    manifest = json.loads((out / "toy.manifest.json").read_text(encoding="utf-8"))
    assert manifest["kind"] == "counts" and manifest["privacy"]["charged"]["epsilon"] == 0.5
    code, stdout, _ = run_cli(["verify", str(out / "toy.manifest.json"), "--pubkey", str(keys / "officer.pub")], capsys)
    assert code == 0 and "VERIFIED" in stdout
    code, stdout, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert json.loads(stdout)["datasets"][0]["epsilon_spent"] == 0.5


def test_renamed_data_is_refused_without_new_dataset_and_a_database_is_counted_where_it_lives(tmp_path: Path,
                                                                                                capsys) -> None:
    """The dataset identity step: the same data (column names, row count) under a new dataset name is refused
    before anything is spent unless --new-dataset says it is different data; the categories from a file; a
    SQLite table counted by the database."""
    import sqlite3

    key = signing_key_options(tmp_path, capsys)
    data = tmp_path / "people.csv"
    data.write_text("state\nOR\nOR\nWA\n", encoding="utf-8")
    listed = tmp_path / "states.txt"
    listed.write_text("WA\nOR\n", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    for dataset in ("people", "copy"):
        assert run_cli(["ledger", "cap", dataset, "1"], capsys)[0] == 0
    base = ["counts", "release", str(data), "--column", "state", "--categories-file", str(listed), "--epsilon", "0.25",
            "--bundle", str(out), *key]
    code, _, stderr = run_cli([*base, "--dataset", "people", "--name", "first"], capsys)
    assert code == 0, stderr
    assert [r["category"] for r in csv.DictReader((out / "first.csv").open(encoding="utf-8"))] == ["WA", "OR"]
    code, _, stderr = run_cli([*base, "--dataset", "copy", "--name", "second"], capsys)
    assert code == 2 and "--new-dataset" in stderr and not (out / "second.csv").exists()
    code, stdout, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert {d["dataset_id"]: d["epsilon_spent"] for d in json.loads(stdout)["datasets"]} == {"people": 0.25, "copy": 0}
    code, _, stderr = run_cli([*base, "--dataset", "copy", "--name", "second", "--new-dataset"], capsys)
    assert code == 0, stderr

    database = tmp_path / "people.db"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE people (state TEXT)")
        connection.executemany("INSERT INTO people VALUES (?)", [("OR",), ("WA",), ("NV",)])
    assert run_cli(["ledger", "cap", "db", "1"], capsys)[0] == 0
    code, _, stderr = run_cli(["counts", "release", f"sqlite:///{database}", "--table", "people", "--column", "state",
                               "--categories", "OR,WA", "--epsilon", "0.25", "--dataset", "db", "--bundle", str(out),
                               "--name", "db", *key], capsys)
    assert code == 2 and "not among the stated categories" in stderr and "NV" not in stderr
    code, stdout, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert {d["dataset_id"]: d["epsilon_spent"] for d in json.loads(stdout)["datasets"]}["db"] == 0  # nothing spent
