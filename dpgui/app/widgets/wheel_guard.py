"""The mouse wheel never changes a setting the officer did not choose to change.

Qt's combo boxes, spin boxes and sliders take the wheel whenever the pointer is over them: scrolling a
page past the consistency box or a level's budget changed it, silently. :class:`WheelGuard`, one event
filter on the whole application (every page and dialog, made before or after it), makes each such widget
take the wheel only while it has keyboard focus (the officer clicked or tabbed into it), and gives the
wheel to the scroll area around it otherwise, so the page still scrolls:

* on ``Polish`` (once, before a widget is first shown) a guarded widget whose focus policy includes the
  wheel gets ``StrongFocus`` (click and Tab), so the wheel never hands it the focus (and the change) itself;
* on ``Wheel`` over a guarded widget without focus, the event is sent to the scroll bar of the nearest
  scroll area around it that can scroll that way, and the widget never sees it.

Guarded: :class:`QComboBox`, :class:`QAbstractSpinBox` (spin boxes, date edits) and
:class:`QAbstractSlider` except scroll bars (whose job is the wheel). GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSlider, QAbstractSpinBox, QComboBox, QScrollBar, QWidget

GUARDED = (QComboBox, QAbstractSpinBox, QAbstractSlider)


def is_guarded(widget: QObject) -> bool:
    """Does ``widget`` change a value on the wheel (a combo box, spin box or slider, not a scroll bar)?"""
    return isinstance(widget, GUARDED) and not isinstance(widget, QScrollBar)


def scroll_bar_for(widget: QWidget, vertical: bool) -> QScrollBar | None:
    """The scroll bar (vertical or horizontal) of the nearest scroll area around ``widget`` that can move
    that way, or None."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea):
            bar = parent.verticalScrollBar() if vertical else parent.horizontalScrollBar()
            if bar is not None and bar.maximum() > bar.minimum():
                return bar
        parent = parent.parentWidget()
    return None


class WheelGuard(QObject):
    """The application-wide event filter of the module doc (install it once on the QApplication)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.Polish and is_guarded(watched):
            assert isinstance(watched, QWidget)
            if watched.focusPolicy() == Qt.FocusPolicy.WheelFocus:
                watched.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        elif kind == QEvent.Type.Wheel and is_guarded(watched):
            assert isinstance(watched, QWidget) and isinstance(event, QWheelEvent)
            if watched.hasFocus():
                return False
            delta = event.angleDelta()
            bar = scroll_bar_for(watched, vertical=abs(delta.y()) >= abs(delta.x()))
            if bar is not None:
                QCoreApplication.sendEvent(bar, event)
            event.accept()
            return True
        return False


def install_wheel_guard(app: QCoreApplication) -> WheelGuard:
    """Install the one :class:`WheelGuard` of ``app`` (again: the one already there)."""
    guard = app.findChild(WheelGuard)
    if guard is None:
        guard = WheelGuard(app)
        app.installEventFilter(guard)
    return guard
