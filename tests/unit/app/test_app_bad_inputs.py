"""Bad input through the GUI: each gives a message next to the field or a dialog saying what to do;
nothing crashes, freezes, or releases."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication

from dpgui.app.cdf.mode import TAB_DATA, TAB_PLAN

from gui_helpers import (error_text, make_window, open_and_wait, release_and_wait, release_and_wait_for_error,
                         set_column, type_into)


@pytest.fixture
def window(qtbot):
    return make_window(qtbot)


@pytest.fixture
def good_csv(tmp_path):
    path = tmp_path / "people.csv"
    rng = np.random.default_rng(1)
    rows = ["name,age,income"] + [f"p{i},{a},{w:.2f}" for i, (a, w) in
                                  enumerate(zip(rng.integers(0, 100, 500), rng.gamma(2, 20000, 500)))]
    path.write_text("\n".join(rows) + "\n")
    return path


def alive(window) -> None:
    QApplication.processEvents()
    assert window.isVisible()
    assert window.cdf.outcome is None  # nothing was released


def wait_error(qtbot, window, *words: str) -> str:
    qtbot.waitUntil(lambda: error_text(window) != "", timeout=30_000)
    message = error_text(window)
    for word in words:
        assert word.lower() in message.lower(), message
    return message


def test_unreadable_file(qtbot, window, tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"this is not a parquet file at all")
    window.open_file(str(path))
    wait_error(qtbot, window, "cannot open", "broken.parquet")
    alive(window)
    assert window.table is None


def test_unsupported_file_type(qtbot, window, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    window.open_file(str(path))
    wait_error(qtbot, window, "notes.txt", "CSV, TSV, Parquet, Excel")
    alive(window)


def test_text_column_is_refused_next_to_the_list(qtbot, window, good_csv):
    open_and_wait(qtbot, window, good_csv)
    page = window.data_page
    assert page.select_column("name")
    assert "needs numbers" in page.column_message.text() and page.column_message.isVisibleTo(page)
    assert page.settings() is None
    window.release()
    alive(window)


def test_all_missing_column_is_released_with_its_missing_bucket(qtbot, window, tmp_path):
    """Not refused (a refusal that depends on the values would itself reveal them): under
    change, N = all 50 rows is published and the 50 missing values are a noised count of their own."""
    path = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"x": np.arange(50.0), "blank": np.full(50, np.nan)}), path)
    open_and_wait(qtbot, window, path)
    set_column(qtbot, window, "blank", "0", "100", "10")
    release_and_wait(qtbot, window)
    rel = window.cdf.outcome.release
    assert rel.total == 50 and rel.missing is not None and rel.missing == 50 - rel.cumulative[-1]
    assert window.cdf.outcome.info.missing == "bucket"
    assert "noised 'missing' bucket" in window.result_view.summary.text()
    assert error_text(window) == ""


def test_inverted_bounds(qtbot, window, good_csv):
    open_and_wait(qtbot, window, good_csv)
    page = window.data_page
    page.select_column("age")
    type_into(qtbot, page.lower_field, "100")
    type_into(qtbot, page.upper_field, "0")
    assert "inverted" in page.bounds_message.text() and "smaller" in page.bounds_message.text()
    assert page.settings() is None
    window.release()
    alive(window)
    assert "step 1" in window.statusBar().currentMessage()


@pytest.mark.parametrize("bins, words", [("0", "at least 2"), ("1", "at least 2"), ("2.5", "whole number"),
                                         ("lots", "not a number"), ("999999999", "too many")])
def test_bad_number_of_bins(qtbot, window, good_csv, bins, words):
    open_and_wait(qtbot, window, good_csv)
    page = window.data_page
    type_into(qtbot, page.bins, bins)
    assert words in page.bins.error_text(), page.bins.error_text()
    alive(window)


@pytest.mark.parametrize("epsilon, words", [("0", "> 0"), ("-1", "> 0"), ("abc", "not a number"),
                                            ("", "empty"), ("1000", "too large"), ("0,5", "dot")])
def test_bad_epsilon(qtbot, window, epsilon, words):
    field = window.plan_page.epsilon
    type_into(qtbot, field, epsilon)
    assert words in field.error_text(), field.error_text()
    assert window.plan_page.privacy() is None
    alive(window)



def test_a_message_that_wraps_is_shown_whole_under_its_field(qtbot, window, good_csv):
    """The plan page's controls sit in a scroll area, which squeezes its page to the minimum sizes: the field
    asks for room for its whole wrapped message, so the second line is not cut off."""
    open_and_wait(qtbot, window, good_csv)
    window.tabs.setCurrentIndex(TAB_PLAN)
    field = window.plan_page.epsilon
    type_into(qtbot, field, "abc")
    qtbot.waitUntil(lambda: field.message.isVisible())
    QApplication.processEvents()
    message = field.message
    one_line = message.fontMetrics().height()
    needed = message.heightForWidth(message.width())
    assert needed > one_line  # the message wraps at this width: the case that used to be cut off
    assert message.height() >= needed, (message.height(), needed)
    assert field.geometry().height() >= field.edit.height() + needed


def test_a_message_set_while_its_page_is_hidden_is_shown_whole_when_the_page_is(qtbot, window, good_csv):
    """A value set while the plan page is not shown (a restored project, a preset from elsewhere): the label's
    own size update is lost while it is hidden, so the field asks the layouts again."""
    open_and_wait(qtbot, window, good_csv)
    window.tabs.setCurrentIndex(TAB_PLAN)
    QApplication.processEvents()
    window.tabs.setCurrentIndex(TAB_DATA)
    field = window.plan_page.epsilon
    field.set_text("abc")
    QApplication.processEvents()
    window.tabs.setCurrentIndex(TAB_PLAN)
    qtbot.waitUntil(lambda: field.message.isVisible())
    QApplication.processEvents()
    message = field.message
    needed = message.heightForWidth(message.width())
    assert needed > message.fontMetrics().height()
    assert message.height() >= needed, (message.height(), needed)

def test_file_deleted_while_open(qtbot, window, good_csv):
    open_and_wait(qtbot, window, good_csv)
    set_column(qtbot, window, "income", "0", "200000", "100")
    good_csv.unlink()
    release_and_wait_for_error(qtbot, window)
    wait_error(qtbot, window, "people.csv", "Nothing was spent")
    alive(window)


def test_file_with_no_rows(qtbot, window, tmp_path):
    path = tmp_path / "header-only.csv"
    path.write_text("a,b\n")
    window.open_file(str(path))
    wait_error(qtbot, window, "no data rows", "at least one row")
    alive(window)


def test_file_with_one_row_warns_but_works(qtbot, window, tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("x\n42\n")
    open_and_wait(qtbot, window, path)
    qtbot.waitUntil(lambda: "only 1 row" in window.data_page.file_warning.text(), timeout=10_000)
    set_column(qtbot, window, "x", "0", "100", "10")
    release_and_wait(qtbot, window)
    assert window.cdf.outcome is not None and window.cdf.outcome.release.total == 1


@pytest.mark.parametrize("branching, words", [("abc", "cannot read"), ("1", "≥ 2"), ("2x2", "bins"), ("0x5", "")])
def test_bad_branching(qtbot, window, good_csv, branching, words):
    open_and_wait(qtbot, window, good_csv)
    set_column(qtbot, window, "age", "0", "100", "100")
    page = window.plan_page
    type_into(qtbot, page.branching, branching)
    qtbot.waitUntil(lambda: not page.is_planning(), timeout=10_000)
    message = page.branching.error_text() + page.plan_message.text()
    assert message and words.lower() in message.lower(), message
    alive(window)


@pytest.mark.parametrize("target, words", [("abc", "not a number"), ("0", "more than 0"), ("-5", "more than 0")])
def test_bad_accuracy_target(qtbot, window, good_csv, target, words):
    open_and_wait(qtbot, window, good_csv)
    set_column(qtbot, window, "age", "0", "100", "100")
    page = window.plan_page
    type_into(qtbot, page.target, target)
    page.accuracy_first()
    assert words in page.target.error_text()
    alive(window)


def test_impossible_accuracy_target_says_what_to_do(qtbot, window, good_csv):
    open_and_wait(qtbot, window, good_csv)
    set_column(qtbot, window, "age", "0", "100", "100")
    page = window.plan_page
    page.target.set_text("0.001")
    page.accuracy_first()
    qtbot.waitUntil(lambda: page.plan_message.text() != "", timeout=30_000)
    assert "accept an error above 1 record" in page.plan_message.text().lower()  # a target no plan can meet
    alive(window)


def test_missing_values_are_not_a_choice_and_the_plan_says_the_rule(qtbot, window, good_csv):
    """No missing-value choice (the rule follows the neighbour model); step 1 explains both
    rules and the plan's summary names the one that applies."""
    open_and_wait(qtbot, window, good_csv)
    set_column(qtbot, window, "income", "0", "100000", "100")
    page = window.data_page
    assert page.settings() is not None
    assert "noised" in page.missing_note.text() and "left out" in page.missing_note.text()
    plan_page = window.plan_page
    assert plan_page.plan.shape.missing_leaf and plan_page.plan.shape.leaves == 101
    assert "noised 'missing' bucket" in plan_page.summary.text()
    alive(window)


