"""The window's human side: what a privacy officer sees, reads and can get wrong. Each test checks one
rule of what the window shows or refuses; offscreen, seeded noise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gui_helpers import (
    TIMEOUT, make_window, open_and_wait, open_other_data, release_and_wait, sample_window_planned, set_column, type_into,
    wait_plan,
)

from dpgui.app.cdf.projection_plots import ProjectionPlots
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.quantiles import quantiles


@pytest.mark.slow
def test_plots_come_back_after_the_window_was_small(qtbot):
    """The four projection plots go into tabs in a small window and back into the 2×2 grid when it grows:
    each of them is then visible again (they stayed hidden: the tab widget had hidden the pages it did not
    show, and the grid put them back hidden, leaving an empty plan step)."""
    widget = ProjectionPlots()
    qtbot.addWidget(widget)
    widget.resize(1000, 700)
    widget.show()
    widget.set_plan(auto_plan(1000, PrivacySpec(1.0)), 0.0, 5000.0)
    qtbot.waitUntil(lambda: not widget.busy, timeout=30_000)
    assert widget.layout_mode == "grid"
    widget.resize(600, 450)
    qtbot.waitUntil(lambda: widget.layout_mode == "tabs")
    widget.resize(1000, 700)
    qtbot.waitUntil(lambda: widget.layout_mode == "grid")
    qtbot.waitUntil(lambda: all(plot.isVisible() for plot, _name in widget._plots), timeout=2_000)
    assert all(plot.height() > 100 for plot, _name in widget._plots)


def _semicolon_csv(folder: Path) -> Path:
    """A semicolon-separated file with decimal commas (its dialect is suggested, and waits for Confirm)."""
    rng = np.random.default_rng(5)
    path = folder / "messungen.csv"
    rows = [f"{k};{rng.integers(1, 7)};{rng.gamma(2.2, 21000):.2f}".replace(".", ",")
            for k in rng.choice(["Nord", "Süd"], 400)]
    path.write_text("kreis;personen;einkommen\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_confirming_the_dialect_keeps_what_was_typed(qtbot, tmp_path):
    """A release waits for the CSV's dialect to be confirmed, so the officer presses Confirm after setting
    the column, bounds, K, the whole-number statement and the region: reading the file again with the
    confirmed dialect keeps all of them (it emptied the bounds, unselected the column and reset the region)."""
    window = make_window(qtbot)
    csv = _semicolon_csv(tmp_path)
    open_and_wait(qtbot, window, csv)
    page, plan_page = window.data_page, window.plan_page
    set_column(qtbot, window, "einkommen", "0", "250000", "500")
    page.whole_check.setChecked(True)
    plan_page.focus.setCurrentIndex(plan_page.focus.findData("upper"))
    qtbot.waitUntil(lambda: plan_page.plan is not None and plan_page.plan.focus is not None
                    and not plan_page.is_planning(), timeout=TIMEOUT)
    assert window.workspace.state.source.unconfirmed_dialect
    page.confirm_dialect()
    qtbot.waitUntil(lambda: not window.workspace.state.source.unconfirmed_dialect and not window.pool.busy(),
                    timeout=TIMEOUT)
    qtbot.waitUntil(lambda: plan_page.plan is not None and not plan_page.is_planning(), timeout=TIMEOUT)
    column = page.current_column()
    assert column is not None and column.name == "einkommen"
    assert (page.lower_field.value(), page.upper_field.value(), page.bins.value()) == (0, 250000, 500)
    assert page.whole_check.isChecked()
    assert plan_page.focus.currentData() == "upper"
    qtbot.waitUntil(lambda: plan_page.plan.focus is not None and plan_page.plan.shape.bins == 500, timeout=TIMEOUT)
    assert window.cdf.release_inputs() is not None  # nothing left to set again before the release


def _schools_csv(folder: Path) -> Path:
    """Region → district → school, semicolon-separated with decimal commas (the dialect is only suggested)."""
    rng = np.random.default_rng(8)
    districts = {"Nord": ("N1", "N2", "N3"), "Süd": ("S1", "S2")}
    rows = []
    for _ in range(600):
        region = str(rng.choice(list(districts)))
        district = str(rng.choice(districts[region]))
        rows.append(f"{region};{district};{district}-{rng.integers(1, 4)};{rng.gamma(2, 3):.2f}".replace(".", ","))
    path = folder / "schulen.csv"
    path.write_text("region;bezirk;schule;wert\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_the_hierarchy_levels_step_confirms_the_dialect_and_keeps_the_levels(qtbot, tmp_path):
    """In the hierarchy mode a CSV whose dialect is only suggested is not read, and the message sends the
    officer to "Confirm … beside the separator in step 1": the Levels step has that row now, and confirming
    reads the file again with the levels, the declaration and the plan kept (there was no Confirm in this
    mode, and reading again emptied the level choosers)."""
    window = make_window(qtbot)
    open_and_wait(qtbot, window, _schools_csv(tmp_path))
    window.set_mode(True)
    page = window.hierarchy
    page.categories_public.setChecked(True)
    page.set_levels(("region", "bezirk", "schule"))
    qtbot.waitUntil(lambda: bool(page.state_ws.state.problem) and not page.is_busy(), timeout=TIMEOUT)
    assert "Confirm" in page.levels_text()
    assert page.dialect_confirm.isVisible() and "semicolon" in page.dialect_label.text()
    page.dialect_confirm.click()
    qtbot.waitUntil(lambda: page.state_ws.state.planned is not None and not page.is_busy() and not window.pool.busy(),
                    timeout=TIMEOUT)
    assert page.chosen_levels() == ("region", "bezirk", "schule")
    assert page.categories_public.isChecked()
    assert not page.dialect_confirm.isVisible() and "chosen by you" in page.dialect_label.text()
    assert page.state_ws.state.loaded is not None and page.state_ws.state.loaded.hierarchy.n_levels == 3


def test_other_data_takes_the_prior_file_and_the_opt_in_with_the_old_data(qtbot, tmp_path):
    """A prior file lists the old data's categories and the opt-in "use the confidential counts" was given for
    the old data's counts: opening other data clears both, as it clears the declaration that the categories
    are public (both stayed: the Levels step named the old prior, and the opt-in stayed ticked for new data)."""
    window = make_window(qtbot)
    page = window.hierarchy
    window.open_hierarchy_sample()
    qtbot.waitUntil(lambda: page.state_ws.state.planned is not None and not page.is_busy(), timeout=TIMEOUT)
    prior = tmp_path / "last-year.csv"
    prior.write_text("region,bezirk,count\nNord,N1,5\n", encoding="utf-8")
    page.set_prior(prior)
    page.set_prior(None)
    page.counts_from_data.setChecked(True)
    assert page.state_ws.state.choice.counts_from_data
    page.set_prior(prior)
    assert page.state_ws.state.choice.prior_path == prior
    open_other_data(qtbot, window, _schools_csv(tmp_path))
    qtbot.waitUntil(lambda: page.state_ws.state.data_path is not None
                    and "schulen" in str(page.state_ws.state.data_path), timeout=TIMEOUT)
    choice = page.state_ws.state.choice
    assert choice.prior_path is None and not choice.counts_from_data and not choice.categories_public
    assert page.prior_label.text().startswith("No prior file")
    assert not page.counts_from_data.isChecked() and page.counts_from_data.isEnabled()
    assert page.categories_public.isVisibleTo(page)


def test_the_exported_box_closes_with_escape_and_the_title_bar(qtbot, tmp_path):
    """"Exported …" with Open Folder and OK: Escape and the window's close button close it (with two buttons
    and neither a Cancel nor a Close, Qt found no escape button and ignored both: the box stayed on top of
    the next steps)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QWidget

    from dpgui.app.dialogs.export import exported_box

    parent = QWidget()
    qtbot.addWidget(parent)
    parent.show()
    box = exported_box(parent, "Exported the CSV file", "The released numbers are in a file.", tmp_path)
    box.open()
    qtbot.waitUntil(box.isVisible)
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not box.isVisible(), timeout=2_000)
    box = exported_box(parent, "Exported the CSV file", "The released numbers are in a file.", tmp_path)
    box.open()
    qtbot.waitUntil(box.isVisible)
    box.close()
    qtbot.waitUntil(lambda: not box.isVisible(), timeout=2_000)


