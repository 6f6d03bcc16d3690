"""(ε, δ) in the window: δ beside ε (presets, one sentence each), the noise (automatic by default)
and why it was chosen, ρ per level for Gaussian plans, the Gaussian curves of the plots when δ > 0,
bad δ refused with nothing spent, and the whole workflow at δ = 10⁻⁹."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpgui.core.accounting import zcdp_epsilon
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan, margin95
from dpgui.core.projection import prefix_variances
from dpgui.formatting import format_margin_records
from dpgui.report.ledger import Ledger
from dpgui.workspace.release import NotReady, release_request

from gui_helpers import TIMEOUT, make_window, open_and_wait, release_and_wait, sample_window_planned, set_column, type_into
from projection_helpers import band_margin, rms

SAMPLE_BINS = 1000


def settled(qtbot, window) -> None:
    """The plan of the settings as typed is made, and the plots show it."""
    page = window.plan_page
    qtbot.waitUntil(lambda: page.plan is not None and not page.is_planning(), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: not page.plots.projecting and not page.plots.busy, timeout=TIMEOUT)


def set_delta(qtbot, window, typed: str) -> None:
    type_into(qtbot, window.plan_page.delta, typed)


@pytest.fixture
def sample_window(qtbot):
    window = sample_window_planned(qtbot, seed=5)
    settled(qtbot, window)
    return window


def test_whole_workflow_at_delta_1e9_with_automatic_noise(qtbot, sample_window, tmp_path):
    window, page = sample_window, sample_window.plan_page
    assert page.delta.text() == "0" and page.noise_choice() == "auto"  # pure ε-DP, automatic by default
    before = page.plan
    set_delta(qtbot, window, "1e-9")
    qtbot.waitUntil(lambda: page.plan is not before, timeout=TIMEOUT)
    settled(qtbot, window)
    plan = page.plan
    privacy = PrivacySpec(1.0, delta=1e-9)
    assert plan.privacy == privacy
    # the window's plan is the planner's automatic choice at (ε, δ), and the other noise is planned too
    expected = auto_plan(SAMPLE_BINS, privacy, noise="auto")
    assert (plan.noise, plan.shape) == (expected.noise, expected.shape)
    np.testing.assert_allclose(plan.level_budgets, expected.level_budgets, rtol=1e-9)
    other = "gaussian" if plan.noise == "laplace" else "laplace"
    alternative = page.alternative
    assert alternative is not None and alternative.noise == other and alternative.privacy == privacy
    # "why": both projected errors (on the objective compared: on average), each the engine's own figure
    mine, theirs = margin95(plan, "average"), margin95(alternative, "average")
    assert (mine <= theirs) == (plan.noise == "laplace")  # automatic keeps the smaller error (Laplace on a tie)
    note = page.noise_note.text()
    name = "Laplace" if plan.noise == "laplace" else "Gaussian"
    assert f"Automatic chose <b>{name}</b>" in note
    assert format_margin_records(mine) in note and format_margin_records(theirs) in note and "on average" in note
    assert "one in a billion" in page.delta_help.text() and "1/N" in page.delta_help.text()
    # the plots: the Gaussian plan's exact margins beside the plan's, with its name in the legend
    plots = page.plots
    gaussian = plan if plan.noise == "gaussian" else alternative
    x, y = plots.error_curves["alternative" if gaussian is alternative else "plan"].getOriginalDataset()
    j = np.rint((x - 0.0) / 5.0).astype(np.int64)
    np.testing.assert_allclose(y, band_margin(np.sqrt(prefix_variances(gaussian, j))), rtol=1e-9)
    assert plots.series_boxes["alternative"].isVisibleTo(plots)
    assert plots.series_boxes["alternative"].text() == f"Best plan with {'Gaussian' if other == 'gaussian' else 'Laplace'} noise"
    # the workspace holds δ and the noise asked for; a project saves them
    state = window.workspace.state
    assert state.plan.noise == "auto" and state.plan.privacy == privacy and state.plan.plan is plan
    project = state.to_project()
    assert project is not None and (project.delta, project.noise) == (1e-9, "auto")

    # ---- release: the plan goes out as shown, and the ledger charges its (ε, δ, ρ)
    release_and_wait(qtbot, window)
    released = window.cdf.outcome.release
    assert released.plan == plan and released.plan.noise == plan.noise
    assert window.workspace.state.shown is not None and "TEST NOISE" in window.release_status.text()
    with Ledger() as ledger:
        entries = ledger.releases(window.workspace.state.dataset.strip() or "flights")
    assert len(entries) == 1
    epsilon, delta, rho = plan.ledger_charge()
    assert (entries[0].epsilon, entries[0].delta) == (epsilon, delta)
    assert entries[0].rho == pytest.approx(rho, rel=1e-12)
    if plan.noise == "laplace":  # pure ε-DP: δ unused, ρ = ε²/2 (Bun & Steinke 2016, Prop. 1.4)
        assert (delta, rho) == (0.0, 0.5)
    else:  # ρ is the largest whose conversion is (ε, δ)
        assert delta == 1e-9 and zcdp_epsilon(rho, 1e-9) <= 1.0 + 1e-12


@pytest.mark.parametrize("typed, words", [
    ("-1e-9", "0 ≤ δ < 1"),
    ("1", "0 ≤ δ < 1"),
    ("2.5", "0 ≤ δ < 1"),
    ("nan", "not a finite number"),
    ("abc", "not a number"),
    ("", "δ is empty"),
])
def test_bad_delta_is_shown_next_to_the_field_and_nothing_can_be_released(qtbot, sample_window, typed, words):
    window, page = sample_window, sample_window.plan_page
    set_delta(qtbot, window, typed)
    assert words in page.delta.error_text() and not page.delta.message.isHidden()
    qtbot.waitUntil(lambda: not page.is_planning(), timeout=TIMEOUT)
    state = window.workspace.state
    assert state.plan.privacy is None and state.plan.plan is None
    assert isinstance(release_request(state), NotReady)
    window.release()  # refused: no confirmation, no worker, nothing in the ledger
    assert window.cdf.release_worker is None and window.cdf.outcome is None
    assert "not ready" in window.statusBar().currentMessage()
    with Ledger() as ledger:
        assert ledger.releases() == []
    # and a good δ again makes a plan for it
    set_delta(qtbot, window, "1e-6")
    settled(qtbot, window)
    assert page.delta.error_text() == "" and window.workspace.state.plan.plan.privacy.delta == 1e-6


def test_delta_presets_and_their_sentences(qtbot, sample_window):
    page = sample_window.plan_page
    page.delta_buttons["10⁻⁶"].click()
    assert page.delta.text() == "1e-6" and "one in a million" in page.delta_help.text()
    page.delta_buttons["10⁻⁹"].click()
    assert page.delta.text() == "1e-9" and "one in a billion" in page.delta_help.text()
    page.delta_buttons["0 (pure)"].click()
    assert page.delta.text() == "0" and "pure ε-DP, the guarantee holds always" in page.delta_help.text()
    # a δ that is not well below 1/N (N = the sample's public row count) is called out
    set_delta(qtbot, sample_window, "0.001")
    assert "not well below 1/N" in page.delta_help.text()


def test_gaussian_noise_shows_rho_per_level_and_is_refused_at_delta_0(qtbot, sample_window):
    window, page = sample_window, sample_window.plan_page
    page.set_delta(1e-6)
    page.set_noise("gaussian")
    qtbot.waitUntil(lambda: page.plan is not None and page.plan.noise == "gaussian", timeout=TIMEOUT)
    settled(qtbot, window)
    plan = page.plan
    rho = plan.privacy.rho
    assert zcdp_epsilon(rho, 1e-6) == pytest.approx(1.0, rel=1e-9)  # the ρ of (ε, δ), checked forwards
    editor = page.budgets
    assert "ρ" in editor.header_labels[2].text() and "ε" not in editor.header_labels[2].text()
    shown = editor.budgets()
    assert len(shown) == len(plan.level_budgets)
    for value, budget, spin in zip(shown, plan.level_budgets, (s for s in editor._spins if s is not None)):
        assert value == pytest.approx(budget, abs=10.0 ** -spin.decimals())
        assert spin.maximum() == pytest.approx(rho, abs=10.0 ** -spin.decimals())  # Qt rounds the range
    assert math.fsum(plan.level_budgets) == pytest.approx(rho, rel=1e-12)
    assert "Gaussian" in page.noise_note.text() and f"ρ = {rho:.4g}" in page.noise_note.text()
    assert "Gaussian noise" in page.summary.text()
    # plot (d) and the tree view show ρ per level, never ε
    plots = page.plots
    assert list(plots.budget_bars.opts["height"])[plan.privacy.first_noised_level():] == list(plan.level_budgets)
    assert "ρ" in plots.budget_plot.getPlotItem().getAxis("left").labelText
    assert "total ρ" in plots.budget_plot.getPlotItem().titleLabel.text
    window.tabs.setCurrentIndex(2)
    qtbot.waitUntil(lambda: window.tree_view._tree is not None and window.tree_view._tree.plan is plan, timeout=TIMEOUT)
    assert "ρ per level" in window.tree_view.legend.title()
    # editing one level's ρ keeps the sum at ρ and the noise Gaussian
    editor.set_budget(plan.shape.height, plan.level_budgets[-1] * 1.1)
    assert page.plan.noise == "gaussian" and math.fsum(page.plan.level_budgets) == pytest.approx(rho, rel=1e-12)
    # δ = 0 with Gaussian asked for: refused next to the noise list, no plan to release
    page.set_delta(0.0)
    assert "Gaussian noise needs δ > 0" in page.noise_message.text() and page.noise_message.isVisibleTo(page)
    qtbot.waitUntil(lambda: not page.is_planning(), timeout=TIMEOUT)
    assert window.workspace.state.plan.plan is None
    assert isinstance(release_request(window.workspace.state), NotReady)
    # Laplace at δ > 0: allowed, and the note says δ is not used
    page.set_noise("laplace")
    page.set_delta(1e-9)
    qtbot.waitUntil(lambda: page.plan.noise == "laplace" and page.plan.privacy.delta == 1e-9
                    and not page.is_planning(), timeout=TIMEOUT)
    assert page.noise_message.isHidden() and "δ is not used" in page.noise_note.text()
    assert window.workspace.state.plan.plan is page.plan


def test_plots_have_a_gaussian_curve_only_when_delta_is_positive(qtbot, sample_window):
    window, page = sample_window, sample_window.plan_page
    plots = page.plots
    assert page.plan.privacy.delta == 0
    assert plots.projection.alternative is None and "gaussian" not in plots.projection.c
    assert plots.error_curves["alternative"].getOriginalDataset()[1] is None
    assert plots.branching_curves["gaussian"].getOriginalDataset()[1] is None
    assert not plots.series_boxes["alternative"].isVisibleTo(plots)
    page.set_delta(1e-9)
    qtbot.waitUntil(lambda: page.plan.privacy.delta == 1e-9, timeout=TIMEOUT)
    settled(qtbot, window)
    projection = plots.projection
    assert projection.alternative is page.alternative and "gaussian" in projection.c
    for curves in (plots.error_curves, plots.epsilon_curves):
        assert curves["alternative"].getOriginalDataset()[1].size > 0 and curves["alternative"].isVisible()
    # (b) at the plan's ε: the other noise's plan's own RMS margin; (c): Gaussian trees in the legend
    x, y = plots.epsilon_curves["alternative"].getOriginalDataset()
    assert y[np.flatnonzero(x == 1.0)[0]] == pytest.approx(rms(page.alternative), rel=1e-9)
    bs, ys = plots.branching_curves["gaussian"].getOriginalDataset()
    assert list(bs) == projection.allowed and np.all(ys > 0)
    legend = plots.branching_plot.getPlotItem().legend
    assert any("Gaussian noise" in label.text for _sample, label in legend.items)
    assert "δ = 1e-9" in plots.epsilon_plot.getPlotItem().titleLabel.text
    # back to pure ε-DP: the Gaussian lines go
    page.set_delta(0.0)
    qtbot.waitUntil(lambda: page.plan.privacy.delta == 0, timeout=TIMEOUT)
    settled(qtbot, window)
    assert plots.error_curves["alternative"].getOriginalDataset()[1] is None
    assert not any("Gaussian noise" in label.text for _sample, label in legend.items)


def test_locked_levels_keep_the_plans_noise_under_automatic(qtbot, sample_window):
    window, page = sample_window, sample_window.plan_page
    page.branching.set_text("11")  # 11³ covers the 1000 bins and the leaf for missing values
    page.branching.edited.emit()
    settled(qtbot, window)
    page.budgets.set_locked(1)
    locked = page.plan.level_budgets[0]
    noise = page.plan.noise
    page.set_delta(1e-9)
    qtbot.waitUntil(lambda: page.plan.privacy.delta == 1e-9, timeout=TIMEOUT)
    settled(qtbot, window)
    assert page.plan.noise == noise and page.plan.level_budgets[0] == pytest.approx(locked, abs=1e-4)
    assert page.budgets.locked() and "locked" in page.noise_note.text()
    assert page.plan_message.isHidden()


def test_a_project_restores_delta_and_the_noise(qtbot, tmp_path):
    path = tmp_path / "people.csv"
    rng = np.random.default_rng(2)
    path.write_text("age\n" + "\n".join(str(a) for a in rng.integers(0, 100, 400)) + "\n")
    first = make_window(qtbot)
    open_and_wait(qtbot, first, path)
    set_column(qtbot, first, "age", "0", "100", "100")
    first.plan_page.set_delta(1e-6)
    first.plan_page.set_noise("gaussian")
    qtbot.waitUntil(lambda: first.plan_page.plan.noise == "gaussian", timeout=TIMEOUT)
    settled(qtbot, first)
    assert first.project.save_to(tmp_path / "work.dpgui")
    first.project.autosave_now()  # the autosave keeps them too
    autosave = first.project.autosave_path()
    qtbot.waitUntil(lambda: autosave is not None and autosave.is_file() and not first.project._autosave_running,
                    timeout=TIMEOUT)
    saved = json.loads(autosave.read_text())
    assert (saved["delta"], saved["noise"], saved["plan"]["noise"]) == (1e-6, "gaussian", "discrete_gaussian")
    second = make_window(qtbot)
    assert second.project.open_project(tmp_path / "work.dpgui")
    page = second.plan_page
    qtbot.waitUntil(lambda: page.plan is not None and page.plan.noise == "gaussian" and not page.is_planning(),
                    timeout=TIMEOUT)
    assert page.plan == first.plan_page.plan and page.delta.text() == "1e-6" and page.noise_choice() == "gaussian"
    state = second.workspace.state
    assert (state.plan.noise, state.plan.privacy.delta) == ("gaussian", 1e-6) and state.plan.plan is page.plan
    # the other noise is planned again in the background, for the comparison
    qtbot.waitUntil(lambda: page.alternative is not None, timeout=TIMEOUT)
    assert page.alternative.noise == "laplace"


def test_a_gaussian_release_through_the_window_charges_its_rho(qtbot, sample_window):
    window, page = sample_window, sample_window.plan_page
    page.set_delta(1e-6)
    page.set_noise("gaussian")
    qtbot.waitUntil(lambda: page.plan.noise == "gaussian" and not page.is_planning(), timeout=TIMEOUT)
    plan = page.plan
    release_and_wait(qtbot, window)
    released = window.cdf.outcome.release
    assert released.plan == plan and released.plan.noise == "gaussian"
    with Ledger() as ledger:
        (entry,) = ledger.releases(window.workspace.state.dataset.strip())
        totals = ledger.totals(window.workspace.state.dataset.strip())
    epsilon, delta, rho = plan.ledger_charge()
    assert (entry.epsilon, entry.delta) == (1.0, 1e-6) == (epsilon, delta)
    assert entry.rho == pytest.approx(rho, rel=1e-12) and zcdp_epsilon(rho, 1e-6) == pytest.approx(1.0, rel=1e-9)
    assert totals.cap_delta == 1e-6  # the first cap took the δ set in step 2
    assert "Gaussian noise" in window.release_status.text() and "δ = 1e-6" in window.release_status.text()
    assert "δ = 1e-6" in window.result_view.summary.text()


def test_the_first_cap_dialog_says_which_delta_the_dataset_gets(qtbot):
    from dpgui.app.dialogs.dataset import NewDatasetDialog

    dialog = NewDatasetDialog("people", 1.0, delta=1e-9)
    qtbot.addWidget(dialog)
    assert "δ = 1e-9" in dialog.message() and "Gaussian releases spend it" in dialog.message()
    pure = NewDatasetDialog("people", 1.0)
    qtbot.addWidget(pure)
    assert "δ" not in pure.message()


def test_accuracy_first_finds_the_smallest_epsilon_at_this_delta(qtbot, sample_window):
    from dpgui.core.planner import plan_for_accuracy

    window, page = sample_window, sample_window.plan_page
    page.set_delta(1e-9)
    qtbot.waitUntil(lambda: page.plan.privacy.delta == 1e-9 and not page.is_planning(), timeout=TIMEOUT)
    page.target.set_text("100")
    before = page.plan
    page.accuracy_first()
    qtbot.waitUntil(lambda: page.plan is not before and not page.is_planning(), timeout=TIMEOUT)
    reference = plan_for_accuracy(SAMPLE_BINS, PrivacySpec(1.0, delta=1e-9), 100.0, "every", noise="auto")
    plan = page.plan
    assert (plan.privacy.epsilon, plan.privacy.delta, plan.noise) == (
        reference.privacy.epsilon, 1e-9, reference.noise)
    assert margin95(plan, "every") <= 100.0
    assert "at δ = 1e-9" in page.accuracy_result.text() and f"{reference.privacy.epsilon:g}" in page.accuracy_result.text()
    assert window.workspace.state.plan.plan is plan  # the typed ε is the plan's: it may be released
    # automatic chose the noise needing the smaller ε, and the note says so with both ε
    choice = reference.noise_choice
    assert choice is not None and choice.objective == "epsilon"
    needs = {"laplace": choice.laplace_epsilon, "gaussian": choice.gaussian_epsilon}
    other = needs["gaussian" if plan.noise == "laplace" else "laplace"]
    note = page.noise_note.text()
    assert f"reaches the accepted error at ε = {reference.privacy.epsilon:g}" in note
    assert (f"against ε = {other:g}" in note) if other is not None else ("cannot reach it" in note)
    assert other is None or other >= reference.privacy.epsilon


def test_the_other_noise_comes_from_the_planner_not_a_second_planning(qtbot, sample_window, monkeypatch):
    """With δ > 0 the planner already plans both noises: the window shows that plan of the other noise and
    does not plan it again on a worker (``other_noise_plan`` is only for plans that come without it)."""
    from dpgui.app.cdf import plan_page

    def planned_again(*args, **kwargs):  # pragma: no cover - its call is the failure
        raise AssertionError("the other noise was planned a second time")

    monkeypatch.setattr(plan_page, "other_noise_plan", planned_again)
    window, page = sample_window, sample_window.plan_page
    page.set_delta(1e-9)
    qtbot.waitUntil(lambda: page.plan.privacy.delta == 1e-9, timeout=TIMEOUT)
    settled(qtbot, window)
    choice = page.plan.noise_choice
    assert choice is not None and choice.alternative is not None
    assert page.alternative is choice.alternative and page.alternative.noise != page.plan.noise
