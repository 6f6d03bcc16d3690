"""The window reads data through dpgui.data.source: the "Connect to a database…" dialog (SQLite made
with the standard library), the CSV dialect choice in step 1, which engine counts, and project
files / autosave of a database source (never a password in them)."""

from __future__ import annotations

import importlib.util
import inspect
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QLineEdit

from dpgui.app.dialogs.database import DatabaseDialog, SessionPasswords, keyring_works
from dpgui.app.shell.project import project_spec, same_source
from dpgui.app.workers import Worker, WorkerPool
from dpgui.data.file_types import CsvDialect
from dpgui.data.histogram import column_histogram
from dpgui.data.source_spec import SourceSpec
from dpgui.data.table import TableReader
from dpgui.report.project_file import Project, load_project

from gui_helpers import TIMEOUT, make_window, open_and_wait, release_and_wait, set_column
from gui_helpers import connect, sqlite_url

HAS_SQL = importlib.util.find_spec("dpgui.data.sql_source") is not None
needs_sql = pytest.mark.skipif(not HAS_SQL, reason="dpgui.data.sql_source (branch wt-sql) is not merged yet")
HAS_DIALECT = "dialect" in inspect.signature(TableReader).parameters
needs_dialect = pytest.mark.skipif(not HAS_DIALECT, reason="TableReader(dialect=…) (branch wt-csv) is not merged yet")
PASSWORD = "Tr0ub4dor&3-never-in-a-file"


@pytest.fixture
def people_db(tmp_path) -> Path:
    """An SQLite file with 300 people: id, age (with two missing), income, region."""
    path = tmp_path / "people.db"
    rng = np.random.default_rng(11)
    ages = rng.integers(0, 100, 300).astype(float)
    ages[[3, 70]] = np.nan
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE people (id INTEGER, age REAL, income REAL, region TEXT)")
        con.executemany("INSERT INTO people VALUES (?, ?, ?, ?)",
                        [(i, None if np.isnan(a) else float(a), float(w), r) for i, (a, w, r) in
                         enumerate(zip(ages, rng.gamma(2, 20000, 300), rng.choice(["north", "south"], 300)))])
    return path


def dialog_for(qtbot, url: str, table: str | None = None, query: str | None = None) -> DatabaseDialog:
    dialog = DatabaseDialog()
    qtbot.addWidget(dialog)
    dialog.url_edit.setText(url)
    if query is not None:
        dialog.query_radio.setChecked(True)
        dialog.query_edit.setPlainText(query)
    else:
        dialog.table_edit.setText(table or "")
    return dialog


# --------------------------------------------------------------------------------------------- the dialog's checks

def test_a_password_in_the_url_is_refused_inline_with_the_fix(qtbot):
    dialog = dialog_for(qtbot, "postgresql://alice:s3cret@db.example.org:5432/census", table="people")
    assert dialog.url_message.isVisibleTo(dialog)
    message = dialog.url_message.text()
    assert "password" in message and "DPGUI_DB_PASSWORD" in message
    assert "s3cret" not in message  # the message does not repeat it
    assert dialog.current_spec() is None
    dialog.url_edit.setText("postgresql://alice@db.example.org:5432/census")
    assert not dialog.url_message.isVisibleTo(dialog)
    spec = dialog.current_spec()
    assert spec == SourceSpec("database", "postgresql://alice@db.example.org:5432/census", table="people")


def test_the_dialog_asks_for_a_url_a_table_or_a_query(qtbot):
    dialog = dialog_for(qtbot, "", table="people")
    assert dialog.current_spec() is None and "URL" in dialog.url_message.text()
    dialog.url_edit.setText("sqlite:///x.db")
    dialog.table_edit.setText("")
    assert dialog.current_spec() is None and "table" in dialog.status.last_error
    dialog.query_radio.setChecked(True)
    assert dialog.current_spec() is None and "SELECT" in dialog.status.last_error
    assert not dialog.table_edit.isVisibleTo(dialog) and dialog.query_edit.isVisibleTo(dialog)
    dialog.url_edit.setText("/home/me/people.csv")  # a file is not a database
    dialog.query_edit.setPlainText("SELECT 1")
    assert dialog.current_spec() is None and "File → Open" in dialog.url_message.text()


