"""The privacy-budget ledger: caps, spends, zCDP accounting, durability settings, concurrency,
and refusing files that are not ledgers (without touching them)."""

from __future__ import annotations

import json
import math
import os
import random
import re
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from dpgui.core.accounting import Shortfall, zcdp_epsilon, zcdp_rho
from dpgui.errors import DataError, DpguiError, ParameterError
from dpgui.report.ledger import (
    LEDGER_FILENAME, SCHEMA_VERSION, BudgetExceeded, CapBelowSpent, CapChange, Ledger, NoCapSet, ReasonNeeded,
    ReleaseEntry, Totals,
)
from dpgui.vocabulary import Charge
from dpgui.workspace.ledger_words import worded

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def ledger():
    with Ledger() as opened:
        yield opened


def _home() -> Path:
    return Path(os.environ["DPGUI_HOME"])


def _state(led: Ledger, dataset: str):
    return led.totals(dataset), led.releases(), led.cap_history(dataset)


def cks_epsilon_closed_form(rho: float, delta: float) -> float:
    """CKS 2020 Cor. 13 in ε-form, minimised over α on a dense grid (independent of dpgui's search)."""
    alphas = 1.0 + np.logspace(-6, 6, 400_001)
    am1 = alphas - 1.0
    values = alphas * rho + (math.log(1 / delta) + am1 * np.log1p(-1 / alphas) - np.log(alphas)) / am1
    return float(values.min())


# -- basic composition -------------------------------------------------------------------------


def test_three_thirds_fit_and_a_fourth_tiny_spend_does_not(ledger):
    cap = 0.7  # 0.7/3 is not exact in binary: the sum is only equal up to rounding
    ledger.set_cap("payroll", cap)
    for i in range(3):
        totals = ledger.spend("payroll", f"r{i}", Charge(cap / 3), mechanism="discrete_laplace_tree")
    assert totals.releases == 3
    assert totals.epsilon_spent == pytest.approx(cap, rel=1e-15)
    assert totals.epsilon_remaining == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(BudgetExceeded) as info:
        ledger.spend("payroll", "r3", Charge(cap * 1e-6))
    message = str(worded(info.value))
    assert "payroll" in message and "ε = 0.7" in message and "remains" in message and "spent" in message
    assert info.value.totals.releases == 3
    assert ledger.totals("payroll").releases == 3


def test_slightly_more_than_the_cap_in_one_go_is_refused_and_exactly_the_cap_fits(ledger):
    ledger.set_cap("a", 1.3)
    with pytest.raises(BudgetExceeded) as info:
        ledger.spend("a", "too-much", Charge(1.3 * 1.0000001))
    assert "ε = 1.3 remains" in str(worded(info.value)) and "at most ε = 1.3" in str(worded(info.value))
    assert ledger.totals("a").releases == 0
    assert ledger.spend("a", "exact", Charge(1.3)).epsilon_remaining == 0.0


def test_refusal_says_spent_cap_and_remaining_in_plain_numbers(ledger):
    ledger.set_cap("survey", 2.0)
    ledger.spend("survey", "first", Charge(1.5))
    with pytest.raises(BudgetExceeded) as info:
        ledger.spend("survey", "second", Charge(0.75))
    err = worded(info.value)
    assert isinstance(err, DpguiError)
    assert err.problem == ("release 'second' needs ε = 0.75 but dataset 'survey' has spent ε = 1.5 of its cap ε = 2 "
                           "in 1 release(s), so ε = 0.5 remains")
    assert err.fix.startswith("ask for at most ε = 0.5, or raise the cap with `dpgui ledger cap survey EPSILON`")


def test_delta_cap_is_respected(ledger):
    ledger.set_cap("d", 1.0, 1e-6)
    ledger.spend("d", "a", Charge(0.1, 6e-7))
    with pytest.raises(BudgetExceeded) as info:
        ledger.spend("d", "b", Charge(0.1, 6e-7))
    assert "δ = 4e-07 remains" in str(worded(info.value)) or "δ = 4e-07" in str(worded(info.value))
    ledger.spend("d", "c", Charge(0.1, 4e-7))
    totals = ledger.totals("d")
    assert totals.delta_spent == pytest.approx(1e-6) and totals.releases == 2
    assert totals.delta_remaining == pytest.approx(0.0, abs=1e-18)
    ledger.set_cap("pure", 1.0)  # δ = 0: no release with δ > 0 fits
    with pytest.raises(BudgetExceeded):
        ledger.spend("pure", "x", Charge(0.1, 1e-12))


