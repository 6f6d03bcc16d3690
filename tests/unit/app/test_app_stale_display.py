"""After other data is opened, no page shows what was read, planned or searched in the previous data."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gui_helpers import TIMEOUT, make_window, open_and_wait


def test_other_data_clears_the_hierarchy_levels_note_plan_and_find_box(qtbot, tmp_path):
    window = make_window(qtbot, seed=5)
    window.open_hierarchy_sample()
    page = window.hierarchy
    qtbot.waitUntil(lambda: page.state_ws.state.planned is not None and not page.is_busy(), timeout=TIMEOUT)
    assert page.read_note.text().startswith("Read 336,776 rows")
    assert "339 counts over 3 levels" in page.summary.text()
    page.release_step.result_view.search.setText("JFK")
    people = tmp_path / "people.csv"
    rng = np.random.default_rng(3)
    people.write_text("region,age\n" + "\n".join(f"{'NS'[a % 2]},{a}" for a in rng.integers(0, 90, 200)) + "\n")
    open_and_wait(qtbot, window, people)
    qtbot.waitUntil(lambda: page.state_ws.state.column_counts is not None, timeout=TIMEOUT)
    assert window.in_hierarchy_mode() and page.file_label.text() == "File: people.csv"
    assert page.read_note.text() == "" and page.levels_text() == ""
    assert page.release_step.result_view.search.text() == "" and page.release_step.result_view.matches_label.text() == ""
    assert "339 counts" not in page.summary.text() and page.table.rowCount() == 0
    assert [page.level_combos[0].itemData(i) for i in range(page.level_combos[0].count())] == ["", "region", "age"]
    assert Path(page.state_ws.state.data_path) == people
