"""Shared look of the app's plots: one colour per mechanism, labelled axes (log axes in plain numbers),
palette-aware background, and the colours of the tree views."""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from dpgui.formatting import format_log_tick

# One colour per series, used by every plot so "binary tree" is the same colour everywhere.
# Chosen from the Okabe–Ito palette: distinguishable with the common colour-vision deficiencies.
SERIES_COLOURS: dict[str, str] = {
    "plan": "#0072B2",        # the user's current plan (blue)
    "binary": "#E69F00",      # binary tree (orange)
    "hist": "#009E73",        # flat histogram (green)
    "paper_best": "#CC79A7",  # paper 000's best tree (purple)
    "ind": "#56B4E9",         # independent prefix counts (sky blue)
    "confidential": "#D55E00",  # the true, unreleased data (vermillion)
    "marker": "#808080",      # markers for the chosen value (grey)
    "alternative": "#D55E00",  # the other noise's best plan, beside yours (vermillion)
    "gaussian": "#D55E00",     # uniform trees with Gaussian noise (same vermillion as the alternative)
}
SERIES_NAMES: dict[str, str] = {
    "plan": "Your plan",
    "binary": "Binary tree",
    "hist": "Histogram (flat)",
    "paper_best": "Best tree of Rameshwar et al.",
    "ind": "Independent counts",
    "alternative": "Other noise's best plan",
}