def test_drag_and_drop_opens_a_file(qtbot, window, good_csv):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(good_csv))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    qtbot.waitUntil(lambda: window.table is not None, timeout=30_000)
    assert window.table.path == good_csv


def test_excel_file_opens_and_releases(qtbot, window, tmp_path):
    import openpyxl

    path = tmp_path / "survey.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["score", "comment"])
    for i in range(200):
        sheet.append([i % 50, f"c{i}"])
    book.save(path)
    open_and_wait(qtbot, window, path)
    set_column(qtbot, window, "score", "0", "50", "50")
    release_and_wait(qtbot, window)
    assert window.cdf.outcome.release.total == 200


def test_recent_files_and_geometry_are_remembered(qtbot, good_csv):
    first = make_window(qtbot)
    open_and_wait(qtbot, first, good_csv)
    # The offscreen screen is 800×800; the width may stop at the window's minimum. The height is chosen
    # above the window's minimum height (about 555-570 px, by the fonts installed), so the resize holds.
    height = max(650, first.minimumSizeHint().height() + 20)
    first.resize(700, height)
    closed_size = (first.size().width(), first.size().height())
    assert closed_size[1] == height
    first.close()
    from dpgui.app.shell.main_window import MainWindow

    second = MainWindow()
    qtbot.addWidget(second)
    assert second.recent_files()[0] == str(good_csv)
    assert second.start_page.recent.count() >= 1
    # The offscreen screen is only 800 px wide, so Qt clamps the width; the height is restored exactly.
    assert abs(second.size().height() - closed_size[1]) <= 2


