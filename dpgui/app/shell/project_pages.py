"""A project file's workspace and the window's pages, both ways: the main window's side of the project
controller's port (:class:`~dpgui.app.shell.project.ProjectWindow`).

* :func:`snapshot_of` — the workspace as a project file holds it (the CDF's workspace, the chosen mode, the
  hierarchy mode's choices and releases: public values only), with the open data and the releases held;
* :func:`restore_pages` — a project's column, bounds, bins, plan and releases put back into the CDF's
  steps, and its hierarchy choices and releases into the hierarchy mode (its last release is checked
  against the budget ledger before it may be signed: a project file is not evidence). Restoring never
  releases anything and never spends budget.

GUI thread only (the pages are widgets); the confidential data never passes here."""

from __future__ import annotations

from dataclasses import replace

from dpgui.app import text
from dpgui.app.cdf.data_page import DataPage
from dpgui.app.cdf.mode import CdfMode
from dpgui.app.cdf.plan_page import PlanPage
from dpgui.app.hierarchy.page import HierarchyMode
from dpgui.app.shell.project import WorkspaceSnapshot
from dpgui.core.focus import FocusChoice
from dpgui.errors import DpguiError
from dpgui.report.project_file import Project, ProjectRelease
from dpgui.vocabulary import StatisticKind
from dpgui.workspace.hierarchy import HierarchyState
from dpgui.workspace.hierarchy_planning import HierarchyChoice
from dpgui.workspace.hierarchy_project import choice_of_settings, restored_outcome, settings_of_choice
from dpgui.workspace.release import restored_shown_release
from dpgui.workspace.state import Workspace, WorkspaceState


def snapshot_of(cdf: WorkspaceState, hierarchy: HierarchyState, mode: StatisticKind, releasing: bool,
                autosave_of: str = "") -> WorkspaceSnapshot:
    """The workspace at this moment: the CDF's (``cdf``), the hierarchy mode's (``hierarchy``), the chosen
    ``mode``; ``releasing``: a release of either statistic is running; ``autosave_of``: the project file an
    autosave stands for ("" if untitled)."""
    project = cdf.to_project(autosave_of=autosave_of)
    if project is not None:
        project = replace(project, mode=mode, hierarchy=settings_of_choice(hierarchy.choice),
                          hierarchy_releases=hierarchy.releases)
    return WorkspaceSnapshot(project, cdf.source, cdf.releases, len(cdf.releases) + len(hierarchy.releases),
                             releasing)


def restore_pages(project: Project, data_name: str, workspace: Workspace, data_page: DataPage, plan_page: PlanPage,
                  cdf: CdfMode, hierarchy: HierarchyMode) -> list[str]:
    """Put ``project`` into the CDF's steps and the hierarchy mode, its data (named ``data_name`` in the
    messages) being open. Returns the problems to tell the officer (a column not in the data, a damaged
    hierarchy part, a choice it cannot take). The caller then shows the project's mode."""
    problems = []
    found = data_page.apply_workspace(project.column, project.lower, project.upper, project.bins,
                                      project.missing, project.whole_numbers)
    if project.column and not found:
        problems.append(f"The column '{project.column}' is not in {data_name}; pick the column again.")
    plan = project.plan_object()
    if plan is not None and (plan.shape.bins != project.bins or plan.privacy.delta != project.delta):
        plan = None  # saved half-way through re-planning: plan again
    plan_page.apply_plan(plan, project.consistency, project.branching, project.objective,
                         project.locked_levels, delta=project.delta, noise=project.noise,
                         impute=project.missing_impute,
                         focus=None if project.focus is None else FocusChoice.from_json(project.focus))
    if project.dataset:
        data_page.set_dataset_name(project.dataset)
    _show_last_release(workspace, cdf, project.releases, project.dataset)
    return problems + _apply_hierarchy(workspace, hierarchy, project)


def _show_last_release(workspace: Workspace, cdf: CdfMode, releases: tuple[ProjectRelease, ...], dataset: str) -> None:
    """Make ``releases`` the workspace's and show the last one (not marked secure: only the budget
    ledger's record can say so); ``dataset``: the project's dataset name ("": the file's name)."""
    shown = None
    if releases:
        source = workspace.state.source
        dataset = dataset or (source.path.stem if source is not None else "") or "dataset"
        shown = restored_shown_release(releases[-1], dataset)
    # a release of another workspace is no longer the one shown or exported
    if "shown" not in workspace.update(releases=releases, shown=shown):
        cdf.show_release()  # nothing was shown before either: go to step 2, as after any opening


def _apply_hierarchy(workspace: Workspace, page: HierarchyMode, project: Project) -> list[str]:
    """The hierarchy mode of ``project``: its choices (read and planned again on workers), its releases
    and the last one shown (checked against the budget ledger: a project file is not evidence). Returns
    the problems to tell the officer (a damaged hierarchy part, a choice it cannot take)."""
    problems = [project.hierarchy_problem] if project.hierarchy_problem else []
    source = workspace.state.source
    if source is not None and (project.hierarchy is not None or project.hierarchy_releases
                               or project.mode == StatisticKind.HIERARCHY):
        page.data_opened()  # the open data's columns and dataset, for the choices below
    if project.hierarchy is not None:
        try:
            page.apply_choice(choice_of_settings(project.hierarchy))
        except DpguiError as err:
            problems.append(f"The hierarchy choices were not restored: {text.friendly(err)}")
    elif page.state_ws.state.choice != HierarchyChoice():  # the previous workspace's choices go
        page.apply_choice(HierarchyChoice())
    releases = project.hierarchy_releases
    outcome = restored_outcome(releases[-1]) if releases else None
    page.state_ws.update(releases=releases, outcome=outcome)
    return problems
