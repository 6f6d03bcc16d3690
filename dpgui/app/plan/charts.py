"""The release plan's charts: the budget split (:class:`SplitChart`: each statistic's share of the plan's budget
and its projected 95 % margin, the optimised split's beside the equal split's, and the sentence that compares
their weighted margins) and a grouped CDF's released curves (:class:`GroupCurves`: overlaid on one plot, or one
small plot per group, as the officer picks). Public values only: shares and margins are planned from public
settings, the curves are released (noisy) values. GUI thread only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QLabel, QRadioButton, QStackedWidget, QVBoxLayout, QWidget

from dpgui.app.plan.release import charge_words
from dpgui.app.widgets.style import SERIES_COLOURS, configure_pyqtgraph, new_plot
from dpgui.core.plan_split import SplitChoice
from dpgui.workspace.plan_split import PlanSplit

__all__ = ["GroupCurves", "SplitChart", "split_sentence"]

_BAR = 0.38  # each bar's width; the optimised bar left of the statistic's number, the equal split's right
#: the colours of the overlaid groups' curves (colour-blind safe, then repeated)
_CURVE_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")


def split_sentence(split: PlanSplit) -> str:
    """"Optimised split: weighted 95 % margin 270 records (equal split: 311)" — or the equal split's words when
    the optimised split did not beat it (the equal split is then the one used)."""
    used, equal = split.weighted_margin, split.equal.weighted_margin
    if split.chosen is SplitChoice.EQUAL:
        return f"Equal split (no other split does better here): weighted 95 % margin {used:,.0f} records."
    return f"Optimised split: weighted 95 % margin {used:,.0f} records (equal split: {equal:,.0f})."


class SplitChart(QWidget):
    """Two bar charts over the plan's statistics (numbered as in the list): the share of the budget each gets and
    its projected 95 % margin in records, the split used (blue) beside the equal split (grey); the sentence under
    them. Empty until :meth:`show_split`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        configure_pyqtgraph()
        self.share_plot = new_plot("Share of the budget", "Statistic (as numbered in the list)", "Budget ε")
        self.margin_plot = new_plot("Projected 95 % margin", "Statistic (as numbered in the list)",
                                    "Margin (records)")
        self.share_plot.setToolTip("How much of the plan's budget each statistic spends: the split chosen for the "
                                   "least weighted error (blue) and the equal split (grey), for comparison.")
        self.margin_plot.setToolTip("In 95 % of releases each statistic's released counts are within this many "
                                    "records of the true counts (at its least precise point), whatever the data.")
        self.bars: dict[str, pg.BarGraphItem] = {}
        for plot, key in ((self.share_plot, "share"), (self.margin_plot, "margin")):
            item = plot.getPlotItem()
            item.setMouseEnabled(x=False, y=False)
            item.hideButtons()
            used = pg.BarGraphItem(x=[], height=[], width=_BAR, brush=SERIES_COLOURS["plan"], pen=None)
            equal = pg.BarGraphItem(x=[], height=[], width=_BAR, brush=SERIES_COLOURS["marker"], pen=None)
            item.addItem(used)
            item.addItem(equal)
            item.legend.addItem(used, "Split used")
            item.legend.addItem(equal, "Equal split")
            self.bars[f"{key} used"], self.bars[f"{key} equal"] = used, equal
        self.sentence = QLabel("Press Split to see how the budget is shared.")
        self.sentence.setWordWrap(True)
        plots = QHBoxLayout()
        plots.setContentsMargins(0, 0, 0, 0)
        plots.addWidget(self.share_plot)
        plots.addWidget(self.margin_plot)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.plots = QWidget()
        self.plots.setLayout(plots)
        self.plots.setMinimumHeight(260)
        self.plots.hide()  # no empty axes before the first split
        layout.addWidget(self.plots, 1)
        layout.addWidget(self.sentence)

    def show_split(self, split: PlanSplit | None, note: str = "") -> None:
        """Draw ``split`` (None: clear the bars and say ``note``)."""
        if split is None:
            for bars in self.bars.values():
                bars.setOpts(x=[], height=[])
            self.plots.hide()
            self.sentence.setText(note or "Press Split to see how the budget is shared.")
            return
        self.plots.show()
        x = np.arange(1, len(split.parts) + 1, dtype=float)
        used, equal = split.used, split.equal
        self.bars["share used"].setOpts(x=x - _BAR / 2, height=[s.epsilon for s in used.shares])
        self.bars["share equal"].setOpts(x=x + _BAR / 2, height=[s.epsilon for s in equal.shares])
        self.bars["margin used"].setOpts(x=x - _BAR / 2, height=list(used.margins))
        self.bars["margin equal"].setOpts(x=x + _BAR / 2, height=list(equal.margins))
        ticks = [[(float(i), str(int(i))) for i in x]]
        for plot in (self.share_plot, self.margin_plot):
            item = plot.getPlotItem()
            item.getAxis("bottom").setTicks(ticks)
            item.setXRange(0.4, len(split.parts) + 0.6, padding=0)
            item.enableAutoRange(axis="y")
        self.sentence.setText(split_sentence(split) + f" The plan spends {charge_words(split.charge)} in all."
                              + (f" {note}" if note else ""))


class GroupCurves(QWidget):
    """A grouped CDF's released curves: every group's cumulative count over the bin edges, overlaid on one plot
    or one small plot per group (the officer picks)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        configure_pyqtgraph()
        self.overlaid_button = QRadioButton("Overlaid")
        self.overlaid_button.setToolTip("Every group's curve on one plot, to compare them.")
        self.small_button = QRadioButton("One plot per group")
        self.small_button.setToolTip("Each group's curve on its own small plot, with its own scale.")
        self.overlaid_button.setChecked(True)
        choice = QButtonGroup(self)
        choice.addButton(self.overlaid_button)
        choice.addButton(self.small_button)
        self.title = QLabel("")
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.overlaid_button)
        top.addWidget(self.small_button)
        self.overlaid = new_plot("", "Value", "Released cumulative count")
        self.overlaid.getPlotItem().getAxis("left").setWidth(70)  # the label clear of the counts' ticks
        self.small = pg.GraphicsLayoutWidget()
        self.stack = QStackedWidget()
        self.stack.addWidget(self.overlaid)
        self.stack.addWidget(self.small)
        self.overlaid_button.toggled.connect(
            lambda on: self.stack.setCurrentWidget(self.overlaid if on else self.small))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)
        self.setMinimumHeight(300)

    def show_groups(self, title: str, column: str, labels: Sequence[str], edges: np.ndarray,
                    curves: Sequence[np.ndarray]) -> None:
        """Draw each group's released cumulative counts ``curves[i]`` (at the upper bin edges ``edges`` of the
        number ``column``)."""
        self.title.setText(title)
        item = self.overlaid.getPlotItem()
        item.clear()
        item.setLabel("bottom", column)
        self.small.clear()
        columns = max(1, int(np.ceil(np.sqrt(len(labels)))))
        for i, (label, curve) in enumerate(zip(labels, curves)):
            pen = pg.mkPen(_CURVE_COLOURS[i % len(_CURVE_COLOURS)], width=2)
            item.plot(edges, curve, pen=pen, name=label, stepMode=None)
            small = self.small.addPlot(row=i // columns, col=i % columns, title=label)
            small.plot(edges, curve, pen=pen)
            for axis in ("left", "bottom"):
                small.getAxis(axis).enableAutoSIPrefix(False)
            small.getAxis("left").setWidth(56)  # room for the counts' labels (else only "0" fits)
