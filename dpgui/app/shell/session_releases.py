"""The releases of this session in the window: listed, shown again in one click, and never taken off the
screen without a question while they are neither exported nor saved.

:class:`SessionController` keeps the window's :class:`~dpgui.workspace.session.SessionReleases`: every
release made or restored since the window opened, of any data and every statistic (it asks each statistic's
mode, :class:`~dpgui.app.mode.StatisticMode`, never which statistic it is). It

* collects each release as it enters the workspace (made, or restored from a project), with the data it
  was made from;
* gives the workspace of newly opened data that data's own releases only (:meth:`source_changed`), so a
  project saved for it never carries another source's releases, and a release of other data is never
  exported with the new data's settings;
* lists them in Release → Releases of This Session (one click shows one again, in its own mode, with the
  words "made from …" when it is not the open data's) and in a dialog with what was exported where;
* asks before other data is opened while a release on screen is neither exported nor saved
  (:meth:`confirm_leave`: Save Project… / Export… / Open Anyway / Cancel; nothing is lost on Cancel, and
  after Open Anyway the release stays in the list until the window closes).

Showing a release again spends nothing; signing it checks it against the budget ledger as always.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QLabel, QMenu, QMessageBox, QPushButton, QStatusBar,
    QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from dpgui.app import text
from dpgui.app.mode import StatisticMode
from dpgui.data.source_spec import SourceSpec, local_paths
from dpgui.formatting import format_budget
from dpgui.report.project_file import Project
from dpgui.vocabulary import ReleaseKind, StatisticKind
from dpgui.workspace.session import ExportKind, SessionRelease, SessionReleases, open_data, same_data
from dpgui.workspace.state import Workspace


class ProjectSave(Protocol):
    """File → Save Project (:class:`~dpgui.app.shell.project.ProjectController`)."""

    def save(self) -> bool: ...


class SessionWindow(Protocol):
    """What the session's releases need of the main window: the open data's workspace, the modes the
    releases come from and are shown in (one per statistic), choosing the mode, its Export, the status bar."""

    workspace: Workspace
    statistic_modes: dict[StatisticKind | ReleaseKind, StatisticMode]

    @property
    def mode(self) -> StatisticMode: ...

    @property
    def project(self) -> ProjectSave: ...

    def choose_mode(self, kind: StatisticKind | ReleaseKind) -> None: ...

    def export_bundle(self) -> None: ...

    def window(self) -> QWidget: ...

    def statusBar(self) -> QStatusBar: ...

MENU_NAME = "Releases of This &Session"


def local_time(entry: SessionRelease) -> str:
    return f"{entry.created.astimezone():%H:%M:%S}"


def kept_words(entry: SessionRelease) -> str:
    """Where the release was exported and saved, in words ("Not exported or saved" if nowhere)."""
    words = [f"{e.kind.value} {e.path}" for e in entry.exports]
    if entry.saved_in is not None:
        words.append(f"saved in the project {entry.saved_in.name}")
    if not words:
        return "Not exported or saved"
    joined = "; ".join(words)
    return joined[0].upper() + joined[1:]


def privacy_words(entry: SessionRelease) -> str:
    epsilon, delta = entry.charge()
    return f"ε = {format_budget(epsilon)}" + (f", δ = {format_budget(delta)}" if delta > 0 else "")


class SessionReleasesDialog(QDialog):
    """Release → Releases of This Session → All Releases…: a table of the session's releases (when, what,
    from which data, dataset, privacy, where exported or saved); Show (or a double-click) shows one."""

    COLUMNS = ("Released", "What", "Data", "Dataset", "Privacy", "Exported or saved")

    def __init__(self, controller: SessionController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setWindowTitle("Releases of this session")
        intro = QLabel("Every release made or reopened since dpgui started, of any data. Show one to see its results "
                       "again or to export it; this spends no budget. The list ends when you quit dpgui: export a "
                       "release or save the project to keep it.")
        intro.setWordWrap(True)
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels(self.COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.doubleClicked.connect(lambda _index: self.show_selected())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.show_button = buttons.addButton("&Show", QDialogButtonBox.ButtonRole.AcceptRole)
        self.show_button.setDefault(True)
        self.show_button.clicked.connect(self.show_selected)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(960, 360)
        self.fill()

    def fill(self) -> None:
        entries = self.controller.releases.releases
        self.table.setRowCount(len(entries))
        for row, entry in enumerate(entries):
            cells = (local_time(entry), entry.title, entry.data_name, entry.dataset, privacy_words(entry),
                     kept_words(entry))
            for column, value in enumerate(cells):
                item = QTableWidgetItem(value)
                item.setToolTip(text.literal_tooltip(value))
                item.setData(Qt.ItemDataRole.UserRole, entry.release_id)
                if column == len(cells) - 1 and not entry.kept:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(row, column, item)
        if entries:
            self.table.selectRow(len(entries) - 1)
        self.show_button.setEnabled(bool(entries))

    def show_selected(self) -> None:
        item = self.table.item(self.table.currentRow(), 0)
        if item is None:
            return
        self.controller.reopen(str(item.data(Qt.ItemDataRole.UserRole)))
        self.accept()


class LeavePrompt(QMessageBox):
    """The box of :meth:`SessionController.confirm_leave`, with its four buttons."""

    save_button: QPushButton
    export_button: QPushButton
    open_button: QPushButton


class SessionController(QObject):
    """The window's releases of this session (see the module doc). GUI thread only."""

    def __init__(self, window: SessionWindow) -> None:
        super().__init__(window.window())
        self.window = window
        self.releases = SessionReleases()
        self.leave_box: LeavePrompt | None = None
        self.dialog: SessionReleasesDialog | None = None
        self.menu = QMenu(MENU_NAME.replace("&", ""), window.window())
        self.menu.setTitle(MENU_NAME)
        self.menu.setToolTipsVisible(True)
        for mode in window.statistic_modes.values():
            mode.watch_releases(partial(self._collect, mode))
        self.releases.subscribe(lambda _parts: self._on_changed())
        self._fill_menu()

    # ------------------------------------------------------------------ collecting
    def _open_spec(self) -> SourceSpec | None:
        return open_data(self.window.workspace)

    def _collect(self, mode: StatisticMode) -> None:
        """List the mode's releases not yet listed, and what it shows of one listed without it."""
        for entry in mode.session_releases():
            known = self.releases.get(entry.release_id)
            if known is None or (entry.shown is not None and known.shown is None):
                self.releases.add(entry)

    def source_changed(self, previous: SourceSpec | None) -> None:
        """New data is open (called before a project waiting for it is applied): unless it is the same data
        read again (e.g. with another CSV dialect), each mode holds the new data's own releases of this
        session (none, usually) and shows none; the others stay in the list."""
        current = self._open_spec()
        if current is None or (previous is not None and same_data(previous, current)):
            return
        chosen = self.window.mode
        for kind, mode in self.window.statistic_modes.items():
            mode.take_releases(self.releases.of_data(current, kind), chosen=mode is chosen)

    def list_restored(self, project: Project, spec: SourceSpec) -> int:
        """List the releases of ``project`` (a workspace of the data ``spec`` that other data had replaced
        before a crash) as restored ones, neither exported nor saved; returns how many are new to the list."""
        dataset = project.dataset or Path(project.data_path).stem or "dataset"
        before = len(self.releases.releases)
        for record in project.releases:
            self.releases.add(SessionRelease(StatisticKind.CDF, record, dataset, record.column or "value", spec, False))
        for kind, part in project.sections.items():
            for kept in part.releases:
                self.releases.add(SessionRelease(kind, kept, kept.dataset, kept.subject, spec, False))
        return len(self.releases.releases) - before

    # ------------------------------------------------------------------ what is on screen
    def on_screen(self) -> set[str]:
        """The ids of the releases of the open data's workspace and the ones shown (of every mode)."""
        return set().union(*(mode.releases_on_screen() for mode in self.window.statistic_modes.values()))

    def not_kept(self) -> tuple[SessionRelease, ...]:
        """The releases on screen that are neither exported nor saved in a project file, oldest first."""
        return self.releases.not_kept(self.on_screen())

    def not_kept_elsewhere(self) -> tuple[SessionRelease, ...]:
        """The releases of this session that are not on screen (of data opened before) and neither exported
        nor saved in a project file: quitting loses them from view."""
        on_screen = self.on_screen()
        return tuple(r for r in self.releases.releases if not r.kept and r.release_id not in on_screen)

    def confirm_leave(self, then: Callable[[], object], what: str) -> None:
        """Run ``then`` (which opens ``what``, e.g. "people.csv") now if no release on screen would be lost
        from view; else ask first: Save Project… (then ``then``), Export… (the newest such release; then ask
        again), Open Anyway, or Cancel (nothing happens)."""
        pending = self.not_kept()
        if not pending:
            then()
            return
        box = self._leave_prompt(pending, what)
        self.leave_box = box

        def answered() -> None:
            clicked = box.clickedButton()
            if clicked is box.save_button:
                if self.window.project.save():
                    self.confirm_leave(then, what)
            elif clicked is box.export_button:
                if self.export(pending[-1].release_id):
                    self.confirm_leave(then, what)
            elif clicked is box.open_button:
                then()
            else:
                self.window.statusBar().showMessage("Nothing was opened; the release is still on screen.", 8000)

        box.finished.connect(lambda _result: answered())
        box.open()

    def _leave_prompt(self, pending: tuple[SessionRelease, ...], what: str) -> LeavePrompt:
        if len(pending) == 1:
            entry = pending[0]
            subject = f"The release “{entry.title}” of {local_time(entry)} is"
        else:
            subject = f"{len(pending)} releases of this session are"
        box = LeavePrompt(QMessageBox.Icon.Warning, "Keep the release before opening other data?",
                          f"{subject} not exported and not saved in a project. Opening {what} takes "
                          f"{'it' if len(pending) == 1 else 'them'} off the screen.", parent=self.window.window())
        text.plain_text(box)  # column and file names are shown literally
        one = len(pending) == 1
        box.setInformativeText(f"Save the project to keep {'it' if one else 'them'} with the data, or export "
                               f"{'it' if one else 'the newest'} to share it. If you open anyway, Release → Releases "
                               f"of This Session still lists {'it' if one else 'them'} until you quit dpgui. Budget "
                               "already spent stays spent.")
        box.save_button = box.addButton("&Save Project…", QMessageBox.ButtonRole.AcceptRole)
        box.export_button = box.addButton("&Export…", QMessageBox.ButtonRole.ActionRole)
        box.export_button.setToolTip("Export the newest of them as a signed bundle, then open")
        box.open_button = box.addButton("&Open Anyway", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(box.save_button)
        box.setEscapeButton(QMessageBox.StandardButton.Cancel)
        return box

    # ------------------------------------------------------------------ showing and exporting one
    def reopen(self, release_id: str) -> bool:
        """Show the release ``release_id`` in step 4 of its mode (made again from its public values if this
        session holds no shown object of it). Spends nothing; the open data and settings stay as they are."""
        entry = self.releases.get(release_id)
        if entry is None:
            return False
        w = self.window
        w.choose_mode(entry.kind)
        self.releases.add(replace(entry, shown=w.statistic_modes[entry.kind].show_again(entry)))
        w.statusBar().showMessage(f"Showing the release “{entry.title}” of {local_time(entry)}. "
                                  "Nothing was released or spent.", 8000)
        return True

    def export(self, release_id: str) -> bool:
        """Show the release and open its Export dialog; True once it is exported."""
        if not self.reopen(release_id):
            return False
        self.window.export_bundle()
        entry = self.releases.get(release_id)
        return entry is not None and bool(entry.signed_bundles)

    def mark_exported(self, release_id: str, kind: ExportKind, path: Path) -> None:
        """Record an export of the release ``release_id``; step 4's banner then says where it went."""
        self.releases.mark_exported(release_id, kind, path)
        for mode in self.window.statistic_modes.values():
            mode.exports_changed(release_id)

    def input_paths(self, release_id: str) -> list[str]:
        """The files and folders on this computer that the release ``release_id`` was read from (an export
        must never go over or into them): its data file or folder, an SQLite database's file."""
        entry = self.releases.get(release_id)
        if entry is None or entry.source is None:
            return []
        return list(local_paths(entry.source))

    def mark_saved(self, release_ids: set[str], project_file: Path) -> None:
        self.releases.mark_saved(release_ids, project_file)

    def banner_words(self, release_id: str) -> str:
        """The end of step 4's banner (rich text): where the release was exported, or the call to export it;
        and, for a release of other data than the open data, which data it was made from."""
        entry = self.releases.get(release_id)
        bundles = () if entry is None else entry.signed_bundles
        if bundles:
            words = f"Exported as a signed bundle: {text.escape(str(bundles[-1]))}."
        elif entry is not None and entry.exports:
            words = (f"Exported as a CSV file (not signed): {text.escape(str(entry.exports[-1].path))}. Export a "
                     "signed bundle to share it.")
        else:
            words = "Export it as a signed bundle to share it."
        current = self._open_spec()
        if entry is not None and entry.source is not None and (current is None or not same_data(entry.source, current)):
            words += f" It was made from <b>{text.escape(entry.data_name)}</b>, not from the data open now."
        return words

    def nothing_shown_words(self) -> str:
        """Step 4's banner while it shows no release: what to do, and where the session's releases are."""
        count = len(self.releases.releases)
        if not count:
            return "Nothing released yet. When the plan suits you, press Release."
        current = self._open_spec()
        ours = 0 if current is None else sum(1 for r in self.releases.releases
                                             if r.source is not None and same_data(r.source, current))
        where = (f"The {'release' if count == 1 else f'{count} releases'} of this session "
                 f"{'is' if count == 1 else 'are'} under Release → Releases of This Session.")
        if ours == 0:
            return f"Nothing released from this data yet. When the plan suits you, press Release. {where}"
        return f"No release is shown. {where} To make a new one, press Release."

    # ------------------------------------------------------------------ the menu and the dialog
    def show_dialog(self) -> SessionReleasesDialog:
        dialog = SessionReleasesDialog(self, self.window.window())
        self.dialog = dialog
        dialog.open()
        return dialog

    def _fill_menu(self) -> None:
        self.menu.clear()
        entries = self.releases.releases
        for number, entry in enumerate(reversed(entries), 1):  # the newest first, as Open Recent
            label = f"{local_time(entry)}  {entry.title} — {entry.data_name}"
            label += "" if entry.kept else "  (not exported or saved)"
            act = QAction(("&" if number < 10 else "") + f"{number} " + label.replace("&", "&&"), self)
            act.setStatusTip(kept_words(entry))
            act.setToolTip(kept_words(entry))
            act.triggered.connect(lambda _=False, rid=entry.release_id: self.reopen(rid))
            self.menu.addAction(act)
        if not entries:
            none = self.menu.addAction("No release yet in this session")
            none.setEnabled(False)
        self.menu.addSeparator()
        self.all_action = self.menu.addAction("&All Releases of This Session…")
        self.all_action.triggered.connect(self.show_dialog)
        self.all_action.setEnabled(bool(entries))

    def _on_changed(self) -> None:
        self._fill_menu()
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.fill()
