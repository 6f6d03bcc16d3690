"""BinTreeView: the icicle drawing of a plan's bin tree (dpgui/app/cdf/tree_view.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor

from dpgui.app.cdf.tree_view import (
    MIN_NODE_PX, TEXT_MIN_PX, BinTreeView,
)
from dpgui.app.widgets.style import NOT_RELEASED_COLOUR
from dpgui.core.mechanism import release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.planner import auto_plan
from dpgui.core.tree import TreeShape
from dpgui.formatting import format_count, format_node_edge, format_significant
from gui_helpers import count_tree_drawing

LOWER, UPPER = 0.0, 160.0  # 16 bins of width 10


@pytest.fixture
def view(qtbot):
    widget = BinTreeView()
    qtbot.addWidget(widget)
    widget.resize(1000, 520)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def plan_4x4(budgets=(0.4, 0.6), neighbours="change") -> Plan:
    return Plan(TreeShape.parse(16, "4x4"), PrivacySpec(1.0, neighbours), budgets)


def widget_point(view: BinTreeView, x: float, level: int) -> QPoint:
    return view.data_to_widget(x, level + 0.5)


def pixel(view: BinTreeView, x: float, level: int) -> QColor:
    """Colour painted at data point (x, middle of the level's row)."""
    image = view.plot_widget.grab().toImage()
    point = widget_point(view, x, level)
    ratio = image.devicePixelRatio()
    return QColor(image.pixel(int(point.x() * ratio), int(point.y() * ratio)))


def same_colour(a: QColor, b: QColor, tol: int = 3) -> bool:
    return all(abs(u - v) <= tol for u, v in zip(a.getRgb()[:3], b.getRgb()[:3]))


# ----- formatting -----


def test_formatting_in_plain_words():
    assert format_significant(0.3131994) == "0.313"
    assert format_significant(0.31, 2) == "0.31"
    assert format_significant(6.45) == "6.45"
    assert format_significant(1234.4) == "1,234"
    assert format_count(1234) == "1,234"
    assert format_count(-3.0) == "-3"
    assert format_node_edge(120.0, 120.0) == "120"
    assert format_node_edge(312.5, 312.5) == "312.5"
    assert format_node_edge(2000.96133, 0.0763) == "2,000.96133"


# ----- geometry and look-up -----


def test_node_lookup_matches_tree_intervals(view):
    plan = plan_4x4()
    view.set_plan(plan, LOWER, UPPER, "distance")
    shape = plan.shape
    for level in range(shape.height + 1):
        los, his = shape.node_intervals(level, LOWER, UPPER)
        for index in range(shape.nodes_at_level(level)):
            for x in (los[index], (los[index] + his[index]) / 2, np.nextafter(his[index], -np.inf)):
                info = view.node_at(float(x), level)
                assert (info["level"], info["index"]) == (level, index)
                assert (info["lower"], info["upper"]) == (los[index], his[index])
    assert view.node_at(LOWER - 1, 1) is None
    assert view.node_at(UPPER, 2) is None  # no padding here: upper is the end of the tree
    # the painted item's hit test uses y for the level
    assert view.icicle.hit(55.0, 2.5) == (2, 5)
    assert view.icicle.hit(55.0, 1.2) == (1, 1)
    assert view.icicle.hit(55.0, 3.0) is None


def test_padding_beyond_upper(view):
    plan = Plan(TreeShape(10, (4, 4)), PrivacySpec(1.0), (0.5, 0.5))  # 10 bins padded to 16
    view.set_plan(plan, 0.0, 100.0, "age (years)")
    leaf = view.node_at(125.0, 2)
    assert (leaf["index"], leaf["lower"], leaf["upper"]) == (12, 120.0, 130.0)
    assert leaf["padding"] == "all"
    assert view.node_at(85.0, 1)["padding"] == "part"  # [80, 120) holds bins 8, 9 and padding
    assert view.node_at(55.0, 2)["padding"] is None
    view.hover_at(125.0, 2.5)
    assert "padding (no data)" in view.info_text()
    names = [name for _, name in view.plot_widget.getPlotItem().getAxis("left")._tickLevels[0]]
    assert names[-1] == "Level 2 (10 bins + 6 padding)"
    assert view.x_range()[1] >= 160.0  # the reset view shows the padding too
    # padding is drawn hatched grey, not in the level colour
    assert not same_colour(pixel(view, 150.0, 2), view.level_colour(2), tol=20)


def test_lookup_at_65536_bins_is_exact_at_every_edge(view):
    shape = TreeShape(65_536, (2,) * 16)
    privacy = PrivacySpec(1.0)
    view.set_plan(Plan(shape, privacy, equal_budgets(shape, privacy)), -3.7, 4321.9, "price (€)")
    for level in (16, 11, 3):
        los, his = shape.node_intervals(level, -3.7, 4321.9)
        for index in np.linspace(0, los.size - 1, 257).astype(int):
            assert view.node_at(float(los[index]), level)["index"] == index
            assert view.node_at(float(np.nextafter(his[index], -np.inf)), level)["index"] == index


# ----- info text -----


def test_info_text_in_plain_words(view):
    plan = plan_4x4()
    view.set_plan(plan, LOWER, UPPER, "distance")
    info = view.hover_at(55.0, 2.5)
    assert (info["level"], info["index"]) == (2, 5)
    text = view.info_text()
    sd = math.sqrt(plan.level_variances()[2])
    for part in ("Level 2 of 2", "node 5", "[50, 60) distance", "ε = 0.6",
                 f"noise scale {format_significant(float(plan.scales[2]))}",
                 f"95 % margin of its count ± {2.2 * sd + 1:,.1f} records"):  # the one stated error, not 1 s.d.
        assert part in text, (part, text)
    assert "released count" not in text  # nothing released yet
    view.hover_at(55.0, 0.5)
    assert "Level 0 of 2 (all records)" in view.info_text()
    assert "exact total (public, no noise added)" in view.info_text()
    view.hover_at(-50.0, 0.5)  # outside the tree: back to the hint
    assert "Point at a box" in view.info_text()


def test_real_mouse_hover_updates_the_info_label(view, qtbot):
    view.set_plan(plan_4x4(), LOWER, UPPER, "distance")
    qtbot.mouseMove(view.plot_widget.viewport(), widget_point(view, 95.0, 1))
    qtbot.waitUntil(lambda: "Level 1 of 2" in view.info_text(), timeout=10_000)
    assert "node 2" in view.info_text() and "[80, 120) distance" in view.info_text()


def test_axis_labels_and_level_names(view):
    view.set_plan(plan_4x4(), LOWER, UPPER, "distance (miles)")
    item = view.plot_widget.getPlotItem()
    assert item.getAxis("bottom").labelText == "distance (miles)"
    ticks = item.getAxis("left")._tickLevels[0]
    assert [name for _, name in ticks] == ["Level 0 (all records)", "Level 1 (4 boxes)", "Level 2 (16 bins)"]


# ----- click -----


def test_click_emits_node_selected(view, qtbot):
    plan = plan_4x4()
    view.set_plan(plan, LOWER, UPPER, "distance")
    with qtbot.waitSignal(view.nodeSelected, timeout=10_000) as blocker:
        qtbot.mouseClick(view.plot_widget.viewport(), Qt.MouseButton.LeftButton, pos=widget_point(view, 95.0, 2))
    info = blocker.args[0]
    assert (info["level"], info["index"], info["lower"], info["upper"]) == (2, 9, 90.0, 100.0)
    assert info["epsilon"] == pytest.approx(0.6)
    assert info["noise_scale"] == pytest.approx(float(plan.scales[2]))
    assert info["noise_sd"] == pytest.approx(math.sqrt(plan.level_variances()[2]))
    assert info["released"] is None
    assert view.selected_node()["index"] == 9
    assert view.info_text().startswith(("Selected: Level 2", "Level 2"))


def test_click_outside_the_tree_selects_nothing(view, qtbot):
    view.set_plan(plan_4x4(), LOWER, UPPER, "distance")
    view.set_x_range(-100.0, 170.0)
    with qtbot.assertNotEmitted(view.nodeSelected):
        qtbot.mouseClick(view.plot_widget.viewport(), Qt.MouseButton.LeftButton, pos=widget_point(view, -60.0, 1))
    assert view.selected_node() is None


# ----- colour -----


def test_colour_mode_switch_changes_colours_and_legend(view, qtbot):
    plan = auto_plan(256, PrivacySpec(1.0, "addremove"))
    assert len(set(plan.level_epsilons)) > 1  # optimised budgets differ per level
    view.set_plan(plan, 0.0, 1.0)
    budget = [view.level_colour(level).name() for level in range(plan.shape.height + 1)]
    assert len(set(budget)) > 1
    assert "ε per level" in view.legend.title()
    painted = pixel(view, 0.01, 1)
    assert same_colour(painted, view.level_colour(1))

    view.set_colour_mode("noise_sd")
    noise = [view.level_colour(level).name() for level in range(plan.shape.height + 1)]
    assert noise != budget
    assert "noise standard deviation, records" in view.legend.title()
    assert view.colour_combo.currentData() == "noise_sd"
    assert same_colour(pixel(view, 0.01, 1), view.level_colour(1))
    assert not same_colour(painted, pixel(view, 0.01, 1))

    view.colour_combo.setCurrentIndex(view.colour_combo.findData("budget"))  # the combo box drives it too
    assert view.colour_mode() == "budget"
    assert [view.level_colour(level).name() for level in range(plan.shape.height + 1)] == budget
    with pytest.raises(ValueError):
        view.set_colour_mode("rainbow")


def test_more_budget_is_brighter_and_more_noise_darker(view):
    view.set_plan(plan_4x4((0.2, 0.8)), LOWER, UPPER)
    assert view.level_colour(2).lightness() > view.level_colour(1).lightness()
    view.set_colour_mode("noise_sd")
    assert view.level_colour(1).lightness() < view.level_colour(2).lightness()  # level 1 is noisier


# ----- release -----


def test_hover_shows_released_counts(view, qtbot):
    plan = plan_4x4()
    counts = np.random.default_rng(5).integers(0, 2000, 16)
    rel = release(counts, plan, SeededRandom(1), LOWER, UPPER)
    view.set_plan(plan, LOWER, UPPER, "distance")
    view.set_release(rel)
    for level in range(3):
        for index in range(plan.shape.nodes_at_level(level)):
            lo, hi = plan.shape.node_intervals(level, LOWER, UPPER)
            info = view.hover_at(float((lo[index] + hi[index]) / 2), level + 0.5)
            assert info["released"] == float(rel.levels[level][index])
            assert f"released count {format_count(float(rel.levels[level][index]))}" in view.info_text()
    assert view.node_at(5.0, 0)["released"] == counts.sum()  # change model: the root is exact
    with qtbot.waitSignal(view.nodeSelected, timeout=10_000) as blocker:
        qtbot.mouseClick(view.plot_widget.viewport(), Qt.MouseButton.LeftButton, pos=widget_point(view, 33.0, 2))
    assert blocker.args[0]["released"] == float(rel.levels[2][3])
    view.set_release(None)
    assert view.node_at(33.0, 2)["released"] is None


def test_release_of_another_plan_redraws_that_plan(view):
    view.set_plan(plan_4x4(), LOWER, UPPER, "distance")
    other = Plan(TreeShape(64, (8, 8)), PrivacySpec(1.0), (0.5, 0.5))
    rel = release(np.ones(64, dtype=np.int64), other, SeededRandom(2), 0.0, 64.0)
    view.set_release(rel)
    info = view.node_at(9.5, 2)
    assert (info["index"], info["lower"], info["upper"]) == (9, 9.0, 10.0)
    assert info["released"] == float(rel.levels[2][9])


def test_zero_budget_level_is_not_released(view):
    plan = Plan(TreeShape.parse(64, "4x4x4"), PrivacySpec(1.0), (0.3, 0.0, 0.7))
    rel = release(np.arange(64), plan, SeededRandom(3), 0.0, 64.0)
    view.set_plan(plan, 0.0, 64.0, "distance")
    view.set_release(rel)
    info = view.hover_at(20.0, 2.5)
    assert info["status"] == "unreleased"
    assert (info["epsilon"], info["noise_scale"], info["noise_sd"], info["released"]) == (0.0, None, None, None)
    assert "not released" in view.info_text()
    assert "ε =" not in view.info_text()
    assert view.level_colour(2) == NOT_RELEASED_COLOUR
    assert same_colour(pixel(view, 0.6, 2), NOT_RELEASED_COLOUR)  # painted grey
    view.set_colour_mode("noise_sd")
    assert view.level_colour(2) == NOT_RELEASED_COLOUR


# ----- zoom, pan, keyboard -----


def test_keyboard_zoom_pan_and_pick(view, qtbot):
    plan = plan_4x4()
    view.set_plan(plan, LOWER, UPPER, "distance")
    view.setFocus()
    full = view.x_range()
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    zoomed = view.x_range()
    assert zoomed[1] - zoomed[0] < 0.9 * (full[1] - full[0])
    qtbot.keyClick(view, Qt.Key.Key_Right)
    panned = view.x_range()
    assert panned[0] > zoomed[0] and panned[1] - panned[0] == pytest.approx(zoomed[1] - zoomed[0])
    qtbot.keyClick(view, Qt.Key.Key_Minus)
    assert view.x_range()[1] - view.x_range()[0] > panned[1] - panned[0]
    qtbot.keyClick(view, Qt.Key.Key_Down)
    qtbot.keyClick(view, Qt.Key.Key_Down)
    assert "Level 2 of 2" in view.info_text()
    with qtbot.waitSignal(view.nodeSelected, timeout=10_000) as blocker:
        qtbot.keyClick(view, Qt.Key.Key_Return)
    centre = sum(view.x_range()) / 2
    assert blocker.args[0]["level"] == 2 and blocker.args[0]["lower"] <= centre < blocker.args[0]["upper"]
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.x_range() == pytest.approx(full)


def test_reset_zoom_button_and_y_is_locked(view, qtbot):
    view.set_plan(plan_4x4(), LOWER, UPPER, "distance")
    full = view.x_range()
    y_before = view.view_box.viewRange()[1]
    view.set_x_range(40.0, 60.0)
    assert view.view_box.state["mouseEnabled"] == [True, False]
    qtbot.mouseClick(view.reset_button, Qt.MouseButton.LeftButton)
    assert view.x_range() == pytest.approx(full)
    assert view.view_box.viewRange()[1] == pytest.approx(y_before)


def test_widget_takes_focus_on_click(view, qtbot):
    view.set_plan(plan_4x4(), LOWER, UPPER, "distance")
    assert view.focusPolicy() == Qt.FocusPolicy.StrongFocus
    view.activateWindow()
    view.reset_button.setFocus()
    qtbot.waitUntil(lambda: view.reset_button.hasFocus(), timeout=10_000)
    qtbot.mouseClick(view.plot_widget.viewport(), Qt.MouseButton.LeftButton, pos=widget_point(view, 95.0, 1))
    qtbot.waitUntil(view.hasFocus, timeout=10_000)  # the plot passes focus to the view (keys work)


# ----- scale -----


@pytest.mark.parametrize("branching", [(16, 16, 16, 16), (2,) * 16])
def test_65536_bins_paint_only_what_is_visible_without_an_item_per_node(view, branching, monkeypatch):
    """A paint draws a number of node edges and labels bounded by the view's pixels, not by the
    69,905 or 131,071 nodes (the rule that keeps it fast; `make bench` times it)."""
    shape = TreeShape(65_536, branching)
    privacy = PrivacySpec(1.0)
    plan = Plan(shape, privacy, equal_budgets(shape, privacy))
    view.set_plan(plan, 0.0, 5000.0, "distance (miles)")
    view.set_release(release(np.full(65_536, 3), plan, SeededRandom(4), 0.0, 5000.0))
    assert len(view.plot_widget.scene().items()) < 60  # one painted item, not one per node
    drawn = count_tree_drawing(monkeypatch, shape.height)
    pixels = view.plot_widget.width()
    bound = {"edges": shape.height * (pixels / MIN_NODE_PX + 2), "labels": shape.height * (pixels / TEXT_MIN_PX + 2)}
    full = view.grab()
    full_drawn = dict(drawn)
    view.set_x_range(2000.0, 2000.0 + 5000.0 / 2000)  # a few dozen leaves
    view.hover_at(2001.0, shape.height + 0.5)
    drawn.update(dict.fromkeys(drawn, 0))
    zoomed = view.grab()
    assert not full.isNull() and not zoomed.isNull()
    for counts in (full_drawn, drawn):
        assert counts["edges"] <= bound["edges"] and counts["labels"] <= bound["labels"], (counts, bound)
    assert drawn["labels"] > 0  # zoomed in, the leaves are labelled
    leaf = view.node_at(2001.0, shape.height)
    assert leaf["index"] == int(2001.0 / (5000.0 / 65_536))


def test_screenshot(view, tmp_path):
    plan = Plan(TreeShape(1000, (8, 8, 16)), PrivacySpec(1.0), (0.3, 0.0, 0.7))
    counts = np.random.default_rng(0).poisson(300, 1000)
    view.set_plan(plan, 0.0, 5000.0, "distance (miles)")
    view.set_release(release(counts, plan, SeededRandom(1), 0.0, 5000.0))
    view.select_node(1, 3)
    view.hover_at(2600.0, 1.5)
    path = tmp_path / "tree_view.png"
    assert view.grab().save(str(path))
    assert path.stat().st_size > 5_000


def test_mouse_wheel_zooms_x_only_and_drag_pans(view, qtbot):
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    view.set_plan(plan_4x4(), LOWER, UPPER, "distance")
    full, y_full = view.x_range(), view.view_box.viewRange()[1]
    viewport = view.plot_widget.viewport()
    at = QPointF(widget_point(view, 80.0, 1))
    wheel = QWheelEvent(at, QPointF(viewport.mapToGlobal(at.toPoint())), QPoint(0, 0), QPoint(0, 240),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(viewport, wheel)
    zoomed = view.x_range()
    assert zoomed[1] - zoomed[0] < full[1] - full[0]
    assert view.view_box.viewRange()[1] == pytest.approx(y_full)
    start, end = widget_point(view, 80.0, 1), widget_point(view, 70.0, 1)
    qtbot.mousePress(viewport, Qt.MouseButton.LeftButton, pos=start)
    for k in range(1, 6):
        qtbot.mouseMove(viewport, start + (end - start) * (k / 5))
    qtbot.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=end)
    panned = view.x_range()
    assert panned[0] > zoomed[0] and panned[1] - panned[0] == pytest.approx(zoomed[1] - zoomed[0])


def test_without_a_plan(view):
    assert view.info_text() == "No plan yet."
    assert view.node_at(1.0, 0) is None
    view.grab()  # paints nothing, does not fail
    with pytest.raises(RuntimeError):
        view.node_info(0, 0)


def test_the_missing_values_leaf_is_not_called_padding(view):
    """Under change the leaf after the K bins counts missing values: the level's name says so."""
    plan = Plan(TreeShape(10, (4, 4), missing_leaf=True), PrivacySpec(1.0), (0.5, 0.5))
    view.set_plan(plan, 0.0, 100.0, "age (years)")
    names = [name for _, name in view.plot_widget.getPlotItem().getAxis("left")._tickLevels[0]]
    assert names[-1] == "Level 2 (10 bins + 1 for missing values + 5 padding)"


@pytest.mark.slow
def test_a_gaussian_plan_is_coloured_and_described_by_rho_per_level(view):
    privacy = PrivacySpec(1.0, "addremove", delta=1e-9)
    plan = auto_plan(256, privacy, noise="gaussian")
    assert plan.noise == "gaussian"
    view.set_plan(plan, 0.0, 1.0)
    assert "ρ per level" in view.legend.title()
    leaf = plan.shape.height
    info = view.node_info(leaf, 0)
    assert info["epsilon"] == plan.level_rhos[leaf]  # the root is noised under add/remove: offset 0
    assert info["noise_scale"] == float(plan.scales[leaf])  # σ² of the level
    words = view.describe(info)
    assert "ρ = " in words and "noise variance σ²" in words and "ε = " not in words
    sd = math.sqrt(float(plan.level_variances()[leaf]))
    assert info["noise_sd"] == pytest.approx(sd)
