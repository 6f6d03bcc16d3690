"""Final review of issue 15's merged CLI: what ``dpgui hierarchy`` says about the data it used."""

from __future__ import annotations

import json

from test_cli_hierarchy import LEVELS, world  # noqa: F401 — the fixture

from cli_helpers import run_cli


def test_simulate_on_the_data_does_not_say_its_counts_were_not_used(world, capsys):  # noqa: F811
    """``simulate --input`` simulates releases of the data's own counts (its truth), so the report must
    not say "its counts were not used" (what ``plan --input`` says: there the counts are not read)."""
    code, out, err = run_cli(["hierarchy", "simulate", "--levels", LEVELS, "--input", str(world / "data.csv"),
                              "--epsilon", "1", "--trials", "4", "--seed", "1", "--json"], capsys)
    assert code == 0, err
    source = json.loads(out)["node_list_source"]
    assert "not used" not in source and "simulat" in source
