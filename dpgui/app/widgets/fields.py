"""Form fields that validate as you type and say what is wrong right next to the field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent, QShowEvent, QStandardItemModel
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QLayout, QLineEdit, QVBoxLayout, QWidget

from dpgui.app.text import friendly
from dpgui.core.plan import check_delta, check_epsilon
from dpgui.errors import DpguiError, ParameterError
from dpgui.vocabulary import Neighbours

ERROR_STYLE = "color: #C0392B;"  # readable red on light and dark backgrounds


def parse_number(text: str, what: str, example: str, integer: bool = False) -> float | int:
    """Read a number typed by a person: spaces and thousands separators (1,000 or 1 000) allowed."""
    cleaned = text.strip().replace("\u00a0", "").replace(" ", "").replace("_", "")
    if "," in cleaned and "." not in cleaned and cleaned.count(",") == 1 and len(cleaned.split(",")[1]) != 3:
        raise ParameterError(f"{what} '{text}' uses a comma for decimals", f"use a dot, e.g. {example}")
    cleaned = cleaned.replace(",", "")
    if not cleaned:
        raise ParameterError(f"{what} is empty", f"enter a number, e.g. {example}")
    try:
        value = float(cleaned)
    except ValueError:
        raise ParameterError(f"{what} '{text}' is not a number", f"enter a number, e.g. {example}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ParameterError(f"{what} '{text}' is not a finite number", f"enter a number, e.g. {example}")
    if integer:
        if value != int(value):
            raise ParameterError(f"{what} must be a whole number, got '{text}'", f"enter e.g. {example}")
        return int(value)
    return value


def parse_epsilon(raw: str) -> float:
    """ε as typed in a privacy field: a finite number > 0 (:func:`dpgui.core.plan.check_epsilon`)."""
    return check_epsilon(parse_number(raw, "ε", "1 or 0.5"), "ε")


def parse_delta(raw: str) -> float:
    """δ as typed: 0 (pure ε-DP) or a probability 0 < δ ≤ 0.001 (far below 1/N), e.g. 1e-9
    (:func:`dpgui.core.plan.check_delta`)."""
    if not raw.strip():
        raise ParameterError("δ is empty", "enter 0 for pure ε-DP, or a small probability such as 1e-9")
    return check_delta(parse_number(raw, "δ", "1e-9"), "δ")


def compact_combo(combo: QComboBox) -> QComboBox:
    """Let a combo box with long item texts shrink with its panel (the full text shows when opened)."""
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(16)
    return combo


def set_buddy(form: QFormLayout, field: QWidget | QLayout, buddy: QWidget) -> None:
    """The label of ``field``'s form row (its & letter) focuses ``buddy``, e.g. a ValidatedField's edit."""
    label = form.labelForField(field)
    assert isinstance(label, QLabel), "a row added as addRow(text, field) has a QLabel"
    label.setBuddy(buddy)


#: Pixels between a field and its inline message.
MESSAGE_SPACING = 2


class ValidatedField(QWidget):
    """A line edit plus an inline message. ``validate(text) -> value`` raises DpguiError when bad.

    ``value()`` returns the validated value or None (and shows the message); ``edited`` fires on
    every change the user makes (not on ``set_text``).
    """

    edited = Signal()

    def __init__(self, validate: Callable[[str], Any], placeholder: str = "", tooltip: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._validate = validate
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText(placeholder)
        self.edit.setToolTip(tooltip)
        self.edit.setClearButtonEnabled(False)
        self.message = QLabel(self)
        self.message.setTextFormat(Qt.TextFormat.PlainText)  # messages quote what was typed
        self.message.setStyleSheet(ERROR_STYLE)
        self.message.setWordWrap(True)
        self.message.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(MESSAGE_SPACING)
        layout.addWidget(self.edit)
        layout.addWidget(self.message)
        self.edit.textEdited.connect(self._on_edited)

    def _on_edited(self) -> None:
        self.value()
        self.edited.emit()

    def text(self) -> str:
        return self.edit.text()

    def set_text(self, text: str) -> None:
        self.edit.setText(text)
        self.value()

    def value(self) -> Any | None:
        try:
            result = self._validate(self.edit.text())
        except DpguiError as err:
            self.show_error(friendly(err))
            return None
        self.clear_error()
        return result

    def show_error(self, message: str) -> None:
        self.message.setText(message)
        self.message.show()
        self.edit.setStyleSheet("border: 1px solid #C0392B;")
        self.edit.setAccessibleDescription(message)
        self._ask_for_room()

    def clear_error(self) -> None:
        self.message.clear()
        self.message.hide()
        self.edit.setStyleSheet("")
        self.edit.setAccessibleDescription("")
        self._ask_for_room()

    def _ask_for_room(self) -> None:
        """The layouts above re-read this field's size (a label's own update is lost while it is hidden)."""
        layout = self.layout()
        if layout is not None:
            layout.invalidate()
        self.updateGeometry()

    def minimumSizeHint(self) -> QSize:
        """At least the whole message, wrapped at the field's width: a scroll area (the plan page's controls)
        squeezes its page down to the minimum sizes, and a wrapped label's minimum is one line, which would
        cut the message's second line off."""
        hint = super().minimumSizeHint()
        if self.message.isHidden() or self.width() < 50:
            return hint
        wrapped = self.edit.minimumSizeHint().height() + MESSAGE_SPACING + self.message.heightForWidth(self.width())
        return QSize(hint.width(), max(hint.height(), wrapped))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if not self.message.isHidden() and event.size().width() != event.oldSize().width():
            self._ask_for_room()  # the message wraps anew: its height may change

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self.message.isHidden():
            self._ask_for_room()  # a message set while the field's page was hidden asks for its room now

    def error_text(self) -> str:
        return self.message.text() if not self.message.isHidden() else ""


