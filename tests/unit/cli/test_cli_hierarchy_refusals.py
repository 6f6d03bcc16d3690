"""Hostile and mistaken input to ``dpgui hierarchy release``: a crash after the spend must
say that the budget was spent, and the ledger must agree; typos are refused before anything is spent."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dpgui.errors import ParameterError
from dpgui.report.ledger import BudgetExceeded, Ledger
from dpgui.vocabulary import Charge

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
            "--dataset", "schools", "--out", str(world / "out.csv"), "--categories-public", *extra]


def test_a_failure_after_the_spend_while_projecting_says_the_budget_was_spent(world, capsys, monkeypatch):
    """The published projection is computed after the spend and the noise. If it fails (here: forced),
    the message must say that ε was spent and under which ledger id — never a bare error that reads
    as "nothing happened" while the ledger holds the spend."""
    import dpgui.core.hierarchy_errors as errors

    def broken(*args, **kwargs):
        raise ParameterError("projection failed (forced by the test)", "none")

    monkeypatch.setattr(errors, "plan_errors", broken)  # the published projection's (made after the spend)
    code, _, err = run_cli(_release(world), capsys)
    assert code == 2
    assert "was spent" in err and "ledger release" in err, err
    assert not (world / "out.csv").exists()
    with Ledger() as ledger:
        assert ledger.check_spend("schools", Charge(9.0, 0.0, None)) is not None  # 1 of 10 spent: 9 left
        with pytest.raises(BudgetExceeded):
            ledger.check_spend("schools", Charge(9.5, 0.0, None))


@pytest.mark.parametrize("weights", ["1,1", "1,1,1,1"])
def test_weights_of_the_wrong_length_are_refused_before_anything_is_spent(world, capsys, weights):
    code, _, err = run_cli(_release(world, "--weights", weights), capsys)
    assert code == 2 and "weights" in err and "give 3 weights" in err, err
    assert not (world / "out.csv").exists()
    with Ledger() as ledger:
        ledger.check_spend("schools", Charge(10.0, 0.0, None))  # nothing spent


@pytest.mark.parametrize("variant", ["itself", "copy", "plus a blank line", "gzip"])
def test_the_input_given_as_its_own_public_prior_is_refused(world, capsys, variant):
    """A slip (--prior data.csv, a copy of it, the data plus one blank line, data.csv.gz) would make the
    confidential counts the "public prior": the manifest would say "prior file" while the budgets, the
    notes and the published projection (at "the prior's counts") are computed on the confidential data
    without the --counts-from-data opt-in, and would publish the hash of a copy of the data. The prior's
    path counts are compared with the data's (not its bytes), before anything is spent."""
    import gzip

    data = (world / "data.csv").read_bytes()
    prior = {"itself": world / "data.csv", "copy": world / "prior-copy.csv", "plus a blank line": world / "blank.csv",
             "gzip": world / "data.csv.gz"}[variant]
    if variant != "itself":
        prior.write_bytes(gzip.compress(data) if variant == "gzip" else data + (b"\n" if variant != "copy" else b""))
    code, _, err = run_cli(_release(world, "--prior", str(prior)), capsys)
    assert code == 2 and "has the data's own counts on every path" in err and "opt in" in err, err
    assert not (world / "out.csv").exists()
    with Ledger() as ledger:
        ledger.check_spend("schools", Charge(10.0, 0.0, None))  # nothing spent


# ---------------------------------------------------------------- the categories must be declared public
def _no_touch(m) -> None:
    """Reading the data or asking the ledger fails the test (the refusal must come before either)."""
    import dpgui.data.hierarchy
    import dpgui.data.readers

    def never(*args, **kwargs):
        raise AssertionError("the data or the ledger was touched")

    m.setattr(dpgui.data.hierarchy, "count_paths", never)
    m.setattr(dpgui.data.readers, "check_data_file", never)
    m.setattr(Ledger, "check_spend", never)


def test_a_release_without_a_prior_needs_the_categories_declared_public(world, capsys, monkeypatch):
    """Without --prior the data's own categories are the published node list, which DP does not cover:
    refused (exit 2, one line naming both fixes) before the data or the ledger is touched."""
    args = [a for a in _release(world) if a != "--categories-public"]
    with monkeypatch.context() as m:
        _no_touch(m)
        code, out, err = run_cli(args, capsys)
    assert code == 2 and out == "", err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "AssertionError" not in err, err
    assert "declared public" in lines[0] and "--categories-public" in lines[0] and "--prior" in lines[0], lines[0]
    assert not (world / "out.csv").exists()
    with Ledger() as ledger:
        ledger.check_spend("schools", Charge(10.0, 0.0, None))  # nothing spent


