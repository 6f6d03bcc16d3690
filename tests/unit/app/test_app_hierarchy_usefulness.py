"""The hierarchy plan says how useful the small counts will be, before anything is spent: each level's
95 % margin, median count, margin ÷ count and share of categories below the margin, a plain warning when
most of a level is noise, and the margin of each level against ε (computed on a worker). Under add/remove
N is private: the file's row count is never used; the officer may type a published estimate."""

from __future__ import annotations

import threading

import numpy as np

from gui_helpers import TIMEOUT, make_window


def _settled(page) -> bool:
    return page.state_ws.state.planned is not None and not page.is_busy() and not page.curves.busy()


def test_the_plan_shows_usefulness_warnings_and_curves_computed_off_the_gui_thread(qtbot, monkeypatch, tmp_path):
    import dpgui.workspace.hierarchy_planning as workspace

    threads: list[bool] = []
    original = workspace.margin_curves

    def recording(*args, **kwargs):
        threads.append(threading.current_thread() is threading.main_thread())
        return original(*args, **kwargs)

    monkeypatch.setattr(workspace, "margin_curves", recording)
    window = make_window(qtbot, seed=2)
    window.start_page.hierarchy_sample_button.click()
    qtbot.waitUntil(lambda: window.in_hierarchy_mode(), timeout=TIMEOUT)
    page = window.hierarchy
    qtbot.waitUntil(lambda: _settled(page) and bool(page.curves.curves), timeout=120_000)
    planned = page.state_ws.state.planned
    assert threads and not any(threads)  # the curves were computed on a worker
    assert planned.plan.assumed_records == 336_776 and page.records.text() == "336,776"  # change: N is public
    assert not page.records.isEnabled() and page.warnings.isHidden()  # big counts at ε = 1: useful
    for level in (1, 2, 3):
        epsilons, margins = page.curves.curves[level]
        at = int(np.flatnonzero(epsilons == 1.0)[0])
        assert margins[at] == planned.errors.levels[level].margin95  # the curve passes through the plan
        assert margins[0] > margins[at] > margins[-1]
    assert 0 not in page.curves.curves  # the exact total has no error to draw

    # add/remove: N is private. The field never gets the file's count; no counts, no usefulness figures
    page.neighbours.setCurrentIndex(page.neighbours.findData("addremove"))
    qtbot.waitUntil(lambda: _settled(page) and page.state_ws.state.planned.plan.privacy.neighbours == "addremove",
                    timeout=120_000)
    assert page.records.isEnabled() and page.records.text() == ""
    assert page.state_ws.state.planned.errors.counts is None and page.table.item(3, 9).text() == "—"
    assert "estimate of N" in page.summary.text()
    # a typed published estimate, a small ε: the small categories will be mostly noise, and the page says so
    page.records.set_text("5000")
    page.epsilon.set_text("0.1")
    page.epsilon.edited.emit()
    qtbot.waitUntil(lambda: _settled(page) and page.state_ws.state.planned.plan.privacy.epsilon == 0.1,
                    timeout=120_000)
    planned = page.state_ws.state.planned
    assert planned.plan.assumed_records == 5000 and "5,000 records" in page.summary.text()
    assert not page.warnings.isHidden() and "&#x27;route&#x27;" in page.warnings.text() and "mostly noise" in page.warnings.text()
    route = planned.errors.levels[3]
    assert page.table.item(3, 11).text() == f"{100 * route.mostly_noise:.0f} %" and route.is_mostly_noise
    # the estimate was of this data's N: other data does not inherit it
    page.state_ws.open_file(tmp_path / "other.csv")
    assert page.records.text() == "" and page.state_ws.state.choice.records_estimate is None
