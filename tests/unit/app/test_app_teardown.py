"""Closing the window detaches its plots' legends from their view boxes (dpgui.app.widgets.style.detach_legend_anchors):
otherwise pyqtgraph's anchor slot can run while Qt tears a plot down and raise in the event loop."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import SIGNAL

from gui_helpers import make_window


def _anchor_receivers(window) -> list[int]:
    """Per plot with a legend: the slots on its view box's and its legend's geometryChanged."""
    counts = []
    for plot in window.findChildren(pg.PlotWidget):
        item = plot.getPlotItem()
        if getattr(item, "legend", None) is not None:
            counts.append(item.getViewBox().receivers(SIGNAL("geometryChanged()"))
                          + item.legend.receivers(SIGNAL("geometryChanged()")))
    return counts


def test_closing_the_window_disconnects_every_legend_anchor(qtbot):
    window = make_window(qtbot)
    before = _anchor_receivers(window)
    assert len(before) >= 3  # the plan step's plots with a legend and the results' CDF
    window.close()
    after = _anchor_receivers(window)
    assert [b - a for b, a in zip(before, after)] == [2] * len(before)  # the anchor slot, on both signals
