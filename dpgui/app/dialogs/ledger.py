"""The privacy budget ledger, for the privacy officer: what was spent on each dataset, and its budget.

One row per dataset with a bar of the budget used ("ε 0.75 of 2 spent, 1.25 left"); selecting a
dataset shows its releases and the history of its budget. The only changes possible here are
adding a dataset and setting a dataset's budget (every change is logged with its reason); nothing
in this window can delete or alter a recorded release — the ledger itself refuses it.

Testable without modal windows: ``refresh()``, ``add_dataset(...)``, ``set_cap_for(...)``,
``dataset_rows()``, ``release_rows()``, ``cap_history_rows()``, ``last_error`` / ``last_message``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QMessageBox,
    QProgressBar, QPushButton, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget,
)

from dpgui.app.text import friendly, plain_text
from dpgui.app.widgets.fields import (
    StatusLine, StatusMessages, ValidatedField, grow_to_fit, inline_message, parse_number, show_inline,
)
from dpgui.app.widgets.style import is_dark
from dpgui.core.accounting import Accounting
from dpgui.errors import DpguiError, ParameterError
from dpgui.formatting import format_budget, format_delta, format_number, format_significant
from dpgui.report.ledger import CapChange, Ledger, ReleaseEntry, Totals

LEDGER_HELP = (
    "Every release spends part of a dataset's privacy budget (ε, and δ for releases with Gaussian noise). The "
    "ledger records each release and stops one that would go over the budget. Entries are never deleted."
)
RAISE_WARNING = "Raising a budget lets more be published about the same people."
RAISE_REASON_NEEDED = "Give a reason for raising the budget (for example who approved it); it is kept in the ledger."
EPSILON_TIP = ("The total ε that all releases of this dataset may spend together. Typical budgets: 1 (strict) "
               "to 10 (loose).")
DELTA_TIP = ("0 allows only releases with Laplace noise (pure ε-differential privacy). Releases with Gaussian "
             "noise need δ > 0, e.g. 1e-6 or 1e-9: the small chance, for all releases of this dataset together, "
             "allowed beyond the ε guarantee.")
REASON_TIP = "Why the budget is set or changed, e.g. “approved by the data board on 2026-11-01”."
DATASET_TIP = "The name used for this data set in every release, e.g. payroll-2024. It cannot be changed later."
DATASET_COLUMNS = ("Dataset", "Budget used (ε)", "δ", "Counted by", "Releases")
DATASET_TIPS = (
    "The dataset's name in the ledger.",
    "How much of the dataset's total ε budget its releases have spent.",
    "δ spent and left of the δ budget (— when the budget has no δ and no release used one). When the releases are "
    "counted by zCDP, the whole budget is stated at the budget's δ and what is left is counted in ρ.",
    "How the releases' budgets add up: the plain sum of ε (and δ), or zero-concentrated differential privacy "
    "(zCDP, in ρ), which dpgui uses whenever it gives a smaller total. zCDP needs a budget δ > 0.",
    "How many releases of this dataset are recorded.",
)
RELEASE_COLUMNS = ("Date (UTC)", "ε", "δ", "ρ", "Noise", "Release id", "Bundle")
NOISE_NAMES = {"discrete_laplace_tree": "Laplace", "discrete_gaussian_tree": "Gaussian"}
HISTORY_COLUMNS = ("When (UTC)", "Budget change", "Reason")
FULL_TOLERANCE = 1e-9


def _when(utc: str) -> str:
    """'2026-11-21T20:58:12.123456Z' → '2026-11-21 20:58:12'."""
    return utc.replace("T", " ").split(".")[0].removesuffix("Z")


def _bad_colour() -> str:
    return "#E74C3C" if is_dark() else "#C0392B"


@dataclass(frozen=True)
class DatasetRow:
    """What the dataset table shows for one dataset."""

    dataset: str
    budget_text: str  # "ε 0.75 of 2 spent, 1.25 left"
    used_fraction: float  # 0 … 1
    full: bool
    delta_text: str  # "δ 1e-9 of 1e-6 spent, 9.99e-7 left"; under zCDP "at δ 1e-6 (zCDP): ρ 0.01 spent, 0.005 left"
    releases: int
    totals: Totals
    accounting_text: str = ""  # "sum of ε", "sum of ε and δ" or "zCDP (sum of ε: 1.4)"


def delta_text(t: Totals) -> str:
    """δ spent and left, in the dataset table. Under zCDP the releases together are (ε, δ)-DP at the
    cap's δ (Σδ of the releases does not count), and what is left is ρ."""
    if t.accounting is Accounting.ZCDP:
        return (f"at δ {format_delta(t.cap_delta)} (zCDP): ρ {format_significant(t.rho_spent)} spent, "
                f"{format_significant(t.rho_remaining or 0.0)} left")
    if t.cap_delta > 0 or t.delta_spent > 0:
        left = "none left" if t.delta_remaining <= t.cap_delta * FULL_TOLERANCE else (
            f"{format_delta(t.delta_remaining)} left")
        return f"δ {format_delta(t.delta_spent)} of {format_delta(t.cap_delta)} spent, {left}"
    return "—"


