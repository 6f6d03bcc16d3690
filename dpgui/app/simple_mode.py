"""What the window's one-page statistic modes share (:class:`OnePageMode`: the counts of one column, the CDF
for each group): the page's frame (the data's name and the dataset's name on top, the statistic's boxes, the
release bar, the results table and its note, in a scroll area), the rows both pages hold (ε, the protection
and the records per person, a public list typed or loaded — never the data file), the checks before a request
(open data, a dataset's name), the release through the budget ledger (budget check, first cap, confirmation
with the cost, the release on a worker), the exports (signed bundle, CSV only), the session's methods and the
mode's part of a project file.

Each mode keeps what differs: its fields, its plan and projection, its request, its confirmation's words, its
results table's rows and banner, its CSV and its project settings — the hooks below. This module imports no
statistic's mode (statistics stay independent). GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox, QDialog, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
    QMessageBox, QPlainTextEdit, QPushButton, QScrollArea, QSpinBox, QTableWidget, QVBoxLayout, QWidget,
)

from dpgui.app import text
from dpgui.app.dialogs.export import BundleExportDialog, csv_export_default, export_folder
from dpgui.app.mode import ModeHost
from dpgui.app.widgets.fields import ValidatedField, offer_neighbours, parse_epsilon, show_inline
from dpgui.app.widgets.person_column import PersonColumnRow
from dpgui.app.widgets.release_bar import ReleaseBar
from dpgui.app.workers import Worker, WorkerPool, release_progress_dialog
from dpgui.core.privacy_unit import PrivacyUnit
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import DpguiError
from dpgui.report.files import check_writable, write_text_atomic
from dpgui.report.project_file import Project
from dpgui.report.project_sections import ProjectSection, SectionRelease
from dpgui.vocabulary import Neighbours, StatisticKind
from dpgui.workspace.release import BudgetCheck, BudgetOk, FirstCapNeeded, Problem, failure_budget_sentence, new_release_id
from dpgui.workspace.session import SessionRelease, open_data
from dpgui.workspace.state import Workspace
from dpgui.workspace.words import NEIGHBOURS_LABELS, escape

__all__ = ["OnePageMode", "OnePageWindow"]


class OnePageWindow(ModeHost, Protocol):
    """What a one-page mode needs of the main window beyond :class:`~dpgui.app.mode.ModeHost`: its workspace
    (the open data and the dataset's name)."""

    workspace: Workspace


class _Info(Protocol):
    @property
    def release_id(self) -> str: ...

    @property
    def dataset(self) -> str: ...


class _Outcome(Protocol):
    @property
    def release_id(self) -> str: ...

    @property
    def info(self) -> _Info: ...


class _Request(Protocol):
    @property
    def spec(self) -> SourceSpec: ...

    @property
    def dataset(self) -> str: ...


RequestT = TypeVar("RequestT", bound=_Request)
OutcomeT = TypeVar("OutcomeT", bound=_Outcome)
RecordT = TypeVar("RecordT", bound=SectionRelease)
ListT = TypeVar("ListT")


class OnePageMode(QWidget, Generic[RequestT, OutcomeT, RecordT]):
    """A statistic's mode on one page (see the module doc). A subclass builds its page with
    :meth:`build_page` and implements the hooks (the methods that raise NotImplementedError)."""

    kind: StatisticKind
    release_tip = ""
    #: the release's point of no return, as its progress says it
    noise_message = ""
    #: the workspace's releases of this mode or the shown one changed (the session's list collects them)
    releasesChanged = Signal()

    def __init__(self, host: OnePageWindow, record_type: type[RecordT], outcome_type: type[OutcomeT]) -> None:
        super().__init__(host.window())
        self.host = host
        self.record_type, self.outcome_type = record_type, outcome_type
        self.pool = WorkerPool()
        self.release_worker: Worker | None = None
        self.outcome: OutcomeT | None = None  # the release shown (made here, or restored)
        self.releases: tuple[RecordT, ...] = ()  # this workspace's releases of the mode (public values)
        self._restored = False

    # ------------------------------------------------------------------ the page
    def build_page(self, intro_words: str, boxes: Sequence[Callable[[], QGroupBox]], headers: Sequence[str],
                   tips: Sequence[str], note_words: str) -> None:
        """The page: ``intro_words`` (rich text), the data's and the dataset's names on top, the boxes that
        ``boxes`` build (in their order), the release bar, the results table (``headers``, ``tips``) and
        ``note_words`` under it, in a scroll area."""
        intro = QLabel(intro_words)
        intro.setWordWrap(True)
        self.file_label = text.plain_text(QLabel("No file open."))
        self.dataset_name = QLineEdit()
        self.dataset_name.setToolTip(text.DATASET_HELP + " " + text.DATASET_TOOLTIP)
        self.dataset_name.setPlaceholderText("e.g. people-2024")
        self.dataset_name.textChanged.connect(lambda name: self.host.workspace.update(dataset=name))
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
        for build in boxes:
            inner.addWidget(build())
        inner.addLayout(self._build_release_bar())
        self.results = QTableWidget(0, len(headers))
        self.results.setHorizontalHeaderLabels(list(headers))
        for i, tip in enumerate(tips):
            header = self.results.horizontalHeaderItem(i)
            if header is not None:
                header.setToolTip(tip)
        self.results.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.results.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.results.verticalHeader().hide()
        self.results.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.results.setMinimumHeight(160)
        inner.addWidget(self.results, 1)
        self.results_note = QLabel(note_words)
        self.results_note.setWordWrap(True)
        inner.addWidget(self.results_note)
        scroll = QScrollArea()  # a short window scrolls the page instead of growing
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(column)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(scroll, 1)

    def add_epsilon_row(self, form: QFormLayout, tip: str) -> None:
        """The ε field (``self.epsilon``, 1 at first) as a row of ``form``."""
        self.epsilon = ValidatedField(parse_epsilon, "e.g. 1", tip)
        self.epsilon.set_text("1")
        self.epsilon.edited.connect(self.update_projection)
        form.addRow("Privacy budget &ε:", self.epsilon)

    def add_protection_rows(self, form: QFormLayout, neighbours_tip: str) -> None:
        """The neighbour model's choice (``self.neighbours``), its note on a query's row count
        (``self.neighbours_note``, set by :meth:`data_opened`), the records per person (``self.records``) and the
        optional person-ID column (``self.person``, :class:`PersonColumnRow`) as rows of ``form``."""
        self.neighbours = QComboBox()
        for token in Neighbours:
            self.neighbours.addItem(NEIGHBOURS_LABELS[token], str(token))
        self.neighbours.setToolTip(neighbours_tip)
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
        self.person = PersonColumnRow(form, self.neighbours, self.records, self.update_projection)

    def privacy_unit(self) -> PrivacyUnit | None:
        """The privacy unit of the page's choices: the person-ID column and L (None: none chosen, L declared)."""
        return self.person.unit()

    def add_public_list_row(self, form: QFormLayout, label: str, edit: QPlainTextEdit, load_tip: str,
                            choose_file: Callable[[], None]) -> None:
        """``edit`` (the public list, typed) and its Load List button (``self.load_button``: ``choose_file``) as a
        row of ``form`` named ``label``."""
        self.load_button = QPushButton("&Load List…")
        self.load_button.setToolTip(load_tip)
        self.load_button.clicked.connect(choose_file)
        row = QHBoxLayout()
        row.addWidget(edit, 1)
        row.addWidget(self.load_button, 0, Qt.AlignmentFlag.AlignTop)
        form.addRow(label, row)
        label_widget = form.labelForField(row)
        if isinstance(label_widget, QLabel):
            label_widget.setBuddy(edit)

    def choose_list_file(self, title: str) -> Path | None:
        """The public list's file the officer chooses (None: cancelled)."""
        path, _ = QFileDialog.getOpenFileName(self, title, "", "Text files (*.txt *.csv);;All files (*)")
        return Path(path) if path else None

    def read_public_list(self, path: Path, read: Callable[[Path], ListT], message: QLabel, what: str) -> ListT | None:
        """The public list of ``what`` (e.g. "categories") read from ``path`` by ``read``, or None with the reason in
        ``message``: the data file itself is refused (the list must be public, never read from the data)."""
        protected = [Path(p).resolve() for p in self.host.protected_paths("")]
        if path.resolve() in protected:
            show_inline(message, f"This is the data file: the list of {what} must be a public list, never read "
                                 "from the data.")
            return None
        try:
            return read(path)
        except DpguiError as err:
            show_inline(message, text.friendly(err))
            return None

    def _build_release_bar(self) -> QHBoxLayout:
        bar = ReleaseBar(f"{self.release_tip} (asks for confirmation first).", self.release, self.export_bundle,
                         "Nothing released yet. When the settings suit you, press Release.")
        self.release_button, self.export_button, self.release_status = bar.release_button, bar.export_button, bar.status
        return bar

    # ------------------------------------------------------------------ the hooks (each mode's own)
    def update_projection(self, *_: object) -> None:
        """The projected error (and the notes on the public list) for the current choices."""
        raise NotImplementedError

    def column_combos(self) -> tuple[QComboBox, ...]:
        """The page's column choices, filled with the open data's columns."""
        raise NotImplementedError

    def request_of(self, spec: SourceSpec, dataset: str) -> RequestT | str:
        """The request of the page's choices on the open data ``spec`` paid by ``dataset``, or the problem to fix
        in words (a DpguiError: the same, in its words)."""
        raise NotImplementedError

    def confirmation(self, request: RequestT) -> str:
        """The confirmation's rich text: what is published, its margin, its cost and the budget."""
        raise NotImplementedError

    def budget_check(self, request: RequestT, similar: tuple[str, ...]) -> BudgetCheck:
        raise NotImplementedError

    def set_first_cap(self, request: RequestT, cap: float, delta: float) -> BudgetCheck:
        raise NotImplementedError

    def release_task(self) -> Callable[..., OutcomeT]:
        """The worker's task: ``task(request, noise_source, progress, should_cancel, release_id=…,
        password_prompt=…)``, run on the worker thread."""
        raise NotImplementedError

    def released_message(self, request: RequestT) -> str:
        """The status bar's words once ``request`` is released."""
        raise NotImplementedError

    def record_of(self, outcome: OutcomeT) -> RecordT:
        """The public values of ``outcome`` a project keeps."""
        raise NotImplementedError

    def outcome_of(self, record: RecordT) -> OutcomeT:
        """The outcome a project's ``record`` shows again (restored: not marked secure)."""
        raise NotImplementedError

    def show_results(self, outcome: OutcomeT, restored: bool) -> str:
        """Fill the results table with ``outcome`` and return the banner's words (rich text, user text escaped)."""
        raise NotImplementedError

    def export_dialog_of(self, outcome: OutcomeT, folder: str) -> BundleExportDialog:
        raise NotImplementedError

    def csv_file(self, outcome: OutcomeT) -> tuple[str, str]:
        """The CSV export's default file name and its dialog's title."""
        raise NotImplementedError

    def csv_text(self, outcome: OutcomeT) -> str:
        raise NotImplementedError

    def settings(self) -> object | None:
        """The page's choices for a project file (None: nothing chosen yet)."""
        raise NotImplementedError

    def restore(self, settings: Any, releases: tuple[RecordT, ...]) -> None:
        """A project's choices and releases (the last one shown, as restored): see :meth:`restore_releases`."""
        raise NotImplementedError

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
        for combo in self.column_combos():
            chosen = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            if source is not None:
                combo.addItems([c.name for c in source.table.columns])
                if chosen:
                    combo.setCurrentIndex(max(0, combo.findText(chosen)))
            combo.blockSignals(False)
        self.file_label.setText("No file open." if source is None else f"Data: {source.source_spec.display_name()}")
        if self.dataset_name.text() != state.dataset:
            self.dataset_name.blockSignals(True)
            self.dataset_name.setText(state.dataset)
            self.dataset_name.blockSignals(False)
        self.person.set_columns([] if source is None else [c.name for c in source.table.columns])
        public = source is None or source.source_spec.row_count_may_be_public
        switched = offer_neighbours(self.neighbours, public)
        self.neighbours_note.setText("" if public else text.query_rows_private_note(switched))
        self.neighbours_note.setVisible(not public)
        self.update_projection()

    def shutdown(self) -> None:
        self.pool.cancel_all()

    # ------------------------------------------------------------------ release
    def request(self) -> RequestT | None:
        """The checked request, or None with what to fix said on the page."""
        if self.release_worker is not None:
            return None
        source = self.host.workspace.state.source
        dataset = self.dataset_name.text().strip()
        problem = ("Open the data first (File → Open)." if source is None else
                   "Give the dataset a name in the budget ledger (top right)." if not dataset else "")
        if source is not None and not problem:
            try:
                request = self.request_of(source.source_spec, dataset)
            except DpguiError as err:
                request = text.friendly(err)
            if not isinstance(request, str):
                return request
            problem = request
        self.release_status.setText(escape(problem))
        self.host.statusBar().showMessage(problem, 8000)
        return None

    def release(self) -> None:
        """Check, confirm, release on a worker (nothing is spent before the confirmation)."""
        request = self.request()
        if request is None or not self.check_budget(request):
            return
        words = self.confirmation(request) + f"<p>{escape(self.person.note.text())}.</p>"  # the privacy unit
        box = QMessageBox(QMessageBox.Icon.Question, "Release and spend the budget?", words, parent=self.window())
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

    def check_budget(self, request: RequestT) -> bool:
        check = self.budget_check(request, tuple(self.host.similar_datasets(request.dataset)))
        if isinstance(check, FirstCapNeeded):
            cap = self.host.ask_cap(check.dataset, check.epsilon, check.delta)
            if cap is None:
                self.host.statusBar().showMessage("Release cancelled: no budget was set. Nothing was spent.", 8000)
                return False
            check = self.set_first_cap(request, cap, check.delta)
        if isinstance(check, Problem):
            self.host.show_error(check.title, check.message)
            return False
        return isinstance(check, BudgetOk)

    def start_release(self, request: RequestT) -> None:
        release_id = new_release_id()
        worker = Worker(self.release_task(), request, self.host.noise_source, release_id=release_id,
                        password_prompt=self.host.passwords.prompt_for(request.spec))
        self.release_worker = worker
        dialog, on_progress = release_progress_dialog(self.window(), worker, self.noise_message)

        def finish() -> None:
            self.release_worker = None
            dialog.close()
            self.release_button.setEnabled(True)

        def on_finished(outcome: OutcomeT) -> None:
            finish()
            self.releases += (self.record_of(outcome),)  # public values
            self.show_outcome(outcome, restored=False)
            self.releasesChanged.emit()
            self.host.project.autosave_now()  # a release is never left out of the autosave
            self.host.statusBar().showMessage(self.released_message(request), 8000)

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

    def set_releases(self, releases: tuple[RecordT, ...]) -> None:
        """The workspace's releases of the mode (other data was opened: its own ones), none shown."""
        self.releases = releases
        self.show_outcome(None, restored=False)
        self.releasesChanged.emit()

    def show_outcome(self, outcome: OutcomeT | None, restored: bool) -> None:
        """Show ``outcome`` (None: none) in the results table and the banner, and enable the exports."""
        self.outcome, self._restored = outcome, restored
        for widget in (self.export_button, self.host.export_bundle_action, self.host.export_action):
            widget.setEnabled(outcome is not None)
        self.results.setRowCount(0)
        if outcome is None:
            self.release_status.setText(self.host.session.nothing_shown_words())
            return
        words = self.show_results(outcome, restored)
        self.release_status.setText(f"{words} {self.host.session.banner_words(outcome.info.release_id)}")

    # ------------------------------------------------------------------ exports
    def export_dialog(self) -> BundleExportDialog | None:
        if self.outcome is None:
            self.host.show_error("Nothing to export", "Release first, then export.")
            return None
        dialog = self.export_dialog_of(self.outcome, str(export_folder(self.outcome.info.dataset)))
        dialog.input_folders = self.host.protected_paths(self.outcome.release_id)
        return dialog

    def export_bundle(self) -> None:
        dialog = self.export_dialog()
        if dialog is not None and dialog.exec() == QDialog.DialogCode.Accepted:
            self.host.after_bundle_export(dialog)

    def export_csv(self) -> None:
        """The released values in a CSV file, unsigned (:meth:`csv_text`)."""
        if self.outcome is None:
            self.host.show_error("Nothing to export", "Release first, then export.")
            return
        name, title = self.csv_file(self.outcome)
        default = str(csv_export_default(self.outcome.info.dataset, name))
        path, _ = QFileDialog.getSaveFileName(self, title, default, "CSV files (*.csv)")
        if path:
            self.export_csv_to(path)

    def export_csv_to(self, path: str) -> bool:
        assert self.outcome is not None
        info = self.outcome.info
        try:
            check_writable(path, protect=[Path(p) for p in self.host.protected_paths(info.release_id)])
            write_text_atomic(path, self.csv_text(self.outcome))
        except (DpguiError, OSError) as err:
            self.host.show_error("Export failed", text.friendly(err) + " The file was not written.")
            return False
        self.host.csv_exported(info.release_id, info.dataset, Path(path))
        return True

    # ------------------------------------------------------------------ project files
    def restore_releases(self, releases: tuple[RecordT, ...]) -> None:
        """The end of :meth:`restore`: a project's releases, the last one shown as restored (not marked secure)."""
        self.releases = releases
        last = releases[-1] if releases else None
        self.show_outcome(None if last is None else self.outcome_of(last), restored=True)
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
        self.set_releases(tuple(e.record for e in entries if isinstance(e.record, self.record_type)))

    def releases_on_screen(self) -> set[str]:
        return {r.release_id for r in self.releases} | ({self.outcome.release_id} if self.outcome is not None else set())

    def show_again(self, entry: SessionRelease) -> object:
        """Shown as made here only when the session holds what this session's release showed."""
        made = entry.shown if isinstance(entry.shown, self.outcome_type) and entry.made_here else None
        outcome = made or self.outcome_of(cast(RecordT, entry.record))
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
        """The project's choices and releases of the mode, the open data's columns taken first."""
        part = project.section(self.kind)
        self.data_opened()  # the open data's columns, for the mode's choices
        self.restore(part.settings, part.releases)
        return [part.problem] if part.problem else []