def test_the_password_field_hides_what_is_typed_and_the_keyring_box_only_with_a_keyring(qtbot):
    dialog = dialog_for(qtbot, "sqlite:///x.db", table="t")
    assert dialog.password_edit.echoMode() == QLineEdit.EchoMode.Password
    assert dialog.remember.isVisibleTo(dialog) == keyring_works()


def test_session_passwords_answer_a_worker_thread_from_the_gui_thread(qtbot):
    passwords = SessionPasswords()
    asked: list[str] = []
    passwords.ask = lambda url: asked.append(url) or "typed"
    spec = SourceSpec("database", "postgresql://alice@db/census", table="people")
    prompt = passwords.prompt_for(spec)
    results: list[object] = []
    pool = WorkerPool()
    worker = Worker(lambda progress, should_cancel: (prompt("postgresql://alice@db/census"),
                                                      prompt("postgresql://alice@db/census")))
    worker.signals.finished.connect(results.append)
    pool.start(worker)
    qtbot.waitUntil(lambda: bool(results), timeout=TIMEOUT)
    assert results == [("typed", "typed")]
    assert asked == ["postgresql://alice@db/census"]  # asked once, then kept in memory
    passwords.forget(spec.location)
    passwords.ask = lambda url: None  # cancelled
    assert passwords.prompt_for(spec)("postgresql://alice@db/census") is None


def test_project_source_of_an_old_project_is_its_file():
    old = Project(data_path="/data/people.csv")
    assert project_spec(old) == SourceSpec("file", "/data/people.csv")
    assert same_source(SourceSpec("file", "/data/people.csv"),
                       SourceSpec("file", "/data/../data/people.csv", dialect=CsvDialect(";", ",")))
    assert not same_source(SourceSpec("file", "/data/people.csv", dialect=CsvDialect(",", ".")),
                           SourceSpec("file", "/data/people.csv", dialect=CsvDialect(";", ",")))


# --------------------------------------------------------------------------------------------- SQLite

@needs_sql
def test_test_connection_shows_the_columns_and_first_rows(qtbot, people_db):
    dialog = dialog_for(qtbot, sqlite_url(people_db), table="people")
    assert dialog.test_connection()
    qtbot.waitUntil(lambda: dialog._worker is None, timeout=TIMEOUT)
    assert dialog.status.last_error == ""
    assert "4 columns" in dialog.status.last_message and "3 with numbers" in dialog.status.last_message
    model = dialog.preview.model()
    assert model.rowCount() == 100 and model.columnCount() == 4
    assert model.headerData(1, __import__("PySide6.QtCore").QtCore.Qt.Orientation.Horizontal) == "age"


@needs_sql
def test_test_connection_failure_shows_one_line(qtbot, people_db):
    dialog = dialog_for(qtbot, sqlite_url(people_db), table="no_such_table")
    assert dialog.test_connection()
    qtbot.waitUntil(lambda: dialog._worker is None, timeout=TIMEOUT)
    assert dialog.status.last_error and "\n" not in dialog.status.last_error
    assert "no_such_table" in dialog.status.last_error
    assert dialog.preview.model() is None and dialog.opened is None


@needs_sql
@pytest.mark.parametrize("query", ["DELETE FROM people", "UPDATE people SET age = 0",
                                   "SELECT 1; DROP TABLE people"])
def test_a_query_that_writes_is_refused_inline_and_the_table_is_untouched(qtbot, people_db, query):
    dialog = dialog_for(qtbot, sqlite_url(people_db), query=query)
    assert dialog.test_connection()
    qtbot.waitUntil(lambda: dialog._worker is None, timeout=TIMEOUT)
    assert dialog.status.last_error and dialog.opened is None
    with sqlite3.connect(people_db) as con:
        assert con.execute("SELECT COUNT(*) FROM people").fetchone()[0] == 300


