"""A region of focus in the window: "Where do you need accuracy?" in the plan step. The region's offer is
planned on the worker with the plan, shown in plain words, and used only when it lowers the 95 % margin
there (the figure shown) by at least 5 %; a bad region is refused under the list and the plan is for the
whole range."""

from __future__ import annotations

import pytest

from dpgui.core.focus import focus_offer, value_span
from dpgui.core.plan import Plan, PrivacySpec
from dpgui.core.planner import auto_plan, margin95
from dpgui.formatting import format_margin_records

from gui_helpers import TIMEOUT, sample_window_planned, type_into
from focus_helpers import choose, settled

SAMPLE_BINS = 1000


@pytest.fixture
def page(qtbot):
    window = sample_window_planned(qtbot, seed=4)
    settled(qtbot, window.plan_page)
    return window.plan_page


def test_a_tail_that_pays_is_offered_in_words_and_its_plan_is_used(qtbot, page):
    context = page._context
    default = auto_plan(SAMPLE_BINS, PrivacySpec(1.0))
    assert page.plan == default and page.plan.focus is None and page.focus_note.text() == ""
    choose(qtbot, page, "lower")
    span = value_span(context.lower, context.lower + 0.1 * (context.upper - context.lower), context.lower,
                      context.upper, SAMPLE_BINS)
    assert span == (1, 100)
    offer = focus_offer(SAMPLE_BINS, PrivacySpec(1.0), span)  # computed here again, independently of the page
    assert offer.worth_it
    assert page.plan == offer.focused_plan and page.plan.focus == span
    assert page._workspace.state.plan.plan is page.plan  # the plan a release would use
    words = page.focus_note.text()
    default_margin, focused_margin = offer.margins()
    assert f"({100 * offer.gain:.0f} % smaller)" in words and "That plan is used" in words
    # the percentage is the one of the margins shown beside it, not of squared errors
    assert 100 * offer.gain == pytest.approx(100 * (1 - focused_margin / default_margin))
    assert format_margin_records(focused_margin) in words and format_margin_records(default_margin) in words
    assert f"the range {context.lower:g}–{context.upper:g} ({context.lower:g}–" in words
    assert page.focus_message.isHidden()
    whole = margin95(offer.focused_plan, "average"), margin95(default, "average")
    assert whole[0] > whole[1] and f"{format_margin_records(whole[0])} instead of {format_margin_records(whole[1])}" in words
    assert page.focus.toolTip() and page.focus_note.toolTip()
    # plot (a) shades the region: CDF points 1..100 sit at the upper edges of bins 1..100
    qtbot.waitUntil(lambda: page.plots.projection is not None and page.plots.projection.plan is page.plan
                    and not page.plots.busy, timeout=TIMEOUT)
    width = (context.upper - context.lower) / SAMPLE_BINS
    assert page.plots.focus_band.isVisible()
    assert page.plots.focus_band.getRegion() == pytest.approx((context.lower + width, context.lower + 100 * width))
    # back to everywhere: the plan for the whole range again, and no words about a region
    choose(qtbot, page, "everywhere")
    assert page.plan == default and page.plan.focus is None and page.focus_note.text() == ""
    qtbot.waitUntil(lambda: page.plots.projection.plan is page.plan and not page.plots.busy, timeout=TIMEOUT)
    assert not page.plots.focus_band.isVisible()


def test_a_region_that_gains_under_five_percent_keeps_the_whole_range_plan(qtbot, page):
    context = page._context
    width = (context.upper - context.lower) / SAMPLE_BINS
    low, high = context.lower + 200 * width, context.lower + 350 * width
    offer = focus_offer(SAMPLE_BINS, PrivacySpec(1.0), (200, 350))
    assert not offer.worth_it and 0 < offer.gain < 0.05
    page.focus.setCurrentIndex(page.focus.findData("between"))
    assert not page.focus_between.isHidden() and page.focus_message.isHidden()  # nothing typed yet: no error
    type_into(qtbot, page.focus_from, f"{low:g}")
    before = page.plan
    type_into(qtbot, page.focus_to, f"{high:g}")
    qtbot.waitUntil(lambda: page.plan is not before and "5 %" in page.focus_note.text(), timeout=TIMEOUT)
    settled(qtbot, page)
    assert page.plan == auto_plan(SAMPLE_BINS, PrivacySpec(1.0)) and page.plan.focus is None
    words = page.focus_note.text()
    assert f"only {100 * offer.gain:.0f} % smaller" in words and "plan for the whole range is kept" in words
    default_margin, focused_margin = offer.margins()
    assert format_margin_records(focused_margin) in words and format_margin_records(default_margin) in words


@pytest.mark.parametrize("start, end, words", [("60", "40", "inverted"), ("-1e9", "40", "outside the bounds")])
def test_a_bad_region_is_refused_inline_and_the_plan_is_for_the_whole_range(qtbot, page, start, end, words):
    context = page._context
    choose(qtbot, page, "lower")
    assert page.plan.focus is not None
    low = context.lower + float(start) / 100 * (context.upper - context.lower) if start != "-1e9" else -1e9
    high = context.lower + float(end) / 100 * (context.upper - context.lower)
    page.focus.setCurrentIndex(page.focus.findData("between"))
    type_into(qtbot, page.focus_from, f"{low:g}")
    type_into(qtbot, page.focus_to, f"{high:g}")
    qtbot.waitUntil(lambda: not page.focus_message.isHidden(), timeout=TIMEOUT)
    settled(qtbot, page)
    message = page.focus_message.text()
    assert words in message and "whole range" in message
    assert page.plan == auto_plan(SAMPLE_BINS, PrivacySpec(1.0)) and page.plan.focus is None
    assert page.focus_note.text() == ""


def test_a_saved_focused_plan_comes_back_with_its_region(qtbot, page):
    offer = focus_offer(SAMPLE_BINS, PrivacySpec(1.0), (900, 1000))
    saved = Plan.from_json(offer.focused_plan.to_json())
    page.apply_plan(saved, "l2")
    assert page.plan is saved and page.focus.currentData() == "between" and not page.focus_between.isHidden()
    context = page._context
    low, high = page.focus_from.value(), page.focus_to.value()
    assert value_span(low, high, context.lower, context.upper, SAMPLE_BINS) == (900, 1000)
    assert "saved plan was made for" in page.focus_note.text()


def test_accuracy_first_with_a_region_finds_the_smallest_epsilon_for_that_region(qtbot, page):
    from dpgui.core.planner import plan_for_accuracy

    choose(qtbot, page, "lower")
    page.target.set_text("30")
    page.target_where.setCurrentIndex(page.target_where.findData("average"))
    before = page.plan
    page.accuracy_first()
    qtbot.waitUntil(lambda: page.plan is not before and not page.is_planning(), timeout=TIMEOUT)
    reference = plan_for_accuracy(SAMPLE_BINS, PrivacySpec(1.0), 30.0, "average", focus=(1, 100))
    whole = plan_for_accuracy(SAMPLE_BINS, PrivacySpec(1.0), 30.0, "average")
    plan = page.plan
    assert plan == reference and plan.focus == (1, 100) and plan.privacy.epsilon < whole.privacy.epsilon
    assert margin95(plan, "average", (1, 100)) <= 30.0
    words = page.accuracy_result.text()
    context = page._context
    region = f"the lowest 10 % of the range {context.lower:g}–{context.upper:g}"
    assert f"{reference.privacy.epsilon:g}" in words and f"on average over {region}" in words
