"""The machinery of benchmarks/bench_plan_search.py (the planner's space searched after consistency), at tiny K."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from script_modules import script_module

BENCH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench_plan_search.py"


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    with script_module(BENCH) as module:
        yield module


def test_complete_trees_are_exactly_the_powers(bench):
    assert bench.complete_branchings(256) == [2, 4, 16]
    assert bench.complete_branchings(4096) == [2, 4, 8, 16, 64]
    assert bench.complete_branchings(100) == [10]


def test_the_opendp_reference_noises_every_level_at_levels_over_epsilon(bench):
    """OpenDP's tree at d_in = 1: scale (h + 1)/ε on every node, the root included."""
    found = bench.candidates(64, PrivacySpec(0.5, "addremove"), top_shapes=2)
    plan = next(c.plan for c in found if c.label == f"4x4x4 {bench.OPENDP}")
    assert plan.shape.branching == (4, 4, 4)
    assert [float(s) for s in plan.scales] == pytest.approx([4 / 0.5] * 4)


@pytest.mark.parametrize("share", [0.05, 0.2])
def test_a_root_share_keeps_epsilon_and_the_other_levels_proportions(bench, share):
    privacy = PrivacySpec(0.8, "addremove")
    plan = auto_plan(256, privacy)
    shared = bench.with_root_share(plan, share)
    assert shared.shape == plan.shape
    assert sum(shared.level_epsilons) == pytest.approx(0.8)
    assert shared.level_epsilons[0] == pytest.approx(0.8 * share)
    rest, before = np.asarray(shared.level_epsilons[1:]), np.asarray(plan.level_epsilons[1:])
    np.testing.assert_allclose(rest / rest.sum(), before / before.sum(), rtol=1e-9)


def test_the_search_starts_from_the_auto_plan_and_holds_every_complete_tree_once(bench):
    privacy = PrivacySpec(1.0, "addremove")
    found = bench.candidates(256, privacy, top_shapes=4)
    assert found[0].plan == auto_plan(256, privacy)
    labels = [c.label for c in found]
    assert len(set(labels)) == len(labels)
    for b in (2, 4, 16):
        assert any(c.plan.shape.branching == (b,) * round(np.log(256) / np.log(b)) and c.plan.level_epsilons[0] > 0
                   for c in found)
    keys = {(c.plan.shape, c.plan.level_epsilons) for c in found}
    assert len(keys) == len(found)


def test_it_runs_end_to_end_and_prints_every_plan_against_the_auto_plan(bench, capsys):
    assert bench.main(["--bins", "16", "--trials", "3", "--shapes", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("K = 16, ε = ") == 2 and "largest gain over the auto plan" in out
    assert "auto plan / OpenDP-equivalent best b + our consistency" in out
