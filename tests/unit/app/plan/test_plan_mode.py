"""The window's release plan mode, headless, as the officer uses it: choose it from the window's table of modes,
add statistics (a CDF, counts, a CDF for each group), remove and reorder them, see a bad value named and Release
disabled with the reason, split the budget on a worker thread (the chart's figures checked against an
independent sum), and release a two-part plan through ONE budget ledger entry."""

from __future__ import annotations

import math
import sqlite3
import threading
from pathlib import Path

import numpy as np

import dpgui.app.plan.mode as plan_mode
from dpgui.app import text
from dpgui.app.plan.release import confirmation_words
from dpgui.app.shell.mode_table import MODES
from dpgui.core.noise import SecureRandom
from dpgui.report.keystore import create_key, load_public_key
from dpgui.report.ledger import Ledger
from dpgui.vocabulary import Neighbours, ReleaseKind, StatisticKind
from dpgui.workspace.plan_spec import PlanSpec
from dpgui.workspace.statistics import verify

from gui_helpers import (
    TIMEOUT, click_release_in_confirmation, error_text, make_window, open_and_wait, open_other_data,
)

ROWS = [("AA", 5.0, "yes"), ("AA", 12.5, "no"), ("DL", -3.0, "yes"), ("DL", 40.0, "yes"), ("UA", 99.0, "no")] * 20
HUBS = {"AA": "east", "DL": "east", "UA": "west"}
PASSPHRASE = "plan passphrase"


def plan_window(qtbot, tmp_path: Path):
    path = tmp_path / "flights.csv"
    path.write_text("carrier,delay,ontime,hub\n" + "".join(f"{c},{d},{o},{HUBS[c]}\n" for c, d, o in ROWS),
                    encoding="utf-8")
    window = make_window(qtbot)
    open_and_wait(qtbot, window, path)
    window.choose_mode(ReleaseKind.PLAN)
    page = window.statistic_modes[ReleaseKind.PLAN]
    assert window.mode is page and window.modes.currentWidget() is page
    return window, page


def edit_line(edit, value: str) -> None:
    """Type ``value`` into a line edit of the editor, as a user would (its textEdited signal)."""
    edit.setText(value)
    edit.textEdited.emit(value)


def cdf_of_delay(page, weight: str = "1") -> None:
    page.statistics.add_part(StatisticKind.CDF)
    editor = page.statistics.editor
    editor.column.setCurrentIndex(editor.column.findText("delay"))
    edit_line(editor.lower_bound, "-10")
    edit_line(editor.upper_bound, "110")
    edit_line(editor.weight, weight)


def counts_of_ontime(page, weight: str = "1") -> None:
    page.statistics.add_part(StatisticKind.COUNTS)
    editor = page.statistics.editor
    editor.column.setCurrentIndex(editor.column.findText("ontime"))
    editor.categories.setPlainText("yes\nno")
    edit_line(editor.weight, weight)


def release_and_wait(qtbot, window, page) -> None:
    """Release, answering Release in the confirmation, and wait for the outcome or the error."""
    click_release_in_confirmation("Release")
    window.release()
    qtbot.waitUntil(lambda: page.release_worker is None and (page.outcome is not None or error_text(window) != ""),
                    timeout=TIMEOUT)


def split_and_wait(qtbot, page) -> None:
    page.split_button.click()
    qtbot.waitUntil(lambda: page.split_worker is None, timeout=TIMEOUT)


def test_the_plan_is_a_mode_of_the_window(qtbot, tmp_path: Path) -> None:
    window, page = plan_window(qtbot, tmp_path)
    assert list(MODES)[-1] is ReleaseKind.PLAN and window.mode_buttons[ReleaseKind.PLAN].text() == MODES[ReleaseKind.PLAN].label
    assert page.kind is ReleaseKind.PLAN and page.file_label.text() == "Data: flights.csv"
    assert [a.text() for a in page.statistics.add_menu.actions()] == ["CDF of a number column", "CDF for each group",
                                                          "Counts of one column", "Counts over a hierarchy"]
    assert not page.release_button.isEnabled() and "Add at least one statistic" in page.blocker.text()
    # without a person-ID column, records per person is a declaration, and the page says so
    assert page.person.note.text() == ("At most 1 record per person — declared by you, not checked by dpgui "
                                       "(no person-ID column)")


