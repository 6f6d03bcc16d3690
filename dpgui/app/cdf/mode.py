"""The CDF of a number column as the window's statistic mode (:class:`~dpgui.app.mode.StatisticMode`):
its four steps (data → privacy and plan → bin tree → release and results, which the window builds), its
release (check → budget → confirm → release on a worker → record) and its exports (signed bundle, CSV
only), and File → Save Plan.

The mode reaches the window through :class:`CdfWindow`, the few things it needs from it (its workspace,
the steps' widgets, and what every mode asks of the window: :class:`~dpgui.app.mode.ModeHost`). GUI thread only; the noise
is drawn on a worker by :func:`dpgui.workspace.release.run_release`, after the spend."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, cast

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog, QFileDialog, QLabel, QMessageBox, QPushButton, QTabWidget, QWidget,
)

from dpgui.app import text
from dpgui.app.binding import WorkspaceBinding
from dpgui.app.cdf.data_page import DataPage
from dpgui.app.cdf.plan_page import PlanPage
from dpgui.app.cdf.result_view import ResultView
from dpgui.app.cdf.tree_view import BinTreeView
from dpgui.app.dialogs.export import ExportDialog, csv_export_default, export_folder
from dpgui.app.mode import ModeHost
from dpgui.app.workers import Worker, WorkerPool, release_progress_dialog
from dpgui.core.focus import FocusChoice
from dpgui.core.mechanism import Release
from dpgui.core.plan import Plan
from dpgui.errors import DpguiError
from dpgui.report.cdf.bundle import ReleaseInfo
from dpgui.report.cdf.csv_export import write_release_csv
from dpgui.report.files import check_writable, write_text_atomic
from dpgui.report.project_file import Project, ProjectRelease
from dpgui.report.project_sections import ProjectSection
from dpgui.vocabulary import Noise, StatisticKind
from dpgui.workspace.release import (
    NOISE_MESSAGE, FirstCapNeeded, Problem, ReleaseController, ReleaseOutcome, ReleaseRequest, authenticate,
    failure_budget_sentence, new_release_id, release_request, restored_shown_release, run_release,
)
from dpgui.workspace.session import SessionRelease, open_data
from dpgui.workspace.state import ShownRelease, Workspace

TAB_DATA, TAB_PLAN, TAB_TREE, TAB_RESULTS = range(4)


class CdfWindow(ModeHost, Protocol):
    """What the CDF mode needs of the main window beyond :class:`~dpgui.app.mode.ModeHost`: its
    workspace and the steps' widgets it fills."""

    workspace: Workspace
    workspace_binding: WorkspaceBinding
    pool: WorkerPool
    data_page: DataPage
    plan_page: PlanPage
    tabs: QTabWidget
    tree_view: BinTreeView
    result_view: ResultView
    release_status: QLabel
    release_button: QPushButton
    export_button: QPushButton
    release_action: QAction


class ReleaseConfirmation(QMessageBox):
    """The box of :meth:`CdfMode.confirmation_box`, with its Release button."""

    release_button: QPushButton