def test_refusal_leaves_the_ledger_unchanged(ledger):
    ledger.set_cap("x", 1.0, 1e-6, "start")
    ledger.spend("x", "a", Charge(0.5, 5e-7), description={"bins": 16})
    before = _state(ledger, "x")
    size_before = (ledger.path.stat().st_size, ledger.path.with_name(LEDGER_FILENAME + "-wal").stat().st_size)
    for kwargs in [dict(epsilon=0.6), dict(epsilon=0.1, delta=6e-7), dict(epsilon=0.6, rho=0.01)]:
        with pytest.raises(BudgetExceeded):
            ledger.spend("x", "b", Charge(**kwargs))
    assert _state(ledger, "x") == before
    assert ledger.release("b") is None
    assert (ledger.path.stat().st_size, ledger.path.with_name(LEDGER_FILENAME + "-wal").stat().st_size) == size_before
    ledger.spend("x", "b", Charge(0.5))  # the refused id was not used up


def test_refusals_carry_the_facts_and_no_front_end_words(ledger):
    """The ledger says what is short and by how much; the words (a CLI command, the window's menus) are the
    front ends' (dpgui.workspace.ledger_words)."""
    ledger.set_cap("survey", 2.0, 1e-6)
    ledger.spend("survey", "first", Charge(1.5))
    with pytest.raises(BudgetExceeded) as info:
        ledger.spend("survey", "second", Charge(0.75))
    err = info.value
    assert (err.dataset_id, err.release_id, err.short_of) == ("survey", "second", Shortfall.EPSILON)
    assert (err.charge.epsilon, err.charge.delta, err.charge.rho) == (0.75, 0.0, None) and err.totals.epsilon_remaining == 0.5
    assert err.after.epsilon == 2.25 and not err.after.fits
    assert err.largest_epsilon == pytest.approx(0.5, rel=1e-8) and err.largest_epsilon <= 0.5
    with pytest.raises(BudgetExceeded) as info:
        ledger.check_spend("survey", Charge(0.1, 2e-6, 0.001))
    assert info.value.release_id is None and info.value.short_of is Shortfall.DELTA
    with pytest.raises(NoCapSet) as no_cap:
        ledger.spend("nobody", "r", Charge(0.1))
    with pytest.raises(CapBelowSpent) as below:
        ledger.set_cap("survey", 1.0, 1e-6, "lower")
    assert below.value.totals.epsilon_spent == 1.5 and (below.value.epsilon, below.value.delta) == (1.0, 1e-6)
    with pytest.raises(ReasonNeeded) as raised:
        ledger.set_cap("survey", 3.0, 1e-6)
    assert (raised.value.old, raised.value.new) == ((2.0, 1e-6), (3.0, 1e-6))
    for refusal in (err, info.value, no_cap.value, below.value, raised.value):
        assert "dpgui ledger" not in str(refusal) and "window" not in str(refusal) and "--" not in str(refusal)


def test_no_cap_set(ledger):
    with pytest.raises(NoCapSet) as info:
        ledger.spend("unknown", "r", Charge(0.1))
    assert "set a budget first: `dpgui ledger cap unknown EPSILON`, or in the Ledger window" in str(worded(info.value))
    with pytest.raises(NoCapSet):
        ledger.totals("unknown")
    with pytest.raises(NoCapSet) as info:
        ledger.spend("my data", "r", Charge(0.1))
    assert "`dpgui ledger cap 'my data' EPSILON`" in str(worded(info.value))
    assert ledger.datasets() == [] and ledger.releases() == []


def test_duplicate_release_id_is_refused_even_across_datasets(ledger):
    ledger.set_cap("a", 5.0)
    ledger.set_cap("b", 5.0)
    ledger.spend("a", "rel-1", Charge(1.0))
    for dataset in ("a", "b"):
        with pytest.raises(DataError) as info:
            ledger.spend(dataset, "rel-1", Charge(1.0))
        assert "already recorded" in str(worded(info.value))
    assert ledger.totals("a").epsilon_spent == 1.0 and ledger.totals("b").releases == 0


