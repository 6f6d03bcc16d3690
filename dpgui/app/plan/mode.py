"""The window's "release plan" mode (:class:`~dpgui.app.mode.StatisticMode`): several statistics of one table
under one budget, on one page — the plan's ε and δ, its protection; the list of statistics (add one of four
kinds, remove, move up or down) with the selected one's editor (its columns, bounds and bins, public groups or
categories, level columns, its weight and an optional fixed budget); Save Plan… and Open Plan… (the plan file's
TOML, :class:`~dpgui.workspace.plan_spec.PlanSpec`); Split, which makes the plan's items and shares the budget for
the least weighted 95 % margin on a worker thread and charts each statistic's share and margin beside the equal
split's; one Release, confirmed once with every statistic's share and margin, through ONE budget ledger entry
(:mod:`dpgui.app.plan.release`); the results, a line per statistic and a grouped CDF's curves; and the export of
one signed bundle (:mod:`dpgui.app.plan.export_dialog`).

A problem is named next to its field and keeps Release disabled with the reason beside it. Nothing is read from
the data before the release but its column names (the open table's) and, for counts over a hierarchy, its
categories on the split's worker (declared public, as the plan file's ``nodes = "data"``). The plan's releases
are kept in the budget ledger; a project file does not hold them, and they are not in the session's list. GUI
thread only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox, QDialog, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QMessageBox,
    QPushButton, QScrollArea, QSpinBox, QVBoxLayout, QWidget,
)

from dpgui.app import text
from dpgui.app.dialogs.export import export_folder
from dpgui.app.plan.charts import SplitChart
from dpgui.app.plan.export_dialog import PlanExportDialog
from dpgui.app.plan.parts import PlanPrivacy, editable, noise_problem, part_problems, plan_spec_of, spec_privacy
from dpgui.app.plan.release import (
    NOISE_MESSAGE, PlanRequest, charge_words, check_plan, confirmation_words, run_plan_release, set_plan_first_cap,
)
from dpgui.app.plan.results import PlanResults
from dpgui.app.plan.statistics_list import StatisticsList
from dpgui.app.simple_mode import OnePageWindow
from dpgui.app.widgets.fields import ValidatedField, offer_neighbours, parse_delta, parse_epsilon
from dpgui.app.widgets.person_column import PersonColumnRow
from dpgui.app.widgets.release_bar import ReleaseBar
from dpgui.app.workers import Worker, WorkerPool, release_progress_dialog
from dpgui.data.source import PasswordPrompt, open_source
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import DataError, DpguiError
from dpgui.report.files import check_writable, write_text_atomic
from dpgui.report.project_file import Project
from dpgui.report.project_sections import ProjectSection
from dpgui.vocabulary import Neighbours, ReleaseKind, StatisticKind
from dpgui.workspace.plan_spec import PartSpec, PlanSpec, plan_items
from dpgui.workspace.plan_split import PlanSplit, split_plan
from dpgui.workspace.release import BudgetOk, FirstCapNeeded, Problem, failure_budget_sentence, new_release_id
from dpgui.workspace.release_plan import PlanItem, ReleasedPlan
from dpgui.workspace.session import SessionRelease
from dpgui.workspace.words import NEIGHBOURS_LABELS, escape

__all__ = ["PlanMode"]

#: what Split reads and spends, in words
SPLIT_READS = "nothing is spent; the data is read only for the categories of counts over a hierarchy"
CSV_IN_BUNDLE = ("A plan's released values are written with its signed bundle: one CSV per statistic, a summary CSV, "
                 "the PDF and the manifest (File → Export Signed Bundle…).")


class PlanMode(QWidget):
    """Several statistics of one table under one budget, as one page of the window (module doc)."""

    kind = ReleaseKind.PLAN
    release_tip = "Spend one budget and publish every statistic of the plan"
    #: the plan's release or the shown one changed
    releasesChanged = Signal()

    def __init__(self, host: OnePageWindow) -> None:
        super().__init__(host.window())
        self.host = host
        self.pool = WorkerPool()
        self.split_worker: Worker | None = None
        self.release_worker: Worker | None = None
        self.split: PlanSplit | None = None  # the split shown, made for ``split_items`` at ``split_key``
        self.split_items: tuple[PlanItem, ...] = ()
        self.split_key = ""
        self.outcome: ReleasedPlan | None = None
        self.released_request: PlanRequest | None = None  # the request of the plan shown
        self.released: list[str] = []  # the ledger ids of the plans released here
        self._build_page()
        self.refresh()

    # ------------------------------------------------------------------ the page
    def _build_page(self) -> None:
        self.file_label = text.plain_text(QLabel("No file open."))
        self.dataset_name = QLineEdit()
        self.dataset_name.setToolTip(text.DATASET_HELP + " " + text.DATASET_TOOLTIP)
        self.dataset_name.setPlaceholderText("e.g. people-2024")
        self.dataset_name.textChanged.connect(self._dataset_changed)
        top = QHBoxLayout()
        top.addWidget(self.file_label)
        top.addStretch(1)
        dataset_label = QLabel("&Dataset name in the budget ledger:")
        dataset_label.setBuddy(self.dataset_name)
        top.addWidget(dataset_label)
        top.addWidget(self.dataset_name)
        intro = QLabel("<b>A release plan</b>: publish several statistics of this table under <b>one budget</b>, "
                       "decided, confirmed and recorded once. List the statistics, give the more important ones a "
                       "larger weight, press <b>Split</b> to see how the budget is shared for the least error, then "
                       "<b>Release</b>. The lists of groups and categories are public lists you type, never read "
                       "from your data (counts over a hierarchy are the exception: their categories are read from "
                       "the data and published).")
        intro.setWordWrap(True)
        column = QWidget()
        column.setMaximumWidth(1100)
        inner = QVBoxLayout(column)
        inner.addWidget(intro)
        inner.addWidget(self._build_budget_box())
        self.statistics = StatisticsList(self.columns, lambda: self.host.protected_paths(""))
        self.statistics.changed.connect(self.refresh)
        self.statistics.open_plan_button.clicked.connect(self.open_plan)
        self.statistics.save_plan_button.clicked.connect(self.save_plan)
        inner.addWidget(self.statistics)
        inner.addWidget(self._build_split_box())
        bar = ReleaseBar(f"{self.release_tip} (asks for confirmation first).", self.release, self.export_bundle,
                         "Nothing released yet.")
        self.release_button, self.export_button, self.release_status = bar.release_button, bar.export_button, bar.status
        self.export_button.setToolTip("Write the plan as one signed bundle: one CSV per statistic, a summary CSV, one "
                                      "PDF and one manifest, signed with your key. Spends nothing.")
        inner.addLayout(bar)
        self.blocker = text.plain_text(QLabel(""))
        self.blocker.setWordWrap(True)
        self.blocker.setToolTip("Why Release is not possible yet.")
        inner.addWidget(self.blocker)
        self.results = PlanResults()
        inner.addWidget(self.results, 1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(column)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(scroll, 1)

    def _build_budget_box(self) -> QGroupBox:
        box = QGroupBox("The plan's budget")
        form = QFormLayout(box)
        self.epsilon = ValidatedField(parse_epsilon, "e.g. 1", "The privacy budget ε of the whole plan, shared among "
                                      "its statistics: smaller is more private and noisier.")
        self.epsilon.set_text("1")
        form.addRow("Privacy budget &ε (whole plan):", self.epsilon)
        self.delta = ValidatedField(parse_delta, "0", "δ: 0 for pure ε-DP (Laplace noise); a small probability such "
                                    "as 1e-9 gives the number statistics Gaussian noise.")
        self.delta.set_text("0")
        form.addRow("&δ:", self.delta)
        self.neighbours = QComboBox()
        for token in Neighbours:
            self.neighbours.addItem(NEIGHBOURS_LABELS[token], str(token))
        self.neighbours.setToolTip("What every statistic of the plan protects against.")
        form.addRow("&Protect against:", self.neighbours)
        self.neighbours_note = text.plain_text(QLabel(""))  # a query's row count decides the protection offered
        self.neighbours_note.setWordWrap(True)
        self.neighbours_note.hide()
        form.addRow("", self.neighbours_note)
        self.records = QSpinBox()
        self.records.setRange(1, 1000)
        self.records.setToolTip(text.RECORDS_PER_PERSON_TOOLTIP)
        form.addRow("Records per perso&n:", self.records)
        self.person = PersonColumnRow(form, self.neighbours, self.records, self.refresh)
        for field in (self.epsilon, self.delta):
            field.edited.connect(self.refresh)
        self.neighbours.currentIndexChanged.connect(self.refresh)
        self.records.valueChanged.connect(self.refresh)
        return box

    def _build_split_box(self) -> QGroupBox:
        box = QGroupBox("How the budget is shared")
        self.split_button = QPushButton("&Split")
        self.split_button.clicked.connect(self.start_split)
        self.chart = SplitChart()
        row = QHBoxLayout()
        row.addWidget(self.split_button)
        row.addStretch(1)
        layout = QVBoxLayout(box)
        layout.addLayout(row)
        layout.addWidget(self.chart, 1)
        return box

    def columns(self) -> list[str]:
        """The open data's column names (none: no data open)."""
        source = self.host.workspace.state.source
        return [] if source is None else [c.name for c in source.table.columns]

    @property
    def choices(self) -> list[PartSpec]:
        """The plan's statistics, as listed."""
        return self.statistics.choices

    # ------------------------------------------------------------------ plan files
    def save_plan(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save the release plan", f"{self.dataset_name.text().strip()}"
                                              "-plan.toml", "Release plans (*.toml)")
        if path:
            self.save_plan_to(path)

    def save_plan_to(self, path: str | Path) -> bool:
        """Write the plan as a TOML file that :meth:`PlanSpec.read` reads back (a plan with a problem is not
        written: the problem is said)."""
        privacy, source = self.privacy(), self.host.workspace.state.source
        problem = ("Open the data first (File → Open)." if source is None else
                   "Give the dataset a name in the budget ledger (top right)." if not self.dataset_name.text().strip()
                   else self.split_problem())
        if problem or privacy is None or source is None:
            self.host.show_error("The plan was not saved", problem)
            return False
        spec = plan_spec_of(self.choices, privacy, self.dataset_name.text().strip(), source.source_spec.location)
        try:
            toml = spec.to_toml()
            PlanSpec.from_toml(toml)  # what is written reads back
            check_writable(path, protect=[Path(p) for p in self.host.protected_paths("")])
            write_text_atomic(path, toml)
        except (DpguiError, OSError) as err:
            message = text.friendly(err) if isinstance(err, DpguiError) else str(err)
            self.host.show_error("The plan was not saved", message)
            return False
        self.host.statusBar().showMessage(f"Saved the release plan to {Path(path).name}.", 8000)
        return True

    def open_plan(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a release plan", "", "Release plans (*.toml);;All files (*)")
        if path:
            self.open_plan_from(path)

    def open_plan_from(self, path: str | Path) -> bool:
        """Put the plan file's budget, protection, dataset and statistics on the page (nothing is split, read or
        spent); its statistics are released from the open data, whatever source the file names."""
        try:
            spec = PlanSpec.read(path)
        except DpguiError as err:
            self.host.show_error("The plan was not opened", text.friendly(err))
            return False
        if spec.person_column is not None and spec.person_column not in self.columns():
            self.host.show_error("The plan was not opened", f"It keeps at most {spec.records_per_person:,} rows of each "
                                 f"person of the column '{spec.person_column}', which the open data does not have: "
                                 "open the data that has it first.")
            return False
        privacy = spec_privacy(spec)
        self.epsilon.set_text(f"{privacy.epsilon:g}")
        self.delta.set_text(f"{privacy.delta:g}")
        self.neighbours.setCurrentIndex(max(0, self.neighbours.findData(str(privacy.neighbours))))
        self.records.setValue(privacy.records_per_person)
        self.person.choose(privacy.person_column)
        self.dataset_name.setText(spec.dataset)
        self.statistics.set_parts([editable(part) for part in spec.parts])
        source = self.host.workspace.state.source
        if source is None or Path(source.source_spec.location).resolve() != Path(spec.source).resolve():
            self.host.statusBar().showMessage(f"Opened the plan {Path(path).name}: it names other data "
                                              f"({Path(spec.source).name}); it is released from the open data.", 10000)
        else:
            self.host.statusBar().showMessage(f"Opened the plan {Path(path).name}.", 8000)
        return True

    # ------------------------------------------------------------------ checks
    def privacy(self) -> PlanPrivacy | None:
        epsilon, delta = self.epsilon.value(), self.delta.value()
        if epsilon is None or delta is None:
            return None
        return PlanPrivacy(epsilon, delta, Neighbours(self.neighbours.currentData()), self.records.value(),
                           self.person.column())

    def _key(self, privacy: PlanPrivacy | None) -> str:
        """What a split depends on: the statistics' settings, the plan's budget and protection, and the open data
        (a hierarchy's categories are read from it; another table is another plan)."""
        source = self.host.workspace.state.source
        return repr((privacy, None if source is None else source.source_spec,
                     [(c.kind, sorted(c.settings.items(), key=lambda kv: kv[0])) for c in self.choices]))

    def split_problem(self) -> str:
        """Why Split is not possible now ("" if it is), in words."""
        privacy = self.privacy()
        if privacy is None:
            return "Give the plan's ε and δ (see the messages under them)."
        if not self.choices:
            return "Add at least one statistic (Add ▾)."
        for i, choice in enumerate(self.choices, start=1):
            problems = part_problems(choice)
            if problems:
                return f"Statistic {i}: {next(iter(problems.values()))}"
        return noise_problem(self.choices, privacy)

    def release_problem(self) -> str:
        """Why Release is not possible now ("" if it is), in words."""
        if self.host.workspace.state.source is None:
            return "Open the data first (File → Open)."
        if not self.dataset_name.text().strip():
            return "Give the dataset a name in the budget ledger (top right)."
        problem = self.split_problem()
        if problem:
            return problem
        if self.split_worker is not None:
            return "The budget is being split…"
        if self.split is None or self.split_key != self._key(self.privacy()):
            return "Press Split to see each statistic's share of the budget before releasing."
        return ""

    def refresh(self, *_: object) -> None:
        """The list, the split (dropped once the settings differ from its own) and what Split and Release may do."""
        if self.split is not None and self.split_key != self._key(self.privacy()):
            self.split = None
            self.chart.show_split(None, "The settings changed: press Split again.")
        self.statistics.fill(self.split.parts if self.split is not None else ())
        split_problem = self.split_problem()
        self.split_button.setEnabled(not split_problem and self.split_worker is None)
        self.split_button.setToolTip(split_problem or "Share the plan's budget among its statistics for the least "
                                     f"weighted error ({SPLIT_READS}).")
        problem = self.release_problem()
        self.release_button.setEnabled(not problem and self.release_worker is None)
        self.blocker.setText(f"Release is not possible yet: {problem}" if problem else "")
        self.blocker.setVisible(bool(problem))

    def show_outcome(self, outcome: ReleasedPlan | None) -> None:
        """The released plan (None: none) in the results and the banner; the exports enabled for it."""
        self.outcome = outcome
        for widget in (self.export_button, self.host.export_bundle_action, self.host.export_action):
            widget.setEnabled(outcome is not None)
        self.results.show_plan(outcome)
        if outcome is None:
            self.release_status.setText("Nothing released yet.")
            return
        noise = "secure noise" if outcome.secure else "TEST NOISE (seeded, not secure — do not publish)"
        self.release_status.setText(
            f"Released {len(outcome.parts)} statistics from dataset '{escape(outcome.dataset)}': "
            f"{charge_words(outcome.split.charge)} spent once for the whole plan (budget ledger release "
            f"{outcome.plan_id}), {noise}.")

    def _dataset_changed(self, name: str) -> None:
        self.host.workspace.update(dataset=name)
        self.refresh()

    # ------------------------------------------------------------------ the split, on a worker
    def start_split(self) -> None:
        """Make the plan's items and split its budget on a worker thread (planning only: nothing spent; the data
        is opened only for a hierarchy, whose node list it reads)."""
        privacy = self.privacy()
        source = self.host.workspace.state.source
        if privacy is None or self.split_problem() or self.split_worker is not None:
            return
        key = self._key(privacy)
        spec = plan_spec_of(self.choices, privacy, self.dataset_name.text().strip(),
                            "" if source is None else source.source_spec.location)
        data_spec = None if source is None else source.source_spec
        worker = Worker(_split_task, spec, data_spec,
                        None if data_spec is None else self.host.passwords.prompt_for(data_spec))
        self.split_worker = worker

        def finished(done: tuple[tuple[PlanItem, ...], PlanSplit]) -> None:
            self.split_worker = None
            items, split = done
            if key == self._key(self.privacy()):
                self.split, self.split_items, self.split_key = split, items, key
                self.chart.show_split(split)
            self.refresh()

        def failed(message: str) -> None:
            self.split_worker = None
            self.chart.show_split(None, f"The budget could not be split: {message}")
            self.refresh()

        def cancelled() -> None:
            self.split_worker = None
            self.refresh()

        worker.connect_to(self, finished=finished, failed=failed, cancelled=cancelled,
                          progress=lambda _f, words: self.chart.sentence.setText(f"Splitting the budget: {words}…"))
        self.refresh()
        self.pool.start(worker)

    # ------------------------------------------------------------------ release
    def plan_request(self) -> PlanRequest | None:
        """The checked plan, or None with the reason on the page."""
        problem = self.release_problem() or ("A release is running." if self.release_worker is not None else "")
        source, privacy, split = self.host.workspace.state.source, self.privacy(), self.split
        if problem or source is None or privacy is None or split is None:
            self.host.statusBar().showMessage(problem, 8000)
            return None
        plan = plan_spec_of(self.choices, privacy, self.dataset_name.text().strip(), source.source_spec.location)
        return PlanRequest(source.source_spec, plan.dataset, self.split_items, split, plan)

    def release(self) -> None:
        """Check, confirm once for every statistic, release on a worker (nothing is spent before the confirmation)."""
        request = self.plan_request()
        if request is None or not self._check_budget(request):
            return
        box = QMessageBox(QMessageBox.Icon.Question, "Release the plan and spend the budget?",
                          confirmation_words(request), parent=self.window())
        box.setTextFormat(Qt.TextFormat.RichText)
        release_button = box.addButton("Release", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        self._confirm_box = box
        box.exec()
        if box.clickedButton() is not release_button:
            self.host.statusBar().showMessage("Release cancelled. Nothing was spent.", 5000)
            return
        self._start_release(request)

    def _check_budget(self, request: PlanRequest) -> bool:
        check = check_plan(request, tuple(self.host.similar_datasets(request.dataset)))
        if isinstance(check, FirstCapNeeded):
            cap = self.host.ask_cap(check.dataset, check.epsilon, check.delta)
            if cap is None:
                self.host.statusBar().showMessage("Release cancelled: no budget was set. Nothing was spent.", 8000)
                return False
            check = set_plan_first_cap(request, cap, check.delta)
        if isinstance(check, Problem):
            self.host.show_error(check.title, check.message)
            return False
        return isinstance(check, BudgetOk)

    def _start_release(self, request: PlanRequest) -> None:
        plan_id = new_release_id()
        worker = Worker(run_plan_release, request, self.host.noise_source, release_id=plan_id,
                        password_prompt=self.host.passwords.prompt_for(request.spec))
        self.release_worker = worker
        dialog, on_progress = release_progress_dialog(self.window(), worker, NOISE_MESSAGE)

        def finish() -> None:
            self.release_worker = None
            dialog.close()
            self.refresh()

        def on_finished(outcome: ReleasedPlan) -> None:
            finish()
            self.released.append(outcome.plan_id)
            self.released_request = request
            self.show_outcome(outcome)
            self.releasesChanged.emit()
            self.host.statusBar().showMessage(f"Released the plan's {len(outcome.parts)} statistics.", 8000)

        def on_failed(message: str) -> None:
            finish()
            self.host.show_error("The release did not happen", message + failure_budget_sentence(plan_id))

        def on_cancelled() -> None:
            finish()
            self.host.statusBar().showMessage("Release cancelled before any noise was drawn. Nothing was spent.", 8000)

        worker.connect_to(self, progress=on_progress, finished=on_finished, failed=on_failed, cancelled=on_cancelled)
        self.release_button.setEnabled(False)
        dialog.show()
        self.pool.start(worker)

    # ------------------------------------------------------------------ the mode
    def steps(self) -> QWidget:
        return self

    def has_release(self) -> bool:
        return self.outcome is not None

    def is_releasing(self) -> bool:
        return self.release_worker is not None

    def data_opened(self) -> None:
        """Take the open data: its columns (for the editor), the dataset's name, the protection a query allows."""
        state = self.host.workspace.state
        source = state.source
        self.file_label.setText("No file open." if source is None else f"Data: {source.source_spec.display_name()}")
        if self.dataset_name.text() != state.dataset:
            self.dataset_name.blockSignals(True)
            self.dataset_name.setText(state.dataset)
            self.dataset_name.blockSignals(False)
        public = source is None or source.source_spec.row_count_may_be_public
        self.person.set_columns(self.columns())
        switched = offer_neighbours(self.neighbours, public)
        self.neighbours_note.setText("" if public else text.query_rows_private_note(switched))
        self.neighbours_note.setVisible(not public)
        self.statistics.columns_changed()
        self.refresh()

    def export_dialog(self) -> PlanExportDialog | None:
        """The Export dialog of the shown plan (None: nothing released, said)."""
        if self.outcome is None or self.released_request is None:
            self.host.show_error("Nothing to export", "Release the plan first, then export it.")
            return None
        request, outcome = self.released_request, self.outcome
        dialog = PlanExportDialog(outcome, request.plan, request.privacy_unit, str(export_folder(outcome.dataset)),
                                  self.window())
        dialog.input_folders = self.host.protected_paths(outcome.plan_id)
        return dialog

    def export_bundle(self) -> None:
        dialog = self.export_dialog()
        if dialog is not None and dialog.exec() == QDialog.DialogCode.Accepted:
            self.host.after_bundle_export(dialog)

    def export_csv(self) -> None:
        self.host.show_error("Export the signed bundle", CSV_IN_BUNDLE)

    def shutdown(self) -> None:
        self.pool.cancel_all()

    def watch_releases(self, listener: Callable[[], None]) -> None:
        self.releasesChanged.connect(listener)

    def session_releases(self) -> tuple[SessionRelease, ...]:
        return ()  # a plan's release is in the budget ledger, not in the session's list (module doc)

    def take_releases(self, entries: tuple[SessionRelease, ...], chosen: bool) -> None:
        self.show_outcome(None)

    def releases_on_screen(self) -> set[str]:
        return set() if self.outcome is None else {self.outcome.plan_id}

    def show_again(self, entry: SessionRelease) -> object:
        return self.outcome  # never asked: the session's list holds no plan

    def exports_changed(self, release_id: str) -> None:
        return None

    def project_section(self) -> ProjectSection | None:
        return None  # a project file does not hold a plan (module doc)

    def release_count(self) -> int:
        return len(self.released)

    def on_project_change(self, react: Callable[[], None]) -> None:
        self.releasesChanged.connect(react)

    def restore_project(self, project: Project, data_name: str) -> list[str]:
        self.data_opened()
        return []


def _split_task(spec: PlanSpec, data: SourceSpec | None, password_prompt: PasswordPrompt | None,
                progress: Callable[[float, str], None],
                should_cancel: Callable[[], bool]) -> tuple[tuple[PlanItem, ...], PlanSplit]:
    """The worker's split (its thread): the plan's items (the data opened only for a statistic that reads it to
    plan: a hierarchy's node list, declared public), then :func:`split_plan`. Nothing is spent."""
    if any(part.kind is StatisticKind.HIERARCHY for part in spec.parts):
        if data is None:
            raise DataError("counts over a hierarchy read their categories from the data, which is not open",
                            "open the data first (File → Open)")
        progress(0.0, "reading the hierarchy's categories")
        with open_source(data, password_prompt=password_prompt) as source:
            items = tuple(plan_items(spec, source))
    else:
        items = tuple(plan_items(spec))
    return items, split_plan([item.part for item in items], spec.epsilon, spec.delta, progress, should_cancel)