def inline_message(parent: QWidget | None = None) -> QLabel:
    """A hidden red label for messages about a group of fields."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)  # messages quote user text (names) literally
    label.setStyleSheet(ERROR_STYLE)
    label.setWordWrap(True)
    label.hide()
    return label


def show_inline(label: QLabel, message: str) -> None:
    label.setText(message)
    label.setVisible(bool(message))


class StatusLine(QLabel):
    """A dialog's selectable message line: plain for information, red for problems.

    The last text shown is kept in ``last_message`` / ``last_error`` (for tests and callers)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)  # messages quote user text (names, paths) literally
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hide()
        self.last_message = ""
        self.last_error = ""

    def info(self, message: str) -> None:
        self.last_message, self.last_error = message, ""
        self._show(message, "")

    def error(self, message: str) -> None:
        self.last_error, self.last_message = message, ""
        self._show(message, ERROR_STYLE)

    def _show(self, message: str, style: str) -> None:
        self.setStyleSheet(style)
        self.setText(message)
        self.setVisible(bool(message))


class StatusMessages:
    """For dialogs with a :class:`StatusLine` in ``self.message``: ``_info`` / ``_error`` and the last texts."""

    message: StatusLine

    def _info(self, message: str) -> None:
        self.message.info(message)

    def _error(self, message: str) -> None:
        self.message.error(message)

    @property
    def last_message(self) -> str:
        return self.message.last_message

    @property
    def last_error(self) -> str:
        return self.message.last_error


def grow_to_fit(dialog: QWidget) -> None:
    """Make a dialog tall enough for its wrapped messages (a shown dialog does not grow by itself)."""
    layout = dialog.layout()
    if layout is None:
        return
    layout.activate()
    need = layout.totalHeightForWidth(dialog.width()) if layout.hasHeightForWidth() else layout.totalSizeHint().height()
    if need > dialog.height():
        dialog.resize(dialog.width(), need)


def offer_neighbours(combo: QComboBox, row_count_may_be_public: bool) -> bool:
    """Offer the neighbour model ``change`` (N published exactly) in ``combo`` only when the data's row count
    may be public (:attr:`dpgui.data.source_spec.SourceSpec.row_count_may_be_public`): otherwise its item is
    disabled and a combo set to it is moved to ``addremove`` (its signal fires: the page plans again).
    Returns True when it was moved, so that the page says so."""
    model = combo.model()
    change, addremove = combo.findData(str(Neighbours.CHANGE)), combo.findData(str(Neighbours.ADDREMOVE))
    if isinstance(model, QStandardItemModel) and change >= 0:
        item = model.item(change)
        if item is not None:
            item.setEnabled(row_count_may_be_public)
    if row_count_may_be_public or combo.currentIndex() != change or addremove < 0:
        return False
    combo.setCurrentIndex(addremove)
    return True
