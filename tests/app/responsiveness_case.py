"""The window never freezes: while a 10⁶-row CSV loads and a K = 65,536 release runs, a 10 ms
timer on the GUI thread records its worst delay; it must stay under 200 ms.

Run by tests/app/test_app_responsiveness.py in a process of its own, as the app runs: in the one
process that has hosted the whole suite before it, the release step stalled 208–242 ms (not yet
understood: no collection over 10 ms, and 46 ms to show the result), against 54–129 ms alone."""

from __future__ import annotations

import gc
import inspect
import time

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pytest
from PySide6.QtCore import QTimer

from dpgui.app.main_window import WARM_UP_DELAY_MS
from gui_helpers import make_window, wait_plan

BINS = 65_536
ROWS = 1_000_000
LIMIT_MS = 200.0


class StallProbe:
    """A 10 ms timer on the GUI thread; ``worst_ms`` is the longest it was late."""

    def __init__(self, interval_ms: int = 10) -> None:
        self.interval = interval_ms / 1000
        self.worst_ms = 0.0
        self.worst_at = 0.0
        self.ticks = 0
        self._last = time.perf_counter()
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        late_ms = (now - self._last - self.interval) * 1000
        if late_ms > self.worst_ms:
            self.worst_ms, self.worst_at = late_ms, self._last  # worst_at: when that stall began
        self._last = now
        self.ticks += 1

    def start(self) -> None:
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> None:
        self._tick()  # the time since the last tick counts too: every moment from start to stop is measured
        self._timer.stop()


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "million.csv"
    rng = np.random.default_rng(5)
    table = pa.table({"id": np.arange(ROWS), "income": np.round(rng.gamma(2.0, 20_000.0, ROWS), 2),
                      "region": rng.choice(np.array(["north", "south", "east", "west"]), ROWS)})
    pa_csv.write_csv(table, path)
    return path


def test_event_loop_stays_responsive_while_loading_and_releasing(qtbot, big_csv):
    frozen_before = gc.get_freeze_count()
    gc.collect()  # this process also holds every earlier test's objects; the app holds only its own
    window = make_window(qtbot)
    # An idle window, as when a user opens a file: drawn, and its libraries imported in the background.
    qtbot.wait(WARM_UP_DELAY_MS + 200)
    qtbot.waitUntil(lambda: not window.pool.busy(), timeout=30_000)
    assert gc.get_freeze_count() > frozen_before  # start-up's objects are out of the full collections
    probe = StallProbe()
    collections: list[tuple[float, float, int]] = []  # (start, ms, generation): for the failure message
    gc_started = [0.0]

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            gc_started[0] = time.perf_counter()
        else:
            collections.append((gc_started[0], (time.perf_counter() - gc_started[0]) * 1000, info["generation"]))
    gc.callbacks.append(on_gc)
    probe.start()
    started = time.perf_counter()

    window.open_file(str(big_csv))
    qtbot.waitUntil(lambda: window.table is not None, timeout=60_000)
    qtbot.waitUntil(lambda: window._count_worker is None and not window.pool.busy(), timeout=60_000)
    assert f"{ROWS:,} rows" in window.data_page.file_label.text()
    loaded = time.perf_counter()
    load_stall = probe.worst_ms

    page = window.data_page
    assert page.select_column("income")
    page.lower.set_text("0")
    page.upper.set_text("400000")
    page.bins.set_text(str(BINS))
    page.bins.edited.emit()
    wait_plan(qtbot, window, BINS)
    inputs = window.release_inputs()
    assert inputs is not None
    assert window.check_budget(inputs[0].dataset_id, inputs[1].privacy.epsilon)  # sets the first cap
    planned = time.perf_counter()
    handled_inside = []
    shown: list[float] = []  # when the result began to be shown, and how long that took (ms)
    on_released = window._on_released

    def show_result(outcome) -> None:
        # the result must be handled by the event loop, not inside a progress update's nested loop
        handled_inside.append([frame.function for frame in inspect.stack()[1:] if frame.function == "on_progress"])
        shown.append(time.perf_counter())
        on_released(outcome)
        shown.append((time.perf_counter() - shown[0]) * 1000)
    window._on_released = show_result
    window.start_release(inputs)
    qtbot.waitUntil(lambda: window.outcome is not None, timeout=120_000)
    qtbot.wait(100)
    probe.stop()
    released = time.perf_counter()
    gc.callbacks.remove(on_gc)

    assert handled_inside == [[]]
    assert window.outcome.release.total == ROWS
    assert window.outcome.release.plan.shape.bins == BINS
    print(f"\nload {loaded - started:.2f} s (worst stall {load_stall:.0f} ms); plan+release "
          f"{released - loaded:.2f} s; worst stall overall {probe.worst_ms:.0f} ms over {probe.ticks} ticks")
    # Every gap between start, the ticks and stop is measured, so a timer that stopped ticking shows as
    # one long stall; how often it ticks in between varies with the machine's load and is not asserted.
    timeline = (f"the worst stall began {probe.worst_at - started:.2f} s after the start; file loaded at "
                f"{loaded - started:.2f} s, planned and budget set at {planned - started:.2f} s, released at "
                f"{released - started:.2f} s; showing the result began at {shown[0] - started:.2f} s and took "
                f"{shown[1]:.0f} ms; garbage collections over 10 ms: "
                f"{[(round(t - started, 2), round(ms), g) for t, ms, g in collections if ms > 10]}")
    assert probe.worst_ms < LIMIT_MS, timeline
