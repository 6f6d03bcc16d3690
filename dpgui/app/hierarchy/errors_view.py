"""How useful a hierarchy plan's counts will be, in the window's plan step (step 2): the cells of the
level table (the 95 % margin of one count, the middle category's count, the margin as a share of it,
the share of categories below the margin), the warning when a level is mostly noise, and the plot of
each level's 95 % margin against ε (computed on a worker: :func:`dpgui.workspace.hierarchy_planning.error_curves`).

The figures are :func:`dpgui.core.hierarchy_errors.plan_errors`'s, worded by :mod:`dpgui.formatting`
as ``dpgui hierarchy plan`` and the PDF word them. Nothing here reads the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from dpgui.app.widgets.style import new_plot, plain_log_axes
from dpgui.app.workers import Worker, WorkerPool
from dpgui.core.hierarchy_errors import LevelErrors, basis_words
from dpgui.core.margins import MARGIN_NAME
from dpgui.formatting import format_level_margin, format_parameter, format_relative_margin, format_share_whole
from dpgui.workspace.hierarchy_planning import LoadedHierarchy, PlannedHierarchy, error_curves
from dpgui.workspace.words import escape

__all__ = ["ERROR_HEADERS", "ERROR_TIPS", "LEVEL_COLOURS", "MarginCurves", "level_error_cells", "plan_error_words"]

ERROR_HEADERS = (f"{MARGIN_NAME}\nof one count", "Median\ncount", "Margin ÷\ncount", "Categories\nbelow the\nmargin")
ERROR_TIPS = (
    f"The {MARGIN_NAME} of one published count of this level: the count is within this many records of the true "
    "count in about 95 of 100 cases (counted over the level's categories).",
    "The count of the middle category of this level, in the counts the projection uses (a prior's, or the records "
    "assumed spread evenly).",
    "The 95 % margin as a share of the middle category's count: how far off a typical published count may be.",
    "The share of the level's categories with fewer records than the 95 % margin: their published counts will be "
    "mostly noise (many published as 0).",
)
#: One colour per level (Okabe–Ito: distinguishable with the common colour-vision deficiencies), root first.
LEVEL_COLOURS = ("#555555", "#0072B2", "#E69F00", "#009E73", "#CC79A7")


def level_error_cells(figures: LevelErrors) -> list[str]:
    """The table cells of one level: margin, median count, margin ÷ count, share below the margin."""
    median = "—" if figures.median_count is None else f"{figures.median_count:,.0f}"
    return [format_level_margin(figures.margin95), median, format_relative_margin(figures.relative),
            format_share_whole(figures.mostly_noise)]


def plan_error_words(planned: PlannedHierarchy, names: Sequence[str]) -> tuple[str, str]:
    """(the summary's sentence on the stated errors, the warnings as rich text or ""): the 95 % margin of
    every noised level and the counts it was computed at."""
    errors = planned.errors
    if errors is None:
        return "", ""
    level_names = ("all records", *names)
    margins = ", ".join(f"{escape(format_level_margin(f.margin95))} ({escape(level_names[f.level])})"
                        for f in errors.levels if f.margin95 > 0)
    words = f" <b>Projected {MARGIN_NAME} of one published count: {margins}</b>, {escape(basis_words(errors.counts_words))}."
    warnings = errors.warnings(names)
    return words, "<br>".join(f"<b>Warning:</b> {escape(w)}" for w in warnings)


class MarginCurves(QWidget):
    """The 95 % margin of one count of each level against ε (log–log; one line per noised level, its median
    count dashed in the same colour: where a level's line is above its dashed line, most of its categories
    will be mostly noise). :meth:`set_planned` computes the lines on a worker; the widget only draws."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pool = WorkerPool()
        self._worker: Worker | None = None
        self.curves: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # level → (ε, margin) drawn
        self.plot = new_plot("95 % margin of one count against ε", "Privacy budget ε", MARGIN_NAME, y_units="records")
        self.plot.getPlotItem().setLogMode(x=True, y=True)
        plain_log_axes(self.plot)
        self.plot.setMinimumHeight(260)
        self.plot.setToolTip("Each line: the 95 % margin of one published count of a level if the same plan (the same "
                             "split of the budget) used another ε. Dashed: the level's median count. Both axes on a "
                             "log scale.")
        self.epsilon_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#808080", width=1.5, style=Qt.PenStyle.DashLine),
                                            label="your ε", labelOpts={"position": 0.93, "color": "#808080"})
        self.plot.addItem(self.epsilon_line, ignoreBounds=True)
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.caption)

    def busy(self) -> bool:
        return self._worker is not None

    def set_planned(self, planned: PlannedHierarchy | None, loaded: LoadedHierarchy | None) -> None:
        """Draw the lines of ``planned`` (computed on a worker; the previous computation is cancelled)."""
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None
        if planned is None or loaded is None or planned.errors is None:
            self._clear("No plan yet.")
            return
        self.caption.setText("Projecting the error against ε…")
        worker = Worker(error_curves, planned, loaded)
        worker.connect_to(self, finished=partial(self._on_curves, worker, planned, loaded),
                          failed=partial(self._on_failed, worker), cancelled=partial(self._on_failed, worker, ""))
        self._worker = worker
        self.pool.start(worker)

    def _clear(self, caption: str) -> None:
        for item in list(self.plot.getPlotItem().listDataItems()):
            self.plot.removeItem(item)
        self.plot.getPlotItem().legend.clear()
        self.curves = {}
        self.caption.setText(caption)

    def _on_failed(self, worker: Worker, message: str) -> None:
        if worker is self._worker:
            self._worker = None
            self._clear(message)

    def _on_curves(self, worker: Worker, planned: PlannedHierarchy, loaded: LoadedHierarchy,
                   result: tuple[np.ndarray, np.ndarray]) -> None:
        if worker is not self._worker:
            return
        self._worker = None
        self._clear("")
        epsilons, margins = result
        names = ("all records", *loaded.hierarchy.level_names)
        assert planned.errors is not None
        for level, figures in enumerate(planned.errors.levels):
            ok = np.isfinite(margins[:, level]) & (margins[:, level] > 0)
            if not ok.any():
                continue  # the exact total (N public) has no error to plot
            colour = LEVEL_COLOURS[level % len(LEVEL_COLOURS)]
            self.plot.plot(epsilons[ok], margins[ok, level], pen=pg.mkPen(colour, width=2.5),
                           name=f"level {level} · {names[level]}")
            self.curves[level] = (epsilons[ok], margins[ok, level])
            if figures.median_count is not None and figures.median_count > 0:
                self.plot.plot([float(epsilons[0]), float(epsilons[-1])], [figures.median_count] * 2,
                               pen=pg.mkPen(colour, width=1.2, style=Qt.PenStyle.DashLine))
        eps = planned.plan.privacy.epsilon
        self.epsilon_line.setValue(math.log10(eps))
        self.epsilon_line.label.setFormat(f" your ε = {format_parameter(eps)}")
        self.plot.getPlotItem().enableAutoRange()
        basis = basis_words(planned.errors.counts_words)
        lines = list(self.curves.values())
        same = len(lines) > 1 and all(np.array_equal(x, lines[0][0]) and np.allclose(y, lines[0][1], rtol=1e-3)
                                      for x, y in lines[1:])
        overlap = " The levels' lines lie on top of one another: their margins are the same." if same else ""
        self.caption.setText(f"{basis[:1].upper()}{basis[1:]}. Dashed: each level's median count; where a level's line "
                             "is above its dashed line, most of its categories will be mostly noise." + overlap
                             if planned.errors.counts is not None else
                             f"{basis[:1].upper()}{basis[1:]}: type a published estimate of N, or give a prior file, to "
                             "compare the margins with the counts." + overlap)
