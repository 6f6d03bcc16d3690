"""The main window: the start page, then "What to release" over the chosen statistic's steps (its mode,
:class:`~dpgui.app.mode.StatisticMode`, from the one table :data:`~dpgui.app.shell.mode_table.MODES`), with the menus, shortcuts,
recent files, drag-and-drop, the status bar and remembered geometry. Opening data, the questions both
statistics share (the first budget of a dataset, what follows an export) and the project and session
controllers live here; each mode reaches the window through its port (:class:`~dpgui.app.mode.ModeHost`), and so
does the project controller (:class:`~dpgui.app.shell.project.ProjectWindow`).
The actions, menus and toolbar are built in :mod:`dpgui.app.shell.menus`."""

from __future__ import annotations

import contextlib
import gc
import platform
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import cast

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QApplication, QDialog, QFileDialog, QHBoxLayout, QLabel, QMainWindow, QMenu, QMessageBox, QProgressBar, QPushButton,
    QRadioButton, QStackedWidget, QTabWidget, QVBoxLayout, QWidget,
)

from dpgui import __version__
from dpgui.app import text
from dpgui.app.binding import WorkspaceBinding
from dpgui.app.cdf.data_page import DataPage
from dpgui.app.cdf.mode import TAB_DATA, CdfMode
from dpgui.app.cdf.plan_page import PlanPage
from dpgui.app.cdf.result_view import ResultView
from dpgui.app.cdf.tree_view import BinTreeView
from dpgui.app.dialogs.database import DatabaseDialog, OpenedSource, SessionPasswords, open_and_look
from dpgui.app.dialogs.dataset import NewDatasetDialog
from dpgui.app.dialogs.export import (
    BundleExportDialog, exported_box, remember_export_folder,
)
from dpgui.app.dialogs.keys import KeyManagerDialog
from dpgui.app.dialogs.ledger import LedgerDialog
from dpgui.app.dialogs.verify import VerifyDialog
from dpgui.app.hierarchy.page import HierarchyMode
from dpgui.app.mode import StatisticMode
from dpgui.app.shell.menus import build_actions
from dpgui.app.shell.mode_table import MODES
from dpgui.app.shell.project import ProjectController, WorkspaceSnapshot
from dpgui.app.shell.session_releases import SessionController
from dpgui.app.shell.start_page import StartPage
from dpgui.app.widgets.style import detach_legend_anchors
from dpgui.app.widgets.preview import PreviewModel
from dpgui.app.widgets.theme import apply_appearance
from dpgui.app.workers import Worker, WorkerPool
from dpgui.core.noise import RandomSource, SecureRandom
from dpgui.data.file_types import FILE_FILTER, USE_A_SUPPORTED_FILE, CsvDialect, is_supported_file_name
from dpgui.data.sample import sample_dataset_path
from dpgui.data.source_spec import SourceSpec
from dpgui.data.table import TableInfo, TableReader, count_rows
from dpgui.errors import DpguiError
from dpgui.report.project_file import Project
from dpgui.vocabulary import ReleaseKind, SourceKind, StatisticKind
from dpgui.workspace.session import ExportKind, same_data
from dpgui.workspace.state import Workspace

MAX_RECENT = 8


def _open_task(path: Path, progress: Callable[[float, str], None], should_cancel: Callable[[], bool],
               dialect: CsvDialect | None = None) -> tuple[TableInfo, TableReader]:
    progress(0.0, f"Opening {path.name}…")
    # a CSV dialect chosen in step 1 (None: the readers detect it)
    reader = TableReader(path, dialect)
    # The preview's first rows are read here, off the GUI thread: the first read also imports pandas,
    # which on the GUI thread would freeze the window (benchmarks/bench_responsiveness.py).
    with contextlib.suppress(DpguiError):  # the preview shows the error itself when it reads these rows
        reader.read_rows(0, PreviewModel.CHUNK)
    return reader.info, reader


# The libraries the window loads only when first needed (so that it starts sooner) are imported in a
# worker this long after the window is built, when it has been drawn.
WARM_UP_DELAY_MS = 500


def _import_libraries(progress: Callable[[float, str], None], should_cancel: Callable[[], bool]) -> None:
    """Import pandas (table preview) and scipy.optimize (planner, consistency) while the window is
    idle. An import holds the GIL for long stretches, so the same imports at the first file or plan,
    even in a worker, would stall the window (benchmarks/bench_responsiveness.py)."""
    import pandas  # noqa: F401
    import scipy.optimize  # noqa: F401