def accounting_text(t: Totals) -> str:
    """How the dataset's releases add up, in a few words."""
    if t.accounting is Accounting.ZCDP:
        return f"zCDP (sum of ε: {format_budget(t.epsilon_spent)})"
    return "sum of ε and δ" if t.cap_delta > 0 or t.delta_spent > 0 else "sum of ε"


def dataset_row(t: Totals) -> DatasetRow:
    used = max(0.0, t.cap_epsilon - t.epsilon_remaining)
    full = t.epsilon_remaining <= t.cap_epsilon * FULL_TOLERANCE
    left = "none left" if full else f"{format_budget(t.epsilon_remaining)} left"
    fraction = min(1.0, used / t.cap_epsilon) if t.cap_epsilon > 0 else 1.0
    spent = f"ε {format_budget(used)} of {format_budget(t.cap_epsilon)} spent, {left}"
    return DatasetRow(t.dataset_id, spent, fraction, full, delta_text(t), t.releases, t, accounting_text(t))


def change_text(change: CapChange) -> str:
    """'set to ε 2', 'ε 2 → 3', with δ when it is not 0."""
    if change.old_epsilon is None:
        text = f"set to ε {format_budget(change.new_epsilon)}"
        if change.new_delta:
            text += f", δ {format_budget(change.new_delta)}"
        return text
    parts = []
    if change.old_epsilon != change.new_epsilon:
        direction = "raised" if change.new_epsilon > change.old_epsilon else "lowered"
        parts.append(f"ε {format_budget(change.old_epsilon)} → {format_budget(change.new_epsilon)} ({direction})")
    if change.old_delta != change.new_delta:
        parts.append(f"δ {format_budget(change.old_delta or 0.0)} → {format_budget(change.new_delta)}")
    return ", ".join(parts) or "unchanged"


