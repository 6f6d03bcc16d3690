"""Shared steps of the GUI tests: a window with seeded noise, loading, planning, releasing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from dpgui.app.shell import project as project_module
from dpgui.core.noise import SeededRandom

TIMEOUT = 30_000


def make_window(qtbot, seed: int = 7):
    from dpgui.app.main import create_application
    from dpgui.app.shell.main_window import MainWindow

    create_application()
    window = MainWindow()
    qtbot.addWidget(window)
    window.noise_source = lambda: SeededRandom(seed)
    window.ask_cap = lambda dataset, epsilon, delta=0.0: 100.0  # a generous budget, set once per dataset (tested separately)
    window.resize(1280, 800)
    window.show()
    return window


def wait_plan(qtbot, window, bins: int | None = None) -> None:
    page = window.plan_page
    qtbot.waitUntil(lambda: page.plan is not None and not page.is_planning()
                    and (bins is None or page.plan.shape.bins == bins), timeout=TIMEOUT)


def open_and_wait(qtbot, window, path: str | Path, column: str | None = None) -> None:
    window.open_file(str(path), column=column)
    qtbot.waitUntil(lambda: window.table is not None and window.table.path == Path(path), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: window._count_worker is None and not window.pool.busy(), timeout=TIMEOUT)


def open_other_data(qtbot, window, path: str | Path, column: str | None = None) -> None:
    """Open other data as :func:`open_and_wait`, answering "Open Anyway" if the window asks first (a release
    on screen is neither exported nor saved: dpgui.app.shell.session_releases)."""
    window.open_file(str(path), column=column)
    box = window.session.leave_box
    if box is not None and box.isVisible():
        box.open_button.click()
    qtbot.waitUntil(lambda: window.table is not None and window.table.path == Path(path), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: window._count_worker is None and not window.pool.busy(), timeout=TIMEOUT)


def set_column(qtbot, window, column: str, lower: str, upper: str, bins: str) -> None:
    page = window.data_page
    assert page.select_column(column)
    page.lower_field.set_text(lower)
    page.upper_field.set_text(upper)
    page.bins.set_text(bins)
    page.bins.edited.emit()
    wait_plan(qtbot, window, int(bins.replace(",", "")))


def click_release_in_confirmation(answer: str = "Release") -> None:
    """Answer the modal confirmation once it is shown (the release() call blocks in exec())."""

    def answer_box() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, answer_box)
            return
        for button in box.buttons():
            if button.text().replace("&", "") == answer:
                button.click()
                return
        box.reject()

    QTimer.singleShot(20, answer_box)


def release_and_wait(qtbot, window) -> None:
    before = window.cdf.outcome
    click_release_in_confirmation("Release")
    window.release()
    qtbot.waitUntil(lambda: window.cdf.outcome is not before and window.cdf.release_worker is None, timeout=TIMEOUT)


def hierarchy_sample_released(qtbot, window):
    """Open the hierarchy sample (levels chosen), wait for its plan, release it; returns the mode's page."""
    window.open_hierarchy_sample()
    page = window.hierarchy
    qtbot.waitUntil(lambda: page.state_ws.state.planned is not None and not page.is_busy(), timeout=TIMEOUT)
    click_release_in_confirmation("Release")
    window.release()
    qtbot.waitUntil(lambda: page.state_ws.state.outcome is not None and page.release_step.release_worker is None, timeout=TIMEOUT)
    return page


def release_and_wait_for_error(qtbot, window) -> None:
    """Confirm a release that is expected to fail, and wait for its error dialog."""
    click_release_in_confirmation("Release")
    window.release()
    qtbot.waitUntil(lambda: window.cdf.release_worker is None and error_text(window) != "", timeout=TIMEOUT)


def error_text(window) -> str:
    return getattr(window, "last_error", "")


def type_into(qtbot, field, text: str) -> None:
    """Replace a ValidatedField's text by typing, as a user would (select all, delete, type)."""
    from PySide6.QtCore import Qt

    field.edit.setFocus()
    field.edit.selectAll()
    qtbot.keyClick(field.edit, Qt.Key.Key_Backspace)
    if text:
        qtbot.keyClicks(field.edit, text)


def sample_window_planned(qtbot, seed: int = 3):
    """A window on the bundled sample (its first number column selected) with its 1,000-bin plan made."""
    window = make_window(qtbot, seed=seed)
    window.open_sample()
    qtbot.waitUntil(lambda: window.table is not None, timeout=30_000)
    qtbot.waitUntil(lambda: window.data_page.current_column() is not None, timeout=10_000)
    wait_plan(qtbot, window, 1000)
    return window


def count_tree_drawing(monkeypatch, leaf_level: int) -> dict[str, int]:
    """Count what the tree view paints from now on: node edges (``edges``), node labels (``labels``) and
    labels on the leaf level ``leaf_level`` (``leaf labels``). The returned dict is updated as it paints;
    set its values back to 0 to count a later paint alone."""
    import pyqtgraph as pg

    from dpgui.app.cdf.tree_view import _IcicleItem

    drawn = {"edges": 0, "labels": 0, "leaf labels": 0}
    to_path, node_texts = pg.functions.arrayToQPath, _IcicleItem._node_texts

    def count_edges(xs, ys, *args, **kwargs):
        drawn["edges"] += len(xs) // 2
        return to_path(xs, ys, *args, **kwargs)

    def count_labels(self, p, fm, level, i0, i1, *args):
        drawn["labels"] += i1 - i0
        drawn["leaf labels"] += (i1 - i0) if level == leaf_level else 0
        return node_texts(self, p, fm, level, i0, i1, *args)

    monkeypatch.setattr(pg.functions, "arrayToQPath", count_edges)
    monkeypatch.setattr(_IcicleItem, "_node_texts", count_labels)
    return drawn


def dead_pid() -> int:
    result = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(result.stdout)
    assert not project_module.process_alive(pid)
    return pid


def clipped_labels(page) -> list[str]:
    """The labels of ``page`` that do not show their whole text: a wrapped label lower than its text needs
    at its width, or an unwrapped one narrower than its text."""
    from PySide6.QtWidgets import QLabel

    clipped = []
    for label in page.findChildren(QLabel):
        if not label.isVisible() or not label.text():
            continue
        if label.wordWrap():
            if label.height() < label.heightForWidth(label.width()):
                clipped.append(f"{label.text()[:40]!r}: {label.height()} px high, needs {label.heightForWidth(label.width())}")
        elif label.width() < label.sizeHint().width():
            clipped.append(f"{label.text()[:40]!r}: {label.width()} px wide, needs {label.sizeHint().width()}")
    return clipped


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def connect(qtbot, window, url: str, table: str | None = None, query: str | None = None,
            password: str = "") -> None:
    """File → Connect to a Database…, fill in, OK; wait until step 1 shows the source."""
    window.connect_database()
    dialog = window.database_dialog
    dialog.url_edit.setText(url)
    if query is not None:
        dialog.query_radio.setChecked(True)
        dialog.query_edit.setPlainText(query)
    else:
        dialog.table_edit.setText(table or "")
    dialog.password_edit.setText(password)
    dialog._on_ok()  # tests first, then accepts
    qtbot.waitUntil(lambda: window.workspace.state.source is not None
                    and window.workspace.state.source.source_spec.kind == "database"
                    and not window.pool.busy(), timeout=TIMEOUT)