def test_whole_number_bins_keep_the_bin_width_chosen(qtbot):
    """Flight delays are whole minutes stored as floats: −60 to 240 in 300 bins is already one bin per
    minute, and "Centre bins on whole numbers" keeps that width (301 bins from −60.5 to 240.5) instead of
    halving the resolution (151 bins of 2, whose note still said every value had a bin of its own); the
    released median is then the true whole minute, −2 (it was −1)."""
    window = sample_window_planned(qtbot, seed=4)
    page = window.data_page
    set_column(qtbot, window, "dep_delay", "-60", "240", "300")
    page.whole_check.setChecked(True)
    assert page.whole_button.isVisibleTo(page)
    page.apply_whole_number_bins()
    wait_plan(qtbot, window, 301)
    assert (page.lower_field.value(), page.upper_field.value()) == (-60.5, 240.5)
    release_and_wait(qtbot, window)
    median = next(q for q in quantiles(window.cdf.outcome.release, (0.5,), whole_numbers=True))
    assert median.whole and median.value == -2 and median.low <= -2 <= median.high
    table = window.result_view.quantile_table.model()
    row = next(r for r in range(table.rowCount()) if "median" in str(table.index(r, 0).data()))
    assert table.index(row, 1).data() == "-2"


def test_the_whole_number_note_says_how_many_values_share_a_bin(qtbot):
    """When the offer has to put several whole numbers in a bin (0 to 1,000 in 400 bins: 2.5 is not a whole
    width), its note does not claim that every value sits in its own bin."""
    window = sample_window_planned(qtbot, seed=4)
    page = window.data_page
    set_column(qtbot, window, "dep_delay", "0", "1000", "400")
    page.whole_check.setChecked(True)
    assert page.whole_number_offer() == (-0.5, 1001.5, 334, 3)
    note = page.whole_note.text()
    assert "one bin per 3 whole numbers" in note and "its own bin" not in note


