"""The bin tree's levels as the bin-tree view (:mod:`dpgui.app.cdf.tree_view`) draws them: per-level numbers
of a plan (O(levels), nothing per node) and each level's colour (its budget or its noise, grey when not
released, the padding hatched). Public values only: the plan and the bounds."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor

from dpgui.app.widgets.style import EXACT_COLOUR, NOT_RELEASED_COLOUR, colour_ramp

if TYPE_CHECKING:
    from dpgui.core.plan import Plan

PADDING_COLOUR = QColor("#DADADA")
PADDING_HATCH = QColor("#7F7F7F")


@dataclass(frozen=True)
class TreeLevels:
    """Per-level numbers of a plan over ``[lower, upper)``: everything O(levels), nothing per node."""

    plan: Any
    lower: float
    upper: float
    bin_width: float
    padded_upper: float
    nodes: tuple[int, ...]
    leaves: tuple[int, ...]  # leaves under one node, per level
    widths: tuple[float, ...]  # node width in value units, per level
    epsilons: tuple[float, ...]  # budget per level 0..h: ε_l (Laplace) or ρ_l (Gaussian); 0 if none
    scales: tuple[float | None, ...]  # Laplace scale t_l or Gaussian σ_l²
    sds: tuple[float | None, ...]  # noise s.d.: 0 for the exact root, None when not released
    status: tuple[str, ...]  # 'noised', 'exact' or 'unreleased'
    budget_name: str = "ε"  # the unit of ``epsilons``: "ε" or "ρ" (Plan.budget_name)

    @classmethod
    def build(cls, plan: Plan, lower: float, upper: float) -> TreeLevels:
        lower, upper = float(lower), float(upper)
        if not (math.isfinite(lower) and math.isfinite(upper)) or not lower < upper:
            raise ValueError(f"need finite lower < upper, got [{lower}, {upper})")
        shape = plan.shape
        bin_width = (upper - lower) / shape.bins
        leaves = tuple(int(s) for s in shape.leaves_per_node)
        levels = shape.height + 1
        first = plan.privacy.first_noised_level()
        eps = [0.0] * levels
        for offset, e in enumerate(plan.level_budgets):
            eps[first + offset] = float(e)
        variances = plan.level_variances()
        released = plan.released()
        status: list[str] = []
        scales: list[float | None] = []
        sds: list[float | None] = []
        for level in range(levels):
            scale = plan.scales[level]
            if scale is not None:
                status.append("noised")
                scales.append(float(scale))
                sds.append(float(math.sqrt(variances[level])))
            elif released[level]:
                status.append("exact")
                scales.append(None)
                sds.append(0.0)
            else:
                status.append("unreleased")
                scales.append(None)
                sds.append(None)
        return cls(
            plan=plan, lower=lower, upper=upper, bin_width=bin_width,
            padded_upper=lower + shape.padded_bins * bin_width,
            nodes=tuple(shape.nodes_at_level(level) for level in range(levels)),
            leaves=leaves, widths=tuple(s * bin_width for s in leaves),
            epsilons=tuple(eps), scales=tuple(scales), sds=tuple(sds), status=tuple(status),
            budget_name=plan.budget_name,
        )

    @property
    def levels(self) -> int:
        return len(self.nodes)

    def interval(self, level: int, index: int) -> tuple[float, float]:
        """``[lo, hi)`` of one node, computed as :meth:`TreeShape.node_intervals` does."""
        size = self.leaves[level]
        return (self.lower + (index * size) * self.bin_width,
                self.lower + (index * size + size) * self.bin_width)

    def index_at(self, level: int, x: float) -> int | None:
        """The node of ``level`` containing ``x``, or None outside the tree. O(1)."""
        if not 0 <= level < self.levels or not self.lower <= x < self.padded_upper:
            return None
        last = self.nodes[level] - 1
        index = min(max(int(math.floor((x - self.lower) / self.widths[level])), 0), last)
        # The division may land one node off at an edge; agree exactly with interval().
        lo, hi = self.interval(level, index)
        if x < lo and index > 0:
            index -= 1
        elif x >= hi and index < last:
            index += 1
        return index


# the colours of the levels
def scale_max(tree: TreeLevels, mode: str) -> float:
    values = [v for v in (tree.epsilons if mode == "budget" else tree.sds) if v is not None and v > 0]
    return max(values) if values else 1.0


def level_fill(tree: TreeLevels, mode: str, level: int) -> QColor:
    status = tree.status[level]
    if status == "unreleased":
        return QColor(NOT_RELEASED_COLOUR)
    vmax = scale_max(tree, mode)
    if mode == "budget":
        if status == "exact":
            return QColor(EXACT_COLOUR)
        return colour_ramp(tree.epsilons[level] / vmax)
    return colour_ramp(1.0 - (tree.sds[level] or 0.0) / vmax)


def padding_brushes() -> tuple[QBrush, QBrush]:
    return QBrush(PADDING_COLOUR), QBrush(PADDING_HATCH, Qt.BrushStyle.BDiagPattern)
