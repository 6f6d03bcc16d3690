"""Under 'N is private' (add/remove neighbours) the file's row count is never used before the
release: the accuracy-first search and the projected errors give the same result for two files
of different N. A published estimate of N may be typed for errors in %."""

from __future__ import annotations

import pytest
from gui_helpers import make_window, open_and_wait, set_column, type_into, wait_plan

pytestmark = pytest.mark.slow

TIMEOUT = 30_000


def _csv(tmp_path, name: str, rows: int, missing: int):
    path = tmp_path / name
    lines = ["wage"] + [str(10 + (i * 37) % 80) for i in range(rows)] + [""] * missing
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _accuracy_first_under_addremove(qtbot, path, estimate: str | None):
    """Open ``path`` (N public by default), switch to add/remove, then ask for ± 5 % of N."""
    window = make_window(qtbot)
    open_and_wait(qtbot, window, path)
    set_column(qtbot, window, "wage", "0", "100", "64")
    page = window.plan_page
    page.target_unit.setCurrentIndex(page.target_unit.findData("percent"))
    assert page.public_n.text() != ""  # under 'N is public' the file's count is offered
    page.neighbours.setCurrentIndex(page.neighbours.findData("addremove"))
    wait_plan(qtbot, window)
    qtbot.waitUntil(lambda: page.plan.privacy.neighbours == "addremove" and not page.is_planning(), timeout=TIMEOUT)
    if estimate is not None:
        type_into(qtbot, page.public_n, estimate)
    type_into(qtbot, page.target, "5")
    before = page.plan
    page.accuracy_first()
    qtbot.waitUntil(lambda: not page.is_planning() and page.accuracy_result.text() != "Searching…", timeout=TIMEOUT)
    wait_plan(qtbot, window)
    plots_n = page.plots.n_public
    return {"result": page.accuracy_result.text(), "epsilon": page.epsilon.text(),
            "plan": page.plan.to_json(), "changed": page.plan != before, "plots_n": plots_n,
            "summary_has_n": "% of N" in page.summary.text(), "n_field": page.public_n.text()}


def test_under_addremove_the_files_row_count_changes_nothing_the_planner_produces(qtbot, tmp_path):
    small = _accuracy_first_under_addremove(qtbot, _csv(tmp_path, "small.csv", 300, 20), None)
    large = _accuracy_first_under_addremove(qtbot, _csv(tmp_path, "large.csv", 5000, 700), None)
    assert small == large
    assert small["n_field"] == "" and small["plots_n"] is None and not small["summary_has_n"]
    assert "N is private" in small["result"] and "estimate" in small["result"]


def test_under_addremove_a_typed_estimate_of_n_is_used_and_the_file_is_not(qtbot, tmp_path):
    small = _accuracy_first_under_addremove(qtbot, _csv(tmp_path, "small.csv", 300, 20), "2,000")
    large = _accuracy_first_under_addremove(qtbot, _csv(tmp_path, "large.csv", 5000, 700), "2,000")
    assert small == large
    assert small["changed"] and small["plots_n"] == 2000
    assert "Smallest ε" in small["result"] and "± 100.0" in small["result"]  # 5 % of the typed 2,000
