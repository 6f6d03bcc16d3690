"""What ``dpgui hierarchy`` says about the data it used, and about its mechanism, is true."""

from __future__ import annotations

import json

from hierarchy_world import LEVELS, world  # noqa: F401 — the fixture

from cli_helpers import run_cli


def test_simulate_on_the_data_does_not_say_its_counts_were_not_used(world, capsys):  # noqa: F811
    """``simulate --input`` simulates releases of the data's own counts (its truth), so the report must
    not say "its counts were not used" (what ``plan --input`` says: there the counts are not read)."""
    code, out, err = run_cli(["hierarchy", "simulate", "--levels", LEVELS, "--input", str(world / "data.csv"),
                              "--epsilon", "1", "--trials", "4", "--seed", "1", "--json"], capsys)
    assert code == 0, err
    source = json.loads(out)["node_list_source"]
    assert "not used" not in source and "simulat" in source


def test_a_prior_that_changes_while_it_is_read_is_refused_before_the_spend(world, capsys, monkeypatch):  # noqa: F811
    """The manifest records the prior file's SHA-256 as the hash of the counts the plan used. The CLI hashed
    the file after reading it, so a file that changed in between was recorded with a hash of bytes the plan
    never saw (the window hashes before and after, and refuses). Refused here too, nothing spent."""
    import dpgui.data.hierarchy as data_hierarchy
    from dpgui.report.ledger import Ledger

    original = data_hierarchy.read_prior

    def read_then_change(path, *args, **kwargs):
        result = original(path, *args, **kwargs)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write("R1,R1-D1,R1-D1-S8,5\n")
        return result

    monkeypatch.setattr(data_hierarchy, "read_prior", read_then_change)
    code, _out, err = run_cli(["hierarchy", "release", str(world / "data.csv"), "--levels", LEVELS, "--prior",
                              str(world / "prior.csv"), "--epsilon", "1", "--dataset", "pure",
                              "--out", str(world / "out.csv"), "--json"], capsys)
    assert code == 2 and "changed while it was read" in err, (code, err)
    assert not (world / "out.csv").exists()
    with Ledger() as ledger:
        assert ledger.totals("pure").epsilon_spent == 0


def test_plan_text_does_not_give_the_multiplicative_mechanism_a_uniform_allocation(world, capsys):  # noqa: F811
    """Ghazi et al.'s (2023) mechanism has no level budgets (its plan's "uniform" is a placeholder): the plan's text
    said "multiplicative noise, uniform allocation"."""
    code, out, err = run_cli(["hierarchy", "plan", "--levels", LEVELS, "--prior", str(world / "prior.csv"),
                              "--epsilon", "1", "--delta", "1e-6", "--noise", "multiplicative", "--alpha", "0.5"],
                             capsys)
    assert code == 0, err
    assert "uniform allocation" not in out and "multiplicative noise" in out