@needs_sql
def test_ok_shows_the_columns_and_a_release_counted_by_the_database_equals_the_file_path(qtbot, people_db, tmp_path):
    window = make_window(qtbot)
    connect(qtbot, window, sqlite_url(people_db), table="people")
    page = window.data_page
    names = [page.columns.item(i).text().split()[0] for i in range(page.columns.count())]
    assert names == ["id", "age", "income", "region"]
    assert page.engine_label.text().startswith("Counted by:") and "this computer" not in page.engine_label.text()
    assert "300 rows" in page.file_label.text() and "people" in page.file_label.text()
    assert not page.dialect_button.isVisibleTo(page)
    assert page.model is not None and page.model.rowCount() == 100
    assert window.workspace.state.source.n_rows == 300
    set_column(qtbot, window, "age", "0", "100", "50")
    release_and_wait(qtbot, window)
    outcome = window.cdf.outcome
    # the same rows in a CSV, counted by the file path
    csv = tmp_path / "people.csv"
    with sqlite3.connect(people_db) as con:
        rows = con.execute("SELECT age FROM people ORDER BY id").fetchall()
    csv.write_text("age\n" + "\n".join("" if a is None else repr(a) for (a,) in rows) + "\n")
    expected = column_histogram(csv, "age", 0.0, 100.0, 50)
    assert np.array_equal(outcome.counts, expected.counts)
    # Exporting the CSV over the database file is refused: the database is never replaced.
    before = people_db.read_bytes()
    assert window.cdf.export_to(str(people_db)) is False
    assert people_db.read_bytes() == before


@needs_sql
def test_a_database_project_saves_no_password_and_restores_by_asking_for_it(qtbot, people_db, tmp_path):
    window = make_window(qtbot)
    connect(qtbot, window, sqlite_url(people_db), query="SELECT age, income FROM people WHERE id < 250",
            password=PASSWORD)
    assert window.passwords.get(sqlite_url(people_db)) == PASSWORD  # in memory for the session
    set_column(qtbot, window, "income", "0", "200000", "64")
    release_and_wait(qtbot, window)
    project_path = tmp_path / "db.dpgui"
    assert window.project.save_to(project_path)
    window.project.autosave_now()
    qtbot.waitUntil(lambda: not window.project._autosave_running, timeout=TIMEOUT)
    autosave = Path(os.environ["DPGUI_HOME"]) / "autosave" / "workspace.dpgui"
    for written in (project_path, autosave):
        raw = written.read_bytes()
        assert PASSWORD.encode() not in raw and b"Tr0ub4dor" not in raw
    saved = load_project(project_path)
    assert saved.source == SourceSpec("database", sqlite_url(people_db),
                                      query="SELECT age, income FROM people WHERE id < 250").to_json()

    second = make_window(qtbot)
    asked: list[str] = []
    second.passwords.ask = lambda url: asked.append(url) or PASSWORD
    assert second.project.open_project(project_path)
    qtbot.waitUntil(lambda: second.workspace.state.source is not None and not second.pool.busy()
                    and second.data_page.current_column() is not None, timeout=TIMEOUT)
    assert second.workspace.state.source.source_spec == project_spec(saved)
    assert second.data_page.current_column().name == "income"
    assert second.workspace.state.source.n_rows == 250
    assert second.workspace.state.releases == saved.releases


# --------------------------------------------------------------------------------------------- PostgreSQL

@pytest.fixture
def pg_people(pg_server, monkeypatch):
    """A table of 500 rows in the throw-away PostgreSQL cluster (tests/support/pg_server.py); no password in
    the environment, so the window must ask for it."""
    monkeypatch.delenv("DPGUI_DB_PASSWORD", raising=False)
    pg_server.execute("DROP TABLE IF EXISTS window_people")
    pg_server.execute("CREATE TABLE window_people (id integer, age double precision)")
    pg_server.execute("INSERT INTO window_people SELECT i, CASE WHEN i % 50 = 0 THEN NULL ELSE (i * 7) % 100 END "
                      "FROM generate_series(1, 500) AS i")
    return pg_server


