"""Four interactive plots of a plan's projected error (no data used, no budget spent).

(a) the 95 % margin of every cumulative count (CDF point), your plan against the paper's
baselines; (b) the 95 % margin on average (at the root-mean-square standard error) against ε; (c) the same against the branching
factor of a uniform tree; (d) the privacy budget and noise of each tree level (ε per level for
Laplace plans, ρ per level for Gaussian ones). With δ > 0, (a) and (b) also show the best plan of the
other noise (Gaussian beside a Laplace plan, Laplace beside a Gaussian one) and (c) uniform trees
with Gaussian noise, each named in the legend.

The numbers come from :class:`~dpgui.core.projection_curves.ProjectionCache` (Qt-free, with its
documented shortcuts), run on worker threads, so this widget only draws: a redraw after a
parameter change recomputes only what depends on that parameter, and plot (c)'s tuned-budget
curve is refined on workers after the plots are drawn (its legend says "refining…" meanwhile).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QCursor, QIcon, QPainter, QPalette, QPixmap, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QButtonGroup, QCheckBox, QGridLayout, QHBoxLayout, QLabel, QLayout, QLayoutItem, QRadioButton, QStackedLayout,
    QTabWidget, QToolTip, QVBoxLayout, QWidget,
)

from dpgui.app.text import escape, format_delta
from dpgui.app.widgets.fields import inline_message, show_inline
from dpgui.app.widgets.style import SERIES_COLOURS, SERIES_NAMES, new_plot, plain_log_axes, series_pen
from dpgui.app.workers import Worker, WorkerPool
from dpgui.core.plan import Plan, PrivacySpec
from dpgui.core.projection_curves import (
    BASELINES, EXACT_POINT_LIMIT, MAX_PADDING, SAMPLED_POINTS, Curve, ProjectedCurves, ProjectionCache,
    effective_branching,
)
from dpgui.core.thinning import DRAWN_SLICES
from dpgui.formatting import format_parameter
from dpgui.vocabulary import Neighbours, Noise

# plot (c)'s refinement starts this long after the plots are drawn (not while the user is still changing things)
REFINE_DELAY_MS = 250


# ----------------------------------------------------------------------------- Qt-free drawing helpers
def neighbour_words(privacy: PrivacySpec) -> str:
    """The neighbour model in plain words (short: it is a plot's subtitle)."""
    each = "" if privacy.records_per_person == 1 else f" (≤ {privacy.records_per_person} records each)"
    if privacy.neighbours == Neighbours.CHANGE:
        return f"a person's records may change{each} · N public"
    return f"a person may be added or removed{each} · N private"


def branching_words(branching: tuple[int, ...]) -> str:
    """A tree's branching for a label: '12×12×7'; a long run of one factor as '2×…×2, 10 levels'."""
    if len(branching) > 4 and len(set(branching)) == 1:
        return f"{branching[0]}×…×{branching[0]}, {len(branching)} levels"
    return "×".join(map(str, branching))


def connect_within_runs(xs: np.ndarray, allowed: list[int], gap_ratio: float = 1.5, gap_count: int = 8) -> np.ndarray:
    """pyqtgraph ``connect`` array for points at branching factors ``xs``: no line across a long gap
    in ``allowed`` (more than ``gap_count`` factors skipped and a ratio above ``gap_ratio``), so the
    curve does not pretend to cover factors that are not shown."""
    allowed_arr = np.asarray(allowed)
    out = np.ones(len(xs), dtype=bool)
    for i in range(len(xs) - 1):
        a, b = xs[i], xs[i + 1]
        inside = allowed_arr[(allowed_arr > a) & (allowed_arr < b)]
        points = np.concatenate([[a], inside, [b]])
        gaps = np.diff(points)
        ratios = points[1:] / points[:-1]
        if np.any((gaps > gap_count) & (ratios > gap_ratio)):
            out[i] = False
    return out


# ----------------------------------------------------------------------------- the widget
SMALL_K_SYMBOLS = 64  # plot (a) marks every point when K is at most this
ANTIALIAS_POINTS = 2048  # plot (a) draws antialiased lines up to this K
GRID_MIN_WIDTH, GRID_MIN_HEIGHT = 760, 500  # below this the four plots go into tabs


class FlowLayout(QLayout):
    """Lays its widgets out left to right, wrapping onto new lines (Qt's flow-layout example)."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return size

    def _arrange(self, rect: QRect, move: bool) -> int:
        x, y, line = rect.x(), rect.y(), 0
        for item in self._items:
            hint = item.sizeHint()
            if x + hint.width() > rect.right() + 1 and line > 0:
                x, y, line = rect.x(), y + line + self._spacing, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._spacing
            line = max(line, hint.height())
        return y + line - rect.y()


def _set_axis_label(item: pg.PlotItem, side: str, text: str, units: str | None = None) -> None:
    """Set an axis label and re-centre it (pyqtgraph centres labels only when the axis resizes)."""
    axis = item.getAxis(side)
    if axis.labelText == text and axis.labelUnits == (units or ""):
        return
    item.setLabel(side, text, units=units)
    axis.resizeEvent()





def _style_legend(plot: pg.PlotWidget, item_pos: tuple[float, float], parent_pos: tuple[float, float],
                  offset: tuple[float, float]) -> None:
    """Legend on a semi-opaque panel at a chosen corner, so it stays readable over the curves."""
    legend = plot.getPlotItem().legend
    palette = plot.palette()
    base, text = palette.color(QPalette.ColorRole.Base), QColor(palette.color(QPalette.ColorRole.Text))
    legend.setBrush(QColor(base.red(), base.green(), base.blue(), 225))
    text.setAlpha(70)
    legend.setPen(text)
    legend.setLabelTextSize("8pt")
    for _sample, label in legend.items:  # setLabelTextSize only styles labels added later
        label.setText(label.text, size="8pt", color=legend.opts["labelTextColor"])
    legend.anchor(itemPos=item_pos, parentPos=parent_pos, offset=offset)


def _line_icon(colour: str, width: int) -> QIcon:
    pixmap = QPixmap(26, 12)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(pg.mkPen(QColor(colour), width=width))
    painter.drawLine(1, 6, 25, 6)
    painter.end()
    return QIcon(pixmap)


class ProjectionPlots(QWidget):
    """Four plots of a plan's projected error: per CDF point, against ε, against branching, per level.

    Call :meth:`set_plan`: plots (a)–(c) are computed on a worker (:meth:`ProjectionCache.project`,
    O(K·h), which at large K would otherwise freeze the window) and all four plots are drawn
    together when it is done, which :attr:`projected` announces; the tuned curve of plot (c) is
    then refined by further workers. ``last_redraw_ms`` is the GUI-thread time of the last draw
    (or unit switch); Qt paints afterwards (the benchmark times both). Series data:
    ``error_curves``, ``epsilon_curves`` (keys "plan", "alternative", "binary", "hist", "paper_best";
    "alternative" empty and hidden unless δ > 0), ``branching_curves`` ("equal", "optimised",
    "gaussian"; "gaussian" empty unless δ > 0), ``branching_marker``, ``budget_bars``.
    """

    units_changed = Signal(bool)  # True when errors are shown in % of N
    projected = Signal(object)  # the ProjectedCurves just drawn (its plan is the one last set)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cache = ProjectionCache()
        self.plan: Plan | None = None  # the plan last set
        self.projection: ProjectedCurves | None = None  # what plots (a)–(c) show (of an earlier plan until the worker is done)
        self.value_label = "value"
        self.n_public: int | None = None
        self.last_redraw_ms = 0.0
        self.pool = WorkerPool()
        self._generation = 0  # of the plan last set; results of older ones are dropped
        self._drawn_generation = 0  # of the projection drawn
        self._refine_timer = QTimer(self)
        self._refine_timer.setSingleShot(True)
        self._refine_timer.setInterval(REFINE_DELAY_MS)
        self._refine_timer.timeout.connect(lambda: self._refine_next(self._generation))
        self._budget_info: tuple[np.ndarray, np.ndarray] = (np.zeros(1), np.zeros(1))
        self._level_notes: list[pg.TextItem] = []

        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.setSpacing(2)
        self.explanation = QLabel(
            "Projected from the plan alone: no data used, no privacy spent. <b>95 % margin</b>: the half-width of "
            "the 95 % band published with each count (2.2 standard errors + 1 record); the band holds the true count "
            "in at least 95 % of releases. <b>On average</b>: the margin at the root-mean-square standard error over all "
            "CDF points.")
        self.explanation.setWordWrap(True)
        outer.addWidget(self.explanation)
        self.failure = inline_message()
        outer.addWidget(self.failure)

        outer.addLayout(self._build_series_bar())
        self._build_plot_area(outer)

        self._build_error_plot()
        self._build_epsilon_plot()
        self._build_branching_plot()
        self._build_budget_plot()

        for plot in (self.error_plot, self.epsilon_plot, self.branching_plot, self.budget_plot):
            plot.setMinimumSize(220, 150)  # the 2×2 grid fits a 900×600 window with the rest of the page
        self._plots = [(self.error_plot, "Error per point"), (self.epsilon_plot, "Error against ε"),
                       (self.branching_plot, "Error against branching"), (self.budget_plot, "Budget per level")]
        self.layout_mode = ""
        self._set_layout_mode("grid")

    def _build_series_bar(self) -> FlowLayout:
        """The bar above the plots: a check box per line of the top plots, and errors in records or % of N."""
        bar = FlowLayout()  # wraps onto a second line in a narrow window
        bar.addWidget(QLabel("Lines in the top plots:"))
        self.series_boxes: dict[str, QCheckBox] = {}
        for name in ("plan", "alternative") + BASELINES:
            box = QCheckBox(SERIES_NAMES[name])
            box.setIcon(_line_icon(SERIES_COLOURS[name], 3 if name in ("plan", "alternative") else 2))
            box.setChecked(True)
            box.setToolTip("Show or hide this line in the two top plots")
            box.toggled.connect(lambda on, name=name: self._show_series(name, on))
            self.series_boxes[name] = box
            bar.addWidget(box)
        self.series_boxes["alternative"].hide()  # shown when δ > 0 (named after its noise)
        units = QWidget()
        units_layout = QHBoxLayout(units)
        units_layout.setContentsMargins(12, 0, 0, 0)
        units_layout.addWidget(QLabel("Errors in:"))
        self.records_button = QRadioButton("records")
        self.percent_button = QRadioButton("% of N")
        self.records_button.setChecked(True)
        self.percent_button.setEnabled(False)
        self.percent_button.setToolTip("Needs the public number of records N")
        self._unit_group = QButtonGroup(self)
        for button in (self.records_button, self.percent_button):
            self._unit_group.addButton(button)
            units_layout.addWidget(button)
        self.percent_button.toggled.connect(self._units_toggled)
        bar.addWidget(units)
        return bar

    def _build_plot_area(self, outer: QVBoxLayout) -> None:
        """The plots' place: a 2×2 grid, or tabs when the widget is too small for four (:meth:`_set_layout_mode`)."""
        self._grid_page = QWidget()
        self._grid = QGridLayout(self._grid_page)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(6)
        for i in range(2):
            self._grid.setRowStretch(i, 1)
            self._grid.setColumnStretch(i, 1)
        self._tabs = QTabWidget()
        self._stack = QStackedLayout()
        self._stack.addWidget(self._grid_page)
        self._stack.addWidget(self._tabs)
        outer.addLayout(self._stack, 1)

    def _build_error_plot(self) -> None:
        """Plot (a): the projected error of each CDF point, with the region a plan was made for."""
        self.error_plot = new_plot("Projected error of each CDF point", "value", "95 % margin",
                                   y_units="records", legend=False)
        self.error_plot.getPlotItem().setLogMode(x=False, y=True)
        plain_log_axes(self.error_plot)
        self.error_curves: dict[str, pg.PlotDataItem] = {}
        for name in BASELINES + ("alternative", "plan"):
            curve = self.error_plot.plot(pen=series_pen(name, 2.5 if name in ("plan", "alternative") else 1.5))
            curve.setZValue(10 if name == "plan" else (5 if name == "alternative" else 0))
            self.error_curves[name] = curve
        # the region a plan was made for ("Where do you need accuracy?"), shaded behind the curves
        self.focus_band = pg.LinearRegionItem(values=(0.0, 1.0), movable=False,
                                              brush=pg.mkBrush(QColor(SERIES_COLOURS["plan"]).red(),
                                                               QColor(SERIES_COLOURS["plan"]).green(),
                                                               QColor(SERIES_COLOURS["plan"]).blue(), 40))
        self.focus_band.setZValue(-10)
        self.focus_band.hide()
        self.error_plot.addItem(self.focus_band, ignoreBounds=True)

    def _build_epsilon_plot(self) -> None:
        """Plot (b): the error on average against ε, with the plan's ε marked."""
        self.epsilon_plot = new_plot("Expected error against ε", "Privacy budget ε", "95 % margin on average",
                                     y_units="records", legend=False)
        self.epsilon_plot.getPlotItem().setLogMode(x=True, y=True)
        plain_log_axes(self.epsilon_plot)
        self.epsilon_curves: dict[str, pg.PlotDataItem] = {}
        for name in BASELINES + ("alternative", "plan"):
            self.epsilon_curves[name] = self.epsilon_plot.plot(
                pen=series_pen(name, 2.5 if name in ("plan", "alternative") else 1.5))
        self.epsilon_curves["plan"].setZValue(10)
        self.epsilon_curves["alternative"].setZValue(5)
        self.epsilon_line = pg.InfiniteLine(
            angle=90, pen=series_pen("marker", 1.5, dashed=True), label="your ε",
            labelOpts={"position": 0.93, "color": SERIES_COLOURS["marker"], "anchors": [(0, 0.5), (0, 0.5)]})
        self.epsilon_plot.addItem(self.epsilon_line, ignoreBounds=True)
        self.epsilon_dot = pg.ScatterPlotItem(size=9, brush=pg.mkBrush(SERIES_COLOURS["plan"]), pen=pg.mkPen(None))
        self.epsilon_plot.addItem(self.epsilon_dot)
        self.epsilon_plot.setToolTip("The 95 % margin on average if the same plan (same budget split) used another ε. "
                                     "Both axes on a log scale.")

    def _build_branching_plot(self) -> None:
        """Plot (c): the error against the branching factor of uniform trees, with the plan's star."""
        self.branching_plot = new_plot("Error against branching factor", "Branching factor b of a uniform tree",
                                       "95 % margin on average", y_units="records")
        self.branching_plot.getPlotItem().setLogMode(x=True, y=True)
        plain_log_axes(self.branching_plot)
        self.branching_curves = {
            "equal": self.branching_plot.plot(
                name="Equal budgets, fewest nodes (Rameshwar et al. 2024)", pen=series_pen("paper_best", 1.5),
                symbol="o", symbolSize=4, symbolPen=None, symbolBrush=SERIES_COLOURS["paper_best"]),
            "optimised": self.branching_plot.plot(
                name="Tuned budgets, best estimate (GLS)", pen=series_pen("plan", 1.5, dashed=True),
                symbol="o", symbolSize=5, symbolPen=None, symbolBrush=SERIES_COLOURS["plan"]),
            "gaussian": self.branching_plot.plot(
                pen=series_pen("gaussian", 1.5, dashed=True),
                symbol="t", symbolSize=6, symbolPen=None, symbolBrush=SERIES_COLOURS["gaussian"]),
        }
        self._gaussian_in_legend = False
        for curve in (self.error_curves["alternative"], self.epsilon_curves["alternative"], self.branching_curves["gaussian"]):
            curve.setData(np.zeros(0), np.zeros(0))  # empty (not None) until δ > 0
        self.branching_marker = self.branching_plot.plot(
            name="Your plan", pen=None, symbol="star", symbolSize=16,
            symbolBrush=SERIES_COLOURS["plan"], symbolPen=pg.mkPen("k", width=0.8))
        self.branching_marker.setZValue(20)
        self.branching_label = pg.TextItem("your plan", color=SERIES_COLOURS["plan"], anchor=(0.5, -0.25))
        self.branching_label.setZValue(21)
        self.branching_plot.addItem(self.branching_label, ignoreBounds=True)
        _style_legend(self.branching_plot, (0.5, 0), (0.5, 0), (0, 6))
        self.branching_plot.setToolTip(
            "Each point is a tree with the same number of branches b at every level, at your ε. Only trees "
            f"that need at most {MAX_PADDING:g}× your number of bins are shown. Both axes on a log scale. "
            "The star is your plan, placed at its average branching.")

    def _build_budget_plot(self) -> None:
        """Plot (d): each level's budget (bars) and noise standard deviation (diamonds)."""
        self.budget_plot = new_plot("Budget per level", "Tree level", "Budget ε of the level")
        item = self.budget_plot.getPlotItem()
        self.budget_bars = pg.BarGraphItem(x=[0], height=[0], width=0.6, brush=SERIES_COLOURS["plan"], pen=None)
        item.addItem(self.budget_bars)
        item.legend.addItem(self.budget_bars, "Budget ε (bars, left axis)")
        self.std_view = pg.ViewBox()
        item.showAxis("right")
        item.scene().addItem(self.std_view)
        self.std_view.setZValue(item.zValue() + 1)  # diamonds in front of the bars
        self.std_view.setMouseEnabled(x=False, y=False)
        right = item.getAxis("right")
        right.linkToView(self.std_view)
        right.setLabel("Noise std. dev.", units="records")
        right.enableAutoSIPrefix(False)
        self.std_view.setXLink(item)
        self.std_points = pg.ScatterPlotItem(size=10, symbol="d", brush=pg.mkBrush(SERIES_COLOURS["confidential"]),
                                             pen=pg.mkPen(None))
        self.std_view.addItem(self.std_points)
        item.legend.addItem(self.std_points, "Noise std. dev. (◆, right axis)")
        item.vb.sigResized.connect(self._sync_std_view)
        item.setMouseEnabled(x=False, y=False)
        item.hideButtons()
        self.budget_plot.scene().sigMouseMoved.connect(self._budget_hover)
        _style_legend(self.budget_plot, (1, 0), (1, 0), (-6, 6))

    # ------------------------------------------------------------------ public API
    @property
    def percent_of_n(self) -> bool:
        """True when the errors are shown in % of N (needs ``n_public``)."""
        return self.percent_button.isChecked() and bool(self.n_public)

    def set_percent_of_n(self, on: bool) -> None:
        """Show errors in % of N (only when ``n_public`` was given) or in records."""
        (self.percent_button if on and self.n_public else self.records_button).setChecked(True)

    @property
    def projecting(self) -> bool:
        """True until plots (a)–(c) show the plan last set."""
        return self._drawn_generation != self._generation

    @property
    def optimisation_pending(self) -> bool:
        """True while plot (c)'s tuned-budget curve is still being filled in (on workers)."""
        return self.projecting or bool(self.projection and self.projection.pending)

    @property
    def busy(self) -> bool:
        """True while any worker of this widget runs (including ones finishing after a newer plan)."""
        return self.pool.busy()

    def set_plan(self, plan: Plan, lower: float, upper: float, value_label: str = "value",
                 n_public: int | None = None, alternative: Plan | None = None,
                 region: tuple[int, int] | None = None) -> None:
        """Show the projected error of ``plan`` for K equal bins over [lower, upper) of a column
        called ``value_label`` (put its units in it, e.g. "income (€)"). With ``n_public`` (the
        public number of records N) the errors can also be shown in % of N. With δ > 0,
        ``alternative`` (the best plan of the other noise at the same (ε, δ)) is drawn beside it.
        The plots are drawn when their worker is done. ``region``: the CDF points of the region the officer
        needs accurate, whose margins the projection gives too (``ProjectedCurves.region_rms``/``region_worst``)."""
        self.plan, self.value_label = plan, value_label
        self.n_public = int(n_public) if n_public and n_public > 0 else None
        self.percent_button.setEnabled(self.n_public is not None)
        self.percent_button.setToolTip("" if self.n_public else "Needs the public number of records N")
        if self.n_public is None and self.percent_button.isChecked():
            self.records_button.blockSignals(True)
            self.records_button.setChecked(True)
            self.records_button.blockSignals(False)
        self._generation += 1
        self._refine_timer.stop()
        self.pool.cancel_all()  # older plans' workers stop at their next step
        generation, cache = self._generation, self.cache
        worker = Worker(lambda progress, should_cancel: cache.project(plan, lower, upper, should_cancel, alternative,
                                                                           region))
        self.pool.start(worker.connect_to(self, finished=lambda projection: self._on_projected(generation, projection),
                                          failed=lambda message: self._on_failed(generation, message)))

    def _on_projected(self, generation: int, projection: ProjectedCurves) -> None:
        if generation != self._generation:
            return
        start = time.perf_counter()
        self.projection, self._drawn_generation = projection, generation
        show_inline(self.failure, "")
        self._name_series()
        self._apply_units()
        self._draw_budgets()
        self._refit()
        self.last_redraw_ms = (time.perf_counter() - start) * 1000.0
        # Python workers slow the GUI thread (they share the interpreter lock), so the refinement
        # waits until the new plots are painted and the user has paused
        self._refine_timer.start()
        self.projected.emit(projection)

    def _on_failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            show_inline(self.failure, f"The projected error could not be computed: {message}")

    def _refine_next(self, generation: int) -> None:
        """Tune some of plot (c)'s pending factors on a worker, redraw (c), repeat until none is left;
        only while the plots are shown (hidden, the work would only slow the window: see showEvent)."""
        projection = self.projection
        if projection is None or not projection.pending or generation != self._drawn_generation:
            return
        if not self.isVisible():
            return
        bins, privacy, pending, cache = projection.plan.shape.bins, projection.plan.privacy, projection.pending, self.cache
        worker = Worker(lambda progress, should_cancel: cache.refine(bins, privacy, pending, should_cancel=should_cancel))
        self.pool.start(worker.connect_to(self, finished=lambda result: self._on_refined(generation, *result),
                                          failed=lambda message: self._on_failed(generation, message)))

    def _on_refined(self, generation: int, pending: list[int], curve: Curve) -> None:
        if generation != self._generation or self.projection is None:
            return
        self.projection.pending = pending
        self.projection.c["optimised"] = curve
        self._draw_branching()
        self._refine_next(generation)

    # ------------------------------------------------------------------ drawing
    def _name_series(self) -> None:
        """Name the plan's and the other noise's lines after their noise (the legend of (a)–(b)),
        and show the other noise's line and (c)'s Gaussian trees only when there are any."""
        projection = self.projection
        assert projection is not None
        plan, other = projection.plan, projection.alternative
        delta = plan.privacy.delta > 0
        self.series_boxes["plan"].setText(
            f"Your plan ({'Gaussian' if plan.noise == 'gaussian' else 'Laplace'} noise)" if delta else SERIES_NAMES["plan"])
        box = self.series_boxes["alternative"]
        box.setVisible(other is not None)
        if other is not None:
            box.setText(f"Best plan with {'Gaussian' if other.noise == 'gaussian' else 'Laplace'} noise")
            box.setToolTip(f"The best plan with the other noise at your ε and δ = {format_delta(other.privacy.delta)}, for "
                           "comparison. Show or hide this line in the two top plots.")
        else:
            for curves in (self.error_curves, self.epsilon_curves):
                curves["alternative"].setData(np.zeros(0), np.zeros(0))
        shown = box.isChecked() and other is not None
        self.error_curves["alternative"].setVisible(shown)
        self.epsilon_curves["alternative"].setVisible(shown)
        legend = self.branching_plot.getPlotItem().legend
        gaussian = Noise.GAUSSIAN in projection.c
        if gaussian and not self._gaussian_in_legend:
            legend.addItem(self.branching_curves["gaussian"], "Gaussian noise at your δ, best estimate (GLS)")
            for _sample, label in legend.items:
                label.setText(label.text, size=legend.opts["labelTextSize"], color=legend.opts["labelTextColor"])
        elif not gaussian and self._gaussian_in_legend:
            legend.removeItem(self.branching_curves["gaussian"])
        if not gaussian:
            self.branching_curves["gaussian"].setData(np.zeros(0), np.zeros(0))
        self._gaussian_in_legend = gaussian

    def _scale(self) -> float:
        n = self.n_public
        return 100.0 / n if n and self.percent_of_n else 1.0  # (percent_of_n needs an N)

    def _apply_units(self) -> None:
        projection = self.projection
        if projection is None:
            return
        scale = self._scale()
        units = "% of N" if self.percent_of_n else "records"
        plan = projection.plan
        # (a)
        item = self.error_plot.getPlotItem()
        _set_axis_label(item, "bottom", f"{escape(self.value_label)}, upper edge of each bin")  # rich text
        _set_axis_label(item, "left", "95 % margin", units)
        small = plan.shape.bins <= SMALL_K_SYMBOLS
        # a dense zigzag drawn antialiased costs several times the paint time and looks the same
        smooth = plan.shape.bins <= ANTIALIAS_POINTS
        for name, (x, y) in projection.a.items():
            curve = self.error_curves[name]
            curve.setData(x, y * scale, antialias=smooth)
            if small:
                curve.setSymbol("o")
                curve.setSymbolSize(5)
                curve.setSymbolBrush(SERIES_COLOURS[name])
                curve.setSymbolPen(None)
            else:
                curve.setSymbol(None)
        # x: the column's whole range; y (log): all curves, at least half a decade
        ys = np.concatenate([y for _, y in projection.a.values()]) * scale
        item.setXRange(projection.lower, projection.upper, padding=0.02)
        if ys.size:
            lo, hi = math.log10(float(ys.min())), math.log10(float(ys.max()))
            pad = max(0.0, 0.5 - (hi - lo)) / 2
            item.setYRange(lo - pad, hi + pad, padding=0.05)
        sampled = "" if plan.shape.bins <= 2 * DRAWN_SLICES else (
            f" With {plan.shape.bins:,} bins there are too many points to draw one by one: the line joins the "
            f"lowest and the highest margin in each of {DRAWN_SLICES:,} narrow slices of the range.")
        if plan.shape.bins > EXACT_POINT_LIMIT:
            sampled += f" The margins are computed exactly at {SAMPLED_POINTS:,} points spread over the range."
        if plan.focus is None:
            self.focus_band.hide()
        else:  # CDF point j sits at the upper edge of bin j
            width = (projection.upper - projection.lower) / plan.shape.bins
            self.focus_band.setRegion((projection.lower + plan.focus[0] * width,
                                       projection.lower + plan.focus[1] * width))
            self.focus_band.show()
            sampled += " The shaded band is the region this plan was made for."
        self.error_plot.setToolTip("Each point: the 95 % margin (half-width of the published 95 % band) of the number of "
                                   "records up to that value (log scale)." + sampled)
        # (b)
        item = self.epsilon_plot.getPlotItem()
        _set_axis_label(item, "left", "95 % margin on average", units)
        for name, (x, y) in projection.b.items():
            self.epsilon_curves[name].setData(x, y * scale)
        self.epsilon_plot.getPlotItem().setTitle(
            "Expected error against ε" + (f" (at δ = {format_delta(plan.privacy.delta)})" if plan.privacy.delta > 0 else ""))
        eps = plan.privacy.epsilon
        self.epsilon_line.setValue(math.log10(eps))
        self.epsilon_line.label.setFormat(f" your ε = {format_parameter(eps)}")
        self.epsilon_dot.setData([math.log10(eps)], [math.log10(projection.rms * scale)])
        item.enableAutoRange()
        self._draw_branching()

    def _draw_branching(self) -> None:
        projection, scale = self.projection, self._scale()
        assert projection is not None
        plan = projection.plan
        units = "% of N" if self.percent_of_n else "records"
        item = self.branching_plot.getPlotItem()
        _set_axis_label(item, "left", "95 % margin on average", units)
        for name, (x, y) in projection.c.items():
            self.branching_curves[name].setData(x, y * scale, connect=connect_within_runs(x, projection.allowed))
        label = ("Tuned budgets" + (", Laplace noise" if Noise.GAUSSIAN in projection.c else "") + ", best estimate (GLS)"
                 + (" – refining…" if projection.pending else ""))
        legend = item.legend
        legend.getLabel(self.branching_curves["optimised"]).setText(
            label, size=legend.opts["labelTextSize"], color=legend.opts["labelTextColor"])
        bx = effective_branching(plan.shape)
        self.branching_marker.setData([bx], [projection.rms * scale])
        self.branching_label.setText(f"your plan ({branching_words(plan.shape.branching)})")
        self.branching_label.setPos(math.log10(bx), math.log10(projection.rms * scale))
        # y range by hand: room below the star for its label, above the curves for the legend
        ys = np.concatenate([y for _, y in projection.c.values()] + [[projection.rms]]) * scale
        xs = np.concatenate([x for x, _ in projection.c.values()] + [[bx]])
        lo, hi = math.log10(float(ys.min())), math.log10(float(ys.max()))
        span = max(hi - lo, 0.5)
        item.setYRange(lo - 0.3 * span, hi + 0.75 * span, padding=0)
        lo_x, hi_x = math.log10(float(xs.min())), math.log10(float(xs.max()))
        item.setXRange(lo_x, hi_x, padding=0.06)
        # the label beside the star stays inside the plot: left-aligned near the left edge, right near the right
        where = (math.log10(bx) - lo_x) / (hi_x - lo_x) if hi_x > lo_x else 0.5
        self.branching_label.setAnchor((0.0 if where < 0.25 else (1.0 if where > 0.75 else 0.5), -0.25))

    def _draw_budgets(self) -> None:
        assert self.projection is not None
        plan = self.projection.plan
        h, first = plan.shape.height, plan.privacy.first_noised_level()
        eps = np.zeros(h + 1)  # the level budgets: ε_l (Laplace) or ρ_l (Gaussian)
        eps[first:] = plan.level_budgets
        std = np.sqrt(plan.level_variances())
        levels = np.arange(h + 1, dtype=float)
        self.budget_bars.setOpts(x=levels, height=eps, width=0.6)
        shown = np.isfinite(std)
        self.std_points.setData(levels[shown], std[shown])
        self._budget_info = (eps, std)
        for note in self._level_notes:
            self.budget_plot.removeItem(note)
        self._level_notes = []
        if h <= 10:  # say why a level has no bar (the tooltip says it for taller trees)
            for level in range(h + 1):
                if eps[level] > 0:
                    continue
                text = "exact\n(N public)" if level == 0 and plan.privacy.root_public else "not\npublished"
                # the root's note starts just left of its bar: centred, it would be cut off by the plot's edge
                note = pg.TextItem(text, color=SERIES_COLOURS["marker"], anchor=(0.15 if level == 0 else 0.5, 1.0))
                note.setPos(level, 0)
                self.budget_plot.addItem(note, ignoreBounds=True)
                self._level_notes.append(note)
        item = self.budget_plot.getPlotItem()
        step = max(1, math.ceil((h + 1) / 12))
        ticks = [(0, "root")]
        ticks += [(level, str(level)) for level in range(step, h) if level % step == 0 and h - level >= step / 2]
        ticks.append((h, f"{h} (leaves)"))
        item.getAxis("bottom").setTicks([ticks])
        item.setXRange(-0.6, h + 0.6, padding=0)
        headroom = 1.6  # room above the bars for the legend
        item.setYRange(0, float(eps.max()) * headroom, padding=0)
        finite = std[shown]
        top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        self.std_view.setYRange(0, top * headroom, padding=0)
        privacy = plan.privacy
        unit = plan.budget_name
        if plan.noise == Noise.GAUSSIAN:
            total = f"total ρ = {format_parameter(plan.budget_total)}"
            under = f"Gaussian noise, ε = {format_parameter(privacy.epsilon)}, δ = {format_delta(privacy.delta)}"
        else:
            total, under = f"total ε = {format_parameter(privacy.epsilon)}", ""
        item.setTitle(f"Budget per level: {total}<br>"
                      f"<span style='font-size:8pt'>{neighbour_words(privacy)}</span>")
        self.budget_plot.setToolTip("Hover over a bar for its budget and noise" + (
            f". {under}: each level's budget is a ρ (zero-concentrated DP); the levels' ρ add up to the ρ "
            "that your ε and δ allow." if under else ""))
        _set_axis_label(item, "left", f"Budget {unit} of the level" + (" (zCDP)" if unit == "ρ" else ""))
        legend = item.legend
        legend.getLabel(self.budget_bars).setText(
            f"Budget {unit} (bars, left axis)", size=legend.opts["labelTextSize"], color=legend.opts["labelTextColor"])
        self._sync_std_view()

    def budget_tooltip(self, level: int) -> str:
        """Plain-words description of one level of the plan drawn (the hover tooltip of plot (d))."""
        assert self.projection is not None
        plan = self.projection.plan
        eps, std = self._budget_info
        nodes = plan.shape.nodes_at_level(level)
        where = "Root" if level == 0 else ("Leaves" if level == plan.shape.height else f"Level {level}")
        head = f"{where}: {nodes:,} count{'s' if nodes != 1 else ''}"
        if level == 0 and plan.privacy.root_public:
            return f"{head}\npublished exactly (N is public): no budget, no noise"
        if not math.isfinite(std[level]):
            return f"{head}\nnot published (budget 0)"
        return (f"{head}\nbudget {plan.budget_name} = {format_parameter(eps[level])}\n"
                f"noise std. dev. = {format_parameter(std[level])} records per count")

    # ------------------------------------------------------------------ plumbing
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.projection is not None and self.projection.pending and not self.busy:
            self._refine_timer.start()  # the tuning left off while the plots were hidden

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        size = event.size()
        compact = size.width() < GRID_MIN_WIDTH or size.height() < GRID_MIN_HEIGHT
        self._set_layout_mode("tabs" if compact else "grid")

    def _set_layout_mode(self, mode: str) -> None:
        """"grid" (2×2) or "tabs" (one plot per tab, for small windows)."""
        if mode == self.layout_mode:
            return
        current = self._tabs.currentIndex()
        while self._tabs.count():
            self._tabs.removeTab(0)
        for index, (plot, name) in enumerate(self._plots):
            if mode == "grid":
                self._grid.addWidget(plot, index // 2, index % 2)
                plot.show()  # the tab widget hid the pages it did not show; the grid shows all four
            else:
                self._tabs.addTab(plot, name)
        if mode == "tabs":
            self._tabs.setCurrentIndex(max(current, 0))
        self._stack.setCurrentIndex(0 if mode == "grid" else 1)
        self.layout_mode = mode

    def _show_series(self, name: str, on: bool) -> None:
        self.error_curves[name].setVisible(on)
        self.epsilon_curves[name].setVisible(on)
        if name == "plan":
            self.epsilon_dot.setVisible(on)

    def _refit(self) -> None:
        """Fit each plot to its view again: a longer title or label can leave it wider than the view."""
        for plot, _name in self._plots:
            plot.resizeEvent(None)

    def _units_toggled(self, _checked: bool) -> None:
        start = time.perf_counter()
        self._apply_units()
        self._refit()
        self.last_redraw_ms = (time.perf_counter() - start) * 1000.0
        self.units_changed.emit(self.percent_of_n)

    def _sync_std_view(self) -> None:
        vb = self.budget_plot.getPlotItem().vb
        self.std_view.setGeometry(vb.sceneBoundingRect())
        self.std_view.linkedViewChanged(vb, self.std_view.XAxis)

    def _budget_hover(self, pos: QPointF) -> None:
        if self.projection is None:
            return
        vb = self.budget_plot.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(pos):
            return
        x = vb.mapSceneToView(pos).x()
        level = int(round(x))
        if 0 <= level <= self.projection.plan.shape.height and abs(x - level) <= 0.35:
            QToolTip.showText(QCursor.pos(), self.budget_tooltip(level), self.budget_plot)
        else:
            QToolTip.hideText()
