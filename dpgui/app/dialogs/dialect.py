"""The dialog that changes how a CSV file is read (the field separator and the decimal mark), opened from
step 1's "Change…". It only chooses: the file is read again by the window (GUI thread only)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from dpgui.app import text
from dpgui.app.widgets.fields import inline_message, show_inline
from dpgui.data.file_types import CSV_DECIMALS, CSV_DELIMITERS, CsvDialect
from dpgui.errors import DpguiError


class DialectDialog(QDialog):
    """Change how a CSV file is read: the field separator and the decimal mark."""

    def __init__(self, dialect: CsvDialect, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("How the file is written")
        self.separator = QComboBox()
        for mark, name in CSV_DELIMITERS.items():
            self.separator.addItem(name, mark)
        self.decimal = QComboBox()
        for mark, name in CSV_DECIMALS.items():
            self.decimal.addItem(f"{name} (1{mark}5 = one and a half)", mark)
        self.separator.setCurrentIndex(max(0, self.separator.findData(dialect.delimiter)))
        self.decimal.setCurrentIndex(max(0, self.decimal.findData(dialect.decimal)))
        note = QLabel("Choose how the values are separated and how decimals are written in this file; dpgui reads "
                      "it again with your choice. Files with decimal commas usually separate fields with semicolons.")
        note.setWordWrap(True)
        self.message = inline_message(self)
        form = QFormLayout()
        form.addRow("Field &separator:", self.separator)
        form.addRow("&Decimal mark:", self.decimal)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Read the file again")
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.dialect: CsvDialect | None = None

    def chosen(self) -> CsvDialect | None:
        """The dialect chosen, or None with the problem shown (a comma for both)."""
        try:
            return CsvDialect.checked(self.separator.currentData(), self.decimal.currentData())
        except DpguiError as err:
            show_inline(self.message, text.friendly(err))
            return None

    def _accept(self) -> None:
        self.dialect = self.chosen()
        if self.dialect is not None:
            self.accept()
