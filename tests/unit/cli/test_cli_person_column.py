"""``--person-column NAME`` on the release and plan commands of every statistic: L (``--records-per-person``) is
then enforced (at most L rows of each person counted), the neighbour model is add/remove by default and
``change`` is refused before anything is spent; the words printed, the manifest's ``privacy_unit`` field and the
ledger say which; without it, L is said to be declared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli, signing_key_options
from pdf_helpers import pdf_text

ENFORCED = ("At most 2 records per person, enforced: dpgui kept at most 2 rows of each value of 'pid' (chosen at "
            "random, not by their values)")
DECLARED = "At most 2 records per person — declared by you, not checked by dpgui (no person-ID column)"


def _data(tmp_path: Path) -> Path:
    """p1 has 6 rows, p2 3, p3 and p4 one each: with L = 2, 2 + 2 + 1 + 1 = 6 rows are counted."""
    rows = ([("p1", "WA", "Seattle", 30 + i) for i in range(6)] + [("p2", "OR", "Salem", 50 + i) for i in range(3)]
            + [("p3", "OR", "Portland", 70), ("p4", "WA", "Tacoma", 90)])
    path = tmp_path / "people.csv"
    path.write_text("pid,state,city,age\n" + "".join(f"{p},{s},{c},{a}\n" for p, s, c, a in rows), encoding="utf-8")
    return path


def _commands(data: Path) -> dict[str, list[str]]:
    """Each statistic's release of ``data`` into a bundle named after it (the bundle folder and key added later)."""
    return {
        "cdf": ["release", str(data), "--column", "age", "--lower", "0", "--upper", "100", "--bins", "10",
                "--epsilon", "1"],
        "counts": ["counts", "release", str(data), "--column", "state", "--categories", "WA,OR", "--epsilon", "1"],
        "grouped_cdf": ["grouped", "release", str(data), "--column", "age", "--group-column", "state", "--groups",
                        "WA,OR", "--lower", "0", "--upper", "100", "--bins", "10", "--epsilon", "1"],
        "hierarchy": ["hierarchy", "release", str(data), "--levels", "state,city", "--categories-public",
                      "--epsilon", "1"],
    }


@pytest.mark.parametrize("kind", ["cdf", "counts", "grouped_cdf", "hierarchy"])
def test_a_release_with_a_person_column_enforces_l_and_says_so(kind: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    key = signing_key_options(tmp_path, capsys)
    assert run_cli(["ledger", "cap", "people", "3"], capsys)[0] == 0
    out = tmp_path / "out"
    out.mkdir()
    base = [*_commands(_data(tmp_path))[kind], "--dataset", "people", "--bundle", str(out), *key]
    # change is refused before anything is spent, naming the column and the fix
    code, _, err = run_cli([*base, "--person-column", "pid", "--records-per-person", "2", "--neighbours", "change",
                            "--name", "refused"], capsys)
    assert code == 2 and "neighbour model must be add/remove" in err and "'pid'" in err and "addremove" in err
    code, stdout, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert json.loads(stdout)["datasets"][0]["epsilon_spent"] == 0 and not list(out.iterdir())

    code, stdout, err = run_cli([*base, "--person-column", "pid", "--records-per-person", "2", "--name", "bounded"],
                                capsys)
    assert code == 0, err
    assert ENFORCED in stdout.splitlines()
    manifest = json.loads((out / "bounded.manifest.json").read_text(encoding="utf-8"))
    assert manifest["neighbours"] == "addremove" and manifest["records_per_person"] == 2  # addremove: the default
    assert manifest["privacy_unit"] == {"records_per_person": 2, "enforced": True, "person_column": "pid",
                                        "statement": ENFORCED}
    assert manifest["source"]["privacy_unit"] == {"person_column": "pid", "records_per_person": 2}
    assert ENFORCED.lower() in pdf_text(out / "bounded.pdf").lower()  # the PDF says it too (one sentence or a row)
    code, stdout, _ = run_cli(["verify", str(out / "bounded.manifest.json"), "--pubkey",
                               str(tmp_path / "keys" / "officer.pub")], capsys)
    assert code == 0 and "VERIFIED" in stdout

    code, stdout, err = run_cli([*base, "--records-per-person", "2", "--neighbours", "addremove", "--name", "declared",
                                 "--new-dataset"], capsys)
    assert code == 0, err
    assert DECLARED in stdout.splitlines()
    manifest = json.loads((out / "declared.manifest.json").read_text(encoding="utf-8"))
    assert manifest["privacy_unit"] == {"records_per_person": 2, "enforced": False, "person_column": None,
                                        "statement": DECLARED}
    assert "privacy_unit" not in manifest["source"]
    assert DECLARED.lower() in pdf_text(out / "declared.pdf").lower()


def test_plans_state_the_unit_and_refuse_change_with_a_person_column(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, err = run_cli(["plan", "--bins", "16", "--epsilon", "1", "--person-column", "pid",
                                 "--records-per-person", "2"], capsys)
    assert code == 0, err
    assert "  " + ENFORCED in stdout.splitlines() and "add/remove-one" in stdout
    code, stdout, _ = run_cli(["plan", "--bins", "16", "--epsilon", "1", "--records-per-person", "2"], capsys)
    assert "  " + DECLARED in stdout.splitlines()
    code, _, err = run_cli(["plan", "--bins", "16", "--epsilon", "1", "--person-column", "pid", "--neighbours",
                            "change"], capsys)
    assert code == 2 and "neighbour model must be add/remove" in err
    hierarchy = ["hierarchy", "plan", "--input", str(_data(tmp_path)), "--levels", "state,city", "--epsilon", "1",
                 "--records-per-person", "2"]
    code, stdout, err = run_cli([*hierarchy, "--person-column", "pid"], capsys)
    assert code == 0, err
    assert "  " + ENFORCED in stdout.splitlines()
    code, _, err = run_cli([*hierarchy, "--person-column", "pid", "--neighbours", "change"], capsys)
    assert code == 2 and "neighbour model must be add/remove" in err
