"""The released hierarchy as a browsable tree table (step 4): one row per node — the category, its
released count and the 95 % interval — with expand/collapse and a search box that finds a category or
a path ("Oregon / Portland") and opens the tree down to it; beside it, :class:`ChildrenChart`: the
released counts of the selected category's children (of its parent's, for a category without children)
with their 95 % intervals, the counts whose interval reaches 0 (mostly noise) marked.

:class:`HierarchyResultModel` is a lazy :class:`QAbstractItemModel` over the release's arrays: a node's
children are a contiguous range of the next level (:meth:`Hierarchy.child_ranges`), so ``index``,
``parent`` and ``rowCount`` are O(1) and a tree of 10⁵ leaves opens at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import (
    QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton, QSplitter, QTreeView, QVBoxLayout, QWidget,
)

from dpgui.app.widgets.style import SERIES_COLOURS, new_plot
from dpgui.app.text import plain_text
from dpgui.core.hierarchy import HierarchyRelease
from dpgui.core.hierarchy_errors import released_mostly_noise
from dpgui.workspace.hierarchy import consistency_words, find_paths, interval_words

HEADERS = ("Category", "Released count", "95 % interval, from", "to", "Level")
HEADER_TIPS = (
    "The category (the root is all records).",
    "The published count: a whole number ≥ 0; {sums}.",
    "The 95 % interval: {interval}.",
    "The 95 % interval: {interval}.",
    "The level column the category comes from.",
)  # {sums}/{interval}: said by the release's plan and interval method
_LEVEL_SHIFT = 40  # internalId = level << 40 | (index + 1); 0 is "no parent"


def _pack(level: int, index: int) -> int:
    return (level << _LEVEL_SHIFT) | (index + 1)


def _unpack(node_id: int) -> tuple[int, int]:
    return node_id >> _LEVEL_SHIFT, (node_id & ((1 << _LEVEL_SHIFT) - 1)) - 1


class HierarchyResultModel(QAbstractItemModel):
    """The release's nodes as a tree (see the module doc). Each index carries its own node id."""

    def __init__(self, release: HierarchyRelease, parent: Any = None) -> None:
        super().__init__(parent)
        self.release = release
        hierarchy = release.hierarchy
        self._ranges = [hierarchy.child_ranges(level) for level in range(hierarchy.n_levels)]

    # ---- structure
    def node(self, index: QModelIndex | QPersistentModelIndex) -> tuple[int, int]:
        """(level, index in its level) of a valid model index."""
        return _unpack(int(index.internalId()))

    def index_of(self, level: int, node: int, column: int = 0) -> QModelIndex:
        """The model index of a node (level 0 is the one root row)."""
        if level == 0:
            return self.createIndex(0, column, _pack(0, 0))
        start = self._ranges[level - 1][0]
        parent = int(self.release.hierarchy.parents[level - 1][node])
        return self.createIndex(node - int(start[parent]), column, _pack(level, node))

    def index(self, row: int, column: int, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:
        if column < 0 or column >= len(HEADERS) or row < 0:
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, _pack(0, 0)) if row == 0 else QModelIndex()
        level, node = self.node(parent)
        if level >= len(self._ranges):
            return QModelIndex()
        start, end = self._ranges[level]
        child = int(start[node]) + row
        return self.createIndex(row, column, _pack(level + 1, child)) if child < int(end[node]) else QModelIndex()

    def parent(self, child: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not child.isValid():
            return QModelIndex()
        level, node = self.node(child)
        if level == 0:
            return QModelIndex()
        parent = int(self.release.hierarchy.parents[level - 1][node])
        return self.index_of(level - 1, parent)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        if not parent.isValid():
            return 1
        if parent.column() != 0:
            return 0
        level, node = self.node(parent)
        if level >= len(self._ranges):
            return 0
        start, end = self._ranges[level]
        return int(end[node] - start[node])

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return len(HEADERS)

    # ---- contents
    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        level, node = self.node(index)
        column = index.column()
        release = self.release
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return "All records" if level == 0 else release.hierarchy.labels[level - 1][node]
            if column == 1:
                return f"{int(release.counts[level][node]):,}"
            if column == 2:
                return f"{int(release.lower[level][node]):,}"
            if column == 3:
                return f"{int(release.upper[level][node]):,}"
            return "(total)" if level == 0 else release.hierarchy.level_names[level - 1]
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (1, 2, 3):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            path = "All records" if level == 0 else " / ".join(release.hierarchy.path(level, node))
            return (f"{path}: released {int(release.counts[level][node]):,}, 95 % interval "
                    f"{int(release.lower[level][node]):,} to {int(release.upper[level][node]):,}")
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS[section].format(sums=consistency_words(self.release.plan),
                                               interval=interval_words(self.release))
        return None


MAX_CHART_ROWS = 40  # children drawn in the chart (the table lists every one)
NOISE_COLOUR = SERIES_COLOURS["alternative"]  # vermillion: the counts that are mostly noise


class ChildrenChart(QWidget):
    """The released counts of one category's children as points with their 95 % intervals (horizontal
    lines), one row per child in the release's order (the first :data:`MAX_CHART_ROWS`); a child whose
    interval reaches 0 (:func:`~dpgui.core.hierarchy_errors.released_mostly_noise`) is a hollow vermillion
    point. ``shown``: (level, parent index, children indices drawn) of the last call to :meth:`show_children`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = new_plot("Released counts", "Released count, with its 95 % interval", "", x_units="records")
        item = self.plot.getPlotItem()
        item.invertY(True)
        item.showGrid(x=True, y=False, alpha=0.25)
        self.plot.setMinimumWidth(320)
        self.bars = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), pen=pg.mkPen("#555555", width=1.5), beam=0.25)
        self.plot.addItem(self.bars)
        self.points = self.plot.plot([], [], pen=None, symbol="o", symbolSize=8, symbolPen=None,
                                     symbolBrush=SERIES_COLOURS["plan"], name="released count")
        self.noisy = self.plot.plot([], [], pen=None, symbol="o", symbolSize=9, symbolBrush=None,
                                    symbolPen=pg.mkPen(NOISE_COLOUR, width=2),
                                    name="interval reaches 0: mostly noise")
        self.caption = plain_text(QLabel(""))
        self.caption.setWordWrap(True)
        self.shown: tuple[int, int, np.ndarray] | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.caption)

    def clear(self) -> None:
        self.shown = None
        self.bars.setData(x=np.zeros(0), y=np.zeros(0), left=np.zeros(0), right=np.zeros(0))
        self.points.setData([], [])
        self.noisy.setData([], [])
        self.plot.getPlotItem().getAxis("left").setTicks([[]])
        self.plot.getPlotItem().setTitle("Released counts")
        self.caption.setText("")

    def show_children(self, release: HierarchyRelease, level: int, node: int, selected: int | None = None) -> None:
        """Draw the children (level ``level`` + 1) of node ``node`` of ``level``; ``selected``: a child to name
        in the caption (the category chosen in the table, when it has no children of its own)."""
        hierarchy = release.hierarchy
        start, end = (int(a[node]) for a in hierarchy.child_ranges(level))
        children = np.arange(start, min(end, start + MAX_CHART_ROWS))
        child_level = level + 1
        counts = np.asarray(release.counts[child_level])[children].astype(float)
        lower = np.asarray(release.lower[child_level])[children].astype(float)
        upper = np.asarray(release.upper[child_level])[children].astype(float)
        noisy = released_mostly_noise(release, child_level)[children]
        rows = np.arange(children.size, dtype=float)
        self.bars.setData(x=counts, y=rows, left=counts - lower, right=upper - counts)
        self.points.setData(counts[~noisy], rows[~noisy])
        self.noisy.setData(counts[noisy], rows[noisy])
        labels = hierarchy.labels[level]
        self.plot.getPlotItem().getAxis("left").setTicks([[(float(i), labels[c]) for i, c in enumerate(children)]])
        name = "all records" if level == 0 else " / ".join(hierarchy.path(level, node))
        what = hierarchy.level_names[level]
        self.plot.getPlotItem().setTitle(f"Released counts of {what} in {name}")
        self.plot.getPlotItem().setXRange(0.0, float(upper.max()) * 1.05 if upper.size and upper.max() > 0 else 1.0)
        self.plot.getPlotItem().setYRange(-0.7, max(children.size, 1) - 0.3, padding=0)
        total = end - start
        shown = (f"The first {children.size:,} of {total:,} categories (the table lists all). " if total > children.size
                 else "")
        chosen = f"'{labels[selected]}' is one of them. " if selected is not None else ""
        reaching = int(noisy.sum())
        noise = ("None of these intervals reaches 0." if reaching == 0 else
                 f"{reaching:,} of {children.size:,} intervals reach 0 (hollow points): those counts are mostly noise, "
                 "the data may hold no records there.")
        self.caption.setText(f"{shown}{chosen}Each point is a published count, the line its 95 % interval. {noise}")
        self.shown = (level, node, children)


class HierarchyResultView(QWidget):
    """The tree table with its search box: typing finds the categories whose name (or path, with " / ")
    contains the text; Enter or "Next" goes to the next match, opening the tree down to it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: HierarchyResultModel | None = None
        self.tree = QTreeView()
        self.tree.setAccessibleName("Released counts")
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find a category, e.g. Portland, or a path: Oregon / Portland")
        self.search.setToolTip("Finds the categories whose name contains this text (any case); "
                               "Enter goes to the next one.")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._on_search)
        self.search.returnPressed.connect(self.next_match)
        self.next_button = QPushButton("&Next")
        self.next_button.clicked.connect(self.next_match)
        self.expand_button = QPushButton("E&xpand all")
        self.expand_button.setToolTip("Open every level (slow for very large trees)")
        self.expand_button.clicked.connect(self.tree.expandAll)
        self.collapse_button = QPushButton("C&ollapse")
        self.collapse_button.clicked.connect(self.collapse)
        self.matches_label = plain_text(QLabel(""))
        self._matches: list[tuple[int, int]] = []
        self._current = -1
        bar = QHBoxLayout()
        find = QLabel("&Find:")
        find.setBuddy(self.search)
        bar.addWidget(find)
        bar.addWidget(self.search, 1)
        bar.addWidget(self.next_button)
        bar.addWidget(self.matches_label)
        bar.addStretch(0)
        bar.addWidget(self.expand_button)
        bar.addWidget(self.collapse_button)
        self.chart = ChildrenChart()
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.chart)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([760, 560])  # the table's category names first
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)

    def set_release(self, release: HierarchyRelease | None) -> None:
        old = self.model
        if release is None:
            self.model = None
            self.tree.setModel(None)
            self.chart.clear()
        else:
            self.model = HierarchyResultModel(release, self)
            self.tree.setModel(self.model)
            self.tree.selectionModel().currentChanged.connect(self._on_current)
            self.chart.show_children(release, 0, 0)
            header = self.tree.header()
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
            for column in range(1, len(HEADERS)):
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
            header.setMinimumSectionSize(90)
            header.setStretchLastSection(False)
            self.collapse()
        if old is not None:
            old.deleteLater()
        self._on_search(self.search.text())

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        """The chart follows the table: the children of the chosen category, or its parent's children."""
        if self.model is None or not current.isValid():
            return
        release = self.model.release
        level, node = self.model.node(current)
        if level < release.hierarchy.n_levels:
            self.chart.show_children(release, level, node)
        else:
            parent = int(release.hierarchy.parents[level - 1][node])
            self.chart.show_children(release, level - 1, parent, selected=node)

    def collapse(self) -> None:
        """Show the total and the first level only."""
        self.tree.collapseAll()
        if self.model is not None:
            self.tree.expand(self.model.index_of(0, 0))

    def _on_search(self, query: str) -> None:
        self._matches = [] if self.model is None else find_paths(self.model.release.hierarchy, query)
        self._current = -1
        if not query.strip():
            self.matches_label.setText("")
            return
        if not self._matches:
            self.matches_label.setText("no category contains this")
            return
        self.next_match()

    def next_match(self) -> tuple[int, int] | None:
        """Go to the next match (wrapping round); returns its (level, index)."""
        if self.model is None or not self._matches:
            return None
        self._current = (self._current + 1) % len(self._matches)
        level, node = self._matches[self._current]
        self.reveal(level, node)
        shown = f"{len(self._matches):,}" + ("+" if len(self._matches) >= 200 else "")
        self.matches_label.setText(f"{self._current + 1:,} of {shown}")
        return level, node

    def reveal(self, level: int, node: int) -> None:
        """Open the tree down to a node, select it and scroll to it."""
        assert self.model is not None
        index = self.model.index_of(level, node)
        parent = self.model.parent(index)
        while parent.isValid():
            self.tree.expand(parent)
            parent = self.model.parent(parent)
        self.tree.setCurrentIndex(index)
        self.tree.scrollTo(index)

    def selected_node(self) -> tuple[int, int] | None:
        index = self.tree.currentIndex()
        return None if self.model is None or not index.isValid() else self.model.node(index)

