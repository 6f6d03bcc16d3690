"""Start the desktop app: `dpgui` (start page) or `dpgui FILE` (opens FILE)."""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Sequence

from pathlib import PurePosixPath
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QEvent, QObject, QSettings, QTimer
from PySide6.QtGui import QFileOpenEvent, QIcon
from PySide6.QtWidgets import QApplication

from dpgui import __version__
from dpgui.app.widgets.wheel_guard import install_wheel_guard
from dpgui.errors import DpguiError
from dpgui.report.home import ensure_private_dir, settings_folder
from dpgui.resources import find_resource

if TYPE_CHECKING:
    from dpgui.app.shell.main_window import MainWindow

APP_ICON = PurePosixPath("resources/icons/dpgui.png")


class GuiThreadCollector(QObject):
    """Runs Python's cyclic garbage collector on the GUI thread only.

    Left automatic, a collection runs in whichever thread allocates when a threshold is crossed,
    so a worker could destroy the last window's widgets, and Qt objects must be destroyed on the GUI
    thread. Seen here: a worker deadlocked in ~QObject (shiboken waiting for the interpreter lock)
    during a collection, and crashes. So automatic collection is off and a timer collects, every
    ``interval_ms``, the generations whose counts passed gc's thresholds, as gc itself would."""

    def __init__(self, parent: QObject, interval_ms: int = 200) -> None:
        super().__init__(parent)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.collect)
        self.timer.start(interval_ms)

    @staticmethod
    def collect() -> int:
        """Collect the oldest generation that is due (none if none is); returns what gc found."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        due = [generation for generation in range(3) if counts[generation] > thresholds[generation]]
        return gc.collect(due[-1]) if due else 0


def use_settings_folder() -> None:
    """With ``DPGUI_HOME`` set, Qt's settings (recent files: paths of confidential data) go to an INI
    file in ``$DPGUI_HOME/settings`` instead of the real profile (dpgui.report.home.settings_folder)."""
    folder = settings_folder()
    if folder is None:
        return
    with contextlib.suppress(DpguiError):  # unwritable: Qt then keeps the settings in memory only
        ensure_private_dir(folder)
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))


def create_application(argv: Sequence[str] = ()) -> QApplication:
    """The QApplication with organisation/app names (so QSettings has a home), the saved appearance and
    the wheel guard (:mod:`dpgui.app.widgets.wheel_guard`)."""
    from dpgui.app.widgets.theme import apply_appearance

    app = QApplication.instance() or QApplication(["dpgui", *argv])
    assert isinstance(app, QApplication), "the widgets need a QApplication, not a bare QCoreApplication"
    use_settings_folder()
    app.setOrganizationName("dpgui")
    app.setOrganizationDomain("dpgui.org")
    app.setApplicationName("dpgui")
    app.setApplicationVersion(__version__)
    icon = find_resource(APP_ICON)
    if icon is not None:
        app.setWindowIcon(QIcon(str(icon)))
    app.setDesktopFileName("dpgui")  # Wayland/X11 docks match the window to dpgui.desktop (the .deb's entry)
    apply_appearance(str(QSettings().value("appearance", "system")))
    if app.findChild(GuiThreadCollector) is None:
        GuiThreadCollector(app)
    install_wheel_guard(app)  # the wheel changes no setting without keyboard focus, on every page and dialog
    gc.disable()  # the collector above collects instead
    return app


class FileOpenHandler(QObject):
    """Opens files that the system hands over as events (macOS Finder: a double-clicked .dpgui file,
    or one dropped on the Dock icon, arrives as QEvent.FileOpen, not as a command-line argument)."""

    def __init__(self, window: MainWindow) -> None:  # imported late, after the QApplication exists
        super().__init__(window)
        self.window = window

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FileOpen:
            path = cast(QFileOpenEvent, event).file()  # an event of type FileOpen is a QFileOpenEvent
            if path:
                self.window.open_file(path)
                return True
        return super().eventFilter(watched, event)


def run_gui(path: str | None = None, column: str | None = None) -> int:
    app = create_application()
    from dpgui.app.shell.main_window import MainWindow

    window = MainWindow()
    app.installEventFilter(FileOpenHandler(window))
    window.show()
    if path is not None:
        window.open_file(path, column=column)
    return app.exec()


if __name__ == "__main__":
    sys.exit(run_gui(sys.argv[1] if len(sys.argv) > 1 else None))
