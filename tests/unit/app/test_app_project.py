"""Project files, autosave and restore after a crash, through the window (headless)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMessageBox

from dpgui.app.shell import project as project_module
from dpgui.core.mechanism import release as engine_release
from dpgui.core.noise import SecureRandom, SeededRandom
from dpgui.core.plan import Plan, PrivacySpec
from dpgui.core.tree import TreeShape
from dpgui.data.histogram import column_histogram
from dpgui.report.ledger import Ledger
from dpgui.report.project_file import Project, ProjectRelease, load_project, save_project
from dpgui.report.cdf.publish import spend_and_release

from gui_helpers import TIMEOUT, error_text, make_window, open_and_wait, release_and_wait, set_column, wait_plan
from gui_helpers import dead_pid


@pytest.fixture
def people_csv(tmp_path) -> Path:
    path = tmp_path / "data" / "people.csv"
    path.parent.mkdir()
    rng = np.random.default_rng(5)
    rows = ["name,age,income"] + [f"p{i},{a},{w:.2f}" for i, (a, w) in
                                  enumerate(zip(rng.integers(0, 100, 400), rng.gamma(2, 20000, 400)))]
    path.write_text("\n".join(rows) + "\n")
    return path


def home() -> Path:
    return Path(os.environ["DPGUI_HOME"])


def autosave_folder() -> Path:
    return home() / "autosave"


def no_noise():
    raise AssertionError("restoring or opening a project must never draw noise")


def prepare_workspace(qtbot, window, csv: Path) -> Plan:
    """age, [0, 100), 50 bins, branching 6x10 (the 50 bins and the leaf for missing values), ε = 0.5 with a
    hand-set level budget."""
    open_and_wait(qtbot, window, csv)
    set_column(qtbot, window, "age", "0", "100", "50")
    page = window.plan_page
    page.branching.set_text("6x10")
    page.branching.edited.emit()
    page.set_epsilon(0.5)
    qtbot.waitUntil(lambda: page.plan.privacy.epsilon == 0.5 and page.plan.shape.branching == (6, 10)
                    and not page.is_planning(), timeout=TIMEOUT)
    page.budgets.set_budget(1, 0.123)
    page.consistency.setCurrentIndex(page.consistency.findData("l1"))
    assert page.plan.level_epsilons[0] == pytest.approx(0.123, abs=1e-9)
    return page.plan


def wait_applied(qtbot, window, csv: Path, released: bool) -> None:
    qtbot.waitUntil(lambda: window.table is not None and window.table.path == csv
                    and (not released or window.result_view.release() is not None)
                    and window._count_worker is None and not window.pool.busy()
                    and window.plan_page.plan is not None and not window.plan_page.is_planning(), timeout=TIMEOUT)


def assert_same_workspace(window, plan: Plan, cumulative: np.ndarray | None) -> None:
    page = window.data_page
    assert page.current_column().name == "age"
    assert (page.lower_field.value(), page.upper_field.value(), page.bins.value()) == (0, 100, 50)
    plan_page = window.plan_page
    assert plan_page.plan == plan  # the same budgets, exactly: nothing was re-planned
    assert plan_page.plan.level_epsilons == plan.level_epsilons
    assert plan_page.consistency_method() == "l1"
    assert plan_page.branching.text() == plan.shape.label
    assert plan_page.epsilon.value() == 0.5
    if cumulative is not None:
        shown = window.result_view.release()
        np.testing.assert_array_equal(shown.cumulative, cumulative)
        # the confidential histogram is not stored, so the comparison cannot be switched on
        assert not window.result_view.true_checkbox.isEnabled()
        assert "Nothing was released or spent now" in window.release_status.text()
    assert window.cdf.outcome is None  # nothing was released in this window


# --------------------------------------------------------------------------------------------- save / open

def test_save_after_release_then_open_in_a_fresh_window(qtbot, people_csv, tmp_path):
    first = make_window(qtbot)
    plan = prepare_workspace(qtbot, first, people_csv)
    release_and_wait(qtbot, first)
    cumulative = first.cdf.outcome.release.cumulative.copy()
    assert first.isWindowModified()
    target = tmp_path / "work.dpgui"
    assert first.project.save_to(target)
    assert not first.isWindowModified() and "work.dpgui" in first.windowTitle()
    saved = json.loads(target.read_text())
    assert saved["column"] == "age" and len(saved["releases"]) == 1
    assert saved["data_path"] == str(people_csv)

    second = make_window(qtbot)
    second.noise_source = no_noise
    assert second.project.open_project(target)
    wait_applied(qtbot, second, people_csv, released=True)
    assert_same_workspace(second, plan, cumulative)
    assert second.tabs.currentIndex() == 3  # the results step shows the release
    assert not second.isWindowModified()
    assert second.windowTitle().startswith("work.dpgui")
    # a change marks the project modified; Ctrl+S saves it in place
    second.data_page.bins.set_text("40")
    second.data_page.bins.edited.emit()
    wait_plan(qtbot, second, 40)
    assert second.isWindowModified()
    assert second.project.save()
    assert load_project(target).bins == 40 and not second.isWindowModified()
    assert len(load_project(target).releases) == 1  # the earlier release is kept


def test_locked_levels_are_saved_and_restored(qtbot, people_csv, tmp_path):
    first = make_window(qtbot)
    plan = prepare_workspace(qtbot, first, people_csv)
    target = tmp_path / "work.dpgui"
    assert first.project.save_to(target) and not first.isWindowModified()
    first.plan_page.budgets.set_locked(1)
    assert first.isWindowModified()  # a lock is part of the workspace
    assert first.project.save()
    assert load_project(target).locked_levels == (1,)

    second = make_window(qtbot)
    open_and_wait(qtbot, second, people_csv)  # another workspace with level 2 locked, in the same tree
    set_column(qtbot, second, "age", "0", "100", "50")
    second.plan_page.branching.set_text("6x10")
    second.plan_page.branching.edited.emit()
    qtbot.waitUntil(lambda: second.plan_page.plan.shape.branching == (6, 10) and not second.plan_page.is_planning(),
                    timeout=TIMEOUT)
    second.plan_page.budgets.set_locked(2)
    second.noise_source = no_noise
    assert second.project.open_project(target)
    wait_applied(qtbot, second, people_csv, released=False)
    assert_same_workspace(second, plan, None)
    assert second.plan_page.budgets.locked() == {1: pytest.approx(0.123, abs=1e-9)}  # level 2's lock is gone
    assert not second.isWindowModified()
    # the restored lock holds: a new ε keeps level 1 at 0.123
    second.plan_page.set_epsilon(1.0)
    qtbot.waitUntil(lambda: second.plan_page.plan.privacy.epsilon == 1.0 and not second.plan_page.is_planning(),
                    timeout=TIMEOUT)
    assert second.plan_page.plan.level_epsilons[0] == pytest.approx(0.123, abs=1e-9)


def test_a_project_file_dropped_or_given_on_the_command_line_opens_as_a_project(qtbot, people_csv, tmp_path):
    first = make_window(qtbot)
    plan = prepare_workspace(qtbot, first, people_csv)
    assert first.project.save_to(tmp_path / "work.dpgui")
    second = make_window(qtbot)
    second.open_file(str(tmp_path / "work.dpgui"))  # what drag-and-drop and `dpgui work.dpgui` call
    wait_applied(qtbot, second, people_csv, released=False)
    assert_same_workspace(second, plan, None)
    assert second.project.path == tmp_path / "work.dpgui" and not second.isWindowModified()


def test_menu_actions_and_shortcuts(qtbot):
    window = make_window(qtbot)
    assert window.save_project_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Save)
    assert window.open_project_action.shortcut() == QKeySequence("Ctrl+Shift+O")
    assert window.save_project_as_action.shortcut() == QKeySequence("Ctrl+Shift+S")
    file_menu = window.menuBar().actions()[0].menu()
    assert {window.open_project_action, window.save_project_action, window.save_project_as_action} <= set(
        file_menu.actions())
    shortcuts = [a.shortcut().toString() for a in window.findChildren(type(window.open_action))
                 if not a.shortcut().isEmpty()]
    assert len(shortcuts) == len(set(shortcuts)), shortcuts  # no shortcut is used twice


def test_bad_project_file_gives_a_clear_message(qtbot, tmp_path):
    window = make_window(qtbot)
    bad = tmp_path / "broken.dpgui"
    bad.write_text("{ not json")
    assert not window.project.open_project(bad)
    message = error_text(window)
    assert "Cannot open this project" in message and "not a dpgui project" in message
    newer = tmp_path / "newer.dpgui"
    newer.write_text(json.dumps({"format": "dpgui-project", "version": 99}))
    assert not window.project.open_project(newer)
    assert "newer dpgui" in error_text(window)
    assert window.table is None and window.isVisible()


def test_missing_data_file_asks_to_locate_it(qtbot, people_csv, tmp_path, monkeypatch):
    first = make_window(qtbot)
    plan = prepare_workspace(qtbot, first, people_csv)
    target = tmp_path / "work.dpgui"
    assert first.project.save_to(target)
    moved = tmp_path / "elsewhere" / "people.csv"
    moved.parent.mkdir()
    people_csv.rename(moved)

    second = make_window(qtbot)
    assert not second.project.open_project(target)
    message = error_text(second)
    assert "not found" in message and str(people_csv) in message and "locate" in message.lower()
    box = second.project.locate_box
    assert box is not None and box.isVisible()
    assert second.table is None and second.isVisible()
    # "Locate…" → the officer picks the moved file → the project opens with it
    monkeypatch.setattr(project_module.QFileDialog, "getOpenFileName", lambda *a, **k: (str(moved), ""))
    box.locate_button.click()
    wait_applied(qtbot, second, moved, released=False)
    assert_same_workspace(second, plan, None)
    assert second.isWindowModified()  # the data file's place changed: save to remember it
    assert second.project.save()
    assert load_project(target).data_path == str(moved)


# --------------------------------------------------------------------------------------------- autosave

def test_autosave_appears_after_a_change_and_right_after_a_release(qtbot, people_csv):
    window = make_window(qtbot)
    marker = autosave_folder() / "session.lock"
    assert marker.read_text().splitlines()[0] == str(os.getpid())
    autosave = autosave_folder() / "workspace.dpgui"
    open_and_wait(qtbot, window, people_csv)
    set_column(qtbot, window, "age", "0", "100", "50")
    qtbot.waitUntil(lambda: autosave.exists() and load_project(autosave).bins == 50, timeout=10_000)
    saved = load_project(autosave)
    assert saved.column == "age" and saved.plan is not None and saved.releases == ()
    window.project.autosave_timer.setInterval(60_000)  # from here on only the release may trigger it
    release_and_wait(qtbot, window)
    qtbot.waitUntil(lambda: len(load_project(autosave).releases) == 1, timeout=5_000)
    record = load_project(autosave).releases[0]
    np.testing.assert_array_equal(record.to_release().cumulative, window.cdf.outcome.release.cumulative)
    assert not list(autosave_folder().glob(".*.tmp"))


def test_clean_close_removes_the_marker_and_offers_nothing_next_time(qtbot, people_csv):
    first = make_window(qtbot)
    first.project.autosave_timer.setInterval(50)
    open_and_wait(qtbot, first, people_csv)
    set_column(qtbot, first, "age", "0", "100", "50")
    autosave = autosave_folder() / "workspace.dpgui"
    qtbot.waitUntil(autosave.exists, timeout=10_000)
    assert first.close()  # untitled, nothing released: closes without asking
    assert not (autosave_folder() / "session.lock").exists()
    assert not autosave.exists()

    second = make_window(qtbot)
    qtbot.wait(200)
    assert second.project.pending_restore() is None and second.project.restore_box is None
    assert (autosave_folder() / "session.lock").exists()


# --------------------------------------------------------------------------------------------- crash

def crashed_session(csv: Path, ledgered: bool = False) -> tuple[Plan, np.ndarray]:
    """What a crashed dpgui leaves behind: its marker (a dead PID) and an autosave with a release.

    ``ledgered``: the release was made as the window makes it (spent in the budget ledger, secure
    noise, its output recorded), so it may be signed; otherwise an unledgered test release "r-1"."""
    shape = TreeShape(50, (6, 10), missing_leaf=True)  # change: the missing values' leaf is the 51st
    plan = Plan(shape, PrivacySpec(0.5), (0.123, 0.5 - 0.123))
    hist = column_histogram(csv, "age", 0.0, 100.0, 50, "drop")
    if ledgered:
        with Ledger() as ledger:
            ledger.set_cap("people", 1.0)
            released, info = spend_and_release(ledger, "people", "age", "drop", hist.counts, plan, SecureRandom(),
                                               0.0, 100.0, "l1", n_missing=hist.n_missing)
        record = ProjectRelease.from_release(released, info.release_id, info.created_utc, "age", info.missing)
    else:
        released = engine_release(hist.counts, plan, SeededRandom(9), 0.0, 100.0, "l1")
        record = ProjectRelease.from_release(released, "r-1", "2026-03-04T05:06:07+00:00", "age", "drop")
    workspace = Project(data_path=str(csv), column="age", lower=0.0, upper=100.0, bins=50, missing="drop",
                        dataset="people", plan=plan.to_json(), consistency="l1", branching="6x10", releases=(record,))
    folder = autosave_folder()
    folder.mkdir(parents=True, exist_ok=True)
    save_project(workspace, folder / "workspace.dpgui")
    (folder / "session.lock").write_text(f"{dead_pid()}\nsomehost\n2026-03-04T05:00:00+00:00\n")
    return plan, released.cumulative


def test_after_a_crash_the_window_offers_to_restore(qtbot, people_csv):
    plan, cumulative = crashed_session(people_csv)
    window = make_window(qtbot)
    window.noise_source = no_noise
    qtbot.waitUntil(lambda: window.project.restore_box is not None and window.project.restore_box.isVisible(),
                    timeout=5_000)
    box = window.project.restore_box
    assert "did not close properly last time" in box.text() and "Restore the workspace from" in box.text()
    assert "spends no privacy budget" in box.informativeText()
    assert window.project.pending_restore().releases[0].release_id == "r-1"
    # the crashed session's autosave is set aside, so this session's autosaves cannot overwrite it
    assert (autosave_folder() / "recovered.dpgui").exists()
    assert (autosave_folder() / "session.lock").read_text().splitlines()[0] == str(os.getpid())
    box.restore_button.click()
    wait_applied(qtbot, window, people_csv, released=True)
    assert_same_workspace(window, plan, cumulative)
    assert window.project.pending_restore() is None
    assert len(window.project.releases) == 1


def test_restore_can_be_discarded_or_applied_without_the_prompt(qtbot, people_csv):
    crashed_session(people_csv)
    window = make_window(qtbot)
    qtbot.waitUntil(lambda: window.project.restore_box is not None, timeout=5_000)
    window.project.restore_box.discard_button.click()
    assert window.project.pending_restore() is None
    assert not (autosave_folder() / "recovered.dpgui").exists()
    assert window.table is None


def test_a_restored_release_can_still_be_exported_as_a_signed_bundle(qtbot, people_csv, tmp_path, monkeypatch):
    """A crash after the release but before its export loses nothing: the restored release exports."""
    import csv as csv_module

    from dpgui.report.bundle import verify_bundle
    from dpgui.report.keystore import create_key, load_public_key

    _plan, cumulative = crashed_session(people_csv, ledgered=True)
    release_id = load_project(autosave_folder() / "workspace.dpgui").releases[0].release_id
    monkeypatch.setattr(project_module.ProjectController, "offer_restore", lambda self: None)
    window = make_window(qtbot)
    assert window.project.restore()
    wait_applied(qtbot, window, people_csv, released=True)
    assert window.export_bundle_action.isEnabled() and window.export_button.isEnabled()
    assert "secure noise, confirmed by the budget ledger" in window.release_status.text()
    key = create_key("officer", "restore test passphrase")
    dialog = window.cdf.export_dialog()
    dialog.folder.setText(str(tmp_path))
    dialog.passphrase.setText("restore test passphrase")
    paths = dialog.export()
    assert paths is not None, dialog.message.text()
    result = verify_bundle(paths.manifest, load_public_key(key.public_path))
    assert result.ok, result.failure
    assert result.manifest["release_id"] == release_id and result.manifest["column"] == "age"
    with open(paths.csv, newline="") as handle:
        exported = [int(row["cumulative_count"]) for row in csv_module.DictReader(handle)]
    assert exported == [int(c) for c in cumulative]


def test_restore_methods_bypass_the_prompt(qtbot, people_csv, monkeypatch):
    plan, cumulative = crashed_session(people_csv)
    monkeypatch.setattr(project_module.ProjectController, "offer_restore", lambda self: None)
    window = make_window(qtbot)
    window.noise_source = no_noise
    pending = window.project.pending_restore()
    assert pending is not None and pending.column == "age"
    assert window.project.restore()
    wait_applied(qtbot, window, people_csv, released=True)
    assert_same_workspace(window, plan, cumulative)


# --------------------------------------------------------------------------------------------- closing

def answer(box: QMessageBox, button: QMessageBox.StandardButton) -> None:
    assert box is not None and box.isVisible()
    box.button(button).click()


class WindowSystemClose:
    """A close event as the window's close button sends it (spontaneous, from the window system)."""

    def __init__(self) -> None:
        self.ignored = False

    def spontaneous(self) -> bool:
        return True

    def ignore(self) -> None:
        self.ignored = True


