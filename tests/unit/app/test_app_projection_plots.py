"""The four projection plots draw the engine's numbers (dpgui.core.projection / planner), exactly."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from dpgui.app.cdf.projection_plots import (
    REFINE_DELAY_MS, ProjectionPlots, connect_within_runs,
)
from dpgui.app.widgets.style import log_tick_labels
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets, split_budget
from dpgui.core.level_budgets import optimise_budgets
from dpgui.core.planner import auto_plan, baselines, paper_best_shape
from dpgui.core.projection import last_prefix, prefix_variances
from dpgui.core.projection_curves import BASELINES, ProjectionCache, effective_branching, uniform_branchings
from dpgui.core.thinning import DRAWN_SLICES
from dpgui.core.tree import TreeShape

from projection_helpers import band_margin, rms

LOWER, UPPER = 0.0, 1000.0


@pytest.fixture
def widget(qtbot):
    w = ProjectionPlots()
    qtbot.addWidget(w)
    w.resize(1000, 700)
    w.show()
    return w


def drawn(qtbot, widget: ProjectionPlots) -> None:
    """Wait until plots (a)–(c) show the plan last set (they are computed on a worker)."""
    qtbot.waitUntil(lambda: not widget.projecting, timeout=30_000)


def refined(qtbot, widget: ProjectionPlots) -> None:
    """Wait until plot (c)'s tuned curve is complete too."""
    qtbot.waitUntil(lambda: not widget.optimisation_pending, timeout=60_000)




def baseline(name: str, bins: int, privacy: PrivacySpec) -> Plan:
    shape = {"hist": TreeShape(bins, (bins,)), "binary": TreeShape.uniform(bins, 2),
             "paper_best": paper_best_shape(bins, privacy)[0]}[name]
    return Plan(shape, privacy, equal_budgets(shape, privacy), "covering")


def curve_prefixes(x: np.ndarray, bins: int, lower: float = LOWER, upper: float = UPPER) -> np.ndarray:
    """Prefix lengths j of plot (a)'s points (x = upper edge of bin j)."""
    j = np.rint((x - lower) / ((upper - lower) / bins)).astype(np.int64)
    assert np.allclose(lower + j * (upper - lower) / bins, x)
    return j


