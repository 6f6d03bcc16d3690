"""No release of the session leaves the officer's reach (dpgui.app.shell.session_releases): opening other data while
a release on screen is neither exported nor saved asks first, from every way of opening data; every release
(CDF and hierarchy) stays listed with where it was exported, and shows again in one click, without mixing
with the data opened since; the project of new data never carries another data's releases."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox

from dpgui.core.noise import SecureRandom
from dpgui.data.hierarchy import hierarchy_sample_path
from dpgui.data.source_spec import SourceSpec
from dpgui.report.project_file import Project, load_project, save_project
from dpgui.vocabulary import StatisticKind

from gui_helpers import TIMEOUT, hierarchy_sample_released, make_window, open_and_wait, release_and_wait, set_column

pytestmark = pytest.mark.slow


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    """people.csv (released from), other.csv, a SQLite database and a project of other.csv."""
    rng = np.random.default_rng(11)
    folder = tmp_path / "data"
    folder.mkdir()
    people = folder / "people.csv"
    people.write_text("age,income\n" + "\n".join(f"{a},{w:.0f}" for a, w in
                                                zip(rng.integers(0, 100, 300), rng.gamma(2, 2e4, 300))) + "\n")
    other = folder / "other.csv"
    other.write_text("x,y\n" + "\n".join(f"{i % 37},{i % 5}" for i in range(200)) + "\n")
    database = folder / "db.sqlite"
    with sqlite3.connect(database) as conn:
        conn.execute("CREATE TABLE t (v REAL)")
        conn.executemany("INSERT INTO t VALUES (?)", [(float(i),) for i in range(50)])
    project = tmp_path / "other.dpgui"
    save_project(Project(data_path=str(other)), project)
    return {"people": people, "other": other, "database": database, "project": project}


def released_window(qtbot, people: Path, secure: bool = False):
    window = make_window(qtbot)
    if secure:
        window.noise_source = SecureRandom
    open_and_wait(qtbot, window, people)
    set_column(qtbot, window, "age", "0", "100", "20")
    release_and_wait(qtbot, window)
    assert window.workspace.state.shown is not None
    return window


def drop(window, path: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)


def leave_box(window) -> QMessageBox | None:
    box = getattr(getattr(window, "session", None), "leave_box", None)
    return box if box is not None and box.isVisible() else None


WAYS_TO_OPEN = {
    "File → Open / command line": lambda w, f: w.open_file(str(f["other"])),
    "Open Recent": lambda w, f: (w._add_recent(str(f["other"])), w.recent_menu.actions()[0].trigger()),
    "drag and drop": lambda w, f: drop(w, f["other"]),
    "the start page's sample": lambda w, f: w.start_page.sample_button.click(),
    "the hierarchy sample": lambda w, f: w.hierarchy_sample_action.trigger(),
    "Connect to a Database": lambda w, f: w.open_database(SourceSpec("database", f"sqlite:///{f['database']}",
                                                                     table="t")),
    "Open Project": lambda w, f: w.open_file(str(f["project"])),
}


@pytest.mark.parametrize("way", list(WAYS_TO_OPEN))
def test_opening_other_data_asks_first_and_cancel_loses_nothing(qtbot, files, way):
    window = released_window(qtbot, files["people"])
    shown = window.workspace.state.shown
    WAYS_TO_OPEN[way](window, files)
    qtbot.waitUntil(lambda: leave_box(window) is not None, timeout=5000)
    box = leave_box(window)
    assert "not exported and not saved" in box.text() and "CDF of age" in box.text()
    assert [b.text().replace("&", "") for b in (box.save_button, box.export_button, box.open_button)] == \
        ["Save Project…", "Export…", "Open Anyway"]
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.wait(200)
    assert not window.pool.busy() and window.table.path == files["people"]
    assert window.workspace.state.shown is shown and "Released <b>age</b>" in window.release_status.text()
    assert not window.in_hierarchy_mode()


def test_open_anyway_keeps_the_release_listed_and_it_shows_again_unmixed_and_signable(qtbot, files):
    window = released_window(qtbot, files["people"], secure=True)
    release_id = window.workspace.state.shown.release_id
    window.open_file(str(files["other"]))
    qtbot.waitUntil(lambda: leave_box(window) is not None, timeout=5000)
    leave_box(window).open_button.click()
    qtbot.waitUntil(lambda: window.table.path == files["other"], timeout=TIMEOUT)
    # the new data's workspace: no release of people.csv in it (nor in its project), none shown
    assert window.workspace.state.shown is None and window.workspace.state.releases == ()
    assert window.project.capture().releases == ()
    assert "Releases of This Session" in window.release_status.text()
    # listed, newest first, with what became of it
    actions = [a for a in window.session.menu.actions() if a.text() and not a.isSeparator()]
    assert "CDF of age" in actions[0].text() and "people.csv" in actions[0].text()
    assert "not exported or saved" in actions[0].text()
    actions[0].trigger()  # one click shows it again
    shown = window.workspace.state.shown
    assert shown is not None and shown.release_id == release_id and window.tabs.currentIndex() == 3
    assert "made from <b>people.csv</b>, not from the data open now" in window.release_status.text()
    assert window.table.path == files["other"] and window.workspace.state.releases == ()  # nothing mixed in
    # signable as before: the ledger confirms it, and the export may go neither over nor into either data
    dialog = window.cdf.export_dialog()
    assert dialog is not None and dialog.release_id == release_id
    assert {str(files["people"]), str(files["other"])} <= set(dialog.input_folders)
    # and the session's dialog lists it too, with Show
    listing = window.session.show_dialog()
    assert listing.table.rowCount() == 1 and listing.table.item(0, 2).text() == "people.csv"
    assert listing.table.item(0, 5).text() == "Not exported or saved"
    listing.close()


def test_save_project_from_the_question_keeps_the_release_then_opens(qtbot, files, tmp_path, monkeypatch):
    window = released_window(qtbot, files["people"])
    target = tmp_path / "people.dpgui"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    window.open_file(str(files["other"]))
    qtbot.waitUntil(lambda: leave_box(window) is not None, timeout=5000)
    leave_box(window).save_button.click()
    qtbot.waitUntil(lambda: window.table.path == files["other"], timeout=TIMEOUT)
    saved = load_project(target)
    assert [r.release_id for r in saved.releases] == [window.session.releases.releases[0].release_id]
    assert window.session.releases.releases[0].saved_in == target
    assert window.project.path is None  # Save now asks for a new file: people.dpgui is not overwritten
    window.open_file(str(files["people"]))  # back: its release is its workspace's again, and kept: no question
    qtbot.waitUntil(lambda: window.table.path == files["people"], timeout=TIMEOUT)
    assert [r.release_id for r in window.workspace.state.releases] == [r.release_id for r in saved.releases]


def test_export_from_the_question_exports_the_release_then_opens(qtbot, files, monkeypatch):
    from dpgui.app.shell.main_window import MainWindow
    from dpgui.workspace.session import ExportKind

    window = released_window(qtbot, files["people"])
    exported = []

    def export_bundle(self):  # the officer signs it in the Export dialog (tested in test_app_export.py)
        shown = self.workspace.state.shown
        exported.append(shown.release_id)
        self.session.mark_exported(shown.release_id, ExportKind.SIGNED_BUNDLE, files["people"].parent / "b.json")

    monkeypatch.setattr(MainWindow, "export_bundle", export_bundle)
    window.open_file(str(files["other"]))
    qtbot.waitUntil(lambda: leave_box(window) is not None, timeout=5000)
    leave_box(window).export_button.click()
    qtbot.waitUntil(lambda: window.table.path == files["other"], timeout=TIMEOUT)
    assert exported == [window.session.releases.releases[0].release_id]


def test_a_hierarchy_release_stays_listed_and_shows_again(qtbot, files):
    window = make_window(qtbot, seed=5)
    page = hierarchy_sample_released(qtbot, window)
    release_id = page.state_ws.state.outcome.release_id
    window.open_file(str(files["people"]))
    qtbot.waitUntil(lambda: leave_box(window) is not None, timeout=5000)
    assert "Counts over" in leave_box(window).text()
    leave_box(window).open_button.click()
    qtbot.waitUntil(lambda: window.table.path == files["people"], timeout=TIMEOUT)
    assert page.state_ws.state.outcome is None and page.state_ws.state.releases == ()
    assert window.project.capture().section(StatisticKind.HIERARCHY).releases == ()
    window.set_mode(False)
    assert window.session.reopen(release_id)
    assert window.in_hierarchy_mode() and page.state_ws.state.outcome.release_id == release_id
    assert page.tabs.currentIndex() == 3 and hierarchy_sample_path().name in page.release_step.release_status.text()


def test_a_project_is_not_overwritten_with_other_data(qtbot, files, tmp_path):
    """After Open Project and then another file, Save asks for a file instead of writing the other data
    over the project."""
    window = make_window(qtbot)
    assert window.project.open_project(files["project"])
    qtbot.waitUntil(lambda: window.table is not None and window.project.path == files["project"], timeout=TIMEOUT)
    open_and_wait(qtbot, window, files["people"])
    assert window.project.path is None
    assert load_project(files["project"]).data_path == str(files["other"])


def test_quit_names_the_releases_of_data_opened_before(qtbot, files):
    """A release let go from the screen (Open Anyway) and never exported is named again at Quit, even when
    the open data's workspace has nothing to save."""
    window = released_window(qtbot, files["people"])
    window.open_file(str(files["other"]))
    qtbot.waitUntil(lambda: leave_box(window) is not None, timeout=5000)
    leave_box(window).open_button.click()
    qtbot.waitUntil(lambda: window.table.path == files["other"], timeout=TIMEOUT)
    window.project.request_close()
    box = window.project.close_box
    assert box is not None and box.isVisible()
    assert "1 other release of this session (of data opened before) is neither exported nor saved" \
        in box.informativeText()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert window.isVisible()
