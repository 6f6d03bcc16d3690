"""``dpgui counts release``: the toy third statistic, through the registry, from a file to a signed bundle
that ``dpgui verify`` accepts, the ledger charged the ε given."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from cli_helpers import run_cli


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
