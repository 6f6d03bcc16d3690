"""Step 2's level budgets: one spin box per level of the tree with its share, a lock per level, and the
rule that the unlocked levels share what the locked ones leave (the total stays the plan's ε, or ρ with
Gaussian noise). Public values only; GUI thread only."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QDoubleSpinBox, QGridLayout, QLabel, QWidget

from dpgui.app import text
from dpgui.app.widgets.fields import inline_message, show_inline
from dpgui.core.plan import Plan, split_budget
from dpgui.vocabulary import Noise


class BudgetEditor(QWidget):
    """One row per tree level: budget spin box, lock, share. Edits keep the sum at the plan's total
    by rescaling the other unlocked levels; locked levels never move. The budgets are ε per level
    for Laplace plans and ρ per level (zCDP, summing to ρ of (ε, δ)) for Gaussian ones
    (``Plan.level_budgets``, ``Plan.budget_name``)."""

    budgetsEdited = Signal()
    locksChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._spins: list[QDoubleSpinBox | None] = []
        self._locks: list[QCheckBox | None] = []
        self._shares: list[QLabel] = []
        self._total = 1.0  # what the budgets sum to: ε (Laplace) or ρ (Gaussian)
        self.unit = "ε"  # the budgets' unit: "ε" or "ρ" (Plan.budget_name)
        self.header_labels: list[QLabel] = []
        self._signature: tuple[Any, ...] | None = None
        self.message = inline_message(self)

    def set_plan(self, plan: Plan) -> None:
        """Show a plan's budgets (rebuilding the rows when the tree's levels change)."""
        shape, privacy = plan.shape, plan.privacy
        signature = (shape.branching, privacy.neighbours, plan.noise)
        self.unit = plan.budget_name
        if signature != self._signature:
            self._rebuild(plan)
            self._signature = signature
        total = self._total = plan.budget_total
        first = privacy.first_noised_level()
        for offset, value in enumerate(plan.level_budgets):
            spin = self._spins[first + offset]
            assert spin is not None
            spin.blockSignals(True)
            # Enough decimals to show each level's share to about 0.1 % of the total.
            spin.setDecimals(min(10, max(4, 3 - math.floor(math.log10(total)))))
            spin.setRange(0.0, total)
            spin.setSingleStep(max(total / 100, 10.0 ** -spin.decimals()))
            spin.setValue(value)
            spin.blockSignals(False)
        self._update_shares(plan.level_budgets, first)
        show_inline(self.message, "")

    def _rebuild(self, plan: Plan) -> None:
        while self._grid.count():
            item = self._grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None and widget is not self.message:
                widget.deleteLater()
        self._spins, self._locks, self._shares = [], [], []
        gaussian = plan.noise == Noise.GAUSSIAN
        headers = ("Level", "Nodes", "Budget ρ (zCDP)" if gaussian else "Budget ε", "Share", "Lock")
        self.header_labels.clear()
        for col, header in enumerate(headers):
            label = QLabel(f"<b>{header}</b>")
            if col == 2:
                label.setToolTip(text.RHO_COLUMN_TOOLTIP if gaussian else text.EPSILON_COLUMN_TOOLTIP)
            self._grid.addWidget(label, 0, col)
            self.header_labels.append(label)
        shape, privacy = plan.shape, plan.privacy
        for level in range(shape.height + 1):
            row = level + 1
            name = "0 (all records)" if level == 0 else (f"{level} (bins)" if level == shape.height else str(level))
            self._grid.addWidget(QLabel(name), row, 0)
            self._grid.addWidget(QLabel(f"{shape.nodes_at_level(level):,}"), row, 1)
            share = QLabel("")
            self._shares.append(share)
            if level == 0 and privacy.root_public:
                note = QLabel("exact (N is public)")
                note.setToolTip("Under this neighbour model the total N is published exactly; it costs no budget.")
                self._grid.addWidget(note, row, 2, 1, 3)
                self._spins.append(None)
                self._locks.append(None)
                continue
            spin = QDoubleSpinBox()
            spin.setDecimals(4)
            spin.setKeyboardTracking(False)
            spin.setAccessibleName(f"Budget of level {level}")
            spin.setToolTip(
                f"Privacy budget ρ (zCDP) spent on level {level}. The levels' ρ always add up to the ρ of your "
                "(ε, δ); changing one rescales the unlocked others." if gaussian else
                f"Privacy budget ε spent on level {level}. The levels' budgets always add up to ε; "
                "changing one rescales the unlocked others.")
            spin.valueChanged.connect(lambda value, lvl=level: self._on_spin(lvl, value))
            lock = QCheckBox()
            lock.setToolTip(text.LOCK_TOOLTIP)
            lock.setAccessibleName(f"Lock level {level}")
            lock.toggled.connect(self.locksChanged)
            self._grid.addWidget(spin, row, 2)
            self._grid.addWidget(share, row, 3)
            self._grid.addWidget(lock, row, 4)
            self._spins.append(spin)
            self._locks.append(lock)
        self._grid.addWidget(self.message, shape.height + 2, 0, 1, 5)

    def budgets(self) -> tuple[float, ...]:
        """Budgets of the noised levels (root first under add/remove), as Plan expects."""
        return tuple(spin.value() for spin in self._spins if spin is not None)

    def locked(self) -> dict[int, float]:
        return {level: spin.value() for level, (spin, lock) in enumerate(zip(self._spins, self._locks))
                if spin is not None and lock is not None and lock.isChecked()}

    def set_locked(self, level: int, locked: bool = True) -> None:
        lock = self._locks[level]
        if lock is not None:
            lock.setChecked(locked)

    def set_locks(self, levels: Sequence[int]) -> None:
        """Lock exactly ``levels`` (levels without a lock box, or beyond the tree, are ignored)."""
        wanted = set(levels)
        for level, lock in enumerate(self._locks):
            if lock is not None:
                lock.setChecked(level in wanted)

    def set_budget(self, level: int, value: float) -> None:
        """Set one level's budget as if the user typed it (rescales the others)."""
        spin = self._spins[level]
        if spin is not None:
            spin.setValue(value)

    def _on_spin(self, level: int, value: float) -> None:
        locked = self.locked()
        locked.pop(level, None)
        free = [lvl for lvl, spin in enumerate(self._spins)
                if spin is not None and lvl != level and lvl not in locked]
        available = self._total - math.fsum(locked.values())
        values = {lvl: spin.value() for lvl, spin in enumerate(self._spins) if spin is not None}
        if not free:
            show_inline(self.message, "Every other level is locked, so this budget cannot change without "
                                      "breaking the total. Unlock another level first.")
            self._restore(level, self._total - math.fsum(v for lvl, v in values.items() if lvl != level))
            return
        value = min(max(value, 0.0), available)
        rest = available - value
        old = math.fsum(values[lvl] for lvl in free)
        for lvl in free:
            values[lvl] = rest * (values[lvl] / old) if old > 0 else rest / len(free)
        values[level] = value
        ordered = [values[lvl] for lvl in sorted(values)]
        if ordered[-1] <= 0:
            show_inline(self.message, "The bottom level (the bins) needs some budget; give it more than 0.")
            return
        exact = split_budget(self._total, ordered) if sum(ordered) > 0 else tuple(ordered)
        for (lvl, _), new in zip(sorted(values.items()), exact):
            spin = self._spins[lvl]
            assert spin is not None
            spin.blockSignals(True)
            spin.setValue(new)
            spin.blockSignals(False)
        show_inline(self.message, "")
        first = min(values)
        self._exact = exact
        self._update_shares(exact, first)
        self.budgetsEdited.emit()

    def exact_budgets(self) -> tuple[float, ...]:
        """The budgets summing to the total (ε or ρ) exactly (spin boxes show them rounded)."""
        shown = self.budgets()
        exact = getattr(self, "_exact", None)
        step = min((10.0 ** -spin.decimals() for spin in self._spins if spin is not None), default=1e-4)
        if exact is not None and len(exact) == len(shown) and all(abs(a - b) < step for a, b in zip(exact, shown)):
            return tuple(exact)
        return split_budget(self._total, shown)

    def _restore(self, level: int, value: float) -> None:
        spin = self._spins[level]
        assert spin is not None
        spin.blockSignals(True)
        spin.setValue(value)
        spin.blockSignals(False)

    def _update_shares(self, budgets: Sequence[float], first: int) -> None:
        for offset, value in enumerate(budgets):
            level = first + offset
            share = self._shares[level]
            if value <= 0:
                share.setText("not released")
                share.setToolTip("This level gets no budget, so it is not published; the others carry its information.")
            else:
                share.setText(f"{100 * value / self._total:.1f} %")
                share.setToolTip("")
