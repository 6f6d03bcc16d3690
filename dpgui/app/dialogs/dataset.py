"""The question before the first release under a dataset name that has no budget yet: is this name
the right identity for the data (not a copy or rename of a dataset already in the ledger), and what
is its total budget? See docs/privacy-model.md, "Dataset identity"."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import (
    QCheckBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QLabel, QPushButton, QVBoxLayout, QWidget,
)

from dpgui.app import text
from dpgui.app.widgets.fields import ERROR_STYLE


class NewDatasetDialog(QDialog):
    """Confirm a new dataset name and set its total budget ε (its δ is the release's, ``delta``, said
    in the dialog when > 0).

    ``others``: datasets in the ledger released from a file with the same column names and row
    count. After ``exec()``: ``cap`` (the ε chosen, when accepted), or ``use_instead`` (the name of
    one of ``others`` the user chose instead; the dialog is then rejected and nothing is set).
    """

    def __init__(self, dataset: str, epsilon: float, others: Sequence[str] = (), parent: QWidget | None = None,
                 delta: float = 0.0) -> None:
        super().__init__(parent)
        self.setWindowTitle("New dataset in the budget ledger")
        self.use_instead: str | None = None
        layout = QVBoxLayout(self)
        intro = text.plain_text(QLabel(
            f"Nothing has been released yet under the dataset name '{dataset}'.\n\n"
            "The budget ledger adds up the privacy budget per dataset name. Releases about the same people "
            "must share one budget, so a copy, a renamed file or a new version of data already in the ledger "
            "must use that dataset's name (Tools → Budget Ledger lists them). Change the name in step 1 "
            "(\"Dataset name in the budget ledger\") if this data is already there."))
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.warning = text.plain_text(QLabel(""))
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet(ERROR_STYLE)
        self.warning.setVisible(bool(others))
        layout.addWidget(self.warning)
        if others:
            names = ", ".join(f"'{o}'" for o in others)
            self.warning.setText(
                f"Warning: this file has the same column names and number of rows as dataset {names}, "
                f"already in the budget ledger. If it is the same data, releasing it as '{dataset}' would "
                "give it a fresh budget. Use that dataset's name instead, unless you are sure this is different data.")
            for other in others:
                button = QPushButton(f"Use '{other}' instead")
                button.setToolTip(text.literal_tooltip(f"Release this file under the dataset '{other}' and its budget"))
                button.clicked.connect(lambda _=False, o=other: self._use(o))
                layout.addWidget(button)
        self.confirm = QCheckBox(f"'{dataset}' is a new dataset: this data is not in the ledger under another name")
        self.confirm.toggled.connect(self._update)
        layout.addWidget(self.confirm)
        form = QFormLayout()
        self.cap_spin = QDoubleSpinBox()
        self.cap_spin.setDecimals(3)
        self.cap_spin.setRange(max(epsilon, 0.001), 100.0)
        self.cap_spin.setValue(max(1.0, epsilon))
        self.cap_spin.setToolTip("How much ε may ever be spent on this dataset, over all releases. The ledger "
                                 "refuses any release that would go over it.")
        form.addRow("&Total privacy budget ε (all releases):", self.cap_spin)
        need = QLabel(f"This release needs ε = {epsilon:g}.")
        form.addRow(need)
        if delta > 0:
            self.delta_note = text.plain_text(QLabel(
                f"The dataset's δ will be δ = {text.format_delta(delta)}, the δ set in step 2: Gaussian releases "
                "spend it, Laplace releases do not."))
            self.delta_note.setWordWrap(True)
            form.addRow(self.delta_note)
        layout.addLayout(form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Set the budget")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._update()
        self.resize(560, self.sizeHint().height())

    def _update(self) -> None:
        self.ok_button.setEnabled(self.confirm.isChecked())

    def _use(self, other: str) -> None:
        self.use_instead = other
        self.reject()

    @property
    def cap(self) -> float:
        return float(self.cap_spin.value())

    def message(self) -> str:
        """Everything the dialog says, for tests and the log."""
        return "\n".join([label.text() for label in self.findChildren(QLabel) if label.text()] + [self.confirm.text()])