@needs_sql
def test_postgresql_wrong_password_is_one_line_and_the_right_one_is_never_written(qtbot, pg_people, tmp_path):
    dialog = dialog_for(qtbot, pg_people.url, table="window_people")
    dialog.password_edit.setText("not-the-password")
    assert dialog.test_connection()
    qtbot.waitUntil(lambda: dialog._worker is None, timeout=TIMEOUT)
    assert dialog.status.last_error and "\n" not in dialog.status.last_error
    assert "not-the-password" not in dialog.status.last_error

    window = make_window(qtbot)
    connect(qtbot, window, pg_people.url, table="window_people", password=pg_people.password)
    assert "PostgreSQL" in window.data_page.engine_label.text()
    assert window.workspace.state.source.n_rows == 500
    set_column(qtbot, window, "age", "0", "100", "20")
    release_and_wait(qtbot, window)
    ages = np.array([np.nan if i % 50 == 0 else (i * 7) % 100 for i in range(1, 501)], dtype=float)
    csv = tmp_path / "ages.csv"
    csv.write_text("age\n" + "\n".join("" if np.isnan(a) else repr(float(a)) for a in ages) + "\n")
    assert np.array_equal(window.cdf.outcome.counts, column_histogram(csv, "age", 0.0, 100.0, 20).counts)
    project_path = tmp_path / "pg.dpgui"
    assert window.project.save_to(project_path)
    window.project.autosave_now()
    qtbot.waitUntil(lambda: not window.project._autosave_running, timeout=TIMEOUT)
    autosave = Path(os.environ["DPGUI_HOME"]) / "autosave" / "workspace.dpgui"
    for written in [project_path, autosave, *Path(os.environ["DPGUI_HOME"]).rglob("*")]:
        if written.is_file():
            assert pg_people.password.encode() not in written.read_bytes(), written

    second = make_window(qtbot)
    asked: list[str] = []
    second.passwords.ask = lambda url: asked.append(url) or pg_people.password
    assert second.project.open_project(project_path)
    qtbot.waitUntil(lambda: second.workspace.state.source is not None and not second.pool.busy()
                    and second.data_page.current_column() is not None, timeout=TIMEOUT)
    assert asked and all("@" in url and pg_people.password not in url for url in asked)
    assert second.workspace.state.source.n_rows == 500
    assert second.data_page.current_column().name == "age"


# --------------------------------------------------------------------------------------------- CSV dialects

def test_a_suggested_dialect_is_confirmed_before_a_release_and_recorded_as_stated(qtbot, semicolon_csv, tmp_path):
    """The first lines of messungen.csv suggest ';' and a decimal comma: the preview shows the file so, the
    data step says the dialect was suggested and offers Confirm, and a release waits for it (it reads a
    file only as the officer states it). Confirmed, the dialect is the officer's: in the workspace, the
    release's record (manifest, PDF, ledger: "stated"), the project file and the autosave."""
    import json

    from dpgui.workspace.release import DIALECT_NOT_STATED, release_request

    window = make_window(qtbot)
    open_and_wait(qtbot, window, semicolon_csv)
    page = window.data_page
    assert page.dialect_label.text() == ("Separator: semicolon · Decimal mark: comma (suggested by its first lines: "
                                         "confirm it)")
    assert page.dialect_confirm.isVisibleTo(page) and "press Confirm" in page.dialect_message.text()
    state = window.workspace.state
    assert state.source.unconfirmed_dialect == CsvDialect(";", ",") and state.source.source_spec.dialect is None
    set_column(qtbot, window, "gewicht", "50", "110", "60")
    assert release_request(window.workspace.state) is DIALECT_NOT_STATED
    window.release()  # refused before anything: the officer is sent to step 1
    assert window.cdf.outcome is None and "Confirm how the file is written" in window.statusBar().currentMessage()
    page.dialect_confirm.click()
    qtbot.waitUntil(lambda: window.workspace.state.source is not None
                    and window.workspace.state.source.source_spec.dialect == CsvDialect(";", ",")
                    and not window.pool.busy(), timeout=TIMEOUT)
    assert page.dialect_label.text() == "Separator: semicolon · Decimal mark: comma (chosen by you)"
    assert not page.dialect_confirm.isVisibleTo(page) and page.dialect_message.text() == ""
    assert window.workspace.state.source.unconfirmed_dialect is None
    set_column(qtbot, window, "gewicht", "50", "110", "60")
    release_and_wait(qtbot, window)
    assert window.cdf.outcome.info.source["dialect"] == {"delimiter": ";", "decimal": ",", "origin": "stated"}
    project_path = tmp_path / "m.dpgui"
    assert window.project.save_to(project_path)
    assert project_spec(load_project(project_path)).dialect == CsvDialect(";", ",")
    window.project.autosave_now()
    autosave = window.project.autosave_path()
    qtbot.waitUntil(lambda: autosave is not None and autosave.is_file() and not window.project._autosave_running,
                    timeout=TIMEOUT)
    saved = json.loads(autosave.read_text())
    assert saved["source"]["dialect"] == {"delimiter": ";", "decimal": ","}
    second = make_window(qtbot)
    assert second.project.open_project(project_path)
    qtbot.waitUntil(lambda: second.workspace.state.source is not None and not second.pool.busy(), timeout=TIMEOUT)
    assert second.workspace.state.source.source_spec.dialect == CsvDialect(";", ",")
    assert second.data_page.dialect_label.text() == "Separator: semicolon · Decimal mark: comma (chosen by you)"


