"""``--focus LO:HI``: plan, release and simulate for the region the user needs accurate (dpgui.core.focus)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import run_cli
from dpgui.core.plan import Plan
from dpgui.core.projection import prefix_variances

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "resources" / "sample" / "flights.parquet"
PLAN = ["plan", "--bins", "4096", "--epsilon", "1", "--lower", "0", "--upper", "100"]


def test_plan_with_a_focus_that_pays_prints_both_errors_and_records_the_region(capsys):
    code, out, err = run_cli([*PLAN, "--focus", "0:1", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    offer = data["focus_offer"]
    # 0–1 of 0–100 with K = 4096: bin edges 0, 100/4096, …; 1 lies between edges 40 and 41
    assert (offer["first_prefix"], offer["last_prefix"]) == (1, 41) and offer["values"] == [0.0, 1.0]
    assert data["focus"] == {"first_prefix": 1, "last_prefix": 41}
    plan = Plan.from_json(data)
    assert plan.focus == (1, 41)
    exact = float(prefix_variances(plan)[:41].sum())
    assert offer["focused_error"] == pytest.approx(exact, rel=1e-10)
    assert offer["worth_it"] and offer["used"] == "focused"
    assert offer["focused_error"] <= 0.9 * offer["default_error"]
    assert offer["focused_margin95"] == pytest.approx(2.2 * np.sqrt(exact / 41) + 1)
    assert "note" not in err


@pytest.mark.slow
def test_plan_with_a_focus_that_does_not_pay_keeps_the_default_and_says_so(capsys):
    code, out, err = run_cli([*PLAN, "--focus", "middle"], capsys)
    assert code == 0, err
    assert "not 5 % smaller" in out and "the plan for the whole range is used" in out
    assert "the middle 20 % of the range 0–100 (40–60)" in out  # a fraction of the bounds, named so
    assert err.count("\n") == 1 and "note:" in err and "less than 5 %" in err
    code, out, _ = run_cli([*PLAN, "--focus", "40:60", "--json"], capsys)
    data = json.loads(out)
    code, plain, _ = run_cli(["plan", "--bins", "4096", "--epsilon", "1", "--json"], capsys)
    default = json.loads(plain)
    assert "focus" not in data and data["branching"] == default["branching"]
    assert data["level_epsilons"] == default["level_epsilons"]
    assert not data["focus_offer"]["worth_it"] and data["focus_offer"]["used"] == "default"


@pytest.mark.parametrize("extra, words", [
    (["--focus", "60:40"], "inverted"),
    (["--focus", "-5:40"], "outside the bounds"),
    (["--focus", "40:101"], "outside the bounds"),
    (["--focus", "forty:60"], "not two numbers"),
    (["--focus", "40"], "LO:HI"),
    (["--focus", "40:60", "--branching", "16x16x17", "--budgets", "0.3,0.3,0.4"], "--budgets"),
])
def test_bad_focus_exits_2_with_one_line(extra, words, capsys):
    code, out, err = run_cli([*PLAN, *extra], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and words in err


def test_focus_needs_the_bounds(capsys):
    code, out, err = run_cli(["plan", "--bins", "256", "--epsilon", "1", "--focus", "0:10"], capsys)
    assert code == 2 and out == "" and "--lower" in err and err.count("\n") == 1


def test_release_with_a_focus_uses_the_focused_plan_and_charges_the_same_epsilon(tmp_path, capsys):
    from dpgui.report.ledger import Ledger

    with Ledger() as ledger:
        ledger.set_cap("focus-test", 50)
    out_csv = tmp_path / "rel.csv"
    code, out, err = run_cli(["release", str(SAMPLE), "--column", "distance", "--lower", "0", "--upper", "5000",
                              "--bins", "500", "--epsilon", "1", "--out", str(out_csv), "--dataset", "focus-test",
                              "--focus", "0:250", "--json"], capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["focus_offer"]["worth_it"] and summary["focus"] == {"first_prefix": 1, "last_prefix": 25}
    assert sum(summary["level_epsilons"]) == pytest.approx(1.0, rel=1e-12) and summary["epsilon_spent"] <= 1.0
    with Ledger() as ledger:
        assert ledger.totals("focus-test").epsilon_spent == pytest.approx(1.0)
    # a bad region is refused before anything is read or spent
    code, out, err = run_cli(["release", str(SAMPLE), "--column", "distance", "--lower", "0", "--upper", "5000",
                              "--bins", "500", "--epsilon", "1", "--out", str(tmp_path / "no.csv"), "--dataset",
                              "focus-test", "--focus", "4000:6000"], capsys)
    assert code == 2 and "outside the bounds" in err and not (tmp_path / "no.csv").exists()
    with Ledger() as ledger:
        assert ledger.totals("focus-test").epsilon_spent == pytest.approx(1.0)


def test_simulate_with_a_focus_prints_the_region_line(capsys):
    code, out, err = run_cli(["simulate", "--bins", "1000", "--epsilon", "1", "--trials", "20", "--seed", "1",
                              "--synthetic", "uniform", "--n", "1000", "--lower", "0", "--upper", "10",
                              "--focus", "upper"], capsys)
    assert code == 0, err
    assert "region the highest 10 % of the range 0–10 (9–10): 95 % error" in out
