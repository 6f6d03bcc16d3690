"""Whole-number columns (public type information) are offered bins centred on whole numbers (issue 12, item 9)."""

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
    _set(page, "0", "100", "20")  # fewer bins wanted: one bin per whole-number step
    page.whole_button.click()
    assert (page.lower_field.value(), page.upper_field.value(), page.bins.value()) == (-0.5, 101.5, 17)  # step 6
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
