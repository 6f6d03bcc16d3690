"""Step 4 of the "Counts over a hierarchy" mode: release through the budget ledger like the CDF release
(budget check, first cap, confirmation with the cost; nothing is spent before the confirmation; the noise
is drawn on a worker by :func:`dpgui.workspace.hierarchy.run_hierarchy_release`, the release flow's one
method), the result as a tree
table with a search box, and the exports (signed bundle, CSV only).

The step reaches its mode's page through :class:`ReleaseStepPage` and the window through
:class:`HierarchyWindow` (what the mode needs of the window). GUI thread only."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog, QFileDialog, QLabel, QMessageBox, QPushButton, QTabWidget, QVBoxLayout, QWidget,
)

from dpgui.app import text
from dpgui.app.dialogs.export import BundleExportDialog, csv_export_default, export_folder
from dpgui.app.hierarchy.result import HierarchyResultView
from dpgui.app.mode import ModeHost
from dpgui.app.widgets.fields import show_inline
from dpgui.app.widgets.release_bar import ReleaseBar
from dpgui.app.workers import Worker, WorkerPool, release_progress_dialog
from dpgui.core.privacy_unit import privacy_unit_words
from dpgui.data.file_types import CsvDialect
from dpgui.data.source import PasswordPrompt
from dpgui.errors import DpguiError
from dpgui.formatting import format_delta
from dpgui.report.hierarchy.project import ProjectHierarchyRelease
from dpgui.vocabulary import PriorSource
from dpgui.workspace.hierarchy import (
    CATEGORIES_NOT_DECLARED, NOISE_MESSAGE, HierarchyOutcome, HierarchyRequest, HierarchyWorkspace, budget_totals,
    check_hierarchy_budget, consistency_words, data_name, hierarchy_request, interval_words, run_hierarchy_release,
    set_first_cap,
)
from dpgui.workspace.hierarchy_planning import CONSISTENCY_LABELS, Data
from dpgui.workspace.release import (
    FIRST_CAP_REASON, BudgetOk, FirstCapNeeded, Problem, budget_sentence, failure_budget_sentence, new_release_id,
)
from dpgui.workspace.state import Workspace
from dpgui.workspace.words import escape

TAB_LEVELS, TAB_PLAN, TAB_TREE, TAB_RESULTS = range(4)  # the mode's four steps, as its page lays them out


class DialectStep(Protocol):
    """The CDF's step 1 as far as it states a CSV file's dialect (its label, Confirm and Change…)."""

    @property
    def dialect(self) -> CsvDialect | None: ...

    @property
    def dialect_label(self) -> QLabel: ...

    @property
    def dialect_confirm(self) -> QPushButton: ...

    def confirm_dialect(self) -> None: ...

    def open_dialect_dialog(self) -> None: ...


class HierarchyWindow(ModeHost, Protocol):
    """What the hierarchy mode needs of the main window beyond :class:`~dpgui.app.mode.ModeHost`: the
    open file's dialect as step 1 states it."""

    @property
    def data_page(self) -> DialectStep: ...


class ReleaseStepPage(Protocol):
    """What step 4 needs of its mode's page: the mode's state, the open data's dataset, the window, the
    steps' tabs, the Levels step's categories message, the page's workers and its tree."""

    state_ws: HierarchyWorkspace
    workspace: Workspace
    window_: HierarchyWindow
    tabs: QTabWidget
    categories_message: QLabel
    pool: WorkerPool

    def show_release_on_tree(self) -> None: ...

    def password_prompt(self, data: Data) -> PasswordPrompt | None: ...


