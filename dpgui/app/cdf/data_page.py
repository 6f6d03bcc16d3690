"""Step 1 — the data: a lazy preview of the file, the column list, public bounds, bins and what
happens to missing values (not a choice: the neighbour model's rule). Nothing here reads the
confidential values except the preview grid, which only the officer sees, and the bounds dialog's
check (:mod:`dpgui.app.dialogs.bounds`) that a reference file ticked as public is not the data in another
form (the values are compared on a worker thread, never shown)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QCheckBox, QDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem,
    QPushButton, QSplitter, QTableView, QVBoxLayout, QWidget,
)

from dpgui.app import text
from dpgui.app.binding import WorkspaceBinding
from dpgui.app.dialogs.bounds import BoundsDialog
from dpgui.app.dialogs.dialect import DialectDialog
from dpgui.app.widgets.fields import ValidatedField, inline_message, parse_number, set_buddy, show_inline
from dpgui.app.widgets.preview import KIND_LABELS, FrameRows, PreviewModel, RowReader
from dpgui.core.quantiles import WholeNumbers
from dpgui.core.tree import check_bins
from dpgui.data.csv_dialect import default_dialect
from dpgui.data.file_types import CSV_DECIMALS, CSV_DELIMITERS, CsvDialect
from dpgui.data.binning import check_bounds
from dpgui.data.public_bounds import (
    WHY_WHOLE_NUMBER_BINS, BoundsSuggestion, find_schema_for, suggest_from_schema, suggest_from_type, whole_number_bins,
    whole_number_reason,
)
from dpgui.data.source_spec import SourceSpec
from dpgui.data.table import ColumnInfo, TableInfo
from dpgui.errors import DpguiError
from dpgui.formatting import format_number
from dpgui.report.ledger import default_dataset_name
from dpgui.vocabulary import SourceKind
from dpgui.workspace.state import ColumnChoice, ColumnSettings, SourceChoice

if TYPE_CHECKING:
    from dpgui.app.dialogs.database import OpenedSource

DIALECT_TOOLTIP = ("How dpgui reads this CSV file: the character between values and the decimal mark. "
                   "If the numbers in the preview look wrong, press Change….")
DIALECT_CONFIRM_MESSAGE = ("dpgui suggests this separator and decimal mark from the first lines of the file. Check the "
                           "preview, then press Confirm (or Change…): a release reads a file only as you state it, "
                           "or with the default for its name (comma, decimal point; tab for .tsv), never as the "
                           "data suggest.")


def dialect_words(dialect: CsvDialect, how: str) -> str:
    """"Separator: semicolon · Decimal mark: comma (chosen by you)"; ``how``: where it comes from."""
    return (f"Separator: {CSV_DELIMITERS[dialect.delimiter]} · Decimal mark: {CSV_DECIMALS[dialect.decimal]} "
            f"({how})")


class DataPage(QWidget):
    """Preview, column choice, bounds, bins, and what happens to missing values.

    Writes step 1 into the workspace (``source``, ``column``, ``dataset``) whenever it changes: as
    the officer edits, and when the window gives it a table (:meth:`set_table`, :meth:`set_row_count`)
    or a project sets it (:meth:`apply_workspace`, :meth:`set_dataset_name`). It reads only its own
    widgets."""

    columnChosen = Signal(str)
    dialectChosen = Signal(object)  # a CsvDialect: read the open CSV file again with it
    connectRequested = Signal()  # "Connect to a database…"

    def __init__(self, binding: WorkspaceBinding, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._workspace = binding.workspace
        self.info: TableInfo | None = None
        self.reader: RowReader | None = None
        self.model: PreviewModel | None = None
        self.spec: SourceSpec | None = None  # where the open data lives
        self.dialect: CsvDialect | None = None  # the open CSV file's dialect as read (None: not a CSV)
        self.dialect_dialog: DialectDialog | None = None

        self._build_source_controls()

        self.file_label = QLabel("No file open.")
        self.file_label.setWordWrap(True)
        self.file_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.file_warning = inline_message(self)

        self.columns = QListWidget()
        self.columns.setAccessibleName("Columns")
        self.columns.currentItemChanged.connect(self._on_column)
        self.column_message = inline_message(self)

        self.preview = QTableView()
        self.preview.setAccessibleName("Preview of the first rows")
        self.preview.setToolTip("The first rows of the file, for your checking. More rows load as you scroll.")
        self.preview.setAlternatingRowColors(True)
        self.preview.verticalHeader().setDefaultSectionSize(22)

        self._build_bounds_fields()

        # No choice here: the rule follows the neighbour model (docs/privacy-model.md "Missing values").
        missing_box = QGroupBox("Missing values")
        missing_layout = QVBoxLayout(missing_box)
        self.missing_note = QLabel(text.MISSING_HELP)
        self.missing_note.setWordWrap(True)
        missing_layout.addWidget(self.missing_note)

        self.dataset_name = QLineEdit()
        self.dataset_name.setMaxLength(200)
        self.dataset_name.setMinimumWidth(180)
        self.dataset_name.setToolTip(text.DATASET_HELP + " " + text.DATASET_TOOLTIP)
        self.dataset_name.setPlaceholderText("e.g. flights-2013")
        self.dataset_name.textChanged.connect(lambda name: self._workspace.update(dataset=name))

        form_box = self._build_form_box()
        self._lay_out(form_box, missing_box)

    def _build_source_controls(self) -> None:
        """Where the data lives and how a CSV file is read: the engine, the dialect (Confirm, Change…), Connect."""
        self.engine_label = QLabel("")
        self.engine_label.setToolTip("Who reads the confidential rows and counts them. A database or Spark counts "
                                     "the rows where they are and sends back only the bin counts.")
        self.dialect_label = QLabel("")
        self.dialect_label.setToolTip(DIALECT_TOOLTIP)
        self.dialect_button = QPushButton("Change…")
        self.dialect_button.setToolTip("Choose the field separator and the decimal mark, and read the file again.")
        self.dialect_button.clicked.connect(self.open_dialect_dialog)
        self.dialect_confirm = QPushButton("Confirm")
        self.dialect_confirm.setToolTip("Read and release the file with this separator and decimal mark (recorded "
                                        "in the report as stated by you).")
        self.dialect_confirm.clicked.connect(self.confirm_dialect)
        self.dialect_confirm.setVisible(False)
        self.dialect_message = inline_message(self)
        self.connect_button = QPushButton("Connect to a &database…")
        self.connect_button.setToolTip("Read a table or a query of a database (PostgreSQL, SQLite, …) instead of a file.")
        self.connect_button.clicked.connect(self.connectRequested)
        for widget in (self.dialect_label, self.dialect_button):
            widget.setVisible(False)

    def _build_bounds_fields(self) -> None:
        """The public bounds, K and the whole-number statement, with the public suggestions."""
        # (lower_field, not lower: that would hide QWidget.lower())
        self.lower_field = ValidatedField(lambda t: parse_number(t, "lower bound", "0"), "e.g. 0", text.BOUNDS_HELP)
        self.upper_field = ValidatedField(lambda t: parse_number(t, "upper bound", "5000"), "e.g. 5000", text.BOUNDS_HELP)
        self.bins = ValidatedField(self._parse_bins, "e.g. 1000",
                                   "Number of equal-width bins K between the bounds. The CDF is published at every bin edge.")
        self.bin_width = QLabel("")
        self.bounds_note = text.plain_text(QLabel(text.BOUNDS_HELP))  # explanations may quote the column's name
        self.bounds_note.setWordWrap(True)
        self.bounds_message = inline_message(self)
        self.suggest_button = QPushButton("Suggest bounds from &public information…")
        self.suggest_button.setEnabled(False)
        self.suggest_button.clicked.connect(self.open_bounds_dialog)
        # Offered when public type information says the column holds whole numbers (docs/engine.md,
        # "Quantile intervals"): bounds a−0.5 … b+0.5, one bin per whole number or whole-number step.
        self.whole_button = QPushButton("Centre bins on &whole numbers")
        self.whole_button.setToolTip(WHY_WHOLE_NUMBER_BINS)
        self.whole_button.clicked.connect(self.apply_whole_number_bins)
        self.whole_note = QLabel("")
        self.whole_note.setWordWrap(True)
        self.whole_button.setVisible(False)
        self.whole_note.setVisible(False)
        self._type_whole_reason: str | None = None  # public type information: the column holds whole numbers
        # The officer's statement (public: from what the column means, never from its cells).
        self.whole_check = QCheckBox("Values &are whole numbers")
        self.whole_check.setToolTip(text.WHOLE_NUMBERS_TOOLTIP)
        self.whole_check.toggled.connect(self._on_settings_edited)
        for field in (self.lower_field, self.upper_field, self.bins):
            field.edited.connect(self._on_settings_edited)
        for field in (self.lower_field, self.upper_field):  # typed bounds no longer come from the suggestion
            field.edited.connect(lambda: self.bounds_note.setText(text.BOUNDS_HELP))

    def _build_form_box(self) -> QGroupBox:
        """The column's bounds, bins and whole numbers, as one form."""
        form_box = QGroupBox("Column, bounds and bins")
        form = QFormLayout(form_box)
        form.addRow(self.column_message)
        form.addRow("&Lower bound:", self.lower_field)
        form.addRow("&Upper bound:", self.upper_field)
        form.addRow(self.bounds_message)
        form.addRow("Number of &bins (K):", self.bins)
        form.addRow("Bin width:", self.bin_width)
        form.addRow(self.bounds_note)
        public_row = QHBoxLayout()  # one row: the window's least height stays what it was
        public_row.addWidget(self.suggest_button, 1)
        public_row.addWidget(self.whole_check)
        form.addRow(public_row)
        form.addRow(self.whole_note)
        form.addRow(self.whole_button)
        set_buddy(form, self.lower_field, self.lower_field.edit)
        set_buddy(form, self.upper_field, self.upper_field.edit)
        set_buddy(form, self.bins, self.bins.edit)
        return form_box

    def _lay_out(self, form_box: QGroupBox, missing_box: QGroupBox) -> None:
        """The file and dataset name on top, then the columns and the form beside the preview."""
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        columns_label = QLabel("&Columns (pick a number column):")
        columns_label.setBuddy(self.columns)
        left_layout.addWidget(columns_label)
        left_layout.addWidget(self.columns, 1)
        left_layout.addWidget(form_box)
        left_layout.addWidget(missing_box)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(self.preview)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([360, 640])

        top = QHBoxLayout()
        top.addWidget(self.file_label, 1)
        dataset_label = QLabel("&Dataset name in the budget ledger:")
        dataset_label.setBuddy(self.dataset_name)
        dataset_label.setToolTip(self.dataset_name.toolTip())
        top.addWidget(dataset_label)
        top.addWidget(self.dataset_name)
        source_bar = QHBoxLayout()
        source_bar.addWidget(self.engine_label)
        source_bar.addSpacing(18)
        source_bar.addWidget(self.dialect_label)
        source_bar.addWidget(self.dialect_confirm)
        source_bar.addWidget(self.dialect_button)
        source_bar.addStretch(1)
        source_bar.addWidget(self.connect_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(source_bar)
        layout.addWidget(self.dialect_message)
        self.dataset_message = inline_message(self)
        layout.addWidget(self.dataset_message)
        layout.addWidget(self.file_warning)
        layout.addWidget(splitter, 1)

    # ---------------------------------------------------------------- table
    def set_table(self, info: TableInfo, reader: RowReader, spec: SourceSpec | None = None,
                  engine: str = "this computer") -> None:
        """Show a newly opened table (a file's, or a database's with ``spec``); forget the previous
        column choice."""
        if self.reader is not None and self.reader is not reader:
            self.reader.close()
        self.info, self.reader = info, reader
        self.spec = spec if spec is not None else SourceSpec(SourceKind.FILE, str(info.path))
        self._show_source(info, engine)
        self.preview.setToolTip("The first rows of the file, for your checking. More rows load as you scroll."
                                if self.spec.kind == SourceKind.FILE else
                                "The first 100 rows of the table or query, for your checking (only you see them).")
        self.dataset_name.blockSignals(True)  # written below, with the rest of the new table's step 1
        self.dataset_name.setText(default_dataset_name(info.path) if self.spec.kind == SourceKind.FILE
                                  else (self.spec.table or "query").replace(".", "-"))
        self.dataset_name.blockSignals(False)
        self.model = PreviewModel(reader, self)
        self.model.readError.connect(lambda message: show_inline(self.file_warning, message))
        self.preview.setModel(self.model)
        show_inline(self.file_warning, "")
        self.columns.clear()
        first_numeric = None
        for column in info.columns:
            item = QListWidgetItem(f"{column.name}   ({KIND_LABELS.get(column.kind, 'other')})")
            item.setData(Qt.ItemDataRole.UserRole, column)
            if column.kind != "numeric":
                item.setForeground(QBrush(QColor("#888888")))
                item.setToolTip(text.literal_tooltip(
                    f"'{column.name}' is {KIND_LABELS.get(column.kind, 'other')}: a CDF needs a number column."))
            else:
                item.setToolTip(text.literal_tooltip(f"'{column.name}' ({column.dtype})"))
                first_numeric = first_numeric or item
            self.columns.addItem(item)
        self._show_row_count(info.n_rows)
        for field in (self.lower_field, self.upper_field):
            field.set_text("")
            field.clear_error()
        if not self.bins.text():
            self.bins.set_text("1000")
        self.bins.clear_error()
        show_inline(self.column_message, "")
        self._workspace.update(source=self._data_source(info.n_rows, engine), column=self._column_choice(),
                               dataset=self.dataset_name.text())

    def set_opened(self, opened: OpenedSource) -> None:
        """Show a database or Spark source (:func:`~dpgui.app.dialogs.database.open_and_look`'s result)."""
        info = opened.table_info()
        self.set_table(info, FrameRows(info, opened.preview), opened.spec, opened.engine)

    def _data_source(self, n_rows: int | None, engine: str) -> SourceChoice:
        assert self.info is not None
        spec = None if self.spec is None or (self.spec.kind == SourceKind.FILE and self.spec.dialect is None
                                             and self.spec.encoding is None) else self.spec
        return SourceChoice(self.info, n_rows, spec, engine)

    def _show_source(self, info: TableInfo, engine: str) -> None:
        """"Counted by: …" and, for a CSV/TSV file, how it is read: "chosen by you" (stated: confirmed or
        changed), "the default for its name", or "suggested by its first lines" — then Confirm is shown
        and a release waits for it (:attr:`~dpgui.workspace.state.SourceChoice.unconfirmed_dialect`)."""
        self.engine_label.setText(f"Counted by: <b>{text.escape(engine)}</b>")
        spec = self.spec
        dialect: CsvDialect | None = None
        how, suggested = "", False
        if spec is not None and spec.kind == SourceKind.FILE and info.format in ("csv", "tsv"):
            default = default_dialect(info.path.name)
            if spec.dialect is not None:
                dialect, how = spec.dialect, "chosen by you"
            else:
                dialect = info.dialect or default
                suggested = dialect != default
                how = "suggested by its first lines: confirm it" if suggested else "the default for its name"
                detection = info.dialect_detection
                self.dialect_label.setToolTip(
                    (detection.reason + " " if detection is not None else "") + DIALECT_TOOLTIP)
        self.dialect = dialect
        for widget in (self.dialect_label, self.dialect_button):
            widget.setVisible(dialect is not None)
        self.dialect_confirm.setVisible(suggested)
        show_inline(self.dialect_message, DIALECT_CONFIRM_MESSAGE if suggested else "")
        self.dialect_label.setText("" if dialect is None else dialect_words(dialect, how))

    def confirm_dialect(self) -> None:
        """Confirm: the dialect the first lines suggest becomes the officer's statement (the file is read
        again with it; a release records it as stated)."""
        if self.dialect is not None:
            self.dialectChosen.emit(self.dialect)

    def open_dialect_dialog(self) -> None:
        """Change…: choose the separator and decimal mark; the window reads the file again with them."""
        if self.dialect is None:
            return
        dialog = DialectDialog(self.dialect, self)
        self.dialect_dialog = dialog
        dialog.accepted.connect(lambda: self.dialectChosen.emit(dialog.dialect) if dialog.dialect else None)
        dialog.open()

    def set_row_count(self, n_rows: int | None) -> None:
        """The open table's rows, counted (``None``: still counting)."""
        if self.info is None:
            return
        self._show_row_count(n_rows)
        current = self._workspace.state.source
        self._workspace.update(source=self._data_source(n_rows, current.engine if current else "this computer"))

    def set_dataset_name(self, name: str) -> None:
        """The dataset's name in the budget ledger, as if typed (from a project, or a name chosen instead)."""
        self.dataset_name.setText(name)

    def _show_row_count(self, n_rows: int | None) -> None:
        if self.info is None:
            return
        info = self.info
        rows = "counting rows…" if n_rows is None else f"{n_rows:,} row{'s' if n_rows != 1 else ''}"
        columns = f"{len(info.columns)} column{'s' if len(info.columns) != 1 else ''}"
        if self.spec is not None and self.spec.kind != SourceKind.FILE:
            self.file_label.setText(f"<b>{text.escape(self.spec.display_name())}</b> — {rows} · {columns}")
            return
        size = (f"{info.size_bytes / 1e6:,.1f} MB" if info.size_bytes >= 100_000
                else f"{max(1, round(info.size_bytes / 1e3)):,} KB")  # never "0.0 MB"
        self.file_label.setText(f"<b>{text.escape(info.path.name)}</b> — {rows} · {columns} · "
                                f"{size} · {text.escape(info.path.parent)}")
        if n_rows is not None and 0 < n_rows < 20:
            show_inline(self.file_warning, f"This file has only {n_rows} row{'s' if n_rows != 1 else ''}. "
                        "A private CDF of so few records will be mostly noise; it is allowed, but check "
                        "that this is the right file.")

    def select_column(self, name: str) -> bool:
        for row in range(self.columns.count()):
            item = self.columns.item(row)
            if item.data(Qt.ItemDataRole.UserRole).name == name:
                self.columns.setCurrentItem(item)
                return True
        return False

    def current_column(self) -> ColumnInfo | None:
        item = self.columns.currentItem()
        if item is None:
            return None
        column: ColumnInfo = item.data(Qt.ItemDataRole.UserRole)  # each item holds its ColumnInfo
        return column

    def _on_column(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None = None) -> None:
        column = None if item is None else item.data(Qt.ItemDataRole.UserRole)
        self.suggest_button.setEnabled(column is not None and column.kind == "numeric")
        if column is None:
            return
        if column.kind != "numeric":
            show_inline(self.column_message, f"'{column.name}' is a {KIND_LABELS.get(column.kind, 'other')} column. "
                        "A CDF needs numbers: pick a column marked (number).")
            self._publish()
            return
        show_inline(self.column_message, "")
        self._type_whole_reason = None
        schema = None
        if self.info is not None and (self.spec is None or self.spec.kind == SourceKind.FILE):
            schema = find_schema_for(self.info.path)  # looked for once per column choice
            self._type_whole_reason = whole_number_reason(column, self.info.format, schema)
        self._show_whole_statement(False)
        self._apply_automatic_suggestion(column, schema)
        self.columnChosen.emit(column.name)
        self._publish()

    def _apply_automatic_suggestion(self, column: ColumnInfo, schema: Path | None) -> None:
        """Public metadata next to the file (``schema``, from :func:`find_schema_for`) or the column
        type may give bounds; never the data."""
        suggestion: BoundsSuggestion | None = None
        if schema is not None:
            try:
                suggestion = suggest_from_schema(schema, column.name)
            except DpguiError:
                suggestion = None
        if suggestion is None:
            suggestion = suggest_from_type(column)
        if suggestion is not None and suggestion.lower is not None and suggestion.upper is not None:
            self.apply_suggestion(suggestion)
        else:
            self.lower_field.set_text("")
            self.upper_field.set_text("")
            self.bounds_note.setText("Type the bounds from public knowledge of what the column means. "
                                     + text.BOUNDS_HELP.split(". ", 1)[1])
        self._update_bin_width()

    def apply_suggestion(self, suggestion: BoundsSuggestion) -> None:
        assert suggestion.lower is not None and suggestion.upper is not None
        self.lower_field.set_text(format_number(suggestion.lower))
        self.upper_field.set_text(format_number(suggestion.upper))
        self.bounds_note.setText(suggestion.explanation)
        self._on_settings_edited()

    def open_bounds_dialog(self) -> None:
        column = self.current_column()
        if column is None or self.info is None:
            return
        dialog = BoundsDialog(column, self.info.path, self)
        if dialog.exec() == QDialog.DialogCode.Accepted and dialog.suggestion is not None:
            self.apply_suggestion(dialog.suggestion)

    # ---------------------------------------------------------------- settings
    @staticmethod
    def _parse_bins(raw: str) -> int:
        value = parse_number(raw, "number of bins", "1000", integer=True)
        return check_bins(value)

    def _on_settings_edited(self, *_: Any) -> None:
        self._update_bin_width()
        self._publish()

    def _column_choice(self) -> ColumnChoice:
        """The column, bounds and K as typed (checked: a field that does not parse shows why), and whether
        it holds whole numbers (its type, or the officer's statement)."""
        column = self.current_column()
        lower, upper = self.lower_field.value(), self.upper_field.value()
        return ColumnChoice(column.name if column is not None else "", None if lower is None else float(lower),
                            None if upper is None else float(upper), self.bins.value(), self.whole_numbers())

    def whole_numbers(self) -> WholeNumbers | None:
        """Why the column is known to hold whole numbers: its declared type, else the officer's tick; None."""
        if self._type_whole_reason is not None:
            return WholeNumbers.TYPE
        return WholeNumbers.STATED if self.whole_check.isChecked() else None

    @property
    def _whole_reason(self) -> str | None:
        """The sentence that says why the column holds whole numbers (None: not known)."""
        if self._type_whole_reason is not None:
            return self._type_whole_reason
        column = self.current_column()
        if self.whole_check.isChecked() and column is not None:
            return f"You stated that '{column.name}' holds whole numbers."
        return None

    def _show_whole_statement(self, stated: bool) -> None:
        """The checkbox for a new column: ticked and fixed when the type says so, else ``stated``."""
        self.whole_check.blockSignals(True)
        by_type = self._type_whole_reason is not None
        self.whole_check.setChecked(by_type or stated)
        self.whole_check.setEnabled(not by_type)
        self.whole_check.setToolTip(text.WHOLE_NUMBERS_BY_TYPE.format(reason=self._type_whole_reason) if by_type
                                    else text.WHOLE_NUMBERS_TOOLTIP)
        self.whole_check.blockSignals(False)

    def _publish(self) -> None:
        self._workspace.update(column=self._column_choice())

    def whole_number_offer(self) -> tuple[float, float, int, int] | None:
        """(lower, upper, K, step) of bins centred on whole numbers for the current bounds and K,
        if the column is whole-numbered by public type information and they differ from the current ones."""
        lower, upper, bins = self.lower_field.value(), self.upper_field.value(), self.bins.value()
        if self._whole_reason is None or lower is None or upper is None or bins is None:
            return None
        try:
            lower, upper = check_bounds(lower, upper)
            offer = whole_number_bins(lower, upper, int(bins))
        except DpguiError:
            return None
        return None if offer[:3] == (lower, upper, bins) else offer

    def apply_whole_number_bins(self) -> None:
        offer = self.whole_number_offer()
        if offer is None:
            return
        lower, upper, bins, _step = offer
        self.lower_field.set_text(format_number(lower))
        self.upper_field.set_text(format_number(upper))
        self.bins.set_text(str(bins))
        self._on_settings_edited()

    def _update_whole_number_offer(self) -> None:
        offer = self.whole_number_offer()
        self.whole_button.setVisible(offer is not None)
        self.whole_note.setVisible(offer is not None)
        if offer is not None:
            lower, upper, bins, step = offer
            per = "one bin per whole number" if step == 1 else f"one bin per {step} whole numbers"
            why = WHY_WHOLE_NUMBER_BINS if step == 1 else (
                f"With bins centred on whole numbers no value lies on a bin edge, each bin holds {step} whole numbers "
                "and quantiles are whole numbers; a bin per whole number (a bin width of 1) pins each value down.")
            self.whole_note.setText(f"{self._whole_reason} Offer: bounds {format_number(lower)} to "
                                    f"{format_number(upper)}, K = {bins:,} ({per}). {why}")

    def _update_bin_width(self) -> None:
        self._update_whole_number_offer()
        lower, upper, bins = self.lower_field.value(), self.upper_field.value(), self.bins.value()
        show_inline(self.bounds_message, "")
        if None in (lower, upper):
            self.bin_width.setText("")
            return
        try:
            lower, upper = check_bounds(lower, upper)
        except DpguiError as err:
            show_inline(self.bounds_message, text.friendly(err))
            self.bin_width.setText("")
            return
        if bins is None:
            self.bin_width.setText("")
            return
        self.bin_width.setText(f"{format_number((upper - lower) / bins)} (column units) — "
                               f"{bins:,} bins from {format_number(lower)} to {format_number(upper)}")

    def settings(self) -> ColumnSettings | None:
        """Step 1 validated (the workspace's :meth:`~dpgui.workspace.state.WorkspaceState.column_settings`),
        or None with every problem shown next to its field."""
        if self.info is None:
            return None
        column = self.current_column()
        if column is None:
            show_inline(self.column_message, "Pick a column in the list above.")
        lower, upper, bins = self.lower_field.value(), self.upper_field.value(), self.bins.value()
        if None not in (lower, upper, bins):
            try:
                check_bounds(lower, upper)
            except DpguiError as err:
                show_inline(self.bounds_message, text.friendly(err))
        show_inline(self.dataset_message, "" if self.dataset_name.text().strip() else
                    "Give the dataset a name in the budget ledger (top right): the same name for every file "
                    "about these people, so that they share one budget.")
        return self._workspace.state.column_settings()

    # ---------------------------------------------------------------- project files (dpgui/app/shell/project.py)
    def apply_workspace(self, column: str, lower: float | None, upper: float | None, bins: int | None,
                        missing: str | None, whole_numbers: WholeNumbers | None = None) -> bool:
        """Choose ``column`` and set the bounds and bins (from a project file; ``missing``, a policy of
        older versions, is ignored: the rule follows the neighbour model), and the officer's statement that
        the values are whole numbers (``whole_numbers`` "stated"; the type's is read from the file again).
        False if the open file has no such column (the other settings are still applied)."""
        found = bool(column) and self.select_column(column)
        self._show_whole_statement(whole_numbers == WholeNumbers.STATED)

        def number_text(value: float | None) -> str:
            if value is None:
                return ""
            shown = format_number(value)
            return shown if float(shown.replace(",", "")) == value else repr(float(value))

        for field, value in ((self.lower_field, lower), (self.upper_field, upper)):
            field.set_text(number_text(value))
            if value is None:
                field.clear_error()
        self.bounds_note.setText(text.BOUNDS_HELP)
        self.bins.set_text("" if bins is None else str(bins))
        self._on_settings_edited()
        return found
