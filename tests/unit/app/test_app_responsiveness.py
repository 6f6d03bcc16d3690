"""The window never freezes because its slow work never runs on the GUI thread.

Asserted as a rule, by thread identity, not by timing (a timing limit fails on a busy machine):
every slow step the window runs while a user opens a file, plans, projects, tunes plot (c), finds
ε for an accuracy, releases and autosaves is wrapped to record the thread it runs on, and none may
be the GUI thread. How long the GUI thread stalls is measured by `make bench`
(benchmarks/bench_responsiveness.py), not here.
"""

from __future__ import annotations

import gc
import inspect
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pytest

from dpgui.app.cdf.mode import TAB_PLAN
from dpgui.app.shell.main_window import WARM_UP_DELAY_MS
from dpgui.app.workers import WorkerPool
from gui_helpers import TIMEOUT, make_window, open_and_wait, release_and_wait, set_column
from thread_log import SLOW_STEPS, ThreadLog, step_name

ROWS = 60_000  # over the 1 MiB head that CSV inspection reads, so the rows are counted in a worker too
BINS = 4096

@pytest.fixture
def big_csv(tmp_path):
    path = tmp_path / "incomes.csv"
    rng = np.random.default_rng(5)
    table = pa.table({"id": np.arange(ROWS), "income": np.round(rng.gamma(2.0, 20_000.0, ROWS), 2),
                      "region": rng.choice(np.array(["north", "south", "east", "west"]), ROWS)})
    pa_csv.write_csv(table, path)
    assert path.stat().st_size > 1 << 20
    return path


def test_slow_work_runs_on_worker_threads_never_the_gui_thread(qtbot, monkeypatch, big_csv):
    log = ThreadLog(monkeypatch)
    frozen_before = gc.get_freeze_count()
    window = make_window(qtbot)
    qtbot.wait(WARM_UP_DELAY_MS + 100)  # an idle window imports its libraries in the background
    qtbot.waitUntil(lambda: not window.pool.busy() and "main_window._import_libraries" in log.steps(), timeout=TIMEOUT)
    assert gc.get_freeze_count() > frozen_before  # start-up's objects are left out of full collections

    open_and_wait(qtbot, window, big_csv)
    assert f"{ROWS:,} rows" in window.data_page.file_label.text()  # counted in the background
    window.tabs.setCurrentIndex(TAB_PLAN)  # plot (c) is tuned only while the plots are shown
    set_column(qtbot, window, "income", "0", "400000", str(BINS))
    plots = window.plan_page.plots
    qtbot.waitUntil(lambda: not plots.projecting and not plots.optimisation_pending, timeout=60_000)

    page = window.plan_page
    page.target.set_text("2000")
    before = page.plan
    page.accuracy_first()
    qtbot.waitUntil(lambda: page.plan is not before and not page.is_planning(), timeout=TIMEOUT)

    # the result is handled by the event loop, not inside a progress update's nested event loop
    nested: list[list[str]] = []
    on_released = window.cdf._on_released
    window.cdf._on_released = lambda outcome: (
        nested.append([f.function for f in inspect.stack()[1:] if f.function == "on_progress"]), on_released(outcome))
    release_and_wait(qtbot, window)
    assert nested == [[]]
    assert window.cdf.outcome is not None and window.cdf.outcome.release.total == ROWS
    window.project.autosave_now()
    qtbot.waitUntil(lambda: "project._write_autosave" in log.steps() and not window.project._autosave_running,
                    timeout=TIMEOUT)

    every_step = {step_name(owner, name) for owner, name in SLOW_STEPS}
    assert log.steps() == every_step, f"not run in this workflow: {sorted(every_step - log.steps())}"
    assert log.on_gui_thread() == [], f"slow work on the GUI thread: {log.on_gui_thread()}"
    assert len({c.thread for c in log.calls}) >= 1 and log.gui_thread not in {c.thread for c in log.calls}


def test_the_thread_check_sees_slow_work_done_on_the_gui_thread(qtbot, monkeypatch, big_csv):
    """The check above can fail: with workers run in place (on the calling GUI thread), it names them."""
    log = ThreadLog(monkeypatch)

    def run_here(self: WorkerPool, worker: Any) -> Any:
        self._running.add(worker)
        worker.signals.finished.connect(lambda *_: self._running.discard(worker))
        worker.signals.failed.connect(lambda *_: self._running.discard(worker))
        worker.run()
        return worker

    monkeypatch.setattr(WorkerPool, "start", run_here)
    window = make_window(qtbot)
    open_and_wait(qtbot, window, big_csv)
    assert {"TableReader.__init__", "main_window.count_rows"} <= set(log.on_gui_thread())