def test_cap_changes_are_logged_with_reasons(ledger):
    ledger.set_cap("p", 1.0, 0.0, "initial budget")
    ledger.spend("p", "r1", Charge(0.4))
    ledger.set_cap("p", 2.0, 1e-6, "board approved more")
    ledger.set_cap("p", 1.5, 1e-6, "policy 2025")
    ledger.set_cap("p", 1.5, 1e-6, "same again")  # no change, nothing logged
    history = ledger.cap_history("p")
    assert [(c.old_epsilon, c.new_epsilon, c.old_delta, c.new_delta, c.reason) for c in history] == [
        (None, 1.0, None, 0.0, "initial budget"),
        (1.0, 2.0, 0.0, 1e-6, "board approved more"),
        (2.0, 1.5, 1e-6, 1e-6, "policy 2025"),
    ]
    assert all(isinstance(c, CapChange) and c.dataset_id == "p" and c.changed_utc.endswith("Z") for c in history)
    assert [c.changed_utc for c in history] == sorted(c.changed_utc for c in history)
    totals = ledger.totals("p")
    assert (totals.cap_epsilon, totals.cap_delta, totals.epsilon_remaining) == (1.5, 1e-6, pytest.approx(1.1))
    assert ledger.cap_history("nobody") == []


def test_lowering_the_cap_below_what_is_spent_is_refused(ledger):
    ledger.set_cap("p", 1.0, 1e-6)
    ledger.spend("p", "r1", Charge(0.4, 3e-7))
    before = _state(ledger, "p")
    with pytest.raises(DataError) as info:
        ledger.set_cap("p", 0.39, 1e-6, "too low")
    assert "already spent ε = 0.4" in str(worded(info.value))
    with pytest.raises(DataError) as info:
        ledger.set_cap("p", 1.0, 2e-7, "δ too low")
    assert "already spent" in str(worded(info.value)) and "δ = 3e-07" in str(worded(info.value))
    assert _state(ledger, "p") == before
    ledger.set_cap("p", 0.4, 3e-7, "exactly what is spent")
    assert ledger.totals("p").epsilon_remaining == 0.0


@pytest.mark.parametrize("args", [("d", 0.0), ("d", -1.0), ("d", float("nan")), ("d", float("inf")), ("d", "one"),
                                  ("d", 1.0, 1.0), ("d", 1.0, -1e-9), ("d", 1.0, float("nan")),
                                  ("", 1.0), (" d", 1.0), ("d\n", 1.0), ("a\tb", 1.0), ("x" * 201, 1.0), (7, 1.0)])
def test_bad_caps_and_ids_are_parameter_errors(ledger, args):
    with pytest.raises(ParameterError) as info:
        ledger.set_cap(*args)
    assert info.value.fix
    assert ledger.datasets() == []


def test_bad_spends_are_parameter_errors(ledger):
    ledger.set_cap("d", 1.0, 1e-6)
    ledger.set_cap("x" * 200, 1.0)  # 200 characters is allowed
    for kwargs in [dict(epsilon=-0.1), dict(epsilon=float("nan")), dict(epsilon=0.1, delta=1.0),
                   dict(epsilon=0.1, rho=-1.0), dict(epsilon=0.1, rho=float("inf"))]:
        with pytest.raises(ValueError, match="charge"):  # a charge no release can cost cannot be made, nor spent
            ledger.spend("d", "r", Charge(**kwargs))
    for description in [{"x": float("nan")}, {"x": object()}, [1, 2]]:
        with pytest.raises(ParameterError):
            ledger.spend("d", "r", Charge(0.1), description=description)
    with pytest.raises(ParameterError):
        ledger.spend("d", "r", (0.1, 0.0, None))  # the figures without a Charge
    with pytest.raises(ParameterError):
        ledger.spend("d", "", Charge(0.1))
    assert ledger.totals("d").releases == 0


# -- zCDP accounting ---------------------------------------------------------------------------


def _gaussian_release(rho: float, own_delta: float = 1e-7) -> dict:
    """A Gaussian release's own (ε, δ) — what it would cost alone — and its ρ."""
    return dict(charge=Charge(zcdp_epsilon(rho, own_delta), own_delta, rho), mechanism="discrete_gaussian_tree")


