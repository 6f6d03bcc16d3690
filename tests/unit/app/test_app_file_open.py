"""macOS hands a double-clicked .dpgui or data file to the app as a QFileOpenEvent; the window opens it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QFileOpenEvent
from PySide6.QtWidgets import QApplication

from dpgui.app.main import FileOpenHandler
from dpgui.data.sample import sample_dataset_path
from gui_helpers import TIMEOUT, make_window


def test_a_file_open_event_opens_the_file(qtbot):
    window = make_window(qtbot)
    app = QApplication.instance()
    handler = FileOpenHandler(window)
    app.installEventFilter(handler)
    try:
        path = sample_dataset_path()
        QApplication.sendEvent(app, QFileOpenEvent(str(path)))
        qtbot.waitUntil(lambda: window.table is not None and window.table.path == Path(path), timeout=TIMEOUT)
        qtbot.waitUntil(lambda: window._count_worker is None and not window.pool.busy(), timeout=TIMEOUT)
    finally:
        app.removeEventFilter(handler)
