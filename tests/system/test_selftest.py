"""`dpgui --version` and `dpgui --self-test` (the same commands the installers' CI runs on the frozen app)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpgui import __version__
from dpgui.cli import main
from dpgui.report.ledger import Ledger
from dpgui.selftest import STEPS, run_self_test
from dpgui.selftest.hierarchy import HIERARCHY_DATASET


def test_version_names_dpgui_qt_and_the_libraries(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"dpgui {__version__}"  # not frozen here
    for name in ("python", "numpy", "scipy", "cryptography", "PySide6", "(Qt 6."):
        assert name in out, name


def test_self_test_passes_every_step_and_leaves_the_users_files_alone(tmp_path):
    home = tmp_path / "real-home"
    home.mkdir()
    (home / "marker").write_text("the user's folder")
    env = {**os.environ, "DPGUI_HOME": str(home), "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "dpgui.cli", "--self-test"], env=env, capture_output=True,
                            text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    ok_lines = [line for line in result.stdout.splitlines() if "] ok " in line]
    assert len(ok_lines) == len(STEPS) == 15, result.stdout
    assert any("ok counts of one column" in line for line in ok_lines), result.stdout
    assert "self-test passed" in result.stdout
    assert sorted(p.name for p in home.iterdir()) == ["marker"]  # no ledger, keys or autosave written there
    assert not (tmp_path / ".config").exists()  # Qt settings went to the throw-away folder too


def test_self_test_stops_at_the_first_failure_and_says_which(monkeypatch):
    import dpgui.data.sample as sample

    monkeypatch.setattr(sample, "find_resource", lambda relative: None)  # as if the bundle lacked the sample
    out = io.StringIO()
    assert run_self_test(out) == 1
    text = out.getvalue()
    assert "[2/15] FAILED load the sample dataset: DataError: the sample dataset is missing" in text
    assert "[3/15]" not in text and text.rstrip().endswith("self-test FAILED")


def test_self_test_restores_dpgui_home(monkeypatch, tmp_path):
    import dpgui.data.sample as sample

    monkeypatch.setenv("DPGUI_HOME", str(tmp_path / "mine"))
    monkeypatch.setattr(sample, "find_resource", lambda relative: None)
    run_self_test(io.StringIO())
    assert os.environ["DPGUI_HOME"] == str(tmp_path / "mine")
    assert not Path(tmp_path / "mine").exists()


def _hierarchy_step_run(tmp_path, monkeypatch):
    """The self-test's state after its key step, in a throw-away DPGUI_HOME."""
    from dpgui.selftest import _key, Run

    monkeypatch.setenv("DPGUI_HOME", str(tmp_path / "home"))
    run = Run(tmp_path)
    _key(run)
    return run


def test_hierarchy_step_releases_signs_and_verifies_the_flight_routes_sample(tmp_path, monkeypatch):
    """Step 10 on resources/sample/flight_routes.parquet, checked independently of the step: the ledger
    charged ε = 1 to its own dataset and points at the bundle; the bundle verifies with the throw-away
    public key; its CSV lists every node of dest_tzone > dest > route once, as non-negative whole
    numbers whose children add up to their parent, the root being the sample's number of rows."""
    import csv
    from collections import defaultdict

    import pyarrow.parquet as pq

    from dpgui.data.hierarchy import HIERARCHY_SAMPLE_LEVELS, hierarchy_sample_path
    from dpgui.report.bundle import verify_bundle
    from dpgui.report.keystore import load_public_key
    from dpgui.selftest.hierarchy import hierarchy_step

    run = _hierarchy_step_run(tmp_path, monkeypatch)
    detail = hierarchy_step(run)
    assert "dest_tzone > dest > route" in detail and "a one-byte change is caught" in detail
    paths = run.values["hierarchy_paths"]
    assert verify_bundle(paths.manifest, load_public_key(run.values["public_path"])).ok
    with Ledger() as ledger:
        totals = ledger.totals(HIERARCHY_DATASET)
        entries = ledger.releases(HIERARCHY_DATASET)
    assert totals.epsilon_spent == 1.0 and totals.releases == 1 and len(entries) == 1
    assert entries[0].bundle == str(paths.manifest.resolve())

    table = pq.read_table(hierarchy_sample_path(), columns=list(HIERARCHY_SAMPLE_LEVELS))
    truth = {tuple(row) for row in zip(*(table.column(c).to_pylist() for c in HIERARCHY_SAMPLE_LEVELS))}
    with paths.csv.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    by_level: dict[int, dict[str, int]] = defaultdict(dict)
    for row in rows:
        by_level[int(row["level"])][row["path"]] = int(row["released_count"])
    assert by_level[0] == {"": table.num_rows}  # change neighbours: N is public and exact
    assert set(by_level[3]) == {" > ".join(path) for path in truth}  # every leaf of the data, once
    assert len(rows) == sum(len(nodes) for nodes in by_level.values())
    for level in (1, 2, 3):
        sums: dict[str, int] = defaultdict(int)
        for path, count in by_level[level].items():
            assert count >= 0
            sums[path.rsplit(" > ", 1)[0] if level > 1 else ""] += count
        assert sums == by_level[level - 1]


