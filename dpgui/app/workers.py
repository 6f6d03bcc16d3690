"""Slow work off the GUI thread: one QRunnable type with progress, cancel and a typed result.

The task function runs on a QThreadPool thread and receives ``progress(fraction, message)`` and
``should_cancel()``; its return value (or a DpguiError's one-line message) comes back to the GUI
thread through queued signals. The GUI never blocks: it only reacts to those signals.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Qt, QThreadPool, Signal
from PySide6.QtWidgets import QProgressBar, QProgressDialog, QWidget

from dpgui.app.text import friendly
from dpgui.errors import Cancelled, DpguiError


class WorkerSignals(QObject):
    progress = Signal(float, str)  # fraction 0..1, what is happening (plain words)
    finished = Signal(object)  # the task's return value
    failed = Signal(str)  # one-line message for the user: the problem and the fix
    cancelled = Signal()


PROGRESS_INTERVAL_S = 0.05  # at most 20 progress updates a second reach the GUI thread (each one repaints)


class Worker:
    """Runs ``task(*args, progress=..., should_cancel=..., **kwargs)`` on the global thread pool.

    A plain Python object, not a QRunnable subclass: the pool is given the bound method ``run`` and
    owns the C++ runnable it makes of it. (A QRunnable subclass whose Python wrapper dies in the
    pool thread while the pool still holds it corrupts memory; seen as refcount crashes at exit.)
    """

    def __init__(self, task: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.signals = WorkerSignals()
        self._task, self._args, self._kwargs = task, args, kwargs
        self._cancel_requested = False
        self._last_report: tuple[float, str] | None = None  # (time, message) of the last progress sent

    def connect_to(self, owner: QObject, finished: Callable[[Any], None] | None = None,
                   failed: Callable[[str], None] | None = None, cancelled: Callable[[], None] | None = None,
                   progress: Callable[[float, str], None] | None = None) -> Worker:
        """Connect callbacks that run only while ``owner`` (a widget) still exists: a result that
        arrives after its window was closed is dropped instead of touching deleted widgets."""
        for signal, callback in ((self.signals.finished, finished), (self.signals.failed, failed),
                                 (self.signals.cancelled, cancelled), (self.signals.progress, progress)):
            if callback is not None:
                signal.connect(lambda *args, cb=callback: cb(*args) if shiboken6.isValid(owner) else None)
        return self

    def cancel(self) -> None:
        """Ask the task to stop at its next check; it reports `cancelled` when it does."""
        self._cancel_requested = True

    def is_cancel_requested(self) -> bool:
        return self._cancel_requested

    def run(self) -> None:  # worker thread
        try:
            result = self._task(*self._args, progress=self._report, should_cancel=self.is_cancel_requested,
                                **self._kwargs)
        except Cancelled:
            self.signals.cancelled.emit()
        except DpguiError as err:
            self.signals.failed.emit(friendly(err))
        except MemoryError:
            self.signals.failed.emit("Not enough memory for this job. Use fewer bins or close other programs.")
        except Exception as err:  # noqa: BLE001 — anything else is a bug; report it, never crash the window
            traceback.print_exc()
            self.signals.failed.emit(f"Unexpected error: {type(err).__name__}: {err}. Nothing was released; please report this.")
        else:
            if self._cancel_requested and result is None:
                self.signals.cancelled.emit()
            else:
                self.signals.finished.emit(result)

    def _report(self, fraction: float, message: str = "") -> None:
        """Forward progress, dropping updates that come less than PROGRESS_INTERVAL_S after the last
        one unless they change the message or say "done" (readers report after every block)."""
        now = time.monotonic()
        last = self._last_report
        if last is not None and message == last[1] and fraction < 1.0 and now - last[0] < PROGRESS_INTERVAL_S:
            return
        self._last_report = (now, message)
        self.signals.progress.emit(float(fraction), message)


class WorkerPool:
    """Keeps running workers alive (Python side) and starts them on the global pool."""

    def __init__(self) -> None:
        self._running: set[Worker] = set()

    def start(self, worker: Worker) -> Worker:
        self._running.add(worker)
        for signal in (worker.signals.finished, worker.signals.failed, worker.signals.cancelled):
            signal.connect(lambda *_, w=worker: self._running.discard(w))
        QThreadPool.globalInstance().start(worker.run)
        return worker

    def busy(self) -> bool:
        return bool(self._running)

    def cancel_all(self) -> None:
        for worker in list(self._running):
            worker.cancel()

    def wait(self, msecs: int = 30000) -> bool:
        return QThreadPool.globalInstance().waitForDone(msecs)


def release_progress_dialog(parent: QWidget, worker: Worker,
                            point_of_no_return: str) -> tuple[QProgressDialog, Callable[[float, str], None]]:
    """The window-modal "Releasing" dialog of a release on ``worker`` (CDF or hierarchy), and its
    progress callback: Cancel cancels the worker until the progress message is ``point_of_no_return``
    (the noise is being drawn), then the Cancel button goes. Not shown yet; the caller closes it."""
    dialog = QProgressDialog("Preparing the release…", "Cancel", 0, 1000, parent)
    dialog.setWindowTitle("Releasing")
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(0)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    # progress goes to the bar itself: a modal QProgressDialog's setValue() runs a nested event
    # loop, in which the release's own result (and anything else queued) would be handled
    bar = QProgressBar(dialog)
    bar.setRange(0, 1000)
    dialog.setBar(bar)
    dialog.canceled.connect(worker.cancel)

    def on_progress(fraction: float, message: str) -> None:
        bar.setValue(int(1000 * fraction))
        dialog.setLabelText(message)
        if message == point_of_no_return:
            dialog.setCancelButton(None)  # past the point of no return

    return dialog, on_progress