def test_the_plan_summary_never_states_a_plan_for_settings_that_are_not_valid(qtbot):
    """With ε typed as "abc", or the bounds inverted, nothing is planned and nothing can be released: the
    summary says so (it kept stating the last plan's margins, "ε = 1", and redrew that plan on the
    placeholder axis 0 to 1 as if it were the plan of what is typed)."""
    window = sample_window_planned(qtbot, seed=4)
    plan_page, page = window.plan_page, window.data_page
    qtbot.waitUntil(lambda: "Projected 95 % margin" in plan_page.summary.text() and "computing" not in
                    plan_page.summary.text(), timeout=TIMEOUT)
    type_into(qtbot, plan_page.epsilon, "abc")
    plan_page.epsilon.edited.emit()
    qtbot.waitUntil(lambda: "No plan for these settings" in plan_page.summary.text(), timeout=5_000)
    type_into(qtbot, plan_page.epsilon, "1")
    plan_page.epsilon.edited.emit()
    qtbot.waitUntil(lambda: "Projected 95 % margin" in plan_page.summary.text() and "computing" not in
                    plan_page.summary.text() and not plan_page.is_planning(), timeout=TIMEOUT)
    page.lower_field.set_text("6000")
    page.lower_field.edited.emit()
    qtbot.waitUntil(lambda: "No plan for these settings" in plan_page.summary.text(), timeout=5_000)
    assert plan_page.plots.projection is None or plan_page.plots.projection.plan.shape.bins == 1000
    page.lower_field.set_text("0")
    page.lower_field.edited.emit()
    qtbot.waitUntil(lambda: "Projected 95 % margin" in plan_page.summary.text() and "computing" not in
                    plan_page.summary.text(), timeout=TIMEOUT)


def test_plots_and_notes_name_methods_by_their_authors(qtbot):
    """The branching plot's legend said "Paper: equal budgets, sum of nodes" and the hierarchy plan's comparison
    "without the paper's Lemma 3.3 clip": a reader knows no "paper"; the methods are named by their authors."""
    from dpgui.core.counting_trees_accuracy import projected_alpha_mrmse

    widget = ProjectionPlots()
    qtbot.addWidget(widget)
    names = [curve.name() or "" for curve in widget.branching_curves.values()]
    assert not any("paper" in name.lower() for name in names)
    assert any("Rameshwar" in name for name in names)
    note = projected_alpha_mrmse((1, 9, 105), PrivacySpec(1.0, "change", 1, 1e-9), 0.1, "multiplicative").note
    assert "paper" not in note.lower() and "Ghazi et al." in note