def test_gaussian_releases_compose_under_zcdp(ledger):
    cap_eps, cap_delta, rho = 1.0, 1e-6, 0.008
    ledger.set_cap("g", cap_eps, cap_delta)
    for i in range(3):
        totals = ledger.spend("g", f"g{i}", **_gaussian_release(rho))
    assert totals.epsilon_spent > 1.5 * cap_eps  # basic composition alone would have refused the third
    assert totals.rho_spent == pytest.approx(3 * rho, rel=1e-15)
    assert totals.accounting == "zcdp"
    # independent: the closed form minimised on a grid, and (if installed) OpenDP
    expected = cks_epsilon_closed_form(3 * rho, cap_delta)
    assert totals.zcdp_epsilon == pytest.approx(expected, rel=1e-7)
    assert totals.zcdp_epsilon <= cap_eps
    assert totals.epsilon_remaining == pytest.approx(cap_eps - expected, rel=1e-6)
    assert totals.rho_remaining == pytest.approx(zcdp_rho(cap_eps, cap_delta) - 3 * rho, rel=1e-9)
    try:
        import opendp.prelude as dp
    except ImportError:
        pass
    else:
        dp.enable_features("contrib")
        meas = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0)
        d_in = math.sqrt(2 * totals.rho_spent)
        assert totals.zcdp_epsilon == pytest.approx(dp.c.make_zCDP_to_approxDP(meas).map(d_in).epsilon(cap_delta),
                                                    rel=1e-6)
    # a fourth does not fit (Σρ = 0.032 → ε ≈ 1.16 > 1), and the refusal says so in ρ
    with pytest.raises(BudgetExceeded) as info:
        ledger.spend("g", "g3", **_gaussian_release(rho))
    err, words = info.value, worded(info.value)
    assert "zCDP" in words.problem and err.short_of == "epsilon"
    quoted = re.search(r"ask for at most ε = ([0-9.e+-]+) at δ = 1e-07 \(ρ = ([0-9.e+-]+) is left\)", words.fix)
    assert quoted is not None, words.fix
    most, left = float(quoted.group(1)), ledger.totals("g").rho_remaining
    assert float(quoted.group(2)) == pytest.approx(left, rel=1e-5)
    # the quoted ε fits (its ρ at δ = 1e-7 is within what is left) and 0.1 % more would not
    assert zcdp_rho(most, 1e-7) <= left < zcdp_rho(most * 1.001, 1e-7)
    # but a smaller Gaussian release that uses exactly what remains does
    left = ledger.totals("g").rho_remaining
    assert ledger.spend("g", "g4", **_gaussian_release(left)).zcdp_epsilon == pytest.approx(cap_eps, rel=1e-9)


def test_one_release_without_rho_falls_back_to_basic_composition(ledger):
    """A release recorded without ρ (a Laplace release of an earlier dpgui: ρ NULL) makes the dataset
    count by basic composition; this dpgui charges every Laplace release ρ = ε²/2 instead."""
    ledger.set_cap("mix", 1.0, 1e-6)
    for i in range(3):
        ledger.spend("mix", f"g{i}", **_gaussian_release(0.008))
    with pytest.raises(BudgetExceeded) as info:
        ledger.spend("mix", "lap", Charge(0.001), mechanism="discrete_laplace_tree")  # tiny, but basic Σε > cap already
    assert "basic composition" in str(worded(info.value)) and "a release with a ρ" in str(worded(info.value))
    assert "may still spend up to ρ" in str(worded(info.value))
    # the same tiny Laplace release charged as this dpgui does, with ρ = ε²/2, fits under zCDP
    totals = ledger.spend("mix", "lap-rho", Charge(0.001, rho=0.001**2 / 2), mechanism="discrete_laplace_tree")
    assert totals.accounting == "zcdp" and totals.rho_spent == pytest.approx(3 * 0.008 + 0.001**2 / 2, rel=1e-12)
    # Laplace without ρ first: then the Gaussians count by basic composition too
    ledger.set_cap("mix2", 1.0, 1e-6)
    ledger.spend("mix2", "m2-lap", Charge(0.1), mechanism="discrete_laplace_tree")
    ledger.spend("mix2", "m2-g0", **_gaussian_release(0.008))  # basic: 0.1 + 0.5 ≤ 1
    totals = ledger.totals("mix2")
    assert totals.rho_spent is None and totals.zcdp_epsilon is None and totals.rho_remaining is None
    assert totals.accounting == "basic"
    with pytest.raises(BudgetExceeded):
        ledger.spend("mix2", "m2-g1", **_gaussian_release(0.008))  # zCDP alone would allow it; basic does not


