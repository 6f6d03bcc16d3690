"""An icicle drawing of a plan's bin tree: one row per level, one box per node (docs/engine.md, "The tree shape").

The root is on top; each node's box spans its value interval ``[node lower, node upper)`` on the
x-axis, in the column's units. Padding leaves beyond ``K`` (public zero counts) extend past
``upper`` and are drawn hatched. The colour of a row is its budget (``ε_l`` for Laplace noise,
``ρ_l`` for Gaussian noise) or its noise standard deviation; a level with no budget is grey and says "not released".

Everything is drawn by one :class:`_IcicleItem` (a pyqtgraph ``GraphicsObject``) that paints
only the visible x range: a row whose nodes would be narrower than :data:`MIN_NODE_PX` pixels is
drawn as one band (its colour is the same for every node of the level), otherwise as one filled
band plus the visible node borders. Painting is O(levels + visible nodes), never O(nodes), so a
tree with K = 65,536 bins (131,071 nodes) pans and zooms smoothly. Node look-up under the mouse
is O(1) per level: ``index = floor((x − lower) / node width)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFocusEvent,
    QFontMetrics,
    QKeyEvent,
    QLinearGradient,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from dpgui.app.cdf.tree_levels import PADDING_COLOUR, TreeLevels, level_fill, padding_brushes, scale_max
from dpgui.app.widgets.style import EXACT_COLOUR, NOT_RELEASED_COLOUR, colour_ramp, new_plot, text_colour_on
from dpgui.app.text import escape, plain_text
from dpgui.core.margins import MARGIN_NAME
from dpgui.core.quantiles import noise_margin
from dpgui.formatting import format_count, format_margin_records, format_node_edge, format_significant

if TYPE_CHECKING:
    from dpgui.core.mechanism import Release
    from dpgui.core.plan import Plan

# A row whose nodes would be narrower than this many pixels is drawn as one summary band.
MIN_NODE_PX = 2.0
# Nodes at least this wide get their released count (or interval) written inside.
TEXT_MIN_PX = 44.0
# Fraction of a row's height left blank above and below its boxes.
ROW_GAP = 0.07

COLOUR_MODES: dict[str, str] = {
    "budget": "Budget (per level)",
    "noise_sd": "Noise (standard deviation)",
}
LEGEND_TITLES: dict[str, str] = {
    "budget": "Colour: ε per level (brighter = more budget, less noise)",
    "noise_sd": "Colour: noise standard deviation, records (darker = noisier)",
}
HINT = ("Point at a box to see its details; click to select it. Zoom: mouse wheel or + / −. "
        "Pan: drag or ← / →. Home: reset zoom. ↑ / ↓ and Enter: pick a box with the keyboard.")



# ----------------------------------------------------------------------------------------
# The painted item
# ----------------------------------------------------------------------------------------


class _IcicleItem(pg.GraphicsObject):  # type: ignore[misc]  # pyqtgraph ships no types: its classes are Any
    """All rows of the tree in one item; paints only what is visible (see module docstring)."""

    sigHover = Signal(object)  # (level, index) or None
    sigClick = Signal(object)  # (level, index)

    def __init__(self) -> None:
        super().__init__()
        self.tree: TreeLevels | None = None
        self.release: Release | None = None
        self.unit = "value"
        self.fills: list[QColor] = []
        self.hovered: tuple[int, int] | None = None
        self.selected: tuple[int, int] | None = None
        self.setAcceptHoverEvents(True)

    # --- data ---
    def set_tree(self, tree: TreeLevels | None, fills: list[QColor], unit: str) -> None:
        self.prepareGeometryChange()
        self.tree, self.fills, self.unit = tree, fills, unit
        self.hovered = self.selected = None
        self.update()

    def set_fills(self, fills: list[QColor]) -> None:
        self.fills = fills
        self.update()

    def boundingRect(self) -> QRectF:
        if self.tree is None:
            return QRectF()
        t = self.tree
        return QRectF(t.lower, 0.0, t.padded_upper - t.lower, float(t.levels))

    def hit(self, x: float, y: float) -> tuple[int, int] | None:
        """(level, index) under the point (x, y) in data coordinates. O(1)."""
        if self.tree is None or not 0 <= y < self.tree.levels:
            return None
        level = int(y)
        index = self.tree.index_at(level, x)
        return None if index is None else (level, index)

    # --- mouse (pyqtgraph's scene events; drags fall through to the ViewBox for panning) ---
    def hoverEvent(self, ev: Any) -> None:  # pyqtgraph HoverEvent
        if ev.isExit():
            self.sigHover.emit(None)
            return
        pos = ev.pos()
        self.sigHover.emit(self.hit(pos.x(), pos.y()))

    def mouseClickEvent(self, ev: Any) -> None:  # pyqtgraph MouseClickEvent
        if ev.button() != Qt.MouseButton.LeftButton:
            ev.ignore()
            return
        pos = ev.pos()
        node = self.hit(pos.x(), pos.y())
        if node is None:
            ev.ignore()
            return
        ev.accept()
        self.sigClick.emit(node)

    # --- painting ---
    def paint(self, p: QPainter, *args: object) -> None:
        tree, vb = self.tree, self.getViewBox()
        if tree is None or vb is None or not self.fills:
            return
        (vx0, vx1), _ = vb.viewRange()
        x0, x1 = max(vx0, tree.lower), min(vx1, tree.padded_upper)
        if not x1 > x0:
            return
        t = p.transform()
        sx, dx, sy, dy = t.m11(), t.dx(), t.m22(), t.dy()
        palette = QApplication.palette()
        background = palette.color(QPalette.ColorRole.Base)
        fm = QFontMetrics(p.font())
        pad_fill, pad_hatch = padding_brushes()

        p.save()
        p.resetTransform()  # draw in device pixels: crisp edges and no float trouble deep in a zoom
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)

        def px(x: float) -> float:
            return sx * x + dx

        for level in range(tree.levels):
            ya, yb = sy * (level + ROW_GAP) + dy, sy * (level + 1 - ROW_GAP) + dy
            top, height = min(ya, yb), abs(yb - ya)
            fill = self.fills[level]
            real_x1 = min(x1, tree.upper)
            if real_x1 > x0:
                band = QRectF(px(x0), top, px(real_x1) - px(x0), height)
                p.fillRect(band, fill)
                p.setPen(QPen(fill.darker(125), 1))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRect(band)
            if x1 > tree.upper:
                pad = QRectF(px(max(x0, tree.upper)), top, px(x1) - px(max(x0, tree.upper)), height)
                p.fillRect(pad, pad_fill)
                p.fillRect(pad, pad_hatch)
            width = tree.widths[level]
            node_px = width * sx
            text_pen = text_colour_on(fill)
            if node_px >= MIN_NODE_PX:
                i0 = int(math.floor((x0 - tree.lower) / width))
                i1 = min(tree.nodes[level], int(math.ceil((x1 - tree.lower) / width)))
                edges = tree.lower + np.arange(i0, i1 + 1, dtype=np.float64) * (tree.leaves[level] * tree.bin_width)
                edges = edges[(edges >= x0) & (edges <= x1)]
                if edges.size:
                    xs = np.repeat(sx * edges + dx, 2)
                    ys = np.tile(np.array([top, top + height]), edges.size)
                    line = background if node_px >= 6 else fill.darker(160)
                    p.setPen(QPen(line, 1))
                    p.drawPath(pg.functions.arrayToQPath(xs, ys, connect="pairs"))
                if node_px >= TEXT_MIN_PX and tree.status[level] != "unreleased" and height >= fm.height():
                    self._node_texts(p, fm, level, i0, i1, x0, x1, top, height, px)
            elif tree.status[level] != "unreleased" and height >= fm.height():
                text = f"{tree.nodes[level]:,} boxes, each {format_node_edge(width, width)} wide — zoom in to see them"
                self._centred_text(p, fm, text, px(x0), px(real_x1), top, height, text_pen)
            if tree.status[level] == "unreleased" and height >= fm.height():
                self._centred_text(p, fm, "not released (no budget at this level)", px(x0), px(x1), top, height,
                                   text_colour_on(fill))

        palette_text = palette.color(QPalette.ColorRole.Text)
        for node, pen in ((self.hovered, QPen(palette_text, 1, Qt.PenStyle.DashLine)),
                          (self.selected, QPen(palette.color(QPalette.ColorRole.Highlight), 3))):
            if node is None:
                continue
            level, index = node
            lo, hi = tree.interval(level, index)
            if hi < vx0 or lo > vx1:
                continue
            a, b = px(max(lo, vx0)), px(min(hi, vx1))
            if b - a < 4:
                mid = (a + b) / 2
                a, b = mid - 2, mid + 2
            ya, yb = sy * (level + ROW_GAP / 2) + dy, sy * (level + 1 - ROW_GAP / 2) + dy
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(QRectF(a, min(ya, yb), b - a, abs(yb - ya)))
        p.restore()

    def _node_texts(self, p: QPainter, fm: QFontMetrics, level: int, i0: int, i1: int, x0: float, x1: float,
                    top: float, height: float, px: Callable[[float], float]) -> None:
        tree = self.tree
        assert tree is not None, "called by paint(), which paints nothing without a tree"
        counts = None
        if self.release is not None and level < len(self.release.levels):
            counts = self.release.levels[level]
        for index in range(i0, i1):
            lo, hi = tree.interval(level, index)
            if counts is not None:
                text = format_count(float(counts[index]))
                if tree.status[level] == "exact":
                    text = f"{text} (exact total, public)"
            else:
                step = tree.widths[level]
                text = f"[{format_node_edge(lo, step)}, {format_node_edge(hi, step)})"
                if tree.status[level] == "exact":
                    text = f"exact total (public, no noise) of {text}"
            a, b = px(max(lo, x0)), px(min(hi, x1))
            if fm.horizontalAdvance(text) + 6 > b - a:
                continue
            fill = QColor(PADDING_COLOUR) if lo >= tree.upper else self.fills[level]
            self._centred_text(p, fm, text, a, b, top, height, text_colour_on(fill))

    @staticmethod
    def _centred_text(p: QPainter, fm: QFontMetrics, text: str, a: float, b: float, top: float, height: float,
                      colour: QColor) -> None:
        if b - a < 20:
            return
        p.setPen(colour)
        text = fm.elidedText(text, Qt.TextElideMode.ElideRight, int(b - a - 6))
        p.drawText(QRectF(a, top, b - a, height), Qt.AlignmentFlag.AlignCenter, text)


# ----------------------------------------------------------------------------------------
# The colour legend
# ----------------------------------------------------------------------------------------


class _ColourLegend(QWidget):
    """A colour bar with units, the levels marked on it, and swatches for the grey kinds of box."""

    BAR_WIDTH = 240

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mode = "budget"
        self.tree: TreeLevels | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName("Colour legend")

    def set_state(self, tree: TreeLevels | None, mode: str) -> None:
        self.tree, self.mode = tree, mode
        self.setToolTip(self.describe())
        self.setAccessibleDescription(self.describe())
        self.update()

    def title(self) -> str:
        if self.mode == "budget" and self.tree is not None and self.tree.budget_name == "ρ":
            return "Colour: ρ per level, Gaussian noise (brighter = more budget, less noise)"
        return LEGEND_TITLES[self.mode]

    def describe(self) -> str:
        if self.tree is None:
            return self.title()
        values = self.tree.epsilons if self.mode == "budget" else self.tree.sds
        parts = []
        for level, v in enumerate(values):
            status = self.tree.status[level]
            if status == "unreleased":
                parts.append(f"level {level}: not released")
            elif status == "exact":
                parts.append(f"level {level}: exact")
            else:
                parts.append(f"level {level}: {format_significant(v)}")
        return self.title() + " — " + ", ".join(parts)

    def sizeHint(self) -> QSize:
        fm = self.fontMetrics()
        return QSize(self.BAR_WIDTH + 420, 3 * fm.height() + 20)

    def minimumSizeHint(self) -> QSize:
        return QSize(self.BAR_WIDTH + 20, self.sizeHint().height())

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        fm = self.fontMetrics()
        text = self.palette().color(QPalette.ColorRole.WindowText)
        p.setPen(text)
        p.drawText(QPointF(4, fm.ascent() + 2), self.title())
        bar_top = fm.height() + 10
        bar = QRectF(8, bar_top, self.BAR_WIDTH, 12)
        gradient = QLinearGradient(bar.topLeft(), bar.topRight())
        for k in range(17):
            t = k / 16
            gradient.setColorAt(t, colour_ramp(t if self.mode == "budget" else 1 - t))
        p.fillRect(bar, QBrush(gradient))
        p.setPen(QPen(text, 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(bar)
        vmax = scale_max(self.tree, self.mode) if self.tree is not None else 1.0
        for k in range(3):
            frac = k / 2
            x = bar.left() + frac * bar.width()
            p.drawLine(QPointF(x, bar.bottom()), QPointF(x, bar.bottom() + 3))
            label = format_significant(frac * vmax)
            w = fm.horizontalAdvance(label)
            p.drawText(QPointF(min(max(x - w / 2, 2), bar.right() - w + 6), bar.bottom() + 4 + fm.ascent()), label)
        # One small triangle above the bar per level, at the level's value.
        if self.tree is not None:
            values = self.tree.epsilons if self.mode == "budget" else self.tree.sds
            p.setBrush(text)
            for level, v in enumerate(values):
                if self.tree.status[level] == "unreleased" or (self.mode == "budget" and self.tree.status[level] == "exact"):
                    continue
                x = bar.left() + min(max((v or 0.0) / vmax, 0.0), 1.0) * bar.width()
                p.drawPolygon(QPolygonF([QPointF(x - 4, bar.top() - 6), QPointF(x + 4, bar.top() - 6),
                                         QPointF(x, bar.top() - 1)]))
        # Swatches for what is not on the colour scale.
        swatches: list[tuple[str, list[QBrush]]] = []
        if self.tree is None or "unreleased" in self.tree.status:
            swatches.append(("not released (no budget)", [QBrush(NOT_RELEASED_COLOUR)]))
        if self.tree is None or self.tree.padded_upper > self.tree.upper:
            swatches.append(("padding (no data)", list(padding_brushes())))
        if self.mode == "budget" and self.tree is not None and "exact" in self.tree.status:
            swatches.append(("exact total (public, no noise)", [QBrush(EXACT_COLOUR)]))
        x = bar.right() + 30
        y = bar_top - 2
        for label, brushes in swatches:
            box = QRectF(x, y, 22, 14)
            for brush in brushes:
                p.fillRect(box, brush)
            p.setPen(QPen(text, 1))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(box)
            p.drawText(QPointF(box.right() + 6, box.top() + fm.ascent() - 1), label)
            x = box.right() + 6 + fm.horizontalAdvance(label) + 22
        p.end()


# ----------------------------------------------------------------------------------------
# The widget
# ----------------------------------------------------------------------------------------


class BinTreeView(QWidget):
    """Icicle drawing of the bin tree of a :class:`~dpgui.core.plan.Plan`, with zoom, hover and click.

    ``set_plan`` draws the tree, ``set_release`` adds the released noisy counts to the hover text,
    ``set_colour_mode`` colours the rows by ``'budget'`` (ε per level) or ``'noise_sd'`` (noise
    standard deviation per level). ``nodeSelected`` is emitted with a dict (see :meth:`node_info`)
    when a box is clicked or picked with the keyboard.
    """

    nodeSelected = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tree: TreeLevels | None = None
        self._release: Release | None = None
        self._mode = "budget"
        self._value_label = "value"
        self._hovered: tuple[int, int] | None = None
        self._selected: tuple[int, int] | None = None
        self._key_level = 0

        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Bin tree")
        self.setAccessibleDescription("One row per tree level, root on top; one box per node. " + HINT)

        self.colour_combo = QComboBox()
        for mode, text in COLOUR_MODES.items():
            self.colour_combo.addItem(text, mode)
        self.colour_combo.setAccessibleName("Colour the levels by")
        self.colour_combo.currentIndexChanged.connect(
            lambda _i: self.set_colour_mode(self.colour_combo.currentData()))
        colour_label = QLabel("Colour by:")
        colour_label.setBuddy(self.colour_combo)
        self.reset_button = QPushButton("Reset zoom")
        self.reset_button.setToolTip("Show the whole tree again (Home)")
        self.reset_button.clicked.connect(self.reset_zoom)

        self.plot_widget = new_plot("Bin tree: how the privacy budget is spread over the levels",
                                    self._value_label, "Tree level", legend=False)
        self.plot_widget.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.plot_widget.setMinimumSize(320, 200)
        item = self.plot_widget.getPlotItem()
        item.hideButtons()
        item.setMenuEnabled(False)
        item.showGrid(x=False, y=False)
        self.view_box: pg.ViewBox = item.getViewBox()
        self.view_box.setMouseEnabled(x=True, y=False)
        self.view_box.invertY(True)
        self.view_box.disableAutoRange()
        self.icicle = _IcicleItem()
        item.addItem(self.icicle)
        self.icicle.sigHover.connect(self._on_hover)
        self.icicle.sigClick.connect(self._on_click)

        self.legend = _ColourLegend()
        self.info_label = plain_text(QLabel(HINT))  # quotes the column's name literally
        self.info_label.setWordWrap(True)
        self.info_label.setAccessibleName("Details of the box under the mouse")
        self.info_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.info_label.setMinimumHeight(2 * self.info_label.fontMetrics().height() + 4)

        top = QHBoxLayout()
        top.addWidget(colour_label)
        top.addWidget(self.colour_combo)
        top.addStretch(1)
        top.addWidget(self.reset_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.legend)
        layout.addWidget(self.info_label)
        self.legend.set_state(None, self._mode)
        self._show_info()

    # ----- public API -----
    def set_plan(self, plan: Plan, lower: float, upper: float, value_label: str = "value") -> None:
        """Draw the tree of ``plan`` over the value range ``[lower, upper)`` (padding beyond)."""
        tree = TreeLevels.build(plan, lower, upper)
        self._tree = tree
        self._value_label = value_label
        if self._release is not None and not self._release_matches(self._release):
            self._release = None
        self.icicle.release = self._release
        self._hovered = self._selected = None
        self._key_level = 0
        item = self.plot_widget.getPlotItem()
        item.setLabel("bottom", escape(value_label))  # pyqtgraph labels are rich text
        names = [self._level_name(level) for level in range(tree.levels)]
        left = item.getAxis("left")
        left.setTicks([[(level + 0.5, name) for level, name in enumerate(names)]])
        # Room for the longest level name now (pyqtgraph would only widen the axis after a paint).
        fm = self.fontMetrics()
        left.setWidth(max(fm.horizontalAdvance(n) for n in names) + 2 * fm.height() + 16)
        self.icicle.set_tree(tree, self._fills(), value_label)
        span = tree.padded_upper - tree.lower
        margin = 0.02 * span
        self.view_box.setLimits(xMin=tree.lower - margin, xMax=tree.padded_upper + margin,
                                minXRange=2 * tree.bin_width, maxXRange=span + 2 * margin,
                                yMin=-0.05, yMax=tree.levels + 0.05)
        self.view_box.setYRange(-0.02, tree.levels + 0.02, padding=0)
        self.reset_zoom()
        self.legend.set_state(tree, self._mode)
        self._show_info()

    def set_release(self, release: Release | None) -> None:
        """Show the released noisy node counts (``release.levels``) on hover and in wide boxes."""
        if release is not None and not self._release_matches(release):
            self._release = release
            self.set_plan(release.plan, release.lower, release.upper, self._value_label)
            return
        self._release = release
        self.icicle.release = release
        self.icicle.update()
        self._show_info()

    def set_colour_mode(self, mode: str) -> None:
        """Colour the rows by ``'budget'`` (ε per level) or ``'noise_sd'`` (noise standard deviation)."""
        if mode not in COLOUR_MODES:
            raise ValueError(f"unknown colour mode {mode!r}; use one of {', '.join(COLOUR_MODES)}")
        self._mode = mode
        index = self.colour_combo.findData(mode)
        if index != self.colour_combo.currentIndex():
            self.colour_combo.blockSignals(True)
            self.colour_combo.setCurrentIndex(index)
            self.colour_combo.blockSignals(False)
        self.icicle.set_fills(self._fills())
        self.legend.set_state(self._tree, mode)

    def colour_mode(self) -> str:
        return self._mode

    def level_colour(self, level: int) -> QColor:
        """The fill colour of a level's boxes in the current colour mode."""
        return QColor(self.icicle.fills[level])

    def node_at(self, x: float, level: int) -> dict[str, Any] | None:
        """The node of ``level`` whose interval contains ``x`` (see :meth:`node_info`), O(1)."""
        if self._tree is None:
            return None
        index = self._tree.index_at(level, x)
        return None if index is None else self.node_info(level, index)

    def node_info(self, level: int, index: int) -> dict[str, Any]:
        """Keys: level, index, lower, upper, epsilon, noise_scale, noise_sd, released, status, padding, missing.

        ``epsilon`` is the level's budget in the plan's unit (ε_l for Laplace, ρ_l for Gaussian
        noise), 0 for a level without budget (and the exact public root); ``noise_scale`` is the
        Laplace scale t_l or the Gaussian σ_l²; ``noise_scale`` and ``noise_sd`` are None when the
        level is not released (the exact root has s.d. 0),
        ``released`` is the released noisy count or None (no release yet, or not released),
        ``padding`` is 'all' / 'part' / None for nodes wholly / partly beyond ``upper``; ``missing``:
        does the node hold the change model's leaf for missing values.
        """
        tree = self._require_tree()
        if not 0 <= level < tree.levels or not 0 <= index < tree.nodes[level]:
            raise IndexError(f"no node {index} at level {level}")
        lo, hi = tree.interval(level, index)
        released = None
        if self._release is not None:
            counts = self._release.levels[level]
            if counts is not None:
                released = float(counts[index])
        padding = "all" if lo >= tree.upper else ("part" if hi > tree.upper else None)
        shape = tree.plan.shape
        # Under change, leaf K (0-based) counts missing values (docs/privacy-model.md "Missing values"): it lies
        # beyond ``upper`` like padding but holds data.
        size = tree.leaves[level]
        missing = bool(shape.missing_leaf) and index * size <= shape.bins < (index + 1) * size
        if missing and size == 1:
            padding = None
        return {
            "level": level, "index": index, "lower": lo, "upper": hi,
            "epsilon": tree.epsilons[level], "noise_scale": tree.scales[level], "noise_sd": tree.sds[level],
            "released": released, "status": tree.status[level], "padding": padding, "missing": missing,
        }

    def describe(self, info: dict[str, Any]) -> str:
        """The info line of a node, in plain words."""
        tree = self._require_tree()
        level, step = info["level"], tree.widths[info["level"]]
        parts = [f"Level {level} of {tree.levels - 1}" + (" (all records)" if level == 0 else ""),
                 f"node {info['index']:,}",
                 f"[{format_node_edge(info['lower'], step)}, {format_node_edge(info['upper'], step)}) {self._value_label}"]
        if info.get("missing") and tree.leaves[level] == 1:
            parts[-1] = "the count of missing values (not a range of values)"
        elif info["padding"] == "all":
            parts.append("padding (no data)")
        elif info["padding"] == "part":
            parts.append(f"partly padding (no data beyond {format_node_edge(tree.upper, step)})")
        if info.get("missing") and tree.leaves[level] > 1 and level > 0:
            parts.append("includes the count of missing values")
        if info["status"] == "unreleased":
            parts.append("not released (no budget at this level)")
        elif info["status"] == "exact":
            parts.append("exact total (public, no noise added)")
        else:
            gaussian = tree.budget_name == "ρ"
            parts += [f"{tree.budget_name} = {format_significant(info['epsilon'], 2)}",
                      f"noise {'variance σ²' if gaussian else 'scale'} {format_significant(info['noise_scale'])}",
                      f"{MARGIN_NAME} of its count {format_margin_records(float(noise_margin(info['noise_sd'])))}"]
        if info["released"] is not None:
            parts.append(f"released count {format_count(info['released'])}")
        return " · ".join(parts)

    def info_text(self) -> str:
        return self.info_label.text()

    def hover_at(self, x: float, y: float) -> dict[str, Any] | None:
        """Show the node at data point (x, y) as hovered (what the mouse does); returns its info."""
        self._on_hover(self.icicle.hit(x, y))
        return None if self._hovered is None else self.node_info(*self._hovered)

    def select_node(self, level: int, index: int) -> dict[str, Any]:
        """Select a node (as a click does): outline it, show it and emit ``nodeSelected``."""
        info = self.node_info(level, index)
        self._selected = (level, index)
        self.icicle.selected = self._selected
        self.icicle.update()
        self._show_info()
        self.nodeSelected.emit(info)
        return info

    def selected_node(self) -> dict[str, Any] | None:
        return None if self._selected is None else self.node_info(*self._selected)

    def x_range(self) -> tuple[float, float]:
        (x0, x1), _ = self.view_box.viewRange()
        return float(x0), float(x1)

    def set_x_range(self, x0: float, x1: float) -> None:
        self.view_box.setXRange(x0, x1, padding=0)

    def reset_zoom(self) -> None:
        if self._tree is not None:
            self.view_box.setXRange(self._tree.lower, self._tree.padded_upper, padding=0.005)

    def zoom(self, factor: float) -> None:
        """Scale the visible x range by ``factor`` (< 1 zooms in) about its centre."""
        x0, x1 = self.x_range()
        centre, half = (x0 + x1) / 2, (x1 - x0) * factor / 2
        self.view_box.setXRange(centre - half, centre + half, padding=0)

    def pan(self, fraction: float) -> None:
        """Move the visible x range by ``fraction`` of its width (> 0 moves right)."""
        x0, x1 = self.x_range()
        shift = (x1 - x0) * fraction
        if self._tree is not None:
            limit_lo = self._tree.lower - 0.02 * (self._tree.padded_upper - self._tree.lower)
            limit_hi = self._tree.padded_upper + 0.02 * (self._tree.padded_upper - self._tree.lower)
            shift = min(max(shift, limit_lo - x0), limit_hi - x1)
        self.view_box.setXRange(x0 + shift, x1 + shift, padding=0)

    def data_to_widget(self, x: float, y: float) -> QPoint:
        """Where data point (x, y) is in ``plot_widget.viewport()`` coordinates (for tests and tools)."""
        scene = self.view_box.mapViewToScene(QPointF(x, y))
        point: QPoint = self.plot_widget.mapFromScene(scene)
        return point

    # ----- internals -----
    def _require_tree(self) -> TreeLevels:
        if self._tree is None:
            raise RuntimeError("no plan: call set_plan first")
        return self._tree

    def _release_matches(self, release: Release) -> bool:
        tree = self._tree
        return (tree is not None and release.plan == tree.plan and float(release.lower) == tree.lower
                and float(release.upper) == tree.upper)

    def _fills(self) -> list[QColor]:
        if self._tree is None:
            return []
        return [level_fill(self._tree, self._mode, level) for level in range(self._tree.levels)]

    def _level_name(self, level: int) -> str:
        tree = self._require_tree()
        if level == 0:
            return "Level 0 (all records)"
        if level < tree.levels - 1:
            return f"Level {level} ({tree.nodes[level]:,} boxes)"
        shape = tree.plan.shape
        padding = tree.nodes[level] - shape.leaves  # the missing values' leaf is not padding
        missing = " + 1 for missing values" if shape.missing_leaf else ""
        return f"Level {level} ({shape.bins:,} bins{missing}" + (f" + {padding:,} padding)" if padding else ")")

    def _on_hover(self, node: tuple[int, int] | None) -> None:
        if node == self._hovered:
            return
        self._hovered = node
        self.icicle.hovered = node
        self.icicle.update()
        self._show_info()

    def _on_click(self, node: tuple[int, int]) -> None:
        self._key_level = node[0]
        self.select_node(*node)

    def _show_info(self) -> None:
        node = self._hovered or self._selected
        if self._tree is None or node is None:
            text = HINT if self._tree is not None else "No plan yet."
            if self._release is not None:
                text = "Numbers in the boxes are the released (noisy) counts. " + text
        else:
            text = self.describe(self.node_info(*node))
            if node == self._selected and self._hovered is None:
                text = "Selected: " + text
        self.info_label.setText(text)

    def _key_node(self) -> tuple[int, int] | None:
        """The node of the keyboard level at the centre of the view."""
        if self._tree is None:
            return None
        x0, x1 = self.x_range()
        centre = min(max((x0 + x1) / 2, self._tree.lower), np.nextafter(self._tree.padded_upper, -np.inf))
        index = self._tree.index_at(self._key_level, centre)
        return None if index is None else (self._key_level, index)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, text = event.key(), event.text()
        if self._tree is None:
            super().keyPressEvent(event)
            return
        if text in ("+", "=") or key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(0.8)
        elif text in ("-", "_") or key == Qt.Key.Key_Minus:
            self.zoom(1.25)
        elif key == Qt.Key.Key_Left:
            self.pan(-0.1)
        elif key == Qt.Key.Key_Right:
            self.pan(0.1)
        elif key in (Qt.Key.Key_Home, Qt.Key.Key_0):
            self.reset_zoom()
        elif key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            step = -1 if key == Qt.Key.Key_Up else 1
            self._key_level = min(max(self._key_level + step, 0), self._tree.levels - 1)
            self._on_hover(self._key_node())
            return
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            node = self._key_node()
            if node is not None:
                self.select_node(*node)
            return
        elif key == Qt.Key.Key_Escape:
            self._on_hover(None)
            return
        else:
            super().keyPressEvent(event)
            return
        if self._hovered is not None and self._hovered[0] == self._key_level:
            self._on_hover(self._key_node())

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self.hasFocus():  # a visible focus ring in the layout margin
            p = QPainter(self)
            p.setPen(QPen(self.palette().color(QPalette.ColorRole.Highlight), 2))
            p.drawRect(self.rect().adjusted(1, 1, -2, -2))
            p.end()

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self.update()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.update()
