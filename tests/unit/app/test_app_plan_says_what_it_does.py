"""The plan step says what its settings do.

* Accuracy first with a region targets the region and says so in the list, in its result and in the
  projected error: the same figure in all three places.
* The region presets are parts of the range between the bounds, named with them.
* A region is kept with its data source (never carried to another file), stored in the project file
  (the preset, not a reconstruction) and named in the release confirmation.
* The missing-value rule can count missing values as a value the officer chooses: no missing leaf,
  stored in the project, named in the confirmation.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpgui.core.focus import FocusChoice, Region, value_span
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan, margin95, plan_for_accuracy
from dpgui.formatting import format_margin_records
from dpgui.report.project_file import load_project, project_to_json, save_project
from dpgui.workspace.release import ReleaseRequest, confirmation_text, release_request

from focus_helpers import choose, settled

from gui_helpers import TIMEOUT, open_and_wait, sample_window_planned, set_column, type_into, wait_plan

SAMPLE_BINS = 1000


def projected(qtbot, page) -> None:
    settled(qtbot, page)
    qtbot.waitUntil(lambda: page.plots.projection is not None and page.plots.projection.plan is page.plan
                    and not page.plots.busy and "computing" not in page.summary.text(), timeout=TIMEOUT)


@pytest.fixture
def window(qtbot):
    window = sample_window_planned(qtbot, seed=4)
    settled(qtbot, window.plan_page)
    return window


def test_accuracy_first_for_a_region_targets_and_shows_the_same_region(qtbot, window):
    page = window.plan_page
    context = page._context
    width = (context.upper - context.lower) / SAMPLE_BINS
    low, high = context.lower + 400 * width, context.lower + 700 * width  # a typed region, as the officer's 400–700
    page.focus.setCurrentIndex(page.focus.findData("between"))
    type_into(qtbot, page.focus_from, f"{low:g}")
    type_into(qtbot, page.focus_to, f"{high:g}")
    settled(qtbot, page)
    span = value_span(low, high, context.lower, context.upper, SAMPLE_BINS)
    region = f"{context.label} from {low:g} to {high:g}"
    page.target_where.setCurrentIndex(page.target_where.findData("every"))
    assert page.target_where.currentText() == f"at every point of {region} (worst case)"  # not "of the CDF"
    page.target.set_text("60")
    before = page.plan
    page.accuracy_first()
    qtbot.waitUntil(lambda: page.plan is not before, timeout=TIMEOUT)
    projected(qtbot, page)
    plan = page.plan
    reference = plan_for_accuracy(SAMPLE_BINS, PrivacySpec(1.0), 60.0, "every", focus=span)
    assert plan == reference
    achieved = format_margin_records(margin95(reference, "every", span))
    assert margin95(reference, "every", span) <= 60.0
    assert f"{achieved} at every point of {region}" in page.accuracy_result.text()
    summary = page.summary.text()
    assert f"In {region}: {achieved}" in summary  # the figure accuracy first reached, where it was reached
    assert "at the worst point of the CDF" in summary  # and the whole CDF's, named as such
    # back to everywhere: the list speaks of the whole CDF again
    choose(qtbot, page, "everywhere")
    assert page.target_where.currentText() == "at every point of the CDF (worst case)"


def test_presets_are_parts_of_the_range_between_the_bounds_and_say_so(qtbot, window):
    page = window.plan_page
    context = page._context
    lower, upper = context.lower, context.upper
    tenth = (upper - lower) / 10

    def span(a: float, b: float) -> str:  # one style for a list: a dash unless the range has negative values
        return f"{a:g}–{b:g}" if lower >= 0 else f"{a:g} to {b:g}"

    texts = {page.focus.itemData(i): page.focus.itemText(i) for i in range(page.focus.count())}
    bounds = span(lower, upper)
    assert texts["lower"] == f"The lowest 10 % of the range {bounds} ({span(lower, lower + tenth)})"
    assert texts["upper"] == f"The highest 10 % of the range {bounds} ({span(upper - tenth, upper)})"
    assert texts["middle"] == f"The middle 20 % of the range {bounds} ({span(lower + 4 * tenth, lower + 6 * tenth)})"
    assert texts["everywhere"] == "Everywhere (default)"


def test_a_region_stays_with_its_data_source(qtbot, window, tmp_path):
    page = window.plan_page
    choose(qtbot, page, "lower")
    assert page.plan.focus is not None
    other = tmp_path / "ages.csv"
    rng = np.random.default_rng(1)
    other.write_text("age\n" + "\n".join(str(v) for v in rng.integers(0, 90, 300)) + "\n")
    open_and_wait(qtbot, window, other)
    set_column(qtbot, window, "age", "0", "90", "90")
    wait_plan(qtbot, window, 90)
    assert page.focus.currentData() == "everywhere" and page.focus_note.text() == ""
    assert page.plan.focus is None and page.plan == auto_plan(90, PrivacySpec(1.0))
    assert window.workspace.state.plan.focus == FocusChoice(Region.EVERYWHERE)


def test_the_region_preset_and_the_imputed_value_are_saved_restored_and_confirmed(qtbot, window, tmp_path):
    page = window.plan_page
    choose(qtbot, page, "lower")
    focused = page.plan
    assert focused.focus is not None
    state = window.workspace.state
    request = release_request(state)
    assert isinstance(request, ReleaseRequest)
    words = confirmation_text(request)
    assert "Region you need accurate (the lowest 10 % of the range" in words and "The report and the manifest" in words
    project = state.to_project()
    assert project is not None and project.focus == {"region": "lower", "from": None, "to": None}
    assert '"focus": {' in project_to_json(project)
    target = tmp_path / "work.dpgui"
    save_project(project, target)
    assert load_project(target).focus == project.focus
    # a fresh page shows the preset again, not a reconstruction "between … and …"
    page.apply_plan(None, "l2")
    settled(qtbot, page)
    saved = load_project(target)
    page.apply_plan(saved.plan_object(), saved.consistency, focus=FocusChoice.from_json(saved.focus))
    assert page.focus.currentData() == "lower" and page.focus_between.isHidden()
    assert "the lowest 10 % of the range" in page.focus_note.text()
    # the missing-value rule: counted as 0 (no leaf of their own), saved and confirmed
    choose(qtbot, page, "everywhere")
    rule = page.missing_rule
    assert not rule.row.isHidden() and rule.value.isHidden()
    rule.combo.setCurrentIndex(rule.combo.findData("impute"))
    assert not rule.value.isHidden()
    before = page.plan
    type_into(qtbot, rule.value, "-5")
    qtbot.waitUntil(lambda: page.plan is not before and page.plan.privacy.impute == -5.0, timeout=TIMEOUT)
    settled(qtbot, page)
    assert not page.plan.shape.missing_leaf and page.plan == auto_plan(SAMPLE_BINS, PrivacySpec(1.0, impute=-5.0))
    assert "counted as the public value -5" in page.summary.text()
    request = release_request(window.workspace.state)
    assert isinstance(request, ReleaseRequest) and "counted as the public value -5" in confirmation_text(request)
    project = window.workspace.state.to_project()
    assert project is not None and project.missing_impute == -5.0 and project.plan["missing_impute"] == -5.0
    # a bad value is refused beside the field and no plan is offered for release
    type_into(qtbot, rule.value, "five")
    qtbot.waitUntil(lambda: window.workspace.state.plan.privacy is None, timeout=TIMEOUT)
    assert not isinstance(release_request(window.workspace.state), ReleaseRequest)
    # under add/remove nothing is asked: missing rows are left out
    page.neighbours.setCurrentIndex(page.neighbours.findData("addremove"))
    assert rule.row.isHidden() and "left out" in rule.help.text()
    settled(qtbot, page)
    assert page.plan.privacy.impute is None and page.plan.missing_rule == "drop"
