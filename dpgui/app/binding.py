"""The window's one way to follow the workspace: a Qt signal for its change notifications.

:class:`WorkspaceBinding` subscribes to a :class:`~dpgui.workspace.state.Workspace` and re-emits
each notification as ``changed(parts)``. Widgets and controllers connect to that signal (Qt ends a
connection when its receiver is deleted) and read ``binding.workspace.state``; the pages write what
the officer types with ``binding.workspace.update…``.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QObject, Signal

from dpgui.workspace.state import Workspace


class WorkspaceBinding(QObject):
    """Emits ``changed`` (a ``frozenset[str]`` of the changed parts) after each change of ``workspace``,
    synchronously, on the thread that made the change (the GUI thread)."""

    changed = Signal(object)

    def __init__(self, workspace: Workspace, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self._unsubscribe = workspace.subscribe(self._forward)

    def _forward(self, parts: frozenset[str]) -> None:
        if shiboken6.isValid(self):  # the window (its parent) may be gone while the workspace lives on
            self.changed.emit(parts)
        else:
            self._unsubscribe()
