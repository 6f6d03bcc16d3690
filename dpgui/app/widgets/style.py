"""Shared look of the app's plots: one colour per mechanism, labelled axes, palette-aware background."""

from __future__ import annotations

import contextlib
import warnings

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

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
