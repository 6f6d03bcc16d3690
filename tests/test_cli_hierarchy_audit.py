"""Adversarial audit of ``dpgui hierarchy release`` (issue 15, wave 2): a crash after the spend must
say that the budget was spent, and the ledger must agree; typos are refused before anything is spent."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dpgui.errors import ParameterError
from dpgui.report.ledger import BudgetExceeded, Ledger

from cli_helpers import run_cli

LEVELS = "region,district"


@pytest.fixture
def world(tmp_path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    with open(folder / "data.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["region", "district"])
        for r in range(3):
            for d in range(3):
                writer.writerows([[f"R{r}", f"R{r}-D{d}"]] * (5 + 3 * d))
    with Ledger() as ledger:
        ledger.set_cap("schools", 10)
    return folder


def _release(world: Path, *extra: str) -> list[str]:
    return ["hierarchy", "release", str(world / "data.csv"), "--levels", LEVELS, "--epsilon", "1",
            "--dataset", "schools", "--out", str(world / "out.csv"), *extra]


def test_a_failure_after_the_spend_while_projecting_says_the_budget_was_spent(world, capsys, monkeypatch):
    """The published projection is computed after the spend and the noise. If it fails (here: forced),
    the message must say that ε was spent and under which ledger id — never a bare error that reads
    as "nothing happened" while the ledger holds the spend."""
    import dpgui.core.hierarchy as engine

    def broken(*args, **kwargs):
        raise ParameterError("projection failed (forced by the test)", "none")

    monkeypatch.setattr(engine, "project_hierarchy", broken)
    code, _, err = run_cli(_release(world), capsys)
    assert code == 2
    assert "was spent" in err and "ledger release" in err, err
    assert not (world / "out.csv").exists()
    with Ledger() as ledger:
        assert ledger.check_spend("schools", 9.0, 0.0, None) is not None  # 1 of 10 spent: 9 left
        with pytest.raises(BudgetExceeded):
            ledger.check_spend("schools", 9.5, 0.0, None)


@pytest.mark.parametrize("weights", ["1,1", "1,1,1,1"])
def test_weights_of_the_wrong_length_are_refused_before_anything_is_spent(world, capsys, weights):
    code, _, err = run_cli(_release(world, "--weights", weights), capsys)
    assert code == 2 and "weights" in err and "give 3 weights" in err, err
    assert not (world / "out.csv").exists()
    with Ledger() as ledger:
        ledger.check_spend("schools", 10.0, 0.0, None)  # nothing spent


@pytest.mark.parametrize("copy", [False, True])
def test_the_input_given_as_its_own_public_prior_is_refused(world, capsys, copy):
    """A slip (--prior data.csv, or a copy of it) would make the confidential counts the "public prior":
    the manifest would say "prior file" while the budgets, the notes and the published projection (at
    "the prior's counts") are computed on the confidential data without the --counts-from-data opt-in."""
    prior = world / "data.csv"
    if copy:
        prior = world / "prior-copy.csv"
        prior.write_bytes((world / "data.csv").read_bytes())
    code, _, err = run_cli(_release(world, "--prior", str(prior)), capsys)
    assert code == 2 and "is the data file itself" in err and "opt in" in err, err
    assert not (world / "out.csv").exists()
    with Ledger() as ledger:
        ledger.check_spend("schools", 10.0, 0.0, None)  # nothing spent
