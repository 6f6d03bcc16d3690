"""Project files, autosave and restore after a crash, for the main window.

:class:`ProjectController` keeps the workspace of one main window in files. It reads no widget: it asks the
window, through the port :class:`ProjectWindow`, for a :class:`WorkspaceSnapshot` and to restore a project
into its pages (the window asks each statistic's mode for its part, :class:`~dpgui.app.mode.StatisticMode`):

* **capture** — the data file, column, bounds, bins, missing-value policy, plan, and the releases
  made or restored in this workspace, as a :class:`~dpgui.report.project_file.Project` (public
  values only: the confidential histogram of a release is never kept); and the mode, with every other
  statistic's choices and releases (:attr:`Project.sections <dpgui.report.project_file.Project.sections>`:
  released values, never the confidential counts);
* **apply** — open a project: reopen its data file (or ask where it went), choose the column, set
  the bounds, bins and policy, show the saved plan exactly, and show the last release; the same for
  every other mode (a restored release is checked against the budget ledger before it may be
  signed: a project file is not evidence). Applying never releases anything and never spends budget;
* **save** — File → Save Project (Ctrl+S), Save Project As… (Ctrl+Shift+S), Open Project…
  (Ctrl+Shift+O); the title shows the project and ``*`` while there are unsaved changes; closing
  the window (its close button, or File → Quit) with unsaved work asks Save / Discard / Cancel;
* **autosave** — 2 s after the last change, and at once after each release (of any statistic), the workspace is
  written (on a worker thread) to ``<dpgui home>/autosave/workspace.dpgui``;
* **restore** — ``autosave/session.lock`` holds the PID of the running session and is removed on a
  clean exit. At start, a marker whose process is gone means the last session crashed: its
  autosave is set aside (``recovered.dpgui``) and the window offers to restore it.

The questions (restore? save changes? locate the data file?) are window-modal message boxes that
do not block (``open()``, like the window's error dialogs), each made by a function of
:mod:`dpgui.app.shell.project_questions` and
kept on the controller (``restore_box``, ``close_box``, ``locate_box``) so tests can answer them —
or bypass them: :meth:`pending_restore` / :meth:`restore` / :meth:`discard_restore`,
:meth:`open_project`, :meth:`save_to`, :meth:`apply_project`.

Only the window that holds the session marker autosaves, so a second dpgui running at the same
time never overwrites the first one's autosave.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, QSettings, QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from dpgui.app import text
from dpgui.app.shell.left_behind import LeftBehind
from dpgui.app.shell.project_questions import (
    LocatePrompt, RestorePrompt, locate_prompt, restore_prompt, save_changes_prompt,
)
from dpgui.app.shell.session_releases import SessionController
from dpgui.app.workers import Worker, WorkerPool
from dpgui.data.file_types import FILE_FILTER, USE_A_SUPPORTED_FILE, is_supported_file_name
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import DpguiError
from dpgui.report.files import write_text_atomic
from dpgui.report.home import ensure_private_dir, user_home
from dpgui.report.project_file import (
    PROJECT_SUFFIX, MissingDataFile, Project, ProjectRelease, load_project, project_data_file, save_project,
)
from dpgui.vocabulary import SourceKind
from dpgui.workspace.session import same_data
from dpgui.workspace.state import SourceChoice


@dataclass(frozen=True)
class WorkspaceSnapshot:
    """The window's workspace at one moment, as the controller saves it: ``project`` (the CDF's workspace,
    the chosen mode, every other mode's choices and releases: public values only; None while no data is
    open), ``source`` (the open data), ``releases`` (the CDF's, made or restored, oldest first),
    ``release_count`` (of every statistic) and ``releasing`` (a release is running)."""

    project: Project | None
    source: SourceChoice | None
    releases: tuple[ProjectRelease, ...]
    release_count: int
    releasing: bool


class ProjectWindow(Protocol):
    """What the project controller needs of the main window, in three parts (the main window implements it,
    asking each statistic's mode for its part of the project):

    * the workspace — :meth:`snapshot` (what to save), :meth:`on_change` (when to save), :meth:`open_data`
      and :meth:`restore` (open a project's data, then put the project into the pages);
    * the session's releases — :attr:`session` (which releases a project file keeps);
    * the officer — :meth:`window` (the parent of the questions this controller asks), :attr:`settings`
      (the last project folder), :meth:`tell` and :meth:`show_error`, :meth:`show_document` (the title and
      its ``*``), :meth:`close`."""

    settings: QSettings

    @property
    def session(self) -> SessionController: ...

    def snapshot(self, autosave_of: str = "") -> WorkspaceSnapshot:
        """The workspace now; ``autosave_of``: the project file an autosave stands for ("" if untitled)."""
        ...

    def on_change(self, react: Callable[[], None]) -> None:
        """Call ``react`` after each change of what a project file holds (the settings, releases, mode)."""
        ...

    def open_data(self, spec: SourceSpec) -> None:
        """Open a project's data (a file on a worker; a database or Spark asks for its password)."""
        ...

    def restore(self, project: Project, data_name: str) -> list[str]:
        """Put ``project`` into the pages (its data open) and show its mode; the problems to tell the officer.
        Nothing is released and no budget is spent."""
        ...

    def window(self) -> QWidget: ...

    def tell(self, message: str, milliseconds: int, problem: str = "") -> None:
        """A line on the status bar; with ``problem`` (a title) also the window's last error."""
        ...

    def show_error(self, title: str, message: str) -> None: ...

    def show_document(self, title: str, modified: bool) -> None:
        """The window's title (with ``[*]``) and whether the workspace has unsaved changes."""
        ...

    def close(self) -> bool: ...


AUTOSAVE_DELAY_MS = 2000
AUTOSAVE_FOLDER = "autosave"
AUTOSAVE_NAME = "workspace.dpgui"
RECOVERED_NAME = "recovered.dpgui"
MARKER_NAME = "session.lock"
PROJECT_FILTER = f"dpgui projects (*{PROJECT_SUFFIX});;All files (*)"


# --------------------------------------------------------------------------------------------- session marker

def autosave_dir() -> Path:
    """``<dpgui home>/autosave`` (created user-only if missing)."""
    return ensure_private_dir(user_home() / AUTOSAVE_FOLDER)


def process_alive(pid: int) -> bool:
    """Is process ``pid`` running? (A reused PID counts as running: then no restore is offered.)"""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    if sys.platform == "win32":  # os.kill would terminate the process on Windows
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return bool(kernel32.GetLastError() == 5)  # access denied: it exists
        try:
            code = ctypes.c_ulong()
            return bool(kernel32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def read_marker(path: Path) -> int | None:
    """The PID in a session marker, or None if the marker is unreadable (e.g. cut short by a crash)."""
    try:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        return int(first.strip())
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return None


def write_marker(path: Path) -> None:
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    write_text_atomic(path, f"{os.getpid()}\n{socket.gethostname()}\n{started}\n")


def _local_time(project: Project, fallback: Path | None = None) -> str:
    moment = project.saved()
    if moment is None and fallback is not None:
        try:
            moment = datetime.fromtimestamp(fallback.stat().st_mtime, timezone.utc)
        except OSError:
            moment = None
    return "an unknown time" if moment is None else moment.astimezone().strftime("%Y-%m-%d %H:%M")


def _write_autosave(project: Project, path: Path, progress: Any, should_cancel: Any) -> Project:
    return save_project(project, path)


# --------------------------------------------------------------------------------------------- the data source

def project_spec(project: Project) -> SourceSpec:
    """Where ``project``'s data lives: its ``source`` record, or (files saved before sources existed,
    and plain files) the file at ``data_path``."""
    if project.source is not None:
        return SourceSpec.from_json(project.source)
    return SourceSpec(SourceKind.FILE, project.data_path)


def same_source(a: SourceSpec, b: SourceSpec) -> bool:
    """The same data: the same file (absolute paths compared; a dialect given on one side must be the
    other's), or the same database URL with the same table or query."""
    if a.kind == SourceKind.FILE and b.kind == SourceKind.FILE:
        same_dialect = a.dialect is None or b.dialect is None or a.dialect == b.dialect
        return same_data(a, b) and same_dialect
    return a == b


# --------------------------------------------------------------------------------------------- the controller

class ProjectController(QObject):
    """The workspace of one main window: capture, apply, save/open, autosave, restore (see module doc)."""

    def __init__(self, window: ProjectWindow) -> None:
        super().__init__(window.window())
        self.window = window
        self.path: Path | None = None  # the project file (None: untitled)
        self._saved: Project | None = None  # the workspace as last saved or opened (None: untitled)
        self._last_autosaved: Project | None = None
        self._pending_apply: tuple[Project, SourceSpec, Callable[[], None] | None] | None = None
        self._pending_restore: Project | None = None
        self._recovered_path: Path | None = None
        self._recovered_handled = False  # restored or discarded: its file may go at a clean exit
        self._folder: Path | None = None
        self._owns_session = False
        self._ended = False
        self._closing = False
        self._autosave_pool = WorkerPool()
        self.left_behind = LeftBehind()  # workspaces other data replaced while a release in them was not kept
        self._autosave_running = False
        self._autosave_again = False
        self.restore_box: RestorePrompt | None = None
        self.close_box: QMessageBox | None = None
        self.locate_box: LocatePrompt | None = None
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setSingleShot(True)
        self.autosave_timer.setInterval(AUTOSAVE_DELAY_MS)
        self.autosave_timer.timeout.connect(self.autosave_now)
        window.on_change(self.refresh)

    # ------------------------------------------------------------------ workspace
    @property
    def releases(self) -> tuple[ProjectRelease, ...]:
        """The CDF releases made or restored in this workspace, oldest first."""
        return self.window.snapshot().releases

    @property
    def all_releases(self) -> int:
        """How many releases (of every statistic) the workspace holds."""
        return self.window.snapshot().release_count

    def capture(self) -> Project | None:
        """The current workspace as a project (None while no data file is open): the CDF workspace, the mode,
        and every other mode's choices and releases (public values only)."""
        return self._snapshot().project

    def _snapshot(self) -> WorkspaceSnapshot:
        return self.window.snapshot(autosave_of="" if self.path is None else str(self.path))

    def is_modified(self) -> bool:
        """Does the workspace differ from the project file (an untitled workspace with data always does)?"""
        return self.capture() != self._saved

    def needs_save_prompt(self) -> bool:
        """Ask before closing or replacing the workspace? Yes if a project file has unsaved changes, or
        if an untitled workspace holds something worth keeping: a chosen column or a release. (Only
        opening a file to look at it is not worth a question.)"""
        snapshot = self._snapshot()
        current = snapshot.project
        if current is None or current == self._saved:
            return False
        return (self.path is not None or snapshot.release_count > 0 or bool(current.column)
                or any(part.settings is not None for part in current.sections.values()))

    def refresh(self, *_: Any) -> None:
        """Title, the ``*`` of unsaved changes, and the autosave timer, after any change."""
        snapshot = self._snapshot()
        current, source = snapshot.project, snapshot.source
        if self.path is not None:
            name: str | None = self.path.name
        elif source is not None:
            name = source.path.name
        else:
            name = None
        self.window.show_document(f"{name}[*] — {text.APP_NAME}" if name else f"{text.APP_NAME}[*]",
                                  current != self._saved)
        if self._owns_session and not self._ended and current is not None and current != self._last_autosaved:
            self.autosave_timer.start()

    # ------------------------------------------------------------------ hooks called by the main window
    def data_opened(self) -> None:
        """A data file finished opening: apply a project that was waiting for it; update the title."""
        pending, self._pending_apply = self._pending_apply, None
        source = self.window.snapshot().source
        if pending is not None and source is not None and same_source(source.source_spec, pending[1]):
            self._finish_apply(*pending)
        elif self._saved is not None and source is not None and not same_data(project_spec(self._saved),
                                                                             source.source_spec):
            self._set_document(None, None)  # other data: Save must not write it over the project of the last
        self.refresh()

    def data_open_failed(self) -> None:
        self._pending_apply = None

    # ------------------------------------------------------------------ open
    def open_project_dialog(self) -> None:
        """File → Open Project…: asks to save unsaved work first, then for the file."""
        def choose() -> None:
            settings = self.window.settings
            start = str(settings.value("last_project_folder", settings.value("last_folder", str(Path.home()))))
            path, _ = QFileDialog.getOpenFileName(self.window.window(), "Open a project", start, PROJECT_FILTER)
            if path:
                self.open_project(path)

        self.confirm_discard(choose, closing=False)

    @staticmethod
    def is_project_file(path: str | os.PathLike[str]) -> bool:
        return Path(path).name.lower().endswith(PROJECT_SUFFIX)

    def request_open(self, path: str | os.PathLike[str]) -> None:
        """Open a project named by the officer (dropped on the window, or given on the command line):
        asks to save unsaved work first."""
        self.confirm_discard(lambda: self.open_project(path), closing=False)

    def open_project(self, path: str | os.PathLike[str]) -> bool:
        """Read a project file and apply it (asynchronously: the data file opens on a worker)."""
        target = Path(os.path.abspath(path))
        try:
            project = load_project(target)
        except DpguiError as err:
            self.window.show_error("Cannot open this project", text.friendly(err))
            return False
        self.window.settings.setValue("last_project_folder", str(target.parent))
        return self.apply_project(project, on_done=lambda: self._set_document(target, project))

    def apply_project(self, project: Project, data_path: str | os.PathLike[str] | None = None,
                      on_done: Callable[[], None] | None = None) -> bool:
        """Make ``project`` the workspace (``data_path`` overrides a moved data file). Nothing is
        released and no budget is spent. False if it cannot start (the reason is shown)."""
        w = self.window
        if w.snapshot().releasing:
            w.show_error("A release is running", "Wait until the release has finished, then open the project.")
            return False
        try:
            spec = project_spec(project)
        except DpguiError as err:
            w.show_error("Cannot open this project", text.friendly(err))
            return False
        if spec.kind != SourceKind.FILE:  # a database or Spark: connect (the password is asked for, never read from a file)
            self._apply_or_open(project, spec, on_done)
            return True
        if data_path is None:
            try:
                path = project_data_file(project)
            except MissingDataFile as err:
                self._ask_locate(err, on_done)
                return False
        else:
            path = Path(data_path)
            if not (path.is_file() or path.is_dir()):  # a folder of Parquet files is one table
                self._ask_locate(MissingDataFile(replace(project, data_path=str(path))), on_done)
                return False
        path = Path(os.path.abspath(path))
        if not path.is_dir() and not is_supported_file_name(path.name):
            w.show_error("Cannot open this project", f"Its data file '{path.name}' is not a supported table. "
                     + USE_A_SUPPORTED_FILE)
            return False
        self._apply_or_open(project, SourceSpec(SourceKind.FILE, str(path), dialect=spec.dialect, encoding=spec.encoding),
                            on_done)
        return True

    def _apply_or_open(self, project: Project, spec: SourceSpec, on_done: Callable[[], None] | None) -> None:
        """Apply the project at once if its source is the one open; else open it and apply the project when
        it has loaded."""
        source = self.window.snapshot().source
        if source is not None and same_source(source.source_spec, spec):
            self._finish_apply(project, spec, on_done)
            self.refresh()
        else:
            self._pending_apply = (project, spec, on_done)
            self.window.open_data(spec)

    def _finish_apply(self, project: Project, spec: SourceSpec, on_done: Callable[[], None] | None) -> None:
        w = self.window
        name = Path(spec.location).name if spec.kind == SourceKind.FILE else spec.display_name()
        problems = w.restore(project, name)
        if on_done is not None:
            on_done()
        if problems:
            w.show_error("The project was opened with changes", " ".join(problems))
        else:
            w.tell(f"Opened the workspace for {name}. Nothing was released.", 8000)

    def _ask_locate(self, err: MissingDataFile, on_done: Callable[[], None] | None) -> None:
        w = self.window
        message = text.friendly(err)
        w.tell(message, 10000, problem="Data file not found")
        box = locate_prompt(w.window(), message)
        self.locate_box = box
        project = err.project

        def answered() -> None:
            if box.clickedButton() is not box.locate_button:
                w.tell("The project was not opened: its data file is missing.", 8000)
                return
            missing = Path(project.data_path)
            start = missing.parent if missing.parent.is_dir() else (
                self.path.parent if self.path is not None else Path.home())
            chosen, _ = QFileDialog.getOpenFileName(w.window(), f"Where is {missing.name}?", str(start), FILE_FILTER)
            if chosen:
                self.apply_project(project, data_path=chosen, on_done=on_done)

        box.finished.connect(lambda _result: answered())
        box.open()

    def _set_document(self, path: Path | None, saved: Project | None) -> None:
        self.path = path
        self._saved = saved
        if path is not None and saved is not None:  # its releases are kept: the session's list says where
            self.window.session.mark_saved({r.release_id for r in saved.releases}
                                           | {r.release_id for part in saved.sections.values() for r in part.releases},
                                           path)

    # ------------------------------------------------------------------ save
    def save(self) -> bool:
        """File → Save Project (Ctrl+S): to the project file, or ask for one."""
        return self.save_as() if self.path is None else self.save_to(self.path)

    def save_as(self) -> bool:
        """File → Save Project As… (Ctrl+Shift+S)."""
        w = self.window
        current = self.capture()
        if current is None:
            w.show_error("Nothing to save yet", "Open a data file first (File → Open).")
            return False
        if self.path is not None:
            default = self.path
        else:
            base = Path(current.data_path).stem if current.source is None or current.source.get("kind") == SourceKind.FILE \
                else str(current.source.get("table") or "query").replace(".", "-")
            stem = base + (f"-{current.column}" if current.column else "")
            folder = w.settings.value("last_project_folder", w.settings.value("last_folder", str(Path.home())))
            default = Path(str(folder)) / f"{stem}{PROJECT_SUFFIX}"
        chosen, _ = QFileDialog.getSaveFileName(w.window(), "Save the project", str(default), PROJECT_FILTER)
        if not chosen:
            return False
        if not chosen.lower().endswith(PROJECT_SUFFIX):
            chosen += PROJECT_SUFFIX
        return self.save_to(chosen)

    def save_to(self, path: str | os.PathLike[str]) -> bool:
        """Write the workspace to ``path``; it becomes the project file. False (with a message) on failure."""
        w = self.window
        current = self.capture()
        if current is None:
            w.show_error("Nothing to save yet", "Open a data file first (File → Open).")
            return False
        target = Path(os.path.abspath(path))
        try:
            saved = save_project(replace(current, autosave_of=""), target)
        except DpguiError as err:
            w.show_error("Saving the project failed", text.friendly(err) + " The project was not saved.")
            return False
        self._set_document(target, saved)
        w.settings.setValue("last_project_folder", str(target.parent))
        self.refresh()
        w.tell(f"Saved the project to {target}.", 8000)
        return True

    def confirm_discard(self, then: Callable[[], object], closing: bool) -> None:
        """Run ``then`` now, or after Save (if saved) or Discard in the save-changes box; Cancel stops.
        Before another project replaces the workspace (``closing`` False) while a release on screen is
        neither exported nor saved, the session's question is asked instead (Save Project… / Export… /
        Open Anyway / Cancel: :meth:`~dpgui.app.shell.session_releases.SessionController.confirm_leave`)."""
        if not closing and self.window.session.not_kept():
            self.window.session.confirm_leave(then, "another project")
            return
        elsewhere = self.window.session.not_kept_elsewhere() if closing else ()
        if not self.needs_save_prompt() and not elsewhere:
            then()
            return
        box = save_changes_prompt(self.window.window(), self.path.name if self.path else None, self.all_releases, closing)
        if elsewhere:  # releases of data opened before: only exporting them keeps them past this session
            box.setInformativeText(box.informativeText() + f"\n\n{len(elsewhere)} other release"
                                   f"{'s' if len(elsewhere) != 1 else ''} of this session (of data opened before) "
                                   f"{'are' if len(elsewhere) != 1 else 'is'} neither exported nor saved: Cancel, "
                                   "then Release → Releases of This Session, to show and export "
                                   f"{'them' if len(elsewhere) != 1 else 'it'}.")
        self.close_box = box

        def answered() -> None:
            button = box.standardButton(box.clickedButton())
            if button == QMessageBox.StandardButton.Save:
                if self.save():
                    then()
            elif button == QMessageBox.StandardButton.Discard:
                then()
            else:
                self.window.tell("Nothing was closed.", 5000)

        box.finished.connect(lambda _result: answered())
        box.open()

    def _close_now(self) -> None:
        self._closing = True
        try:
            self.window.close()
        finally:
            self._closing = False

    def request_close(self) -> None:
        """File → Quit (Ctrl+Q): ask Save / Discard / Cancel if needed, then close the window."""
        self.confirm_discard(self._close_now, closing=True)

    def close_approved(self, event: QCloseEvent) -> bool:
        """For closeEvent: True to go on closing; False after ignoring the event while the officer is
        asked Save / Discard / Cancel (the window closes itself after Save or Discard).

        Only the window's close button (a spontaneous event from the window system) asks here; Quit
        asks in :meth:`request_close`. A close() from code (scripts, tests) never waits for an answer."""
        if self._closing or not event.spontaneous() or not (self.needs_save_prompt()
                                                            or self.window.session.not_kept_elsewhere()):
            return True
        event.ignore()
        self.confirm_discard(self._close_now, closing=True)
        return False

    # ------------------------------------------------------------------ autosave and the session marker
    def start(self) -> None:
        """At window start: claim the session marker; after a crash, set its autosave aside and offer it."""
        try:
            folder = autosave_dir()
        except DpguiError as err:
            self.window.tell(f"Autosave is off: {text.friendly(err)}", 10000)
            return
        self._folder = folder
        marker = folder / MARKER_NAME
        crashed = False
        if marker.exists():
            pid = read_marker(marker)
            if pid is not None and process_alive(pid):
                return  # another dpgui (or another window of this one) is running: leave its files alone
            crashed = True
        autosave, recovered = folder / AUTOSAVE_NAME, folder / RECOVERED_NAME
        try:
            if crashed and autosave.exists():
                os.replace(autosave, recovered)  # new autosaves must not overwrite what we offer
            write_marker(marker)
        except (OSError, DpguiError) as err:
            self.window.tell(f"Autosave is off: {text.friendly(err)}", 10000)
            return
        self._owns_session = True
        self.left_behind.start(folder, crashed)
        if crashed and recovered.exists():
            self._recovered_path = recovered
            try:
                self._pending_restore = load_project(recovered)
            except DpguiError as err:
                self.window.tell(f"The last workspace could not be restored: {text.friendly(err)}",
                                                    10000)
                return
            QTimer.singleShot(0, self.offer_restore)

    def pending_restore(self) -> Project | None:
        """The autosave of a session that did not close properly, until restored or discarded."""
        return self._pending_restore

    def offer_restore(self) -> None:
        """Ask 'Restore the workspace from <time>?' (Restore / Discard) if there is something to restore."""
        project = self._pending_restore
        if project is None:
            return
        box = restore_prompt(self.window.window(), project, _local_time(project, self._recovered_path))
        self.restore_box = box

        def answered() -> None:
            if box.clickedButton() is box.restore_button:
                self.restore()
            else:
                self.discard_restore()

        box.finished.connect(lambda _result: answered())
        box.open()

    def restore(self) -> bool:
        """Apply the pending autosave (reopens the data, settings, plan and releases; spends nothing)."""
        project, self._pending_restore = self._pending_restore, None
        if project is None:
            return False
        document = Path(project.autosave_of) if project.autosave_of else None

        def done() -> None:
            saved = None
            if document is not None:
                try:
                    saved = load_project(document)
                except DpguiError:
                    saved = None
            self._set_document(document if saved is not None else None, saved)
            self._recovered_handled = True
            self._list_left_behind()

        return self.apply_project(project, on_done=done)

    def _list_left_behind(self) -> None:
        """After a restore: the releases of the workspaces other data had replaced before the crash are listed
        again under Release → Releases of This Session (nothing is spent or released)."""
        listed = sum(self.window.session.list_restored(project, project_spec(project))
                     for project in self.left_behind.recovered_projects())
        self.left_behind.adopt_recovered()  # this session's own from now on: kept until it ends cleanly
        if listed:
            self.window.tell(
                f"Restored the workspace. {listed} release{'s' if listed != 1 else ''} of other data made before "
                "the crash, neither exported nor saved, are under Release → Releases of This Session.", 15000)

    def keep_left_behind(self) -> None:
        """Other data is about to replace the workspace: if a release on screen is neither exported nor saved,
        keep the workspace in the autosave folder until a clean exit (:mod:`dpgui.app.shell.left_behind`)."""
        if not self._owns_session or self._ended or not self.window.session.not_kept():
            return
        project = self.capture()
        if project is not None:
            self.left_behind.keep(project)

    def discard_restore(self) -> None:
        self._pending_restore = None
        self._recovered_handled = True
        self.left_behind.discard_recovered()
        if self._recovered_path is not None:
            try:
                self._recovered_path.unlink()
            except OSError:
                pass
        self.window.tell("The last workspace was discarded.", 5000)

    def autosave_path(self) -> Path | None:
        return None if self._folder is None else self._folder / AUTOSAVE_NAME

    def autosave_now(self) -> None:
        """Write the workspace to the autosave file on a worker (if it changed since the last autosave)."""
        self.autosave_timer.stop()
        path = self.autosave_path()
        if not self._owns_session or self._ended or path is None:
            return
        current = self.capture()
        if current is None or current == self._last_autosaved:
            return
        if self._autosave_running:
            self._autosave_again = True
            return
        self._autosave_running = True
        worker = Worker(_write_autosave, current, path).connect_to(
            self.window.window(), finished=self._on_autosaved, failed=self._on_autosave_failed)
        self._autosave_pool.start(worker)

    def _on_autosaved(self, project: Project) -> None:
        self._autosave_running = False
        self._last_autosaved = project
        if self._autosave_again:
            self._autosave_again = False
            self.autosave_now()

    def _on_autosave_failed(self, message: str) -> None:
        self._autosave_running = False
        self._autosave_again = False
        self.window.tell(f"Autosave failed: {message}", 10000)

    def session_ended(self) -> None:
        """Clean exit (closeEvent, after the workers are done): remove the marker and the autosaves."""
        self._ended = True
        self.autosave_timer.stop()
        if not self._owns_session or self._folder is None:
            return
        self._owns_session = False
        self.left_behind.end(keep_recovered=self._recovered_path is not None and not self._recovered_handled)
        marker = self._folder / MARKER_NAME
        leftovers = [self._folder / AUTOSAVE_NAME]
        if self._recovered_path is None or self._recovered_handled:
            leftovers.append(self._folder / RECOVERED_NAME)  # never lose a crash's workspace nobody looked at
        for path in leftovers:
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
        if read_marker(marker) == os.getpid():
            try:
                marker.unlink(missing_ok=True)
            except OSError:
                pass
