"""The icicle of a categorical hierarchy (step 3 of the "Counts over a hierarchy" mode): one row per
level, root on top; each node's box is as wide as its share of the leaves (the public structure, never
the counts), its children directly below it. The row's colour is the level's budget (ε_ℓ, or ρ_ℓ for
Gaussian noise) on the bin-tree view's colour ramp (:func:`dpgui.app.widgets.style.colour_ramp`); the root under the
change model is light grey ("exact, N public").

Painting skips boxes narrower than :data:`MIN_BOX_PX` (the row is one band there), so it is
O(levels + visible wide nodes). Point at a box for its path, level budget and (after the release) its
released count with the 95 % interval; double-click zooms into its subtree, Home or "Show all" zooms out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QToolTip, QVBoxLayout, QWidget

from dpgui.app.text import escape, plain_text
from dpgui.app.widgets.style import EXACT_COLOUR, NOT_RELEASED_COLOUR, colour_ramp, text_colour_on
from dpgui.core.hierarchy import Hierarchy, HierarchyPlan, HierarchyRelease
from dpgui.formatting import format_significant

GUTTER_PX = 130  # the left margin that names each row's level
MIN_BOX_PX = 2.0  # a box narrower than this is not drawn on its own (its row is one band there)
TEXT_MIN_PX = 40.0  # boxes at least this wide get their label written inside
HINT = ("Point at a box to see its details. Double-click a box to zoom into it (and, with counts, to see how well "
        "its children's released counts would share a budget); Home or “Show all” zooms out. "
        "Box width: the share of the categories below it (not the counts, which stay private until released).")


@dataclass(frozen=True, eq=False)
class _Layout:
    """x extent in [0, 1] of every node: ``starts[ℓ][i]``, ``ends[ℓ][i]`` for levels 0..L."""

    starts: tuple[np.ndarray, ...]
    ends: tuple[np.ndarray, ...]

    @classmethod
    def of(cls, hierarchy: Hierarchy) -> _Layout:
        sizes = hierarchy.level_sizes
        leaves: list[np.ndarray] = [np.zeros(0)] * len(sizes)
        leaves[-1] = np.ones(sizes[-1])
        for level in range(len(sizes) - 1, 0, -1):  # a node's leaves: the sum over its children
            leaves[level - 1] = np.bincount(hierarchy.parents[level - 1], weights=leaves[level], minlength=sizes[level - 1])
        total = float(sizes[-1])
        starts, ends = [], []
        for width in leaves:
            end = np.cumsum(width) / total  # nodes are ordered by parent: siblings are contiguous
            starts.append(end - width / total)
            ends.append(end)
        return cls(tuple(starts), tuple(ends))


def level_unit(plan: HierarchyPlan) -> str:
    """"ε" (Laplace), "ρ" (Gaussian) or "" (multiplicative: no per-level budget)."""
    return {"laplace": "ε", "gaussian": "ρ"}.get(plan.noise, "")


class HierarchyIcicle(QWidget):
    """The painted rows (see the module doc). ``nodeHovered(level, index)``; ``nodeActivated`` on double-click."""

    nodeHovered = Signal(int, int)
    nodeActivated = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hierarchy: Hierarchy | None = None
        self.plan: HierarchyPlan | None = None
        self.release: HierarchyRelease | None = None
        self._layout: _Layout | None = None
        self.x_range = (0.0, 1.0)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumHeight(160)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAccessibleName("Hierarchy icicle")

    def sizeHint(self) -> QSize:
        return QSize(900, 420)

    def set_tree(self, hierarchy: Hierarchy | None, plan: HierarchyPlan | None) -> None:
        if hierarchy is not self.hierarchy:
            self._layout = None if hierarchy is None else _Layout.of(hierarchy)
            self.x_range = (0.0, 1.0)
            self.release = None
        self.hierarchy, self.plan = hierarchy, plan
        self.update()

    def set_release(self, release: HierarchyRelease | None) -> None:
        self.release = release
        self.update()

    # ------------------------------------------------------------------ geometry
    def _rows(self) -> int:
        return 0 if self.hierarchy is None else self.hierarchy.n_levels + 1

    def _plot_width(self) -> float:
        return max(self.width() - GUTTER_PX, 1)

    def _row_rect(self, level: int) -> QRectF:
        rows = max(self._rows(), 1)
        height = (self.height() - 4) / rows
        return QRectF(GUTTER_PX, 2 + level * height, self._plot_width(), height)

    def _px(self, x: float) -> float:
        x0, x1 = self.x_range
        return GUTTER_PX + (x - x0) / (x1 - x0) * self._plot_width()

    def node_at(self, px: float, py: float) -> tuple[int, int] | None:
        """(level, index) of the box under widget point (px, py), or None."""
        if self._layout is None:
            return None
        rows = self._rows()
        level = int((py - 2) // ((self.height() - 4) / rows))
        if not 0 <= level < rows:
            return None
        if px < GUTTER_PX:
            return None
        x0, x1 = self.x_range
        x = x0 + (px - GUTTER_PX) / self._plot_width() * (x1 - x0)
        ends = self._layout.ends[level]
        index = int(np.searchsorted(ends, x, side="right"))
        return (level, index) if index < len(ends) else None

    def node_centre(self, level: int, index: int) -> QPointF:
        """The widget point at the middle of a node's box (for tests and keyboard use)."""
        assert self._layout is not None
        rect = self._row_rect(level)
        mid = (self._layout.starts[level][index] + self._layout.ends[level][index]) / 2
        return QPointF(self._px(float(mid)), rect.center().y())

    def zoom_to(self, level: int, index: int) -> None:
        assert self._layout is not None
        self.x_range = (float(self._layout.starts[level][index]), float(self._layout.ends[level][index]))
        self.update()

    def show_all(self) -> None:
        self.x_range = (0.0, 1.0)
        self.update()

    # ------------------------------------------------------------------ colours and words
    def level_colour(self, level: int) -> QColor:
        plan = self.plan
        if plan is None:
            return QColor(NOT_RELEASED_COLOUR)
        if level == 0 and plan.privacy.root_public:
            return QColor(EXACT_COLOUR)
        budgets = plan.level_budgets
        if not budgets:  # multiplicative: one colour, the budget is not split by level
            return colour_ramp(0.6)
        # the level's share of the whole budget (ε or ρ): comparable between plans, never all one bright colour
        total = sum(budgets) or 1.0
        return colour_ramp(0.15 + 0.85 * budgets[level] / total) if budgets[level] > 0 else QColor(NOT_RELEASED_COLOUR)

    def level_name(self, level: int) -> str:
        if self.hierarchy is None:
            return ""
        return "All records" if level == 0 else self.hierarchy.level_names[level - 1]

    def label(self, level: int, index: int) -> str:
        assert self.hierarchy is not None
        return "All records" if level == 0 else self.hierarchy.labels[level - 1][index]

    def describe(self, level: int, index: int) -> str:
        """Plain words for one box: its path, the level's budget and noise, and the released count."""
        assert self.hierarchy is not None
        path = " / ".join(self.hierarchy.path(level, index)) if level > 0 else "All records"
        words = [f"{path} — level {level} ({self.level_name(level)})"]
        if level < self.hierarchy.n_levels:
            start, end = self.hierarchy.child_ranges(level)
            n_children = int(end[index] - start[index])
            words.append(f"{n_children:,} categor{'y' if n_children == 1 else 'ies'} below it")
        plan = self.plan
        if plan is not None:
            unit = level_unit(plan)
            if level == 0 and plan.privacy.root_public:
                words.append("published exactly (N is public under this model)")
            elif unit:
                words.append(f"budget {unit} = {format_significant(plan.level_budgets[level])} for this level")
        if self.release is not None:
            count = int(self.release.counts[level][index])
            low, high = int(self.release.lower[level][index]), int(self.release.upper[level][index])
            words.append(f"released count {count:,} (95 % interval {low:,} to {high:,})")
        return "; ".join(words) + "."

    # ------------------------------------------------------------------ painting
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().color(QPalette.ColorRole.Window))
        if self._layout is None or self.hierarchy is None:
            p.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Choose the level columns in step 1 to see the tree.")
            p.end()
            return
        fm = self.fontMetrics()
        border = QColor("#FFFFFF")
        x0, x1 = self.x_range
        for level in range(self._rows()):
            rect = self._row_rect(level).adjusted(0, 1, 0, -1)
            fill = self.level_colour(level)
            starts, ends = self._layout.starts[level], self._layout.ends[level]
            lo = int(np.searchsorted(ends, x0, side="right"))
            hi = int(np.searchsorted(starts, x1, side="left"))
            p.fillRect(rect, fill)
            p.setPen(self.palette().color(QPalette.ColorRole.WindowText))
            name = self.level_name(level)
            count = self.hierarchy.level_sizes[level]
            gutter = QRectF(4, rect.top(), GUTTER_PX - 8, rect.height())
            p.drawText(gutter, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                       fm.elidedText(name, Qt.TextElideMode.ElideMiddle, int(gutter.width())) + "\n"
                       + (f"{count:,} categor{'y' if count == 1 else 'ies'}" if level else "the total"))
            scale = self._plot_width() / (x1 - x0)
            widths = (ends[lo:hi] - starts[lo:hi]) * scale
            wide = np.flatnonzero(widths >= MIN_BOX_PX)
            p.setPen(QPen(border, 1))
            text_colour = text_colour_on(fill)
            for k in wide:
                i = lo + int(k)
                a, b = self._px(float(starts[i])), self._px(float(ends[i]))
                if a >= GUTTER_PX:
                    p.setPen(QPen(border, 1))
                    p.drawLine(QPointF(a, rect.top()), QPointF(a, rect.bottom()))
                if b - a >= TEXT_MIN_PX:
                    p.setPen(text_colour)
                    label = self.label(level, i)
                    if self.release is not None:
                        label += f"\n{int(self.release.counts[level][i]):,}"
                    box = QRectF(max(a, GUTTER_PX) + 3, rect.top(), min(b, self.width()) - max(a, GUTTER_PX) - 6,
                                 rect.height())
                    lines = [fm.elidedText(line, Qt.TextElideMode.ElideRight, int(box.width()))
                             for line in label.split("\n")]
                    p.drawText(box, Qt.AlignmentFlag.AlignCenter, "\n".join(lines))
            p.setPen(QPen(border, 2))
            p.drawLine(QPointF(GUTTER_PX, rect.bottom() + 1), QPointF(self.width(), rect.bottom() + 1))
        p.end()

    # ------------------------------------------------------------------ mouse and keys
    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        node = self.node_at(event.position().x(), event.position().y())
        if node is not None:
            self.nodeHovered.emit(*node)
            QToolTip.showText(event.globalPosition().toPoint(), self.describe(*node), self)
        super().mouseMoveEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        node = self.node_at(event.position().x(), event.position().y())
        if node is not None:
            self.zoom_to(*node)
            self.nodeActivated.emit(*node)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Home:
            self.show_all()
            return
        super().keyPressEvent(event)


