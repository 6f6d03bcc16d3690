"""The result view shows only released values; the confidential truth only behind its toggle."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from dpgui.app.cdf.result_view import (
    CONFIDENTIAL_BANNER, CONFIDENTIAL_LEGEND, PROBABILITIES, RANGE_ERROR, ResultView,
)
from dpgui.core.mechanism import release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.quantiles import quantiles, range_count
from dpgui.formatting import format_fixed

LOWER, UPPER, K = 0.0, 1000.0, 100  # bins 10 wide: values are not bin indices


def _counts(k: int, n: int = 20_000, seed: int = 0) -> np.ndarray:
    values = np.random.default_rng(seed).gamma(3.0, 80.0, n)
    return np.bincount(np.clip((values / UPPER * k).astype(int), 0, k - 1), minlength=k)


@pytest.fixture(scope="module")
def data():
    counts = _counts(K)
    return counts, release(counts, auto_plan(K, PrivacySpec(1.0)), SeededRandom(3), LOWER, UPPER, "l2")


@pytest.fixture
def view(qtbot, data):
    counts, result = data
    widget = ResultView()
    qtbot.addWidget(widget)
    widget.resize(1000, 700)
    widget.set_release(result, "distance", counts)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _legend_texts(widget: ResultView) -> list[str]:
    return [label.text for _, label in widget.cdf_plot.getPlotItem().legend.items]


def _plain(label) -> str:
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setHtml(label.text())
    return doc.toPlainText()


# --- quantile table ---------------------------------------------------------------------------

def test_quantile_table_equals_quantiles_and_brackets_the_released_cdf(view, data):
    _, result = data
    rows = view.quantile_rows()
    expected = quantiles(result, PROBABILITIES)
    assert rows == [(q.probability, q.value, q.low, q.high) for q in expected]
    probs = [r[0] for r in rows]
    assert probs == sorted(probs)
    assert {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.25, 0.75} == set(probs)
    width = (UPPER - LOWER) / K
    cdf = result.cdf
    for p, value, low, high in rows:
        assert low <= value <= high
        j = int(np.ceil((value - LOWER) / width - 1e-9)) - 1  # the bin whose upper edge is at or above value
        assert cdf[j] >= p - 1e-12 and (j == 0 or cdf[j - 1] <= p + 1e-12)
        # the released CDF as drawn (linear between bin edges) passes through p at the quantile
        x, y = view.cdf_curve.getOriginalDataset()
        assert np.interp(value, x, y) == pytest.approx(p, abs=1e-9)


def test_quantile_table_is_readable(view):
    model = view.quantile_table.model()
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert [h.replace("\n", " ") for h in headers] == ["Quantile", "Estimate (interpolated)", "95 % interval low",
                                                              "95 % interval high"]
    assert "95 %" in model.headerData(2, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    median = [r[0] for r in view.quantile_rows()].index(0.5)
    assert model.data(model.index(median, 0)) == "50 % (median)"
    assert model.data(model.index(median, 1), Qt.ItemDataRole.FontRole).bold()
    assert model.data(model.index(0, 1), Qt.ItemDataRole.FontRole) is None
    # bins are 10 wide: whole numbers
    value = view.quantile_rows()[median][1]
    assert model.data(model.index(median, 1)) == format_fixed(value, 0)
    tip = model.data(model.index(median, 1), Qt.ItemDataRole.ToolTipRole)
    assert "distance" in tip
    # the value says what it is: an interpolation inside a named bin; the interval is for the true quantile
    q = next(q for q in view.quantile_model.rows() if q.probability == 0.5)
    assert f"linear interpolation inside bin [{format_fixed(q.bin_low, 0)}, {format_fixed(q.bin_high, 0)})" in tip
    assert "true 50 % point of the data" in tip
    assert "interpolation" in model.headerData(1, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)


def test_number_formatting():
    assert format_fixed(12345.678, 1) == "12,345.7"
    assert format_fixed(-0.001, 0) == "0"
    assert format_fixed(1_000_000, 0) == "1,000,000"


# --- range tool -------------------------------------------------------------------------------

def test_range_tool_equals_range_count_and_released_differences(view, data):
    _, result = data
    view.from_spin.setValue(100.0)  # as the user would: through the spin boxes
    view.to_spin.setValue(200.0)
    answer = view.range_result()
    assert answer == range_count(result, 100.0, 200.0)
    assert answer.count == result.cumulative[19] - result.cumulative[9]
    text = _plain(view.range_result_label)
    assert f"About {format_fixed(answer.count, 0)} records between 100 and 200 distance" in text
    assert "95 % interval" in text and "rounded" not in text

    view.set_range(207.0, 494.0)  # snapped to the bin edges 210 and 490
    answer = view.range_result()
    assert answer == range_count(result, 207.0, 494.0)
    assert (answer.start, answer.stop) == (210.0, 490.0)
    assert answer.count == result.cumulative[48] - result.cumulative[20]
    assert "rounded to the nearest bin edges" in _plain(view.range_result_label)
    assert "bin edge" in view.from_spin.toolTip()


def test_range_spin_boxes_are_limited_to_the_domain_and_step_by_a_bin(view):
    for spin in (view.from_spin, view.to_spin):
        assert (spin.minimum(), spin.maximum(), spin.singleStep()) == (LOWER, UPPER, 10.0)


@pytest.mark.parametrize("start, stop", [(300.0, 300.0), (400.0, 300.0)])
def test_empty_range_shows_an_inline_message(view, start, stop):
    view.set_range(start, stop)
    assert view.range_result() is None
    assert view.range_error_label.isVisible()
    assert view.range_error_label.text() == RANGE_ERROR
    view.set_range(100.0, 300.0)
    assert view.range_result() is not None and not view.range_error_label.isVisible()


# --- histogram and plot -----------------------------------------------------------------------

def test_histogram_is_derived_from_the_released_cdf(view, data):
    _, result = data
    view.show_fraction(False)
    heights = np.asarray(view.hist_bars.opts["height"], dtype=float)
    assert heights.size == K
    assert heights.sum() == pytest.approx(result.values_total)  # C_K: the values (N − the missing count)
    np.testing.assert_allclose(heights, np.diff(np.concatenate(([0], result.cumulative))))
    view.show_fraction(True)
    assert np.asarray(view.hist_bars.opts["height"]).sum() == pytest.approx(1.0)
    assert "groups" not in view.hist_plot.getPlotItem().titleLabel.text


def test_cdf_band_and_fraction_or_records(view, data):
    _, result = data
    x, y = view.cdf_curve.getOriginalDataset()
    assert x[0] == LOWER and x[-1] == UPPER and y[-1] == pytest.approx(1.0)
    _, low = view.band_low.getData()
    _, high = view.band_high.getData()
    assert np.all(low <= y + 1e-12) and np.all(y <= high + 1e-12)
    assert low.min() >= 0.0 and high.max() <= 1.0
    plot = view.cdf_plot.getPlotItem()
    assert plot.getAxis("left").labelText == "Fraction of records at or below"
    assert plot.getAxis("bottom").labelText == "distance"
    assert _legend_texts(view) == ["Released CDF", "95 % band"]

    view.show_fraction(False)
    _, y = view.cdf_curve.getOriginalDataset()
    assert y[-1] == pytest.approx(result.values_total)  # C_K: N less the released missing count
    assert np.all(view.band_high.getData()[1] <= result.total)
    assert plot.getAxis("left").labelText == "Number of records at or below"


# --- confidential toggle ----------------------------------------------------------------------

def test_true_cdf_only_behind_the_toggle(view, data):
    counts, _ = data
    assert view.true_checkbox.isEnabled() and not view.true_checkbox.isChecked()
    assert view.true_curve is None and not view.banner.isVisible()
    assert CONFIDENTIAL_LEGEND not in _legend_texts(view)
    rows_before, range_before = view.quantile_rows(), view.range_result()
    hist_before = np.array(view.hist_bars.opts["height"], copy=True)

    view.true_checkbox.setChecked(True)
    assert view.true_curve is not None
    _x, y = view.true_curve.getOriginalDataset()
    np.testing.assert_allclose(y, np.concatenate(([0], np.cumsum(counts))) / counts.sum())
    assert view.true_curve.opts["pen"].style() == Qt.PenStyle.DashLine
    assert CONFIDENTIAL_LEGEND in _legend_texts(view)
    assert view.banner.isVisible() and view.banner.text() == CONFIDENTIAL_BANNER
    # nothing else uses the truth
    assert view.quantile_rows() == rows_before and view.range_result() == range_before
    np.testing.assert_array_equal(view.hist_bars.opts["height"], hist_before)

    view.show_fraction(False)
    np.testing.assert_allclose(view.true_curve.getOriginalDataset()[1], np.concatenate(([0], np.cumsum(counts))))

    view.true_checkbox.setChecked(False)
    assert view.true_curve is None and not view.banner.isVisible()
    assert CONFIDENTIAL_LEGEND not in _legend_texts(view)
    drawn = view.cdf_plot.getPlotItem().listDataItems()
    assert set(map(id, drawn)) == {id(view.cdf_curve), id(view.band_low), id(view.band_high)}  # released only


def test_no_true_counts_disables_the_toggle(qtbot, data):
    _, result = data
    widget = ResultView()
    qtbot.addWidget(widget)
    widget.set_release(result, "distance")
    widget.show()
    assert not widget.true_checkbox.isEnabled()
    widget.true_checkbox.setChecked(True)  # even if forced, there is nothing to show
    assert widget.true_curve is None and not widget.banner.isVisible()


def test_new_release_and_clear_hide_the_truth(view, data):
    counts, result = data
    view.true_checkbox.setChecked(True)
    view.set_release(result, "distance", counts)
    assert not view.true_checkbox.isChecked() and view.true_curve is None and not view.banner.isVisible()
    view.true_checkbox.setChecked(True)
    view.clear()
    assert view.true_curve is None and not view.banner.isVisible() and not view.true_checkbox.isEnabled()
    assert view.quantile_rows() == [] and view.range_result() is None


def test_true_counts_of_the_wrong_size_are_refused(qtbot, data):
    _, result = data
    widget = ResultView()
    qtbot.addWidget(widget)
    with pytest.raises(ValueError):
        widget.set_release(result, "distance", np.ones(K + 1))


# --- large K and screenshots ------------------------------------------------------------------

def test_65536_bins_render_in_at_most_200_bars(qtbot):
    """The histogram of any K is drawn as at most 200 bars: the rule that keeps showing a release
    fast (benchmarks/bench_responsiveness.py measures the GUI thread while a K = 65,536 one is shown)."""
    k = 65_536
    counts = _counts(k, n=100_000)
    result = release(counts, auto_plan(k, PrivacySpec(1.0)), SeededRandom(5), LOWER, UPPER, "l2")
    widget = ResultView()
    qtbot.addWidget(widget)
    widget.resize(1000, 700)
    widget.show()
    qtbot.waitExposed(widget)
    widget.set_release(result, "distance", counts)
    image = widget.grab()
    assert not image.isNull()
    heights = np.asarray(widget.hist_bars.opts["height"])  # fraction of records (the default)
    assert heights.size <= 200 and heights.sum() == pytest.approx(1.0)
    assert widget.hist_counts.sum() == pytest.approx(result.values_total)
    assert "shown in 200 groups of up to 328 bins" in widget.hist_plot.getPlotItem().titleLabel.text
    assert widget.quantile_rows() == [(q.probability, q.value, q.low, q.high) for q in quantiles(result, PROBABILITIES)]


def test_screenshots_at_1000_by_700(view, tmp_path):
    for on in (True, False):
        view.true_checkbox.setChecked(on)
        image = view.grab().toImage()
        assert (image.width(), image.height()) == (1000 * image.devicePixelRatio(), 700 * image.devicePixelRatio())
        path = tmp_path / f"result_view_{'on' if on else 'off'}.png"
        assert image.save(str(path)) and path.stat().st_size > 10_000
    # no part of the right-hand panel is squeezed behind a scroll bar at this size
    assert not view.quantile_table.horizontalScrollBar().isVisible()


def test_band_envelope_thins_without_narrowing_the_band():
    from dpgui.core.thinning import band_envelope

    rng = np.random.default_rng(3)
    x = np.linspace(0, 1, 65_537)
    mid = np.cumsum(rng.random(x.size))
    low, high = mid - rng.random(x.size) * 5, mid + rng.random(x.size) * 5
    xs, lows, highs = band_envelope(x, low, high, points=2048)
    assert xs.size <= 2048 + 2
    assert np.all(np.diff(xs) >= 0)
    # Each original point lies inside the drawn band at its own x (piecewise-constant per group).
    group = np.searchsorted(xs[1::2], x, side="left")
    assert np.all(lows[2 * group] <= low) and np.all(highs[2 * group] >= high)
    small = band_envelope(x[:100], low[:100], high[:100])
    assert small[0] is x[:100] or np.array_equal(small[0], x[:100])


def test_range_interval_is_not_cut_at_the_noisy_n(qtbot):
    """Under add/remove the released N is noisy: the range counter's interval (for all records here) is
    shown as range_count computes it, not clipped to the released N, which can lie below the truth."""
    counts = _counts(K, seed=4)
    result = release(counts, auto_plan(K, PrivacySpec(1.0, "addremove")), SeededRandom(5), LOWER, UPPER, "l2")
    widget = ResultView()
    qtbot.addWidget(widget)
    widget.set_release(result, "distance", counts)
    widget.set_range(LOWER, UPPER)
    answer = widget.range_result()
    assert answer == range_count(result, LOWER, UPPER)
    assert answer.high > result.total  # the interval reaches above the released N …
    assert answer.low <= counts.sum() <= answer.high  # … and holds the true count
    text = _plain(widget.range_result_label)
    assert f"95 % interval {format_fixed(answer.low, 0)} – {format_fixed(answer.high, 0)}" in text


def test_clearing_leaves_nothing_of_the_release_on_screen(view):
    """Step 4 after other data opens: no title, axis or range unit of the previous release's column."""
    view.clear()
    plot = view.cdf_plot.getPlotItem()
    assert "distance" not in plot.titleLabel.text
    assert all("distance" not in p.getPlotItem().getAxis("bottom").labelText for p in (view.cdf_plot, view.hist_plot))
    assert view.from_spin.suffix() == "" and view.to_spin.suffix() == ""
    assert view.summary.text() == "No release yet."
    assert view.moments_label.text() == "" and view.moments() is None


