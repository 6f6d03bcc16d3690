"""Second audit of the window's human side (issue 28, items 6–18): what a privacy officer sees after the
seven branches met. Each test reproduces one finding of the audit; offscreen, seeded noise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gui_helpers import TIMEOUT, make_window, open_and_wait, set_column

from dpgui.app.projection_plots import ProjectionPlots
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan


def test_plots_come_back_after_the_window_was_small(qtbot):
    """The four projection plots go into tabs in a small window and back into the 2×2 grid when it grows:
    each of them is then visible again (they stayed hidden: the tab widget had hidden the pages it did not
    show, and the grid put them back hidden, leaving an empty plan step)."""
    widget = ProjectionPlots()
    qtbot.addWidget(widget)
    widget.resize(1000, 700)
    widget.show()
    widget.set_plan(auto_plan(1000, PrivacySpec(1.0)), 0.0, 5000.0)
    qtbot.waitUntil(lambda: not widget.busy, timeout=30_000)
    assert widget.layout_mode == "grid"
    widget.resize(600, 450)
    qtbot.waitUntil(lambda: widget.layout_mode == "tabs")
    widget.resize(1000, 700)
    qtbot.waitUntil(lambda: widget.layout_mode == "grid")
    qtbot.waitUntil(lambda: all(plot.isVisible() for plot, _name in widget._plots), timeout=2_000)
    assert all(plot.height() > 100 for plot, _name in widget._plots)


def _semicolon_csv(folder: Path) -> Path:
    """A semicolon-separated file with decimal commas (its dialect is suggested, and waits for Confirm)."""
    rng = np.random.default_rng(5)
    path = folder / "messungen.csv"
    rows = [f"{k};{rng.integers(1, 7)};{rng.gamma(2.2, 21000):.2f}".replace(".", ",")
            for k in rng.choice(["Nord", "Süd"], 400)]
    path.write_text("kreis;personen;einkommen\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_confirming_the_dialect_keeps_what_was_typed(qtbot, tmp_path):
    """A release waits for the CSV's dialect to be confirmed, so the officer presses Confirm after setting
    the column, bounds, K, the whole-number statement and the region: reading the file again with the
    confirmed dialect keeps all of them (it emptied the bounds, unselected the column and reset the region)."""
    window = make_window(qtbot)
    csv = _semicolon_csv(tmp_path)
    open_and_wait(qtbot, window, csv)
    page, plan_page = window.data_page, window.plan_page
    set_column(qtbot, window, "einkommen", "0", "250000", "500")
    page.whole_check.setChecked(True)
    plan_page.focus.setCurrentIndex(plan_page.focus.findData("upper"))
    qtbot.waitUntil(lambda: plan_page.plan is not None and plan_page.plan.focus is not None
                    and not plan_page.is_planning(), timeout=TIMEOUT)
    assert window.workspace.state.source.unconfirmed_dialect
    page.confirm_dialect()
    qtbot.waitUntil(lambda: not window.workspace.state.source.unconfirmed_dialect and not window.pool.busy(),
                    timeout=TIMEOUT)
    qtbot.waitUntil(lambda: plan_page.plan is not None and not plan_page.is_planning(), timeout=TIMEOUT)
    column = page.current_column()
    assert column is not None and column.name == "einkommen"
    assert (page.lower_field.value(), page.upper_field.value(), page.bins.value()) == (0, 250000, 500)
    assert page.whole_check.isChecked()
    assert plan_page.focus.currentData() == "upper"
    qtbot.waitUntil(lambda: plan_page.plan.focus is not None and plan_page.plan.shape.bins == 500, timeout=TIMEOUT)
    assert window.release_inputs() is not None  # nothing left to set again before the release
