"""A release made in the window records its data source as the CLI's does: the ledger's
entry, the project file (so a project saved, reopened and exported later still states it) and the
signed bundle's manifest (schema v4: the URL without password, the table or the query, who counted);
`dpgui verify` accepts the bundle; the password is in none of the files."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from dpgui.core.noise import SecureRandom
from dpgui.report.bundle import SOURCE_SCHEMA_VERSION
from dpgui.report.keystore import create_key
from dpgui.report.ledger import Ledger
from dpgui.report.project_file import load_project
from dpgui.vocabulary import StatisticKind

from gui_helpers import TIMEOUT, error_text, make_window, open_and_wait, release_and_wait, set_column
from gui_helpers import connect, sqlite_url

PASSPHRASE = "source record passphrase"


@pytest.fixture
def people_db(tmp_path) -> Path:
    path = tmp_path / "people.db"
    rng = np.random.default_rng(16)
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE people (id INTEGER, age REAL)")
        con.executemany("INSERT INTO people VALUES (?, ?)",
                        [(i, float(a)) for i, a in enumerate(rng.integers(0, 100, 300))])
    return path


def export_and_verify(window, out: Path, key) -> dict:
    """Export Signed Bundle of the window's shown release into ``out``; `dpgui verify` on it; the manifest."""
    from dpgui.cli import main

    dialog = window.cdf.export_dialog()
    assert dialog is not None, error_text(window)
    dialog.folder.setText(str(out))
    dialog.passphrase.setText(PASSPHRASE)
    paths = dialog.export()
    assert paths is not None, dialog.message.text()
    window.after_bundle_export(dialog)
    assert main(["verify", str(paths.manifest), "--pubkey", str(key.public_path)]) == 0
    return json.loads(paths.manifest.read_text())


def test_a_sqlite_release_saved_reopened_and_exported_states_its_source(qtbot, people_db, tmp_path):
    window = make_window(qtbot)
    window.noise_source = SecureRandom
    connect(qtbot, window, sqlite_url(people_db), table="people")
    set_column(qtbot, window, "age", "0", "100", "20")
    release_and_wait(qtbot, window)
    record = window.cdf.outcome.info.source
    assert record["kind"] == "database" and record["location"] == "sqlite:///people.db"
    assert record["table"] == "people" and record["engine"].startswith("the database")
    with Ledger() as ledger:  # the ledger's entry says it too
        assert json.loads(json.dumps(ledger.release(window.cdf.outcome.release_id).description))["source"] == record
    project_path = tmp_path / "db.dpgui"
    assert window.project.save_to(project_path)
    window.project.autosave_timer.stop()
    assert load_project(project_path).releases[-1].source == record

    second = make_window(qtbot)
    second.noise_source = lambda: (_ for _ in ()).throw(AssertionError("reopening draws no noise"))
    second.passwords.ask = lambda url: ""
    assert second.project.open_project(project_path)
    qtbot.waitUntil(lambda: second.workspace.state.source is not None and not second.pool.busy()
                    and second.result_view.release() is not None, timeout=TIMEOUT)
    assert second.workspace.state.shown.info.source == record
    out = tmp_path / "out"
    out.mkdir()
    key = create_key("officer", PASSPHRASE)
    manifest = export_and_verify(second, out, key)
    assert manifest["schema_version"] == SOURCE_SCHEMA_VERSION
    assert manifest["source"]["location"] == "sqlite:///people.db" and manifest["source"]["table"] == "people"
    assert manifest["source"]["kind"] == "database" and manifest["source"]["engine"] == record["engine"]


def test_a_file_release_records_the_file_format_not_its_path(qtbot, tmp_path):
    csv = tmp_path / "secret-folder" / "ages.csv"
    csv.parent.mkdir()
    rng = np.random.default_rng(3)
    csv.write_text("age\n" + "\n".join(str(a) for a in rng.integers(0, 100, 200)) + "\n")
    window = make_window(qtbot)
    window.noise_source = SecureRandom
    open_and_wait(qtbot, window, csv)
    set_column(qtbot, window, "age", "0", "100", "10")
    release_and_wait(qtbot, window)
    out = tmp_path / "out"
    out.mkdir()
    manifest = export_and_verify(window, out, create_key("officer", PASSPHRASE))
    source = manifest["source"]
    assert source["kind"] == "file" and source["engine"] == "this computer"
    assert source["dialect"] == {"delimiter": ",", "decimal": ".", "origin": "default"}
    assert "secret-folder" not in json.dumps(manifest)


@pytest.fixture
def pg_ages(pg_server, monkeypatch):
    monkeypatch.delenv("DPGUI_DB_PASSWORD", raising=False)
    pg_server.execute("DROP TABLE IF EXISTS record_ages")
    pg_server.execute("CREATE TABLE record_ages (id integer, age double precision)")
    pg_server.execute("INSERT INTO record_ages SELECT i, (i * 13) % 100 FROM generate_series(1, 400) AS i")
    return pg_server


