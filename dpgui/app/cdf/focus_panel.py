"""The plan step's "Where do you need accuracy?": the region list, the two ends of a typed region, the
message under them and the note on the region's offer (docs/engine.md "Where do you need accuracy").

The presets are parts of the range between the public bounds, never of the data, and the list says so
with the bounds of step 1 (“the lowest 10 % of the range 0–5000 (0–500)”). The region is the officer's
choice for one data source: :meth:`FocusControls.reset` puts it back to everywhere when another source
opens, and a project restores it (:meth:`FocusControls.set_choice`). Qt, GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QHBoxLayout, QLabel, QWidget

from dpgui.app import text
from dpgui.app.widgets.fields import ValidatedField, compact_combo, inline_message, parse_number, set_buddy, show_inline
from dpgui.core.focus import FocusChoice, FocusOffer, Region, value_span
from dpgui.core.plan import Plan
from dpgui.core.planner import margin95
from dpgui.core.projection import Span
from dpgui.errors import DpguiError, ParameterError
from dpgui.formatting import format_margin_records
from dpgui.workspace.state import DataContext
from dpgui.vocabulary import Objective


def focus_words(offer: FocusOffer, region: str) -> str:
    """The region's offer in plain words (rich text): both 95 % margins there, how much smaller the one
    of the plan made for it is (the figure the choice is made on), and whether that plan is used."""
    from dpgui.core.focus import WORTH_IT

    default_margin, focused_margin = offer.margins()
    where = "on average there" if offer.objective == Objective.TOTAL else "at the worst point there"
    figures = f"{format_margin_records(focused_margin)} instead of {format_margin_records(default_margin)} {where}"
    title = region[:1].upper() + region[1:] if region.startswith("the ") else region  # never a column's name
    if offer.worth_it:
        whole = (f"{format_margin_records(margin95(offer.focused_plan, 'average'))} instead of "
                 f"{format_margin_records(margin95(offer.default_plan, 'average'))}")
        return (f"<b>{title}</b>: with a plan made for it the error there is {figures} "
                f"({100 * offer.gain:.0f} % smaller). <b>That plan is used</b>; privacy is the "
                f"same (the same ε is spent). The price is paid elsewhere: on average over the whole range the "
                f"error is {whole}.")
    if offer.gain < 0.005:
        return (f"<b>{title}</b>: no plan does better there than the plan for the whole range, "
                f"which is kept ({format_margin_records(default_margin)} {where}).")
    return (f"<b>{title}</b>: a plan made for it would make the error there only {100 * offer.gain:.0f} % smaller "
            f"({figures}), not {100 * WORTH_IT:.0f} % or more, so the plan for the whole range is kept.")


class FocusControls:
    """The region widgets, added as rows of the plan step's form. ``changed`` is called when the officer
    changes the region (not when :meth:`set_choice` or :meth:`reset` set it)."""

    def __init__(self, form: QFormLayout, parent: QWidget, help_label: Callable[[str], QLabel],
                 changed: Callable[[], None]) -> None:
        self._changed = changed
        self._context = DataContext()
        self.combo = QComboBox(parent)
        for key, label in text.FOCUS_LABELS.items():
            self.combo.addItem(label, key)
        self.combo.setToolTip(text.FOCUS_TOOLTIP)
        compact_combo(self.combo)
        self.combo.currentIndexChanged.connect(self._on_combo)
        form.addRow("Where do you need accurac&y?", self.combo)
        set_buddy(form, self.combo, self.combo)
        self.low = ValidatedField(lambda raw: parse_number(raw, "the region's start", "20"), "from",
                                  text.FOCUS_BETWEEN_TOOLTIP)
        self.high = ValidatedField(lambda raw: parse_number(raw, "the region's end", "35"), "to",
                                   text.FOCUS_BETWEEN_TOOLTIP)
        self.low.edit.setAccessibleName("Region start")
        self.high.edit.setAccessibleName("Region end")
        for field in (self.low, self.high):
            field.edited.connect(changed)
        self.between = QWidget(parent)
        row = QHBoxLayout(self.between)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("between"))
        row.addWidget(self.low, 1)
        row.addWidget(QLabel("and"))
        row.addWidget(self.high, 1)
        self.between.hide()
        form.addRow(self.between)
        self.message = inline_message(parent)
        form.addRow(self.message)
        self.note = help_label("")
        self.note.setTextFormat(Qt.TextFormat.RichText)
        self.note.setToolTip(text.FOCUS_TOOLTIP)
        form.addRow(self.note)

    # ---------------------------------------------------------------- the list's words
    def set_context(self, context: DataContext) -> None:
        """Name the presets with step 1's bounds: "Lowest 10 % of the range 0–5000 (0–500)"."""
        self._context = context
        for index in range(self.combo.count()):
            key = self.combo.itemData(index)
            label = text.FOCUS_LABELS[key]
            if key in (Region.LOWER, Region.UPPER, Region.MIDDLE):
                words = FocusChoice(Region(key)).words(context.lower, context.upper)
                label = words[:1].upper() + words[1:]
            self.combo.setItemText(index, label)

    # ---------------------------------------------------------------- the choice
    def region(self) -> Region:
        return Region(str(self.combo.currentData()))

    def choice(self) -> FocusChoice:
        """The region chosen; DpguiError while "between" is not two numbers."""
        region = self.region()
        if region is not Region.BETWEEN:
            return FocusChoice(region)
        low, high = self.low.value(), self.high.value()
        if low is None or high is None:
            raise ParameterError("the region needs where it starts and where it ends",
                                 f"type two numbers between {self._context.lower:g} and {self._context.upper:g}")
        return FocusChoice(Region.BETWEEN, float(low), float(high))

    def typed_choice(self) -> FocusChoice | None:
        """:meth:`choice`, or None while it is not valid (what the workspace and a project keep)."""
        try:
            return self.choice()
        except DpguiError:
            return None

    def words(self) -> str:
        """The region in words ("" for everywhere or while it is not valid)."""
        choice = self.typed_choice()
        context = self._context
        return "" if choice is None else choice.words(context.lower, context.upper, context.label)

    def span(self, bins: int) -> tuple[Span | None, str]:
        """(the CDF points of the chosen region, its words), (None, "") for everywhere or a region that is not
        valid: then the message says why under the list, and the plan is for the whole range."""
        if self.region() is Region.BETWEEN and not (self.low.text().strip() or self.high.text().strip()):
            show_inline(self.message, "")  # just chosen: nothing typed yet is not a mistake
            return None, ""
        context = self._context
        try:
            choice = self.choice()
            region = choice.interval(context.lower, context.upper)
            span = None if region is None else value_span(region[0], region[1], context.lower, context.upper, bins)
        except DpguiError as err:
            show_inline(self.message, text.friendly(err) + " Until then the plan is for the whole range.")
            return None, ""
        show_inline(self.message, "")
        return span, choice.words(context.lower, context.upper, context.label)

    def set_choice(self, choice: FocusChoice | None) -> None:
        """Show ``choice`` (None: everywhere) without re-planning; the note is cleared."""
        choice = choice or FocusChoice()
        for widget in (self.combo, self.low, self.high):
            widget.blockSignals(True)
        self.combo.setCurrentIndex(self.combo.findData(choice.region.value))
        self.between.setVisible(choice.region is Region.BETWEEN)
        self.low.set_text("" if choice.low is None else f"{choice.low:.10g}")
        self.high.set_text("" if choice.high is None else f"{choice.high:.10g}")
        for widget in (self.combo, self.low, self.high):
            widget.blockSignals(False)
        self.note.setText("")
        show_inline(self.message, "")

    def reset(self) -> None:
        """Everywhere: a region is kept with the data source it was chosen for, never carried to another."""
        self.set_choice(None)

    def show_saved(self, plan: Plan, choice: FocusChoice | None) -> None:
        """Set the list from a saved plan: the region the project stored (``choice``), else the values of
        the plan's CDF points' bin edges (which give the same points back); "Everywhere" for a plan
        without a focus and no stored region. No re-planning."""
        context, focus = self._context, plan.focus
        if choice is None and focus is not None and context.bins == plan.shape.bins:
            width = (context.upper - context.lower) / plan.shape.bins
            low = context.lower if focus[0] == 1 else context.lower + focus[0] * width
            high = context.upper if focus[1] == plan.shape.bins else context.lower + focus[1] * width
            choice = FocusChoice(Region.BETWEEN, low, high)
        self.set_choice(choice)
        if focus is not None and choice is not None and choice.region is not Region.EVERYWHERE:
            self.note.setText(f"This saved plan was made for {self.words()}.")

    def _on_combo(self) -> None:
        self.between.setVisible(self.region() is Region.BETWEEN)
        self._changed()