def test_a_crash_loses_no_release_that_other_data_took_off_the_screen(qtbot, tmp_path, monkeypatch):
    """Release, open other data anyway (the question says the session's list keeps the release), crash: the
    autosave held the new data's workspace only, so after Restore the release, whose budget is spent, was gone
    from view for good. The leaving workspace is kept beside the autosave until a clean exit, and a restore
    lists its release again under Releases of This Session, shown in one click with the same numbers."""
    from PySide6.QtCore import QThreadPool
    from gui_helpers import dead_pid

    from dpgui.app.shell.project import autosave_dir

    first = sample_window_planned(qtbot, seed=4)
    release_and_wait(qtbot, first)
    release_id, cumulative = first.cdf.outcome.release_id, first.cdf.outcome.release.cumulative.copy()
    open_other_data(qtbot, first, _semicolon_csv(tmp_path))
    first.project.autosave_now()
    QThreadPool.globalInstance().waitForDone(10_000)
    qtbot.waitUntil(lambda: not first.project._autosave_running, timeout=TIMEOUT)
    monkeypatch.setattr(first.project, "session_ended", lambda: None)  # the process dies: nothing is cleaned up
    first.close()
    folder = autosave_dir()
    (folder / "session.lock").write_text(f"{dead_pid()}\nsomehost\n2026-03-04T05:00:00+00:00\n")

    second = make_window(qtbot)
    qtbot.waitUntil(lambda: second.project.restore_box is not None and second.project.restore_box.isVisible(),
                    timeout=5_000)
    second.project.restore_box.restore_button.click()
    qtbot.waitUntil(lambda: second.table is not None and second.table.path.name == "messungen.csv", timeout=TIMEOUT)
    qtbot.waitUntil(lambda: second.session.releases.get(release_id) is not None, timeout=TIMEOUT)
    entry = second.session.releases.get(release_id)
    assert entry.data_name == "flights.parquet" and not entry.kept
    assert second.session.reopen(release_id)
    shown = second.workspace.state.shown
    assert shown is not None and shown.release_id == release_id
    assert np.array_equal(shown.release.cumulative, cumulative)
    assert any(folder.glob("left-*.dpgui"))  # kept until this session ends cleanly
    second.project.session_ended()
    assert not any(folder.glob("left-*.dpgui"))


def test_the_hierarchy_plan_table_shows_every_level_when_it_scrolls_sideways(qtbot):
    """At 200 % (or in a narrow window) the level table is wider than its place and gets a horizontal scroll
    bar; its height now counts that bar, so every level's row stays in view (the bar took the last rows'
    place: at 200 % only two and a half of the four rows could be seen)."""
    from dpgui.app.hierarchy.release_step import TAB_PLAN

    window = make_window(qtbot)
    page = window.hierarchy
    window.open_hierarchy_sample()
    qtbot.waitUntil(lambda: page.state_ws.state.planned is not None and not page.is_busy(), timeout=TIMEOUT)
    page.tabs.setCurrentIndex(TAB_PLAN)
    window.resize(1000, 800)
    table = page.table
    qtbot.waitUntil(lambda: table.horizontalScrollBar().maximum() > 0, timeout=5_000)
    rows = sum(table.rowHeight(r) for r in range(table.rowCount()))
    qtbot.waitUntil(lambda: table.viewport().height() >= rows and table.verticalScrollBar().maximum() == 0,
                    timeout=5_000)


def test_step_one_counts_a_single_column_and_a_small_file_in_words(qtbot, tmp_path):
    """A one-column file said "1 columns", and a file under 50 kB "0.0 MB"."""
    path = tmp_path / "ages.csv"
    path.write_text("age\n" + "\n".join(str(20 + i % 50) for i in range(300)) + "\n", encoding="utf-8")
    window = make_window(qtbot)
    open_and_wait(qtbot, window, path)
    label = window.data_page.file_label.text()
    assert "300 rows · 1 column · 1 KB" in label, label
    assert "columns" not in label and "0.0 MB" not in label