class HierarchyReleaseStep(QWidget):
    """Step 4: the Release and Export buttons, what the shown release is, and the result view."""

    def __init__(self, page: ReleaseStepPage) -> None:
        super().__init__()
        self.page = page
        self.release_worker: Worker | None = None
        bar = ReleaseBar("Spend the budget and publish every category's count (asks for confirmation first).",
                         self.release, self.export_bundle, "Nothing released yet. When the plan suits you, press Release.")
        self.release_button, self.export_button, self.release_status = bar.release_button, bar.export_button, bar.status
        self.result_view = HierarchyResultView()
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.result_view, 1)


    def release_request(self) -> HierarchyRequest | None:
        """The validated request, or None with what to do shown on the page it concerns."""
        if self.release_worker is not None:
            return None
        request = hierarchy_request(self.page.state_ws.state, self.page.workspace.state.dataset)
        if isinstance(request, HierarchyRequest):
            return request
        self.page.window_.statusBar().showMessage(request, 8000)
        self.release_status.setText(escape(request))
        if request == CATEGORIES_NOT_DECLARED:  # said next to the checkbox it asks for
            show_inline(self.page.categories_message, request)
        on_plan = "plan" in request and "level" not in request
        self.page.tabs.setCurrentIndex(TAB_PLAN if on_plan else TAB_LEVELS)
        return None

    def release(self) -> None:
        """Check, confirm, release on a worker (the CDF release's order: nothing spent before the confirmation)."""
        request = self.release_request()
        if request is None or not self.check_budget(request):
            return
        box = self.confirmation_box(request)
        self._confirm_box = box
        box.exec()
        if box.clickedButton() is not box.release_button:  # type: ignore[attr-defined]
            self.page.window_.statusBar().showMessage("Release cancelled. Nothing was spent.", 5000)
            return
        self.start_release(request)

    def check_budget(self, request: HierarchyRequest) -> bool:
        check = check_hierarchy_budget(request, tuple(self.page.window_.similar_datasets(request.dataset)))
        if isinstance(check, FirstCapNeeded):
            cap = self.page.window_.ask_cap(check.dataset, check.epsilon, check.delta)
            if cap is None:
                self.page.window_.statusBar().showMessage("Release cancelled: no budget was set. Nothing was spent.", 8000)
                return False
            check = set_first_cap(request, cap, FIRST_CAP_REASON)
        if isinstance(check, Problem):
            self.page.window_.show_error(check.title, check.message)
            return False
        return isinstance(check, BudgetOk)

    def confirmation_text(self, request: HierarchyRequest) -> str:
        plan, loaded = request.plan, request.loaded
        hierarchy = loaded.hierarchy
        epsilon, delta, rho = plan.ledger_charge()
        sizes = " → ".join(f"{n:,} {escape(name)}" for n, name in zip(hierarchy.level_sizes[1:], hierarchy.level_names))
        source = ("the public prior file " + escape(loaded.prior_path.name) if loaded.prior_path is not None
                  else "your data (you declare them public)")
        cost = f"<b>Cost: ε = {epsilon:g}" + (f" and δ = {format_delta(delta)}" if delta > 0 else "") + "</b>"
        if rho is not None:
            cost += f" (counted as ρ = {rho:.4g} under zCDP)"
        root = ("The total number of records is published exactly (public under this model)."
                if plan.privacy.root_public else "The total is noised like every other count.")
        words = (f"<p>You are about to publish <b>{sum(plan.level_sizes):,} counts</b> over the hierarchy {sizes} of "
                 f"<b>{escape(data_name(loaded.data_path))}</b>: every category's count, zeros included, each a whole number "
                 f"≥ 0. The list of categories comes from {source} and is published. {root}</p>"
                 f"<p>{cost} of privacy budget, spent for good. Noise: {escape(plan.noise)}; consistency: "
                 f"{escape(CONSISTENCY_LABELS[plan.consistency].lower())}.</p>"
                 f"<p>{escape(privacy_unit_words(request.privacy_unit, plan.privacy.records_per_person))}.</p>")
        if plan.prior_source == PriorSource.CONFIDENTIAL:
            words += ("<p><b>You chose to use the confidential counts to choose the budgets.</b> This is recorded in "
                      "the manifest.</p>")
        totals, after = budget_totals(request)
        if totals is not None:
            words += budget_sentence(request.dataset, totals, after)
        return words

    def confirmation_box(self, request: HierarchyRequest) -> QMessageBox:
        box = QMessageBox(QMessageBox.Icon.Question, "Release and spend the budget?", self.confirmation_text(request),
                          parent=self.window())
        box.setTextFormat(Qt.TextFormat.RichText)
        box.release_button = box.addButton("Release", QMessageBox.ButtonRole.AcceptRole)  # type: ignore[attr-defined]
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        return box

    def start_release(self, request: HierarchyRequest) -> None:
        release_id = new_release_id()
        worker = Worker(run_hierarchy_release, request, self.page.window_.noise_source, release_id=release_id,
                        password_prompt=self.page.password_prompt(request.loaded.data_path))
        self.release_worker = worker
        dialog, on_progress = release_progress_dialog(self.window(), worker, NOISE_MESSAGE)

        def finish() -> None:
            self.release_worker = None
            dialog.close()
            self.release_button.setEnabled(True)

        def on_finished(outcome: HierarchyOutcome) -> None:
            finish()
            record = ProjectHierarchyRelease.from_release(outcome.release, outcome.info)  # public values only
            self.page.state_ws.update(outcome=outcome, releases=self.page.state_ws.state.releases + (record,))
            self.page.window_.project.autosave_now()  # a release is never left out of the autosave
            self.page.window_.statusBar().showMessage("Released the counts over the hierarchy.", 8000)

        def on_failed(message: str) -> None:
            finish()
            self.page.window_.show_error("The release did not happen", message + failure_budget_sentence(release_id))

        def on_cancelled() -> None:
            finish()
            self.page.window_.statusBar().showMessage("Release cancelled before any noise was drawn. Nothing was spent.", 8000)

        worker.connect_to(self, progress=on_progress, finished=on_finished, failed=on_failed, cancelled=on_cancelled)
        self.release_button.setEnabled(False)
        dialog.show()
        self.page.pool.start(worker)

    def show_outcome(self) -> None:
        outcome = self.page.state_ws.state.outcome
        self.export_button.setEnabled(outcome is not None)
        self.page.window_.export_bundle_action.setEnabled(outcome is not None)
        self.page.window_.export_action.setEnabled(outcome is not None)
        self.result_view.set_release(None if outcome is None else outcome.release)
        self.page.show_release_on_tree()
        if outcome is None:
            self.release_status.setText(self.page.window_.session.nothing_shown_words())
            return
        plan = outcome.release.plan
        epsilon, delta, _ = plan.ledger_charge()
        spent = f"ε = {epsilon:g}" + (f", δ = {format_delta(delta)}" if delta > 0 else "")
        if outcome.restored:  # from a project file: checked against the budget ledger, as at export
            export = ("secure noise, confirmed by the budget ledger" if outcome.secure
                      else f"not confirmed by the budget ledger, so it cannot be signed: {escape(outcome.problem)}")
            self.release_status.setText(
                f"Restored the release of {sum(plan.level_sizes):,} counts made "
                f"{outcome.info.created_utc:%Y-%m-%d %H:%M} UTC ({spent} from dataset '{escape(outcome.dataset)}', "
                f"{export}). Nothing was released or spent now."
                + (" " + self.page.window_.session.banner_words(outcome.release_id) if outcome.secure else ""))
            self.page.tabs.setCurrentIndex(TAB_RESULTS)
            return
        noise = "secure noise" if outcome.secure else "TEST NOISE (seeded, not secure — do not publish)"
        sums = consistency_words(plan)
        self.release_status.setText(
            f"Released {sum(plan.level_sizes):,} counts: {spent} spent from dataset '{escape(outcome.dataset)}' "
            f"(recorded in the budget ledger), {noise}. {escape(sums[:1].upper() + sums[1:])}; 95 % intervals: "
            f"{escape(interval_words(outcome.release))}. {self.page.window_.session.banner_words(outcome.release_id)}")
        self.page.tabs.setCurrentIndex(TAB_RESULTS)

    def export_dialog(self) -> BundleExportDialog | None:
        outcome = self.page.state_ws.state.outcome
        if outcome is None:
            self.page.window_.show_error("Nothing to export", "Release first (step 4), then export.")
            return None
        from dpgui.app.hierarchy.export_dialog import HierarchyExportDialog

        loaded = self.page.state_ws.state.loaded
        public = (loaded.prior_levels if loaded is not None and loaded.prior_path is not None
                  and loaded.hierarchy is outcome.release.hierarchy else None)
        dialog = HierarchyExportDialog(outcome, str(export_folder(outcome.dataset)), self.window(), public)
        dialog.input_folders = self.page.window_.protected_paths(outcome.release_id)
        return dialog

    def export_csv(self) -> None:
        """Write the released counts (one row per category) to a CSV file, unsigned."""
        outcome = self.page.state_ws.state.outcome
        if outcome is None:
            self.page.window_.show_error("Nothing to export", "Release first (step 4), then export.")
            return
        default = str(csv_export_default(outcome.dataset, f"{outcome.dataset}-hierarchy-counts.csv"))
        path, _ = QFileDialog.getSaveFileName(self, "Export the released counts", default, "CSV files (*.csv)")
        if path:
            self.export_csv_to(path)

    def export_csv_to(self, path: str) -> bool:
        from dpgui.report.files import check_writable
        from dpgui.report.hierarchy.bundle import write_hierarchy_csv

        outcome = self.page.state_ws.state.outcome
        assert outcome is not None
        from dpgui.data.source_spec import local_paths
        from dpgui.workspace.hierarchy import data_spec

        data_path = self.page.state_ws.state.data_path
        inputs = [Path(p) for p in local_paths(data_spec(data_path))] if data_path is not None else []
        inputs += [Path(p) for p in self.page.window_.protected_paths(outcome.release_id)]
        prior = self.page.state_ws.state.choice.prior_path
        try:
            check_writable(path, protect=[*inputs, *([prior] if prior is not None else [])])
            write_hierarchy_csv(outcome.release, path)
        except (DpguiError, OSError) as err:
            self.page.window_.show_error("Export failed", text.friendly(err) + " The file was not written.")
            return False
        self.page.window_.csv_exported(outcome.release_id, outcome.dataset, Path(path))
        return True

    def export_bundle(self) -> None:
        dialog = self.export_dialog()
        if dialog is not None and dialog.exec() == QDialog.DialogCode.Accepted:
            self.page.window_.after_bundle_export(dialog)
