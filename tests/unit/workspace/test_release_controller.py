"""The release flow without a window (no QApplication): request, budget, confirmation, release, record."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from dpgui.core.accounting import zcdp_rho
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.data.sample import sample_dataset_path
from dpgui.data.table import inspect_table
from dpgui.errors import Cancelled
from dpgui.report.ledger import BudgetExceeded, Ledger, NoCapSet
from dpgui.vocabulary import Charge
from dpgui.workspace.release import (
    DATA_NOT_READY, NO_DATA, PLAN_NOT_READY, BudgetOk, FirstCapNeeded, LedgerUnusable, NotEnoughBudget, NotReady,
    ReleaseController, ReleaseOutcome, ReleaseRequest, new_release_id, release_request, spent_on,
)
from dpgui.workspace.state import ColumnChoice, SourceChoice, PlanChoice, Workspace, WorkspaceState

COLUMN, LOWER, UPPER, BINS, EPSILON = "distance", 0.0, 5000.0, 200, 1.0


def _planned_workspace(dataset: str = "flights") -> Workspace:
    table = inspect_table(sample_dataset_path())
    plan = auto_plan(BINS, PrivacySpec(EPSILON, "change", 1), None, "auto", "gls", "total")
    return Workspace(WorkspaceState(
        source=SourceChoice(table, table.n_rows), column=ColumnChoice(COLUMN, LOWER, UPPER, BINS), dataset=dataset,
        plan=PlanChoice(privacy=plan.privacy, plan=plan, consistency="l2"),
    ))


def _controller(workspace: Workspace, seed: int = 11) -> ReleaseController:
    return ReleaseController(workspace, lambda: SeededRandom(seed))


def _request(controller: ReleaseController) -> ReleaseRequest:
    request = controller.request()
    assert isinstance(request, ReleaseRequest), request
    return request


def _run(controller: ReleaseController, request: ReleaseRequest, release_id: str | None = None) -> ReleaseOutcome:
    steps: list[str] = []
    outcome = controller.run(request, lambda fraction, message: steps.append(message), lambda: False, release_id)
    assert steps[-1] == "Released."
    return outcome


def test_a_whole_release_without_a_window():
    workspace = _planned_workspace()
    heard: list[frozenset[str]] = []
    workspace.subscribe(heard.append)
    controller = _controller(workspace)
    request = _request(controller)
    assert request.settings.column == COLUMN and request.dataset == "flights" and request.epsilon == EPSILON
    assert request.plan.shape.bins == BINS and request.consistency == "l2"

    check = controller.check_budget(request)
    assert check == FirstCapNeeded("flights", EPSILON, ())  # nothing like this file in an empty ledger
    assert controller.set_first_cap(request, 3.0) == BudgetOk()
    assert controller.check_budget(request) == BudgetOk()

    words = controller.confirmation(request).rich_text()
    assert f"<b>{COLUMN}</b>" in words and sample_dataset_path().name in words and "Cost: ε = 1</b>" in words
    assert "ε = 0 of 3 spent so far (0 releases); after this release: ε = 1 of 3" in words
    assert "Warning" not in words

    outcome = _run(controller, request)
    assert controller.record(outcome) is None
    with Ledger() as ledger:
        totals = ledger.totals("flights")
        assert totals.epsilon_spent == pytest.approx(EPSILON) and totals.releases == 1
        assert ledger.releases("flights")[0].release_id == outcome.release_id
        assert ledger.cap_history("flights")[0].reason  # the first cap is logged with its reason
    state = workspace.state
    assert len(state.releases) == 1 and state.releases[0].release_id == outcome.release_id
    assert state.shown is not None and state.shown.release is outcome.release and not state.shown.restored
    assert not state.shown.confirmed and "secure" in state.shown.problem  # seeded noise is never signed
    np.testing.assert_array_equal(state.shown.counts, outcome.histogram.counts)
    assert heard == [frozenset({"releases", "shown"})]
    assert not outcome.release.secure and outcome.release.total == outcome.histogram.n_rows


def test_the_same_file_under_a_new_name_is_warned_about():
    first = _controller(_planned_workspace("flights"))
    request = _request(first)
    first.set_first_cap(request, 5.0)
    first.record(_run(first, request))  # records the file's fingerprint under 'flights'

    copy = _controller(_planned_workspace("flights-copy"))
    request = _request(copy)
    check = copy.check_budget(request)
    assert isinstance(check, FirstCapNeeded) and check.similar == ("flights",)
    copy.set_first_cap(request, 5.0)
    confirmation = copy.confirmation(request)
    assert "same column names and number of rows as dataset 'flights'" in confirmation.warning()
    assert "<p><b>Warning:</b> This file has the same column names" in confirmation.rich_text()


def test_not_enough_budget_is_refused_and_nothing_is_spent():
    controller = _controller(_planned_workspace())
    request = _request(controller)
    check = controller.set_first_cap(request, 0.5)
    assert isinstance(check, NotEnoughBudget) and check.title == "Not enough privacy budget left"
    assert "ε = 0.5 remains" in check.message and check.message.endswith("Nothing was spent.")
    assert controller.check_budget(request) == check
    with Ledger() as ledger:
        assert ledger.totals("flights").releases == 0


def test_an_unusable_ledger_is_refused(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the dpgui home should be", encoding="utf-8")
    monkeypatch.setenv("DPGUI_HOME", str(blocked))
    controller = _controller(_planned_workspace())
    check = controller.check_budget(_request(controller))
    assert isinstance(check, LedgerUnusable) and check.title == "The budget ledger cannot be used"
    assert check.message.endswith("Nothing was spent.")
    confirmation = controller.confirmation(_request(controller))
    assert confirmation.totals is None and "Budget of dataset" not in confirmation.rich_text()


def test_a_first_release_waits_for_the_row_count():
    workspace = _planned_workspace()
    workspace.update(source=SourceChoice(workspace.state.source.table, None))
    controller = _controller(workspace)
    check = controller.check_budget(_request(controller))
    assert check.title == "The rows are still being counted" and "number of rows" in check.message


def test_what_is_not_ready_names_its_step():
    ready = _planned_workspace().state
    assert release_request(WorkspaceState()) == NO_DATA and NO_DATA.title == "No data"
    plan = ready.plan
    not_ready = {
        "no column": WorkspaceState(source=ready.source, dataset="flights", plan=plan),
        "no dataset name": _replace(ready, dataset=" "),
        "bounds reversed": _replace(ready, column=ColumnChoice(COLUMN, UPPER, LOWER, BINS)),
        "not a number column": _replace(ready, column=ColumnChoice("carrier", LOWER, UPPER, BINS)),
    }
    for why, state in not_ready.items():
        assert release_request(state) == DATA_NOT_READY, why
    plan_not_ready = {
        "planning": PlanChoice(privacy=plan.privacy, plan=plan.plan, planning=True),
        "no plan": PlanChoice(privacy=plan.privacy),
        "no privacy": PlanChoice(plan=plan.plan),
        "another K": PlanChoice(privacy=plan.privacy, plan=plan.plan),
    }
    for why, choice in plan_not_ready.items():
        state = _replace(ready, plan=choice)
        if why == "another K":
            state = _replace(state, column=ColumnChoice(COLUMN, LOWER, UPPER, BINS + 1))
        result = release_request(state)
        assert isinstance(result, NotReady) and result == PLAN_NOT_READY, why
    assert PLAN_NOT_READY.step == "plan" and "The plan is not ready" in PLAN_NOT_READY.message
    assert DATA_NOT_READY.step == "data" and "step 1" in DATA_NOT_READY.message


def _replace(state: WorkspaceState, **parts: object) -> WorkspaceState:
    from dataclasses import replace

    return replace(state, **parts)  # type: ignore[arg-type]


def test_a_cancelled_release_spends_nothing():
    controller = _controller(_planned_workspace())
    request = _request(controller)
    controller.set_first_cap(request, 3.0)
    release_id = new_release_id()
    with pytest.raises(Cancelled):
        controller.run(request, lambda fraction, message: None, lambda: True, release_id)
    assert spent_on(release_id) is False
    with Ledger() as ledger:
        assert ledger.totals("flights").releases == 0


def test_without_a_cap_the_release_itself_is_refused_before_the_noise():
    controller = _controller(_planned_workspace())
    release_id = new_release_id()
    with pytest.raises(NoCapSet):
        _run(controller, _request(controller), release_id)
    assert spent_on(release_id) is False


def test_the_workspace_package_loads_no_qt():
    code = ("import sys, dpgui.workspace, dpgui.workspace.state, dpgui.workspace.release, dpgui.workspace.words; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph') "
            "or m.startswith('dpgui.app')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout


# ------------------------------------------------------------------------------------------ (ε, δ) and zCDP

DELTA = 1e-9


def _workspace_with(privacy: PrivacySpec, noise: str, dataset: str = "flights") -> Workspace:
    table = inspect_table(sample_dataset_path())
    plan = auto_plan(BINS, privacy, None, "auto", "gls", "total", noise=noise)
    assert plan.noise == noise
    return Workspace(WorkspaceState(
        source=SourceChoice(table, table.n_rows), column=ColumnChoice(COLUMN, LOWER, UPPER, BINS), dataset=dataset,
        plan=PlanChoice(privacy=plan.privacy, plan=plan, consistency="l2"),
    ))


def cks_epsilon(rho: float, delta: float) -> float:
    """CKS 2020 Cor. 13 in ε-form, minimised over α on a dense grid (independent of dpgui's bisection)."""
    alphas = 1.0 + np.logspace(-6, 6, 400_001)
    am1 = alphas - 1.0
    values = alphas * rho + (math.log(1 / delta) + am1 * np.log1p(-1 / alphas) - np.log(alphas)) / am1
    return float(values.min())


def opendp_epsilon(rho: float, delta: float) -> float:
    """OpenDP's own zCDP → approximate-DP map of a Gaussian measurement with ρ = ``rho``."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    meas = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0)
    return float(dp.c.make_zCDP_to_approxDP(meas).map(math.sqrt(2.0 * rho)).epsilon(delta))


def test_a_gaussian_release_charges_epsilon_delta_and_rho():
    controller = _controller(_workspace_with(PrivacySpec(EPSILON, "change", 1, DELTA), "gaussian"))
    request = _request(controller)
    check = controller.check_budget(request)
    assert check == FirstCapNeeded("flights", EPSILON, (), DELTA)  # the first cap carries the request's δ
    assert controller.set_first_cap(request, 3.0) == BudgetOk()
    words = controller.confirmation(request).rich_text()
    assert "Cost: ε = 1 and δ = 1e-9</b>" in words and "one in a billion" in words and "discrete Gaussian" in words
    outcome = _run(controller, request)
    rho = zcdp_rho(EPSILON, DELTA)  # the plan's ρ, from (ε, δ) alone
    assert cks_epsilon(rho, DELTA) == pytest.approx(EPSILON, rel=1e-6)  # … which converts back to ε at δ
    with Ledger() as ledger:
        entry = ledger.release(outcome.release_id)
        assert entry is not None and entry.mechanism == "discrete_gaussian_tree"
        assert (entry.epsilon, entry.delta) == (EPSILON, DELTA)
        assert entry.rho == pytest.approx(rho, rel=1e-12)
        assert ledger.cap_history("flights")[0].new_delta == DELTA
        totals = ledger.totals("flights")
    plan = outcome.release.plan
    assert math.fsum(plan.level_rhos or ()) == pytest.approx(entry.rho, rel=1e-12)
    assert float(plan.rho_spent()) <= entry.rho * (1 + 1e-12)  # the noise drawn spends no more than charged
    assert totals.rho_spent == pytest.approx(rho, rel=1e-12) and totals.delta_spent == DELTA


def test_a_laplace_release_charges_rho_epsilon_squared_over_two_and_no_delta():
    controller = _controller(_workspace_with(PrivacySpec(EPSILON, "change", 1, 1e-6), "laplace"))
    request = _request(controller)
    assert controller.check_budget(request) == FirstCapNeeded("flights", EPSILON, (), 1e-6)
    controller.set_first_cap(request, 3.0, delta=0.0)  # a Laplace release fits a pure-ε cap
    words = controller.confirmation(request).rich_text()
    assert "Cost: ε = 1</b>" in words and "the δ = 1e-6 of step 2 is not used and no δ is spent" in words
    outcome = _run(controller, request)
    with Ledger() as ledger:
        entry = ledger.release(outcome.release_id)
    assert entry is not None and (entry.epsilon, entry.delta, entry.mechanism) == (EPSILON, 0.0, "discrete_laplace_tree")
    assert entry.rho == EPSILON**2 / 2


@pytest.mark.slow
def test_laplace_and_gaussian_releases_compose_under_zcdp_when_cheaper():
    cap_eps, cap_delta = 1.0, 1e-6
    with Ledger() as ledger:
        ledger.set_cap("flights", cap_eps, cap_delta)
    gaussian = (PrivacySpec(0.4, "change", 1, 1e-7), "gaussian")
    laplace = (PrivacySpec(0.1, "change", 1), "laplace")
    for privacy, noise in (laplace, gaussian, gaussian, laplace, gaussian):
        controller = _controller(_workspace_with(privacy, noise))
        request = _request(controller)
        assert controller.check_budget(request) == BudgetOk(), noise
        controller.record(_run(controller, request))
    rho = 3 * zcdp_rho(0.4, 1e-7) + 2 * 0.1**2 / 2
    with Ledger() as ledger:
        totals = ledger.totals("flights")
    assert totals.releases == 5 and totals.rho_spent == pytest.approx(rho, rel=1e-12)
    assert totals.epsilon_spent == pytest.approx(1.4) and totals.delta_spent == pytest.approx(3e-7)  # basic: over the cap
    assert totals.accounting == "zcdp"
    assert totals.zcdp_epsilon == pytest.approx(opendp_epsilon(rho, cap_delta), rel=1e-6)
    assert totals.zcdp_epsilon == pytest.approx(cks_epsilon(rho, cap_delta), rel=1e-7)
    assert totals.epsilon_remaining == pytest.approx(cap_eps - totals.zcdp_epsilon, rel=1e-9)
    assert totals.zcdp_epsilon < 0.95  # independent of dpgui: ≈ 0.916, well below the basic Σε = 1.4
    sixth = _controller(_workspace_with(*gaussian))
    text = sixth.confirmation(_request(sixth)).rich_text()
    assert f"ε = {totals.zcdp_epsilon:g} of 1 at δ = 1e-6 spent so far (5 releases); after this release: ε = " in text
    assert "at δ = 1e-6 (counted with zCDP composition, which is less than the plain sum of ε, 1.8)" in text


def test_a_gaussian_release_and_a_cap_without_delta_is_refused_before_the_data_is_read(monkeypatch):
    import dpgui.workspace.release as release_module

    def no_reading(*args: object, **kwargs: object) -> None:
        raise AssertionError("the data was read")

    monkeypatch.setattr(release_module, "open_source", no_reading)
    with Ledger() as ledger:
        ledger.set_cap("flights", 3.0, 0.0)
    controller = _controller(_workspace_with(PrivacySpec(EPSILON, "change", 1, DELTA), "gaussian"))
    request = _request(controller)
    check = controller.check_budget(request)
    assert isinstance(check, NotEnoughBudget)
    assert "has δ = 0" in check.message and "Raise the dataset's budget δ in Tools → Budget Ledger" in check.message
    assert check.message.endswith("Nothing was spent.")
    release_id = new_release_id()
    with pytest.raises(BudgetExceeded) as info:
        controller.run(request, lambda fraction, message: None, lambda: False, release_id)
    assert info.value.short_of == "cap_delta"
    assert spent_on(release_id) is False
    with Ledger() as ledger:
        assert ledger.totals("flights").releases == 0


def test_not_enough_delta_left_is_said_in_delta():
    with Ledger() as ledger:
        ledger.set_cap("flights", 3.0, 1e-9)
        ledger.spend("flights", "old", Charge(0.1, 8e-10))  # an earlier dpgui's release: no ρ, basic composition only
    controller = _controller(_workspace_with(PrivacySpec(EPSILON, "change", 1, DELTA), "gaussian"))
    check = controller.check_budget(_request(controller))
    assert isinstance(check, NotEnoughBudget) and "Not enough δ left" in check.message
    assert "Lower δ in step 2, choose Laplace noise" in check.message