def test_statistics_are_added_removed_and_reordered(qtbot, tmp_path: Path) -> None:
    _, page = plan_window(qtbot, tmp_path)
    cdf_of_delay(page)
    counts_of_ontime(page)
    page.statistics.add_part(StatisticKind.GROUPED_CDF)
    kinds = [c.kind for c in page.choices]
    assert kinds == [StatisticKind.CDF, StatisticKind.COUNTS, StatisticKind.GROUPED_CDF]
    table = page.statistics.table
    assert table.rowCount() == 3 and table.item(1, 0).text().startswith("2. Counts of one column: ontime")
    page.statistics.table.selectRow(2)
    page.statistics.move_part(-1)
    assert [c.kind for c in page.choices] == [StatisticKind.CDF, StatisticKind.GROUPED_CDF, StatisticKind.COUNTS]
    assert page.statistics.selected_row() == 1 and page.statistics.editor.choice.kind is StatisticKind.GROUPED_CDF
    page.statistics.move_part(-1)
    page.statistics.move_part(-1)  # already first: nothing moves
    assert [c.kind for c in page.choices] == [StatisticKind.GROUPED_CDF, StatisticKind.CDF, StatisticKind.COUNTS]
    page.statistics.table.selectRow(1)
    page.statistics.remove_part()
    assert [c.kind for c in page.choices] == [StatisticKind.GROUPED_CDF, StatisticKind.COUNTS]
    assert page.choices[1].settings.get("categories") == ("yes", "no") and page.statistics.table.rowCount() == 2
    assert page.statistics.selected_row() == 1 and page.statistics.editor.choice.kind is StatisticKind.COUNTS


def test_a_bad_value_is_named_and_keeps_release_disabled(qtbot, tmp_path: Path) -> None:
    _, page = plan_window(qtbot, tmp_path)
    cdf_of_delay(page)
    edit_line(page.statistics.editor.lower_bound, "200")  # above the upper bound
    reason = "The lower bound must be below the upper bound."
    assert page.statistics.editor.rows["upper"][1].text() == reason and not page.statistics.editor.rows["upper"][1].isHidden()
    assert not page.split_button.isEnabled() and not page.release_button.isEnabled()
    assert page.blocker.text() == f"Release is not possible yet: Statistic 1: {reason}"
    assert "needs attention" in page.statistics.table.item(0, 0).text()
    edit_line(page.statistics.editor.lower_bound, "-10")
    edit_line(page.statistics.editor.weight, "0")
    assert "weight must be a number above 0" in page.blocker.text() and not page.release_button.isEnabled()
    edit_line(page.statistics.editor.weight, "1")
    counts_of_ontime(page)
    page.delta.set_text("1e-9")
    page.delta.edited.emit()  # Gaussian noise for the CDF, which the counts cannot share
    assert "counts of one column have Laplace noise only" in page.blocker.text() and not page.split_button.isEnabled()
    page.delta.set_text("0")
    page.delta.edited.emit()
    page.statistics.remove_part()  # the counts, selected
    page.statistics.add_part(StatisticKind.GROUPED_CDF)  # no groups typed yet
    assert "Statistic 2: Type the public list of groups" in page.blocker.text()
    page.statistics.editor.groups.setPlainText("AA\nDL")
    assert page.split_button.isEnabled()
    assert page.blocker.text() == ("Release is not possible yet: Press Split to see each statistic's share of the "
                                   "budget before releasing.")


def test_the_split_runs_on_a_worker_thread_and_is_charted(qtbot, tmp_path: Path, monkeypatch) -> None:
    _, page = plan_window(qtbot, tmp_path)
    threads = []
    real = plan_mode.split_plan

    def recorded(*args, **kwargs):
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(plan_mode, "split_plan", recorded)
    cdf_of_delay(page)
    counts_of_ontime(page, weight="4")
    split_and_wait(qtbot, page)
    assert len(threads) == 1 and threads[0] is not threading.main_thread()
    split = page.split
    assert split is not None and page.release_button.isEnabled() and page.blocker.isHidden()
    # independently: Σ w_i m_i of the shares shown, and the shares within the plan's ε
    weighted = 1 * split.parts[0].margin95 + 4 * split.parts[1].margin95
    assert math.isclose(weighted, split.weighted_margin, rel_tol=1e-9)
    assert sum(p.epsilon for p in split.parts) <= 1.0 + 1e-12
    assert split.weighted_margin <= split.equal.weighted_margin + 1e-9
    sentence = page.chart.sentence.text()
    assert f"weighted 95 % margin {split.weighted_margin:,.0f} records" in sentence
    heights = page.chart.bars["share used"].opts["height"]
    assert np.allclose(heights, [p.epsilon for p in split.parts])
    assert page.statistics.table.item(1, 3).text() == f"{split.parts[1].epsilon:.4g}"
    edit_line(page.statistics.editor.weight, "2")  # a changed setting drops the split
    assert page.split is None and not page.release_button.isEnabled() and "Press Split" in page.blocker.text()