def test_the_bounds_dialog_refuses_the_confidential_file_as_its_public_reference(qtbot, tmp_path):
    """The confidential file is never its own public reference: it, or a copy of it, ticked as 'public'
    gives no bounds; the dialog says why."""
    import shutil

    from dpgui.app.dialogs.bounds import BoundsDialog
    from dpgui.data.table import ColumnInfo

    data = tmp_path / "pay.csv"
    data.write_text("salary\n1234\n56789\n")
    copy = tmp_path / "published.csv"
    shutil.copy(data, copy)
    dialog = BoundsDialog(ColumnInfo("salary", "numeric", "int64"), data)
    qtbot.addWidget(dialog)
    dialog.reference_path = copy
    dialog.reference_radio.setChecked(True)
    dialog.public_confirm.setChecked(True)
    assert dialog.compute() is None  # the reference is read on a worker thread
    qtbot.waitUntil(lambda: dialog.reference_worker is None, timeout=10_000)
    assert "confidential data file itself" in dialog.message.text() and not dialog.ok_button.isEnabled()


def test_the_bounds_dialog_reads_a_public_reference_off_the_gui_thread(qtbot, tmp_path, monkeypatch):
    """A reference file may be large, and to refuse a copy of the data the confidential column is read
    too: the dialog reads them on a worker thread and shows the suggestion when the read is done."""
    import threading

    import dpgui.app.dialogs.bounds as bounds_dialog
    from dpgui.app.dialogs.bounds import BoundsDialog
    from dpgui.data.table import ColumnInfo

    data = tmp_path / "pay.csv"
    data.write_text("salary\n1234\n56789\n")
    reference = tmp_path / "published.csv"
    reference.write_text("salary\n0\n90000\n")
    on_gui_thread: list[bool] = []
    original = bounds_dialog.suggest_from_reference

    def recording(*args, **kwargs):
        on_gui_thread.append(threading.current_thread() is threading.main_thread())
        return original(*args, **kwargs)

    monkeypatch.setattr(bounds_dialog, "suggest_from_reference", recording)
    dialog = BoundsDialog(ColumnInfo("salary", "numeric", "int64"), data)
    qtbot.addWidget(dialog)
    dialog.reference_path = reference
    dialog.reference_radio.setChecked(True)
    dialog.public_confirm.setChecked(True)
    assert dialog.compute() is None and not dialog.find_button.isEnabled()
    qtbot.waitUntil(lambda: dialog.reference_worker is None, timeout=10_000)
    assert on_gui_thread == [False]
    assert dialog.suggestion is not None and (dialog.suggestion.lower, dialog.suggestion.upper) == (0, 90000)
    assert dialog.ok_button.isEnabled() and dialog.find_button.isEnabled()
