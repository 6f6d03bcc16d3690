"""The window at K = 2²⁰ bins: every plot draws a bounded number of points, the bin-tree
view paints only what is visible and zooms down to single leaves, and the slow steps (planning,
projecting, releasing) run on worker threads. Rules, not timings: `make bench` times the window
(benchmarks/bench_responsiveness.py, bench_tree_view.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyqtgraph as pg
import pytest

import dpgui.report.cdf.publish as publish_module  # where a CDF release looks levels_sha256 up
import dpgui.workspace.statistics.cdf as cdf_statistic_module
import dpgui.workspace.planning as planning_module
import dpgui.workspace.results as results_module
from dpgui.app.cdf.mode import TAB_PLAN, TAB_RESULTS
from dpgui.app.cdf.projection_plots import ProjectionCache
from dpgui.app.cdf.tree_view import MIN_NODE_PX, TEXT_MIN_PX
from dpgui.core.quantiles import cumulative_interval95, quantiles
from dpgui.core.thinning import DRAWN_SLICES, band_envelope
from dpgui.workspace.results import PROBABILITIES
from gui_helpers import count_tree_drawing, make_window, open_and_wait, release_and_wait, set_column
from thread_log import ThreadLog

pytestmark = pytest.mark.slow

BINS = 1 << 20
ROWS = 50_000
UPPER = 200_000.0
#: Points any one curve may hand to Qt: the thinning keeps at most two per drawn slice (the peak
#: envelope), whatever K is; pyqtgraph's own peak downsampling keeps fewer (two per pixel).
MAX_POINTS = 2 * DRAWN_SLICES + 2


@pytest.fixture
def incomes(tmp_path):
    path = tmp_path / "incomes.csv"
    rng = np.random.default_rng(11)
    pa_csv.write_csv(pa.table({"income": np.round(rng.gamma(2.0, 20_000.0, ROWS), 2)}), path)
    return path


def drawn_points(widget: pg.PlotWidget) -> dict[str, int]:
    """Points each data item of a plot passes on to be painted (after clipping and downsampling)."""
    out = {}
    for i, item in enumerate(widget.getPlotItem().listDataItems()):
        x, _ = item.getData()
        out[f"{i}:{item.name()}"] = 0 if x is None else len(x)
    return out


def test_window_at_2_to_the_20_bins_draws_bounded_points_and_works_on_workers(qtbot, monkeypatch, incomes):
    log = ThreadLog(monkeypatch, ((planning_module, "auto_plan"), (ProjectionCache, "project"),
                                  (cdf_statistic_module, "spend_and_release")))
    window = make_window(qtbot)
    open_and_wait(qtbot, window, incomes)
    window.tabs.setCurrentIndex(TAB_PLAN)
    set_column(qtbot, window, "income", "0", str(UPPER), f"{BINS}")
    plots = window.plan_page.plots
    qtbot.waitUntil(lambda: not plots.projecting and not plots.optimisation_pending, timeout=120_000)
    release_and_wait(qtbot, window)
    window.tabs.setCurrentIndex(TAB_RESULTS)
    qtbot.wait(50)
    release = window.cdf.outcome.release
    assert release.plan.shape.bins == BINS and release.total == ROWS
    assert log.on_gui_thread() == [] and log.steps() == {"planning.auto_plan", "ProjectionCache.project",
                                                         "cdf.spend_and_release"}

    result = window.result_view
    counts = {f"result/{k}": v for k, v in drawn_points(result.cdf_plot).items()}
    for name in ("error_plot", "epsilon_plot", "branching_plot", "budget_plot"):
        counts.update({f"{name}/{k}": v for k, v in drawn_points(getattr(plots, name)).items()})
    bars = len(result.hist_bars.opts["height"])
    assert 0 < bars <= 200
    print(counts)
    assert counts and max(counts.values()) <= MAX_POINTS, counts


def test_results_page_at_2_to_the_20_bins_is_computed_on_the_release_worker_with_the_same_numbers(
        qtbot, monkeypatch, incomes):
    """Showing a release at 2²⁰ bins: the quantile intervals, the CDF band and the ledger digest
    (each O(K), about half a second together) run on the release worker, never the GUI thread,
    and the page shows the numbers computed from the release directly (as before the move)."""
    log = ThreadLog(monkeypatch, ((results_module, "quantiles"), (results_module, "cumulative_interval95"),
                                  (results_module, "cdf_moments"), (publish_module, "levels_sha256"),
                                  (cdf_statistic_module, "spend_and_release")))
    window = make_window(qtbot)
    open_and_wait(qtbot, window, incomes)
    window.tabs.setCurrentIndex(TAB_PLAN)
    set_column(qtbot, window, "income", "0", str(UPPER), f"{BINS}")
    qtbot.waitUntil(lambda: window.plan_page.plan is not None and not window.plan_page.is_planning(), timeout=120_000)
    release_and_wait(qtbot, window)
    window.tabs.setCurrentIndex(TAB_RESULTS)
    qtbot.wait(50)
    shown = window.workspace.state.shown
    release = shown.release
    assert release.plan.shape.bins == BINS and shown.confirmed is False  # seeded test noise: never signable
    assert log.steps() == {"results.quantiles", "results.cumulative_interval95", "results.cdf_moments",
                           "publish.levels_sha256", "cdf.spend_and_release"}
    assert log.on_gui_thread() == []
    view = window.result_view
    assert shown.figures is not None and view._figures is shown.figures  # drawn from the worker's figures

    # the old way, on this thread (dpgui.core.quantiles itself is not wrapped)
    assert view.quantile_rows() == [(q.probability, q.value, q.low, q.high) for q in quantiles(release, PROBABILITIES)]
    edges = np.concatenate(([release.lower], release.bin_edges()[1]))
    n = float(release.values_total)
    for fraction in (False, True):
        view.show_fraction(fraction)
        ci_low, ci_high = cumulative_interval95(release)
        scale = 1.0 / n if fraction else 1.0
        if fraction:
            ci_low, ci_high = np.minimum(ci_low, n), np.minimum(ci_high, n)
        x, low, high = band_envelope(edges, np.concatenate(([0.0], ci_low)) * scale,
                                     np.concatenate(([0.0], ci_high)) * scale)
        for item, expected in ((view.band_low, low), (view.band_high, high)):
            assert np.array_equal(item.xData, x) and np.array_equal(item.yData, expected)
        cdf = np.concatenate(([0.0], np.asarray(release.cumulative, dtype=float))) * scale
        assert np.array_equal(view.cdf_curve.xData, edges) and np.array_equal(view.cdf_curve.yData, cdf)
    per_bin = np.diff(np.concatenate(([0.0], np.asarray(release.cumulative, dtype=float))))
    assert np.array_equal(view.hist_counts, np.add.reduceat(per_bin, np.arange(0, BINS, view.hist_group)))


def test_tree_view_at_2_to_the_20_bins_paints_the_visible_nodes_and_zooms_to_single_leaves(qtbot, monkeypatch):
    """The planner's tree for 2²⁰ bins (1.1 million nodes): a paint draws node edges and labels bounded
    by the view's pixels in the full view and zoomed in to a few leaves, where the leaves are labelled
    and the node under the mouse is the exact leaf."""
    from dpgui.app.cdf.tree_view import BinTreeView
    from dpgui.core.mechanism import release
    from dpgui.core.noise import SeededRandom
    from dpgui.core.plan import PrivacySpec
    from dpgui.core.planner import auto_plan

    view = BinTreeView()
    qtbot.addWidget(view)
    view.resize(1100, 560)
    view.show()
    qtbot.waitExposed(view)
    plan = auto_plan(BINS, PrivacySpec(1.0))
    view.set_plan(plan, 0.0, UPPER, "income")
    view.set_release(release(np.full(BINS, 2), plan, SeededRandom(3), 0.0, UPPER))
    assert len(view.plot_widget.scene().items()) < 60  # one painted item, not one per node
    height, pixels = plan.shape.height, view.plot_widget.width()
    drawn = count_tree_drawing(monkeypatch, height)
    bound = {"edges": height * (pixels / MIN_NODE_PX + 2), "labels": height * (pixels / TEXT_MIN_PX + 2)}
    assert not view.grab().isNull()
    full = dict(drawn)
    width = UPPER / BINS
    view.set_x_range(100_000.0, 100_000.0 + 15 * width)  # 15 leaves of 2²⁰, each wider than TEXT_MIN_PX
    drawn.update(dict.fromkeys(drawn, 0))
    assert not view.grab().isNull()
    for counts in (full, drawn):
        assert counts["edges"] <= bound["edges"] and counts["labels"] <= bound["labels"], (counts, bound)
    assert full["leaf labels"] == 0 < drawn["leaf labels"] <= 17  # the leaves are labelled once zoomed in
    x = 100_000.0 + 7.5 * width
    leaf = view.node_at(x, height)
    assert leaf is not None and leaf["index"] == int(x / width)