def test_a_two_part_plan_is_one_ledger_entry(qtbot, tmp_path: Path) -> None:
    window, page = plan_window(qtbot, tmp_path)
    cdf_of_delay(page)
    page.statistics.add_part(StatisticKind.GROUPED_CDF)
    editor = page.statistics.editor
    editor.column.setCurrentIndex(editor.column.findText("delay"))
    editor.group_column.setCurrentIndex(editor.group_column.findText("carrier"))
    editor.groups.setPlainText("AA\nDL\nB6")
    edit_line(editor.lower_bound, "-10")
    edit_line(editor.upper_bound, "110")
    split_and_wait(qtbot, page)
    assert page.release_button.isEnabled(), page.blocker.text()
    words = confirmation_words(page.plan_request())  # one confirmation: every statistic, its share and margin
    for part in page.split.parts:
        assert f"ε = {part.epsilon:.4g}</td>" in words and f"±{part.margin95:,.0f} records" in words
    assert "32 bins on [-10, 110)" in words and "3 groups, each with its size" in words
    release_and_wait(qtbot, window, page)
    outcome = page.outcome
    assert outcome is not None, error_text(window)
    with Ledger() as ledger:
        entries = ledger.releases("flights")
        spent = ledger.totals("flights").epsilon_spent
    assert [e.release_id for e in entries] == [outcome.plan_id]  # ONE entry for both statistics
    assert math.isclose(spent, page.split.charge.epsilon, rel_tol=1e-9) and spent <= 1.0 + 1e-12
    # independently: Laplace parts compose by adding their ε
    assert math.isclose(spent, sum(part.planned.epsilon for part in outcome.parts), rel_tol=1e-9)
    assert page.results.table.rowCount() == 2 and page.results.table.item(1, 0).text() == outcome.parts[1].item.title
    assert page.results.curves_choice.count() == 1 and not page.results.curves.isHidden()
    assert tuple(outcome.parts[1].release.labels) == ("AA", "DL", "B6")
    groups = page.results.groups  # each group's released size and median, read from its released CDF
    assert [groups.item(row, 0).text() for row in range(groups.rowCount())] == ["AA", "DL", "B6"]
    released_dl = outcome.parts[1].release.releases[1]
    assert groups.item(1, 1).text().startswith(f"{released_dl.total:,.0f} ± ")
    assert " to " in groups.item(1, 2).text() and " to " in groups.item(1, 3).text()  # median and mean, intervals
    assert "spent once for the whole plan" in page.release_status.text()


def test_a_plan_over_the_budget_is_refused_naming_the_statistic(qtbot, tmp_path: Path) -> None:
    window, page = plan_window(qtbot, tmp_path)
    cdf_of_delay(page)
    counts_of_ontime(page)
    split_and_wait(qtbot, page)
    first = page.split.parts[0].charge.epsilon
    with Ledger() as ledger:
        ledger.set_cap("flights", first + 0.01)  # pays for the CDF, not for both
    page.release()  # refused before the confirmation: no dialog to answer
    message = error_text(window)
    assert "pays for part 1 (CDF of delay) but not part 2 (Counts of ontime)" in message, message
    assert message.endswith("Nothing was spent.")
    with Ledger() as ledger:
        assert ledger.releases("flights") == []
    assert page.outcome is None