@pytest.mark.slow
def test_declared_public_categories_are_released_and_the_manifest_says_so(world, capsys):
    import json

    from dpgui.report.keystore import create_key

    create_key("officer", "a long test passphrase", world)
    (world / "pass.txt").write_text("a long test passphrase\n", encoding="utf-8")
    code, out, err = run_cli(_release(world, "--json", "--bundle", str(world), "--key", str(world / "officer.key"),
                                      "--passphrase-file", str(world / "pass.txt"), "--name", "rel"), capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert "declared public" in summary["node_list_source"]
    manifest = json.loads((world / "rel.manifest.json").read_text(encoding="utf-8"))
    assert manifest["hierarchy"]["node_list_source"] == "data (declared public)"


def test_with_a_prior_the_declaration_is_not_needed_and_changes_nothing(world, capsys):
    import json

    with open(world / "prior.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["region", "district", "count"])
        writer.writerows([[f"R{r}", f"R{r}-D{d}", 10] for r in range(3) for d in range(3)])
    base = [a for a in _release(world, "--prior", str(world / "prior.csv"), "--json") if a != "--categories-public"]
    for extra in ([], ["--categories-public"]):
        (world / "out.csv").unlink(missing_ok=True)
        code, out, err = run_cli(base + extra, capsys)
        assert code == 0, err
        assert json.loads(out)["node_list_source"] == "prior file"


def test_the_help_says_what_categories_public_declares(capsys):
    code, out, _ = run_cli(["hierarchy", "release", "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert "--categories-public" in text and "rare category" in text and "not needed with --prior" in text


# ---------------------------------------------------------------- --out never replaces the prior
def _write_prior(world: Path) -> Path:
    with open(world / "prior.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["region", "district", "count"])
        writer.writerows([[f"R{r}", f"R{r}-D{d}", 10] for r in range(3) for d in range(3)])
    return world / "prior.csv"


@pytest.mark.parametrize("how", ["same path", "another path", "symbolic link", "hard link"])
def test_out_with_force_never_replaces_the_prior(world, capsys, how):
    import os

    prior = _write_prior(world)
    before = prior.read_bytes()
    (world / "sub").mkdir()
    out = {"same path": prior, "another path": world / "sub" / ".." / "prior.csv",
           "symbolic link": world / "link.csv", "hard link": world / "hard.csv"}[how]
    if how == "symbolic link":
        os.symlink(prior, out)
    elif how == "hard link":
        os.link(prior, out)
    args = _release(world, "--prior", str(prior), "--force")
    args[args.index("--out") + 1] = str(out)
    code, _, err = run_cli(args, capsys)
    assert code == 2 and "prior" in err and len(err.strip().splitlines()) == 1, err
    assert prior.read_bytes() == before
    with Ledger() as ledger:
        ledger.check_spend("schools", Charge(10.0, 0.0, None))  # nothing spent


# ---------------------------------------------------------------- --alpha with δ = 0 is said, not ignored
ALPHA_NOTE = "α is used only with δ > 0 (the mechanisms of Ghazi et al. 2023 need (ε, δ))"


@pytest.mark.parametrize("command", ["plan", "release", "simulate"])
def test_alpha_without_delta_is_said_to_be_unused(world, capsys, command):
    if command == "release":
        args = _release(world, "--alpha", "0.5")
    else:
        args = ["hierarchy", command, "--levels", LEVELS, "--input", str(world / "data.csv"), "--epsilon", "1",
                "--alpha", "0.5"] + (["--trials", "4", "--seed", "1"] if command == "simulate" else [])
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert f"dpgui hierarchy {command}: note: {ALPHA_NOTE}" in err.splitlines(), err
    if command != "release":  # with δ > 0 α is used: no note
        code, _, err = run_cli([*args, "--delta", "1e-7"], capsys)
        assert code == 0 and ALPHA_NOTE not in err, err


def test_multiplicative_noise_without_delta_is_refused_before_the_data_is_read(world, capsys, monkeypatch):
    import dpgui.data.hierarchy

    def never(*args, **kwargs):
        raise AssertionError("the data was read")

    monkeypatch.setattr(dpgui.data.hierarchy, "count_paths", never)
    code, out, err = run_cli(_release(world, "--noise", "multiplicative", "--alpha", "0.5"), capsys)
    assert code == 2 and out == "" and "AssertionError" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "δ > 0" in lines[0] and "--delta" in lines[0], lines[0]
    assert not (world / "out.csv").exists()
    with Ledger() as ledger:
        ledger.check_spend("schools", Charge(10.0, 0.0, None))  # nothing spent


# ---------------------------------------------------------------- the ledger check before the data is read
def _past_gaussian_spend(dataset: str) -> None:
    """Cap (ε 1, δ 1e-2) with a past Gaussian spend (ε 0.8, δ 1e-3, its CKS ρ): Σε leaves 0.2, but the
    zCDP total leaves room for a Gaussian release of ε 0.5, δ 1e-3 (ρ ≈ 0.018) and not for Laplace's
    ρ = ε²/2 = 0.125."""
    from dpgui.core.accounting import zcdp_rho

    with Ledger() as ledger:
        ledger.set_cap(dataset, 1.0, 1e-2)
        ledger.spend(dataset, "past-gaussian", Charge(0.8, 1e-3, zcdp_rho(0.8, 1e-3)), "gaussian", {})


def test_auto_noise_is_not_refused_early_when_the_noise_it_chooses_fits(world, capsys):
    """auto with δ > 0 may choose Gaussian noise (here it does: 3 and 9 nodes, δ = 1e-3): the early check
    must not refuse it for Laplace's charge alone; the exact charge is checked once the plan is made."""
    import json

    _past_gaussian_spend("zcdp")
    # (the last --epsilon counts: 0.5)
    args = [a if a != "schools" else "zcdp" for a in _release(world, "--epsilon", "0.5", "--delta", "1e-3", "--json")]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["noise"] == "gaussian"
    with Ledger() as ledger:
        entry = ledger.release(summary["release_id"])
    assert entry is not None


def test_the_exact_charge_is_checked_after_reading_when_the_early_one_passes(world, capsys):
    """The converse: Laplace's charge fits a cap with δ = 0, so the early check passes, but auto chooses
    Gaussian (δ > 0): refused once the plan is made, before the spend — nothing spent, nothing written."""
    with Ledger() as ledger:
        ledger.set_cap("pure", 10.0)
    args = [a if a != "schools" else "pure" for a in _release(world, "--epsilon", "0.5", "--delta", "1e-3")]
    code, out, err = run_cli(args, capsys)
    assert code == 2 and out == "" and "δ = 0" in err, err
    assert not (world / "out.csv").exists()
    with Ledger() as ledger:
        ledger.check_spend("pure", Charge(10.0, 0.0, None))  # nothing spent


@pytest.mark.parametrize("noise", ["auto", "laplace", "gaussian", "multiplicative"])
@pytest.mark.parametrize("delta", [0.0, 1e-9, 1e-3])
@pytest.mark.parametrize("alpha", [None, 0.5])
def test_the_early_charges_hold_the_charge_of_every_plan_the_options_can_make(noise, delta, alpha):
    """Independent of the CLI's logic: plan every tree shape below with the options and check that its
    exact ledger charge (uniform allocation) is one of the early charges, so the early check, which
    refuses only when none of them fits, never refuses a release whose plan would fit."""
    from dpgui.cli.hierarchy import check_hierarchy_delta
    from dpgui.cli.hierarchy_release import _provisional_charges
    from dpgui.cli.requests import HierarchyOptions, SourceRequest
    from dpgui.core.hierarchy import plan_hierarchy
    from dpgui.core.plan import PrivacySpec
    from dpgui.vocabulary import AUTO, Allocation, Neighbours, Noise

    source = SourceRequest(location="data.csv", table=None, query=None, engine="local", spark_master=None,
                           delimiter=None, decimal=None, encoding=None, n_public=False, command="hierarchy release")
    options = HierarchyOptions(levels=("a", "b"), epsilon=0.5, delta=delta, neighbours=Neighbours.CHANGE,
                               records_per_person=1, noise=AUTO if noise == AUTO else Noise(noise),
                               allocation=Allocation.UNIFORM, target=None, weights=None, consistency=AUTO,
                               alpha=alpha, counts_from_data=False, n=None, prior=None, source=source, json=False)
    if (noise in ("gaussian", "multiplicative") and delta == 0) or (noise == "multiplicative" and alpha is None):
        with pytest.raises(ParameterError):  # refused before anything is read or charged
            check_hierarchy_delta(options.noise, options.delta_or_zero, options.alpha)
        with pytest.raises(ParameterError):  # and by the planner
            plan_hierarchy((1, 3, 9), PrivacySpec(0.5, "change", 1, delta), noise=noise, alpha=alpha)
        return
    charges = _provisional_charges(options)
    for sizes in [(1, 3, 9), (1, 2, 4, 8, 16), (1, 40, 400)]:
        plan = plan_hierarchy(sizes, PrivacySpec(0.5, "change", 1, delta), noise=noise, alpha=alpha)
        eps, dlt, rho = plan.ledger_charge()
        assert any(c[0] == pytest.approx(eps, rel=1e-9) and c[1] == pytest.approx(dlt, rel=1e-9)
                   and (c[2] is None) == (rho is None) and (rho is None or c[2] == pytest.approx(rho, rel=1e-9))
                   for c in charges), (sizes, plan.noise, plan.ledger_charge(), charges)