@pytest.fixture
def semicolon_csv(tmp_path) -> Path:
    path = tmp_path / "messungen.csv"
    path.write_text("name;gewicht;groesse\n" + "".join(f"p{i};{60 + i},5;1,{70 + i % 20}\n" for i in range(40)))
    return path


def test_step_1_shows_how_a_csv_is_read_and_who_counts(qtbot, tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("a,b\n" + "".join(f"{i},{i * 0.5}\n" for i in range(30)))
    window = make_window(qtbot)
    open_and_wait(qtbot, window, path)
    page = window.data_page
    assert page.engine_label.text() == "Counted by: <b>this computer</b>"
    assert page.dialect_label.text() == "Separator: comma · Decimal mark: point (the default for its name)"
    assert page.dialect_button.isVisibleTo(page) and not page.dialect_confirm.isVisibleTo(page)
    parquet = tmp_path / "plain.parquet"
    import pandas as pd

    pd.DataFrame({"a": [1.0, 2.0]}).to_parquet(parquet)
    open_and_wait(qtbot, window, parquet)
    assert not page.dialect_button.isVisibleTo(page) and page.dialect_label.text() == ""


def test_the_dialect_dialog_refuses_a_comma_for_both(qtbot, semicolon_csv):
    from dpgui.app.dialogs.dialect import DialectDialog

    dialog = DialectDialog(CsvDialect(",", "."))
    qtbot.addWidget(dialog)
    dialog.decimal.setCurrentIndex(dialog.decimal.findData(","))
    assert dialog.chosen() is None and "separator" in dialog.message.text()
    dialog.separator.setCurrentIndex(dialog.separator.findData(";"))
    assert dialog.chosen() == CsvDialect(";", ",")


@needs_dialect
def test_changing_the_dialect_reads_a_semicolon_decimal_comma_csv_with_the_right_numbers(qtbot, semicolon_csv,
                                                                                          tmp_path):
    window = make_window(qtbot)
    open_and_wait(qtbot, window, semicolon_csv)
    page = window.data_page
    page.open_dialect_dialog()
    dialog = page.dialect_dialog
    dialog.separator.setCurrentIndex(dialog.separator.findData(";"))
    dialog.decimal.setCurrentIndex(dialog.decimal.findData(","))
    dialog._accept()
    qtbot.waitUntil(lambda: window.workspace.state.source is not None
                    and window.workspace.state.source.source_spec.dialect == CsvDialect(";", ",")
                    and not window.pool.busy(), timeout=TIMEOUT)
    assert page.dialect_label.text() == "Separator: semicolon · Decimal mark: comma (chosen by you)"
    kinds = {c.name: c.kind for c in window.table.columns}
    assert kinds == {"name": "text", "gewicht": "numeric", "groesse": "numeric"}
    assert page.model.data(page.model.index(0, 1)) in ("60.5", "60,5")  # the preview may show the file's text
    set_column(qtbot, window, "gewicht", "50", "110", "60")
    release_and_wait(qtbot, window)
    comma = tmp_path / "comma.csv"
    comma.write_text("gewicht\n" + "".join(f"{60 + i}.5\n" for i in range(40)))
    assert np.array_equal(window.cdf.outcome.counts, column_histogram(comma, "gewicht", 50.0, 110.0, 60).counts)
    # the project keeps the dialect
    project_path = tmp_path / "m.dpgui"
    assert window.project.save_to(project_path)
    assert project_spec(load_project(project_path)).dialect == CsvDialect(";", ",")


def test_the_workspace_saves_a_database_source_as_its_spec_and_a_file_with_its_dialect(tmp_path):
    from dpgui.data.table import ColumnInfo, TableInfo
    from dpgui.workspace.state import ColumnChoice, SourceChoice, WorkspaceState

    columns = (ColumnInfo("age", "numeric", "double"),)
    spec = SourceSpec("database", "postgresql://alice@db.example.org/census", table="public.people")
    state = WorkspaceState(source=SourceChoice(TableInfo(Path("public.people"), "csv", columns, 10, 0), 10, spec,
                                             "the database (PostgreSQL 15.18)"),
                           column=ColumnChoice("age", 0.0, 100.0, 10), dataset="people")
    project = state.to_project()
    assert project.source == spec.to_json() and project.data_path == "table public.people in " + spec.location
    assert project_spec(project) == spec and project.name == project.data_path
    assert state.column_settings().spec == spec
    csv = SourceSpec("file", "rel/people.csv", dialect=CsvDialect(";", ","))
    state = WorkspaceState(source=SourceChoice(TableInfo(Path("rel/people.csv"), "csv", columns, 10, 5), 10, csv))
    project = state.to_project()
    assert project.data_path == os.path.abspath("rel/people.csv")
    assert project_spec(project) == SourceSpec("file", os.path.abspath("rel/people.csv"), dialect=CsvDialect(";", ","))
    plain = WorkspaceState(source=SourceChoice(TableInfo(Path("p.csv"), "csv", columns, 10, 5), 10)).to_project()
    assert plain.source is None  # a plain file is saved as before (older dpgui versions open it)


@needs_sql
def test_no_password_given_when_asked_leaves_the_window_as_it_was(qtbot, pg_people):
    window = make_window(qtbot)
    asked: list[str] = []
    window.passwords.ask = lambda url: asked.append(url)  # the officer presses Cancel
    window.open_database(SourceSpec("database", pg_people.url, table="window_people"))
    qtbot.waitUntil(lambda: bool(asked) and not window.pool.busy(), timeout=TIMEOUT)
    assert window.workspace.state.source is None
    assert "no password was given" in window.statusBar().currentMessage()


@needs_dialect
def test_the_hierarchy_mode_reads_a_csv_with_the_dialect_chosen_in_step_1(qtbot, tmp_path):
    """Every line splits evenly on both ',' and ';': detection can only assume ','; the officer
    chooses ';' and the hierarchy mode must count with that choice, not detect again."""
    from dpgui.workspace.hierarchy import data_spec

    path = tmp_path / "both.csv"
    path.write_text("region;town,x\n" + "".join(f"r{i % 2};t{i % 4},{i}\n" for i in range(24)))
    window = make_window(qtbot)
    open_and_wait(qtbot, window, path)
    assert window.workspace.state.source is not None
    assert [c.name for c in window.table.columns] == ["region;town", "x"]  # read with the assumed comma
    page = window.data_page
    page.open_dialect_dialog()
    dialog = page.dialect_dialog
    dialog.separator.setCurrentIndex(dialog.separator.findData(";"))
    dialog._accept()
    qtbot.waitUntil(lambda: window.workspace.state.source is not None
                    and window.workspace.state.source.source_spec.dialect == CsvDialect(";", ".")
                    and not window.pool.busy(), timeout=TIMEOUT)
    assert [c.name for c in window.table.columns] == ["region", "town,x"]
    window.set_mode(True)
    qtbot.waitUntil(lambda: window.hierarchy.state_ws.state.data_path is not None and not window.pool.busy(),
                    timeout=TIMEOUT)
    data = window.hierarchy.state_ws.state.data_path
    assert data_spec(data).dialect == CsvDialect(";", ".")
