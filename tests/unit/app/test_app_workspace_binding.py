"""The window's state is its Workspace: the pages write what the officer edits into it, step 2
takes its data context from it, the project controller reads only it, and step 4 shows its
``shown`` release."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpgui.workspace.state import ColumnChoice, Workspace

from gui_helpers import TIMEOUT, make_window, open_and_wait, release_and_wait, set_column, type_into, wait_plan


@pytest.fixture
def people_csv(tmp_path) -> Path:
    path = tmp_path / "people.csv"
    rng = np.random.default_rng(11)
    rows = ["name,age,income"] + [f"p{i},{a},{w:.2f}" for i, (a, w) in
                                  enumerate(zip(rng.integers(0, 100, 300), rng.gamma(2, 20000, 300)))]
    path.write_text("\n".join(rows) + "\n")
    return path


class NoWidgets:
    """Stands in for a page: any use of it fails the test."""

    def __getattr__(self, name: str) -> None:
        raise AssertionError(f"read a page's widget: {name}")


def test_the_window_holds_one_workspace(qtbot):
    window = make_window(qtbot)
    assert isinstance(window.workspace, Workspace)
    assert window.workspace_binding.workspace is window.workspace
    assert window.table is None and window.cdf.outcome is None and window.cdf.exportable is None
    assert window.project.capture() is None


def test_edits_in_step_1_are_written_to_the_workspace(qtbot, people_csv):
    window = make_window(qtbot)
    open_and_wait(qtbot, window, people_csv)
    state = window.workspace.state
    assert state.source is not None and state.source.path == people_csv and state.source.n_rows == 300
    assert window.table is state.source.table
    assert state.dataset == "people"
    set_column(qtbot, window, "age", "0", "100", "50")
    assert window.workspace.state.column == ColumnChoice("age", 0.0, 100.0, 50)
    page = window.data_page
    type_into(qtbot, page.upper_field, "abc")  # does not parse: None, as the field says
    assert window.workspace.state.column.upper is None
    type_into(qtbot, page.upper_field, "120")
    assert window.workspace.state.column.upper == 120.0
    page.dataset_name.selectAll()
    qtbot.keyClicks(page.dataset_name, "survey-2024")
    assert window.workspace.state.dataset == "survey-2024"
    page.set_dataset_name("survey")
    assert window.workspace.state.dataset == "survey"
    settings = window.workspace.state.column_settings()
    assert settings is not None and settings == page.settings()
    assert (settings.column, settings.lower, settings.upper, settings.bins, settings.dataset) == (
        "age", 0.0, 120.0, 50, "survey")


def test_edits_in_step_2_are_written_to_the_workspace(qtbot, people_csv):
    window = make_window(qtbot)
    open_and_wait(qtbot, window, people_csv)
    set_column(qtbot, window, "age", "0", "100", "50")
    page = window.plan_page
    choice = window.workspace.state.plan
    assert choice.plan == page.plan and choice.plan.shape.bins == 50 and not choice.planning
    type_into(qtbot, page.epsilon, "0.5")
    assert window.workspace.state.plan.privacy.epsilon == 0.5
    assert window.workspace.state.plan.planning  # a new plan is on its way
    wait_plan(qtbot, window, 50)
    qtbot.waitUntil(lambda: not window.workspace.state.plan.planning, timeout=TIMEOUT)
    assert window.workspace.state.plan.plan == page.plan and page.plan.privacy.epsilon == 0.5
    type_into(qtbot, page.epsilon, "abc")
    assert window.workspace.state.plan.privacy is None
    page.consistency.setCurrentIndex(page.consistency.findData("l1"))
    page.objective.setCurrentIndex(page.objective.findData("max"))
    page.budgets.set_locked(1)
    type_into(qtbot, page.branching, "8x8")
    choice = window.workspace.state.plan
    assert (choice.consistency, choice.objective, choice.locked_levels, choice.branching) == ("l1", "max", (1,), "8x8")


def test_step_2_takes_its_data_context_from_the_workspace(qtbot, people_csv):
    window = make_window(qtbot)
    open_and_wait(qtbot, window, people_csv)
    set_column(qtbot, window, "age", "0", "100", "50")
    window.workspace.update_column(bins=40)  # whoever writes K, step 2 plans for it
    wait_plan(qtbot, window, 40)
    assert window.plan_page.public_n.text() == "300"  # N is public under 'change': the file's rows


def test_the_project_controller_reads_the_workspace_not_the_widgets(qtbot, people_csv):
    window = make_window(qtbot)
    open_and_wait(qtbot, window, people_csv)
    set_column(qtbot, window, "age", "0", "100", "50")
    window.plan_page.budgets.set_locked(1)
    expected = window.workspace.state.to_project()
    pages = window.data_page, window.plan_page
    window.data_page = window.plan_page = NoWidgets()
    try:
        assert window.project.capture() == expected
        window.project.refresh()
        assert window.isWindowModified() and window.project.needs_save_prompt() and window.project.is_modified()
    finally:
        window.data_page, window.plan_page = pages
    assert expected.column == "age" and expected.bins == 50 and expected.locked_levels == (1,)


def test_one_workspace_notification_refreshes_the_title(qtbot, people_csv):
    window = make_window(qtbot)
    open_and_wait(qtbot, window, people_csv)
    assert window.windowTitle().startswith("people.csv")
    window.setWindowModified(False)
    window.workspace.update(dataset="other")
    assert window.isWindowModified()


def test_a_project_applied_to_the_workspace_shows_in_the_pages(qtbot, people_csv, tmp_path):
    first = make_window(qtbot)
    open_and_wait(qtbot, first, people_csv)
    set_column(qtbot, first, "income", "0", "200000", "64")
    first.data_page.set_dataset_name("incomes")
    first.plan_page.consistency.setCurrentIndex(first.plan_page.consistency.findData("none"))
    release_and_wait(qtbot, first)
    assert first.project.save_to(tmp_path / "work.dpgui")

    second = make_window(qtbot)
    assert second.project.open_project(tmp_path / "work.dpgui")
    qtbot.waitUntil(lambda: second.workspace.state.shown is not None and not second.pool.busy(), timeout=TIMEOUT)
    state = second.workspace.state
    assert state.to_project() == first.workspace.state.to_project()
    page = second.data_page
    assert page.current_column().name == "income" and page.bins.text() == "64"
    assert page.dataset_name.text() == "incomes"
    assert second.plan_page.consistency_method() == "none" and second.plan_page.plan == state.plan.plan
    assert state.shown.restored and second.cdf.outcome is None
    assert second.cdf.exportable == (state.shown.release, state.shown.info)
    assert second.result_view.release() is state.shown.release and second.export_button.isEnabled()


def test_step_4_shows_the_workspaces_shown_release(qtbot, people_csv):
    window = make_window(qtbot)
    open_and_wait(qtbot, window, people_csv)
    set_column(qtbot, window, "age", "0", "100", "50")
    release_and_wait(qtbot, window)
    state = window.workspace.state
    assert len(state.releases) == 1 and state.shown is window.cdf.outcome and not state.shown.restored
    assert state.shown.data_path == people_csv and state.shown.counts is not None
    assert window.result_view.release() is state.shown.release and window.export_bundle_action.isEnabled()
    assert window.tabs.currentIndex() == 3 and "Released <b>age</b>" in window.release_status.text()
    window.workspace.update(shown=None)
    assert window.result_view.release() is None and not window.export_bundle_action.isEnabled()
    assert window.cdf.outcome is None and window.cdf.exportable is None
    assert window.release_status.text().startswith("No release is shown") and window.tabs.currentIndex() == 1
    assert "Releases of This Session" in window.release_status.text()  # where the release still is


def test_a_project_without_releases_opens_on_step_2(qtbot, people_csv, tmp_path):
    first = make_window(qtbot)
    open_and_wait(qtbot, first, people_csv)
    set_column(qtbot, first, "age", "0", "100", "50")
    assert first.project.save_to(tmp_path / "plan-only.dpgui")
    second = make_window(qtbot)
    assert second.project.open_project(tmp_path / "plan-only.dpgui")
    qtbot.waitUntil(lambda: second.workspace.state.column.column == "age" and not second.pool.busy(), timeout=TIMEOUT)
    assert second.workspace.state.shown is None and second.tabs.currentIndex() == 1
    assert second.release_status.text().startswith("Nothing released yet")
