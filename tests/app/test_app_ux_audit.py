"""Second audit of the window's human side (issue 28, items 6–18): what a privacy officer sees after the
seven branches met. Each test reproduces one finding of the audit; offscreen, seeded noise."""

from __future__ import annotations

from dpgui.app.projection_plots import ProjectionPlots
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan


def test_plots_come_back_after_the_window_was_small(qtbot):
    """The four projection plots go into tabs in a small window and back into the 2×2 grid when it grows:
    each of them is then visible again (they stayed hidden: the tab widget had hidden the pages it did not
    show, and the grid put them back hidden, leaving an empty plan step)."""
    widget = ProjectionPlots()
    qtbot.addWidget(widget)
    widget.resize(1000, 700)
    widget.show()
    widget.set_plan(auto_plan(1000, PrivacySpec(1.0)), 0.0, 5000.0)
    qtbot.waitUntil(lambda: not widget.busy, timeout=30_000)
    assert widget.layout_mode == "grid"
    widget.resize(600, 450)
    qtbot.waitUntil(lambda: widget.layout_mode == "tabs")
    widget.resize(1000, 700)
    qtbot.waitUntil(lambda: widget.layout_mode == "grid")
    qtbot.waitUntil(lambda: all(plot.isVisible() for plot, _name in widget._plots), timeout=2_000)
    assert all(plot.height() > 100 for plot, _name in widget._plots)