class CdfMode(QObject):
    """The CDF statistic's release and exports on the window's workspace (see the module doc)."""

    kind = StatisticKind.CDF
    release_tip = "Spend the budget and publish the CDF"

    def __init__(self, host: CdfWindow) -> None:
        super().__init__(host.window())
        self.host = host
        self._tree_plan: Plan | None = None  # the plan the bin tree (step 3) draws
        self.release_worker: Worker | None = None
        host.workspace_binding.changed.connect(self._on_workspace)

    # ------------------------------------------------------------------ the mode
    def steps(self) -> QWidget:
        return self.host.tabs

    def has_release(self) -> bool:
        return self.host.workspace.state.shown is not None

    def is_releasing(self) -> bool:
        return self.release_worker is not None

    def data_opened(self) -> None:
        """Nothing to do: step 1 (the data page) is given the open data by the window."""

    def shutdown(self) -> None:
        self.host.plan_page.pool.cancel_all()

    # ------------------------------------------------------------------ step 3 and 4
    @property
    def outcome(self) -> ShownRelease | None:
        """The release made in this session that step 4 shows (with its confidential counts), or None."""
        shown = self.host.workspace.state.shown
        return shown if shown is not None and not shown.restored else None

    @property
    def exportable(self) -> tuple[Release, ReleaseInfo] | None:
        """What Export writes: the shown release (made in this session or restored), or None."""
        shown = self.host.workspace.state.shown
        return None if shown is None else (shown.release, shown.info)

    def _on_workspace(self, parts: frozenset[str]) -> None:
        """After a workspace change: redraw the bin tree for a new plan, and step 4 for a new shown release."""
        if "plan" in parts:
            self._on_plan()
        if "shown" in parts:
            self.show_release()

    def show_release(self) -> None:
        """Show the workspace's shown release in step 4 and the bin tree, with the Export actions
        and what it is, and go to step 4 (to step 2 when nothing is shown)."""
        shown = self.host.workspace.state.shown
        for widget in (self.host.export_button, self.host.export_action, self.host.export_bundle_action):
            widget.setEnabled(shown is not None)
        self.show_release_status()
        if shown is None:
            self.host.result_view.clear()
            self.host.tree_view.set_release(None)
            self.host.tabs.setCurrentIndex(TAB_PLAN)
            return
        rel = shown.release
        # figures made on the release worker (a restored release: made here, and has no confidential counts)
        self.host.result_view.set_release(rel, shown.info.column, shown.counts, shown.figures,
                                     shown.info.whole_numbers is not None)
        self.host.tree_view.set_release(rel)
        self.host.tabs.setCurrentIndex(TAB_RESULTS)

    def show_release_status(self) -> None:
        """Step 4's banner: what the shown release is, what it cost, and whether and where it was exported
        (or, with none shown, where the session's releases are)."""
        shown = self.host.workspace.state.shown
        if shown is None:
            self.host.release_status.setText(self.host.session.nothing_shown_words())
            return
        rel, info = shown.release, shown.info
        label = info.column
        exported = self.host.session.banner_words(shown.release_id)
        if shown.restored:
            # A restored release can still be exported (e.g. after a crash before its export); signing
            # it checks it against the budget ledger again (:meth:`export_dialog`).
            if shown.confirmed:
                noise, export = "secure noise, confirmed by the budget ledger", exported
            else:
                noise = "not confirmed by the budget ledger"
                export = f"It cannot be signed: {text.escape(shown.problem)}."
            self.host.release_status.setText(
                f"Restored the release of <b>{text.escape(label)}</b> made {info.created_utc:%Y-%m-%d %H:%M} UTC "
                f"(ε = {rel.plan.privacy.epsilon:g}, {rel.plan.shape.bins:,} bins, N = {rel.total:,.0f}, "
                f"{noise}). Nothing was released or spent now. {export} The confidential comparison "
                "is not available for a restored release.")
        else:
            noise = "secure noise" if rel.secure else "TEST NOISE (seeded, not secure — do not publish)"
            epsilon, delta, rho = rel.plan.ledger_charge()
            spent = (f"ε = {epsilon:g}, δ = {text.format_delta(delta)} (Gaussian noise, ρ = {rho:.4g})"
                     if rel.plan.noise == Noise.GAUSSIAN else f"ε = {epsilon:g}")
            self.host.release_status.setText(
                f"Released <b>{text.escape(label)}</b> at {info.created_utc:%Y-%m-%d %H:%M} UTC: "
                f"{spent} spent from dataset '{text.escape(info.dataset)}' "
                f"(recorded in the budget ledger), {rel.plan.shape.bins:,} bins, N = {rel.total:,.0f}, {noise}. "
                f"{exported}")

    def _on_plan(self) -> None:
        """Draw a new plan's bin tree (step 3), with this session's release if it was made with that plan."""
        plan = self.host.workspace.state.plan.plan
        if plan is None or plan is self._tree_plan:
            return
        self._tree_plan = plan
        context = self.host.workspace.state.data_context()
        self.host.tree_view.set_plan(plan, context.lower, context.upper, context.label)
        if self.outcome is not None and self.outcome.release.plan == plan:
            self.host.tree_view.set_release(self.outcome.release)

    # ------------------------------------------------------------------ release
    def release_controller(self) -> ReleaseController:
        """The release flow on the current workspace, with this window's noise source."""
        source = self.host.workspace.state.source
        prompt = None if source is None else self.host.passwords.prompt_for(source.source_spec)
        return ReleaseController(self.host.workspace, self.host.noise_source, prompt)

    def release_inputs(self) -> ReleaseRequest | None:
        """The validated request of a release, or None with the problems shown."""
        if self.release_worker is not None:
            return None
        request = release_request(self.host.workspace.state)
        if isinstance(request, ReleaseRequest):
            return request
        if request.title:
            self.host.show_error(request.title, request.message)
            return None
        if request.step == "data":
            self.host.data_page.settings()  # marks each problem next to its field
        self.host.tabs.setCurrentIndex(TAB_DATA if request.step == "data" else TAB_PLAN)
        self.host.statusBar().showMessage(request.message, 8000)
        return None

    def confirmation_box(self, request: ReleaseRequest) -> ReleaseConfirmation:
        """The question 'release and spend the budget?', stating what is published and its cost."""
        words = self.release_controller().confirmation(request).rich_text()
        box = ReleaseConfirmation(QMessageBox.Icon.Question, "Release and spend the budget?", words, parent=self.host.window())
        box.setTextFormat(Qt.TextFormat.RichText)
        box.release_button = box.addButton("Release", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        return box

    def release(self) -> None:
        """Check every setting, confirm with the officer, then release on a worker."""
        request = self.release_inputs()
        if request is None or not self.check_budget(request):
            return
        box = self.confirmation_box(request)
        self._confirm_box = box
        box.exec()
        if box.clickedButton() is not box.release_button:
            self.host.statusBar().showMessage("Release cancelled. Nothing was spent.", 5000)
            return
        self.start_release(request)

    def check_budget(self, request: ReleaseRequest) -> bool:
        """Before the confirmation: the dataset has a cap (asked for the first time) with ε left."""
        controller = self.release_controller()
        check = controller.check_budget(request)
        if isinstance(check, FirstCapNeeded):
            cap = self.host.ask_cap(check.dataset, check.epsilon, check.delta)  # δ: the one set in step 2
            if cap is None:
                renamed = self.host.workspace.state.dataset.strip()
                self.host.statusBar().showMessage(
                    f"The dataset name is now '{renamed}'. Nothing was spent; press Release again."
                    if renamed != check.dataset else "Release cancelled: no budget was set. Nothing was spent.", 8000)
                return False
            check = controller.set_first_cap(request, cap)
        if isinstance(check, Problem):
            self.host.show_error(check.title, check.message)
            return False
        return True

    def start_release(self, request: ReleaseRequest) -> None:
        """Release on a worker with a progress dialog; Cancel works until the noise is drawn."""
        release_id = new_release_id()
        worker = Worker(run_release, request, self.host.noise_source, release_id=release_id,
                        password_prompt=self.host.passwords.prompt_for(request.settings.spec))
        self.release_worker = worker
        dialog, on_progress = release_progress_dialog(self.host.window(), worker, NOISE_MESSAGE)
        self.release_dialog = dialog

        def finish() -> None:
            self.release_worker = None
            dialog.close()
            self.host.release_button.setEnabled(True)
            self.host.release_action.setEnabled(True)

        def on_finished(outcome: ReleaseOutcome) -> None:
            finish()
            self._on_released(outcome)

        def on_failed(message: str) -> None:
            finish()
            self.host.show_error("The release did not happen", message + failure_budget_sentence(release_id))

        def on_cancelled() -> None:
            finish()
            self.host.statusBar().showMessage("Release cancelled before any noise was drawn. Nothing was spent.", 8000)

        worker.connect_to(self, progress=on_progress, finished=on_finished, failed=on_failed, cancelled=on_cancelled)
        self.host.release_button.setEnabled(False)
        self.host.release_action.setEnabled(False)
        dialog.show()
        self.host.pool.start(worker)

    def _on_released(self, outcome: ReleaseOutcome) -> None:
        problem = self.release_controller().record(outcome)  # fingerprint; releases and shown in the workspace
        if problem is not None:
            self.host.show_error(problem.title, problem.message)
        self.host.project.autosave_now()  # a release is never left out of the autosave
        label = outcome.settings.column
        self.host.statusBar().showMessage(f"Released the CDF of {label}.", 8000)

    # ------------------------------------------------------------------ exports
    def export_dialog(self) -> ExportDialog | None:
        """The Export dialog for the current release, once the budget ledger confirms it may be
        signed (None, with a message saying why, otherwise: nothing is written)."""
        if self.exportable is None:
            self.host.show_error("Nothing to export", "Release first (step 4), then export.")
            return None
        release, info = self.exportable
        try:
            confirmed = authenticate(release, info)  # checked again at export: the ledger may have changed
        except DpguiError as err:
            self.host.show_error("This release cannot be signed", text.friendly(err) + " Nothing was written.")
            return None
        dialog = ExportDialog(confirmed, info, str(export_folder(info.dataset)), self.host.window())
        dialog.input_folders = self.host.protected_paths(info.release_id)
        return dialog

    def export_bundle(self) -> None:
        dialog = self.export_dialog()
        if dialog is not None and dialog.exec() == QDialog.DialogCode.Accepted:
            self.host.after_bundle_export(dialog)

    def export_csv(self) -> None:
        """File → Export Release CSV Only…: the shown release's CDF in a CSV file (unsigned)."""
        if self.exportable is None:
            self.host.show_error("Nothing to export", "Release first (step 4), then export.")
            return
        info = self.exportable[1]
        path, _ = QFileDialog.getSaveFileName(self.host.window(), "Export the released CDF", str(csv_export_default(
            info.dataset, f"{info.dataset}-{info.column}-cdf.csv")), "CSV files (*.csv)")
        if path:
            self.export_to(path)

    def export_to(self, path: str) -> bool:
        assert self.exportable is not None
        release, info = self.exportable
        inputs = [Path(p) for p in self.host.protected_paths(info.release_id)]
        if self.outcome is not None and self.outcome.data_path is not None:
            inputs.append(self.outcome.data_path)
        try:
            check_writable(path, protect=inputs)  # never over the confidential data file itself
            write_release_csv(release, path)
        except (DpguiError, OSError) as err:
            self.host.show_error("Export failed", text.friendly(err) + " The file was not written.")
            return False
        self.host.csv_exported(info.release_id, info.dataset, Path(path))
        return True

    def save_plan(self) -> None:
        plan = self.host.workspace.state.plan.plan
        if plan is None:
            self.host.show_error("No plan yet", "Open a file and set up a plan first.")
            return
        path, _ = QFileDialog.getSaveFileName(self.host.window(), "Save the plan", "plan.json", "JSON files (*.json)")
        if path:
            self.save_plan_to(path)

    def save_plan_to(self, path: str) -> bool:
        step2 = self.host.workspace.state.plan
        plan = step2.plan
        assert plan is not None
        settings = self.host.workspace.state.column_settings()
        document: dict[str, object] = {"plan": plan.to_json(), "consistency": step2.consistency}
        if settings is not None:
            document.update(column=settings.column, lower=settings.lower, upper=settings.upper,
                            bins=settings.bins, missing=plan.privacy.missing_rule)
        try:
            write_text_atomic(path, json.dumps(document, indent=2) + "\n")
        except (DpguiError, OSError) as err:
            self.host.show_error("Saving failed", text.friendly(err))
            return False
        self.host.statusBar().showMessage(f"Saved the plan to {path}.", 5000)
        return True

    # the session's releases
    def watch_releases(self, listener: Callable[[], None]) -> None:
        self.host.workspace_binding.changed.connect(lambda parts: listener() if parts & {"releases", "shown"} else None)

    def session_releases(self) -> tuple[SessionRelease, ...]:
        """The workspace's releases, of the open data; the shown one with its dataset and figures."""
        state = self.host.workspace.state
        spec = open_data(self.host.workspace)
        entries = []
        for record in state.releases:
            shown = state.shown if state.shown is not None and state.shown.release_id == record.release_id else None
            entries.append(SessionRelease(self.kind, record, state.dataset if shown is None else shown.info.dataset,
                                          record.column or "value", spec,
                                          made_here=shown is not None and not shown.restored, shown=shown))
        return tuple(entries)

    def take_releases(self, entries: tuple[SessionRelease, ...], chosen: bool) -> None:
        self.host.workspace.update(releases=tuple(e.record for e in entries if isinstance(e.record, ProjectRelease)),
                                   shown=None)

    def releases_on_screen(self) -> set[str]:
        state = self.host.workspace.state
        return {r.release_id for r in state.releases} | ({state.shown.release_id} if state.shown is not None else set())

    def show_again(self, entry: SessionRelease) -> object:
        shown = entry.shown if isinstance(entry.shown, ShownRelease) else restored_shown_release(
            cast(ProjectRelease, entry.record), entry.dataset)  # the session lists it under its own kind
        if "shown" not in self.host.workspace.update(shown=shown):
            self.show_release()
        return shown

    def exports_changed(self, release_id: str) -> None:
        shown = self.host.workspace.state.shown
        if shown is not None and shown.release_id == release_id:
            self.show_release_status()

    # the mode's part of a project file
    def project_section(self) -> ProjectSection | None:
        """None: the CDF's part is the project's own fields (the workspace's :meth:`WorkspaceState.to_project`)."""
        return None

    def release_count(self) -> int:
        return len(self.host.workspace.state.releases)

    def on_project_change(self, react: Callable[[], None]) -> None:
        self.host.workspace_binding.changed.connect(lambda *_: react())

    def restore_project(self, project: Project, data_name: str) -> list[str]:
        """The project's column, bounds, bins, plan and releases into the CDF's steps (the last release shown,
        not marked secure: only the budget ledger's record can say so)."""
        problems = []
        data_page, plan_page = self.host.data_page, self.host.plan_page
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
        self._show_last_release(project.releases, project.dataset)
        return problems

    def _show_last_release(self, releases: tuple[ProjectRelease, ...], dataset: str) -> None:
        """Make ``releases`` the workspace's and show the last one (not marked secure: only the budget
        ledger's record can say so); ``dataset``: the project's dataset name ("": the file's name)."""
        workspace = self.host.workspace
        shown = None
        if releases:
            source = workspace.state.source
            dataset = dataset or (source.path.stem if source is not None else "") or "dataset"
            shown = restored_shown_release(releases[-1], dataset)
        # a release of another workspace is no longer the one shown or exported
        if "shown" not in workspace.update(releases=releases, shown=shown):
            self.show_release()  # nothing was shown before either: go to step 2, as after any opening