def check_error_plot(w: ProjectionPlots, plan: Plan, scale: float = 1.0) -> None:
    bins, privacy = plan.shape.bins, plan.privacy
    expected = {"plan": plan, **{name: baseline(name, bins, privacy) for name in ("hist", "binary", "paper_best")}}
    for name, reference in expected.items():
        x, y = w.error_curves[name].getOriginalDataset()
        j = curve_prefixes(x, bins, w.projection.lower, w.projection.upper)
        assert j.size > 0 and np.all(np.diff(j) > 0)
        np.testing.assert_allclose(y, scale * band_margin(np.sqrt(prefix_variances(reference, j))), rtol=1e-9, atol=1e-12)
        # every noised point is drawn (for large K: the lowest and highest of each slice of the range; for huge K,
        # of an exact sample); only C_K = N under 'change' is left out
        noised = last_prefix(plan.shape, privacy.root_public)
        if bins <= 2 * DRAWN_SLICES:
            assert j.size == noised or (name != "plan" and j.size >= noised - 1)
        elif bins <= 65536:
            every = band_margin(np.sqrt(prefix_variances(reference, np.arange(1, bins + 1))))
            every = every[every > 0]
            assert 2 * DRAWN_SLICES - 2 <= j.size <= 2 * DRAWN_SLICES
            assert y.max() == pytest.approx(every.max(), rel=1e-9) and y.min() == pytest.approx(every.min(), rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_error_of_each_cdf_point_is_the_engines(widget, qtbot, neighbours):
    plan = auto_plan(1000, PrivacySpec(1.0, neighbours))
    widget.set_plan(plan, LOWER, UPPER, "income (€)")
    drawn(qtbot, widget)
    check_error_plot(widget, plan)
    assert "income (€)" in widget.error_plot.getPlotItem().getAxis("bottom").labelText
    assert widget.last_redraw_ms > 0


@pytest.mark.slow
def test_error_plot_samples_exact_points_for_huge_k(widget, qtbot):
    bins = 300_000
    plan = Plan(TreeShape.uniform(bins, 16), PrivacySpec(0.5), equal_budgets(TreeShape.uniform(bins, 16), PrivacySpec(0.5)))
    widget.set_plan(plan, LOWER, UPPER)
    drawn(qtbot, widget)
    x, y = widget.error_curves["plan"].getOriginalDataset()
    assert 2 * DRAWN_SLICES - 2 <= x.size <= 2 * DRAWN_SLICES  # each slice's lowest and highest of the exact sample
    j = curve_prefixes(x, bins)
    assert j[0] == 1
    np.testing.assert_allclose(y, band_margin(np.sqrt(prefix_variances(plan, j))), rtol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_error_against_epsilon(widget, qtbot, neighbours):
    privacy = PrivacySpec(0.7, neighbours, records_per_person=2)
    plan = auto_plan(4096, privacy)
    widget.set_plan(plan, LOWER, UPPER)
    drawn(qtbot, widget)
    x, y = widget.epsilon_curves["plan"].getOriginalDataset()
    assert x.min() == pytest.approx(0.07, rel=0.1) and x.max() == pytest.approx(7.0, rel=0.1)
    at = np.flatnonzero(x == 0.7)
    assert at.size == 1
    assert y[at[0]] == pytest.approx(rms(plan), rel=1e-12)  # the value at your ε is your plan's
    for e, value in zip(x, y):  # same budget fractions elsewhere
        scaled = Plan(plan.shape, PrivacySpec(float(e), neighbours, 2), split_budget(float(e), plan.level_epsilons), "gls")
        assert value == pytest.approx(rms(scaled), rel=1e-9)
    totals = baselines(4096, privacy)
    for name in ("hist", "binary", "paper_best"):
        bx, by = widget.epsilon_curves[name].getOriginalDataset()
        np.testing.assert_array_equal(bx, x)
        # the paper's baselines have K leaves (no leaf for missing values): their own noised points
        prefixes = last_prefix(TreeShape(4096, (4096,)), privacy.root_public)
        expected = band_margin(math.sqrt(totals[name]["total_sq_error"] / prefixes))
        assert by[at[0]] == pytest.approx(expected, rel=1e-9)
        for e, value in list(zip(bx, by))[::7]:
            assert value == pytest.approx(rms(baseline(name, 4096, PrivacySpec(float(e), neighbours, 2))), rel=1e-9)
    assert widget.epsilon_line.value() == pytest.approx(math.log10(0.7))
    assert "0.7" in widget.epsilon_line.label.format


@pytest.mark.slow
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_error_against_branching(widget, qtbot, neighbours):
    privacy = PrivacySpec(1.3, neighbours)
    plan = auto_plan(5000, privacy)
    widget.set_plan(plan, LOWER, UPPER)
    drawn(qtbot, widget)
    x, y = widget.branching_curves["equal"].getOriginalDataset()
    leaves = 5000 + int(privacy.missing_leaf)  # under change: the K bins and the leaf for missing values
    assert list(x) == uniform_branchings(leaves) and x[0] == 2
    for b, value in zip(x, y):
        shape = TreeShape.uniform(5000, int(b), privacy.missing_leaf)
        assert shape.padded_bins <= 2 * 5000
        assert value == pytest.approx(rms(Plan(shape, privacy, equal_budgets(shape, privacy), "covering")), rel=1e-9)
    qtbot.waitUntil(lambda: not widget.optimisation_pending, timeout=30_000)  # filled in while idle
    gx, gy = widget.branching_curves["optimised"].getOriginalDataset()
    assert 5 <= gx.size <= 24 and set(gx) <= set(x)
    for b, value in zip(gx, gy):
        shape = TreeShape.uniform(5000, int(b), privacy.missing_leaf)
        fractions = optimise_budgets(shape, PrivacySpec(1.0, neighbours), "gls", "total")
        rescaled = rms(Plan(shape, privacy, split_budget(1.3, fractions), "gls"))
        fresh = rms(Plan(shape, privacy, optimise_budgets(shape, privacy, "gls", "total"), "gls"))
        assert value == pytest.approx(min(rescaled, fresh), rel=1e-9)  # the better of the two splits
        equal = y[list(x).index(b)]
        assert value <= equal * 1.001  # tuned budgets + GLS never lose to the paper's choice
    assert "refining" not in widget.branching_plot.getPlotItem().legend.getLabel(widget.branching_curves["optimised"]).text
    mx, my = widget.branching_marker.getOriginalDataset()
    assert mx[0] == pytest.approx(effective_branching(plan.shape)) and my[0] == pytest.approx(rms(plan))
    assert plan.shape.label.replace("x", "×") in widget.branching_label.toPlainText()


@pytest.mark.slow
def test_budget_bars(widget, qtbot):
    for neighbours in ("change", "addremove"):
        privacy = PrivacySpec(2.0, neighbours)
        shape = TreeShape(4096, (16, 16, 16))
        eps = optimise_budgets(shape, privacy, "covering")
        plan = Plan(shape, privacy, eps, "covering")
        widget.set_plan(plan, LOWER, UPPER)
        drawn(qtbot, widget)
        bars = widget.budget_bars.opts
        heights = list(bars["height"])
        assert list(bars["x"]) == [0, 1, 2, 3]
        assert heights == ([0.0] + list(eps) if neighbours == "change" else list(eps))
        assert sum(heights) == pytest.approx(2.0)
        _xs, ys = widget.std_points.getData()
        std = np.sqrt(plan.level_variances())
        np.testing.assert_allclose(ys, std[np.isfinite(std)])
        assert "ε = 2" in widget.budget_plot.getPlotItem().titleLabel.text
        assert ("N public" if neighbours == "change" else "added or removed") in widget.budget_plot.getPlotItem().titleLabel.text
        tip = widget.budget_tooltip(3)
        assert "4,096 counts" in tip and f"{std[3]:.4g}" in tip
        assert ("exactly" in widget.budget_tooltip(0)) == (neighbours == "change")


@pytest.mark.slow
def test_tuned_curve_is_drawn_at_once_after_an_epsilon_change(widget, qtbot):
    widget.set_plan(auto_plan(3000, PrivacySpec(1.0)), LOWER, UPPER)
    refined(qtbot, widget)
    full = widget.branching_curves["optimised"].getOriginalDataset()[0].size
    legend = widget.branching_plot.getPlotItem().legend.getLabel(widget.branching_curves["optimised"])
    at_first_draw = []
    widget.projected.connect(lambda projection: at_first_draw.append(
        (list(projection.pending), widget.branching_curves["optimised"].getOriginalDataset()[0].size, legend.text)))
    widget.set_plan(auto_plan(3000, PrivacySpec(0.2)), LOWER, UPPER)  # ε = 1 splits known: drawn at once …
    drawn(qtbot, widget)
    pending, size, label = at_first_draw[0]
    assert pending and size == full and "refining" in label
    refined(qtbot, widget)  # … then tuned at ε = 0.2
    assert "refining" not in legend.text


@pytest.mark.slow
def test_plots_are_computed_off_the_gui_thread_and_only_the_last_plan_is_drawn(widget, qtbot, monkeypatch):
    gui_thread = threading.get_ident()
    threads = []
    project = ProjectionCache.project

    def spy(self, *args, **kwargs):
        threads.append(threading.get_ident())
        return project(self, *args, **kwargs)
    monkeypatch.setattr(ProjectionCache, "project", spy)
    drawn_plans = []
    widget.projected.connect(lambda projection: drawn_plans.append(projection.plan))
    plans = [auto_plan(65536, PrivacySpec(eps)) for eps in (0.5, 1.0, 2.0)]
    for plan in plans:  # quicker than the workers: the older results are dropped (or their workers stopped)
        widget.set_plan(plan, LOWER, UPPER)
    assert widget.projecting
    drawn(qtbot, widget)
    assert list(widget.budget_bars.opts["height"])[1:] == list(plans[-1].level_epsilons)  # root: N public
    qtbot.waitUntil(lambda: not widget.busy, timeout=60_000)
    assert drawn_plans[-1] is plans[-1] and plans[-1] in drawn_plans and len(drawn_plans) == 1
    assert threads and gui_thread not in threads
    check_error_plot(widget, plans[-1])


@pytest.mark.slow
def test_plot_c_is_tuned_only_while_the_plots_are_shown(widget, qtbot):
    widget.hide()
    widget.set_plan(auto_plan(3000, PrivacySpec(0.9)), LOWER, UPPER)
    drawn(qtbot, widget)
    qtbot.wait(REFINE_DELAY_MS + 300)
    assert widget.optimisation_pending and not widget.busy  # hidden (another tab): no work done
    widget.show()
    refined(qtbot, widget)
    assert "refining" not in widget.branching_plot.getPlotItem().legend.getLabel(widget.branching_curves["optimised"]).text


@pytest.mark.slow
def test_a_failed_projection_is_said_and_the_next_plan_clears_it(widget, qtbot, monkeypatch):
    def fail(*args, **kwargs):
        raise MemoryError
    monkeypatch.setattr(ProjectionCache, "project", fail)
    widget.set_plan(auto_plan(1000, PrivacySpec(1.0)), LOWER, UPPER)
    qtbot.waitUntil(lambda: widget.failure.isVisibleTo(widget), timeout=30_000)
    assert "could not be computed" in widget.failure.text() and "memory" in widget.failure.text()
    monkeypatch.undo()
    widget.set_plan(auto_plan(1000, PrivacySpec(1.0)), LOWER, UPPER)
    drawn(qtbot, widget)
    assert not widget.failure.isVisibleTo(widget)


@pytest.mark.slow
def test_changing_the_plan_updates_every_plot(widget, qtbot):
    first = auto_plan(2000, PrivacySpec(1.0))
    second = auto_plan(3000, PrivacySpec(0.3, "addremove"))
    widget.set_plan(first, LOWER, UPPER)
    drawn(qtbot, widget)
    before = widget.error_curves["plan"].getOriginalDataset()[1].copy()
    widget.set_plan(second, LOWER, UPPER)
    drawn(qtbot, widget)
    check_error_plot(widget, second)
    assert widget.error_curves["plan"].getOriginalDataset()[1].size != before.size
    x, y = widget.epsilon_curves["plan"].getOriginalDataset()
    assert y[np.flatnonzero(x == 0.3)[0]] == pytest.approx(rms(second))
    assert list(widget.budget_bars.opts["height"]) == list(second.level_epsilons)
    assert widget.branching_marker.getOriginalDataset()[1][0] == pytest.approx(rms(second))


@pytest.mark.slow
def test_percent_of_n_divides_by_n(widget, qtbot):
    plan = auto_plan(1000, PrivacySpec(1.0))
    widget.set_plan(plan, LOWER, UPPER, n_public=5000)
    drawn(qtbot, widget)
    refined(qtbot, widget)
    items = ([widget.error_curves[n] for n in widget.error_curves] + [widget.epsilon_curves[n] for n in widget.epsilon_curves]
             + list(widget.branching_curves.values()) + [widget.branching_marker])
    items = [item for item in items if item.getOriginalDataset()[1] is not None]  # δ = 0: no other-noise lines
    assert len(items) == 2 * (1 + len(BASELINES)) + 2 + 1
    records = [item.getOriginalDataset()[1].copy() for item in items]
    plan_records = widget.error_curves["plan"].getOriginalDataset()[1].copy()
    assert widget.percent_button.isEnabled()
    widget.percent_button.click()
    assert widget.percent_of_n
    for item, before in zip(items, records):
        np.testing.assert_allclose(item.getOriginalDataset()[1], before / 5000 * 100, rtol=1e-12)
    assert "% of N" in widget.error_plot.getPlotItem().getAxis("left").labelString()
    check_error_plot(widget, plan, scale=100 / 5000)
    widget.records_button.click()
    np.testing.assert_allclose(widget.error_curves["plan"].getOriginalDataset()[1], plan_records)
    # without a public N there is no % of N
    widget.set_percent_of_n(True)
    widget.set_plan(plan, LOWER, UPPER)
    drawn(qtbot, widget)
    assert not widget.percent_button.isEnabled() and not widget.percent_of_n
    widget.set_percent_of_n(True)
    assert not widget.percent_of_n
    np.testing.assert_allclose(widget.error_curves["plan"].getOriginalDataset()[1], plan_records)


@pytest.mark.slow
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_two_bins(widget, qtbot, neighbours):
    plan = auto_plan(2, PrivacySpec(1.0, neighbours))
    widget.set_plan(plan, 0.0, 1.0, "score", n_public=10)
    drawn(qtbot, widget)
    refined(qtbot, widget)
    check_error_plot(widget, plan)
    # 2 leaves under add/remove; 3 under change (the 2 bins and the leaf for missing values)
    expected = [2.0, 3.0] if plan.shape.missing_leaf else [2.0]
    assert widget.branching_curves["equal"].getOriginalDataset()[0].tolist() == expected
    widget.set_percent_of_n(True)
    assert not widget.grab().isNull()


@pytest.mark.slow
def test_65536_bins_and_screenshot(widget, qtbot, tmp_path):
    plan = auto_plan(65536, PrivacySpec(1.0))
    widget.set_plan(plan, 0.0, 65536.0, "income (€)", n_public=100_000)
    drawn(qtbot, widget)
    check_error_plot(widget, plan)
    refined(qtbot, widget)
    image = widget.grab()
    assert not image.isNull() and image.width() >= 900
    assert image.save(str(tmp_path / "projection_plots.png"))


@pytest.mark.slow
def test_series_can_be_hidden(widget, qtbot):
    widget.set_plan(auto_plan(500, PrivacySpec(1.0)), LOWER, UPPER)
    drawn(qtbot, widget)
    widget.series_boxes["hist"].setChecked(False)
    assert not widget.error_curves["hist"].isVisible() and not widget.epsilon_curves["hist"].isVisible()
    widget.series_boxes["hist"].setChecked(True)
    assert widget.error_curves["hist"].isVisible()


# ---------------------------------------------------------------- the widget's Qt-free drawing helpers
# (the projection's own helpers are tested in tests/unit/core/test_core_projection_curves.py)
def test_drawing_helpers():
    assert connect_within_runs(np.array([2.0, 4.0, 100.0]), [2, 4, 100]).tolist() == [True, False, True]
    assert log_tick_labels([math.log10(v) for v in (0.1, 0.2, 0.3, 0.5, 1, 10, 1000)], 3.0) == \
        ["0.1", "0.2", "", "0.5", "1", "10", "1,000"]


@pytest.mark.slow
def test_small_widget_shows_the_plots_in_tabs(widget, qtbot):
    plan = auto_plan(1000, PrivacySpec(1.0))
    widget.set_plan(plan, LOWER, UPPER)
    drawn(qtbot, widget)
    assert widget.layout_mode == "grid"
    widget.resize(600, 450)
    qtbot.waitUntil(lambda: widget.layout_mode == "tabs")
    assert widget._tabs.count() == 4
    assert not widget.grab().isNull()
    widget.resize(1000, 700)
    qtbot.waitUntil(lambda: widget.layout_mode == "grid")
    assert widget._tabs.count() == 0
    check_error_plot(widget, plan)
