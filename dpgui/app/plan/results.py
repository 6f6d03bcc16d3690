"""The release plan's results (:class:`PlanResults`): one line per statistic (its title, its share of the budget,
its projected 95 % margin and what was released, in a few words) and, for a CDF for each group, its released
curves (:class:`~dpgui.app.plan.charts.GroupCurves`; the officer picks the statistic and overlaid or one plot per
group) and a table of each group's released size, median and mean with their 95 % intervals (read from its
released CDF: no extra budget). Released (noisy) values only. GUI thread only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtWidgets import (
    QComboBox, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from dpgui.app.plan.charts import GroupCurves
from dpgui.core.cdf_moments import NO_MEAN, cdf_moments, group_summaries
from dpgui.core.quantiles import noise_margin, quantiles
from dpgui.formatting import format_fixed, moment_decimals, value_decimals
from dpgui.vocabulary import StatisticKind
from dpgui.workspace.release_plan import ReleasedPart, ReleasedPlan

__all__ = ["PlanResults"]

RESULT_HEADERS = ("Statistic", "Share of ε", "95 % margin", "Released")
GROUP_HEADERS = ("Group", "Released size", "Median (95 % interval)", "Mean (95 % interval)")
GROUP_TIPS = ("A group of the public list, in its order ('other': the rows of the groups not listed).",
              "The group's number of records with noise (never the exact size), ± its 95 % margin.",
              "Half of the group's values lie below it (read from its released CDF); the true median lies in the "
              "interval in at least 95 % of releases.",
              "The group's mean read from its released CDF (no extra budget); the interval holds the true mean in at "
              "least 95 % of releases.")


class PlanResults(QGroupBox):
    """The released plan's statistics, a line each, and a grouped CDF's curves (module doc)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Results", parent)
        self.outcome: ReleasedPlan | None = None
        self.table = QTableWidget(0, len(RESULT_HEADERS))
        self.table.setHorizontalHeaderLabels(list(RESULT_HEADERS))
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setMinimumHeight(120)
        self.curves_choice = QComboBox()
        self.curves_choice.setToolTip("The grouped statistic whose released curves are drawn.")
        self.curves_choice.currentIndexChanged.connect(self._show_curves)
        self.curves = GroupCurves()
        self.groups = QTableWidget(0, len(GROUP_HEADERS))
        self.groups.setHorizontalHeaderLabels(list(GROUP_HEADERS))
        for i, tip in enumerate(GROUP_TIPS):
            header = self.groups.horizontalHeaderItem(i)
            if header is not None:
                header.setToolTip(tip)
        self.groups.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.groups.verticalHeader().hide()
        self.groups.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.groups.setMinimumHeight(140)
        self.curves_row = QWidget()
        row = QHBoxLayout(self.curves_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Curves of:"))
        row.addWidget(self.curves_choice, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(self.curves_row)
        layout.addWidget(self.curves, 1)
        layout.addWidget(self.groups)
        for widget in (self.curves_row, self.curves, self.groups):
            widget.hide()

    def show_plan(self, outcome: ReleasedPlan | None) -> None:
        """One line per statistic of ``outcome`` (None: none) and the first grouped CDF's curves."""
        self.outcome = outcome
        self.table.setRowCount(0)
        self.curves_choice.blockSignals(True)
        self.curves_choice.clear()
        parts = () if outcome is None else outcome.parts
        self.table.setRowCount(len(parts))
        for row, part in enumerate(parts):
            cells = (part.item.title, f"ε = {part.planned.epsilon:.4g}", f"±{part.planned.margin95:,.0f} records",
                     _released_words(part))
            for col, value in enumerate(cells):
                self.table.setItem(row, col, QTableWidgetItem(value))
            if part.item.part.statistic.kind is StatisticKind.GROUPED_CDF:
                self.curves_choice.addItem(part.item.title, row)
        self.curves_choice.blockSignals(False)
        grouped = self.curves_choice.count() > 0
        for widget in (self.curves_row, self.curves, self.groups):
            widget.setVisible(grouped)
        self._show_curves()

    def _show_curves(self, *_: object) -> None:
        if self.outcome is None or self.curves_choice.count() == 0:
            return
        part = self.outcome.parts[int(self.curves_choice.currentData())]
        release = part.release
        groups = release.releases
        first = groups[0]
        bins = len(first.cumulative)
        edges = first.lower + (first.upper - first.lower) * np.arange(1, bins + 1) / bins
        self.curves.show_groups(part.item.title, str(part.info.column), list(release.labels), edges,
                                [np.asarray(group.cumulative, dtype=float) for group in groups])
        size_margin = float(noise_margin(release.total_std_error))
        decimals = value_decimals((first.upper - first.lower) / bins)
        self.groups.setRowCount(len(groups))
        for row, (summary, group) in enumerate(zip(group_summaries(release.labels, groups), groups)):
            median, mean = summary.median, summary.moments.mean
            cells = (summary.label, f"{group.total:,.0f} ± {size_margin:,.0f}",
                     "—" if median is None else _with_interval(median.value, median.low, median.high, decimals),
                     "—" if mean is None else _with_interval(mean.value, mean.low, mean.high,
                                                             moment_decimals(mean.noise_margin, mean.binning)))
            for col, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if col == 3 and mean is None:
                    item.setToolTip(NO_MEAN)
                self.groups.setItem(row, col, item)


def _with_interval(value: float, low: float, high: float, decimals: int) -> str:
    """A cell: ``215 (210 to 220)``."""
    return f"{format_fixed(value, decimals)} ({format_fixed(low, decimals)} to {format_fixed(high, decimals)})"


def _released_words(part: ReleasedPart) -> str:
    """What was released of ``part``, in a few words (released values only)."""
    release: Any = part.release
    kind = part.item.part.statistic.kind
    if kind is StatisticKind.CDF:
        median = quantiles(release, (0.5,))[0].value
        mean = cdf_moments(release).mean
        return (f"a CDF of {len(release.cumulative):,} bins; median ≈ {median:,.4g}"
                + ("" if mean is None else f", mean ≈ {mean.value:,.4g}"))
    if kind is StatisticKind.GROUPED_CDF:
        return f"a CDF for each of {len(release.labels):,} groups (curves below)"
    if kind is StatisticKind.COUNTS:
        return f"{len(release.counts):,} counts, total ≈ {float(np.sum(release.counts)):,.0f}"
    hierarchy = release.hierarchy  # counts over a hierarchy: the total and every category of every level
    return f"{hierarchy.n_nodes:,} counts: the total and {hierarchy.n_nodes - 1:,} categories on {hierarchy.n_levels} levels"