def test_a_postgresql_query_release_exports_the_query_and_url_without_password(qtbot, pg_ages, tmp_path):
    query = "SELECT age FROM record_ages WHERE id <= 300"
    window = make_window(qtbot)
    window.noise_source = SecureRandom
    connect(qtbot, window, pg_ages.url, query=query, password=pg_ages.password)
    set_column(qtbot, window, "age", "0", "100", "25")
    release_and_wait(qtbot, window)
    out = tmp_path / "out"
    out.mkdir()
    manifest = export_and_verify(window, out, create_key("officer", PASSPHRASE))
    assert manifest["schema_version"] == SOURCE_SCHEMA_VERSION
    source = manifest["source"]
    assert source["query"] == query and source["location"] == pg_ages.url and "PostgreSQL" in source["engine"]
    project_path = tmp_path / "pg.dpgui"
    assert window.project.save_to(project_path)
    window.project.autosave_timer.stop()
    for written in [*out.iterdir(), project_path, *Path(os.environ["DPGUI_HOME"]).rglob("*")]:
        if written.is_file():
            assert pg_ages.password.encode() not in written.read_bytes(), written


# --------------------------------------------------------------------------------------------- hierarchy from a database

@pytest.fixture
def schools(tmp_path) -> tuple[Path, Path]:
    """The same 600 rows (region → district → school, a numeric level) as an SQLite table and a CSV."""
    rng = np.random.default_rng(61)
    region = rng.choice(["North", "South", "East"], 600)
    district = [f"{r}-{d}" for r, d in zip(region, rng.integers(0, 3, 600))]
    school = [f"{d}/{s}" for d, s in zip(district, rng.integers(0, 4, 600))]
    db, csv = tmp_path / "schools.db", tmp_path / "schools.csv"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE schools (region TEXT, district TEXT, school TEXT)")
        con.executemany("INSERT INTO schools VALUES (?, ?, ?)", zip(region, district, school))
    csv.write_text("region,district,school\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(region, district, school)))
    return db, csv


def wait_planned(qtbot, window) -> None:
    page = window.hierarchy
    qtbot.waitUntil(lambda: page.state_ws.state.planned is not None and not page.is_busy(), timeout=TIMEOUT)


def test_a_hierarchy_release_from_sqlite_counts_in_the_database_and_exports(qtbot, schools, tmp_path):
    from dpgui.data.hierarchy import count_paths, level_value_counts
    from dpgui.data.source import open_source
    from dpgui.data.source_spec import parse_source

    from hierarchy_gui_helpers import release_and_wait as release_hierarchy

    db, csv = schools
    levels = ("region", "district", "school")
    window = make_window(qtbot)
    window.noise_source = SecureRandom
    connect(qtbot, window, sqlite_url(db), table="schools")
    window.set_mode(True)
    page = window.hierarchy
    assert page.state_ws.state.data_path == window.workspace.state.source.source_spec  # no file: the database
    qtbot.waitUntil(lambda: page.state_ws.state.column_counts is not None, timeout=TIMEOUT)
    assert dict(page.state_ws.state.column_counts) == level_value_counts(csv, list(levels))  # counted by the database
    page.set_levels(levels)
    page.categories_public.setChecked(True)
    wait_planned(qtbot, window)
    loaded = page.state_ws.state.loaded
    expected = count_paths(csv, list(levels))  # the same rows read from the file
    with open_source(parse_source(sqlite_url(db), table="schools")) as source:
        assert source.path_counts(list(levels)).paths == expected.paths
    assert loaded.hierarchy.level_sizes == expected.hierarchy.level_sizes
    assert loaded.rows == expected.rows == 600
    assert np.array_equal(loaded.leaf_counts, np.asarray(expected.counts, dtype=np.int64))
    assert loaded.source_record["location"] == "sqlite:///schools.db" and loaded.source_record["table"] == "schools"
    assert page.file_label.text().startswith("Data: table schools in sqlite:")

    release_hierarchy(qtbot, window)
    outcome = page.state_ws.state.outcome
    assert outcome is not None and outcome.secure, error_text(window)
    assert outcome.info.source == loaded.source_record
    project_path = tmp_path / "h.dpgui"
    assert window.project.save_to(project_path)
    window.project.autosave_timer.stop()
    saved = load_project(project_path).section(StatisticKind.HIERARCHY).releases[-1]
    assert saved.source == loaded.source_record
    from dpgui.workspace.hierarchy_project import restored_outcome

    restored = restored_outcome(saved)  # the ledger confirms the restored release, its source included
    assert restored.secure and restored.info.source == loaded.source_record, restored.problem
    from dataclasses import replace

    edited = restored_outcome(replace(saved, source={**saved.source, "table": "other"}))  # a hand-edited project
    assert not edited.secure and "data source" in edited.problem

    key = create_key("officer", PASSPHRASE)
    out = tmp_path / "out"
    out.mkdir()
    dialog = page.release_step.export_dialog()
    assert dialog is not None, error_text(window)
    dialog.folder.setText(str(out))
    dialog.passphrase.setText(PASSPHRASE)
    paths = dialog.export()
    assert paths is not None, dialog.message.text()
    from dpgui.cli import main

    assert main(["verify", str(paths.manifest), "--pubkey", str(key.public_path)]) == 0
    manifest = json.loads(paths.manifest.read_text())
    assert manifest["schema_version"] == SOURCE_SCHEMA_VERSION
    assert manifest["source"]["table"] == "schools" and manifest["source"]["location"] == "sqlite:///schools.db"
    # the hierarchy's CSV export never replaces the database it was counted in
    before = db.read_bytes()
    assert not page.release_step.export_csv_to(str(db))
    assert db.read_bytes() == before
