"""Workers: results, one-line failures, cancellation — and no crash after many cross-thread signals."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from dpgui.app.workers import Worker, WorkerPool
from dpgui.errors import Cancelled, ParameterError


def _run(qtbot, task):
    pool = WorkerPool()
    events: list[tuple[str, object]] = []
    worker = Worker(task)
    worker.signals.finished.connect(lambda r: events.append(("finished", r)))
    worker.signals.failed.connect(lambda m: events.append(("failed", m)))
    worker.signals.cancelled.connect(lambda: events.append(("cancelled", None)))
    worker.signals.progress.connect(lambda f, m: events.append(("progress", f)))
    pool.start(worker)
    qtbot.waitUntil(lambda: any(kind != "progress" for kind, _ in events), timeout=10_000)
    return worker, events


def test_result_and_progress_arrive_on_the_gui_thread(qtbot):
    def task(progress, should_cancel):
        progress(0.5, "half")
        return 42

    _, events = _run(qtbot, task)
    assert events == [("progress", 0.5), ("finished", 42)]


def test_progress_is_thinned_to_twenty_a_second_but_keeps_new_messages_and_the_end(qtbot):
    def task(progress, should_cancel):
        for i in range(10_000):  # a reader reporting after every block, far faster than 20 a second
            progress(i / 10_000, "reading")
        progress(0.99, "adding noise")  # a new message always gets through …
        progress(1.0, "adding noise")  # … and so does the end
        return None

    _, events = _run(qtbot, task)
    fractions = [f for kind, f in events if kind == "progress"]
    assert fractions[0] == 0.0 and fractions[-2:] == [0.99, 1.0]
    assert len(fractions) < 100  # not 10,002 repaints of the progress bar


def test_a_dpgui_error_becomes_two_plain_sentences(qtbot):
    def task(progress, should_cancel):
        raise ParameterError("bounds inverted", "make the lower bound smaller")

    _, events = _run(qtbot, task)
    assert events == [("failed", "Bounds inverted. Make the lower bound smaller.")]


def test_an_unexpected_error_is_reported_not_raised(qtbot, capsys):
    def task(progress, should_cancel):
        raise ZeroDivisionError("boom")

    _, events = _run(qtbot, task)
    assert events[0][0] == "failed" and "ZeroDivisionError" in events[0][1] and "Nothing was released" in events[0][1]


def test_cancel_is_seen_by_the_task(qtbot):
    import threading

    started = threading.Event()

    def task(progress, should_cancel):
        started.set()
        while not should_cancel():
            pass
        raise Cancelled("stopped", "")

    pool = WorkerPool()
    worker = Worker(task)
    events: list[str] = []
    worker.signals.cancelled.connect(lambda: events.append("cancelled"))
    pool.start(worker)
    assert started.wait(5)
    worker.cancel()
    qtbot.waitUntil(lambda: events == ["cancelled"], timeout=5_000)
    assert not pool.busy()


def test_many_cross_thread_signals_then_a_clean_exit():
    """PySide6 6.12.0 corrupted refcounts here (fatal error at exit); pyproject pins < 6.12."""
    script = textwrap.dedent("""
        import os, time
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        from PySide6.QtWidgets import QApplication, QWidget
        app = QApplication([])
        from dpgui.app.workers import Worker, WorkerPool
        pool, got = WorkerPool(), []
        for i in range(300):
            owner = QWidget()
            worker = Worker(lambda progress, should_cancel: (progress(0.5, "x"), object())[1])
            worker.connect_to(owner, finished=got.append, progress=lambda f, m: None)
            pool.start(worker)
            while pool.busy():
                app.processEvents(); time.sleep(0.0005)
            owner.deleteLater()
        app.processEvents()
        print(len(got))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "300"