def test_a_hierarchy_is_planned_on_the_worker_and_a_plan_file_reads_back(qtbot, tmp_path: Path) -> None:
    window, page = plan_window(qtbot, tmp_path)
    cdf_of_delay(page, weight="2")
    page.statistics.add_part(StatisticKind.HIERARCHY)
    editor = page.statistics.editor
    editor.levels[0].setCurrentIndex(editor.levels[0].findText("hub"))
    editor.levels[1].setCurrentIndex(editor.levels[1].findText("carrier"))
    assert page.choices[1].settings["levels"] == ("hub", "carrier")
    assert "read from your data and <b>published</b>" in editor.kind_label.text()  # said before the split reads them
    split_and_wait(qtbot, page)
    assert page.split is not None, page.chart.sentence.text()
    assert [p.part.statistic.kind for p in page.split.parts] == [StatisticKind.CDF, StatisticKind.HIERARCHY]
    assert page.split_items[1].title == "Counts over hub → carrier" and page.release_button.isEnabled()

    plan_file = tmp_path / "plan.toml"
    assert page.save_plan_to(plan_file), error_text(window)
    assert 'levels = ["hub", "carrier"]' in plan_file.read_text(encoding="utf-8")
    saved = list(page.choices)
    page.choices.clear()
    page.epsilon.set_text("3")
    assert page.open_plan_from(plan_file), error_text(window)
    assert page.choices == saved and page.epsilon.text() == "1" and page.dataset_name.text() == "flights"

    split_and_wait(qtbot, page)
    release_and_wait(qtbot, window, page)
    assert page.outcome is not None, error_text(window)
    # the total, the hubs east and west, the carriers AA, DL and UA
    assert page.results.table.item(1, 3).text() == "6 counts: the total and 5 categories on 2 levels"
    hierarchy = page.outcome.parts[1].release.hierarchy
    assert list(hierarchy.level_names) == ["hub", "carrier"]
    with Ledger() as ledger:
        assert [e.release_id for e in ledger.releases()] == [page.outcome.plan_id]  # opening spent nothing


def test_a_released_plan_is_exported_as_one_signed_bundle_that_verifies(qtbot, tmp_path: Path) -> None:
    window, page = plan_window(qtbot, tmp_path)
    window.noise_source = SecureRandom  # only secure noise may be signed
    cdf_of_delay(page)
    counts_of_ontime(page, weight="2")
    split_and_wait(qtbot, page)
    release_and_wait(qtbot, window, page)
    outcome = page.outcome
    assert outcome is not None, error_text(window)
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
    assert result.manifest["kind"] == "plan" and result.manifest["release_id"] == outcome.plan_id
    assert sorted(p.name for p in out.iterdir() if ".part" in p.name) == [
        f"{dialog.name.text()}.part1.csv", f"{dialog.name.text()}.part2.csv"]
    with Ledger() as ledger:
        assert ledger.release(outcome.plan_id).bundle == str(paths.manifest.resolve())
        assert len(ledger.releases("flights")) == 1  # exporting spends nothing
    # next year's plan made like this bundle holds the same statistics and public parameters
    like = PlanSpec.like(result.manifest, "flights-next", str(tmp_path / "flights.csv"), 1.0)
    assert [(p.kind, p.settings.get("column"), p.weight) for p in like.parts] == [
        (StatisticKind.CDF, "delay", 1.0), (StatisticKind.COUNTS, "ontime", 2.0)]
    assert like.parts[1].settings["categories"] == ["yes", "no"] and like.parts[0].settings["lower"] == -10


def test_a_project_saved_in_the_plan_mode_opens_in_the_cdf_mode(qtbot, tmp_path: Path) -> None:
    window, page = plan_window(qtbot, tmp_path)
    cdf_of_delay(page)
    project = tmp_path / "work.dpgui"
    assert window.project.save_to(project)
    assert '"mode": "cdf"' in project.read_text(encoding="utf-8")  # a project file does not hold a plan
    reopened = make_window(qtbot)
    assert reopened.project.open_project(project)
    qtbot.waitUntil(lambda: reopened.table is not None, timeout=TIMEOUT)
    assert reopened.mode.kind is StatisticKind.CDF and error_text(reopened) == ""


