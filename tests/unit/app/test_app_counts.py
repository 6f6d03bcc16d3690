"""The "Counts of one column" mode, headless, as the officer uses it: open a file, choose the mode from the
window's one table of modes, choose the column, type the public categories, read the projected error before
anything is spent, release through the budget ledger, export a signed bundle that verifies, save and reopen the
project. Bad inputs (no category, a value of the data not in the list) are messages; nothing is spent."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from dpgui.app.shell.mode_table import MODES
from dpgui.core.noise import SecureRandom
from dpgui.report.keystore import create_key, load_public_key
from dpgui.report.ledger import Ledger
from dpgui.vocabulary import ReleaseKind, StatisticKind
from dpgui.workspace.statistics import verify

from gui_helpers import TIMEOUT, click_release_in_confirmation, error_text, make_window, open_and_wait, open_other_data

PASSPHRASE = "counts passphrase"
STATES = ["OR"] * 5 + ["WA"] * 3 + ["ID"] * 2


def spends() -> list:
    with Ledger() as ledger:
        return [(e.dataset_id, e.epsilon) for e in ledger.releases()]


def _people(tmp_path: Path, states: list[str]) -> Path:
    path = tmp_path / "people.csv"
    path.write_text("state,age\n" + "".join(f"{s},{20 + i}\n" for i, s in enumerate(states)), encoding="utf-8")
    return path


def counts_mode(window):
    """The window's counts mode, found in its table of modes as the window finds it."""
    return window.statistic_modes[StatisticKind.COUNTS]


def _counts_window(qtbot, tmp_path: Path, states: list[str] = STATES):
    window = make_window(qtbot)
    open_and_wait(qtbot, window, _people(tmp_path, states))
    window.choose_mode(StatisticKind.COUNTS)
    page = counts_mode(window)
    assert window.mode is page and window.modes.currentWidget() is page
    page.column.setCurrentIndex(page.column.findText("state"))
    return window, page


def release_and_wait(qtbot, window) -> None:
    page = counts_mode(window)
    before = page.outcome
    click_release_in_confirmation("Release")
    window.release()
    qtbot.waitUntil(lambda: page.release_worker is None and (page.outcome is not before or error_text(window) != ""),
                    timeout=TIMEOUT)


def test_the_window_takes_its_modes_from_one_table(qtbot) -> None:
    window = make_window(qtbot)
    assert list(window.mode_buttons) == list(MODES) == [StatisticKind.CDF, StatisticKind.HIERARCHY,
                                                        StatisticKind.COUNTS, StatisticKind.GROUPED_CDF,
                                                        ReleaseKind.PLAN]
    for kind, mode in window.statistic_modes.items():
        assert mode.kind is kind and window.modes.indexOf(mode.steps()) >= 0
        assert window.mode_buttons[kind].text() == MODES[kind].label
    assert window.mode.kind is StatisticKind.CDF


def test_release_export_and_verify_counts_from_the_window(qtbot, tmp_path: Path) -> None:
    window, page = _counts_window(qtbot, tmp_path)
    window.noise_source = SecureRandom  # only secure noise may be signed
    page.categories.setPlainText("OR\nWA\nID\nCA")
    page.epsilon.set_text("0.5")
    page.epsilon.edited.emit()
    # the projected error before anything is spent: Δ₁ = 2 under change, t = 2/0.5 = 4; P(|Z| > m) = 2q^(m+1)/(1+q)
    q = math.exp(-1 / 4)
    margin = next(m for m in range(1000) if 2 * q ** (m + 1) / (1 + q) <= 0.05)
    assert f"±{margin:,} records" in page.projection.text() and spends() == []
    release_and_wait(qtbot, window)
    outcome = page.outcome
    assert outcome is not None, error_text(window)
    assert outcome.release.plan.categories == ("OR", "WA", "ID", "CA") and outcome.release.secure
    assert spends() == [("people", 0.5)]
    assert page.results.rowCount() == 4 and page.results.item(3, 0).text() == "CA"
    assert page.results.item(0, 2).text() == f"± {margin:,}"
    assert window.export_bundle_action.isEnabled() and page.export_button.isEnabled()

    key = create_key("officer", PASSPHRASE)
    out = tmp_path / "out"
    out.mkdir()
    dialog = page.export_dialog()
    assert dialog is not None
    dialog.folder.setText(str(out))
    dialog.passphrase.setText(PASSPHRASE)
    paths = dialog.export()
    assert paths is not None, dialog.message.text()
    result = verify(paths.manifest, load_public_key(key.public_path))
    assert result.ok, result.failure
    assert result.manifest["kind"] == "counts" and result.manifest["release_id"] == outcome.release_id
    with open(paths.csv, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["category"] for r in rows] == ["OR", "WA", "ID", "CA"]
    assert [int(r["released_count"]) for r in rows] == outcome.release.counts.tolist()
    with Ledger() as ledger:
        assert ledger.release(outcome.release_id).bundle == str(paths.manifest.resolve())
    assert spends() == [("people", 0.5)]  # exporting spends nothing