class BudgetForm(QDialog):
    """The small form behind "Add dataset…" and "Set budget…": name (when adding), ε, δ, reason."""

    def __init__(self, parent: QWidget | None, totals: Totals | None) -> None:
        super().__init__(parent)
        self.totals = totals
        adding = totals is None
        self.setWindowTitle("Add a dataset to the ledger" if totals is None else f"Set the budget of {totals.dataset_id}")
        layout = QVBoxLayout(self)
        if totals is None:
            intro = ("Give the dataset a name and its total privacy budget. Releases of this dataset are then "
                     "recorded here and refused once the budget is spent.")
        else:
            row = dataset_row(totals)
            intro = (f"Now: {row.budget_text}, in {totals.releases} release(s). A budget can be lowered only down "
                     "to what is already spent. " + RAISE_WARNING)
        intro_label = plain_text(QLabel(intro))  # may quote the dataset's name
        intro_label.setWordWrap(True)
        layout.addWidget(intro_label)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.name_field: ValidatedField | None = None
        if adding:
            self.name_field = ValidatedField(self._check_name, "e.g. payroll-2024", DATASET_TIP)
            form.addRow("Dataset name:", self.name_field)
        self.epsilon_field = ValidatedField(_check_epsilon, "e.g. 2", EPSILON_TIP)
        self.delta_field = ValidatedField(_check_delta, "0", DELTA_TIP)
        if totals is not None:
            self.epsilon_field.set_text(format_budget(totals.cap_epsilon))
            self.delta_field.set_text(format_budget(totals.cap_delta))
        else:
            self.delta_field.set_text("0")
        self.reason_edit = QLineEdit()
        self.reason_edit.setPlaceholderText("e.g. approved by the data board on 2026-11-01")
        self.reason_edit.setToolTip(REASON_TIP)
        self.reason_message = inline_message(self)
        reason_box = QWidget()
        reason_layout = QVBoxLayout(reason_box)
        reason_layout.setContentsMargins(0, 0, 0, 0)
        reason_layout.setSpacing(2)
        reason_layout.addWidget(self.reason_edit)
        reason_layout.addWidget(self.reason_message)
        self.reason_edit.textEdited.connect(lambda _t: show_inline(self.reason_message, ""))
        form.addRow("Budget ε:", self.epsilon_field)
        form.addRow("Budget δ:", self.delta_field)
        form.addRow("Reason:", reason_box)
        layout.addLayout(form)
        self.message = inline_message(self)
        layout.addWidget(self.message)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = buttons.addButton("Add dataset" if adding else "Set budget",
                                           QDialogButtonBox.ButtonRole.AcceptRole)
        self.ok_button.setDefault(True)
        buttons.accepted.connect(self._submit)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        for field in (self.name_field, self.epsilon_field, self.delta_field):
            if field is not None:
                field.edited.connect(lambda: grow_to_fit(self))
        self.resize(520, 10)
        grow_to_fit(self)
        self.submit_handler: Any = None  # set by LedgerDialog: (form) -> bool

    @staticmethod
    def _check_name(text: str) -> str:
        name = text.strip()
        if not name:
            raise ParameterError("the dataset name is empty", "give a short name, e.g. payroll-2024")
        return name

    def values(self) -> tuple[str | None, float, float, str] | None:
        if self.name_field is not None:
            name = self.name_field.value()
        else:
            assert self.totals is not None, "the form has a name field unless it sets an existing dataset's budget"
            name = self.totals.dataset_id
        epsilon, delta = self.epsilon_field.value(), self.delta_field.value()
        if name is None or epsilon is None or delta is None:
            return None
        return name, epsilon, delta, self.reason_edit.text().strip()

    def _submit(self) -> None:
        if self.submit_handler is not None and self.submit_handler(self):
            self.accept()
        else:
            grow_to_fit(self)


def _check_epsilon(text: str) -> float:
    value = float(parse_number(text, "the budget ε", "2"))
    if not value > 0:
        raise ParameterError(f"the budget ε must be more than 0, got '{text}'", "enter e.g. 2")
    return value


def _check_delta(text: str) -> float:
    if not text.strip():
        return 0.0
    value = float(parse_number(text, "the budget δ", "1e-6"))
    if not 0 <= value < 1:
        raise ParameterError(f"the budget δ must be at least 0 and below 1, got '{text}'",
                             "enter 0, or a small number such as 1e-6")
    return value


