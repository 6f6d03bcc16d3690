"""The database dialog and SQLite files: Browse… chooses a file and writes its URL in this system's form
(four slashes before an absolute POSIX path, sqlite:///C:/… on Windows); the hint under the URL shows
that form; a URL written with three slashes before an absolute path says, under the field, which file
it reads; a URL that could name two files is refused inline."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QFileDialog

from dpgui.app.dialogs.database import DatabaseDialog
from dpgui.data import source_spec

from gui_helpers import TIMEOUT

SHOTS = Path(os.environ.get("DPGUI_TEST_SHOTS", "/tmp"))


@pytest.fixture
def survey_db(tmp_path) -> Path:
    path = tmp_path / "data" / "survey.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE households (id INTEGER, income REAL, region TEXT)")
        con.executemany("INSERT INTO households VALUES (?, ?, ?)",
                        [(i, 1000.0 * (i % 37), ["North", "South"][i % 2]) for i in range(200)])
    return path


def _dialog(qtbot) -> DatabaseDialog:
    dialog = DatabaseDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_the_hint_shows_this_systems_form_of_an_sqlite_url(qtbot):
    dialog = _dialog(qtbot)
    assert source_spec.sqlite_url_example() in dialog.url_help.text() and "Browse" in dialog.url_help.text()
    assert source_spec.sqlite_url_example() in dialog.url_edit.toolTip()
    if os.name != "nt":
        assert source_spec.sqlite_url_example().startswith("sqlite:////")  # three slashes, then the absolute path's own


@pytest.mark.slow
def test_browse_writes_the_chosen_files_url_and_the_connection_works(qtbot, monkeypatch, survey_db):
    dialog = _dialog(qtbot)
    asked = []

    def choose(parent, caption, folder, filters):
        asked.append((caption, filters))
        return str(survey_db), filters.split(";;")[0]

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(choose))
    dialog.browse_button.click()
    assert asked and "SQLite" in asked[0][1] and "*.db" in asked[0][1]
    assert dialog.url_edit.text() == "sqlite:///" + survey_db.as_posix()
    dialog.table_edit.setText("households")
    assert dialog.test_connection()
    qtbot.waitUntil(lambda: dialog._worker is None, timeout=TIMEOUT)
    assert dialog.opened is not None and "Connected" in dialog.status.text()
    dialog.grab().save(str(SHOTS / "h6-database-browse.png"))


def test_three_slashes_before_an_absolute_path_say_which_file_is_read(qtbot, survey_db, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path / "data")  # where srv-like relative paths do not exist
    dialog = _dialog(qtbot)
    typed = "sqlite:///" + survey_db.as_posix().lstrip("/")
    dialog.url_edit.setText(typed)
    assert dialog.url_help.text().startswith(f"Reading {survey_db}: ") and "four slashes" in dialog.url_help.text()
    dialog.table_edit.setText("households")
    spec = dialog.current_spec()
    assert spec is not None and spec.location == "sqlite:///" + survey_db.as_posix()
    QApplication.processEvents()  # the hint's new height is laid out
    dialog.grab().save(str(SHOTS / "h6-database-three-slashes.png"))
    dialog.url_edit.setText("postgresql://alice@db.example.org/census")
    assert dialog.url_help.text().startswith("Without the password")  # the hint is back


def test_a_url_that_could_name_two_files_is_refused_inline(qtbot, survey_db, tmp_path, monkeypatch):
    here = tmp_path / "here"
    copy = here / survey_db.relative_to("/")
    copy.parent.mkdir(parents=True)
    copy.write_bytes(survey_db.read_bytes())
    monkeypatch.chdir(here)
    dialog = _dialog(qtbot)
    dialog.url_edit.setText("sqlite:///" + survey_db.as_posix().lstrip("/"))
    assert dialog.url_message.isVisibleTo(dialog) and "exists too" in dialog.url_message.text()
    dialog.table_edit.setText("households")
    assert dialog.current_spec() is None