def _freeze_start_up_objects(_: object = None) -> None:
    """Leave the objects made at start-up (modules, classes, functions, the window's widgets: they
    live as long as the app) out of Python's full garbage collections, which otherwise scan them
    all on the GUI thread and stall the window, the longer the more objects there are. Not collected
    first: that would be such a pause itself, and the little garbage start-up leaves is then kept."""
    gc.freeze()


class MainWindow(QMainWindow):
    # the actions, the Open Recent menu and the appearance actions: made by dpgui/app/shell/menus.py
    open_action: QAction
    open_folder_action: QAction
    connect_action: QAction
    sample_action: QAction
    hierarchy_sample_action: QAction
    save_action: QAction
    open_project_action: QAction
    save_project_action: QAction
    save_project_as_action: QAction
    export_bundle_action: QAction
    export_action: QAction
    ledger_action: QAction
    keys_action: QAction
    verify_action: QAction
    release_action: QAction
    quit_action: QAction
    help_action: QAction
    about_action: QAction
    recent_menu: QMenu
    appearance_actions: dict[str, QAction]

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle(text.APP_NAME)
        self.setAcceptDrops(True)
        self.pool = WorkerPool()
        self.settings = QSettings()
        # Noise comes from the OS's secure source; tests may swap in a seeded source (never secure).
        self.noise_source: Callable[[], RandomSource] = SecureRandom
        self.workspace = Workspace()  # what the officer chose and released: the pages write it, all else reads it
        self.workspace_binding = WorkspaceBinding(self.workspace, self)
        self._count_worker: Worker | None = None
        # database passwords typed in this session: in memory only, never in a file
        self.passwords = SessionPasswords(self)
        self.database_dialog: DatabaseDialog | None = None

        self.start_page = StartPage()
        self.start_page.openRequested.connect(self.choose_file)
        self.start_page.sampleRequested.connect(self.open_sample)
        self.start_page.recentRequested.connect(self.open_file)
        self.start_page.hierarchySampleRequested.connect(self.open_hierarchy_sample)
        self.start_page.connectRequested.connect(self.connect_database)
        self._after_open: Callable[[], None] | None = None  # run once the next file is open (the hierarchy sample)
        self.data_page = DataPage(self.workspace_binding)
        self.data_page.connectRequested.connect(self.connect_database)
        self.data_page.dialectChosen.connect(self.reopen_with_dialect)
        self.plan_page = PlanPage(self.workspace_binding)
        self.tree_view = BinTreeView()
        self.result_view = ResultView()
        self.plan_page.busyChanged.connect(self._on_planning)

        self._build_cdf_steps()
        # What to release, chosen once a file is open: one mode (dpgui/app/mode.py) per statistic of the
        # table (dpgui/app/shell/mode_table.py), which the window asks.
        self.statistic_modes: dict[StatisticKind | ReleaseKind, StatisticMode] = {kind: entry.make(self)
                                                                     for kind, entry in MODES.items()}
        self.cdf = cast(CdfMode, self.statistic_modes[StatisticKind.CDF])  # its steps' widgets are the window's
        self.hierarchy = cast(HierarchyMode, self.statistic_modes[StatisticKind.HIERARCHY])
        self._build_work_area()

        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setRange(0, 1000)
        self.progress.hide()
        self.statusBar().addPermanentWidget(self.progress)
        self.session = SessionController(self)  # every release of this session, of any data
        self.project = ProjectController(self)  # project files, autosave, restore after a crash
        build_actions(self)  # the actions, menus and toolbar (dpgui/app/shell/menus.py)
        self._refresh_recent()
        self._restore_geometry()
        self.statusBar().showMessage("Ready. Open a file to begin.")
        self.project.start()  # session marker; offers to restore the last workspace after a crash
        # With `self` as context: the timer is dropped if the window is closed and deleted first.
        QTimer.singleShot(WARM_UP_DELAY_MS, self, lambda: self.pool.start(
            Worker(_import_libraries).connect_to(self, finished=_freeze_start_up_objects)))

    def _build_cdf_steps(self) -> None:
        """The CDF's four steps as tabs: data, privacy and plan, bin tree, release and results."""
        self.results_page = QWidget()
        results_layout = QVBoxLayout(self.results_page)
        bar = QHBoxLayout()
        self.release_button = QPushButton("&Release…")
        self.release_button.setToolTip("Spend the budget and publish the CDF (asks for confirmation first).")
        self.release_button.clicked.connect(self.release)
        self.export_button = QPushButton("&Export Signed Bundle…")
        self.export_button.setToolTip("Write the release as CSV + PDF + manifest, signed with your key, "
                                      "so anyone can check it is exactly what you released")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self.export_bundle)
        self.release_status = QLabel("Nothing released yet. When the plan suits you, press Release.")
        self.release_status.setWordWrap(True)
        bar.addWidget(self.release_button)
        bar.addWidget(self.export_button)
        bar.addWidget(self.release_status, 1)
        results_layout.addLayout(bar)
        results_layout.addWidget(self.result_view, 1)

        self.tabs = QTabWidget()
        self.tabs.addTab(self.data_page, "&1 · Data")
        self.tabs.addTab(self.plan_page, "&2 · Privacy and plan")
        self.tabs.addTab(self.tree_view, "&3 · Bin tree")
        self.tabs.addTab(self.results_page, "&4 · Release and results")
        self.tabs.setDocumentMode(True)

    def _build_work_area(self) -> None:
        """Under the menus: the start page, or "What to release" (one button per statistic) over its steps."""
        mode_bar = QHBoxLayout()
        mode_bar.setContentsMargins(8, 4, 8, 0)
        mode_bar.setSpacing(14)
        mode_bar.addWidget(QLabel("<b>What to release:</b>"))
        self.mode_buttons: dict[StatisticKind | ReleaseKind, QRadioButton] = {}
        self.modes = QStackedWidget()
        for kind, entry in MODES.items():
            button = QRadioButton(entry.label)
            button.setToolTip(entry.tip)
            button.setChecked(not self.mode_buttons)  # the table's first
            button.toggled.connect(lambda on: self.mode_changed() if on else None)
            self.mode_buttons[kind] = button
            mode_bar.addWidget(button)
            self.modes.addWidget(self.statistic_modes[kind].steps())
        mode_bar.addStretch(1)
        work = QWidget()
        work_layout = QVBoxLayout(work)
        work_layout.setContentsMargins(0, 0, 0, 0)
        work_layout.setSpacing(0)
        work_layout.addLayout(mode_bar)
        work_layout.addWidget(self.modes, 1)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.start_page)
        self.stack.addWidget(work)
        self.work = work
        self.setCentralWidget(self.stack)

    # ---------------------------------------------------------------- files
    def choose_file(self) -> None:
        start = str(self.settings.value("last_folder", str(Path.home())))
        path, _ = QFileDialog.getOpenFileName(self, "Open a table", start, FILE_FILTER)
        if path:
            self.open_file(path)

    def choose_folder(self) -> None:
        """File → Open Parquet Folder…: a folder of Parquet files (read as one table, files in name order)."""
        start = str(self.settings.value("last_folder", str(Path.home())))
        path = QFileDialog.getExistingDirectory(self, "Open a folder of Parquet files", start)
        if path:
            self.open_file(path)

    def open_sample(self) -> None:
        try:
            path = sample_dataset_path()
        except DpguiError as err:
            self.show_error("Sample data not found", text.friendly(err))
            return
        self.open_file(str(path), column="distance")

    def open_hierarchy_sample(self) -> None:
        """Open the bundled hierarchical sample in the "Counts over a hierarchy" mode, its levels chosen."""
        from dpgui.data.hierarchy import HIERARCHY_SAMPLE_LEVELS, hierarchy_sample_path

        try:
            path = hierarchy_sample_path()
        except DpguiError as err:
            self.show_error("Sample data not found", text.friendly(err))
            return

        def choose_levels() -> None:
            self.set_mode(True)
            self.hierarchy.categories_public.setChecked(True)  # the sample's categories are public (its README)
            self.hierarchy.set_levels(HIERARCHY_SAMPLE_LEVELS)

        def load() -> None:
            self._after_open = choose_levels
            self.load_file(str(path))

        self._ask_before_other_data(str(path), load)

    def connect_database(self) -> None:
        """File → Connect to a Database…: the dialog; OK opens its table or query as the data."""
        current = self.workspace.state.source
        dialog = DatabaseDialog(self, current.source_spec if current is not None else None)
        self.database_dialog = dialog

        def accepted() -> None:
            if dialog.spec is None:
                return
            if dialog.password:
                self.passwords.set(dialog.spec.location, dialog.password)
            self.open_database(dialog.spec)

        dialog.accepted.connect(accepted)
        dialog.open()

    def open_database(self, spec: SourceSpec) -> None:
        """Open a database (or Spark) source (:meth:`load_database`), after asking to keep a release on
        screen that is neither exported nor saved (:meth:`SessionController.confirm_leave`)."""
        self.session.confirm_leave(lambda: self.load_database(spec), spec.display_name())

    def load_database(self, spec: SourceSpec) -> None:
        """Open a database (or Spark) source on a worker: columns, first rows, row count. A password
        not typed in this session is asked for (a dialog), never read from a file."""
        if self.is_releasing():
            self.show_error("A release is running", "Wait until the release has finished, then connect.")
            return
        self._busy(f"Connecting to {spec.display_name()}…")
        def failed(message: str) -> None:
            self._idle()
            self.project.data_open_failed()
            self.show_error("Cannot read this data", message)

        def cancelled() -> None:
            self._idle()
            self.project.data_open_failed()
            self.statusBar().showMessage(f"Not connected to {spec.display_name()}: no password was given.", 8000)

        worker = Worker(open_and_look, spec, self.passwords.prompt_for(spec)).connect_to(
            self, finished=self._on_source_opened, failed=failed, cancelled=cancelled, progress=self._show_progress)
        self.pool.start(worker)

    def _on_source_opened(self, opened: OpenedSource) -> None:
        self._idle()
        if opened.n_rows == 0:
            self.project.data_open_failed()
            self.show_error("The table has no data", f"{opened.spec.display_name()} has no rows. "
                            "Check the table's name or the query's WHERE clause.")
            return
        previous = self._open_spec()
        if previous is not None and not same_data(previous, opened.spec):
            self.project.keep_left_behind()  # a release it holds, not kept, must survive a crash
        self.data_page.set_opened(opened)
        self.session.source_changed(previous)
        self.stack.setCurrentWidget(self.work)
        self.tabs.setCurrentIndex(TAB_DATA)
        self.mode.data_opened()
        self.statusBar().showMessage(f"Connected to {opened.spec.display_name()}.", 5000)
        self.project.data_opened()
        self._after_open = None

    def reopen_with_dialect(self, dialect: CsvDialect) -> None:
        """Read the open CSV file again with ``dialect`` (step 1's Confirm or "Change…"); columns and preview
        follow, and the column chosen, its bounds, K, the whole-number statement and step 2's region are kept
        when the column is still there (confirming the dialect must not undo what was typed)."""
        source = self.workspace.state.source
        if source is None or not source.is_file:
            return
        chosen, focus = self.workspace.state.column, self.plan_page.focus_choice()

        def keep_choices() -> None:  # the same data read again: step 1 and the region stay as the officer set them
            table = self.table
            if chosen.column and table is not None and chosen.column in (c.name for c in table.columns):
                self.data_page.apply_workspace(chosen.column, chosen.lower, chosen.upper, chosen.bins, None,
                                               chosen.whole_numbers)
                self.plan_page.keep_focus(focus)

        self._after_open = keep_choices
        self.load_file(source.source_spec.location, dialect=dialect)

    def _open_spec(self) -> SourceSpec | None:
        source = self.workspace.state.source
        return None if source is None else source.source_spec

    def _ask_before_other_data(self, path: str, load: Callable[[], None]) -> None:
        """Run ``load`` (which opens the file ``path``) now if that file is open already; else after asking
        to keep a release on screen that is neither exported nor saved."""
        current = self._open_spec()
        if current is not None and same_data(current, SourceSpec(SourceKind.FILE, path)):
            load()
        else:
            self.session.confirm_leave(load, Path(path).name)

    def open_file(self, path: str, column: str | None = None, dialect: CsvDialect | None = None) -> None:
        """Open a table or a project (File → Open, Open Recent, a dropped file, the samples, the command
        line): other data than the open data is opened only after asking to keep a release on screen that
        is neither exported nor saved."""
        target = Path(path)
        if self.is_releasing():
            self.show_error("A release is running", "Wait until the release has finished, then open the file.")
            return
        if not target.is_dir() and self.project.is_project_file(target):  # a .dpgui project (dropped, recent, command line)
            self.project.request_open(target)
            return
        self._ask_before_other_data(path, lambda: self.load_file(path, column, dialect))

    def load_file(self, path: str, column: str | None = None, dialect: CsvDialect | None = None) -> None:
        """Open a table on a worker; the window stays responsive and shows progress."""
        target = Path(path)
        if self.is_releasing():
            self.show_error("A release is running", "Wait until the release has finished, then open the file.")
            return
        if not target.is_dir() and not is_supported_file_name(target.name):  # a folder: of Parquet files
            self.show_error("Cannot open this file",
                        f"'{target.name}' is not a supported table. {USE_A_SUPPORTED_FILE}")
            return
        self._busy(f"Opening {target.name}…")
        worker = Worker(_open_task, target, dialect=dialect).connect_to(
            self, finished=lambda result: self._on_opened(result, column, dialect),
            failed=lambda message: self._on_open_failed(target, message))
        self.pool.start(worker)

    def _on_opened(self, result: tuple[TableInfo, TableReader], column: str | None,
                   dialect: CsvDialect | None = None) -> None:
        info, reader = result
        self._idle()
        if info.n_rows == 0:
            reader.close()
            self.show_error("The file has no data", f"'{info.path.name}' has a header but no data rows. "
                        "Choose a file with at least one row of data.")
            return
        spec = SourceSpec(SourceKind.FILE, str(info.path), dialect=dialect)
        previous = self._open_spec()
        if previous is not None and not same_data(previous, spec):
            self.project.keep_left_behind()  # a release it holds, not kept, must survive a crash
        self.data_page.set_table(info, reader, spec)  # the workspace's source from now on
        self.session.source_changed(previous)
        self._add_recent(str(info.path))
        self.settings.setValue("last_folder", str(info.path.resolve().parent))
        self.stack.setCurrentWidget(self.work)
        self.tabs.setCurrentIndex(TAB_DATA)
        self.mode.data_opened()
        self.statusBar().showMessage(f"Opened {info.path.name}.", 5000)
        if column is not None:
            self.data_page.select_column(column)
        if info.n_rows is None:
            self._count_rows(info.path, info.dialect)
        self.project.data_opened()  # title; applies a project that was waiting for this file
        after, self._after_open = self._after_open, None
        if after is not None:
            after()

    def _on_open_failed(self, path: Path, message: str) -> None:
        self._idle()
        self._after_open = None
        self.project.data_open_failed()
        self.show_error("Cannot open this file", message)

    def _count_rows(self, path: Path, dialect: CsvDialect | None = None) -> None:
        def failed(message: str) -> None:
            self._count_worker = None
            self._idle()
            self.show_error("Cannot read this file", message)

        worker = Worker(count_rows, path, dialect=dialect).connect_to(
            self, finished=lambda n: self._on_counted(path, n), failed=failed,
            cancelled=self._idle, progress=lambda f, m: self._show_progress(f, f"Counting rows of {path.name}…"))
        self._count_worker = worker
        self._busy(f"Counting rows of {path.name}…")
        self.pool.start(worker)

    def _on_counted(self, path: Path, n_rows: int) -> None:
        self._idle()
        self._count_worker = None
        if self.table is None or self.table.path != path:
            return
        if n_rows == 0:
            self.show_error("The file has no data", f"'{path.name}' has a header but no data rows. "
                        "Choose a file with at least one row of data.")
        self.data_page.set_row_count(n_rows)

    # ---------------------------------------------------------------- the statistic's mode
    @property
    def mode(self) -> StatisticMode:
        """The statistic chosen under "What to release" (its steps are shown; the menus act on it)."""
        return next(self.statistic_modes[kind] for kind, button in self.mode_buttons.items() if button.isChecked())

    def in_hierarchy_mode(self) -> bool:
        """Is the hierarchy chosen? (For tests and scripts: the window itself asks the mode, never this.)"""
        return self.mode.kind is StatisticKind.HIERARCHY

    def choose_mode(self, kind: StatisticKind | ReleaseKind) -> None:
        """Show the steps of the statistic ``kind`` (as if its "What to release" button was pressed)."""
        self.mode_buttons[kind].setChecked(True)

    def set_mode(self, hierarchy: bool) -> None:
        """Release a CDF (False) or counts over a hierarchy (True)."""
        self.choose_mode(StatisticKind.HIERARCHY if hierarchy else StatisticKind.CDF)

    def mode_changed(self, *_: object) -> None:
        """Show the chosen mode's steps; the Release and Export actions act on its release."""
        mode = self.mode
        self.modes.setCurrentWidget(mode.steps())
        self.release_action.setStatusTip(mode.release_tip)
        mode.data_opened()
        for widget in (self.export_action, self.export_bundle_action):
            widget.setEnabled(mode.has_release())

    def is_releasing(self) -> bool:
        """Is a release running (of any statistic)?"""
        return any(mode.is_releasing() for mode in self.statistic_modes.values())

    # ---------------------------------------------------------------- the project controller's port (ProjectWindow)
    def snapshot(self, autosave_of: str = "") -> WorkspaceSnapshot:
        """The CDF's workspace as a project (its own fields), the chosen mode and every other mode's part."""
        state = self.workspace.state
        project = state.to_project(autosave_of=autosave_of)
        if project is not None:
            sections = {kind: part for kind, mode in self.statistic_modes.items()
                        if isinstance(kind, StatisticKind) and (part := mode.project_section()) is not None}
            kind = self.mode.kind  # a project file records a plan's mode as the CDF's (it does not hold a plan)
            project = replace(project, mode=kind if isinstance(kind, StatisticKind) else StatisticKind.CDF,
                              sections=sections)
        return WorkspaceSnapshot(project, state.source, state.releases,
                                 sum(mode.release_count() for mode in self.statistic_modes.values()),
                                 self.is_releasing())

    def on_change(self, react: Callable[[], None]) -> None:
        for mode in self.statistic_modes.values():  # each mode's part of the project
            mode.on_project_change(react)
        for button in self.mode_buttons.values():  # the mode itself
            button.toggled.connect(lambda _on: react())

    def open_data(self, spec: SourceSpec) -> None:
        if spec.kind == SourceKind.FILE:
            self.load_file(spec.location, dialect=spec.dialect)
        else:  # a database or Spark: connect (the password is asked for, never read from a file)
            self.load_database(spec)

    def restore(self, project: Project, data_name: str) -> list[str]:
        problems = []
        for mode in self.statistic_modes.values():  # the CDF's steps first, as the buttons stand
            problems += mode.restore_project(project, data_name)
        problems += [project.mode_problem] if project.mode_problem else []
        self.choose_mode(project.mode)
        self.mode_changed()  # the Export actions follow the mode's own release
        return problems

    def tell(self, message: str, milliseconds: int, problem: str = "") -> None:
        if problem:
            self.last_error = f"{problem}: {message}"
        self.statusBar().showMessage(message, milliseconds)

    def show_document(self, title: str, modified: bool) -> None:
        self.setWindowTitle(title)
        self.setWindowModified(modified)

    # ---------------------------------------------------------------- the workspace
    @property
    def table(self) -> TableInfo | None:
        """The open table (the workspace's source)."""
        source = self.workspace.state.source
        return None if source is None else source.table

    def _known_rows(self) -> int | None:
        """The open table's rows (None while counted in the background, or with no table open)."""
        source = self.workspace.state.source
        return None if source is None else source.n_rows

    # ---------------------------------------------------------------- steps
    def _on_planning(self, busy: bool) -> None:
        if busy:
            self.statusBar().showMessage("Planning…")
        elif self.statusBar().currentMessage() == "Planning…":
            self.statusBar().clearMessage()

    # ---------------------------------------------------------------- release
    def ask_cap(self, dataset: str, epsilon: float, delta: float = 0.0) -> float | None:
        """Before the first release of a dataset that has no budget: the officer confirms the dataset
        name (warned if the file looks like a ledgered dataset's) and sets the total budget (with the cap's
        δ, the one set in step 2). None: the officer cancelled, or chose an existing dataset's name instead
        (then set in step 1)."""
        dialog = self.new_dataset_dialog(dataset, epsilon, delta)
        accepted = dialog.exec() == QDialog.DialogCode.Accepted
        if dialog.use_instead is not None:
            self.data_page.set_dataset_name(dialog.use_instead)
            return None
        return dialog.cap if accepted else None

    def new_dataset_dialog(self, dataset: str, epsilon: float, delta: float = 0.0) -> NewDatasetDialog:
        return NewDatasetDialog(dataset, epsilon, self.similar_datasets(dataset), self, delta=delta)

    def similar_datasets(self, dataset: str) -> list[str]:
        """Other ledgered datasets released from a file like the open one, if nothing was released yet
        under ``dataset`` (:meth:`ReleaseController.similar_datasets`)."""
        return list(self.cdf.release_controller().similar_datasets(dataset))

    def protected_paths(self, release_id: str) -> list[str]:
        """What an export of the release ``release_id`` must never write over or into: the open data and
        the data the release was made from (files, Parquet folders, an SQLite database's file)."""
        from dpgui.data.source_spec import local_paths

        current = self._open_spec()
        return (local_paths(current) if current is not None else []) + self.session.input_paths(release_id)

    def after_bundle_export(self, dialog: BundleExportDialog) -> None:
        """After the dialog wrote a bundle (and recorded it in the ledger): the session's list and step 4's
        banner say where it is, the dataset's next export proposes the same folder, and a box says it
        is done, with Open Folder."""
        assert dialog.paths is not None
        folder = dialog.bundle_folder()
        remember_export_folder(dialog.dataset, folder)
        self.session.mark_exported(dialog.release_id, ExportKind.SIGNED_BUNDLE, dialog.paths.manifest)
        self.statusBar().showMessage(f"Exported the signed bundle {dialog.paths.manifest}; the budget ledger points to it.",
                                     10000)
        self.show_exported("Exported the signed bundle",
                           f"The release is exported as a signed bundle in {folder}: {dialog.paths.csv.name}, "
                           f"{dialog.paths.pdf.name}, {dialog.paths.manifest.name} and its signature. The budget "
                           "ledger points to it.", folder)

    def show_exported(self, title: str, message: str, folder: Path) -> None:
        """The box that says an export is done, with Open Folder (non-blocking; kept as ``exported_box``)."""
        box = exported_box(self, title, message, folder)
        self.exported_box = box
        box.open()

    def release(self) -> None:
        """Release → Release…: the chosen statistic's release (checked, confirmed, on a worker)."""
        self.mode.release()

    def export_bundle(self) -> None:
        """File → Export Signed Bundle… of the chosen statistic's shown release."""
        self.mode.export_bundle()

    def export_release(self) -> None:
        """File → Export Release CSV Only… of the chosen statistic's shown release (unsigned)."""
        self.mode.export_csv()

    def save_plan(self) -> None:
        """File → Save Plan…: the CDF's public settings and plan as JSON."""
        self.cdf.save_plan()

    def show_ledger(self) -> None:
        LedgerDialog(self).exec()

    def show_keys(self) -> None:
        KeyManagerDialog(self).exec()

    def show_verify(self) -> None:
        VerifyDialog(self).exec()

    def csv_exported(self, release_id: str, dataset: str, path: Path) -> None:
        """After a release was written to the CSV file ``path`` (unsigned): recorded in the session's list,
        the folder remembered for ``dataset``, and a box with Open Folder."""
        folder = Path(path).absolute().parent
        remember_export_folder(dataset, folder)
        self.session.mark_exported(release_id, ExportKind.CSV, Path(path).absolute())
        self.statusBar().showMessage(f"Exported the release to {path}.", 8000)
        self.show_exported("Exported the CSV file", f"The released numbers are in {path} (not signed: to share "
                           "them, export a signed bundle).", folder)

    # ---------------------------------------------------------------- help, about, appearance
    def show_help(self) -> None:
        QMessageBox.information(self, "How to use dpgui", (
            "<p><b>1 · Data.</b> Open a table (File → Open or drop it on the window). Pick a number column. "
            "Enter its lower and upper bounds from public knowledge and the number of bins. Missing values "
            "follow the privacy model of step 2: a noised “missing” count with N = all rows (change one record), "
            "or left out (add or remove one record).</p>"
            "<p><b>2 · Privacy and plan.</b> Set ε (or a preset), and δ if you accept a tiny probability that "
            "the guarantee fails (it allows Gaussian noise). The app chooses the noise, the tree and the budget of "
            "each level; the plots show the error you will get — nothing is spent yet. Or state the error "
            "you accept and let the app find the smallest ε.</p>"
            "<p><b>3 · Bin tree.</b> See how the budget is spread over the tree of counts.</p>"
            "<p><b>4 · Release.</b> Confirm, release, read the CDF, quantiles and counts with their 95 % "
            "intervals, and export the CSV.</p>"
            "<p><b>Counts over a hierarchy.</b> Choose “Counts over a hierarchy of categories” above the steps: "
            "pick 2 to 4 nested columns (e.g. region → district → school), optionally a public prior file; set ε "
            "and how the budget is shared between the levels (the table shows each level's projected error, "
            "and you can type a level's budget); see the tree; release every category's count, each a whole "
            "number ≥ 0 that adds up to its parent, with a 95 % interval; search the result and export the "
            "signed bundle.</p>"))

    def show_about(self) -> None:
        import numpy
        import pyqtgraph
        import PySide6
        from PySide6.QtCore import qVersion

        QMessageBox.about(self, "About dpgui", (
            f"<h3>dpgui {__version__}</h3><p>{text.TAGLINE}</p>"
            f"<p>Python {platform.python_version()} · Qt {qVersion()} · PySide6 {PySide6.__version__} · "
            f"numpy {numpy.__version__} · pyqtgraph {pyqtgraph.__version__}</p>"
            "<p>Differential privacy with exact discrete Laplace or discrete Gaussian noise on a tree of counts "
            "(Rameshwar, Tandon, Sharma; Smith, Ullman; Ko et al.). MIT licence.</p>"))

    def set_appearance(self, key: str) -> None:
        self.settings.setValue("appearance", key)
        for name, act in self.appearance_actions.items():
            act.setChecked(name == key)
        apply_appearance(key)
        self.statusBar().showMessage("Appearance changed. Plots follow the new colours when they next redraw.", 5000)

    # ---------------------------------------------------------------- recent files, geometry
    def recent_files(self) -> list[str]:
        """Absolute paths, newest first (a relative path stored by an older dpgui is left out: it
        named a file relative to wherever the app was started then)."""
        value = self.settings.value("recent_files", [])
        # QSettings gives a list, a single string (a list of one, in an INI file), or None (empty)
        values: list[object] = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
        return [str(v) for v in values if Path(str(v)).is_absolute()]

    def _add_recent(self, path: str) -> None:
        path = str(Path(path).resolve())  # opened relative to the start folder: valid from anywhere
        files = [path] + [p for p in self.recent_files() if p != path]
        self.settings.setValue("recent_files", files[:MAX_RECENT])
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        files = self.recent_files()
        self.recent_menu.clear()
        for number, path in enumerate(files, 1):
            folder = " (folder)" if Path(path).is_dir() else ""  # a folder of Parquet files
            act = QAction(f"&{number} {Path(path).name}{folder}", self)
            act.setStatusTip(path)
            act.triggered.connect(lambda _=False, p=path: self.open_file(p))
            self.recent_menu.addAction(act)
        self.recent_menu.setEnabled(bool(files))
        self.start_page.set_recent(files)

    def _restore_geometry(self) -> None:
        geometry = self.settings.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 820)
        state = self.settings.value("window_state")
        if state is not None:
            self.restoreState(state)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.project.close_approved(event):  # asks Save / Discard / Cancel, then closes again
            return
        if self.is_releasing():
            answer = QMessageBox.question(self, "A release is running",
                                          "A release is running. Quit anyway? If the noise has not been drawn yet, "
                                          "nothing is spent.")
            if answer != QMessageBox.StandardButton.Yes:
                event.ignore()
                return
        self.pool.cancel_all()
        for mode in self.statistic_modes.values():
            mode.shutdown()
        self.pool.wait(10000)
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("window_state", self.saveState())
        self.project.session_ended()  # clean exit: no restore offer next time
        detach_legend_anchors(self)  # the plots are torn down next (see detach_legend_anchors)
        event.accept()

    # ---------------------------------------------------------------- drag and drop
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            self.open_file(urls[0].toLocalFile())
            event.acceptProposedAction()

    # ---------------------------------------------------------------- status helpers
    def _busy(self, message: str) -> None:
        self.statusBar().showMessage(message)
        self.progress.setValue(0)
        self.progress.show()
        QApplication.setOverrideCursor(Qt.CursorShape.BusyCursor)

    def _show_progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(1000 * fraction))
        self.statusBar().showMessage(message)

    def _idle(self) -> None:
        self.progress.hide()
        self.statusBar().clearMessage()
        while QApplication.overrideCursor() is not None:
            QApplication.restoreOverrideCursor()

    def show_error(self, title: str, message: str) -> None:
        """A dialog that says what is wrong and what to do; recorded for tests as `last_error`."""
        self.last_error = f"{title}: {message}"
        self.statusBar().showMessage(message, 10000)
        box = QMessageBox(QMessageBox.Icon.Warning, title, message, QMessageBox.StandardButton.Ok, self)
        text.plain_text(box)  # the message quotes file and column names: shown literally
        self._error_box = box
        box.open()  # window-modal but not blocking: workers and tests keep running
