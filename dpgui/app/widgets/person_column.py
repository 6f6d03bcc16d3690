"""The optional person-ID column of a privacy unit, as rows of a form (:class:`PersonColumnRow`): the one widget
of the window's modes that offer it (the one-page modes, the CDF's plan page). GUI thread only."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QSpinBox

from dpgui.app import text
from dpgui.core.privacy_unit import PrivacyUnit, privacy_unit_words
from dpgui.vocabulary import Neighbours

__all__ = ["PersonColumnRow"]


class PersonColumnRow:
    """The optional person-ID column of a privacy unit, as rows of a form: a choice ("None — records per person
    declared", then the data's columns) and the privacy unit in words below it (:func:`privacy_unit_words`).
    With a column chosen, the neighbour model is add/remove and cannot be changed (one person with at most L
    records added or removed; the number of rows kept is not public); with none, the model is free again and L is
    the officer's declaration. ``changed`` is called after every change. GUI thread only."""

    NONE = "None — records per person declared"

    def __init__(self, form: QFormLayout, neighbours: QComboBox, records: QSpinBox, changed: Callable[[], object]) -> None:
        self.neighbours = neighbours
        self.records = records
        self.changed = changed
        self.combo = QComboBox()
        self.combo.addItem(self.NONE, None)
        self.combo.setToolTip(text.PERSON_COLUMN_TOOLTIP)
        self.combo.currentIndexChanged.connect(self._update)
        form.addRow("Person-&ID column:", self.combo)
        self.note = text.plain_text(QLabel(""))
        self.note.setWordWrap(True)
        form.addRow("", self.note)
        records.valueChanged.connect(self._update_note)
        self._update_note()

    def set_columns(self, columns: Sequence[str]) -> None:
        """The data's columns to choose from (the chosen one kept when the data has it, else none)."""
        chosen = self.combo.currentData()
        self.combo.blockSignals(True)
        self.combo.clear()
        self.combo.addItem(self.NONE, None)
        for name in columns:
            self.combo.addItem(name, name)
        self.combo.setCurrentIndex(max(0, self.combo.findData(chosen)) if chosen is not None else 0)
        self.combo.blockSignals(False)
        self._update()

    def choose(self, column: str | None) -> None:
        """Choose ``column`` (a project's choice; None, or a column the data lacks: none)."""
        self.combo.setCurrentIndex(0 if column is None else max(0, self.combo.findData(column)))

    def column(self) -> str | None:
        data = self.combo.currentData()
        return data if isinstance(data, str) else None

    def unit(self) -> PrivacyUnit | None:
        column = self.column()
        return None if column is None else PrivacyUnit(column, self.records.value())

    def _update(self, *_: object) -> None:
        enforced = self.column() is not None
        if enforced:
            self.neighbours.setCurrentIndex(self.neighbours.findData(str(Neighbours.ADDREMOVE)))
        self.neighbours.setEnabled(not enforced)
        self._update_note()
        self.changed()

    def _update_note(self, *_: object) -> None:
        self.note.setText(privacy_unit_words(self.unit(), self.records.value()))