class HierarchyTreeView(QWidget):
    """Step 3: a title line, the icicle, a line describing the box under the mouse, and a legend of the
    level budgets."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("")
        self.title.setTextFormat(Qt.TextFormat.RichText)  # the level names in it are escaped
        self.title.setWordWrap(True)
        self.icicle = HierarchyIcicle()
        self.info = plain_text(QLabel(HINT))  # labels are the data's own words: shown literally
        self.info.setWordWrap(True)
        self.legend = plain_text(QLabel(""))  # level names: shown literally
        self.legend.setWordWrap(True)
        self.downstream = plain_text(QLabel(""))  # paper 001 §5 for the double-clicked box (the page fills it)
        self.downstream.setWordWrap(True)
        self.show_all_button = QPushButton("Show &all")
        self.show_all_button.setToolTip("Zoom out to the whole tree (Home)")
        self.show_all_button.clicked.connect(self.icicle.show_all)
        self.icicle.nodeHovered.connect(lambda level, index: self.info.setText(self.icicle.describe(level, index)))
        self.icicle.nodeActivated.connect(lambda level, index: self.info.setText(self.icicle.describe(level, index)))
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.show_all_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.icicle, 1)
        layout.addWidget(self.info)
        layout.addWidget(self.legend)
        layout.addWidget(self.downstream)

    def set_tree(self, hierarchy: Hierarchy | None, plan: HierarchyPlan | None) -> None:
        self.icicle.set_tree(hierarchy, plan)
        if hierarchy is None:
            self.title.setText("")
            self.legend.setText("")
            return
        sizes = " → ".join(f"{n:,} {escape(name)}" for n, name in zip(hierarchy.level_sizes[1:], hierarchy.level_names))
        self.title.setText(f"<b>The hierarchy:</b> {sizes} ({hierarchy.n_nodes:,} counts in all, the total included).")
        self.legend.setText(self.legend_text(hierarchy, plan))

    def set_release(self, release: HierarchyRelease | None) -> None:
        self.icicle.set_release(release)

    def legend_text(self, hierarchy: Hierarchy, plan: HierarchyPlan | None) -> str:
        if plan is None:
            return ""
        unit = level_unit(plan)
        if not unit:
            return ("Colour: one colour for all levels — the multiplicative mechanism (Ghazi et al. 2023) does not split its "
                    "budget by level.")
        parts = []
        for level in range(hierarchy.n_levels + 1):
            name = "all records" if level == 0 else hierarchy.level_names[level - 1]
            value = ("exact" if level == 0 and plan.privacy.root_public
                     else f"{unit} = {format_significant(plan.level_budgets[level])}")
            parts.append(f"{name}: {value}")
        return (f"Colour: the level's share of the budget {unit} (brighter = a bigger share, less noise) — "
                + "; ".join(parts) + ".")

    def current_text(self) -> Any:
        return self.info.text()
