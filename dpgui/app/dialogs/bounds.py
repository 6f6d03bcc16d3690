"""The dialog that suggests a column's bounds from public sources only (a metadata file, a reference file
marked public, the column's type), opened from step 1. A reference file is compared with the confidential
column on a worker thread, to refuse one that is the data in another form; the values are never shown."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox, QDialog, QDialogButtonBox, QFileDialog, QHBoxLayout, QLabel, QPushButton, QRadioButton, QVBoxLayout,
    QWidget,
)

from dpgui.app import text
from dpgui.app.widgets.fields import inline_message, show_inline
from dpgui.app.workers import Worker, WorkerPool
from dpgui.data.file_types import TABLE_FILTER
from dpgui.data.public_bounds import (
    WHY_NOT_CONFIDENTIAL, BoundsSuggestion, find_schema_for, suggest_from_reference, suggest_from_schema,
    suggest_from_type,
)
from dpgui.data.table import ColumnInfo
from dpgui.errors import DpguiError, ParameterError
from dpgui.formatting import format_number


class BoundsDialog(QDialog):
    """Suggest bounds from public sources only: a metadata file or a reference file marked public."""

    def __init__(self, column: ColumnInfo, data_path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Public bounds for '{column.name}'")
        self.column = column
        self.data_path = data_path
        self.suggestion: BoundsSuggestion | None = None
        why = QLabel(WHY_NOT_CONFIDENTIAL)
        why.setWordWrap(True)
        self.schema_radio = QRadioButton("From a metadata (schema) file that describes the columns")
        self.reference_radio = QRadioButton("From a reference file that is already public")
        self.type_radio = QRadioButton("From the column's type only")
        self.schema_radio.setChecked(True)
        self.schema_path = find_schema_for(data_path)
        self.schema_label = text.plain_text(QLabel(str(self.schema_path) if self.schema_path else "no metadata file chosen"))
        schema_button = QPushButton("Choose metadata file…")
        schema_button.clicked.connect(self._choose_schema)
        self.reference_path: Path | None = None
        self.reference_label = text.plain_text(QLabel("no reference file chosen"))
        reference_button = QPushButton("Choose reference file…")
        reference_button.clicked.connect(self._choose_reference)
        self.public_confirm = QCheckBox("I confirm this reference file is public (for example, a published table)")
        self.result_label = text.plain_text(QLabel(""))  # the explanation may quote the column's name
        self.result_label.setWordWrap(True)
        self.message = inline_message(self)
        self._workers = WorkerPool()
        self.reference_worker: Worker | None = None  # reading a reference file (off the GUI thread)
        find = QPushButton("&Suggest")
        find.clicked.connect(self.compute)
        self.find_button = find
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Use these bounds")
        self.ok_button.setEnabled(False)
        layout = QVBoxLayout(self)
        layout.addWidget(why)
        for radio, extra in ((self.schema_radio, (self.schema_label, schema_button)),
                             (self.reference_radio, (self.reference_label, reference_button, self.public_confirm)),
                             (self.type_radio, ())):
            layout.addWidget(radio)
            for widget in extra:
                row = QHBoxLayout()
                row.addSpacing(24)
                row.addWidget(widget)
                layout.addLayout(row)
        layout.addWidget(find)
        layout.addWidget(self.result_label)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.resize(560, 420)

    def _choose_schema(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Metadata file", "", "JSON files (*.json)")
        if path:
            self.schema_path = Path(path)
            self.schema_label.setText(path)
            self.schema_radio.setChecked(True)

    def _choose_reference(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Public reference file", "", TABLE_FILTER)
        if path:
            self.reference_path = Path(path)
            self.reference_label.setText(path)
            self.reference_radio.setChecked(True)

    def compute(self) -> BoundsSuggestion | None:
        """The suggestion of the chosen source, shown in the dialog. A metadata file or the column's type
        is read at once; a reference file is read on a worker thread (it may be large, and to refuse a copy
        of the data the confidential column is read too): this returns None at once and the suggestion
        shows when the read is done (``reference_worker`` while it runs)."""
        show_inline(self.message, "")
        self.suggestion = None
        self.ok_button.setEnabled(False)
        try:
            if self.schema_radio.isChecked():
                if self.schema_path is None:
                    raise ParameterError("no metadata file is chosen", "choose one, or another source")
                suggestion = suggest_from_schema(self.schema_path, self.column.name)
            elif self.reference_radio.isChecked():
                if self.reference_path is None:
                    raise ParameterError("no reference file is chosen", "choose a public reference file")
                if not self.public_confirm.isChecked():
                    raise ParameterError("the reference file is not confirmed as public",
                                         "tick the box only if the file is already public")
                self._read_reference(self.reference_path)
                return None
            else:
                suggestion = suggest_from_type(self.column)
        except DpguiError as err:
            show_inline(self.message, text.friendly(err))
            return None
        return self._show(suggestion)

    def _read_reference(self, reference: Path) -> None:
        if self.reference_worker is not None:
            self.reference_worker.cancel()
        self.find_button.setEnabled(False)
        self.result_label.setText("Reading the reference file…")
        worker = Worker(suggest_from_reference, reference, self.column.name, confidential=self.data_path)
        worker.connect_to(self, finished=partial(self._reference_done, worker, message=""),
                          failed=partial(self._reference_done, worker, None),
                          cancelled=partial(self._reference_done, worker, None, ""))
        self.reference_worker = self._workers.start(worker)

    def _reference_done(self, worker: Worker, suggestion: BoundsSuggestion | None, message: str) -> None:
        """GUI thread: the reference read by ``worker`` ended (a suggestion, or a message); a superseded read is dropped."""
        if worker is not self.reference_worker:
            return
        self.reference_worker = None
        self.find_button.setEnabled(True)
        self.result_label.setText("")
        if message or suggestion is None:
            show_inline(self.message, message)
        else:
            self._show(suggestion)

    def _show(self, suggestion: BoundsSuggestion | None) -> BoundsSuggestion | None:
        if suggestion is None or suggestion.lower is None or suggestion.upper is None:
            show_inline(self.message, "This source gives no bounds for this column. Try another source, "
                                      "or type bounds you know from what the column means.")
            return None
        self.suggestion = suggestion
        self.result_label.setText(f"Suggested: from {format_number(suggestion.lower)} to "
                                  f"{format_number(suggestion.upper)}. {suggestion.explanation}")
        self.ok_button.setEnabled(True)
        return suggestion

    def reject(self) -> None:
        self._workers.cancel_all()
        super().reject()

    def _accept(self) -> None:
        if self.suggestion is not None:
            self.accept()
