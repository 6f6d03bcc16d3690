"""``dpgui ledger show`` says what each release was: its kind (CDF or hierarchy), its
column or levels, and its source (the query or table, or the file's format), from what the ledger
recorded; a recorded text never breaks the listing's lines."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import run_cli
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.report.ledger import Ledger
from dpgui.report.cdf.publish import spend_and_release

pytestmark = pytest.mark.slow

QUERY = "SELECT wage\nFROM wages\n\tWHERE region = 'south'"  # as typed in the window's Query field


def _world(tmp_path: Path) -> Path:
    with sqlite3.connect(tmp_path / "wages.db") as conn:
        conn.execute("CREATE TABLE wages (wage REAL, region TEXT, district TEXT)")
        conn.executemany("INSERT INTO wages VALUES (?, ?, ?)",
                         [(float(i % 97), region, f"{region}/d{i % 5}") for i in range(600)
                          for region in ["south" if i % 3 else "north"]])
    conn.close()
    (tmp_path / "wages.csv").write_text("wage\n" + "\n".join(str(i % 50) for i in range(300)) + "\n", encoding="utf-8")
    with Ledger() as ledger:
        ledger.set_cap("wages", 100.0)
    return tmp_path


def test_ledger_show_lists_each_releases_kind_column_and_source(tmp_path, capsys):
    world = _world(tmp_path)
    url = f"sqlite:///{world / 'wages.db'}"
    cdf = ["--column", "wage", "--lower", "0", "--upper", "100", "--bins", "16", "--epsilon", "1", "--dataset", "wages"]
    for command in (["release", url, "--query", QUERY, *cdf, "--out", str(world / "q.csv")],
                    ["hierarchy", "release", "--source", url, "--table", "wages", "--levels", "region,district",
                     "--categories-public", "--epsilon", "1", "--dataset", "wages", "--out", str(world / "h.csv")],
                    ["release", str(world / "wages.csv"), *cdf, "--out", str(world / "f.csv")]):
        code, _, err = run_cli(command, capsys)
        assert code == 0, err
    with Ledger() as ledger:  # a release recorded without a source (as dpgui did before sources existed)
        spend_and_release(ledger, "wages", "age", "auto", np.ones(16, dtype=np.int64), auto_plan(16, PrivacySpec(1.0)),
                          SecureRandom(), 0.0, 1.0, "l2", n_missing=0)
    code, out, err = run_cli(["ledger", "show"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    said = [lines[i + 1].strip() for i, line in enumerate(lines) if " release " in line and "ε = " in line]
    assert len(said) == 4  # newest first
    assert said[0] == "CDF of column 'age'; source not recorded"
    assert said[1].startswith("CDF of column 'wage' from a CSV file") and said[1].endswith("counted by this computer")
    assert said[2].startswith("hierarchy counts over 'region' > 'district' from table wages in sqlite:///wages.db;")
    assert said[3].startswith(f"CDF of column 'wage' from the query {QUERY!r} on sqlite:///wages.db (its number of rows "
                              "kept private); counted by the database")
    assert "\\n" in said[3]  # the query's line breaks are written as \n
    assert all(line.startswith(("  ", "wages:", "releases")) for line in lines), out  # no recorded text starts a line
