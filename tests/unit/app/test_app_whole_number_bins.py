"""Whole-number columns (public type information) are offered bins centred on whole numbers."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gui_helpers import make_window, open_and_wait


@pytest.fixture
def window(qtbot):
    return make_window(qtbot)


def _set(page, lower: str, upper: str, bins: str) -> None:
    page.lower_field.set_text(lower)
    page.upper_field.set_text(upper)
    page.bins.set_text(bins)
    page.bins.edited.emit()


def test_integer_parquet_column_is_offered_centred_bins(qtbot, window, tmp_path):
    path = tmp_path / "exams.parquet"
    rng = np.random.default_rng(2)
    pq.write_table(pa.table({"score": rng.integers(0, 101, 300).astype(np.int16),
                             "ratio": rng.random(300)}), path)
    open_and_wait(qtbot, window, path)
    page = window.data_page
    assert page.select_column("score")
    _set(page, "0", "100", "1000")
    assert page.whole_button.isVisibleTo(page)
    assert "int16" in page.whole_note.text() and "middle of its own bin" in page.whole_note.text()
    page.whole_button.click()
    assert (page.lower_field.value(), page.upper_field.value(), page.bins.value()) == (-0.5, 100.5, 101)
    assert not page.whole_button.isVisibleTo(page)  # already centred: nothing more to offer
    _set(page, "0", "100", "20")  # fewer bins wanted: one bin per whole-number step, the width chosen (5)
    page.whole_button.click()
    assert (page.lower_field.value(), page.upper_field.value(), page.bins.value()) == (-0.5, 104.5, 21)  # step 5
    _set(page, "0", "100", "40")  # a width of 2.5: the smallest whole step that keeps K ≤ 40
    page.whole_button.click()
    assert (page.lower_field.value(), page.upper_field.value(), page.bins.value()) == (-0.5, 101.5, 34)  # step 3
    assert page.select_column("ratio")
    _set(page, "0", "1", "100")
    assert not page.whole_button.isVisibleTo(page)


def test_csv_values_do_not_count_but_a_published_schema_does(qtbot, window, tmp_path):
    path = tmp_path / "exams.csv"
    path.write_text("score\n" + "\n".join(str(v) for v in np.random.default_rng(3).integers(0, 101, 200)) + "\n")
    open_and_wait(qtbot, window, path)
    page = window.data_page
    assert page.select_column("score")
    _set(page, "0", "100", "1000")
    assert not page.whole_button.isVisibleTo(page)  # the CSV reader's inferred int64 comes from the values
    (tmp_path / "exams.schema.json").write_text(json.dumps({"fields": [{"name": "score", "type": "integer"}]}))
    open_and_wait(qtbot, window, path)
    assert page.select_column("score")
    _set(page, "0", "100", "1000")
    assert page.whole_button.isVisibleTo(page)
    assert "exams.schema.json" in page.whole_note.text()


def test_the_officers_statement_offers_centred_bins_and_gives_whole_quantiles(qtbot, window):
    """Flight delays are whole minutes stored as float (no type says so): the officer ticks "Values are whole
    numbers", is offered bins centred on whole numbers, and the released median is the whole number −2
    (interpolated it was −1.02); the statement reaches the workspace, the project and the release."""
    from gui_helpers import release_and_wait, wait_plan

    window.open_sample()
    qtbot.waitUntil(lambda: window.table is not None, timeout=30_000)
    page = window.data_page
    assert page.select_column("dep_delay")
    _set(page, "-100", "500", "1000")
    assert not page.whole_check.isChecked() and page.whole_check.isEnabled()
    assert not page.whole_button.isVisibleTo(page)  # a float column: no type says whole numbers
    assert window.workspace.state.column.whole_numbers is None
    page.whole_check.setChecked(True)
    assert window.workspace.state.column.whole_numbers == "stated"
    assert page.whole_button.isVisibleTo(page) and "You stated that 'dep_delay' holds whole numbers" in \
        page.whole_note.text()
    page.whole_button.click()
    assert (page.lower_field.value(), page.upper_field.value(), page.bins.value()) == (-100.5, 500.5, 601)
    wait_plan(qtbot, window, 601)
    project = window.workspace.state.to_project()
    assert project is not None and project.whole_numbers == "stated"
    release_and_wait(qtbot, window)
    assert window.cdf.outcome.info.whole_numbers == "stated"
    rows = {p: (value, low, high) for p, value, low, high in window.result_view.quantile_rows()}
    value, low, high = rows[0.5]
    assert value == -2.0 and low <= -2.0 <= high and low == round(low) and high == round(high)
    # range counts in whole numbers, both ends included: -5 to -1 is the bins [-5.5, -0.5)
    view = window.result_view
    view.set_range(-5, -1)
    answer = view.range_result()
    assert answer is not None and (answer.start, answer.stop) == (-5.5, -0.5)
    assert "from -5 to -1, both included" in view.range_result_label.text()
    assert view._to_label.text() == "To (included)"
    from PySide6.QtCore import Qt

    assert view.quantile_model.headerData(1, Qt.Orientation.Horizontal) == "Estimate\n(whole number)"
    # an integer column: the type says so, the box is ticked and cannot be unticked
    assert page.select_column("hour")
    assert page.whole_check.isChecked() and not page.whole_check.isEnabled()
    assert "declared type" in page.whole_check.toolTip()
    assert window.workspace.state.column.whole_numbers == "type"