# --- mean and sum -----------------------------------------------------------------------------

def test_mean_and_sum_are_shown_in_words_with_their_intervals(view, data):
    """The box says the mean and the sum of cdf_moments, each with its noise margin, the binning allowance
    (half a bin: 5 for bins 10 wide) and the interval; the true clamped mean of the counts' midpoints lies in it."""
    from dpgui.core.cdf_moments import cdf_moments

    counts, result = data
    moments = cdf_moments(result)
    assert view.moments() == moments and moments.mean is not None
    text = _plain(view.moments_label)
    mean = moments.mean
    assert f"Mean: {format_fixed(mean.value, 2)} ± {format_fixed(mean.noise_margin, 2)} (95 %)" in text
    assert f"binning adds at most ± 5.00: {format_fixed(mean.low, 2)} to {format_fixed(mean.high, 2)}" in text
    assert "Sum: " in text and "± 5.0 per value" in text and "In the units of distance" in text
    mids = np.arange(K) * 10.0 + 5.0
    assert mean.low <= float(mids @ counts / counts.sum()) <= mean.high


def test_a_release_without_a_positive_total_says_there_is_no_mean(qtbot):
    from dpgui.core.cdf_moments import NO_MEAN
    from dpgui.core.mechanism import release_from_levels
    from dpgui.core.plan import Plan
    from dpgui.core.tree import TreeShape

    shape = TreeShape(4, (2, 2))
    plan = Plan(shape, PrivacySpec(1.0, "addremove"), (1 / 3, 1 / 3, 1 / 3))
    levels = [np.array([-3.0]), np.array([-1.0, -2.0]), np.array([0.0, -1.0, -1.0, 0.0])]
    widget = ResultView()
    qtbot.addWidget(widget)
    widget.set_release(release_from_levels(plan, levels, 0.0, 4.0, "l2", secure=False), "distance")
    assert NO_MEAN[1:] in _plain(widget.moments_label)


def test_whole_numbers_on_centred_bins_show_no_binning(qtbot):
    """A whole-number column on bins one whole number wide: every value is its bin's midpoint, so binning adds ± 0;
    without the statement the same release shows half a bin."""
    counts = np.random.default_rng(2).integers(0, 50, 20)
    result = release(counts, auto_plan(20, PrivacySpec(1.0)), SeededRandom(4), -0.5, 19.5, "l2")
    widget = ResultView()
    qtbot.addWidget(widget)
    widget.set_release(result, "age", whole_numbers=True)
    assert widget.moments().per_value == 0.0 and _plain(widget.moments_label).count("binning adds nothing:") == 2
    widget.set_release(result, "age")
    assert widget.moments().per_value == 0.5 and "binning adds at most ± 0.50" in _plain(widget.moments_label)
