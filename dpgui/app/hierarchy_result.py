"""The released hierarchy as a browsable tree table (step 4): one row per node — the category, its
released count and the 95 % interval — with expand/collapse and a search box that finds a category or
a path ("Oregon / Portland") and opens the tree down to it.

:class:`HierarchyResultModel` is a lazy :class:`QAbstractItemModel` over the release's arrays: a node's
children are a contiguous range of the next level (:meth:`Hierarchy.child_ranges`), so ``index``,
``parent`` and ``rowCount`` are O(1) and a tree of 10⁵ leaves opens at once.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton, QTreeView, QVBoxLayout, QWidget

from dpgui.app.text import plain_text
from dpgui.core.hierarchy import HierarchyRelease
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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.tree, 1)

    def set_release(self, release: HierarchyRelease | None) -> None:
        old = self.model
        if release is None:
            self.model = None
            self.tree.setModel(None)
        else:
            self.model = HierarchyResultModel(release, self)
            self.tree.setModel(self.model)
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

