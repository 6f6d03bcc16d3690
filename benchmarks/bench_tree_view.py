"""Benchmark: painting the bin-tree view (dpgui.app.cdf.tree_view.BinTreeView) at K = 65,536.

    python benchmarks/bench_tree_view.py
    python benchmarks/bench_tree_view.py --check     # exit 1 if a paint takes 100 ms or more

Times ``widget.grab()`` (a full paint of the widget into a pixmap: toolbar, axes, tree, legend,
info line) of a 1100×560 BinTreeView for two trees with 65,536 bins — 16x16x16x16 (69,905 nodes)
and binary with 16 levels (131,071 nodes) — in the full view, zoomed to 1/100 of the range and
zoomed to 1/4,000 (single leaves a few pixels wide) and to 16 leaves, with hover and selection outlines on;
then the same for the planner's tree at K = 2^20 (15x15x15x15x21 with the missing values' leaf, 1.1 million nodes).
The baseline is the same grab of a plain pyqtgraph PlotWidget of the same size showing one
curve of 65,536 points, in the same process. Prints median times and the ratio to the baseline.
Runs offscreen (QT_QPA_PLATFORM=offscreen) unless a platform is set.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from timing import median_time

BINS = 65_536
BIG_BINS = 1 << 20
SIZE = (1100, 560)
TARGET = 0.100  # seconds per paint


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--check", action="store_true", help="exit 1 if a paint takes >= 100 ms")
    args = parser.parse_args()

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    import pyqtgraph as pg

    from dpgui.app.widgets.style import configure_pyqtgraph, series_pen
    from dpgui.app.cdf.tree_view import BinTreeView
    from dpgui.core.mechanism import release
    from dpgui.core.noise import SeededRandom
    from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
    from dpgui.core.planner import auto_plan
    from dpgui.core.tree import TreeShape

    configure_pyqtgraph()
    baseline = pg.PlotWidget(title="baseline")
    rng = np.random.default_rng(3)
    baseline.plot(np.arange(BINS, dtype=float), np.cumsum(rng.random(BINS)), pen=series_pen("plan"))
    baseline.resize(*SIZE)
    baseline.show()
    app.processEvents()
    base_time, _ = median_time(baseline.grab, args.repeats)
    print(f"baseline: pyqtgraph curve with {BINS:,} points  {base_time * 1e3:8.2f} ms")

    worst = 0.0
    privacy = PrivacySpec(1.0)
    for shape in (TreeShape(BINS, (16, 16, 16, 16)), TreeShape(BINS, (2,) * 16),
                  auto_plan(BIG_BINS, privacy).shape):  # the planner's tree for 2^20 bins
        counts = rng.poisson(20, shape.bins)
        plan = Plan(shape, privacy, equal_budgets(shape, privacy))
        view = BinTreeView()
        view.resize(*SIZE)
        view.set_plan(plan, 0.0, 5000.0, "distance (miles)")
        view.set_release(release(counts, plan, SeededRandom(1), 0.0, 5000.0))
        view.show()
        app.processEvents()
        view.select_node(shape.height, 30_000)
        span = 5000.0
        print(f"\ntree {shape.label} for K = {shape.bins:,}: {shape.node_count:,} nodes")
        for name, window in (("full view", None),
                               ("zoom 1/100", (0.4 * span, 0.41 * span)),
                               ("zoom 1/4,000", (0.4578 * span, 0.4578 * span + span / 4000)),
                               ("16 leaves", (0.4578 * span, 0.4578 * span + 16 * span / shape.bins))):
            if window is None:
                view.reset_zoom()
            else:
                view.set_x_range(*window)
            x_mid = sum(view.x_range()) / 2
            view.hover_at(x_mid, shape.height + 0.5)
            app.processEvents()
            seconds, _ = median_time(view.grab, args.repeats)
            worst = max(worst, seconds)
            print(f"  {name:<13} {seconds * 1e3:8.2f} ms   ratio to baseline {seconds / base_time:5.2f}")
        view.close()
    print(f"\nworst paint {worst * 1e3:.2f} ms (target < {TARGET * 1e3:.0f} ms)")
    return 1 if args.check and worst >= TARGET else 0


if __name__ == "__main__":
    sys.exit(main())