def test_quit_with_unsaved_releases_asks_save_discard_cancel(qtbot, people_csv, tmp_path, monkeypatch):
    window = make_window(qtbot)
    prepare_workspace(qtbot, window, people_csv)
    release_and_wait(qtbot, window)
    window.quit_action.trigger()  # File → Quit asks first
    box = window.project.close_box
    assert "not saved in a project file" in box.text()
    answer(box, QMessageBox.StandardButton.Cancel)
    assert window.isVisible()
    # Save → the Save As dialog → saved, then the window closes
    target = tmp_path / "kept"
    monkeypatch.setattr(project_module.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    window.quit_action.trigger()
    answer(window.project.close_box, QMessageBox.StandardButton.Save)
    assert not window.isVisible()
    assert len(load_project(tmp_path / "kept.dpgui").releases) == 1
    assert not (autosave_folder() / "session.lock").exists()


def test_close_button_on_a_modified_project_asks_then_discards(qtbot, people_csv, tmp_path):
    window = make_window(qtbot)
    prepare_workspace(qtbot, window, people_csv)
    assert window.project.save_to(tmp_path / "work.dpgui")
    assert window.project.close_approved(WindowSystemClose())  # saved: nothing to ask
    window.plan_page.consistency.setCurrentIndex(window.plan_page.consistency.findData("l2"))
    assert window.isWindowModified() and "work.dpgui" in window.windowTitle()
    event = WindowSystemClose()
    assert not window.project.close_approved(event) and event.ignored
    box = window.project.close_box
    assert "Save the changes to the project 'work.dpgui'" in box.text()
    answer(box, QMessageBox.StandardButton.Discard)
    assert not window.isVisible()
    assert load_project(tmp_path / "work.dpgui").consistency == "l1"  # the file was left as saved


def test_what_is_worth_a_question(qtbot, people_csv):
    window = make_window(qtbot)
    open_and_wait(qtbot, window, people_csv)
    assert window.isWindowModified() and not window.project.needs_save_prompt()  # only looked at a file
    assert window.data_page.select_column("age")
    assert window.project.needs_save_prompt()  # a column chosen: worth keeping
    # close() from code (scripts, tests) never waits for an answer, and exits cleanly
    assert window.close()
    assert window.project.close_box is None
    assert not (autosave_folder() / "session.lock").exists()


def test_the_restore_question_counts_the_releases_of_every_statistic(qtbot):
    """The releases of every part of the project are counted (before, the counts of one column's were not)."""
    from dpgui.app.main import create_application
    from dpgui.app.shell.project_questions import restore_prompt
    from dpgui.report.project_sections import ProjectSection
    from dpgui.vocabulary import StatisticKind

    create_application()
    kept = (object(), object())  # the question reads only how many there are
    project = Project(data_path="/data/people.csv", column="age",
                      sections={StatisticKind.HIERARCHY: ProjectSection(None, kept[:1]),
                                StatisticKind.COUNTS: ProjectSection(None, kept)})
    box = restore_prompt(None, project, "yesterday")
    assert "3 releases made then" in box.informativeText()
    box.deleteLater()
