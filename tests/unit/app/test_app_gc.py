"""Python's cyclic garbage collector runs on the GUI thread only: a worker must never destroy Qt objects."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest
from PySide6.QtCore import QObject

from dpgui.app.main import GuiThreadCollector, create_application
from dpgui.app.workers import Worker, WorkerPool

pytestmark = pytest.mark.slow


class _Cyclic(QObject):
    """A Qt object only the cyclic collector can free (it refers to itself)."""

    def __init__(self) -> None:
        super().__init__()
        self.me = self


def _allocate(progress, should_cancel) -> list:
    """Enough live containers to cross gc's first threshold many times over (kept: freeing them
    would count them off again)."""
    return [[i] for i in range(200_000)]


def test_garbage_with_qt_objects_is_collected_on_the_gui_thread_not_in_a_worker(qtbot):
    app = create_application()
    assert app.findChildren(GuiThreadCollector) and len(app.findChildren(GuiThreadCollector)) == 1
    create_application()  # again, as every new window does: still one collector
    assert len(app.findChildren(GuiThreadCollector)) == 1
    assert not gc.isenabled()
    gc.collect()
    freed_on: list[int] = []
    obj = _Cyclic()
    weakref.finalize(obj, lambda: freed_on.append(threading.get_ident()))
    del obj  # now garbage, in a reference cycle
    pool = WorkerPool()
    done = []
    pool.start(Worker(_allocate).connect_to(app, finished=done.append))
    qtbot.waitUntil(lambda: bool(done) and bool(freed_on), timeout=30_000)
    # the worker's allocations made a collection due; the collector's timer ran it, on this thread
    assert freed_on == [threading.get_ident()]


def test_the_collector_collects_the_generations_that_are_due():
    gc.disable()  # as in the app (the fixture turns it on again)
    gc.collect()
    assert GuiThreadCollector.collect() == 0  # nothing due right after a full collection
    threshold = gc.get_threshold()[0]
    garbage = []
    for _ in range(threshold + 10):
        a: list = []
        a.append(a)
        garbage.append(a)
    del a
    count = gc.get_count()[0]
    garbage.clear()  # threshold + 10 cycles, still counted in generation 0 (only a collection frees them)
    assert gc.get_count()[0] == count
    assert GuiThreadCollector.collect() >= threshold + 10
    assert gc.get_count()[0] < 10