def is_dark() -> bool:
    """True when the application's window background is dark (dark palette)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):  # None (no application yet), or a QCoreApplication: no palette
        return False
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def configure_pyqtgraph() -> None:
    """Plot background and foreground follow the current palette; antialiased lines."""
    app = QApplication.instance()
    palette = app.palette() if isinstance(app, QApplication) else QPalette()
    pg.setConfigOptions(
        antialias=True,
        background=palette.color(QPalette.ColorRole.Base),
        foreground=palette.color(QPalette.ColorRole.Text),
    )


def new_plot(title: str, x_label: str, y_label: str, x_units: str | None = None,
             y_units: str | None = None, legend: bool = True) -> pg.PlotWidget:
    """A PlotWidget with a title, labelled axes (units in the label), a grid and a legend."""
    configure_pyqtgraph()
    widget = pg.PlotWidget(title=title)
    item = widget.getPlotItem()
    item.setLabel("bottom", x_label, units=x_units)
    item.setLabel("left", y_label, units=y_units)
    # pyqtgraph's SI prefixes (k, M) confuse non-programmers on counts; show plain numbers.
    for axis in ("bottom", "left"):
        item.getAxis(axis).enableAutoSIPrefix(False)
    item.showGrid(x=True, y=True, alpha=0.25)
    if legend:
        item.addLegend(offset=(-10, 10))
    widget.setMinimumSize(240, 180)
    return widget


def series_pen(name: str, width: float = 2.0, dashed: bool = False) -> pg.mkPen:
    """The pen of a named series (see SERIES_COLOURS)."""
    from PySide6.QtCore import Qt

    return pg.mkPen(QColor(SERIES_COLOURS[name]), width=width,
                    style=Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)


def detach_legend_anchors(root: QWidget) -> int:
    """Disconnect the legends of ``root``'s plots from their view boxes' geometry, before ``root`` is
    destroyed; returns how many legends were detached. Why: pyqtgraph's GraphicsWidgetAnchor keeps
    a legend glued to its ViewBox through geometryChanged, and while Qt tears the plot down that
    signal can reach the legend after the ViewBox's wrapper is gone, raising RuntimeError in the
    event loop (pyqtgraph keeps no hook for this, see its PR #2770). Call once the window closes."""
    detached = 0
    for plot in root.findChildren(pg.PlotWidget):
        item = plot.getPlotItem()
        legend = getattr(item, "legend", None)
        if legend is None or getattr(legend, "_dpgui_detached", False):
            continue
        handler = legend._GraphicsWidgetAnchor__geometryChanged  # pyqtgraph's private slot, name-mangled
        for signal in (legend.geometryChanged, item.getViewBox().geometryChanged):
            with contextlib.suppress(RuntimeError, TypeError), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # "failed to disconnect": it was not connected
                signal.disconnect(handler)
        legend._dpgui_detached = True
        detached += 1
    return detached


# The colours of tree views (the bin tree, the hierarchy tree): a level that is not released, an exact
# count (the total, when it is public), and the colour scale of a level's budget or noise.
NOT_RELEASED_COLOUR = QColor("#A6A6A6")
EXACT_COLOUR = QColor("#F3F3F3")
_CMAP = pg.colormap.get("viridis")


def colour_ramp(t: float) -> QColor:
    """The bin-tree's colour scale (viridis) at ``t`` in [0, 1], clipped: dark purple at 0, yellow at 1."""
    colour: QColor = _CMAP.map(np.array([min(max(t, 0.0), 1.0)]), mode="qcolor")[0]
    return colour


def text_colour_on(fill: QColor) -> QColor:
    """Black or white, whichever reads better on ``fill``."""
    luminance = 0.299 * fill.red() + 0.587 * fill.green() + 0.114 * fill.blue()
    return QColor("#000000") if luminance > 140 else QColor("#FFFFFF")


# Log axes labelled with plain numbers (the projection plots, the hierarchy's margin curves).
def log_tick_labels(exponents: list[float], decades: float, length_px: float | None = None) -> list[str]:
    """Labels of log-axis ticks at 10^e as plain numbers. Which mantissas get a label depends on the
    room per factor of ten (``length_px / decades``; without a length, on ``decades`` alone): all of
    1…9 when roomy, 1, 2 and 5 when not, only powers of ten when cramped; the rest stay blank so
    labels never collide."""
    if length_px:
        per_decade = length_px / max(decades, 1e-9)
    else:
        per_decade = 1000.0 if decades < 1.0 else (100.0 if decades <= 4 else 50.0)
    keep = (1, 2, 3, 4, 5, 6, 7, 8, 9) if per_decade >= 400 else ((1, 2, 5) if per_decade >= 80 else (1,))
    out = []
    for e in exponents:
        value = 10.0 ** e
        mantissa = int(round(value / 10.0 ** math.floor(e + 1e-9)))
        out.append(format_log_tick(value) if mantissa in keep else "")
    return out


# pyqtgraph's AxisItem.tickValues/logTickValues: (min, max, size, stdTicks) -> [(spacing, [values]), …],
# the last level's spacing None for the minor ticks of a log axis
_TickLevels = list[tuple[float | None, list[float]]]
_TickValues = Callable[[float, float, float, object], _TickLevels]


def plain_log_axes(plot: pg.PlotWidget) -> None:
    """Log axes of ``plot`` label ticks as plain numbers (1, 2, 5, 10, 20, …), not 2·10¹."""
    for name in ("left", "bottom"):
        axis = plot.getPlotItem().getAxis(name)

        def strings(values: list[float], scale: float, spacing: float, axis: Any = axis, name: str = name) -> list[str]:
            lo, hi = axis.range
            length = axis.geometry().height() if name == "left" else axis.geometry().width()
            return log_tick_labels([float(v) for v in values], abs(hi - lo), length or None)

        axis.logTickStrings = strings
        axis.logTickValues = _without_duplicates(axis.logTickValues)


def _without_duplicates(log_tick_values: _TickValues) -> _TickValues:
    """pyqtgraph's minor log ticks repeat the decades of the major level (drawn twice, so bold)."""
    def values(min_val: float, max_val: float, size: float, std_ticks: object) -> _TickLevels:
        levels = log_tick_values(min_val, max_val, size, std_ticks)
        major = {round(v, 9) for spacing, vs in levels if spacing is not None for v in vs}
        return [(spacing, vs if spacing is not None else [v for v in vs if round(v, 9) not in major])
                for spacing, vs in levels]
    return values