def test_a_release_with_delta_and_a_cap_without_delta_is_refused_with_the_fix(ledger):
    ledger.set_cap("pure", 5.0, 0.0)
    with pytest.raises(BudgetExceeded) as info:
        ledger.check_spend("pure", **{k: v for k, v in _gaussian_release(0.008, 1e-9).items() if k != "mechanism"})
    err, words = info.value, worded(info.value)
    assert err.short_of == "cap_delta"
    assert "needs δ = 1e-09 (Gaussian noise)" in words.problem and "has δ = 0" in words.problem
    assert words.fix.startswith("raise the cap's δ to at least 1e-09") and "--delta 1e-09" in words.fix
    assert "use Laplace noise" in words.fix
    with pytest.raises(BudgetExceeded) as info:
        ledger.spend("pure", "g", **_gaussian_release(0.008, 1e-9))
    assert info.value.short_of == "cap_delta" and ledger.totals("pure").releases == 0


def test_not_enough_delta_left_says_so(ledger):
    ledger.set_cap("d", 5.0, 1e-6)
    ledger.spend("d", "old", Charge(0.1, 8e-7))  # recorded without ρ (an earlier dpgui): basic composition only
    with pytest.raises(BudgetExceeded) as info:
        ledger.spend("d", "new", Charge(0.1, 5e-7, 0.001))
    err, words = info.value, worded(info.value)
    assert err.short_of == "delta" and words.problem.startswith("not enough δ left: release 'new' needs δ = 5e-07")
    assert "δ = 2e-07 remains" in words.problem and "carry no ρ" in words.problem
    assert words.fix.startswith("raise the cap's δ")


def test_a_refused_laplace_release_is_told_the_largest_epsilon_that_fits(ledger):
    """A Laplace release charged as this dpgui does (ρ = ε²/2) on a zCDP-counted dataset: the quoted ε
    fits, by zCDP (ε²/2 ≤ ρ left) or basic composition, whichever allows more."""
    ledger.set_cap("m", 1.0, 1e-6)
    for i in range(3):
        ledger.spend("m", f"g{i}", **_gaussian_release(0.008))
    with pytest.raises(BudgetExceeded) as info:
        ledger.spend("m", "lap", Charge(0.2, rho=0.2**2 / 2))
    quoted = re.search(r"ask for at most ε = ([0-9.e+-]+) \(ρ = ", worded(info.value).fix)
    assert quoted is not None and "at δ" not in worded(info.value).fix, worded(info.value).fix
    most = float(quoted.group(1))
    left = ledger.totals("m").rho_remaining
    assert most == pytest.approx(math.sqrt(2 * left), rel=1e-3) and most <= math.sqrt(2 * left)
    ledger.spend("m", "lap-fits", Charge(most, rho=most**2 / 2))  # and it does fit


def test_totals_after_a_spend_record_nothing(ledger):
    ledger.set_cap("t", 1.0, 1e-6)
    ledger.spend("t", "a", **_gaussian_release(0.008))
    after = ledger.totals_after("t", **{k: v for k, v in _gaussian_release(0.008).items() if k != "mechanism"})
    assert after.releases == 2 and after.rho_spent == pytest.approx(0.016, rel=1e-12)
    assert after.zcdp_epsilon == pytest.approx(cks_epsilon_closed_form(0.016, 1e-6), rel=1e-7)
    assert ledger.totals("t").releases == 1
    with pytest.raises(NoCapSet):
        ledger.totals_after("nobody", Charge(0.1))


def test_zcdp_needs_a_delta_in_the_cap(ledger):
    ledger.set_cap("pure", 5.0, 0.0)
    totals = ledger.totals("pure")
    assert totals.zcdp_epsilon is None and totals.rho_remaining is None
    with pytest.raises(BudgetExceeded):
        ledger.spend("pure", "g", **_gaussian_release(0.008))


def test_lowering_the_cap_counts_zcdp(ledger):
    ledger.set_cap("g", 1.0, 1e-6)
    for i in range(3):
        ledger.spend("g", f"g{i}", **_gaussian_release(0.008))
    zeps = ledger.totals("g").zcdp_epsilon
    ledger.set_cap("g", zeps * 1.001, 1e-6, "tighten")  # below basic Σε = 1.5 but above the zCDP total
    with pytest.raises(DataError) as info:
        ledger.set_cap("g", zeps * 0.99, 1e-6, "too tight")
    assert "already spent" in str(worded(info.value)) and "zCDP" in str(worded(info.value))
    with pytest.raises(DataError):
        ledger.set_cap("g", zeps * 1.001, 1e-9, "smaller δ makes the zCDP total larger")


