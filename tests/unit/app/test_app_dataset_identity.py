"""Dataset identity in the window (docs/privacy-model.md, "Dataset identity"): the
dataset name is a visible field of step 1; before the first release under a name without a budget
the officer confirms the name, and is warned when the file has the same column names and row count
as a dataset already in the ledger (a copy or a rename would otherwise get a fresh budget)."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QCheckBox, QDialog, QLabel, QPushButton

from dpgui.report.ledger import Ledger, NoCapSet

from gui_helpers import make_window, open_and_wait, open_other_data, release_and_wait, set_column


def _payroll(tmp_path):
    path = tmp_path / "payroll.csv"
    path.write_text("salary,grade\n" + "".join(f"{1000 + (i * 37) % 4000},{i % 7}\n" for i in range(500)),
                    encoding="utf-8")
    return path


def _answer_dialog(seen: list[str], action) -> None:
    """When a modal dialog shows: record everything it says, then ``action(dialog)``."""

    def poll() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QDialog):
            QTimer.singleShot(20, poll)
            return
        words = [label.text() for label in dialog.findChildren(QLabel) if label.text()]
        words += [box.text() for box in dialog.findChildren(QCheckBox)]
        words += [button.text() for button in dialog.findChildren(QPushButton)]
        seen.append("\n".join(words))
        action(dialog)

    QTimer.singleShot(20, poll)


@pytest.fixture
def ledgered_then_copied(qtbot, tmp_path):
    """'payroll' released once from payroll.csv; then a copy of the file opened under its own name."""
    original = _payroll(tmp_path)
    window = make_window(qtbot)
    open_and_wait(qtbot, window, original)
    set_column(qtbot, window, "salary", "0", "5000", "50")
    assert window.data_page.dataset_name.text() == "payroll"
    release_and_wait(qtbot, window)
    copy = tmp_path / "copy-of-payroll.csv"
    shutil.copyfile(original, copy)
    open_other_data(qtbot, window, copy)  # the release stays listed
    set_column(qtbot, window, "salary", "0", "5000", "50")
    del window.ask_cap  # the real question from now on (make_window answers it with a fixed budget)
    return window


def test_a_copy_under_a_new_name_is_warned_about_before_a_budget_is_offered(qtbot, ledgered_then_copied):
    window = ledgered_then_copied
    assert window.data_page.dataset_name.text() == "copy-of-payroll"
    seen: list[str] = []
    _answer_dialog(seen, lambda dialog: dialog.reject())
    window.release()
    assert len(seen) == 1
    assert "same column names and number of rows as dataset 'payroll'" in seen[0], seen[0]
    assert window.cdf.outcome is None  # nothing new; the first release (of payroll.csv) stays listed, not shown
    assert [r.dataset for r in window.session.releases.releases] == ["payroll"]
    with Ledger() as ledger, pytest.raises(NoCapSet):
        ledger.totals("copy-of-payroll")


def test_choosing_the_existing_name_releases_on_its_budget(qtbot, ledgered_then_copied):
    window = ledgered_then_copied

    def use_payroll(dialog) -> None:
        buttons = [b for b in dialog.findChildren(QPushButton) if b.text() == "Use 'payroll' instead"]
        buttons[0].click() if buttons else dialog.reject()

    _answer_dialog([], use_payroll)
    window.release()
    assert window.data_page.dataset_name.text() == "payroll"
    with Ledger() as ledger:
        assert [t.dataset_id for t in ledger.datasets()] == ["payroll"] and ledger.totals("payroll").releases == 1
    release_and_wait(qtbot, window)  # the cap exists: no question, charged to 'payroll'
    with Ledger() as ledger:
        assert ledger.totals("payroll").releases == 2


def test_a_new_name_must_be_confirmed_before_its_budget_is_set(qtbot, tmp_path):
    window = make_window(qtbot)
    open_and_wait(qtbot, window, _payroll(tmp_path))
    set_column(qtbot, window, "salary", "0", "5000", "50")
    del window.ask_cap
    dialog = window.new_dataset_dialog("payroll", 1.0)
    assert not dialog.ok_button.isEnabled()  # one click cannot set a new budget
    assert "same column names" not in dialog.message()  # nothing like it in the ledger
    dialog.confirm.setChecked(True)
    assert dialog.ok_button.isEnabled()

    def confirm_and_set(d) -> None:
        if not hasattr(d, "confirm"):
            d.reject()
            return
        d.confirm.setChecked(True)
        d.cap_spin.setValue(2.5)
        d.ok_button.click()

    _answer_dialog([], confirm_and_set)
    release_and_wait(qtbot, window)
    with Ledger() as ledger:
        assert ledger.totals("payroll").cap_epsilon == 2.5 and ledger.totals("payroll").releases == 1


def test_the_dataset_name_is_a_visible_field_and_may_not_be_empty(qtbot, tmp_path):
    window = make_window(qtbot)
    open_and_wait(qtbot, window, _payroll(tmp_path))
    set_column(qtbot, window, "salary", "0", "5000", "50")
    page = window.data_page
    label = next(lb for lb in page.findChildren(QLabel) if lb.buddy() is page.dataset_name)
    assert label.text().replace("&", "") == "Dataset name in the budget ledger:" and label.isVisible()
    page.dataset_name.setText("")
    assert window.cdf.release_inputs() is None
    assert "Give the dataset a name in the budget ledger" in page.dataset_message.text()
    with Ledger() as ledger:
        assert ledger.datasets() == []
