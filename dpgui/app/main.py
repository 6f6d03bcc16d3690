"""Start the desktop app: `dpgui` (start page) or `dpgui FILE` (opens FILE)."""

from __future__ import annotations

import sys
from typing import Sequence

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from dpgui import __version__


def create_application(argv: Sequence[str] = ()) -> QApplication:
    """The QApplication with organisation/app names (so QSettings has a home) and the saved appearance."""
    from dpgui.app.theme import apply_appearance

    app = QApplication.instance() or QApplication(["dpgui", *argv])
    app.setOrganizationName("dpgui")
    app.setOrganizationDomain("dpgui.org")
    app.setApplicationName("dpgui")
    app.setApplicationVersion(__version__)
    apply_appearance(str(QSettings().value("appearance", "system")))
    return app  # type: ignore[return-value]


def run_gui(path: str | None = None, column: str | None = None) -> int:
    app = create_application()
    from dpgui.app.main_window import MainWindow

    window = MainWindow()
    window.show()
    if path is not None:
        window.open_file(path, column=column)
    return app.exec()


if __name__ == "__main__":
    sys.exit(run_gui(sys.argv[1] if len(sys.argv) > 1 else None))
