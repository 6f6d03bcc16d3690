"""What was released: the CDF with its 95 % band, a histogram, quantiles, the mean and sum, and a range counter.

Everything shown here is computed from the public :class:`~dpgui.core.mechanism.Release` only.
The confidential true counts may be handed in for the officer's own checking; they are drawn on
the CDF plot only while "Show confidential true CDF" is ticked, behind a red banner, and are never
used by the quantile table, the mean and sum, the range tool or the histogram.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView, QButtonGroup, QCheckBox, QDoubleSpinBox, QFormLayout, QGroupBox, QHBoxLayout, QHeaderView,
    QLabel, QRadioButton, QSizePolicy, QSplitter, QTableView, QTabWidget, QVBoxLayout, QWidget,
)

from dpgui.app.text import format_delta
from dpgui.app.widgets.style import SERIES_COLOURS, is_dark, new_plot, series_pen
from dpgui.core.cdf_moments import NO_MEAN, CdfMoments, cdf_moments
from dpgui.core.mechanism import Release
from dpgui.core.missing import MISSING_BUCKET, MISSING_DROP, MISSING_IMPUTE, MISSING_RULE_TEXT, missing_rule_text
from dpgui.core.quantiles import Quantile, RangeCount, missing_interval95, range_count, whole_number_step
from dpgui.formatting import (
    edge_decimals, format_edge, format_epsilon, format_fixed, format_percent, moment_decimals, moment_words,
    value_decimals,
)
from dpgui.vocabulary import Noise
from dpgui.workspace.results import PROBABILITIES as PROBABILITIES  # the table's rows (tests import it from here)
from dpgui.workspace.results import ResultFigures, result_figures

PROBABILITY_NAMES = {0.25: "lower quartile", 0.5: "median", 0.75: "upper quartile"}

CONFIDENTIAL_LEGEND = "CONFIDENTIAL — true data, not released"
CONFIDENTIAL_BANNER = "Showing confidential data for your checking only. It is not part of the release."
INTERVAL_TIP = ("With at least 95 % confidence the true quantile of the data lies between “interval low” and "
                "“interval high” (bin edges): the interval allows for the privacy noise and for where inside its bin "
                "the true value lies. Values outside the bounds count as the nearest bound.")
VALUE_TIP = ("The estimate: the point where the released CDF reaches this share, with the records taken to be spread "
             "evenly inside the bin (linear interpolation inside bin [a, b)). The true quantile can lie anywhere in "
             "the interval, not necessarily near this point.")
CDF_NOTE = ("The shaded band: at each bin edge, the true number of records at or below it lies inside with at "
            "least 95 % probability (as a share, divided by the released N); when it is too thin to see, the "
            "release is very precise. Zoom with the mouse wheel; right-click for more options.")
HISTOGRAM_NOTE = ("Each bar is the rise of the released CDF across its bins, so it carries the same privacy noise. "
                  "Zoom with the mouse wheel; right-click for more options.")
MOMENTS_TIP = ("The mean and the sum of the values, read from the released CDF (no extra privacy budget). Each value "
               "is taken at the middle of its bin, because where it lies inside its bin is not released. “± … (95 %)” "
               "is the privacy noise: with at least 95 % probability the noise moves the figure by no more than that. "
               "Binning can move the mean by at most half a bin (the sum by half a bin per value). The two numbers "
               "after the colon allow for both: the true mean (or sum) of the values lies between them in at least "
               "95 of 100 releases. Values outside the bounds count as the nearest bound.")
RANGE_ERROR = "“From” must be smaller than “to”. Please change one of them."


class QuantileTableModel(QAbstractTableModel):
    """Rows of released quantiles: name, value and 95 % interval, formatted for reading."""

    HEADERS = ("Quantile", "Estimate\n(interpolated)", "95 % interval\nlow", "95 % interval\nhigh")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[Quantile] = []
        self._decimals = 0
        self._label = "value"

    def set_rows(self, rows: list[Quantile], decimals: int, value_label: str) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self._decimals = decimals
        self._label = value_label
        self.endResetModel()

    def rows(self) -> list[Quantile]:
        return list(self._rows)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def _text(self, q: Quantile, column: int) -> str:
        if column == 0:
            name = PROBABILITY_NAMES.get(round(q.probability, 6))
            return format_percent(q.probability) + (f" ({name})" if name else "")
        return format_fixed((q.value, q.low, q.high)[column - 1], 0 if q.whole else self._decimals)

    def _tooltip(self, q: Quantile) -> str:
        def fmt(v: float) -> str:
            return format_fixed(v, 0 if q.whole else self._decimals)

        if q.whole:
            return (f"Estimate: {fmt(q.value)}, the whole number where the released CDF reaches "
                    f"{format_percent(q.probability)} (the values are whole numbers and each bin is centred on them). "
                    f"With at least 95 % confidence the true {format_percent(q.probability)} point of the data lies "
                    f"between {fmt(q.low)} and {fmt(q.high)}, both included; the interval allows for the noise added "
                    "for privacy.")
        return (f"Estimate: {fmt(q.value)}, by linear interpolation inside bin [{fmt(q.bin_low)}, {fmt(q.bin_high)}) "
                f"of the released CDF. With at least 95 % confidence the true {format_percent(q.probability)} point of the "
                f"data (the smallest {self._label} with {format_percent(q.probability)} of records at or below it) lies "
                f"between {fmt(q.low)} and {fmt(q.high)}; the interval allows for the noise added for privacy and "
                "for where inside its bin the true value lies.")

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not (0 <= index.row() < len(self._rows)):
            return None
        q = self._rows[index.row()]
        median = abs(q.probability - 0.5) < 1e-9
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(q, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(q)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            horizontal = Qt.AlignmentFlag.AlignLeft if index.column() == 0 else Qt.AlignmentFlag.AlignRight
            return int(horizontal | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole and median:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.BackgroundRole and median:
            colour = QColor(SERIES_COLOURS["plan"])
            colour.setAlpha(60)
            return colour
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation != Qt.Orientation.Horizontal or not (0 <= section < len(self.HEADERS)):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if section == 1 and self._rows and self._rows[0].whole:  # the estimate says how it was made
                return "Estimate\n(whole number)"
            return self.HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            if section == 0:
                return "The share of records at or below the value on this row."
            if section == 1:
                return VALUE_TIP
            return INTERVAL_TIP
        return None


class ResultView(QWidget):
    """The released CDF, its histogram, a quantile table and a range tool for one release."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._release: Release | None = None
        self._true_counts: np.ndarray | None = None  # CONFIDENTIAL: only for the checking toggle
        self._value_label = "value"
        self._range: RangeCount | None = None
        self._edges = np.zeros(1)  # lower, then the K bin upper edges
        self.hist_counts = np.zeros(0)  # released records per drawn bar (group of bins)
        self.hist_group = 1  # bins per drawn bar

        self.summary = QLabel("No release yet.")
        self.summary.setWordWrap(True)

        left = self._build_left()

        table_box = self._build_quantile_box()

        self._build_range_box()

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(table_box, 1)
        right_layout.addWidget(self.range_box)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)

        root = QVBoxLayout(self)
        root.addWidget(self.summary)
        root.addWidget(self.splitter, 1)

        self.true_checkbox.toggled.connect(self._show_true_curve)
        self.fraction_button.toggled.connect(self._redraw)
        self._figures: ResultFigures | None = None
        self._moments: CdfMoments | None = None
        self._whole_step: int | None = None  # whole numbers per bin of a whole-number release (centred bins)
        self.clear()

    def _build_left(self) -> QWidget:
        """The left side: how to show the values, the confidential toggle and its banner, the CDF and histogram
        tabs, and the note under them."""
        # --- view options, directly above the plots
        self.fraction_button = QRadioButton("Fraction of records")
        self.records_button = QRadioButton("Number of records")
        self.fraction_button.setChecked(True)
        self.fraction_button.setToolTip("Show the vertical axis as a share of all records (0 to 1).")
        self.records_button.setToolTip("Show the vertical axis as a number of records.")
        self._scale_group = QButtonGroup(self)
        self._scale_group.addButton(self.fraction_button)
        self._scale_group.addButton(self.records_button)
        self.true_checkbox = QCheckBox("Show confidential true CDF")
        self.true_checkbox.setEnabled(False)

        options = QHBoxLayout()
        options.addWidget(QLabel("Show as:"))
        options.addWidget(self.fraction_button)
        options.addWidget(self.records_button)
        options.addStretch(1)

        self.banner = QLabel(CONFIDENTIAL_BANNER)
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(
            "QLabel { background-color: #B00020; color: white; font-weight: bold; padding: 6px; border-radius: 3px; }"
        )
        self.banner.setAccessibleName("Confidential data warning")
        self.banner.setVisible(False)

        self._build_plots()

        self.tabs = QTabWidget()
        self.tabs.addTab(self.cdf_plot, "Cumulative (CDF)")
        self.tabs.addTab(self.hist_plot, "Histogram")
        self.tabs.setTabToolTip(0, "The released share of records at or below each value, with its 95 % band.")
        self.tabs.setTabToolTip(1, "Records per bin, worked out from the released CDF (differences of its steps).")

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(options)
        left_layout.addWidget(self.true_checkbox)  # its own row: the left side stays narrow at 200 % scaling
        left_layout.addWidget(self.banner)
        left_layout.addWidget(self.tabs, 1)
        self.plot_note = QLabel(CDF_NOTE)
        self.plot_note.setWordWrap(True)
        left_layout.addWidget(self.plot_note)
        left_layout.addWidget(self._build_moments_box())  # beside the CDF it is read from
        self.tabs.currentChanged.connect(
            lambda index: self.plot_note.setText(CDF_NOTE if index == 0 else HISTOGRAM_NOTE))
        return left

    # ------------------------------------------------------------------------------------------
    # public API

    def _build_plots(self) -> None:
        """The released CDF with its 95 % band (and the confidential CDF on request), and the histogram."""
        self.cdf_plot = new_plot("Released cumulative distribution (CDF)", "value", "Fraction of records at or below")
        self.cdf_plot.setAccessibleName("Released CDF plot")
        band_colour = QColor(SERIES_COLOURS["plan"])
        band_colour.setAlpha(70)
        none_pen = pg.mkPen(None)
        self.band_low = pg.PlotCurveItem(pen=none_pen)
        self.band_high = pg.PlotCurveItem(pen=none_pen)
        self.band = pg.FillBetweenItem(self.band_low, self.band_high, brush=pg.mkBrush(band_colour))
        self.cdf_curve = pg.PlotDataItem(pen=series_pen("plan"), name="Released CDF")
        self.true_curve: pg.PlotDataItem | None = None
        item = self.cdf_plot.getPlotItem()
        for it in (self.band_low, self.band_high, self.band):
            item.addItem(it)
        item.addItem(self.cdf_curve)  # registers "Released CDF" in the legend
        self.cdf_curve.setClipToView(True)
        self.cdf_curve.setDownsampling(auto=True, method="peak")
        # FillBetweenItem has no legend sample of its own: an undrawn bar stands in for it.
        self._band_sample = pg.BarGraphItem(x=[], height=[], width=1.0, brush=pg.mkBrush(band_colour), pen=none_pen)
        self._band_sample.visibleChanged.connect(lambda: self.band.setVisible(self._band_sample.isVisible()))
        item.legend.addItem(self._band_sample, "95 % band")
        # a CDF rises to the right, so the lower right corner is free for the legend
        item.legend.anchor(itemPos=(1, 1), parentPos=(1, 1), offset=(-10, -10))

        # --- histogram plot ---------------------------------------------------------------------
        self.hist_plot = new_plot("Records per bin (from the released CDF)", "value", "Records", legend=False)
        self.hist_plot.setAccessibleName("Histogram derived from the released CDF")
        bar_colour = QColor(SERIES_COLOURS["plan"])
        bar_colour.setAlpha(170)
        self.hist_bars = pg.BarGraphItem(x0=[], x1=[], height=[], brush=pg.mkBrush(bar_colour),
                                         pen=pg.mkPen(QColor(SERIES_COLOURS["plan"]), width=0.5))
        self.hist_plot.addItem(self.hist_bars)

    def _build_range_box(self) -> None:
        """The range tool: how many records lie between two values, with its interval."""
        self.from_spin = QDoubleSpinBox()
        self.to_spin = QDoubleSpinBox()
        for spin, name in ((self.from_spin, "from"), (self.to_spin, "to")):
            spin.setKeyboardTracking(False)  # recompute when the user finishes typing, not per key
            spin.setGroupSeparatorShown(True)
            spin.setAccessibleName(f"Range {name}")
            spin.setMinimumWidth(90)
            spin.valueChanged.connect(self._update_range)
        self.range_result_label = QLabel("")
        self.range_result_label.setWordWrap(True)
        self.range_result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.range_error_label = QLabel("")
        self.range_error_label.setWordWrap(True)
        self.range_error_label.setVisible(False)
        self.range_box = QGroupBox("How many records lie in a range?")
        form = QFormLayout(self.range_box)
        self._from_label = QLabel("From")
        self._to_label = QLabel("To (not included)")
        form.addRow(self._from_label, self.from_spin)
        form.addRow(self._to_label, self.to_spin)
        form.addRow(self.range_result_label)
        form.addRow(self.range_error_label)

    def _build_quantile_box(self) -> QGroupBox:
        """The quantiles of the released CDF, with their intervals, as a table."""
        self.quantile_model = QuantileTableModel(self)
        self.quantile_table = QTableView()
        self.quantile_table.setModel(self.quantile_model)
        self.quantile_table.setAccessibleName("Quantiles of the released CDF")
        self.quantile_table.setToolTip(INTERVAL_TIP)
        self.quantile_table.verticalHeader().setVisible(False)
        self.quantile_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.quantile_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.quantile_table.setWordWrap(False)
        header = self.quantile_table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.quantile_table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        table_box = QGroupBox("Quantiles (from the released CDF)")
        table_layout = QVBoxLayout(table_box)
        table_note = QLabel("Hover over a row for a plain-language reading.")
        table_note.setWordWrap(True)
        table_layout.addWidget(self.quantile_table, 1)
        table_layout.addWidget(table_note)
        return table_box

    def _build_moments_box(self) -> QGroupBox:
        """The mean and the sum of the values, with their intervals, in words."""
        self.moments_label = QLabel("")
        self.moments_label.setWordWrap(True)
        self.moments_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.moments_label.setAccessibleName("Mean and sum of the released CDF")
        box = QGroupBox("Mean and sum (from the released CDF)")
        box.setToolTip(MOMENTS_TIP)
        layout = QVBoxLayout(box)
        layout.addWidget(self.moments_label)
        return box

    def set_release(self, release: Release, value_label: str = "value", true_counts: np.ndarray | None = None,
                    figures: ResultFigures | None = None, whole_numbers: bool = False) -> None:
        """Show ``release``. ``true_counts`` are the CONFIDENTIAL histogram counts: only drawn on the
        CDF plot while the officer ticks "Show confidential true CDF". ``figures``: the release's
        :func:`~dpgui.workspace.results.result_figures`, computed on a worker (at 2²⁰ bins they take
        about half a second); computed here when None or made for another release. ``whole_numbers``: the
        column is known (publicly) to hold whole numbers: quantiles and range counts in whole numbers
        when the bins are centred on them."""
        if figures is None or figures.release is not release:
            figures = result_figures(release, whole_numbers)
        self._whole_step = whole_number_step(release.lower, release.upper, release.plan.shape.bins) if whole_numbers \
            else None
        k = release.plan.shape.bins
        if true_counts is not None:
            true_counts = np.asarray(true_counts)
            if true_counts.shape != (k,):
                raise ValueError(f"true counts have shape {true_counts.shape}, the release has {k} bins")
        self.true_checkbox.setChecked(False)  # a new release always starts with the truth hidden
        self._release = release
        self._value_label = value_label.strip() or "value"
        self._true_counts = None if true_counts is None else true_counts.astype(np.int64, copy=True)
        self._figures = figures
        self._edges = figures.edges
        width = (release.upper - release.lower) / k
        self._decimals = value_decimals(width)
        self._edge_dec = edge_decimals(release.lower, width)

        n = format_fixed(release.total, 0)
        n_kind = "public total" if release.plan.privacy.root_public else "released estimate"
        summary = (f"<b>{n}</b> records ({n_kind}) in {k:,} bins of {format_edge(width, self._edge_dec)} "
                   f"{html.escape(self._value_label)}, from {format_edge(release.lower, self._edge_dec)} "
                   f"to {format_edge(release.upper, self._edge_dec)}; "
                   f"privacy budget {self._budget_words(release)}. "
                   f"Missing values: {html.escape(self._missing_words(release), quote=False)}.")
        if not release.secure:
            summary += " <b>Practice run with a test random source: not safe to publish.</b>"
        self.summary.setText(summary)

        axis_label = html.escape(self._value_label)  # pyqtgraph labels are rich text
        self.cdf_plot.getPlotItem().setLabel("bottom", axis_label)
        self.hist_plot.getPlotItem().setLabel("bottom", axis_label)
        self.cdf_plot.getPlotItem().setTitle(f"Released cumulative distribution (CDF) of {axis_label}")

        self.quantile_model.set_rows(list(figures.quantiles), self._decimals, self._value_label)
        self._fit_table_width()
        self._moments = figures.moments if figures.moments is not None else cdf_moments(release, whole_numbers)
        self.moments_label.setText(moments_text(self._moments, self._value_label))

        self._setup_histogram(figures)
        self._setup_range_tool(figures, width)

        has_truth = self._true_counts is not None
        self.true_checkbox.setEnabled(has_truth)
        self.true_checkbox.setToolTip(
            "Draw the true CDF of your confidential data on the plot, to check the release looks right. "
            "It is only drawn here and is not part of the release." if has_truth
            else "The confidential data is not available for this release, so there is nothing to compare with.")
        for w in (self.fraction_button, self.records_button, self.range_box):
            w.setEnabled(True)
        self._redraw()
        for plot in (self.cdf_plot, self.hist_plot):
            plot.getPlotItem().setLimits(xMin=release.lower - 0.05 * (release.upper - release.lower),
                                         xMax=release.upper + 0.05 * (release.upper - release.lower))
            plot.getPlotItem().enableAutoRange()

    def clear(self) -> None:
        """Show nothing (and forget the confidential counts)."""
        self.true_checkbox.setChecked(False)
        self._release = None
        self._whole_step = None
        self._figures = None
        self._true_counts = None
        self._range = None
        self._edges = np.zeros(1)
        self._decimals = 0
        self._edge_dec = 0
        self.hist_counts = np.zeros(0)
        self.hist_group = 1
        self.summary.setText("No release yet.")
        self._value_label = "value"
        self.quantile_model.set_rows([], 0, self._value_label)
        self._fit_table_width()
        self._moments = None
        self.moments_label.setText("")
        self.cdf_curve.setData([], [])
        self.band_low.setData([], [])
        self.band_high.setData([], [])
        self.hist_bars.setOpts(x0=[], x1=[], height=[])
        self.hist_plot.getPlotItem().setTitle("Records per bin (from the released CDF)")
        # nothing of the release shown before stays on screen (e.g. its column's name after other data opens)
        self.cdf_plot.getPlotItem().setTitle("Released cumulative distribution (CDF)")
        for plot in (self.cdf_plot, self.hist_plot):
            plot.getPlotItem().setLabel("bottom", "value")
        for spin in (self.from_spin, self.to_spin):
            spin.blockSignals(True)
            spin.setSuffix("")
            spin.setValue(spin.minimum())
            spin.blockSignals(False)
        self.true_checkbox.setEnabled(False)
        self.true_checkbox.setToolTip("No release is shown.")
        for w in (self.fraction_button, self.records_button, self.range_box):
            w.setEnabled(False)
        self.range_result_label.setText("")
        self.range_error_label.setVisible(False)

    def release(self) -> Release | None:
        return self._release

    def moments(self) -> CdfMoments | None:
        """The shown release's mean and sum (None: no release shown)."""
        return self._moments

    def quantile_rows(self) -> list[tuple[float, float, float, float]]:
        """(probability, value, 95 % low, 95 % high) per table row, as computed (not rounded)."""
        return [(q.probability, q.value, q.low, q.high) for q in self.quantile_model.rows()]

    def range_result(self) -> RangeCount | None:
        """The range tool's current answer; None with no release or an empty range."""
        return self._range

    def set_range(self, start: float, stop: float) -> None:
        """Put ``start`` and ``stop`` in the range tool (as if typed) and recompute."""
        for spin, value in ((self.from_spin, start), (self.to_spin, stop)):
            spin.blockSignals(True)
            spin.setValue(value)
            spin.blockSignals(False)
        self._update_range()

    def show_fraction(self, fraction: bool) -> None:
        (self.fraction_button if fraction else self.records_button).setChecked(True)

    # ------------------------------------------------------------------------------------------
    # drawing

    def _fraction(self) -> bool:
        return self.fraction_button.isChecked()

    def _fit_table_width(self) -> None:
        """Make the quantile table at least as wide as its columns, so no column hides behind a scroll bar."""
        table = self.quantile_table
        table.resizeColumnsToContents()  # each column as wide as its contents and header need …
        header = table.horizontalHeader()
        last = self.quantile_model.columnCount() - 1  # … except the last, which stretches: its width
        # is measured with sizeHintForColumn (it reads every cell, so only for the one column that needs it)
        columns = (sum(header.sectionSize(c) for c in range(last))
                   + max(table.sizeHintForColumn(last), header.sectionSizeHint(last)))
        table.setMinimumWidth(columns + 2 * table.frameWidth() + table.verticalScrollBar().sizeHint().width() + 4)

    @staticmethod
    def _budget_words(release: Release) -> str:
        """The release's privacy budget: ε, and for Gaussian noise also δ and ρ."""
        plan = release.plan
        words = f"ε = {format_epsilon(plan.privacy.epsilon)}"
        if plan.noise == Noise.GAUSSIAN:
            words += f", δ = {format_delta(plan.privacy.delta)} (Gaussian noise, ρ = {plan.budget_total:.4g})"
        return words

    @staticmethod
    def _missing_words(release: Release) -> str:
        """The missing-value rule of the release, with the released count under the bucket rule."""
        if release.plan.privacy.impute is not None:
            return missing_rule_text(MISSING_IMPUTE, release.plan.privacy.impute)
        if release.missing is None:
            return MISSING_RULE_TEXT[MISSING_DROP] if not release.plan.privacy.root_public else "left out"
        interval = missing_interval95(release)
        assert interval is not None, "a release with a missing count has the missing values' leaf"
        low, high = interval
        return (f"{MISSING_RULE_TEXT[MISSING_BUCKET]}; about {format_fixed(release.missing, 0)} missing, 95 % interval "
                f"{format_fixed(math.floor(low), 0)} – {format_fixed(math.ceil(high), 0)} (the CDF is that of the values)")

    def _redraw(self) -> None:
        release, figures = self._release, self._figures
        if release is None or figures is None:
            return
        fraction = self._fraction()
        n = float(release.values_total)  # the CDF of the values: missing values are not among them
        scale = (1.0 / n if n > 0 else 0.0) if fraction else 1.0
        low, high = figures.band_low, figures.band_high  # thinned: clipping to n and scaling commute with it
        if fraction:  # a fraction of the values is at most 1 (the band is clipped to N, which counts missing ones too)
            low, high = np.minimum(low, n), np.minimum(high, n)
        self.cdf_curve.setData(self._edges, figures.cumulative * scale)
        self.band_low.setData(figures.band_x, low * scale)
        self.band_high.setData(figures.band_x, high * scale)
        y_label = "Fraction of records at or below" if fraction else "Number of records at or below"
        self.cdf_plot.getPlotItem().setLabel("left", y_label)
        self.hist_bars.setOpts(height=self.hist_counts * scale)
        self.hist_plot.getPlotItem().setLabel("left", "Fraction of records" if fraction else "Records")
        if self.true_curve is not None:
            self.true_curve.setData(*self._true_xy())
        for plot in (self.cdf_plot, self.hist_plot):
            plot.getPlotItem().enableAutoRange()

    def _setup_histogram(self, figures: ResultFigures) -> None:
        k = figures.release.plan.shape.bins
        group, starts = figures.hist_group, figures.hist_starts
        self.hist_group = group
        self.hist_counts = figures.hist_counts
        self.hist_bars.setOpts(x0=self._edges[starts], x1=self._edges[figures.hist_stops], height=self.hist_counts)
        title = "Records per bin (from the released CDF)"
        if group > 1:
            size = f"{group:,}" if k % group == 0 else f"up to {group:,}"
            title = (f"Records per group of bins (from the released CDF)"
                     f"<br>(shown in {starts.size:,} groups of {size} bins)")
        self.hist_plot.getPlotItem().setTitle(title)

    def _true_xy(self) -> tuple[np.ndarray, np.ndarray]:
        assert self._true_counts is not None
        c = np.concatenate(([0.0], np.cumsum(self._true_counts, dtype=np.float64)))
        if self._fraction():
            c = c / c[-1] if c[-1] > 0 else np.zeros_like(c)
        return self._edges, c

    def _show_true_curve(self, on: bool) -> None:
        item = self.cdf_plot.getPlotItem()
        if self.true_curve is not None:
            item.removeItem(self.true_curve)  # also drops its legend entry
            self.true_curve = None
        show = bool(on) and self._true_counts is not None and self._release is not None
        if show:
            self.true_curve = pg.PlotDataItem(pen=series_pen("confidential", dashed=True), name=CONFIDENTIAL_LEGEND)
            item.addItem(self.true_curve)
            # clipping/downsampling only once the curve sits in the view box (pyqtgraph needs the view)
            self.true_curve.setClipToView(True)
            self.true_curve.setDownsampling(auto=True, method="peak")
            self.true_curve.setData(*self._true_xy())
            self.tabs.setCurrentWidget(self.cdf_plot)
        self.banner.setVisible(show)

    # ------------------------------------------------------------------------------------------
    # range tool

    def _setup_range_tool(self, figures: ResultFigures, width: float) -> None:
        release = figures.release
        suffix = f" {self._value_label}" if len(self._value_label) <= 12 else ""
        tip = (f"Counts the records with {self._value_label} at least “from” and below “to”. The release only has "
               f"counts per bin, so both ends are rounded to the nearest bin edge (bins are "
               f"{format_edge(width, self._edge_dec)} {self._value_label} wide).")
        # default: the middle half of the data, rounded to bin edges
        q1, q3 = figures.quantile(0.25).value, figures.quantile(0.75).value
        k = release.plan.shape.bins
        a = int(np.clip(round((q1 - release.lower) / width), 0, k - 1))
        b = int(np.clip(round((q3 - release.lower) / width), a + 1, k))
        whole = self._whole_step is not None
        self._to_label.setText("To (included)" if whole else "To (not included)")
        if whole:  # whole numbers, both included: bin edges sit half-way between them
            tip = (f"Counts the records with {self._value_label} from “from” to “to”, both included (the values are "
                   f"whole numbers). The release only has counts per bin of {self._whole_step:g} whole "
                   f"number{'s' if self._whole_step != 1 else ''}, so both ends are rounded to whole bins.")
        for spin, value, shift in ((self.from_spin, a, 0.5), (self.to_spin, b, -0.5)):
            spin.blockSignals(True)
            spin.setDecimals(0 if whole else self._edge_dec)
            spin.setRange(release.lower + 0.5 * whole, release.upper - 0.5 * whole)
            spin.setSingleStep(width)
            spin.setSuffix(suffix)
            spin.setValue(release.lower + value * width + (shift if whole else 0.0))
            spin.setToolTip(tip)
            spin.blockSignals(False)
        self._from_label.setToolTip(tip)
        self._to_label.setToolTip(tip)
        self.range_box.setToolTip(tip)
        self._update_range()

    def _update_range(self) -> None:
        release = self._release
        if release is None:
            self._range = None
            return
        start, stop = self.from_spin.value(), self.to_spin.value()
        whole = self._whole_step is not None
        if whole:  # whole numbers from start to stop, both included: the edges half-way between
            start, stop = start - 0.5, stop + 0.5
        if not start < stop:
            self._range = None
            self.range_result_label.setText("")
            colour = "#FF8A80" if is_dark() else "#B00020"
            self.range_error_label.setStyleSheet(f"QLabel {{ color: {colour}; font-weight: bold; }}")
            self.range_error_label.setText(RANGE_ERROR)
            self.range_error_label.setVisible(True)
            return
        self.range_error_label.setVisible(False)
        answer = range_count(release, start, stop)
        self._range = answer
        n = float(release.total)
        low, high = answer.low, answer.high  # already clipped to what the true count can be
        count = min(max(answer.count, 0.0), n) if n > 0 else max(answer.count, 0.0)  # shown: never below 0
        if whole:
            text = (f"About <b>{format_fixed(count, 0)}</b> records with {html.escape(self._value_label)} from "
                    f"{format_fixed(answer.start + 0.5, 0)} to {format_fixed(answer.stop - 0.5, 0)}, both included ")
        else:
            text = (f"About <b>{format_fixed(count, 0)}</b> records between {format_edge(answer.start, self._edge_dec)} "
                    f"and {format_edge(answer.stop, self._edge_dec)} {html.escape(self._value_label)} ")
        if answer.std_error == 0:
            text += "(exact: this count has no noise)"
        else:
            text += f"(95 % interval {format_fixed(low, 0)} – {format_fixed(high, 0)})"
        shown = 0.5 * 10.0 ** -self._edge_dec  # the spin boxes show edges rounded to this
        snapped = abs(answer.start - start) > shown or abs(answer.stop - stop) > shown
        if snapped:
            text += ("<br><i>Your numbers were rounded to whole bins.</i>" if whole
                     else "<br><i>Your numbers were rounded to the nearest bin edges.</i>")
        self.range_result_label.setText(text)


def moments_text(moments: CdfMoments, value_label: str) -> str:
    """The mean and the sum in words (rich text; the column's name escaped): the noise's 95 % margin, what
    binning can add, and the interval that holds the true figure (:func:`dpgui.formatting.moment_words`)."""
    half = moments.per_value
    column = html.escape(value_label)
    if moments.mean is None:
        mean = html.escape(NO_MEAN[0].upper() + NO_MEAN[1:])
    else:
        m = moments.mean
        mean = "<b>Mean:</b> " + moment_words(m.value, m.noise_margin, half, m.low, m.high,
                                               moment_decimals(m.noise_margin, half))
    total = moments.sum
    decimals = moment_decimals(total.noise_margin, total.binning)
    words = moment_words(total.value, total.noise_margin, half, total.low, total.high, decimals, per_value=True)
    return (f"{mean}<br><b>Sum:</b> {words}<br><span style='font-size:small'>In the units of {column}; each value "
            "taken at the middle of its bin, values outside the bounds at the nearest bound.</span>")