def test_hierarchy_step_fails_with_the_reason_when_the_sample_is_missing(tmp_path, monkeypatch):
    import dpgui.data.hierarchy as data_hierarchy
    from dpgui.errors import DataError
    from dpgui.selftest.hierarchy import hierarchy_step

    run = _hierarchy_step_run(tmp_path, monkeypatch)
    monkeypatch.setattr(data_hierarchy, "find_resource", lambda relative: None)
    with pytest.raises(DataError, match="the hierarchy sample is missing"):
        hierarchy_step(run)
    with Ledger() as ledger:
        assert ledger.releases(HIERARCHY_DATASET) == []  # nothing spent


def test_data_sources_step_counts_sqlite_stata_and_a_semicolon_csv_like_the_sample(tmp_path):
    """Step 3: the sample's column written to SQLite, Stata and a ';'/',' CSV gives the sample's counts
    through open_source, SQLite's counted by the database. The copies are checked here independently
    of dpgui's readers: every row is in each of them, with the sample's values."""
    import sqlite3

    import numpy as np
    import pyarrow.parquet as pq
    import pyreadstat

    from dpgui.data.sample import sample_dataset_path
    from dpgui.selftest import SAMPLE_COLUMN, _data_sources, Run, _sample

    run = Run(tmp_path)
    _sample(run)
    detail = _data_sources(run)
    assert "336,776 values" in detail and "SQLite (the database (SQLite " in detail, detail
    assert "Stata (this computer)" in detail and "CSV with ';' and decimal ',' (this computer)" in detail
    assert "PostgreSQL driver psycopg 3." in detail and "with libpq " in detail

    truth = pq.read_table(sample_dataset_path(), columns=[SAMPLE_COLUMN]).column(0).to_numpy()
    with sqlite3.connect(tmp_path / "sources" / "sample.db") as conn:
        in_database = np.array([v for (v,) in conn.execute(f"SELECT {SAMPLE_COLUMN} FROM flights")])
    conn.close()
    frame, _ = pyreadstat.read_dta(str(tmp_path / "sources" / "sample.dta"))
    lines = (tmp_path / "sources" / "sample.csv").read_text(encoding="utf-8").splitlines()
    in_csv = np.array([float(line.split(";")[1].replace(",", ".")) for line in lines[1:]])
    assert lines[0] == f"row;{SAMPLE_COLUMN}" and "," in lines[1] and "." not in "".join(lines[1:100])
    for copy in (in_database, frame[SAMPLE_COLUMN].to_numpy(), in_csv):
        assert np.array_equal(copy, truth)


def test_data_sources_step_fails_when_a_source_counts_otherwise(tmp_path):
    """The comparison is real: a reference with one record moved to the next bin is not what SQLite counts."""
    import dataclasses

    import numpy as np

    from dpgui.selftest import SelfTestFailure, _data_sources, Run, _sample

    run = Run(tmp_path)
    _sample(run)
    hist = run.values["hist"]
    counts = hist.counts.copy()
    moved = int(np.argmax(counts))
    counts[moved] -= 1
    counts[moved + 1] += 1
    run.values["hist"] = dataclasses.replace(hist, counts=counts)
    with pytest.raises(SelfTestFailure, match=r"SQLite gives other counts than the sample file \(336,776 values, "
                                              r"2 of 500 bins differ\)"):
        _data_sources(run)