class LedgerDialog(StatusMessages, QDialog):
    """Datasets with their budget bars; the selected dataset's releases and budget history.

    ``set_cap_for`` and ``add_dataset`` are the actions behind the buttons, without modal forms;
    ``dataset_rows()``, ``release_rows()`` and ``cap_history_rows()`` read what is shown.
    """

    def __init__(self, parent: QWidget | None = None, ledger_path: str | Path | None = None) -> None:
        super().__init__(parent)
        self.ledger_path = ledger_path
        self._rows: list[DatasetRow] = []
        self._releases: list[ReleaseEntry] = []
        self._history: list[CapChange] = []
        self._shown_once = False
        self.setWindowTitle("Privacy budget ledger")
        help_label = QLabel(LEDGER_HELP)
        help_label.setWordWrap(True)
        self.path_label = plain_text(QLabel())  # a path shows literally
        self.path_label.setWordWrap(True)
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.datasets_table = QTableWidget(0, len(DATASET_COLUMNS))
        self.datasets_table.setHorizontalHeaderLabels(DATASET_COLUMNS)
        for column, tip in enumerate(DATASET_TIPS):
            header_item = self.datasets_table.horizontalHeaderItem(column)
            assert header_item is not None, "setHorizontalHeaderLabels made one for each column"
            header_item.setToolTip(tip)
        self._read_only(self.datasets_table)
        header = self.datasets_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for column in range(2, len(DATASET_COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.datasets_table.itemSelectionChanged.connect(self._show_selected)
        self.empty_label = QLabel("No datasets yet. Add a dataset with its privacy budget before its first release.")
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)

        self.add_button = QPushButton("Add dataset…")
        self.add_button.setToolTip("Give a new dataset its total privacy budget.")
        self.set_button = QPushButton("Set budget…")
        self.set_button.setToolTip("Raise or lower the selected dataset's budget. Every change is recorded with "
                                   "its reason.")
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Read the ledger again (for example after a release from the command line).")
        self.add_button.clicked.connect(self.add_dataset_interactive)
        self.set_button.clicked.connect(self.set_budget_interactive)
        self.refresh_button.clicked.connect(self.refresh)
        buttons = QHBoxLayout()
        for button in (self.add_button, self.set_button, self.refresh_button):
            buttons.addWidget(button)
        buttons.addStretch(1)

        self.releases_table = QTableWidget(0, len(RELEASE_COLUMNS))
        self.releases_table.setHorizontalHeaderLabels(RELEASE_COLUMNS)
        self._read_only(self.releases_table)
        header = self.releases_table.horizontalHeader()
        for column in range(len(RELEASE_COLUMNS) - 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(RELEASE_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.releases_table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.history_table = QTableWidget(0, len(HISTORY_COLUMNS))
        self.history_table.setHorizontalHeaderLabels(HISTORY_COLUMNS)
        self._read_only(self.history_table)
        header = self.history_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.details = QTabWidget()
        self.details.addTab(self.releases_table, "Releases")
        self.details.addTab(self.history_table, "Budget history")

        self.message = StatusLine()
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(help_label)
        layout.addWidget(self.path_label)
        layout.addWidget(self.datasets_table, 2)
        layout.addWidget(self.empty_label, 2)
        layout.addLayout(buttons)
        layout.addWidget(self.details, 3)
        layout.addWidget(self.message)
        layout.addWidget(close)
        self.resize(820, 600)
        self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        if self._shown_once:  # the ledger may have changed (a release, the CLI) since the dialog was built
            self.refresh()
        self._shown_once = True
        super().showEvent(event)

    @staticmethod
    def _read_only(table: QTableWidget) -> None:
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.verticalHeader().hide()
        table.setWordWrap(False)

    def _ledger(self) -> Ledger:
        return Ledger(self.ledger_path)

    # ------------------------------------------------------------------ reading
    def refresh(self) -> None:
        """Read the ledger again and redraw; the selected dataset stays selected."""
        selected = self.selected_dataset()
        try:
            with self._ledger() as ledger:
                self.path_label.setText(f"Ledger file: {ledger.path}")
                self._rows = [dataset_row(t) for t in ledger.datasets()]
        except DpguiError as err:
            self._rows = []
            self._error(friendly(err))
        table = self.datasets_table
        table.blockSignals(True)
        table.clearSelection()
        table.setRowCount(len(self._rows))
        for row_index, row in enumerate(self._rows):
            name = QTableWidgetItem(row.dataset)
            name.setToolTip(row.dataset)
            table.setItem(row_index, 0, name)
            table.setItem(row_index, 1, QTableWidgetItem(row.budget_text))  # read by screen readers and tests
            table.setCellWidget(row_index, 1, self._bar(row))
            delta = QTableWidgetItem(row.delta_text)
            delta.setToolTip(row.delta_text)
            table.setItem(row_index, 2, delta)
            accounting = QTableWidgetItem(row.accounting_text)
            accounting.setToolTip(DATASET_TIPS[3])
            table.setItem(row_index, 3, accounting)
            count = QTableWidgetItem(format_number(row.releases))
            count.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(row_index, 4, count)
        table.resizeColumnToContents(0)
        table.setColumnWidth(0, min(max(table.columnWidth(0), 120), 260))
        table.blockSignals(False)
        table.setVisible(bool(self._rows))
        self.empty_label.setVisible(not self._rows)
        if selected is not None and self.select_dataset(selected):
            pass
        elif self._rows:
            self.select_dataset(self._rows[0].dataset)
        else:
            self._show_selected()

    def _bar(self, row: DatasetRow) -> QProgressBar:
        bar = QProgressBar()
        bar.setRange(0, 1000)
        bar.setValue(round(1000 * row.used_fraction))
        bar.setFormat(row.budget_text)
        bar.setTextVisible(True)
        bar.setAlignment(Qt.AlignmentFlag.AlignCenter)
        tip = f"{row.dataset}: {row.budget_text} ({100 * row.used_fraction:.0f} % used)."
        t = row.totals
        if t.accounting is Accounting.ZCDP:
            tip += (f" Counted with zCDP composition at δ = {format_delta(t.cap_delta)}, which gives less than the "
                    f"plain sum of ε ({format_budget(t.epsilon_spent)}).")
        if row.full:
            tip += " The budget is spent: no more releases of this dataset are possible unless it is raised."
            palette = bar.palette()
            palette.setColor(QPalette.ColorRole.Highlight, QColor(_bad_colour()))
            palette.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
            bar.setPalette(palette)
        bar.setToolTip(tip)
        bar.setAccessibleName(f"Budget used by {row.dataset}")
        bar.setAccessibleDescription(row.budget_text)
        bar.setObjectName(f"budget-bar-{row.dataset}")
        return bar

    def dataset_rows(self) -> list[DatasetRow]:
        return list(self._rows)

    def bar_for(self, dataset: str) -> QProgressBar | None:
        for index, row in enumerate(self._rows):
            if row.dataset == dataset:
                bar = self.datasets_table.cellWidget(index, 1)
                return bar if isinstance(bar, QProgressBar) else None
        return None

    def selected_dataset(self) -> str | None:
        rows = self.datasets_table.selectionModel().selectedRows() if self.datasets_table.selectionModel() else []
        return self._rows[rows[0].row()].dataset if rows and rows[0].row() < len(self._rows) else None

    def select_dataset(self, dataset: str) -> bool:
        for index, row in enumerate(self._rows):
            if row.dataset == dataset:
                self.datasets_table.selectRow(index)
                self._show_selected()
                return True
        return False

    def _show_selected(self) -> None:
        dataset = self.selected_dataset()
        self.set_button.setEnabled(dataset is not None)
        self._releases, self._history = [], []
        if dataset is not None:
            try:
                with self._ledger() as ledger:
                    self._releases = ledger.releases(dataset)
                    self._history = ledger.cap_history(dataset)
            except DpguiError as err:
                self._error(friendly(err))
        self._fill(self.releases_table, self.release_rows())
        self._fill(self.history_table, self.cap_history_rows())
        name = f" of {dataset}" if dataset else ""
        self.details.setTabText(0, f"Releases{name} ({len(self._releases)})")
        self.details.setTabText(1, f"Budget history{name}")
        self.details.setVisible(bool(self._rows))

    @staticmethod
    def _fill(table: QTableWidget, rows: Sequence[tuple[str, ...]], tooltips: dict[int, str] | None = None) -> None:
        table.setRowCount(len(rows))
        for r, values in enumerate(rows):
            for c, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setToolTip(value)
                table.setItem(r, c, item)

    def release_rows(self) -> list[tuple[str, str, str, str, str, str, str]]:
        """(date UTC, ε, δ, ρ, noise, release id, bundle) of the selected dataset's releases, newest first
        (ρ "—" for a release recorded without one by an earlier dpgui)."""
        return [(_when(e.created_utc), format_budget(e.epsilon), format_delta(e.delta),
                 "—" if e.rho is None else format_significant(e.rho), NOISE_NAMES.get(e.mechanism, e.mechanism or "—"),
                 e.release_id, e.bundle or "(no bundle written)") for e in self._releases]

    def cap_history_rows(self) -> list[tuple[str, str, str]]:
        """(when UTC, change, reason) of the selected dataset's budget changes, oldest first."""
        return [(_when(c.changed_utc), change_text(c), c.reason or "—") for c in self._history]

    def totals_for(self, dataset: str) -> Totals | None:
        return next((row.totals for row in self._rows if row.dataset == dataset), None)

    # ------------------------------------------------------------------ changing budgets
    def confirm_raise(self, dataset: str, old: Totals, epsilon: float, delta: float, reason: str) -> bool:
        """Ask before a budget is raised (modal). Tests may replace this method."""
        box = QMessageBox(QMessageBox.Icon.Warning, "Raise the budget?",
                          f"Raise the budget of “{dataset}” from ε {format_budget(old.cap_epsilon)} to ε {format_budget(epsilon)}"
                          + (f" (δ {format_budget(old.cap_delta)} → {format_budget(delta)})" if delta != old.cap_delta else "")
                          + f"?\n\n{RAISE_WARNING} The change and your reason (“{reason}”) are recorded in the "
                          "ledger for good.", QMessageBox.StandardButton.NoButton, self)
        plain_text(box)  # the dataset's name and the reason are the user's text: shown literally
        raise_button = box.addButton("Raise budget", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is raise_button

    def set_cap_for(self, dataset: str, epsilon: float, delta: float | None = None, reason: str = "",
                    confirm: bool = False) -> bool:
        """Set ``dataset``'s budget to (ε, δ) (δ None: unchanged). True if the ledger now has it.

        Raising needs a reason (and, with ``confirm``, the user's yes); lowering below what is
        spent is refused with the ledger's message. The message is in ``last_error``/``last_message``.
        """
        reason = reason.strip()
        try:
            with self._ledger() as ledger:
                old = ledger.totals(dataset)
                new_delta = old.cap_delta if delta is None else float(delta)
                if (float(epsilon), new_delta) == (old.cap_epsilon, old.cap_delta):
                    self._info(f"The budget of “{dataset}” is already ε {format_budget(epsilon)}; nothing was changed.")
                    return True
                raising = epsilon > old.cap_epsilon or new_delta > old.cap_delta
                if raising and not reason:
                    self._error(RAISE_REASON_NEEDED)
                    return False
                if raising and confirm and not self.confirm_raise(dataset, old, epsilon, new_delta, reason):
                    self._info("The budget was not changed.")
                    return False
                ledger.set_cap(dataset, epsilon, new_delta, reason)
        except DpguiError as err:
            self._error(friendly(err) + " The budget was not changed.")
            self.refresh()
            return False
        verb = "Raised" if raising else "Lowered" if epsilon < old.cap_epsilon or new_delta < old.cap_delta else "Set"
        self.refresh()
        self.select_dataset(dataset)
        delta_change = (f" and δ {format_delta(old.cap_delta)} to δ {format_delta(new_delta)}"
                        if new_delta != old.cap_delta else "")
        self._info(f"{verb} the budget of “{dataset}” from ε {format_budget(old.cap_epsilon)} to ε {format_budget(epsilon)}"
                   f"{delta_change}. The change is recorded in the budget history.")
        return True

    def add_dataset(self, dataset: str, epsilon: float, delta: float = 0.0, reason: str = "") -> bool:
        """Add a dataset with its first budget; refused if the name is already in the ledger."""
        dataset = dataset.strip()
        try:
            with self._ledger() as ledger:
                if any(t.dataset_id == dataset for t in ledger.datasets()):
                    self._error(f"“{dataset}” is already in the ledger. Select it and use Set budget… to change "
                                "its budget.")
                    return False
                ledger.set_cap(dataset, epsilon, delta, reason.strip())
        except DpguiError as err:
            self._error(friendly(err))
            return False
        self.refresh()
        self.select_dataset(dataset)
        self._info(f"Added “{dataset}” with a budget of ε {format_budget(epsilon)}"
                   + (f" and δ {format_budget(delta)}" if delta else "") + ".")
        return True

    # ------------------------------------------------------------------ the forms (modal)
    def budget_form(self, dataset: str | None = None) -> BudgetForm:
        """The form for adding a dataset (None) or setting ``dataset``'s budget; not shown."""
        totals = None if dataset is None else self.totals_for(dataset)
        form = BudgetForm(self, totals)
        form.submit_handler = self._submit_form
        return form

    def _submit_form(self, form: BudgetForm) -> bool:
        values = form.values()
        if values is None:
            return False
        name, epsilon, delta, reason = values
        show_inline(form.message, "")
        if form.totals is None:
            ok = self.add_dataset(name or "", epsilon, delta, reason)
        else:
            old = form.totals
            if (epsilon > old.cap_epsilon or delta > old.cap_delta) and not reason:
                show_inline(form.reason_message, RAISE_REASON_NEEDED)
                return False
            ok = self.set_cap_for(old.dataset_id, epsilon, delta, reason, confirm=True)
        if not ok and self.last_error:
            show_inline(form.message, self.last_error)
        return ok

    def add_dataset_interactive(self) -> None:
        self.budget_form().exec()

    def set_budget_interactive(self) -> None:
        dataset = self.selected_dataset()
        if dataset is None:
            self._error("Select a dataset in the list first.")
            return
        self.budget_form(dataset).exec()
