"""The workspace model: typed parts, change notifications, and the project it saves (no Qt)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.data.sample import sample_dataset_path
from dpgui.data.table import inspect_table
from dpgui.errors import ParameterError
from dpgui.workspace.state import ColumnChoice, DataSource, PlanChoice, Workspace, WorkspaceState


def _opened() -> Workspace:
    table = inspect_table(sample_dataset_path())
    return Workspace(WorkspaceState(source=DataSource(table, table.n_rows)))


def test_listeners_hear_only_the_parts_that_changed():
    workspace = _opened()
    heard: list[frozenset[str]] = []
    unsubscribe = workspace.subscribe(heard.append)
    workspace.update_column(column="distance", lower=0.0)
    workspace.update_column(column="distance")  # no change: nobody is told
    workspace.update(dataset="flights")
    unsubscribe()
    workspace.update(dataset="other")
    assert heard == [frozenset({"column"}), frozenset({"dataset"})]
    assert workspace.state.column == ColumnChoice("distance", 0.0, None, None)


def test_unknown_parts_and_values_are_refused():
    workspace = Workspace()
    with pytest.raises(TypeError):
        workspace.update(colum="x")
    with pytest.raises(ParameterError):
        workspace.update_plan(consistency="l3")


def test_column_settings_need_every_field_of_step_one():
    workspace = _opened()
    workspace.update_column(column="distance", lower=0.0, upper=5000.0, bins=100)
    assert workspace.state.column_settings() is None  # no dataset name yet
    workspace.update(dataset=" flights ")
    settings = workspace.state.column_settings()
    assert settings is not None and settings.dataset_id == "flights" and settings.bins == 100
    workspace.update_column(lower=5000.0)  # inverted bounds
    assert workspace.state.column_settings() is None


def test_the_project_is_the_public_part_of_the_state():
    workspace = _opened()
    plan = auto_plan(100, PrivacySpec(1.0))
    workspace.update_column(column="distance", lower=0.0, upper=5000.0, bins=100)
    workspace.update(dataset="flights")
    workspace.update_plan(privacy=plan.privacy, plan=plan, locked_levels=(2, 1, 2), branching=" 4x25 ")
    project = workspace.state.to_project()
    assert project is not None
    assert Path(project.data_path).is_absolute() and project.column == "distance"
    assert (project.lower, project.upper, project.bins, project.dataset) == (0.0, 5000.0, 100, "flights")
    assert project.plan_object() == plan and project.locked_levels == (1, 2) and project.branching == "4x25"
    assert Workspace().state.to_project() is None
    workspace.update_plan(plan=None)
    assert workspace.state.to_project().locked_levels == ()


def test_plan_choice_sorts_and_dedups_the_locks():
    assert PlanChoice(locked_levels=(3, 1, 3)).locked_levels == (1, 3)