# -- reading, bundles, persistence ---------------------------------------------------------------


def test_releases_newest_first_and_bundle_pointer(ledger):
    ledger.set_cap("a", 10.0)
    ledger.set_cap("b", 10.0)
    ledger.spend("a", "r1", Charge(1.0), mechanism="m", description={"bins": 64, "bounds": [0, 1]})
    ledger.spend("b", "r2", Charge(2.0))
    ledger.spend("a", "r3", Charge(3.0))
    assert [r.release_id for r in ledger.releases()] == ["r3", "r2", "r1"]
    assert [r.release_id for r in ledger.releases("a")] == ["r3", "r1"]
    assert ledger.releases("nobody") == []
    entry = ledger.release("r1")
    assert isinstance(entry, ReleaseEntry)
    assert (entry.dataset_id, entry.epsilon, entry.delta, entry.rho, entry.mechanism) == ("a", 1.0, 0.0, None, "m")
    assert entry.description == {"bins": 64, "bounds": [0, 1]} and entry.bundle is None
    assert entry.created_utc.endswith("Z")
    before = ledger.totals("a")
    ledger.record_bundle("r1", "/somewhere/r1/manifest.json")
    ledger.record_bundle("r1", "/elsewhere/manifest.json")
    assert ledger.release("r1").bundle == "/elsewhere/manifest.json"
    assert ledger.totals("a") == before
    with pytest.raises(DataError):
        ledger.record_bundle("missing", "/x")
    assert ledger.release("missing") is None
    assert [t.dataset_id for t in ledger.datasets()] == ["a", "b"]
    assert all(isinstance(t, Totals) for t in ledger.datasets())


def test_spends_survive_reopening_and_cannot_be_edited():
    with Ledger() as led:
        led.set_cap("a", 1.0)
        led.spend("a", "r1", Charge(0.25))
        path = led.path
    with Ledger(path) as led:
        assert led.totals("a").epsilon_spent == 0.25
    raw = sqlite3.connect(path)
    try:
        for statement in ["UPDATE releases SET epsilon = 0 WHERE release_id = 'r1'", "DELETE FROM releases",
                          "DELETE FROM cap_changes", "UPDATE cap_changes SET new_epsilon = 9", "DELETE FROM datasets"]:
            with pytest.raises(sqlite3.DatabaseError):
                raw.execute(statement)
    finally:
        raw.close()
    with Ledger(path) as led:
        assert led.totals("a").epsilon_spent == 0.25


def test_wal_mode_full_sync_and_the_file_lives_in_dpgui_home(ledger):
    assert ledger.path == _home() / LEDGER_FILENAME
    assert ledger.path.is_file()
    raw = sqlite3.connect(ledger.path)
    try:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        raw.close()
    conn = ledger._conn  # the ledger's own connection: durability settings are per connection
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    if os.name == "posix":
        assert ledger.path.stat().st_mode & 0o077 == 0


# -- files that are not ledgers ----------------------------------------------------------------


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("content", [random.Random(1).randbytes(4096), b"hello", b"dataset,epsilon\npayroll,1\n",
                                     b"SQLite format 3\x00" + bytes(50)])
def test_garbage_file_is_refused_untouched(content):
    path = _home() / LEDGER_FILENAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    before = _snapshot(path.parent)
    with pytest.raises(DataError) as info:
        Ledger()
    assert str(path) in str(worded(info.value)) and "not a dpgui budget ledger" in str(worded(info.value))
    assert info.value.fix
    assert _snapshot(path.parent) == before  # same bytes, and no -wal/-shm files appeared


def test_another_programs_database_is_refused_untouched(tmp_path):
    path = tmp_path / "other.sqlite3"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE t (x)")
    raw.execute("INSERT INTO t VALUES (1)")
    raw.commit()
    raw.close()
    before = _snapshot(tmp_path)
    with pytest.raises(DataError) as info:
        Ledger(path)
    assert "another program's SQLite database" in str(worded(info.value))
    assert _snapshot(tmp_path) == before


