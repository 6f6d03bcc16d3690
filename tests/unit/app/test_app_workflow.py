"""The whole point-and-click workflow, headless: load the sample → auto-optimize → accuracy first →
release → the quantile table and range tool agree with the released CDF → export."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from dpgui.core.mechanism import release as engine_release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.planner import auto_plan, margin95, plan_for_accuracy
from dpgui.data.histogram import column_histogram
from dpgui.data.sample import sample_dataset_path

from gui_helpers import make_window, release_and_wait, wait_plan

SAMPLE_ROWS = 336_776


@pytest.fixture
def sample_window(qtbot):
    window = make_window(qtbot, seed=11)
    window.open_sample()
    qtbot.waitUntil(lambda: window.table is not None, timeout=30_000)
    page = window.data_page
    qtbot.waitUntil(lambda: page.current_column() is not None, timeout=10_000)
    wait_plan(qtbot, window, 1000)
    return window


def test_sample_opens_with_public_bounds_from_the_metadata_file(sample_window):
    page = sample_window.data_page
    assert page.current_column().name == "distance"
    assert page.lower_field.value() == 0 and page.upper_field.value() == 5000
    assert "flights.schema.json" in page.bounds_note.text()
    assert f"{SAMPLE_ROWS:,} rows" in page.file_label.text()
    assert page.bins.value() == 1000
    assert page.model.rowCount() > 0 and page.model.rowCount() <= page.model.MAX_ROWS
    assert "5 (column units)" in page.bin_width.text()


def test_whole_workflow(qtbot, sample_window, tmp_path):
    window = sample_window
    plan_page = window.plan_page

    # ---- auto-optimize: the window's plan is the engine's best plan, better than equal budgets
    plan_page.auto_optimize()
    wait_plan(qtbot, window, 1000)
    plan = plan_page.plan
    expected = auto_plan(1000, PrivacySpec(1.0))
    assert plan.shape == expected.shape
    np.testing.assert_allclose(plan.level_epsilons, expected.level_epsilons, rtol=1e-9)
    assert math.fsum(plan.level_epsilons) == pytest.approx(1.0, rel=1e-12)
    equal = Plan(plan.shape, plan.privacy, equal_budgets(plan.shape, plan.privacy), plan.estimator)
    assert margin95(plan, "average") < margin95(equal, "average")
    qtbot.waitUntil(lambda: not plan_page.plots.projecting, timeout=30_000)  # the projection comes from a worker
    summary = plan_page.summary.text()
    assert f"± {margin95(plan, 'every'):,.1f} records" in summary and "worst point" in summary
    assert f"± {margin95(plan, 'average'):,.1f} records" in summary and "computing" not in summary

    # ---- accuracy first: ± 0.5 % of N at every point → the engine's smallest ε
    plan_page.target.set_text("0.5")
    plan_page.target_unit.setCurrentIndex(plan_page.target_unit.findData("percent"))
    assert plan_page.public_n.value() == SAMPLE_ROWS  # N is public under the change model
    before = plan_page.plan
    plan_page.accuracy_first()
    qtbot.waitUntil(lambda: plan_page.plan is not before and not plan_page.is_planning(), timeout=30_000)
    target = 0.005 * SAMPLE_ROWS
    reference = plan_for_accuracy(1000, PrivacySpec(1.0), target, "every")
    plan = plan_page.plan
    assert plan.privacy.epsilon == reference.privacy.epsilon
    assert plan_page.epsilon.value() == reference.privacy.epsilon
    assert margin95(plan, "every") <= target
    assert f"{reference.privacy.epsilon:g}" in plan_page.accuracy_result.text()

    # ---- release (confirmation answered "Release"), with seeded test noise
    release_and_wait(qtbot, window)
    outcome = window.cdf.outcome
    released = outcome.release
    assert released.plan == plan
    assert not released.secure  # seeded noise is flagged, and the window says so
    assert "TEST NOISE" in window.release_status.text()
    # An independent recomputation of the same release gives the same numbers.
    hist = column_histogram(sample_dataset_path(), "distance", 0, 5000, 1000, "drop")
    again = engine_release(hist.counts, plan, SeededRandom(11), 0.0, 5000.0, "l2")
    np.testing.assert_array_equal(released.cumulative, again.cumulative)
    assert released.total == SAMPLE_ROWS

    # ---- quantile table: each value is where the released CDF crosses its probability
    view = window.result_view
    rows = view.quantile_rows()
    assert {round(p, 2) for p, *_ in rows} >= {0.1, 0.25, 0.5, 0.75, 0.9}
    cumulative = np.asarray(released.cumulative, dtype=float)
    edges = np.linspace(0, 5000, 1001)
    for p, value, low, high in rows:
        assert low <= value <= high
        target_count = p * released.total
        j = int(np.searchsorted(cumulative, target_count, side="left"))  # first bin reaching p·N
        assert edges[j] - 1e-9 <= value <= edges[j + 1] + 1e-9
        assert (cumulative[j - 1] if j else 0) <= target_count <= cumulative[j]

    # ---- range tool: a difference of released cumulative counts at the bin edges
    view.set_range(500, 1500)
    result = view.range_result()
    assert result is not None
    assert result.count == cumulative[299] - cumulative[99]
    assert result.low < result.count < result.high
    assert f"{int(result.count):,}" in view.range_result_label.text()

    # ---- histogram bars sum to N; the confidential curve is hidden until asked for
    assert view.true_curve is None
    assert view.true_checkbox.isEnabled() and not view.true_checkbox.isChecked()

    # ---- export: the CSV holds exactly the released values
    out = tmp_path / "distance-cdf.csv"
    assert window.cdf.export_to(str(out))
    with out.open() as handle:
        table = list(csv.DictReader(handle))
    assert len(table) == 1000
    assert [int(r["cumulative_count"]) for r in table] == [int(c) for c in released.cumulative]
    assert not list(tmp_path.glob(".*.tmp"))


def test_linked_budgets_keep_the_sum_and_respect_locks(qtbot, sample_window):
    window = sample_window
    page = window.plan_page
    page.branching.set_text("11")  # 11³ covers the 1000 bins and the leaf for missing values
    page.branching.edited.emit()
    wait_plan(qtbot, window, 1000)
    editor = page.budgets
    assert len(editor.budgets()) == 3  # levels 1..3 (the root is exact under 'change')
    editor.set_budget(1, 0.5)
    assert page.plan.level_epsilons[0] == pytest.approx(0.5, abs=1e-4)
    assert math.fsum(page.plan.level_epsilons) == pytest.approx(1.0, rel=1e-12)
    editor.set_locked(1)
    editor.set_budget(2, 0.1)
    eps = page.plan.level_epsilons
    assert eps[0] == pytest.approx(0.5, abs=1e-4) and eps[1] == pytest.approx(0.1, abs=1e-4)
    assert eps[2] == pytest.approx(0.4, abs=1e-4)
    # Auto-optimize keeps the locked level.
    page.auto_optimize()
    qtbot.waitUntil(lambda: not page.is_planning(), timeout=30_000)
    assert page.plan.level_epsilons[0] == pytest.approx(0.5, abs=1e-4)
    assert math.fsum(page.plan.level_epsilons) == pytest.approx(1.0, rel=1e-12)
    # Locking all but the edited level: the edit is refused with a message, the sum is unchanged.
    editor.set_locked(2)
    editor.set_budget(3, 0.2)
    assert "locked" in editor.message.text()
    assert math.fsum(editor.budgets()) == pytest.approx(1.0, abs=1e-3)


def test_presets_and_neighbour_model_replan_live(qtbot, sample_window):
    window = sample_window
    page = window.plan_page
    page.preset_buttons["Strict"].click()
    qtbot.waitUntil(lambda: page.plan.privacy.epsilon == 0.1 and not page.is_planning(), timeout=30_000)
    strict = margin95(page.plan, "average")
    page.preset_buttons["Loose"].click()
    qtbot.waitUntil(lambda: page.plan.privacy.epsilon == 4.0 and not page.is_planning(), timeout=30_000)
    assert margin95(page.plan, "average") < strict / 20  # error ∝ 1/ε: 40× smaller
    page.neighbours.setCurrentIndex(page.neighbours.findData("addremove"))
    qtbot.waitUntil(lambda: page.plan.privacy.neighbours == "addremove" and not page.is_planning(), timeout=30_000)
    assert len(page.plan.level_epsilons) == page.plan.shape.height + 1  # the root is noised too
    assert "noise" in page.neighbours_help.text().lower()


def test_cancelled_confirmation_spends_nothing(qtbot, sample_window):
    from gui_helpers import click_release_in_confirmation

    window = sample_window
    click_release_in_confirmation("Cancel")
    window.release()
    qtbot.wait(100)
    assert window.cdf.outcome is None
    assert "Nothing was spent" in window.statusBar().currentMessage()
