"""The release plan's list of statistics (:class:`StatisticsList`): a numbered table (each statistic's title,
weight, fixed budget, and its share and margin once split), Add (a menu of the four kinds), Remove, Move up and
Move down, Open Plan… and Save Plan… (whose clicks the mode takes), and the selected statistic's editor
(:class:`~dpgui.app.plan.editor.PartEditor`). It holds the statistics as the plan file's parts and says when
they changed (``changed``). Public values only. GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGroupBox, QHBoxLayout, QHeaderView, QMenu, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from dpgui.app.plan.editor import PartEditor
from dpgui.app.plan.parts import KIND_LABELS, default_part, part_problems, part_subject
from dpgui.vocabulary import StatisticKind
from dpgui.workspace.plan_spec import PartSpec
from dpgui.workspace.plan_split import PlannedPart

__all__ = ["StatisticsList"]

LIST_HEADERS = ("Statistic", "Weight", "Fixed ε", "Share of ε", "95 % margin")
LIST_TIPS = ("What is published (double-check the settings in the editor on the right).",
             "How much this statistic's accuracy counts when the budget is split (1: as much as the others).",
             "A budget you fixed for this statistic (empty: the split decides).",
             "Its share of the plan's ε, once you press Split.",
             "In 95 % of releases its counts are within this many records of the true counts (at its least precise "
             "point), whatever the data.")


class StatisticsList(QGroupBox):
    """The plan's statistics and the selected one's editor (module doc); ``columns()`` gives the open data's
    column names, ``protected()`` the paths the data is read from (never a public list)."""

    changed = Signal()  # a statistic was added, removed, moved or edited

    def __init__(self, columns: Callable[[], list[str]], protected: Callable[[], list[str]],
                 parent: QWidget | None = None) -> None:
        super().__init__("The statistics of the plan", parent)
        self.columns = columns
        self.choices: list[PartSpec] = []
        self.shares: Sequence[PlannedPart] = ()  # each statistic's share, once split
        self.table = QTableWidget(0, len(LIST_HEADERS))
        self.table.setHorizontalHeaderLabels(list(LIST_HEADERS))
        for i, tip in enumerate(LIST_TIPS):
            header = self.table.horizontalHeaderItem(i)
            if header is not None:
                header.setToolTip(tip)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setMinimumHeight(150)
        self.table.verticalHeader().hide()  # each title carries its number, as the chart names it
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.add_button = QPushButton("&Add ▾")
        self.add_button.setToolTip("Add a statistic to the plan.")
        self.add_menu = QMenu(self.add_button)
        for kind, label in KIND_LABELS.items():
            self.add_menu.addAction(label, partial(self.add_part, kind))
        self.add_button.setMenu(self.add_menu)
        self.remove_button = QPushButton("Re&move")
        self.remove_button.setToolTip("Remove the selected statistic from the plan.")
        self.remove_button.clicked.connect(self.remove_part)
        self.up_button = QPushButton("Move &up")
        self.up_button.setToolTip("Move the selected statistic up (the order of the results and the PDF).")
        self.up_button.clicked.connect(lambda: self.move_part(-1))
        self.down_button = QPushButton("Move do&wn")
        self.down_button.setToolTip("Move the selected statistic down.")
        self.down_button.clicked.connect(lambda: self.move_part(1))
        self.open_plan_button = QPushButton("&Open Plan…")
        self.open_plan_button.setToolTip("Read a release plan file (TOML): its budget, protection and statistics "
                                         "replace the ones listed here.")
        self.save_plan_button = QPushButton("Sa&ve Plan…")
        self.save_plan_button.setToolTip("Write the plan (budget, protection, statistics; no data) as a TOML file, to "
                                         "open again here or run with `dpgui release --spec`.")
        buttons = QHBoxLayout()
        for button in (self.add_button, self.remove_button, self.up_button, self.down_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.open_plan_button)
        buttons.addWidget(self.save_plan_button)
        left = QVBoxLayout()
        left.addWidget(self.table, 1)
        left.addLayout(buttons)
        self.editor = PartEditor(protected)
        self.editor.changed.connect(self._part_edited)
        layout = QHBoxLayout(self)
        layout.addLayout(left, 3)
        layout.addWidget(self.editor, 2)

    def selected_row(self) -> int:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else -1

    def add_part(self, kind: StatisticKind) -> None:
        """Add a statistic of ``kind`` (its first column chosen) at the end, selected."""
        self.choices.append(default_part(kind, self.columns()))
        self.select(len(self.choices) - 1)

    def remove_part(self) -> None:
        row = self.selected_row()
        if row < 0:
            return
        del self.choices[row]
        self.select(min(row, len(self.choices) - 1))

    def move_part(self, step: int) -> None:
        row = self.selected_row()
        if row < 0 or not 0 <= row + step < len(self.choices):
            return
        self.choices[row], self.choices[row + step] = self.choices[row + step], self.choices[row]
        self.select(row + step)

    def set_parts(self, parts: Sequence[PartSpec]) -> None:
        """Replace the statistics (a plan file's), the first selected."""
        self.choices = list(parts)
        self.select(0 if self.choices else -1)

    def select(self, row: int) -> None:
        """The list changed: say so, show it with ``row`` selected (-1: none) and that statistic in the editor."""
        self.changed.emit()
        self.table.blockSignals(True)
        if row >= 0:
            self.table.selectRow(row)
        else:
            self.table.clearSelection()
        self.table.blockSignals(False)
        self._selection_changed()

    def _selection_changed(self) -> None:
        row = self.selected_row()
        self.editor.load(self.choices[row] if row >= 0 else None, self.columns())
        for button in (self.remove_button, self.up_button, self.down_button):
            button.setEnabled(row >= 0)

    def columns_changed(self) -> None:
        """The open data changed: the editor offers its columns."""
        self._selection_changed()

    def _part_edited(self, choice: PartSpec) -> None:
        row = self.selected_row()
        if row >= 0:
            self.choices[row] = choice
            self.changed.emit()

    def fill(self, shares: Sequence[PlannedPart]) -> None:
        """The table of the statistics, with each one's share and margin from ``shares`` (empty: not split)."""
        self.shares = shares
        selected = self.selected_row()
        self.table.blockSignals(True)
        self.table.setRowCount(len(self.choices))
        for row, choice in enumerate(self.choices):
            problems = part_problems(choice)
            title = choice.settings.get("name") or f"{KIND_LABELS[choice.kind]}: {part_subject(choice)}"
            weight = choice.settings.get("weight")
            lock = choice.settings.get("lock")
            share = shares[row] if row < len(shares) else None
            cells = (f"{row + 1}. {title}" + (" — needs attention" if problems else ""),
                     f"{weight:g}" if isinstance(weight, (int, float)) else "?",
                     "" if lock is None else (f"{lock:g}" if isinstance(lock, (int, float)) else "?"),
                     "" if share is None else f"{share.epsilon:.4g}",
                     "" if share is None else f"±{share.margin95:,.0f} records")
            for col, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if problems:
                    item.setToolTip(" ".join(problems.values()))
                if col:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, col, item)
        if 0 <= selected < len(self.choices):
            self.table.selectRow(selected)
        self.table.blockSignals(False)
        for button in (self.remove_button, self.up_button, self.down_button):
            button.setEnabled(self.selected_row() >= 0)
