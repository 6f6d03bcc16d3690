"""The plan step's "Accuracy first: find the smallest ε": the accepted error (records, or % of N), where it
holds (at every point or on average, over the CDF or the region chosen), the public N, and the answer in
words. The search runs on the plan page's planning worker (:meth:`~dpgui.app.cdf.plan_page.PlanPage.accuracy_first`).

N in % of N: under "N is public" the N field shows the file's row count (published exactly); under "N is
private" the file's count is never used (the chosen ε is published and must not depend on it), so only
a figure the officer typed counts. Qt, GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton

from dpgui.app import text
from dpgui.app.widgets.fields import ValidatedField, compact_combo, parse_number, set_buddy
from dpgui.core.plan import Plan
from dpgui.errors import DpguiError, ParameterError
from dpgui.formatting import format_margin_records
from dpgui.vocabulary import AccuracyWhere


def parse_target(raw: str) -> float:
    """The accepted error as typed (records or %), more than 0."""
    value = parse_number(raw, "accepted error", "100")
    if value <= 0:
        raise ParameterError(f"the accepted error must be more than 0, got '{raw}'", "enter e.g. 100")
    return float(value)


def parse_public_n(raw: str) -> int:
    """A public N (records) as typed, at least 1."""
    value = parse_number(raw, "N", "10000", integer=True)
    if value < 1:
        raise ParameterError(f"N must be at least 1, got '{raw}'", "enter the public number of records")
    return int(value)


class AccuracyFirstBox(QGroupBox):
    """The box's widgets. ``search`` is called by its button; ``n_typed`` when the officer types a public N."""

    def __init__(self, help_label: Callable[[str], QLabel], search: Callable[[], None],
                 n_typed: Callable[[], None]) -> None:
        super().__init__("Accuracy first: find the smallest ε")
        self._n_typed = n_typed
        self._public_n_filled = ""  # the text this box put in the N field from the file (not typed)
        form = QFormLayout(self)
        form.addRow(help_label(text.ACCURACY_HELP))
        target_row = QHBoxLayout()
        self.target = ValidatedField(parse_target, "e.g. 100", "The largest error you accept, at 95 % confidence.")
        self.target_unit = QComboBox()
        self.target_unit.addItem("records", "records")
        self.target_unit.addItem("% of N", "percent")
        self.target_unit.currentIndexChanged.connect(self.show_unit)
        target_row.addWidget(QLabel("±"))
        target_row.addWidget(self.target, 1)
        target_row.addWidget(self.target_unit)
        form.addRow("Accepted &error:", target_row)
        set_buddy(form, target_row, self.target.edit)
        self.target_where = QComboBox()
        self.target_where.addItem("at every point of the CDF (worst case)", "every")
        self.target_where.addItem("on average over the CDF points", "average")
        compact_combo(self.target_where)
        self.target_where.setToolTip("Quantiles fall at points that depend on the confidential data, so "
                                     "'every point' is the guarantee that also holds at the median and quartiles.")
        form.addRow("&Where:", self.target_where)
        set_buddy(form, self.target_where, self.target_where)
        self.public_n = ValidatedField(parse_public_n, "e.g. 10000", text.PUBLIC_N_TOOLTIP)
        self.public_n.edited.connect(self._on_public_n_typed)
        self.public_n_label = QLabel("Public &N:")
        self.public_n_label.setBuddy(self.public_n.edit)
        self.public_n_help = help_label("")
        form.addRow(self.public_n_label, self.public_n)
        form.addRow(self.public_n_help)
        self.button = QPushButton("&Find the smallest ε")
        self.button.clicked.connect(search)
        form.addRow(self.button)
        self.result = QLabel("")
        self.result.setWordWrap(True)
        form.addRow(self.result)
        self.show_unit()

    def show_unit(self) -> None:
        """The public N is asked for only when the accepted error is in % of N."""
        percent = self.target_unit.currentData() == "percent"
        self.public_n.setVisible(percent)
        self.public_n_label.setVisible(percent)
        self.public_n_help.setVisible(percent)

    def fill_public_n(self, n_public: bool, n_rows: int | None) -> None:
        """Under 'N is public' (``n_public``) the N field shows the file's row count ``n_rows``; under 'N is
        private' a count this box filled in is removed and only a figure the officer typed stays."""
        if n_public:
            if n_rows is not None:  # N is published exactly: it is the file's count
                self._public_n_filled = f"{n_rows:,}"
                self.public_n.set_text(self._public_n_filled)
        elif self.public_n.text() and self.public_n.text() == self._public_n_filled:
            self.public_n.edit.clear()
            self.public_n.clear_error()
            self._public_n_filled = ""
        self.public_n_label.setText("Public &N (the file's rows):" if n_public else "Public &estimate of N:")
        self.public_n_help.setText(text.PUBLIC_N_HELP["change" if n_public else "addremove"])

    def _on_public_n_typed(self) -> None:
        self._public_n_filled = ""  # typed by the officer: kept under both models
        self._n_typed()

    def typed_n_estimate(self) -> int | None:
        """The public estimate of N the officer typed (None if none): under 'N is private' the only N
        that may turn errors into % of N."""
        if self._public_n_filled or not self.public_n.text().strip():
            return None
        try:
            return parse_public_n(self.public_n.text())
        except DpguiError:
            return None

    def set_region(self, words: str) -> None:
        """Say where the accepted error holds: the whole CDF, or the region chosen (``words``; "" for none)."""
        every, average = ((f"at every point of {words} (worst case)", f"on average over {words}") if words
                          else ("at every point of the CDF (worst case)", "on average over the CDF points"))
        self.target_where.setItemText(self.target_where.findData("every"), every)
        self.target_where.setItemText(self.target_where.findData("average"), average)

    def accepted_margin(self, target: float, n_public: bool) -> float | None:
        """The accepted error ``target`` (as typed) in records: a % of the public N turned into records, or
        None with the N field or the answer saying why (% of N without a valid N)."""
        if self.target_unit.currentData() != "percent":
            return target
        if not n_public and not self.public_n.text().strip():
            self.public_n.show_error(text.PUBLIC_N_NEEDED)
            self.result.setText(text.PUBLIC_N_NEEDED)
            return None
        n = self.public_n.value()
        return None if n is None else target / 100.0 * n

    def show_answer(self, plan: Plan, achieved: float, wanted: float, region: str) -> None:
        """The smallest ε found (``plan``'s), its projected error ``achieved`` over ``region`` against the
        accepted ``wanted`` (records)."""
        where = self.target_where.currentData()
        at = (f" at δ = {text.format_delta(plan.privacy.delta)}, with {text.NOISE_NAMES[plan.noise]} noise"
              if plan.privacy.delta > 0 else "")
        self.result.setText(
            f"Smallest ε{at}: <b>{plan.privacy.epsilon:g}</b>. Projected error {format_margin_records(achieved)} "
            f"{'at every point of' if where == AccuracyWhere.EVERY else 'on average over'} {region} "
            f"(you accept {format_margin_records(wanted)}).")