def test_a_counts_release_is_kept_in_the_project_file(qtbot, tmp_path: Path) -> None:
    window, page = _counts_window(qtbot, tmp_path)
    page.categories.setPlainText("OR, WA, ID")
    release_and_wait(qtbot, window)
    outcome = page.outcome
    assert outcome is not None, error_text(window)
    project = tmp_path / "work.dpgui"
    assert window.project.save_to(project)

    reopened = make_window(qtbot)
    assert reopened.project.open_project(project)
    qtbot.waitUntil(lambda: counts_mode(reopened).outcome is not None, timeout=TIMEOUT)
    restored = counts_mode(reopened)
    assert reopened.mode is restored  # the mode the project was saved in
    assert restored.outcome.release_id == outcome.release_id
    assert restored.outcome.release.counts.tolist() == outcome.release.counts.tolist()
    assert not restored.outcome.release.secure  # a project file is not evidence: the ledger says at export
    assert restored.stated_categories() == ("OR", "WA", "ID") and restored.column.currentText() == "state"
    assert "Restored" in restored.release_status.text()


def test_a_value_not_in_the_list_stops_the_release_and_spends_nothing(qtbot, tmp_path: Path) -> None:
    window, page = _counts_window(qtbot, tmp_path)
    page.categories.setPlainText("OR\nWA")  # ID is in the data
    release_and_wait(qtbot, window)
    assert page.outcome is None
    message = error_text(window)
    assert "not among the stated categories" in message and "'ID'" not in message  # data values are never quoted
    assert "Nothing was spent" in message and spends() == []


def test_no_category_is_a_message_on_the_page(qtbot, tmp_path: Path) -> None:
    window, page = _counts_window(qtbot, tmp_path)
    page.categories.setPlainText("")
    window.release()
    assert "No category was stated" in page.release_status.text() and "No projection" in page.projection.text()
    assert spends() == []


def test_the_categories_come_from_a_public_list_never_from_the_data_file(qtbot, tmp_path: Path) -> None:
    _, page = _counts_window(qtbot, tmp_path)
    listed = tmp_path / "states.txt"
    listed.write_text("WA\nOR\nID\n", encoding="utf-8")
    assert page.load_categories(listed)
    assert page.stated_categories() == ("WA", "OR", "ID") and "states.txt" in page.categories_note.text()
    assert not page.load_categories(tmp_path / "people.csv")  # the open data itself is refused
    assert "never read from the data" in page.categories_message.text()


def test_a_counts_release_stays_in_the_session_list_and_shows_again(qtbot, tmp_path: Path) -> None:
    """Other data opened: the counts release leaves the screen after the question, stays listed, and one click
    shows it again in its own mode (made from the data it names), spending nothing."""
    window, page = _counts_window(qtbot, tmp_path)
    page.categories.setPlainText("OR\nWA\nID")
    release_and_wait(qtbot, window)
    release_id = page.outcome.release_id
    entry = window.session.releases.get(release_id)
    assert entry is not None and entry.kind is StatisticKind.COUNTS and entry.made_here
    other = tmp_path / "other.csv"
    other.write_text("state\nOR\n", encoding="utf-8")
    window.open_file(str(other))
    qtbot.waitUntil(lambda: window.session.leave_box is not None and window.session.leave_box.isVisible(), timeout=5000)
    box = window.session.leave_box
    assert "Counts of state" in box.text()
    box.open_button.click()
    qtbot.waitUntil(lambda: window.table is not None and window.table.path == other, timeout=TIMEOUT)
    assert page.outcome is None and page.releases == () and window.project.capture().section(StatisticKind.COUNTS).releases == ()
    window.choose_mode(StatisticKind.CDF)
    assert window.session.reopen(release_id)
    assert window.mode is page and page.outcome is not None and page.outcome.release_id == release_id
    assert "people.csv" in page.release_status.text() and spends() == [("people", 1.0)]


def test_a_restored_counts_release_shows_again_from_the_session_as_restored(qtbot, tmp_path: Path) -> None:
    """A counts release restored from a project, then shown again from the session's list after other data was
    opened, is said to be restored (nothing spent now), never "released" again."""
    window, page = _counts_window(qtbot, tmp_path)
    page.categories.setPlainText("OR\nWA\nID")
    release_and_wait(qtbot, window)
    release_id = page.outcome.release_id
    assert window.project.save_to(tmp_path / "people.dpgui")
    second = make_window(qtbot)
    assert second.project.open_project(tmp_path / "people.dpgui")
    qtbot.waitUntil(lambda: counts_mode(second).outcome is not None, timeout=TIMEOUT)
    assert not second.session.releases.get(release_id).made_here
    other = tmp_path / "other.csv"
    other.write_text("state\nOR\n", encoding="utf-8")
    open_other_data(qtbot, second, other)
    shown = counts_mode(second)
    assert shown.outcome is None and second.session.reopen(release_id)
    assert shown.restored and shown.release_status.text().startswith("Restored the release of 3 counts")
    assert spends() == [("people", 1.0)]
