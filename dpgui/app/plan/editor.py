"""The editor of one statistic of the release plan (:class:`PartEditor`): the fields its kind has (columns from
the open data, bounds and bins, the public groups or categories typed one per line, the level columns), its
name, weight and optional fixed budget, each problem named under its field. It edits a
:class:`~dpgui.app.plan.parts.PartSpec` and says when the officer changed it (``changed``). GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QPushButton,
    QSpinBox, QVBoxLayout, QWidget,
)

from dpgui.app.plan.parts import KIND_LABELS, MAX_BINS, part_problems
from dpgui.app.text import friendly
from dpgui.app.widgets.fields import inline_message, show_inline
from dpgui.vocabulary import OtherGroups, StatisticKind
from dpgui.errors import DpguiError
from dpgui.workspace.public_lists import check_public_list, read_public_list
from dpgui.workspace.plan_spec import PartSpec

__all__ = ["PartEditor"]

OTHER_LABELS = {OtherGroups.DROP: "Leave them out", OtherGroups.OTHER: "Count them in one group 'other'"}
_NUMBER_KINDS = (StatisticKind.CDF, StatisticKind.GROUPED_CDF)
#: the fields each kind shows (the name, weight and fixed budget: every kind)
_FIELDS: dict[StatisticKind, tuple[str, ...]] = {
    StatisticKind.CDF: ("column", "lower", "upper", "bins"),
    StatisticKind.GROUPED_CDF: ("column", "group_column", "groups", "other", "lower", "upper", "bins"),
    StatisticKind.COUNTS: ("column", "categories"),
    StatisticKind.HIERARCHY: ("levels", "records_estimate"),
}
_MAX_LEVELS = 4
#: what the officer must know of a kind before choosing it
_KIND_NOTES = {StatisticKind.HIERARCHY: "<br>Its categories are read from your data and <b>published</b> as they "
                                        "are: choose it only if the level columns' categories are public (e.g. "
                                        "an official list of regions)."}


def _number(raw: str) -> float | None:
    try:
        return float(raw.strip().replace(",", ""))
    except ValueError:
        return None


def _lines(raw: str) -> tuple[str, ...]:
    """One entry a line (or comma-separated on one line), blanks dropped, order kept."""
    lines = [line for line in raw.splitlines() if line.strip()]
    entries = lines[0].split(",") if len(lines) == 1 else lines
    return tuple(entry.strip() for entry in entries if entry.strip())


class PartEditor(QGroupBox):
    """The selected statistic's settings (module doc). :meth:`load` shows a choice; ``changed`` carries the
    edited one. ``protected()``: the paths the data is read from, which a public list may never be."""

    changed = Signal(object)  # the edited PartSpec

    def __init__(self, protected: Callable[[], list[str]], parent: QWidget | None = None) -> None:
        super().__init__("The selected statistic", parent)
        self.protected = protected  # the files the data is read from: never a public list
        self.choice: PartSpec | None = None
        self.form = QFormLayout()
        self.rows: dict[str, tuple[QWidget, QLabel]] = {}  # a setting → its field and its problem's label
        self.name = self._line("name", "&Title (optional):", "e.g. Flight distances",
                               "The statistic's title in the results and the PDF; empty: a title is made from "
                               "its column.")
        self.weight = self._line("weight", "&Weight:", "1", "How much this statistic's accuracy counts when the "
                                 "budget is split: 2 makes its error count twice as much as a statistic of weight 1.")
        self.lock = self._line("lock", "Fi&xed budget ε (optional):", "empty: the split decides",
                               "Give this statistic exactly this ε of the plan's budget; the rest is split among the "
                               "others. Leave empty to let the split decide.")
        self.column = self._combo("column", "&Column:", "The column this statistic is of.")
        self.group_column = self._combo("group_column", "&Group column:",
                                        "The column whose values name the groups (e.g. an airline).")
        self.groups = self._text("groups", "G&roups (public):", "One group per line, e.g.\nAA\nDL",
                                 "The public list of groups, one per line, written exactly as in the group column. "
                                 "Every one is published, absent ones included; never read from the data.")
        self.other = QComboBox()
        for token in OtherGroups:
            self.other.addItem(OTHER_LABELS[token], str(token))
        self.other.setToolTip("What becomes of a row whose group is not in the list: your choice, never the data's.")
        self.other.currentIndexChanged.connect(self._edited)
        self._add_row("other", "Rows of other group&s:", self.other)
        self.lower_bound = self._line("lower", "Lo&wer bound:", "e.g. 0", "The public lower bound of the number column "
                                "(values below it are counted in the first bin).")
        self.upper_bound = self._line("upper", "&Upper bound:", "e.g. 100", "The public upper bound (values at or above it "
                                "are counted in the last bin).")
        self.bins = QSpinBox()
        self.bins.setRange(2, MAX_BINS)
        self.bins.setToolTip("The number of equal-width bins between the bounds.")
        self.bins.valueChanged.connect(self._edited)
        self._add_row("bins", "&Bins:", self.bins)
        self.categories = self._text("categories", "C&ategories (public):", "One category per line, e.g.\nyes\nno",
                                     "The public list of categories, one per line, written exactly as in the column; "
                                     "never read from the data.")
        self.levels = [QComboBox() for _ in range(_MAX_LEVELS)]
        levels_box = QWidget()
        levels_layout = QVBoxLayout(levels_box)
        levels_layout.setContentsMargins(0, 0, 0, 0)
        for level in self.levels:
            level.setToolTip("The hierarchy's columns, the widest category first (e.g. region, then district); "
                             "2 to 4 columns.")
            level.currentIndexChanged.connect(self._edited)
            levels_layout.addWidget(level)
        self._add_row("levels", "&Level columns:", levels_box)
        self.records_estimate = self._line(
            "records_estimate", "Records (published estimate):", "needed when one person may be added or removed",
            "A public estimate of the number of records (e.g. last year's published total), at which the hierarchy's "
            "errors are projected; never read from the data. Needed under 'one person may be added or removed'.")
        self.kind_label = QLabel("")
        self.kind_label.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.kind_label)
        layout.addLayout(self.form)
        self.setEnabled(False)

    # ------------------------------------------------------------------ building
    def _add_row(self, key: str, label: str, field: QWidget) -> None:
        problem = inline_message(self)
        box = QWidget()
        box_layout = QVBoxLayout(box)
        box_layout.setContentsMargins(0, 0, 0, 0)
        box_layout.setSpacing(2)
        box_layout.addWidget(field)
        box_layout.addWidget(problem)
        self.form.addRow(label, box)
        label_widget = self.form.labelForField(box)
        if isinstance(label_widget, QLabel):
            label_widget.setBuddy(field)
        self.rows[key] = (box, problem)

    def _line(self, key: str, label: str, placeholder: str, tip: str) -> QLineEdit:
        edit = QLineEdit()
        edit.setPlaceholderText(placeholder)
        edit.setToolTip(tip)
        edit.textEdited.connect(self._edited)
        self._add_row(key, label, edit)
        return edit

    def _combo(self, key: str, label: str, tip: str) -> QComboBox:
        combo = QComboBox()
        combo.setToolTip(tip)
        combo.currentIndexChanged.connect(self._edited)
        self._add_row(key, label, combo)
        return combo

    def _text(self, key: str, label: str, placeholder: str, tip: str) -> QPlainTextEdit:
        """A public list typed one entry a line, with its Load List… button (a text file, never the data)."""
        edit = QPlainTextEdit()
        edit.setPlaceholderText(placeholder)
        edit.setToolTip(tip)
        edit.setMaximumHeight(90)
        edit.textChanged.connect(self._edited)  # not while a choice is loaded: its signals are blocked
        load = QPushButton("Load List…")
        load.setToolTip("Read the list from a text file (UTF-8, one entry a line): a public list, never the data "
                        "file itself.")
        load.clicked.connect(lambda: self._choose_list(key))
        row = QWidget()
        row_layout = QHBoxLayout(row)
        row_layout.setContentsMargins(0, 0, 0, 0)
        row_layout.addWidget(edit, 1)
        row_layout.addWidget(load, 0, Qt.AlignmentFlag.AlignTop)
        self._add_row(key, label, row)
        label_widget = self.form.labelForField(self.rows[key][0])
        if isinstance(label_widget, QLabel):
            label_widget.setBuddy(edit)
        return edit

    def _choose_list(self, key: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load a public list", "", "Text files (*.txt *.csv);;All files (*)")
        if path:
            self.load_list(key, Path(path))

    def load_list(self, key: str, path: Path) -> bool:
        """Put the public list in ``path`` into the field of ``key`` ("groups" or "categories"); the reason under
        the field if it cannot (the data file itself is refused: the list must be public)."""
        problem = self.rows[key][1]
        if path.resolve() in [Path(p).resolve() for p in self.protected()]:
            show_inline(problem, "This is the data file: the list must be a public list, never read from the data.")
            return False
        try:
            entries = read_public_list(path, key)
            check_public_list(entries, "group" if key == "groups" else "category")
        except DpguiError as err:
            show_inline(problem, friendly(err))
            return False
        (self.groups if key == "groups" else self.categories).setPlainText("\n".join(entries))
        return True

    # ------------------------------------------------------------------ showing a choice
    def load(self, choice: PartSpec | None, columns: Sequence[str]) -> None:
        """Show ``choice`` (None: none selected) with ``columns`` (the open data's) to choose from."""
        self.choice = choice
        self.setEnabled(choice is not None)
        widgets: list[QWidget] = [self.name, self.weight, self.lock, self.column, self.group_column, self.groups,
                                  self.other, self.lower_bound, self.upper_bound, self.bins, self.categories,
                                  self.records_estimate, *self.levels]
        for widget in widgets:
            widget.blockSignals(True)
        try:
            for combo in (self.column, self.group_column, *self.levels):
                combo.clear()
                combo.addItems(list(columns))
            for level in self.levels[2:]:
                level.insertItem(0, "(none)", "")
            if choice is None:
                self.kind_label.setText("Add a statistic, or choose one in the list, to edit it here.")
                return
            self.kind_label.setText(f"<b>{KIND_LABELS[choice.kind]}</b>" + _KIND_NOTES.get(choice.kind, ""))
            shown = _FIELDS[choice.kind]
            for key, (box, _) in self.rows.items():
                visible = key in ("name", "weight", "lock") or key in shown
                box.setVisible(visible)
                label = self.form.labelForField(box)
                if label is not None:
                    label.setVisible(visible)
            self._fill(choice)
        finally:
            for widget in widgets:
                widget.blockSignals(False)
        self.show_problems(part_problems(choice))

    def _fill(self, choice: PartSpec) -> None:
        get = choice.settings.get
        self.name.setText(str(get("name") or ""))
        self.weight.setText(_shown(get("weight", 1.0)))
        self.lock.setText("" if get("lock") is None else _shown(get("lock")))
        for combo, key in ((self.column, "column"), (self.group_column, "group_column")):
            combo.setCurrentIndex(combo.findText(str(get(key, ""))))
        self.groups.setPlainText("\n".join(get("groups", ())))
        self.other.setCurrentIndex(max(0, self.other.findData(str(get("other", OtherGroups.DROP)))))
        self.lower_bound.setText(_shown(get("lower")))
        self.upper_bound.setText(_shown(get("upper")))
        self.bins.setValue(int(get("bins", 32)))
        self.categories.setPlainText("\n".join(get("categories", ())))
        self.records_estimate.setText(_shown(get("records_estimate")))
        levels = tuple(get("levels", ()))
        for i, combo in enumerate(self.levels):
            combo.setCurrentIndex(combo.findText(levels[i]) if i < len(levels) else 0)

    def show_problems(self, problems: dict[str, str]) -> None:
        """Each problem under its field (the bounds' under the upper bound); the others cleared."""
        for key, (_, label) in self.rows.items():
            show_inline(label, problems.get("bounds" if key == "upper" else key, ""))

    # ------------------------------------------------------------------ editing
    def edited_choice(self) -> PartSpec | None:
        """The shown choice with the fields' values (None: none shown)."""
        if self.choice is None:
            return None
        kind, settings = self.choice.kind, dict(self.choice.settings)
        weight = _number(self.weight.text())
        lock_text = self.lock.text().strip()
        lock: Any = None if not lock_text else (_number(lock_text) if _number(lock_text) is not None else lock_text)
        settings.update(name=self.name.text().strip(), weight=weight, lock=lock)
        if kind is not StatisticKind.HIERARCHY:
            settings["column"] = self.column.currentText()
        if kind in _NUMBER_KINDS:
            settings.update(lower=_number(self.lower_bound.text()), upper=_number(self.upper_bound.text()),
                            bins=self.bins.value())
        if kind is StatisticKind.GROUPED_CDF:
            settings.update(group_column=self.group_column.currentText(), groups=_lines(self.groups.toPlainText()),
                            other=OtherGroups(self.other.currentData()))
        if kind is StatisticKind.COUNTS:
            settings["categories"] = _lines(self.categories.toPlainText())
        if kind is StatisticKind.HIERARCHY:
            settings["levels"] = tuple(combo.currentText() for combo in self.levels if combo.currentData() != "")
            estimate = self.records_estimate.text().strip()
            number = _number(estimate)
            settings["records_estimate"] = (None if not estimate else int(number) if number is not None
                                            and number.is_integer() else estimate)
        return PartSpec(kind, settings)

    def _edited(self, *_: object) -> None:
        choice = self.edited_choice()
        if choice is None:
            return
        self.choice = choice
        self.show_problems(part_problems(choice))
        self.changed.emit(choice)


def _shown(value: Any) -> str:
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)
