"""The plan step's missing-value rule (docs/privacy-model.md "Missing values"): under “change one record” a
noised count of their own (the default) or a public value the officer chooses (imputed, OpenDP's
impute-constant); under “add or remove one record” missing rows are left out and nothing is asked.
The value is the officer's statement, never read from the data. Qt, GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QWidget

from dpgui.app import text
from dpgui.app.widgets.fields import ValidatedField, compact_combo, parse_number, set_buddy
from dpgui.core.missing import MISSING_BUCKET, MISSING_IMPUTE
from dpgui.errors import ParameterError
from dpgui.vocabulary import Neighbours


class MissingRuleControls:
    """The rule's list and value, added as rows of the privacy form; ``changed`` is called when the
    officer changes either (not when :meth:`set_impute` sets them)."""

    def __init__(self, form: QFormLayout, parent: QWidget, help_label: Callable[[str], QLabel],
                 changed: Callable[[], None]) -> None:
        self._neighbours = "change"
        self.combo = QComboBox(parent)
        for key, label in text.MISSING_RULE_LABELS.items():
            self.combo.addItem(label, key)
        self.combo.setToolTip(text.MISSING_RULE_TOOLTIP)
        compact_combo(self.combo)
        self.value = ValidatedField(lambda raw: parse_number(raw, "the value missing values count as", "0"), "e.g. 0",
                                    "The value a missing value is counted as, in the column's units.")
        self.value.edit.setAccessibleName("Value missing values are counted as")
        self.value.set_text("0")
        self.row = self.combo
        self.label = QLabel("&Missing values:")
        form.addRow(self.label, self.combo)
        set_buddy(form, self.combo, self.combo)
        self.value_label = QLabel("Value they co&unt as:")
        form.addRow(self.value_label, self.value)
        set_buddy(form, self.value, self.value.edit)
        self.help = help_label(text.MISSING_RULE_HELP["bucket"])
        form.addRow(self.help)
        self._changed = changed
        self.combo.currentIndexChanged.connect(self._on_combo)
        self.value.edited.connect(changed)
        self._show()

    def set_neighbours(self, neighbours: str) -> None:
        """Under add/remove nothing is asked: missing rows are left out."""
        self._neighbours = neighbours
        self._show()

    def impute(self) -> float | None:
        """The value missing values are counted as (None: the neighbour model's own rule); ParameterError
        while the value chosen is not a number."""
        if self._neighbours != Neighbours.CHANGE or self.combo.currentData() != MISSING_IMPUTE:
            return None
        value = self.value.value()
        if value is None:
            raise ParameterError("the value missing values are counted as is not a number",
                                 "type a number in the column's units, e.g. 0")
        return float(value)

    def set_impute(self, value: float | None) -> None:
        """Show a saved rule (None: the default) without signals."""
        for widget in (self.combo, self.value):
            widget.blockSignals(True)
        self.combo.setCurrentIndex(self.combo.findData(MISSING_BUCKET if value is None else MISSING_IMPUTE))
        if value is not None:
            self.value.set_text(f"{value:.10g}")
        for widget in (self.combo, self.value):
            widget.blockSignals(False)
        self._show()

    def _on_combo(self) -> None:
        self._show()
        self._changed()

    def _show(self) -> None:
        change = self._neighbours == Neighbours.CHANGE
        imputed = change and self.combo.currentData() == MISSING_IMPUTE
        for widget, shown in ((self.label, change), (self.combo, change), (self.value_label, imputed),
                              (self.value, imputed)):
            widget.setVisible(shown)
        key = str(self.combo.currentData()) if change else "addremove"
        self.help.setText(text.MISSING_RULE_HELP[key])
