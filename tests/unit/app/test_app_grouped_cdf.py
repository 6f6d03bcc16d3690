"""The "CDF for each group" mode, headless, as the officer uses it: open a file, choose the mode from the
window's table of modes, choose the columns, type the public groups, read the projected error before anything
is spent, release through the budget ledger (the shared plan's ε once), export a signed bundle that verifies,
save and reopen the project."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from dpgui.core.noise import SecureRandom
from dpgui.core.planner import margin95
from dpgui.report.keystore import create_key, load_public_key
from dpgui.report.ledger import Ledger
from dpgui.vocabulary import AccuracyWhere, StatisticKind
from dpgui.workspace.statistics import verify

from gui_helpers import TIMEOUT, click_release_in_confirmation, error_text, make_window, open_and_wait

PASSPHRASE = "grouped passphrase"
ROWS = [("AA", 5.0), ("AA", 12.5), ("DL", -3.0), ("DL", 40.0), ("DL", 7.0), ("UA", 99.0), ("WN", 1.0)] * 3


def spends() -> list:
    with Ledger() as ledger:
        return [(e.dataset_id, e.epsilon) for e in ledger.releases()]


def grouped_mode(window):
    return window.statistic_modes[StatisticKind.GROUPED_CDF]


def _grouped_window(qtbot, tmp_path: Path):
    path = tmp_path / "flights.csv"
    path.write_text("carrier,dep_delay\n" + "".join(f"{c},{d}\n" for c, d in ROWS), encoding="utf-8")
    window = make_window(qtbot)
    open_and_wait(qtbot, window, path)
    window.choose_mode(StatisticKind.GROUPED_CDF)
    page = grouped_mode(window)
    assert window.mode is page and window.modes.currentWidget() is page
    page.column.setCurrentIndex(page.column.findText("dep_delay"))
    page.group_column.setCurrentIndex(page.group_column.findText("carrier"))
    page.lower_bound.set_text("-10")
    page.upper_bound.set_text("110")
    page.bins.setValue(12)
    return window, page


def release_and_wait(qtbot, window) -> None:
    page = grouped_mode(window)
    before = page.outcome
    click_release_in_confirmation("Release")
    window.release()
    qtbot.waitUntil(lambda: page.release_worker is None and (page.outcome is not before or error_text(window) != ""),
                    timeout=TIMEOUT)


def test_release_export_and_verify_a_grouped_cdf_from_the_window(qtbot, tmp_path: Path) -> None:
    window, page = _grouped_window(qtbot, tmp_path)
    window.noise_source = SecureRandom  # only secure noise may be signed
    page.groups.setPlainText("AA\nDL\nB6")
    page.other.setCurrentIndex(page.other.findData("other"))
    page.epsilon.set_text("0.5")
    page.epsilon.edited.emit()
    planned = page.planned()
    # the projected error before anything is spent: the shared plan's margin at its worst CDF point
    assert f"±{margin95(planned.plan.tree, AccuracyWhere.EVERY):,.0f} records" in page.projection.text()
    assert spends() == []
    release_and_wait(qtbot, window)
    outcome = page.outcome
    assert outcome is not None, error_text(window)
    assert outcome.release.labels == ("AA", "DL", "B6", "other") and outcome.release.secure
    assert spends() == [("flights", 0.5)]  # once for all four groups
    assert page.results.rowCount() == 4 and page.results.item(2, 0).text() == "B6"
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
    assert result.manifest["kind"] == "grouped_cdf" and result.manifest["release_id"] == outcome.release_id
    with open(paths.csv, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["group"] for r in rows[::12]] == ["AA", "DL", "B6", "other"]
    assert [float(r["cumulative_count"]) for r in rows[:12]] == outcome.release.releases[0].cumulative.tolist()
    with Ledger() as ledger:
        assert ledger.release(outcome.release_id).bundle == str(paths.manifest.resolve())
    assert spends() == [("flights", 0.5)]  # exporting spends nothing
    page.grab().save(str(tmp_path / "grouped-page.png"))


def test_a_grouped_release_is_kept_in_the_project_file(qtbot, tmp_path: Path) -> None:
    window, page = _grouped_window(qtbot, tmp_path)
    page.groups.setPlainText("AA, DL")
    release_and_wait(qtbot, window)
    outcome = page.outcome
    assert outcome is not None, error_text(window)
    project = tmp_path / "work.dpgui"
    assert window.project.save_to(project)

    reopened = make_window(qtbot)
    assert reopened.project.open_project(project)
    qtbot.waitUntil(lambda: grouped_mode(reopened).outcome is not None, timeout=TIMEOUT)
    restored = grouped_mode(reopened)
    assert reopened.mode is restored  # the mode the project was saved in
    assert restored.outcome.release_id == outcome.release_id
    for group, again in zip(outcome.release.releases, restored.outcome.release.releases):
        assert np.array_equal(group.cumulative, again.cumulative)
    assert not restored.outcome.release.secure  # a project file is not evidence: the ledger says at export
    assert restored.stated_groups().labels == ("AA", "DL") and restored.group_column.currentText() == "carrier"
    assert restored.bins.value() == 12 and "Restored" in restored.release_status.text()


def test_no_group_is_a_message_on_the_page_and_nothing_is_spent(qtbot, tmp_path: Path) -> None:
    window, page = _grouped_window(qtbot, tmp_path)
    page.groups.setPlainText("")
    window.release()
    assert "list of groups is empty" in page.release_status.text() and "No projection" in page.projection.text()
    assert spends() == []


def test_a_grouped_release_stays_in_the_session_list_and_shows_again(qtbot, tmp_path: Path) -> None:
    """Other data opened: the grouped release leaves the screen after the question, stays listed, and one click
    shows it again in its own mode, spending nothing; the groups come from a public list, never the data file."""
    window, page = _grouped_window(qtbot, tmp_path)
    listed = tmp_path / "carriers.txt"
    listed.write_text("DL\nAA\n", encoding="utf-8")
    assert page.load_groups(listed) and page.stated_groups().labels == ("DL", "AA")
    assert not page.load_groups(tmp_path / "flights.csv")  # the open data itself is refused
    assert "never read from the data" in page.groups_message.text()
    release_and_wait(qtbot, window)
    release_id = page.outcome.release_id
    entry = window.session.releases.get(release_id)
    assert entry is not None and entry.kind is StatisticKind.GROUPED_CDF and entry.made_here
    other = tmp_path / "other.csv"
    other.write_text("carrier,dep_delay\nAA,3\n", encoding="utf-8")
    window.open_file(str(other))
    qtbot.waitUntil(lambda: window.session.leave_box is not None and window.session.leave_box.isVisible(), timeout=5000)
    box = window.session.leave_box
    assert "CDF of dep_delay for each carrier" in box.text()
    box.open_button.click()
    qtbot.waitUntil(lambda: window.table is not None and window.table.path == other, timeout=TIMEOUT)
    assert page.outcome is None and page.releases == ()
    window.choose_mode(StatisticKind.CDF)
    assert window.session.reopen(release_id)
    assert window.mode is page and page.outcome is not None and page.outcome.release_id == release_id
    assert "flights.csv" in page.release_status.text() and spends() == [("flights", 1.0)]


def test_the_results_show_every_groups_median_and_mean_with_intervals(qtbot, tmp_path: Path) -> None:
    """The table's median and mean cells are group_summaries' figures (bins 10 wide: medians to whole numbers),
    each with the interval that holds the group's true figure; a cell's tooltip words the mean's parts."""
    from dpgui.core.cdf_moments import group_summaries
    from dpgui.formatting import format_fixed, moment_decimals

    window, page = _grouped_window(qtbot, tmp_path)
    page.groups.setPlainText("AA\nDL\nB6")
    page.epsilon.set_text("4")
    page.epsilon.edited.emit()
    release_and_wait(qtbot, window)
    outcome = page.outcome
    assert outcome is not None, error_text(window)
    headers = [page.results.horizontalHeaderItem(c).text() for c in range(page.results.columnCount())]
    assert headers[2:4] == ["Median (95 % interval)", "Mean (95 % interval)"]
    summaries = group_summaries(outcome.release.labels, outcome.release.releases)
    for row, summary in enumerate(summaries):
        median, mean = summary.median, summary.moments.mean
        if median is not None:
            assert page.results.item(row, 2).text() == (
                f"{format_fixed(median.value, 0)} ({format_fixed(median.low, 0)} to {format_fixed(median.high, 0)})")
        if mean is None:
            assert page.results.item(row, 3).text() == "—"
            continue
        places = moment_decimals(mean.noise_margin, mean.binning)
        assert page.results.item(row, 3).text() == (
            f"{format_fixed(mean.value, places)} ({format_fixed(mean.low, places)} to {format_fixed(mean.high, places)})")
        assert "binning adds at most ± 5" in page.results.item(row, 3).toolTip()
    page.results.parentWidget().grab().save(str(tmp_path / "grouped-results.png"))
