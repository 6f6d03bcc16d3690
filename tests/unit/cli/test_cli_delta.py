"""``--delta`` and ``--noise`` in ``dpgui plan|release|simulate``.

The CLI runs in this process (``tests/support/cli_helpers.run_cli``). Privacy figures are checked by an
independent computation: ρ against the Canonne–Kamath–Steinke bound minimised here with SciPy, the
projected figures against plans made separately with the engine's planner.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from dpgui.core.accounting import zcdp_rho
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.projection import prefix_variances
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "resources" / "sample" / "flights.parquet"
DELTA = 1e-9
CAP_DELTA = 1e-6
#: The keys ``dpgui plan --json`` printed before δ existed (without --delta nothing changes).
PLAN_KEYS_BEFORE_DELTA = ["bins", "missing_leaf", "padded_bins", "branching", "levels", "level_epsilons",
                          "level_noise_scales", "epsilon", "epsilon_spent", "neighbours", "records_per_person",
                          "sensitivity_per_level", "estimator", "noise", "projected", "baselines"]
NEW_KEYS = ("delta", "rho", "level_rhos", "alternatives")


def _log_cks_delta(rho: float, epsilon: float) -> float:
    """ln δ of CKS 2020 Cor. 13, min over α > 1 of (α−1)(αρ−ε) + α ln(1−1/α) − ln(α−1), minimised
    numerically over t = ln(α−1) (a grid, then a bounded Brent search around its best point)."""

    def log_delta(t: float) -> float:
        am1 = math.exp(t)
        alpha = 1.0 + am1
        return am1 * (alpha * rho - epsilon) + alpha * (t - math.log(alpha)) - t

    grid = np.linspace(-15.0, 15.0, 3001)
    values = [log_delta(float(t)) for t in grid]
    i = int(np.argmin(values))
    best = minimize_scalar(log_delta, bounds=(float(grid[max(i - 1, 0)]), float(grid[min(i + 1, len(grid) - 1)])),
                           method="bounded", options={"xatol": 1e-12})
    return float(min(best.fun, values[i]))


def _plan_json(capsys, *extra: str, bins: str = "256", epsilon: str = "1") -> dict:
    code, out, err = run_cli(["plan", "--bins", bins, "--epsilon", epsilon, *extra, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


def _figures(plan) -> dict[str, float]:
    v = prefix_variances(plan)
    return {"total_sq_error": float(v.sum()), "max_variance": float(v.max()), "max_std_error": math.sqrt(float(v.max()))}


# ---------------------------------------------------------------- plan --json
@pytest.mark.slow
@pytest.mark.parametrize("noise", ["auto", "laplace", "gaussian"])
def test_plan_json_with_delta_for_each_noise(noise, capsys):
    data = _plan_json(capsys, "--delta", str(DELTA), "--noise", noise, bins="1024", epsilon="0.5")
    assert all(key in data for key in NEW_KEYS)
    assert data["delta"] == DELTA
    laplace = auto_plan(1024, PrivacySpec(0.5, delta=DELTA), noise="laplace")
    gaussian = auto_plan(1024, PrivacySpec(0.5, delta=DELTA), noise="gaussian")
    # alternatives: the best plan of each noise, planned separately here
    for kind, plan in (("laplace", laplace), ("gaussian", gaussian)):
        for key, value in _figures(plan).items():
            assert data["alternatives"][kind][key] == pytest.approx(value, rel=1e-9), (kind, key)
    totals = {kind: data["alternatives"][kind]["total_sq_error"] for kind in ("laplace", "gaussian")}
    expected = {"auto": min(totals, key=lambda k: totals[k]), "laplace": "laplace", "gaussian": "gaussian"}[noise]
    assert data["noise"] == f"discrete_{expected}"
    assert data["noise_choice"]["requested"] == noise and data["noise_choice"]["chosen"] == expected
    if expected == "gaussian":
        rho = data["rho"]
        assert rho == zcdp_rho(0.5, DELTA)
        # independently: ρ meets (ε, δ) by the CKS bound, and 1e-6 more ρ would not
        assert _log_cks_delta(rho, 0.5) <= math.log(DELTA) + 1e-9
        assert _log_cks_delta(rho * (1 + 1e-6), 0.5) > math.log(DELTA)
        assert math.fsum(data["level_rhos"]) == pytest.approx(rho, rel=1e-12)
        assert data["level_epsilons"] is None
        assert data["projected"]["total_sq_error"] == pytest.approx(totals["gaussian"], rel=1e-9)
    else:
        assert data["rho"] is None and data["level_rhos"] is None
        assert math.fsum(data["level_epsilons"]) == pytest.approx(0.5, rel=1e-12)
        assert data["projected"]["total_sq_error"] == pytest.approx(totals["laplace"], rel=1e-9)


def test_plan_json_at_delta_zero_has_no_gaussian_alternative(capsys):
    data = _plan_json(capsys, "--delta", "0")
    assert data["delta"] == 0.0 and data["rho"] is None and data["level_rhos"] is None
    assert data["alternatives"]["gaussian"] is None
    assert data["alternatives"]["laplace"]["total_sq_error"] == pytest.approx(
        _figures(auto_plan(256, PrivacySpec(1.0)))["total_sq_error"], rel=1e-9)
    assert data["noise"] == "discrete_laplace"


def test_plan_json_without_delta_is_the_output_before_delta(capsys):
    """The keys in their order, and the same values as the same plan asked for with --delta 0 (or
    --noise laplace), less the new keys."""
    args = ("--branching", "16x17", "--neighbours", "addremove")
    before = _plan_json(capsys, *args)
    assert list(before) == PLAN_KEYS_BEFORE_DELTA
    for extra in (("--delta", "0"), ("--noise", "laplace")):
        after = _plan_json(capsys, *args, *extra)
        for key in (*NEW_KEYS, "noise_choice"):
            after.pop(key)
        assert after == before, extra
    code, text, err = run_cli(["plan", "--bins", "256", "--epsilon", "1"], capsys)
    assert code == 0 and err == ""
    assert "δ" not in text and "noise:" not in text and "ρ" not in text


def test_plan_with_explicit_budgets_in_rho(capsys):
    rho = zcdp_rho(1.0, DELTA)
    budgets = f"{rho / 4!r},{rho - rho / 4!r}"
    data = _plan_json(capsys, "--delta", str(DELTA), "--noise", "gaussian", "--branching", "16x17", "--budgets", budgets)
    assert data["level_rhos"] == pytest.approx([rho / 4, rho * 3 / 4], rel=1e-12)
    assert data["alternatives"]["laplace"] is None  # budgets in ρ: no Laplace plan of them
    assert data["alternatives"]["gaussian"]["total_sq_error"] == pytest.approx(data["projected"]["total_sq_error"])


# ---------------------------------------------------------------- plan, human output
@pytest.mark.slow
def test_plan_text_says_which_noise_and_why(capsys):
    code, text, err = run_cli(["plan", "--bins", "4096", "--epsilon", "0.1", "--delta", "1e-6"], capsys)
    assert code == 0 and err == ""
    data = _plan_json(capsys, "--delta", "1e-6", bins="4096", epsilon="0.1")
    assert data["noise"] == "discrete_gaussian"  # the Gaussian tree wins here (checked, not assumed)
    gauss, lap = (data["alternatives"][k]["total_sq_error"] for k in ("gaussian", "laplace"))
    assert f"noise: Gaussian (automatic: projected total squared error {gauss:.3g} vs {lap:.3g} with Laplace)" in text
    assert f"budget: ρ = {data['rho']:.4g}" in text
    level_lines = [line for line in text.splitlines() if line.strip().startswith("level ")]
    assert len(level_lines) == len(data["level_rhos"])
    assert all("ρ = " in line and "ε = " not in line for line in level_lines)
    assert f"level {data['levels'][0]}: ρ = {data['level_rhos'][0]:.4g}" in text


@pytest.mark.slow
def test_plan_text_with_laplace_says_delta_is_unused(capsys):
    code, text, err = run_cli(["plan", "--bins", "256", "--epsilon", "1", "--delta", str(DELTA), "--noise", "laplace"],
                              capsys)
    assert code == 0 and err == ""
    assert "noise: Laplace (as asked" in text and "δ = 1e-09 is unused" in text
    assert "level 1: ε = " in text


@pytest.mark.slow
def test_laplace_with_delta_is_allowed_with_one_note(capsys):
    code, out, err = run_cli(["plan", "--bins", "64", "--epsilon", "1", "--delta", str(DELTA), "--noise", "laplace",
                              "--json"], capsys)
    assert code == 0
    assert json.loads(out)["noise"] == "discrete_laplace"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "δ = 1e-09 is unused" in lines[0] and "note" in lines[0]


# ---------------------------------------------------------------- bad input: exit 2, one line, nothing written
def _release(world: Path, *extra: str, dataset: str = "capped") -> list[str]:
    return ["release", str(world / "data.csv"), "--column", "x", "--lower", "0", "--upper", "10", "--bins", "4",
            "--epsilon", "1", "--dataset", dataset, "--out", str(world / "out.csv"), *extra]


def _plan(*extra: str) -> list[str]:
    return ["plan", "--bins", "16", "--epsilon", "1", *extra]


def _simulate(*extra: str) -> list[str]:
    return ["simulate", "--synthetic", "uniform", "--n", "100", "--bins", "8", "--epsilon", "1", "--trials", "2",
            *extra]


BAD_DELTAS = [("negative", "-1e-9", ["0 ≤ δ < 1", "-1e-9"]), ("one", "1", ["0 ≤ δ < 1"]),
              ("above one", "1.5", ["0 ≤ δ < 1"]), ("nan", "nan", ["0 ≤ δ < 1", "nan"]),
              ("infinite", "inf", ["0 ≤ δ < 1"]), ("text", "abc", ["number", "abc"]), ("empty", "", ["empty"])]
BAD_CASES = [
    # (id, argv builder(folder), words the one line must contain)
    *[(f"{command} delta {name}", (lambda c: lambda w, v=value: {"plan": _plan, "simulate": _simulate}.get(
        c, lambda *e: _release(w, *e))("--delta", v))(command), ["--delta", *words])
      for command in ("release", "plan", "simulate") for name, value, words in BAD_DELTAS],
    ("release gaussian without delta", lambda w: _release(w, "--noise", "gaussian"), ["δ > 0", "--delta"]),
    ("release gaussian with delta 0", lambda w: _release(w, "--noise", "gaussian", "--delta", "0"), ["--delta"]),
    ("plan gaussian without delta", lambda w: _plan("--noise", "gaussian"), ["--noise gaussian", "--delta"]),
    ("simulate gaussian without delta", lambda w: _simulate("--noise", "gaussian"), ["--delta"]),
    ("release unknown noise", lambda w: _release(w, "--noise", "normal"), ["--noise", "normal", "laplace"]),
    ("plan unknown noise", lambda w: _plan("--noise", "Gaussian"), ["--noise", "gaussian"]),
    ("plan budgets with auto noise at delta", lambda w: _plan("--delta", "1e-9", "--branching", "17",
                                                              "--budgets", "1"), ["--noise laplace", "--noise gaussian"]),
    ("plan rho budgets not summing to rho", lambda w: _plan("--delta", "1e-9", "--noise", "gaussian", "--branching", "17",
                                                            "--budgets", "1"), ["ρ"]),
    ("cap delta nan", lambda w: ["ledger", "cap", "other", "1", "--delta", "nan"], ["--delta", "0 ≤ δ < 1"]),
    ("gaussian release on a cap without delta", lambda w: _release(w, "--delta", str(DELTA), "--noise", "gaussian",
                                                                   dataset="pure"),
     ["'pure'", "δ = 0", "dpgui ledger cap pure 10 --delta 1e-09", "--noise laplace"]),
    ("auto gaussian release on a cap without delta", lambda w: _release(w, "--delta", "1e-3", "--epsilon", "0.01",
                                                                        "--bins", "64", dataset="pure"),
     ["δ = 0", "--delta 0.001"]),
]


@pytest.fixture
def world(tmp_path) -> Path:
    """A folder with ``data.csv`` (column x, 8 rows) and two capped datasets: ``capped`` (ε 10, δ 1e-6) and
    ``pure`` (ε 10, δ 0)."""
    from dpgui.report.ledger import Ledger

    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "data.csv").write_text("x\n1\n2\n3\n4\n5\n6\n7\n8\n", encoding="utf-8")
    with Ledger() as ledger:
        ledger.set_cap("capped", 10, CAP_DELTA)
        ledger.set_cap("pure", 10)
    return folder


def _snapshot(capsys) -> dict:
    code, out, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert code == 0
    return json.loads(out)


@pytest.mark.slow
@pytest.mark.parametrize("case", BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_bad_delta_or_noise_exits_2_with_one_line_and_nothing_written(case, world, capsys):
    _, build, words = case
    before = _snapshot(capsys)
    files = sorted(p.name for p in world.iterdir())
    code, out, err = run_cli(build(world), capsys)
    assert code == 2, (out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for word in words:
        assert word.lower() in lines[0].lower(), lines[0]
    assert out == ""
    assert _snapshot(capsys) == before  # nothing charged, no cap changed
    assert sorted(p.name for p in world.iterdir()) == files  # no output, no temporary file


@pytest.mark.slow
def test_a_gaussian_release_on_a_pure_cap_is_refused_before_the_data_is_read(world, capsys, monkeypatch):
    import dpgui.data.histogram

    def never(*args, **kwargs):
        raise AssertionError("the data was read")

    monkeypatch.setattr(dpgui.data.histogram, "column_histogram", never)
    code, _, err = run_cli(_release(world, "--delta", str(DELTA), "--noise", "gaussian", dataset="pure"), capsys)
    assert code == 2 and "δ = 0" in err and "AssertionError" not in err
    # the same release on the cap with δ reaches the data (so the refusal above is the cap's)
    with pytest.raises(AssertionError, match="the data was read"):
        run_cli(_release(world, "--delta", str(DELTA), "--noise", "gaussian"), capsys)


def test_the_real_entry_point_refuses_a_bad_delta_in_one_line(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-m", "dpgui.cli", "plan", "--bins", "16", "--epsilon", "1", "--delta",
                             "-1e-9"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "--delta" in result.stderr and "0 ≤ δ < 1" in result.stderr


@pytest.mark.slow
def test_the_auto_release_refused_on_a_pure_cap_is_gaussian(capsys):
    """The case above really plans a Gaussian release (otherwise it would not be refused)."""
    data = _plan_json(capsys, "--delta", "1e-3", bins="64", epsilon="0.01")
    assert data["noise"] == "discrete_gaussian"


# ---------------------------------------------------------------- release and simulate
@pytest.mark.slow
def test_gaussian_release_to_csv_charges_epsilon_delta_and_rho(world, capsys):
    code, out, err = run_cli(_release(world, "--delta", str(DELTA), "--noise", "gaussian", "--bins", "8", "--json"),
                             capsys)
    assert code == 0, err
    # N = 8 records is public under change: the only line on stderr is the warning that the margin exceeds it
    assert err.startswith("dpgui release: warning: the plan's 95 % margin") and len(err.splitlines()) == 1
    summary = json.loads(out)
    rho = zcdp_rho(1.0, DELTA)
    assert summary["noise"] == "discrete_gaussian" and summary["rho"] == rho and summary["delta"] == DELTA
    assert math.fsum(summary["level_rhos"]) == pytest.approx(rho, rel=1e-12)
    with open(world / "out.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    cumulative = [int(row["cumulative_count"]) for row in rows]
    assert len(rows) == 8 and cumulative == sorted(cumulative) and 0 <= cumulative[-1] <= 8
    # The CDF ends at 1 unless the noisy missing-values bucket took all N = 8 records (it can, with N this
    # small: the released number of values is then 0 and the CDF is 0 throughout).
    assert float(rows[-1]["cdf"]) == (1.0 if cumulative[-1] > 0 else 0.0)
    ledger = _snapshot(capsys)
    (entry,) = ledger["releases"]
    assert entry["release_id"] == summary["release_id"]
    assert (entry["epsilon"], entry["delta"], entry["rho"]) == (1.0, DELTA, rho)
    assert ledger["datasets"][0]["delta_spent"] == DELTA
    # the release's JSON holds its plan: the quantiles are read back from the CSV with it
    (world / "release.json").write_text(out, encoding="utf-8")
    code, again, err = run_cli(["quantiles", str(world / "out.csv"), "--plan", str(world / "release.json"), "--json"],
                               capsys)
    assert code == 0, err
    assert json.loads(again)["quantiles"] == summary["quantiles"]
    code, text, err = run_cli(["quantiles", str(world / "out.csv"), "--plan", str(world / "release.json")], capsys)
    assert code == 0 and "ε = 1, δ = 1e-09, Gaussian noise" in text, err
    code, text, err = run_cli(["ledger", "show"], capsys)
    assert code == 0 and f"ε = 1, δ = 1e-09, ρ = {rho:.4g}  release {summary['release_id']}" in text, err
    # one release's ρ converted at the cap's larger δ (1e-6) is less than its ε at δ = 1e-9: zCDP accounting
    totals = _snapshot(capsys)["datasets"][0]
    assert totals["accounting"] == "zcdp" and totals["zcdp_epsilon"] < 1.0
    assert f"by zCDP accounting (ρ = {rho:.4g}) ε = {totals['zcdp_epsilon']:g} at δ = 1e-06" in text


def test_laplace_release_with_delta_charges_no_delta(world, capsys):
    code, out, err = run_cli(_release(world, "--delta", str(DELTA), "--noise", "laplace"), capsys)
    assert code == 0, err
    assert "Laplace noise" in out
    assert len(err.strip().splitlines()) == 1 and "δ = 1e-09 is unused" in err
    (entry,) = _snapshot(capsys)["releases"]
    assert (entry["epsilon"], entry["delta"]) == (1.0, 0.0)


def test_release_text_names_the_gaussian_charge(world, capsys):
    code, out, err = run_cli(_release(world, "--delta", str(DELTA), "--noise", "gaussian"), capsys)
    assert code == 0, err
    assert f"ε = 1, δ = 1e-09 (ρ = {zcdp_rho(1.0, DELTA):.4g}) from dataset 'capped', Gaussian noise" in out


@pytest.mark.slow
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_simulate_gaussian_matches_the_projection(neighbours, capsys):
    """Without consistency the estimate is unbiased: the mean squared error over the trials matches
    the exact projection (discrete-Gaussian variances) within 4 standard errors."""
    code, out, err = run_cli(["simulate", "--bins", "64", "--epsilon", "1", "--delta", "1e-6", "--noise", "gaussian",
                              "--neighbours", neighbours, "--consistency", "none", "--trials", "400", "--seed", "7",
                              "--synthetic", "uniform", "--n", "1000", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["plan"]["noise"] == "discrete_gaussian" and data["plan"]["delta"] == 1e-6
    plan = auto_plan(64, PrivacySpec(1.0, neighbours, delta=1e-6), noise="gaussian")
    projected = float(prefix_variances(plan).sum())
    assert data["projected"]["total_sq_error"] == pytest.approx(projected, rel=1e-9)
    assert abs(data["counts"]["mean_sq_l2"] - projected) < 4 * data["counts"]["se_sq_l2"]
    code, text, err = run_cli(["simulate", "--bins", "64", "--epsilon", "1", "--delta", "1e-6", "--noise", "gaussian",
                               "--trials", "5", "--seed", "7", "--synthetic", "uniform", "--n", "1000"], capsys)
    assert code == 0 and "δ = 1e-06, Gaussian noise" in text


def test_a_negative_number_in_exponent_form_reaches_its_option(world, capsys):
    """argparse alone reads "-1e1" as an option ("expected one argument"); the CLI passes it on as a value."""
    code, _, err = run_cli(_release(world, "--lower", "-1e1"), capsys)
    assert code == 0, err
    with open(world / "out.csv", newline="") as handle:
        assert float(next(csv.DictReader(handle))["bin_lower"]) == -10.0