def test_newer_schema_version_is_refused_untouched():
    with Ledger() as led:
        led.set_cap("a", 1.0)
        path = led.path
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.commit()
    raw.close()  # the last connection checkpoints: the header in the main file says version 2
    before = _snapshot(path.parent)
    with pytest.raises(DataError) as info:
        Ledger(path)
    assert str(path) in str(worded(info.value)) and "newer dpgui" in str(worded(info.value)) and "update dpgui" in info.value.fix
    assert _snapshot(path.parent) == before


def test_newer_schema_version_still_in_the_wal_is_refused_untouched():
    """The version change is only in the write-ahead log (not yet in the main file's header):
    SQLite's view is checked too."""
    with Ledger() as led:
        led.set_cap("a", 1.0)
        path = led.path
    raw = sqlite3.connect(path)
    try:
        raw.execute("PRAGMA wal_autocheckpoint = 0")
        raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        raw.commit()
        before = _snapshot(path.parent)
        assert int.from_bytes(before[LEDGER_FILENAME][60:64], "big") == SCHEMA_VERSION
        with pytest.raises(DataError) as info:
            Ledger(path)
        assert "newer dpgui" in str(worded(info.value))
        after = _snapshot(path.parent)
        assert after[LEDGER_FILENAME] == before[LEDGER_FILENAME]
        assert after[LEDGER_FILENAME + "-wal"] == before[LEDGER_FILENAME + "-wal"]
    finally:
        raw.close()


def test_an_empty_file_becomes_a_ledger(tmp_path):
    path = tmp_path / "new" / "ledger.sqlite3"
    path.parent.mkdir()
    path.touch()
    with Ledger(path) as led:
        led.set_cap("a", 1.0)
    with Ledger(path) as led:
        assert led.totals("a").cap_epsilon == 1.0


# -- concurrency -------------------------------------------------------------------------------

WORKER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from dpgui.report.ledger import BudgetExceeded, Ledger
    from dpgui.vocabulary import Charge

    path, start, name, attempts, eps, cap = (Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
                                             float(sys.argv[5]), float(sys.argv[6]))
    deadline = time.monotonic() + 60
    while not start.exists():
        if time.monotonic() > deadline:
            sys.exit(3)
        time.sleep(0.0005)
    accepted = refused = 0
    with Ledger(path) as ledger:  # several processes may create the file at once
        ledger.set_cap("shared", cap, 0.0, "worker " + name)  # the same cap from every worker: logged once
        for i in range(attempts):
            try:
                ledger.spend("shared", f"{name}-{i}", Charge(eps), mechanism="test", description={"worker": name})
                accepted += 1
            except BudgetExceeded:
                refused += 1
    print(json.dumps({"accepted": accepted, "refused": refused}))
""")


@pytest.mark.parametrize("precreated", [True, False], ids=["existing-ledger", "created-concurrently"])
def test_concurrent_processes_never_overspend(tmp_path, precreated):
    cap, eps, workers, attempts = 2.0, 0.1, 4, 12
    path = tmp_path / "shared" / LEDGER_FILENAME
    if precreated:
        with Ledger(path) as led:
            led.set_cap("shared", cap, 0.0, "set before the workers start")
    start = tmp_path / "start"
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(path), str(start), f"w{k}", str(attempts), str(eps),
                               str(cap)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for k in range(workers)]
    time.sleep(0.5)  # let them all start and wait at the barrier
    start.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    expected = math.floor(cap / eps + 1e-9)
    assert expected == 20
    assert sum(r["accepted"] for r in results) == expected
    assert sum(r["refused"] for r in results) == workers * attempts - expected
    with Ledger(path) as led:
        totals = led.totals("shared")
        assert totals.releases == expected
        assert totals.epsilon_spent <= cap * (1 + 1e-9)
        assert len(led.releases("shared")) == expected
        assert len(led.cap_history("shared")) == 1


def test_gaussian_releases_whose_own_deltas_exceed_the_cap_count_by_zcdp(ledger):
    """Each Gaussian release quotes (ε, δ) at its own δ; under zCDP only Σρ and the cap's δ matter."""
    ledger.set_cap("g", 1.0, 1e-6)
    for i in range(3):
        totals = ledger.spend("g", f"g{i}", **_gaussian_release(0.005, own_delta=5e-7))
    assert totals.delta_spent > totals.cap_delta  # basic composition does not hold …
    assert totals.accounting == "zcdp"  # … so the remaining budget is the zCDP one
    assert totals.epsilon_remaining == pytest.approx(1.0 - cks_epsilon_closed_form(0.015, 1e-6), rel=1e-6)
