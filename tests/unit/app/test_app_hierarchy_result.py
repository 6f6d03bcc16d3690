"""What the result step says about a release's counts and intervals follows the release: "every parent
equals the sum of its children" only for consistent releases; "at least 95 % for every category" only
where :func:`dpgui.core.hierarchy.release_hierarchy`'s interval method guarantees it per node (clamped
and multiplicative releases), "on average over a level" for top-down/GLS."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from dpgui.app.hierarchy.result import HierarchyResultModel
from dpgui.core.hierarchy import Hierarchy, plan_hierarchy, release_hierarchy
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.workspace.hierarchy import consistency_words, interval_words

TREE = Hierarchy.from_paths(("region", "district"), [("North", "N1"), ("North", "N2"), ("South", "S1")])
LEAVES = np.array([30, 12, 25], dtype=np.int64)


def _release(consistency: str, delta: float = 0.0, noise: str = "laplace"):
    privacy = PrivacySpec(1.0, "change", 1, delta)
    plan = plan_hierarchy(TREE.level_sizes, privacy, noise=noise, consistency=consistency,
                          alpha=0.1 if noise == "multiplicative" else None)
    return release_hierarchy(TREE, LEAVES, plan, SeededRandom(3))


def _tips(release) -> tuple[str, str]:
    model = HierarchyResultModel(release)
    tip = Qt.ItemDataRole.ToolTipRole
    return (model.headerData(1, Qt.Orientation.Horizontal, tip), model.headerData(2, Qt.Orientation.Horizontal, tip))


@pytest.mark.parametrize("consistency", ["topdown", "gls"])
def test_a_consistent_release_says_sums_and_average_coverage(qtbot, consistency):
    count_tip, interval_tip = _tips(_release(consistency))
    assert "every parent equals the sum of its children" in count_tip
    assert "on average" in interval_tip and "not for each" in interval_tip and "at least" not in interval_tip


def test_a_clamped_release_says_no_sums_and_per_category_coverage(qtbot):
    release = _release("none")
    count_tip, interval_tip = _tips(release)
    assert "every parent equals" not in count_tip and "need not" in count_tip
    assert "at least 95 %" in interval_tip and "every category" in interval_tip
    assert consistency_words(release.plan) in count_tip and interval_words(release) in interval_tip


def test_a_multiplicative_release_says_no_sums_and_per_category_coverage(qtbot):
    release = _release("auto", delta=1e-6, noise="multiplicative")
    assert release.plan.noise == "multiplicative"
    count_tip, interval_tip = _tips(release)
    assert "every parent equals" not in count_tip and "need not" in count_tip
    assert "at least 95 %" in interval_tip and "every category" in interval_tip


def test_budgets_set_by_hand_read_as_such_in_the_pdf_and_the_manifest(qtbot):
    """A plan whose level budgets the officer typed says "set by hand", not "optimal allocation", and
    its manifest still validates against the schema."""
    from datetime import datetime, timezone

    from dpgui.pdf.hierarchy import _page1_html
    from dpgui.report.bundle import schema_problems
    from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_DATA, HierarchyReleaseInfo, build_hierarchy_manifest
    from dpgui.workspace.hierarchy_planning import with_budgets

    privacy = PrivacySpec(1.0, "change", 1, 0.0)
    prior = TREE.aggregate(LEAVES)
    engine = plan_hierarchy(TREE.level_sizes, privacy, allocation="optimal", consistency="topdown", prior_levels=prior)
    plan = with_budgets(engine, (0.0, 0.3, 0.7))
    release = release_hierarchy(TREE, LEAVES, plan, SeededRandom(2))
    info = HierarchyReleaseInfo("d", "0" * 32, datetime.now(timezone.utc), NODE_LIST_FROM_DATA, False, True)
    projection = {"method": "closed form", "counts": "x", "weighted_mse": 1.0, "levels": []}
    html = _page1_html(release, info, projection, None)
    assert "set by hand" in html and "optimal allocation" not in html
    manifest = build_hierarchy_manifest(release, info, "discrete_laplace_hierarchy", "n", b"c", b"p", "0" * 16)
    assert schema_problems(manifest) == []


# ---------------------------------------------------------------- the chart of a category's children
CHART_TREE = Hierarchy.from_paths(("region", "district"), [("North", "N1"), ("North", "N2"), ("North", "N3"),
                                                           ("South", "S1"), ("South", "S2")])
CHART_LEAVES = np.array([400, 2, 0, 250, 180], dtype=np.int64)


def test_the_results_chart_the_selected_categorys_children_with_intervals_and_marks_noise(qtbot):
    from dpgui.app.hierarchy.result import HierarchyResultView
    from dpgui.core.hierarchy_errors import released_mostly_noise

    plan = plan_hierarchy(CHART_TREE.level_sizes, PrivacySpec(0.5), consistency="none")
    release = release_hierarchy(CHART_TREE, CHART_LEAVES, plan, SeededRandom(9))
    view = HierarchyResultView()
    qtbot.addWidget(view)
    view.set_release(release)
    chart = view.chart
    level, node, children = chart.shown
    assert (level, node) == (0, 0) and children.tolist() == [0, 1]  # at first: the top level under the total
    view.reveal(1, 0)  # choose North: its three districts
    level, node, children = chart.shown
    assert (level, node) == (1, 0) and children.tolist() == [0, 1, 2]
    xs, _ = chart.points.getData()
    nx, _ = chart.noisy.getData()
    noisy = released_mostly_noise(release, 2)[:3]
    counts = release.counts[2][:3]
    assert sorted(nx.tolist()) == sorted(counts[noisy].tolist()) and len(xs) + len(nx) == 3
    assert noisy[2] and not noisy[0]  # an empty district is marked, the district of 400 is not
    bars = chart.bars.opts
    assert bars["left"].tolist() == (counts - release.lower[2][:3]).tolist()
    assert bars["right"].tolist() == (release.upper[2][:3] - counts).tolist()
    ticks = chart.plot.getPlotItem().getAxis("left")._tickLevels[0]
    assert [label for _, label in ticks] == ["N1", "N2", "N3"]
    assert "North" in chart.plot.getPlotItem().titleLabel.text and "district" in chart.plot.getPlotItem().titleLabel.text
    assert "mostly noise" in chart.caption.text()
    view.reveal(2, 3)  # a district has no children: its region's districts, itself among them
    level, node, children = chart.shown
    assert (level, node) == (1, 1) and children.tolist() == [3, 4] and "'S1' is one of them" in chart.caption.text()
