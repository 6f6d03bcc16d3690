"""The mouse wheel changes no combo box, spin box or slider that lacks keyboard focus, on any page or dialog
of the window; the page scrolls instead (dpgui.app.widgets.wheel_guard)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea, QAbstractSlider, QAbstractSpinBox, QApplication, QComboBox, QScrollBar, QWidget,
)

from dpgui.data.file_types import CsvDialect
from gui_helpers import TIMEOUT, make_window, wait_plan

NOTCHES = (-120, 120, -360)  # one notch down, one up, three down


def wheel(widget: QWidget, dy: int) -> None:
    """A wheel turn of ``dy`` eighths of a degree over the middle of ``widget``."""
    pos = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(pos, QPointF(widget.mapToGlobal(pos.toPoint())), QPoint(), QPoint(0, dy),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def setting_widgets(root: QWidget) -> list[QWidget]:
    """Every combo box, spin box and slider (not scroll bars) under ``root``, dialogs parented to it included."""
    found: list[QWidget] = []
    for kind in (QComboBox, QAbstractSpinBox, QAbstractSlider):
        found += [w for w in root.findChildren(kind) if not isinstance(w, QScrollBar)]
    return found


def value(widget: QWidget) -> object:
    if isinstance(widget, QComboBox):
        return widget.currentIndex(), widget.currentText()
    if isinstance(widget, QAbstractSpinBox):
        return widget.text()
    assert isinstance(widget, QAbstractSlider)
    return widget.value()


def open_every_dialog(window) -> list[QWidget]:
    """The window's dialogs that hold settings, shown (so that they are polished) and parented to it."""
    from dpgui.app.dialogs.dialect import DialectDialog
    from dpgui.app.dialogs.database import DatabaseDialog
    from dpgui.app.dialogs.dataset import NewDatasetDialog
    from dpgui.app.dialogs.keys import CreateKeyDialog, KeyManagerDialog
    from dpgui.app.dialogs.ledger import BudgetForm, LedgerDialog
    from dpgui.app.dialogs.verify import VerifyDialog

    dialogs = [DialectDialog(CsvDialect(",", "."), window), NewDatasetDialog("people", 1.0, (), window),
               DatabaseDialog(window), KeyManagerDialog(window), CreateKeyDialog(window), LedgerDialog(window),
               BudgetForm(window, None), VerifyDialog(window)]
    for dialog in dialogs:
        dialog.show()
    return dialogs


def assert_wheel_changes_nothing(widgets: list[QWidget]) -> None:
    changed = []
    for widget in widgets:
        assert not widget.hasFocus()
        before = value(widget)
        for dy in NOTCHES:
            wheel(widget, dy)
            QApplication.processEvents()
        if value(widget) != before:
            changed.append(f"{type(widget).__name__} {widget.objectName() or widget.toolTip()[:50]!r}: "
                           f"{before} -> {value(widget)}")
    assert not changed, "the wheel changed settings without focus:\n" + "\n".join(changed)


def vertical_scroll_bar_around(widget: QWidget) -> QScrollBar | None:
    """The vertical scroll bar of the nearest scroll area around ``widget`` that can scroll, or None."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea) and parent.verticalScrollBar().maximum() > 0:
            return parent.verticalScrollBar()
        parent = parent.parentWidget()
    return None


def assert_page_scrolls(widgets: list[QWidget]) -> int:
    """Over a setting inside a scroll area that can scroll, the wheel scrolls the area. Returns how many."""
    scrolled = 0
    for widget in widgets:
        if not widget.isVisible():
            continue
        bar = vertical_scroll_bar_around(widget)
        if bar is None:
            continue
        bar.setValue(bar.minimum())
        wheel(widget, -120)
        assert bar.value() > bar.minimum(), f"the page did not scroll over {type(widget).__name__}"
        scrolled += 1
    return scrolled


def test_the_wheel_changes_no_setting_without_focus_on_any_page_or_dialog(qtbot):
    window = make_window(qtbot)
    window.resize(1000, 520)  # short: the plan panel and the hierarchy steps scroll
    window.open_sample()
    qtbot.waitUntil(lambda: window.table is not None and window.data_page.current_column() is not None,
                    timeout=TIMEOUT)
    wait_plan(qtbot, window, 1000)
    window.tabs.setCurrentIndex(1)  # the plan panel, as in the report: its consistency box and level budgets
    dialogs = open_every_dialog(window)
    widgets = setting_widgets(window)
    assert len(widgets) >= 25 and window.plan_page.consistency in widgets
    assert len(window.plan_page.budgets.findChildren(QAbstractSpinBox)) >= 2  # a budget per level of the plan
    assert_wheel_changes_nothing(widgets)
    assert assert_page_scrolls(widgets) >= 3
    for dialog in dialogs:
        dialog.close()

    # the counts-over-a-hierarchy mode's steps, on its sample with the levels read and planned
    window.open_hierarchy_sample()
    page = window.hierarchy
    qtbot.waitUntil(lambda: page.state_ws.state.planned is not None, timeout=TIMEOUT)
    widgets = setting_widgets(page)
    assert page.consistency in widgets and all(combo in widgets for combo in page.level_combos)
    levels = [c.currentData() for c in page.level_combos]
    assert_wheel_changes_nothing(widgets)
    assert [c.currentData() for c in page.level_combos] == levels
    page.tabs.setCurrentIndex(0)  # step 1 scrolls in a short window: its level choosers
    QApplication.processEvents()
    assert assert_page_scrolls(page.level_combos) >= 1


def test_the_wheel_still_changes_a_setting_that_has_focus(qtbot):
    """Clicked or tabbed into, a combo box takes the wheel as usual; the wheel never gives it the focus."""
    window = make_window(qtbot)
    window.open_sample()
    qtbot.waitUntil(lambda: window.table is not None, timeout=TIMEOUT)
    window.tabs.setCurrentIndex(1)
    combo = window.plan_page.consistency
    assert combo.focusPolicy() == Qt.FocusPolicy.StrongFocus  # not WheelFocus
    window.activateWindow()
    combo.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(combo.hasFocus, timeout=5000)
    before = combo.currentIndex()
    wheel(combo, -120 if before < combo.count() - 1 else 120)
    assert combo.currentIndex() != before
