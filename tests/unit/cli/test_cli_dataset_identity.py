"""The CLI's dataset identity (docs/privacy-model.md, "Dataset identity") and private N
under addremove in `simulate`."""

from __future__ import annotations

import json
import shutil

import pytest

from dpgui.report.ledger import Ledger

from cli_helpers import run_cli

ROWS = 1234


def _data(tmp_path, name: str = "payroll.csv", rows: int = ROWS):
    path = tmp_path / name
    path.write_text("salary,grade\n" + "".join(f"{(i * 37) % 5000},{i % 7}\n" for i in range(rows)), encoding="utf-8")
    return path


def _release(path, out, *extra: str) -> list[str]:
    return ["release", str(path), "--column", "salary", "--lower", "0", "--upper", "5000", "--bins", "20",
            "--epsilon", "0.5", "--out", str(out), *extra]


def _spent() -> dict[str, float]:
    with Ledger() as ledger:
        return {t.dataset_id: t.epsilon_spent for t in ledger.datasets()}


def test_release_without_dataset_is_refused_in_one_line_saying_why(tmp_path, capsys):
    path = _data(tmp_path)
    assert run_cli(["ledger", "cap", "payroll", "2"], capsys)[0] == 0
    code, _, err = run_cli(_release(path, tmp_path / "r.csv"), capsys)
    assert code == 2 and err.count("\n") == 1
    assert "--dataset" in err and "copy" in err and "Traceback" not in err
    assert not (tmp_path / "r.csv").exists() and _spent() == {"payroll": 0.0}


def test_a_copy_under_a_new_name_is_refused_unless_confirmed_as_new(tmp_path, capsys):
    path = _data(tmp_path)
    assert run_cli(["ledger", "cap", "payroll", "2"], capsys)[0] == 0
    code, _, err = run_cli(_release(path, tmp_path / "r1.csv", "--dataset", "payroll"), capsys)
    assert code == 0, err
    copy = tmp_path / "payroll-copy.csv"
    shutil.copyfile(path, copy)
    assert run_cli(["ledger", "cap", "payroll-copy", "2"], capsys)[0] == 0
    code, _, err = run_cli(_release(copy, tmp_path / "r2.csv", "--dataset", "payroll-copy"), capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "same column names and number of rows as dataset 'payroll'" in err and "--new-dataset" in err
    assert "--dataset payroll" in err
    assert not (tmp_path / "r2.csv").exists() and _spent() == {"payroll": 0.5, "payroll-copy": 0.0}
    # the same data under its ledgered name is fine
    code, _, err = run_cli(_release(copy, tmp_path / "r3.csv", "--dataset", "payroll"), capsys)
    assert code == 0 and err == ""
    # confirmed as different data: released, with a warning on stderr
    code, _, err = run_cli(_release(copy, tmp_path / "r4.csv", "--dataset", "payroll-copy", "--new-dataset"), capsys)
    assert code == 0 and "warning" in err and "'payroll-copy' is released as a new dataset" in err
    assert _spent() == {"payroll": 1.0, "payroll-copy": 0.5}
    # other data (another row count) under a new name: no question
    other = _data(tmp_path, "other.csv", ROWS + 1)
    assert run_cli(["ledger", "cap", "other", "2"], capsys)[0] == 0
    code, _, err = run_cli(_release(other, tmp_path / "r5.csv", "--dataset", "other"), capsys)
    assert code == 0 and err == ""
    # the fingerprint never leaves the local ledger
    code, out, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert code == 0 and "fingerprint" not in out


def test_an_old_ledger_without_fingerprints_stays_readable(tmp_path, capsys):
    import sqlite3

    from dpgui.report.ledger import datasets_like, default_ledger_path, is_new_dataset

    assert run_cli(["ledger", "cap", "payroll", "2"], capsys)[0] == 0
    with sqlite3.connect(default_ledger_path()) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "dataset_fingerprints" not in tables  # created only when first needed
    with Ledger() as ledger:
        assert datasets_like(ledger, "0" * 64, "x") == [] and is_new_dataset(ledger, "payroll")
    code, _, err = run_cli(_release(_data(tmp_path), tmp_path / "r.csv", "--dataset", "payroll"), capsys)
    assert code == 0, err


def test_simulate_on_a_file_prints_no_exact_n_under_addremove(tmp_path, capsys):
    path = _data(tmp_path)
    base = ["simulate", "--input", str(path), "--column", "salary", "--lower", "0", "--upper", "5000", "--bins", "16",
            "--epsilon", "1", "--trials", "2", "--seed", "1"]
    code, out, err = run_cli([*base, "--neighbours", "addremove", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["n"] == "N is private (addremove): not shown"
    assert str(ROWS) not in out and f"{ROWS:,}" not in out
    assert "cdf_max_std_error" not in data["projected"]
    code, out, err = run_cli([*base, "--neighbours", "addremove"], capsys)
    assert code == 0 and str(ROWS) not in out
    code, out, _ = run_cli([*base, "--json"], capsys)  # under change N is public
    assert json.loads(out)["n"] == ROWS


@pytest.mark.slow
def test_the_new_dataset_warning_does_not_depend_on_the_row_count(tmp_path, capsys):
    """Under add/remove the row count is confidential, and stderr is published: a dataset released with
    --new-dataset gets the same warning whether or not its row count equals a ledgered dataset's (two
    neighbours, one record apart, one of them with payroll's row count)."""
    assert run_cli(["ledger", "cap", "payroll", "2"], capsys)[0] == 0
    assert run_cli(_release(_data(tmp_path), tmp_path / "r0.csv", "--dataset", "payroll"), capsys)[0] == 0
    warnings = []
    for rows, name in ((ROWS, "first"), (ROWS + 1, "second")):
        assert run_cli(["ledger", "cap", name, "2"], capsys)[0] == 0
        code, _, err = run_cli(_release(_data(tmp_path, f"{name}.csv", rows), tmp_path / f"{name}-out.csv",
                                        "--dataset", name, "--new-dataset", "--neighbours", "addremove"), capsys)
        assert code == 0, err
        warnings.append(err.replace(name, "NAME"))
    assert warnings[0] == warnings[1] and "released as a new dataset" in warnings[0]
