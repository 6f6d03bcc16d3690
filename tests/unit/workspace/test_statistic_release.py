"""The release steps the counts and the grouped CDF share (dpgui.workspace.statistic_release): the window's
worker reports its progress in order and refuses nothing it should not; the budget check asks for a first cap
with the release's own ε and δ, and the cap it sets then pays; the confirmation's budget sentence comes from the
ledger's totals before and after the charge."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpgui.core.noise import SecureRandom
from dpgui.data.source_spec import SourceSpec
from dpgui.report.ledger import Ledger
from dpgui.vocabulary import Charge, Neighbours
from dpgui.workspace.counts import counts_plan
from dpgui.workspace.release import BudgetOk, FirstCapNeeded
from dpgui.workspace.statistic_release import budget_check, budget_words, run_on_worker, set_first_cap
from dpgui.workspace.statistics.counts import COUNTS


def _data(tmp_path: Path) -> SourceSpec:
    path = tmp_path / "people.csv"
    path.write_text("state\nOR\nWA\nOR\n", encoding="utf-8")
    return SourceSpec("file", str(path))


def test_the_worker_reports_reading_then_the_point_of_no_return_then_released(tmp_path: Path) -> None:
    said: list[tuple[float, str]] = []
    opened: list[bool] = []

    def release(flow, open_data, noise, read_progress) -> str:
        assert said == []  # nothing is said before the data is opened
        with open_data() as data:
            opened.append(len(data.columns()) == 1)
            read_progress(0.5)
        assert noise() is SecureRandom
        return "released"

    done = run_on_worker(_data(tmp_path), "people", Neighbours.CHANGE, "Reading…", "Adding noise…", release,
                         lambda: SecureRandom, lambda fraction, message: said.append((fraction, message)))
    assert done == "released" and opened == [True]
    assert said == [(0.0, "Reading…"), (0.45, "Reading…"), (0.9, "Adding noise…"), (1.0, "Released.")]


def test_a_new_dataset_is_asked_for_its_first_cap_with_the_releases_own_epsilon_and_delta() -> None:
    plan = counts_plan(("OR", "WA"), 0.5, Neighbours.CHANGE)
    check = budget_check("people", plan, 0.5, 1e-9, ("people-old",))
    assert check == FirstCapNeeded("people", 0.5, ("people-old",), 1e-9)
    assert isinstance(set_first_cap("people", plan, 2.0, 0.0), BudgetOk)
    with Ledger() as ledger:
        assert ledger.totals("people").cap_epsilon == pytest.approx(2.0)
    assert isinstance(budget_check("people", plan, 0.5, 0.0), BudgetOk)  # the cap is there now: nothing asked


def test_the_budget_words_say_the_totals_before_and_after_the_charge() -> None:
    plan = counts_plan(("OR", "WA"), 0.5, Neighbours.CHANGE)
    set_first_cap("people", plan, 2.0, 0.0)
    words = budget_words("people", COUNTS.charge(plan))
    # nothing spent yet; after this release ε = 0.5 of the cap 2 (pure ε-DP adds up: 0 + 0.5)
    assert "ε = 0 of 2 spent so far (0 releases)" in words and "after this release: ε = 0.5 of 2" in words
    assert "after this release: ε = 1.5 of 2" in budget_words("people", Charge(1.5))
