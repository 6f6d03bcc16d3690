"""The window's "Counts of one column" mode (:class:`~dpgui.app.mode.StatisticMode`): one page to choose
the column, state its public categories (typed, or loaded from a text file), set ε and the neighbour model,
read the projected error of each count before anything is spent, release through the budget ledger
(budget check, first cap, confirmation with the cost; the count, the spend and the noise on a worker by
:func:`dpgui.workspace.counts.run_counts_release`), see the released counts and export them (signed
bundle, CSV only).

The noise is Laplace (pure ε-DP; no δ): the page says so. The categories are never read from the data: a
value of the column that is not stated stops the release before anything is spent. GUI thread only; the
mode reaches the window through :class:`CountsWindow`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol, cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox, QDialog, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
    QMessageBox, QPlainTextEdit, QPushButton, QScrollArea, QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout,
    QWidget,
)

from dpgui.app import text
from dpgui.app.counts.export_dialog import CountsExportDialog
from dpgui.app.dialogs.export import csv_export_default, export_folder
from dpgui.app.mode import ModeHost
from dpgui.app.widgets.fields import ValidatedField, inline_message, offer_neighbours, parse_epsilon, show_inline
from dpgui.app.workers import Worker, WorkerPool, release_progress_dialog
from dpgui.core.counts import CountsPlan
from dpgui.errors import DpguiError
from dpgui.report.counts.bundle import counts_csv_text
from dpgui.report.counts.project import CountsSettings, ProjectCountsRelease
from dpgui.report.files import check_writable, write_text_atomic
from dpgui.report.project_file import Project
from dpgui.report.project_sections import ProjectSection
from dpgui.vocabulary import Neighbours, StatisticKind
from dpgui.workspace.counts import (
    NOISE_MESSAGE, CountsOutcome, CountsRequest, check_counts_budget, confirmation_words, counts_plan,
    parse_categories, read_categories, run_counts_release, set_counts_first_cap,
)
from dpgui.workspace.release import BudgetOk, FirstCapNeeded, Problem, failure_budget_sentence, new_release_id
from dpgui.workspace.session import SessionRelease, open_data
from dpgui.workspace.state import Workspace
from dpgui.workspace.words import NEIGHBOURS_LABELS, escape

RESULT_HEADERS = ("Category", "Released count", "95 % margin (± records)")
RESULT_TIPS = ("A category of your public list, in its order.",
               "The category's count with Laplace noise added: what is published (it may be below 0 or "
               "differ from the true count by a few records).",
               "95 % of released counts lie within this many records of the true count.")


class CountsWindow(ModeHost, Protocol):
    """What the counts mode needs of the main window beyond :class:`~dpgui.app.mode.ModeHost`: its workspace
    (the open data and the dataset's name)."""

    workspace: Workspace


class CountsMode(QWidget):
    """The counts of one column's stated categories, as one page of the window (see the module doc)."""

    kind = StatisticKind.COUNTS
    release_tip = "Spend the budget and publish the count of each category"
    #: the workspace's counts releases or the shown one changed (the session's list collects them)
    releasesChanged = Signal()

    def __init__(self, host: CountsWindow) -> None:
        super().__init__(host.window())
        self.host = host
        self.pool = WorkerPool()
        self.release_worker: Worker | None = None
        self.outcome: CountsOutcome | None = None  # the release shown (made here, or restored)
        self.releases: tuple[ProjectCountsRelease, ...] = ()  # this workspace's counts releases (public values)
        self.categories_path = ""  # the public list's file, if loaded from one
        self._restored = False
        intro = QLabel("<b>Counts of one column</b>: publish how many records fall in each category of one "
                       "column, each count with noise. The list of categories is <b>public</b>: you type it or "
                       "load it from a file; it is never read from your data, and every value of the column must "
                       "be in it (otherwise the release stops before anything is spent).")
        intro.setWordWrap(True)
        self.file_label = text.plain_text(QLabel("No file open."))
        self.dataset_name = QLineEdit()
        self.dataset_name.setToolTip(text.DATASET_HELP + " " + text.DATASET_TOOLTIP)
        self.dataset_name.setPlaceholderText("e.g. people-2024")
        self.dataset_name.textChanged.connect(lambda name: host.workspace.update(dataset=name))
        top = QHBoxLayout()
        top.addWidget(self.file_label)
        top.addStretch(1)
        dataset_label = QLabel("&Dataset name in the budget ledger:")
        dataset_label.setBuddy(self.dataset_name)
        top.addWidget(dataset_label)
        top.addWidget(self.dataset_name)

        column = QWidget()
        column.setMaximumWidth(900)
        inner = QVBoxLayout(column)
        inner.addWidget(intro)
        inner.addWidget(self._build_what_box())
        inner.addWidget(self._build_privacy_box())
        inner.addLayout(self._build_release_bar())
        self.results = QTableWidget(0, len(RESULT_HEADERS))
        self.results.setHorizontalHeaderLabels(RESULT_HEADERS)
        for i, tip in enumerate(RESULT_TIPS):
            header = self.results.horizontalHeaderItem(i)
            if header is not None:
                header.setToolTip(tip)
        self.results.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.results.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.results.verticalHeader().hide()
        self.results.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.results.setMinimumHeight(160)
        inner.addWidget(self.results, 1)
        self.results_note = QLabel("The released counts carry the noise: one may differ from the true count by a few "
                                   "records, or be below 0 for a rare category. They are not rounded or clamped, so "
                                   "they stay unbiased; the PDF and the CSV say the same.")
        self.results_note.setWordWrap(True)
        inner.addWidget(self.results_note)
        scroll = QScrollArea()  # a short window scrolls the page instead of growing
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(column)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(scroll, 1)
        self.update_projection()

    # ------------------------------------------------------------------ the page
    def _build_what_box(self) -> QGroupBox:
        box = QGroupBox("What to count")
        form = QFormLayout(box)
        self.column = QComboBox()
        self.column.setToolTip("The column whose categories are counted (e.g. a region, a status, a type).")
        self.column.currentIndexChanged.connect(self.update_projection)
        form.addRow("&Column:", self.column)
        self.categories = QPlainTextEdit()
        self.categories.setPlaceholderText("One category per line, e.g.\nNorth\nSouth")
        self.categories.setToolTip("The public list of categories, one per line (or separated by commas), written "
                                   "exactly as they appear in the column. Every one is published, zeros included; a "
                                   "value of the column that is not listed stops the release before anything is spent.")
        self.categories.setMaximumHeight(120)
        self.categories.textChanged.connect(self._on_categories_typed)
        self.load_button = QPushButton("&Load List…")
        self.load_button.setToolTip("Read the categories from a text file (UTF-8, one per line): a public list, "
                                    "such as an official classification — never the data file itself.")
        self.load_button.clicked.connect(self.choose_categories_file)
        row = QHBoxLayout()
        row.addWidget(self.categories, 1)
        row.addWidget(self.load_button, 0, Qt.AlignmentFlag.AlignTop)
        form.addRow("Ca&tegories (public):", row)
        label = form.labelForField(row)
        if isinstance(label, QLabel):
            label.setBuddy(self.categories)
        self.categories_note = text.plain_text(QLabel(""))
        self.categories_note.setWordWrap(True)
        form.addRow("", self.categories_note)
        self.categories_message = inline_message(self)
        form.addRow("", self.categories_message)
        return box

    def _build_privacy_box(self) -> QGroupBox:
        box = QGroupBox("Privacy")
        form = QFormLayout(box)
        self.epsilon = ValidatedField(parse_epsilon, "e.g. 1", "The privacy budget ε this release spends: smaller "
                                      "is more private and noisier.")
        self.epsilon.set_text("1")
        self.epsilon.edited.connect(self.update_projection)
        form.addRow("Privacy budget &ε:", self.epsilon)
        self.neighbours = QComboBox()
        for token in Neighbours:
            self.neighbours.addItem(NEIGHBOURS_LABELS[token], str(token))
        self.neighbours.setToolTip("What the release protects against. Changing one record moves it between two "
                                   "categories (twice the noise of adding or removing one).")
        self.neighbours.currentIndexChanged.connect(self.update_projection)
        form.addRow("&Protect against:", self.neighbours)
        self.neighbours_note = text.plain_text(QLabel(""))
        self.neighbours_note.setWordWrap(True)
        self.neighbours_note.hide()
        form.addRow("", self.neighbours_note)
        self.records = QSpinBox()
        self.records.setRange(1, 1000)
        self.records.setToolTip(text.RECORDS_PER_PERSON_TOOLTIP)
        self.records.valueChanged.connect(self.update_projection)
        form.addRow("Records per perso&n:", self.records)
        noise = QLabel("Laplace (pure ε-DP, δ = 0). Gaussian noise is not offered for the counts of one column.")
        noise.setWordWrap(True)
        form.addRow("Noise:", noise)
        self.projection = QLabel("")
        self.projection.setWordWrap(True)
        self.projection.setToolTip("Known before anything is spent: it depends on ε, the protection and the records "
                                   "per person only, never on the data.")
        form.addRow("Projected error:", self.projection)
        return box

    def _build_release_bar(self) -> QHBoxLayout:
        self.release_button = QPushButton("&Release…")
        self.release_button.setToolTip("Spend the budget and publish the count of each category (asks for "
                                       "confirmation first).")
        self.release_button.clicked.connect(self.release)
        self.export_button = QPushButton("&Export Signed Bundle…")
        self.export_button.setToolTip("Write the release as CSV + PDF + manifest, signed with your key")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self.export_bundle)
        self.release_status = QLabel("Nothing released yet. When the settings suit you, press Release.")
        self.release_status.setTextFormat(Qt.TextFormat.RichText)  # user text in it is escaped
        self.release_status.setWordWrap(True)
        bar = QHBoxLayout()
        bar.addWidget(self.release_button)
        bar.addWidget(self.export_button)
        bar.addWidget(self.release_status, 1)
        return bar

    def _on_categories_typed(self) -> None:
        if self.categories.hasFocus():
            self.categories_path = ""  # typed over: no longer the file's list
        self.update_projection()

    def choose_categories_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load the public list of categories", "",
                                              "Text files (*.txt *.csv);;All files (*)")
        if path:
            self.load_categories(Path(path))

    def load_categories(self, path: Path) -> bool:
        """Put the categories of the public list ``path`` in the field (a message on the page if it cannot)."""
        protected = [Path(p).resolve() for p in self.host.protected_paths("")]
        if path.resolve() in protected:
            show_inline(self.categories_message, "This is the data file: the list of categories must be a public "
                                                 "list, never read from the data.")
            return False
        try:
            categories = read_categories(path)
        except DpguiError as err:
            show_inline(self.categories_message, text.friendly(err))
            return False
        self.categories.setPlainText("\n".join(categories))
        self.categories_path = str(path.absolute())
        self.update_projection()
        return True

    def stated_categories(self) -> tuple[str, ...]:
        return parse_categories(self.categories.toPlainText())

    def plan(self) -> CountsPlan:
        """The plan of the page's choices (DpguiError with what to fix)."""
        epsilon = parse_epsilon(self.epsilon.text())
        return counts_plan(self.stated_categories(), epsilon, Neighbours(self.neighbours.currentData()),
                           self.records.value())

    def update_projection(self, *_: object) -> None:
        """The projected error of each count (and the categories' note) for the current choices."""
        try:
            categories = self.stated_categories()
            self.categories_note.setText(f"{len(categories):,} categories stated; each one's count is published."
                                         + (f" From {Path(self.categories_path).name}." if self.categories_path else ""))
            show_inline(self.categories_message, "")
        except DpguiError as err:
            show_inline(self.categories_message, text.friendly(err))
        try:
            plan = self.plan()
        except DpguiError as err:
            self.projection.setText(f"No projection: {text.friendly(err)}")
            return
        self.projection.setText(
            f"Each released count is within ±{plan.margin:,} records of the true count in 95 % of releases "
            f"(standard error {plan.std_error:.3g} records), whatever the data.")

    # ------------------------------------------------------------------ the mode
    def steps(self) -> QWidget:
        return self

    def has_release(self) -> bool:
        return self.outcome is not None

    def is_releasing(self) -> bool:
        return self.release_worker is not None

    def data_opened(self) -> None:
        """Take the open data: its columns and the dataset's name; a query's row count decides the protection."""
        state = self.host.workspace.state
        source = state.source
        chosen = self.column.currentText()
        self.column.blockSignals(True)
        self.column.clear()
        if source is not None:
            self.column.addItems([c.name for c in source.table.columns])
            if chosen:
                self.column.setCurrentIndex(max(0, self.column.findText(chosen)))
        self.column.blockSignals(False)
        self.file_label.setText("No file open." if source is None else f"Data: {source.source_spec.display_name()}")
        if self.dataset_name.text() != state.dataset:
            self.dataset_name.blockSignals(True)
            self.dataset_name.setText(state.dataset)
            self.dataset_name.blockSignals(False)
        public = source is None or source.source_spec.row_count_may_be_public
        switched = offer_neighbours(self.neighbours, public)
        self.neighbours_note.setText("" if public else text.query_rows_private_note(switched))
        self.neighbours_note.setVisible(not public)
        self.update_projection()

    def shutdown(self) -> None:
        self.pool.cancel_all()

    # ------------------------------------------------------------------ release
    def request(self) -> CountsRequest | None:
        """The checked request, or None with what to fix said on the page."""
        if self.release_worker is not None:
            return None
        source = self.host.workspace.state.source
        problem = ("Open the data first (File → Open)." if source is None else
                   "Give the dataset a name in the budget ledger (top right)." if not self.dataset_name.text().strip()
                   else "Choose the column to count." if not self.column.currentText() else "")
        if not problem:
            try:
                plan = self.plan()
            except DpguiError as err:
                problem = text.friendly(err)
        if problem or source is None:
            self.release_status.setText(escape(problem))
            self.host.statusBar().showMessage(problem, 8000)
            return None
        return CountsRequest(source.source_spec, self.column.currentText(), plan, self.dataset_name.text().strip())

    def release(self) -> None:
        """Check, confirm, release on a worker (nothing is spent before the confirmation)."""
        request = self.request()
        if request is None or not self.check_budget(request):
            return
        box = QMessageBox(QMessageBox.Icon.Question, "Release and spend the budget?", confirmation_words(request),
                          parent=self.window())
        box.setTextFormat(Qt.TextFormat.RichText)
        release_button = box.addButton("Release", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        self._confirm_box = box
        box.exec()
        if box.clickedButton() is not release_button:
            self.host.statusBar().showMessage("Release cancelled. Nothing was spent.", 5000)
            return
        self.start_release(request)

    def check_budget(self, request: CountsRequest) -> bool:
        check = check_counts_budget(request, tuple(self.host.similar_datasets(request.dataset)))
        if isinstance(check, FirstCapNeeded):
            cap = self.host.ask_cap(check.dataset, check.epsilon, 0.0)
            if cap is None:
                self.host.statusBar().showMessage("Release cancelled: no budget was set. Nothing was spent.", 8000)
                return False
            check = set_counts_first_cap(request, cap)
        if isinstance(check, Problem):
            self.host.show_error(check.title, check.message)
            return False
        return isinstance(check, BudgetOk)

    def start_release(self, request: CountsRequest) -> None:
        release_id = new_release_id()
        worker = Worker(run_counts_release, request, self.host.noise_source, release_id=release_id,
                        password_prompt=self.host.passwords.prompt_for(request.spec))
        self.release_worker = worker
        dialog, on_progress = release_progress_dialog(self.window(), worker, NOISE_MESSAGE)

        def finish() -> None:
            self.release_worker = None
            dialog.close()
            self.release_button.setEnabled(True)

        def on_finished(outcome: CountsOutcome) -> None:
            finish()
            self.releases += (ProjectCountsRelease.from_release(outcome.release, outcome.info),)  # public values
            self.show_outcome(outcome, restored=False)
            self.releasesChanged.emit()
            self.host.project.autosave_now()  # a release is never left out of the autosave
            self.host.statusBar().showMessage(f"Released the counts of {request.column}.", 8000)

        def on_failed(message: str) -> None:
            finish()
            self.host.show_error("The release did not happen", message + failure_budget_sentence(release_id))

        def on_cancelled() -> None:
            finish()
            self.host.statusBar().showMessage("Release cancelled before any noise was drawn. Nothing was spent.", 8000)

        worker.connect_to(self, progress=on_progress, finished=on_finished, failed=on_failed, cancelled=on_cancelled)
        self.release_button.setEnabled(False)
        dialog.show()
        self.pool.start(worker)

    @property
    def restored(self) -> bool:
        """Is the shown release restored (from a project or the session's list) rather than made here?"""
        return self._restored

    def set_releases(self, releases: tuple[ProjectCountsRelease, ...]) -> None:
        """The workspace's counts releases (other data was opened: its own ones), none shown."""
        self.releases = releases
        self.show_outcome(None, restored=False)
        self.releasesChanged.emit()

    def show_outcome(self, outcome: CountsOutcome | None, restored: bool) -> None:
        """Show ``outcome`` (None: none) in the results table and the banner, and enable the exports."""
        self.outcome, self._restored = outcome, restored
        for widget in (self.export_button, self.host.export_bundle_action, self.host.export_action):
            widget.setEnabled(outcome is not None)
        self.results.setRowCount(0)
        if outcome is None:
            self.release_status.setText(self.host.session.nothing_shown_words())
            return
        release, info = outcome.release, outcome.info
        margin = f"± {release.plan.margin:,}"
        self.results.setRowCount(len(release.plan.labels))
        for row, (label, count) in enumerate(zip(release.plan.labels, release.counts.tolist())):
            for col, value in enumerate((label, f"{int(count):,}", margin)):
                item = QTableWidgetItem(value)
                if col:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.results.setItem(row, col, item)
        spent = f"ε = {release.plan.privacy.epsilon:g}"
        if restored:
            words = (f"Restored the release of {len(release.counts):,} counts of <b>{escape(info.column)}</b> made "
                     f"{info.created_utc:%Y-%m-%d %H:%M} UTC ({spent} from dataset '{escape(info.dataset)}'). Nothing "
                     "was released or spent now; exporting checks it against the budget ledger.")
        else:
            noise = "secure noise" if release.secure else "TEST NOISE (seeded, not secure — do not publish)"
            words = (f"Released {len(release.counts):,} counts of <b>{escape(info.column)}</b>: {spent} spent from "
                     f"dataset '{escape(info.dataset)}' (recorded in the budget ledger), {noise}.")
        self.release_status.setText(f"{words} {self.host.session.banner_words(info.release_id)}")

    # ------------------------------------------------------------------ exports
    def export_dialog(self) -> CountsExportDialog | None:
        if self.outcome is None:
            self.host.show_error("Nothing to export", "Release first, then export.")
            return None
        dialog = CountsExportDialog(self.outcome, str(export_folder(self.outcome.info.dataset)), self.window())
        dialog.input_folders = self.host.protected_paths(self.outcome.release_id)
        return dialog

    def export_bundle(self) -> None:
        dialog = self.export_dialog()
        if dialog is not None and dialog.exec() == QDialog.DialogCode.Accepted:
            self.host.after_bundle_export(dialog)

    def export_csv(self) -> None:
        """The released counts (one row per category) in a CSV file, unsigned."""
        if self.outcome is None:
            self.host.show_error("Nothing to export", "Release first, then export.")
            return
        info = self.outcome.info
        default = str(csv_export_default(info.dataset, f"{info.dataset}-{info.column}-counts.csv"))
        path, _ = QFileDialog.getSaveFileName(self, "Export the released counts", default, "CSV files (*.csv)")
        if path:
            self.export_csv_to(path)

    def export_csv_to(self, path: str) -> bool:
        assert self.outcome is not None
        info = self.outcome.info
        try:
            check_writable(path, protect=[Path(p) for p in self.host.protected_paths(info.release_id)])
            write_text_atomic(path, counts_csv_text(self.outcome.release))
        except (DpguiError, OSError) as err:
            self.host.show_error("Export failed", text.friendly(err) + " The file was not written.")
            return False
        self.host.csv_exported(info.release_id, info.dataset, Path(path))
        return True

    # ------------------------------------------------------------------ project files
    def settings(self) -> CountsSettings | None:
        """The page's choices for a project file (None: nothing chosen yet)."""
        try:
            categories = self.stated_categories()
        except DpguiError:
            categories = ()
        epsilon = parse_epsilon(self.epsilon.text()) if self.epsilon.value() is not None else 1.0
        if not categories and not self.releases:
            return None
        return CountsSettings(self.column.currentText(), categories, self.categories_path, epsilon,
                              Neighbours(self.neighbours.currentData()), self.records.value())

    def restore(self, settings: CountsSettings | None, releases: tuple[ProjectCountsRelease, ...]) -> None:
        """A project's counts choices and releases (the last one shown, as restored: not marked secure)."""
        if settings is not None:
            if settings.column:
                self.column.setCurrentIndex(max(0, self.column.findText(settings.column)))
            self.categories.setPlainText("\n".join(settings.categories))
            self.categories_path = settings.categories_path
            self.epsilon.set_text(f"{settings.epsilon:g}")
            self.neighbours.setCurrentIndex(max(0, self.neighbours.findData(str(settings.neighbours))))
            self.records.setValue(settings.records_per_person)
        self.releases = releases
        last = releases[-1] if releases else None
        self.show_outcome(None if last is None else CountsOutcome(*last.to_release()), restored=True)
        self.update_projection()
        self.releasesChanged.emit()

    # the session's releases
    def watch_releases(self, listener: Callable[[], None]) -> None:
        self.releasesChanged.connect(listener)

    def session_releases(self) -> tuple[SessionRelease, ...]:
        """The mode's releases, of the open data."""
        spec = open_data(self.host.workspace)
        entries = []
        for record in self.releases:
            shown = self.outcome if self.outcome is not None and self.outcome.release_id == record.release_id else None
            entries.append(SessionRelease(self.kind, record, record.dataset, record.subject, spec,
                                          made_here=shown is not None and not self.restored, shown=shown))
        return tuple(entries)

    def take_releases(self, entries: tuple[SessionRelease, ...], chosen: bool) -> None:
        self.set_releases(tuple(e.record for e in entries if isinstance(e.record, ProjectCountsRelease)))

    def releases_on_screen(self) -> set[str]:
        return {r.release_id for r in self.releases} | ({self.outcome.release_id} if self.outcome is not None else set())

    def show_again(self, entry: SessionRelease) -> object:
        """Shown as made here only when the session holds what this session's release showed."""
        made = entry.shown if isinstance(entry.shown, CountsOutcome) and entry.made_here else None
        outcome = made or CountsOutcome(*cast(ProjectCountsRelease, entry.record).to_release())
        self.show_outcome(outcome, restored=made is None)
        return outcome

    def exports_changed(self, release_id: str) -> None:
        if self.outcome is not None and self.outcome.release_id == release_id:
            self.show_outcome(self.outcome, self.restored)

    # the mode's part of a project file
    def project_section(self) -> ProjectSection | None:
        return ProjectSection(self.settings(), self.releases)

    def release_count(self) -> int:
        return len(self.releases)

    def on_project_change(self, react: Callable[[], None]) -> None:
        self.releasesChanged.connect(react)

    def restore_project(self, project: Project, data_name: str) -> list[str]:
        """The project's counts choices and releases, the open data's columns taken first."""
        part = project.section(self.kind)
        self.data_opened()  # the open data's columns, for the counts choices
        self.restore(part.settings, part.releases)
        return [part.problem] if part.problem else []
