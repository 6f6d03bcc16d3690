"""The workspace model: typed parts, change notifications, and the project it saves (no Qt)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from dpgui.core.mechanism import release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.data.sample import sample_dataset_path
from dpgui.data.table import inspect_table
from dpgui.errors import ParameterError
from dpgui.report.cdf.bundle import ReleaseInfo
from dpgui.workspace.state import (
    ColumnChoice, DataContext, SourceChoice, PlanChoice, ShownRelease, Workspace, WorkspaceState,
)


def _opened() -> Workspace:
    table = inspect_table(sample_dataset_path())
    return Workspace(WorkspaceState(source=SourceChoice(table, table.n_rows)))


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


def test_column_settings_need_a_number_column_and_finite_bounds():
    workspace = _opened()
    workspace.update(dataset="flights")
    workspace.update_column(column="carrier", lower=0.0, upper=10.0, bins=10)  # a text column
    assert workspace.state.column_settings() is None
    workspace.update_column(column="distance", upper=float("inf"))
    assert workspace.state.column_settings() is None
    workspace.update_column(upper=10.0)
    assert workspace.state.column_settings() is not None


def test_the_data_context_of_planning():
    assert Workspace().state.data_context() == DataContext()  # nothing open: K unknown, axis 0 to 1
    workspace = _opened()
    workspace.update_column(column="distance", lower=5000.0, upper=0.0, bins=64)
    context = workspace.state.data_context()
    assert (context.bins, context.lower, context.upper, context.label) == (64, 0.0, 1.0, "distance")  # inverted
    assert context.n_rows == workspace.state.source.n_rows
    workspace.update_column(lower=0.0, upper=5000.0)
    assert workspace.state.data_context().upper == 5000.0


def test_a_listener_may_update_the_workspace_and_everyone_hears_it():
    workspace = _opened()
    heard: list[frozenset[str]] = []

    def follow_the_column(parts: frozenset[str]) -> None:
        if "column" in parts:
            workspace.update(dataset=workspace.state.column.column)

    workspace.subscribe(follow_the_column)
    workspace.subscribe(heard.append)
    workspace.update_column(column="distance")
    assert workspace.state.dataset == "distance"
    assert heard == [frozenset({"dataset"}), frozenset({"column"})]  # the nested change is told first


def test_a_shown_release_is_compared_by_identity_and_names_its_ledger_id():
    plan = auto_plan(8, PrivacySpec(1.0))
    released = release(np.arange(8), plan, SeededRandom(1), 0.0, 8.0)
    info = ReleaseInfo("flights", "distance", "abc123", datetime(2026, 1, 2, tzinfo=timezone.utc), released.missing_rule)
    shown = ShownRelease(released, info)
    assert shown.release_id == "abc123" and shown != ShownRelease(released, info)
    workspace = _opened()
    assert workspace.update(shown=shown) == frozenset({"shown"})
    assert workspace.update(shown=shown) == frozenset()