def test_a_public_list_is_loaded_from_a_file_never_from_the_data(qtbot, tmp_path: Path) -> None:
    _, page = plan_window(qtbot, tmp_path)
    page.statistics.add_part(StatisticKind.GROUPED_CDF)
    editor = page.statistics.editor
    groups_file = tmp_path / "carriers.txt"
    groups_file.write_text("AA\nUA\nWN\n", encoding="utf-8")
    assert editor.load_list("groups", groups_file)
    assert page.choices[0].settings["groups"] == ("AA", "UA", "WN")
    assert not editor.load_list("groups", tmp_path / "flights.csv")  # the data file itself
    assert "This is the data file" in editor.rows["groups"][1].text()
    assert page.choices[0].settings["groups"] == ("AA", "UA", "WN")  # unchanged
    page.statistics.add_part(StatisticKind.COUNTS)
    categories_file = tmp_path / "ontime.txt"
    categories_file.write_text("yes\nno\nyes\n", encoding="utf-8")  # a category twice
    assert not page.statistics.editor.load_list("categories", categories_file)
    assert "listed twice" in editor.rows["categories"][1].text() and page.choices[1].settings["categories"] == ()


def test_other_data_drops_the_split(qtbot, tmp_path: Path) -> None:
    window, page = plan_window(qtbot, tmp_path)
    cdf_of_delay(page)
    split_and_wait(qtbot, page)
    assert page.split is not None and page.release_button.isEnabled()
    other = tmp_path / "other" / "flights.csv"
    other.parent.mkdir()
    other.write_text((tmp_path / "flights.csv").read_text(encoding="utf-8"), encoding="utf-8")
    open_other_data(qtbot, window, other)
    assert page.split is None and not page.release_button.isEnabled() and "Press Split" in page.blocker.text()


def test_a_query_whose_row_count_is_not_public_is_protected_under_add_remove(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "people.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE people (age REAL, region TEXT)")
        con.executemany("INSERT INTO people VALUES (?, ?)", [(float(a % 90), "north" if a % 3 else "south")
                                                            for a in range(300)])
    con.close()
    window = make_window(qtbot)
    window.connect_database()
    dialog = window.database_dialog
    dialog.url_edit.setText(f"sqlite:///{path}")
    dialog.query_radio.setChecked(True)
    dialog.query_edit.setPlainText("SELECT age, region FROM people WHERE region = 'south'")
    dialog._on_ok()
    qtbot.waitUntil(lambda: window.workspace.state.source is not None and not window.pool.busy(), timeout=TIMEOUT)
    window.choose_mode(ReleaseKind.PLAN)
    page = window.statistic_modes[ReleaseKind.PLAN]
    assert Neighbours(page.neighbours.currentData()) is Neighbours.ADDREMOVE  # N of the query is not public
    assert page.neighbours_note.text() == text.query_rows_private_note(True) and not page.neighbours_note.isHidden()


def test_a_person_id_column_keeps_at_most_l_rows_of_each_person(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "flights.csv"
    path.write_text("tail,carrier,delay\n" + "".join(f"N{i % 7},{c},{d}\n" for i, (c, d, _) in enumerate(ROWS)),
                    encoding="utf-8")
    window = make_window(qtbot)
    open_and_wait(qtbot, window, path)
    window.choose_mode(ReleaseKind.PLAN)
    page = window.statistic_modes[ReleaseKind.PLAN]
    page.records.setValue(3)
    page.person.choose("tail")
    assert Neighbours(page.neighbours.currentData()) is Neighbours.ADDREMOVE and not page.neighbours.isEnabled()
    assert "enforced: dpgui kept at most 3 rows of each value of 'tail'" in page.person.note.text()
    cdf_of_delay(page)
    split_and_wait(qtbot, page)
    assert page.split is not None, page.chart.sentence.text()
    plan_file = tmp_path / "plan.toml"
    assert page.save_plan_to(plan_file), error_text(window)
    assert PlanSpec.read(plan_file).person_column == "tail"
    release_and_wait(qtbot, window, page)
    assert page.outcome is not None, error_text(window)
    assert "enforced" in page.released_request.privacy_unit
    # independently: 7 people with 14 or more rows each, at most 3 kept of each (CONFIDENTIAL counts, test only)
    assert int(page.outcome.parts[0].counts.counts.sum()) == 7 * 3
    with Ledger() as ledger:
        assert [e.release_id for e in ledger.releases("flights")] == [page.outcome.plan_id]
    page.person.choose(None)  # the file's person column comes back when the plan is opened
    assert page.open_plan_from(plan_file) and page.person.column() == "tail"
