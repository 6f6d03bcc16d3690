"""A folder of Parquet files opens from the window as one table: File → Open Parquet Folder…,
drag-and-drop of the folder, and the recent files list; its counts equal those of the same rows in one
file. A folder without Parquet files is one message, nothing opened."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog

from dpgui.data.histogram import column_histogram

from gui_helpers import TIMEOUT, error_text, make_window, release_and_wait, set_column


@pytest.fixture
def folder(tmp_path) -> tuple[Path, Path]:
    """Three Parquet parts of 150 ages each (and Spark's _SUCCESS marker), and one file of the same rows."""
    rng = np.random.default_rng(16)
    ages = rng.integers(0, 100, 450).astype(float)
    ages[[5, 200]] = np.nan
    parts = tmp_path / "ages"
    parts.mkdir()
    for i in range(3):
        pq.write_table(pa.table({"age": ages[150 * i:150 * (i + 1)]}), parts / f"part-{i:05d}.parquet")
    (parts / "_SUCCESS").write_bytes(b"")
    whole = tmp_path / "whole.parquet"
    pq.write_table(pa.table({"age": ages}), whole)
    return parts, whole


def wait_opened(qtbot, window, path: Path) -> None:
    qtbot.waitUntil(lambda: window.table is not None and window.table.path == path, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: window._count_worker is None and not window.pool.busy(), timeout=TIMEOUT)


def test_file_menu_opens_a_parquet_folder_as_one_table(qtbot, folder, monkeypatch):
    parts, whole = folder
    window = make_window(qtbot)
    assert window.open_folder_action in window.menuBar().actions()[0].menu().actions()
    asked: list[str] = []
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *a, **k: asked.append(a[1]) or str(parts)))
    window.open_folder_action.trigger()
    assert asked == ["Open a folder of Parquet files"]
    wait_opened(qtbot, window, parts)
    assert window.workspace.state.source.n_rows == 450
    set_column(qtbot, window, "age", "0", "100", "20")
    release_and_wait(qtbot, window)
    assert np.array_equal(window.cdf.outcome.counts, column_histogram(whole, "age", 0.0, 100.0, 20).counts)
    # the recent files list holds the folder, and opens it again
    assert window.recent_files()[0] == str(parts.resolve())
    assert window.recent_menu.actions()[0].text().endswith("ages (folder)")


def test_dropping_a_folder_and_the_recent_list_open_it(qtbot, folder, tmp_path):
    parts, _ = folder
    window = make_window(qtbot)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(parts))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    wait_opened(qtbot, window, parts)
    assert [c.name for c in window.table.columns] == ["age"]
    other = tmp_path / "other.csv"
    other.write_text("x\n1\n2\n")
    window.open_file(str(other))
    wait_opened(qtbot, window, other)
    window.recent_menu.actions()[1].trigger()  # the folder, second newest
    wait_opened(qtbot, window, parts)
    assert window.workspace.state.source.n_rows == 450


def test_a_folder_without_parquet_files_is_one_message(qtbot, tmp_path):
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    (empty / "notes.txt").write_text("no data")
    window = make_window(qtbot)
    window.open_file(str(empty))
    qtbot.waitUntil(lambda: error_text(window) != "" and not window.pool.busy(), timeout=TIMEOUT)
    assert "\n" not in error_text(window) and "Parquet" in error_text(window), error_text(window)
    assert window.table is None


def test_a_project_saved_on_a_parquet_folder_opens_it_again(qtbot, folder, tmp_path, monkeypatch):
    """The project's data is the folder: reopening it must not call it "not found" (it is not a file)."""
    parts, _ = folder
    window = make_window(qtbot)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(parts)))
    window.open_folder_action.trigger()
    wait_opened(qtbot, window, parts)
    set_column(qtbot, window, "age", "0", "100", "20")
    project_path = tmp_path / "ages.dpgui"
    assert window.project.save_to(project_path)
    again = make_window(qtbot)
    assert again.project.open_project(project_path)
    wait_opened(qtbot, again, parts)
    assert error_text(again) == ""
    assert again.workspace.state.source.n_rows == 450


def test_the_export_dialog_never_writes_a_bundle_into_the_folder_it_reads(qtbot, folder, tmp_path):
    from dpgui.core.noise import SecureRandom
    from dpgui.report.keystore import create_key

    parts, _ = folder
    window = make_window(qtbot)
    window.noise_source = SecureRandom  # only secure releases are signed
    window.open_file(str(parts))
    wait_opened(qtbot, window, parts)
    set_column(qtbot, window, "age", "0", "100", "20")
    release_and_wait(qtbot, window)
    create_key("officer", "folder export passphrase")
    before = sorted(p.name for p in parts.iterdir())
    dialog = window.cdf.export_dialog()
    assert dialog is not None, error_text(window)
    dialog.passphrase.setText("folder export passphrase")
    for inside in (parts, parts / "sub"):
        inside.mkdir(exist_ok=True)
        dialog.folder.setText(str(inside))
        assert dialog.export() is None
        assert "inside the input folder" in dialog.message.text()
    (parts / "sub").rmdir()
    assert sorted(p.name for p in parts.iterdir()) == before  # nothing written among the parts
    out = tmp_path / "out"
    out.mkdir()
    dialog.folder.setText(str(out))
    assert dialog.export() is not None, dialog.message.text()
