"""User text (column, file and dataset names) shows literally wherever the window uses rich text:
a name like ``<b>x</b><!--`` can neither format nor hide the rest of the confirmation."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
import pytest

from gui_helpers import make_window, open_and_wait, release_and_wait, set_column

pytestmark = pytest.mark.slow

COLUMN = "<b>x</b><!--"
FILE = "pay<!--roll.csv"


def shown(rich: str) -> str:
    """What a reader sees of a rich text (tags applied, comments hidden)."""
    document = QTextDocument()
    document.setHtml(rich)
    return document.toPlainText()


def _window_with_markup_names(qtbot, tmp_path):
    path = tmp_path / FILE
    path.write_text(f"{COLUMN},other\n" + "".join(f"{i % 90},{i}\n" for i in range(400)), encoding="utf-8")
    window = make_window(qtbot, seed=5)
    open_and_wait(qtbot, window, path)
    set_column(qtbot, window, COLUMN, "0", "100", "20")
    return window


def test_the_confirmation_shows_markup_in_names_literally_and_hides_nothing(qtbot, tmp_path):
    window = _window_with_markup_names(qtbot, tmp_path)
    window.data_page.dataset_name.setText("<i>ds</i><!--")
    from dpgui.report.ledger import Ledger

    with Ledger() as ledger:
        ledger.set_cap("<i>ds</i><!--", 5.0, 0.0, "test")
    box = window.cdf.confirmation_box(window.cdf.release_inputs())
    assert box.textFormat() == Qt.TextFormat.RichText
    seen = shown(box.text())
    assert COLUMN in seen and FILE in seen and "<i>ds</i><!--" in seen
    # nothing after the names is hidden by the '<!--' they contain
    for words in ("Cost: ε = 1", "Method: a tree of noisy counts", "after this release: ε = 1 of 5"):
        assert words in seen, seen


def test_the_status_line_and_file_label_show_names_literally(qtbot, tmp_path):
    window = _window_with_markup_names(qtbot, tmp_path)
    assert FILE in shown(window.data_page.file_label.text())
    assert "400 rows" in shown(window.data_page.file_label.text())
    release_and_wait(qtbot, window)
    seen = shown(window.release_status.text())
    assert f"Released {COLUMN} at" in seen and "Export it as a signed bundle to share it." in seen
    item = window.data_page.columns.item(0)
    assert COLUMN in shown(item.toolTip())
    # the plots' axis labels (pyqtgraph renders them as rich text)
    import pyqtgraph as pg

    window.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: any("upper edge of each bin" in shown(p.getPlotItem().getAxis("bottom").labelText)
                                for p in window.plan_page.plots.findChildren(pg.PlotWidget)), timeout=30_000)
    labels = [shown(p.getPlotItem().getAxis("bottom").labelText) for p in window.plan_page.plots.findChildren(pg.PlotWidget)]
    assert f"{COLUMN}, upper edge of each bin" in labels, labels
    assert shown(window.tree_view.plot_widget.getPlotItem().getAxis("bottom").labelText) == COLUMN


def test_error_dialogs_show_names_literally(qtbot, tmp_path):
    window = make_window(qtbot)
    window.show_error("Cannot open this file", f"'{COLUMN}' is not there. Choose another file.")
    assert window._error_box.textFormat() == Qt.TextFormat.PlainText
