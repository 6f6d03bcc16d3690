"""Which thread each slow step of the window runs on: the steps and a log of their calls (the
responsiveness rule: never the GUI thread)."""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import Any

import pytest
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

import dpgui.app.shell.main_window as main_window_module
import dpgui.app.cdf.plan_page as plan_page_module
import dpgui.app.shell.project as project_module
import dpgui.workspace.flow as flow_module
import dpgui.workspace.planning as planning_module
from dpgui.app.cdf.projection_plots import ProjectionCache
from dpgui.data.file_source import FileSource
from dpgui.data.table import TableReader

# Each slow step as (where it is looked up when the window calls it, its name there): the window's
# module globals, so the wrapper is what the window calls; class attributes wrap every caller.
SLOW_STEPS: tuple[tuple[Any, str], ...] = (
    (main_window_module, "_import_libraries"),  # pandas and SciPy, imported after start-up
    (TableReader, "__init__"),  # opening a file: inspecting it and reading the preview's first rows
    (main_window_module, "count_rows"),  # a CSV's rows, counted when its head does not hold them all
    (planning_module, "auto_plan"),  # planning the tree and its budgets
    (plan_page_module, "plan_for_accuracy"),  # "accuracy first": the smallest ε for an error
    (ProjectionCache, "project"),  # the projected error of plots (a)–(c)
    (ProjectionCache, "refine"),  # plot (c)'s tuned curve
    (FileSource, "histogram"),  # reading the column for a release (through dpgui.data.source)
    (flow_module, "spend_and_release"),  # the ledger spend, the noise and the estimation
    (project_module, "_write_autosave"),  # the workspace's autosave
)


def step_name(owner: Any, name: str) -> str:
    """"main_window.count_rows", "TableReader.__init__": the step's place, short."""
    return f"{owner.__name__.rsplit('.', 1)[-1]}.{name}"


@dataclass(frozen=True)
class Call:
    step: str
    thread: int  # threading.get_ident() of the thread it ran on
    qt_gui_thread: bool  # QThread.currentThread() is the application's (GUI) thread


class ThreadLog:
    """Wraps each slow step to record the thread it runs on (a list append: thread-safe)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, steps: tuple[tuple[Any, str], ...] = SLOW_STEPS) -> None:
        self.calls: list[Call] = []
        self.gui_thread = threading.get_ident()
        app = QApplication.instance()
        assert app is not None and QThread.currentThread() is app.thread()  # the test runs on the GUI thread
        for owner, name in steps:
            monkeypatch.setattr(owner, name, self._wrap(getattr(owner, name), step_name(owner, name)))

    def _wrap(self, function: Any, step: str) -> Any:
        @functools.wraps(function)
        def recorded(*args: Any, **kwargs: Any) -> Any:
            app = QApplication.instance()
            self.calls.append(Call(step, threading.get_ident(), app is not None and QThread.currentThread() is app.thread()))
            return function(*args, **kwargs)
        return recorded

    def steps(self) -> set[str]:
        return {call.step for call in self.calls}

    def on_gui_thread(self) -> list[str]:
        """The steps that ran on the GUI thread (by Python's and by Qt's idea of the thread)."""
        return sorted({c.step for c in self.calls if c.thread == self.gui_thread or c.qt_gui_thread})
