"""Redraw of the four projection plots (dpgui.app.cdf.projection_plots) when a parameter changes.

The plots are computed on a worker and drawn on the GUI thread, so two figures matter per change:

* **GUI time**: what the change costs the GUI thread, in which the window cannot react —
  ``set_plan`` itself, drawing the worker's result (``last_redraw_ms``) and painting all four plots
  (``widget.grab()``, about 50 ms at any K here); target ≤ 100 ms for every warm change (the
  limit for a reaction that feels instant);
* **until drawn**: from ``set_plan`` until the new plots are painted (worker included); target
  ≤ 200 ms for every warm change.

Scenarios per K, on a 1000×700 widget, offscreen (medians): ``cold`` (first plan at this K: its
caches are empty), ``new ε`` (a plan for an ε not seen before, auto-planned beforehand), ``new plan``
(another tree shape at the same ε), ``units`` (records ↔ % of N: no worker). Reported separately:
the workers that then complete plot (c)'s tuned-budget curve ("fill" after the cold draw,
"refine" after a new ε); the window stays responsive meanwhile.

Reference: setting new data on one plain 65,536-point pyqtgraph curve and grabbing it, in the
same process, so the ratios hold on a busy machine too.

    python benchmarks/bench_projection_plots.py [--repeats 7] [--check]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
from timing import median_time

from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.planner import auto_plan
from dpgui.core.tree import TreeShape

GUI_TARGET_MS = 100.0
DRAWN_TARGET_MS = 200.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--check", action="store_true", help="exit 1 if a warm redraw misses the target")
    args = parser.parse_args()

    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    import pyqtgraph as pg

    from dpgui.app.cdf.projection_plots import ProjectionPlots
    from dpgui.app.widgets.style import configure_pyqtgraph

    # ---- reference: one plain 65,536-point curve
    configure_pyqtgraph()
    plain = pg.PlotWidget()
    plain.resize(1000, 700)
    plain.show()
    curve = plain.plot()
    rng = np.random.default_rng(0)
    x = np.arange(65536, dtype=float)

    def draw_plain() -> None:
        curve.setData(x, np.cumsum(rng.standard_normal(65536)))
        plain.grab()

    reference_s, _ = median_time(draw_plain, args.repeats)
    reference_ms = reference_s * 1000
    plain.close()
    print(f"reference: one plain 65,536-point curve, setData + grab: {reference_ms:.1f} ms")

    widget = ProjectionPlots()
    widget.resize(1000, 700)
    widget.show()
    app.processEvents()

    def wait(condition) -> None:
        """Run the event loop until ``condition()`` (checked every 5 ms and after each draw; a busy
        loop here would take the interpreter lock from the workers it waits for)."""
        loop = QEventLoop()
        timer = QTimer()
        timer.timeout.connect(lambda: loop.quit() if condition() else None)
        widget.projected.connect(loop.quit)
        timer.start(5)
        while not condition():
            loop.exec()
        timer.stop()
        widget.projected.disconnect(loop.quit)

    def timed(action) -> tuple[float, float]:
        """(GUI-thread ms, ms until drawn) of ``action`` followed by the worker's draw and a paint."""
        start = time.perf_counter()
        action()
        gui = time.perf_counter() - start
        wait(lambda: not widget.projecting)
        paint_start = time.perf_counter()
        widget.grab()
        end = time.perf_counter()
        gui += widget.last_redraw_ms / 1000 + (end - paint_start)
        return gui * 1000, (end - start) * 1000

    def refined_ms() -> float:
        start = time.perf_counter()
        wait(lambda: not widget.optimisation_pending)
        return (time.perf_counter() - start) * 1000

    ok = True
    print(f"{'K':>9} {'scenario':>9} {'GUI time':>11} {'until drawn':>12} {'drawn vs reference':>19}")
    for bins in (1_000, 65_536, 1_000_000):
        privacy = PrivacySpec(1.0)
        first = auto_plan(bins, privacy)
        lower, upper, n_public = 0.0, 100_000.0, 10 * bins
        rows = [("cold", *timed(lambda: widget.set_plan(first, lower, upper, "income (€)", n_public)))]
        fill = refined_ms()

        # fresh ε values (not revisited, so nothing is served from an exact-ε cache entry)
        epsilons = iter(np.geomspace(0.55, 1.9, args.repeats + 1))
        plans = {e: auto_plan(bins, PrivacySpec(float(e))) for e in np.geomspace(0.55, 1.9, args.repeats + 1)}
        results: list[tuple[float, float]] = []

        def new_epsilon() -> None:
            results.append(timed(lambda: widget.set_plan(plans[next(epsilons)], lower, upper, "income (€)", n_public)))

        median_time(new_epsilon, args.repeats)
        rows.append(("new ε", float(np.median([r[0] for r in results])), float(np.median([r[1] for r in results]))))
        refine = refined_ms()

        shapes = [TreeShape.uniform(bins, b) for b in (2, 4, 8, 16, 32, 64, 128, 256)[: args.repeats + 1]]
        shaped = iter([Plan(s, privacy, equal_budgets(s, privacy), "gls") for s in shapes])
        results.clear()

        def new_plan() -> None:
            results.append(timed(lambda: widget.set_plan(next(shaped), lower, upper, "income (€)", n_public)))

        median_time(new_plan, min(args.repeats, len(shapes) - 1))
        rows.append(("new plan", float(np.median([r[0] for r in results])), float(np.median([r[1] for r in results]))))
        refined_ms()

        results.clear()

        def toggle() -> None:
            start = time.perf_counter()
            widget.set_percent_of_n(not widget.percent_of_n)
            widget.grab()
            ms = (time.perf_counter() - start) * 1000
            results.append((ms, ms))

        median_time(toggle, args.repeats)
        rows.append(("units", float(np.median([r[0] for r in results])), float(np.median([r[1] for r in results]))))

        for name, gui, drawn in rows:
            verdict = ""
            if name != "cold":
                passed = gui <= GUI_TARGET_MS and drawn <= DRAWN_TARGET_MS
                ok &= passed
                verdict = f"  [{'PASS' if passed else 'FAIL'}: GUI ≤ {GUI_TARGET_MS:.0f} ms, drawn ≤ {DRAWN_TARGET_MS:.0f} ms]"
            print(f"{bins:>9,} {name:>9} {gui:>8.1f} ms {drawn:>9.1f} ms {drawn / reference_ms:>18.1f}×{verdict}")
        print(f"{bins:>9,} {'fill':>9} {'':>11} {fill:>9.1f} ms  (plot (c)'s tuned-budget curve after the cold draw, on workers)")
        print(f"{bins:>9,} {'refine':>9} {'':>11} {refine:>9.1f} ms  (plot (c) re-tuned at a new ε, on workers)")
    widget.close()
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
