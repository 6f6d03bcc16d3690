"""The main window's actions, menus (File, Release, Tools, View, Help) and toolbar: :func:`build_actions`
makes each action (its label, shortcut, tip and the window's slot it triggers) as an attribute of the
window, then :func:`build_menus` puts them into the menus and the toolbar. GUI thread only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QToolBar, QWidget

from dpgui.app.shell.project import ProjectController
from dpgui.app.shell.session_releases import SessionController
from dpgui.app.widgets.theme import APPEARANCES


class MenuWindow(Protocol):
    """What the menus need of the main window: the slots its actions trigger, its settings (the appearance),
    the session's menu, the project controller, its menu bar and toolbars. :func:`build_actions` sets the
    actions, the Open Recent menu and the appearance actions on it."""

    settings: QSettings
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

    @property
    def session(self) -> SessionController: ...

    @property
    def project(self) -> ProjectController: ...

    def window(self) -> QWidget: ...
    def menuBar(self) -> QMenuBar: ...
    def addToolBar(self, toolbar: QToolBar) -> None: ...
    def choose_file(self) -> None: ...
    def choose_folder(self) -> None: ...
    def connect_database(self) -> None: ...
    def open_sample(self) -> None: ...
    def open_hierarchy_sample(self) -> None: ...
    def save_plan(self) -> None: ...
    def export_bundle(self) -> None: ...
    def export_release(self) -> None: ...
    def show_ledger(self) -> None: ...
    def show_keys(self) -> None: ...
    def show_verify(self) -> None: ...
    def release(self) -> None: ...
    def show_help(self) -> None: ...
    def show_about(self) -> None: ...
    def set_appearance(self, key: str) -> None: ...


def build_actions(window: MenuWindow) -> None:
    """The window's actions (each triggers one of its slots), then its menus and toolbar."""
    def action(label: str, slot: Callable[..., object],
               shortcut: QKeySequence.StandardKey | str | None = None, tip: str = "") -> QAction:
        act = QAction(label, window.window())  # the main window itself
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        act.setStatusTip(tip)
        act.setToolTip(tip or label.replace("&", "").rstrip("…"))
        act.triggered.connect(slot)
        return act

    window.open_action = action("&Open…", window.choose_file, QKeySequence.StandardKey.Open,
                                "Open a CSV, TSV, Parquet or Excel file")
    window.open_folder_action = action("Open Parquet &Folder…", window.choose_folder, None,
                                       "Open a folder of Parquet files as one table (e.g. as Spark writes them)")
    window.connect_action = action("&Connect to a Database…", window.connect_database, None,
                                   "Read a table or a query of a database; the database counts the rows")
    window.sample_action = action("Open &Sample Data", window.open_sample, None, "Open the bundled NYC flights sample")
    window.hierarchy_sample_action = action("Open &Hierarchy Sample", window.open_hierarchy_sample, None,
                                            "Open the flights counted by time zone → airport → route")
    window.save_action = action("Save P&lan…", window.save_plan, None,
                                "Save the public settings and plan as JSON (no data)")
    # project files (dpgui/app/shell/project.py)
    window.open_project_action = action("Open &Project…", window.project.open_project_dialog, "Ctrl+Shift+O",
                                        "Open a saved workspace (.dpgui): data file, settings, plan and releases")
    window.save_project_action = action("&Save Project", window.project.save, QKeySequence.StandardKey.Save,
                                        "Save the workspace as a project file (.dpgui); no data is copied into it")
    window.save_project_as_action = action("Save Project &As…", window.project.save_as, "Ctrl+Shift+S",
                                           "Save the workspace under a new project file name")
    window.export_bundle_action = action("&Export Signed Bundle…", window.export_bundle, "Ctrl+E",
                                         "Write the release as CSV + PDF + manifest, signed with your key")
    window.export_bundle_action.setEnabled(False)
    window.export_action = action("Export Release CSV &Only…", window.export_release, None,
                                  "Write the released CDF to a CSV file (unsigned)")
    window.export_action.setEnabled(False)
    window.ledger_action = action("Budget &Ledger…", window.show_ledger, "Ctrl+L",
                                  "Budget spent and left per dataset; set a dataset's total budget")
    window.keys_action = action("Signing &Keys…", window.show_keys, None,
                                "Create a signing key; import and export public keys")
    window.verify_action = action("&Verify a Bundle…", window.show_verify, None,
                                  "Check that a bundle is exactly what its signer released")
    window.release_action = action("&Release…", window.release, "Ctrl+R", "Spend the budget and publish the CDF")
    window.quit_action = action("&Quit", window.project.request_close, QKeySequence.StandardKey.Quit, "Quit dpgui")
    window.help_action = action("dpgui &Help", window.show_help, QKeySequence.StandardKey.HelpContents,
                                "How to use dpgui")
    window.about_action = action("&About dpgui", window.show_about)

    build_menus(window, action)


def build_menus(window: MenuWindow, action: Callable[..., QAction]) -> None:
    """The menus (File, Release, Tools, View, Help) and the toolbar, from the actions (``action`` makes
    the View menu's appearance actions)."""
    file_menu = window.menuBar().addMenu("&File")
    file_menu.addAction(window.open_action)
    file_menu.addAction(window.open_folder_action)
    file_menu.addAction(window.connect_action)
    window.recent_menu = file_menu.addMenu("Open &Recent")
    file_menu.addAction(window.sample_action)
    file_menu.addAction(window.hierarchy_sample_action)
    file_menu.addSeparator()
    file_menu.addActions([window.open_project_action, window.save_project_action, window.save_project_as_action])
    file_menu.addSeparator()
    file_menu.addAction(window.save_action)
    file_menu.addAction(window.export_bundle_action)
    file_menu.addAction(window.export_action)
    file_menu.addSeparator()
    file_menu.addAction(window.quit_action)
    release_menu = window.menuBar().addMenu("&Release")
    release_menu.addAction(window.release_action)
    release_menu.addSeparator()
    release_menu.addMenu(window.session.menu)
    tools_menu = window.menuBar().addMenu("&Tools")
    tools_menu.addActions([window.ledger_action, window.keys_action, window.verify_action])
    view_menu = window.menuBar().addMenu("&View")
    appearance = view_menu.addMenu("&Appearance")
    current = window.settings.value("appearance", "system")
    window.appearance_actions = {}
    for key, label in APPEARANCES.items():
        act = action(label, lambda _=False, k=key: window.set_appearance(k))
        act.setCheckable(True)
        act.setChecked(key == current)
        appearance.addAction(act)
        window.appearance_actions[key] = act
    help_menu = window.menuBar().addMenu("&Help")
    help_menu.addAction(window.help_action)
    help_menu.addAction(window.about_action)

    toolbar = QToolBar("Main")
    toolbar.setObjectName("main-toolbar")
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    for act in (window.open_action, window.release_action, window.export_bundle_action, window.ledger_action):
        toolbar.addAction(act)
    window.addToolBar(toolbar)
