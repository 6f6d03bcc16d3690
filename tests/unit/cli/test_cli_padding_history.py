"""A CDF published before GLS used the padding leaves as known zeros keeps its own intervals when read back
from its CSV (`dpgui quantiles`): the CSV's standard errors say which estimator released it
(dpgui.core.projection.published_with_known_zeros), and the intervals follow that one."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from dpgui.core.mechanism import noisy_tree, release_from_levels
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.projection import published_with_known_zeros
from dpgui.core.quantiles import quantiles
from dpgui.core.tree import TreeShape
from dpgui.report.cdf.csv_export import write_release_csv
from cli_helpers import run_cli

PROBABILITIES = [0.1, 0.25, 0.5, 0.75, 0.9]


def _releases(neighbours: str) -> tuple[Plan, object, object]:
    privacy = PrivacySpec(0.5, neighbours)
    shape = TreeShape(40, (3, 4, 4), privacy.missing_leaf)  # 48 leaves for 40 (41) real ones: padded
    plan = Plan(shape, privacy, equal_budgets(shape, privacy))
    counts = np.random.default_rng(3).integers(0, 30, 40)
    levels = noisy_tree(counts, plan, SeededRandom(11), missing=4 if privacy.missing_leaf else 0)
    now = release_from_levels(plan, levels, 0.0, 40.0, "l2", False)
    before = release_from_levels(plan, levels, 0.0, 40.0, "l2", False, padding_known=False)
    return plan, now, before


@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_the_csvs_standard_errors_say_which_estimator_released_it(neighbours):
    plan, now, before = _releases(neighbours)
    assert not np.array_equal(now.std_error, before.std_error)  # the two estimators differ on this tree
    assert published_with_known_zeros(plan, now.std_error)
    assert not published_with_known_zeros(plan, before.std_error)
    unpadded = Plan(TreeShape(48, (3, 4, 4)), plan.privacy.with_epsilon(0.5), plan.level_budgets)  # no padding
    assert published_with_known_zeros(unpadded, np.zeros(48))


@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_a_release_read_back_from_an_older_csv_keeps_its_intervals(tmp_path, capsys, neighbours):
    """`dpgui quantiles` prints the published intervals, and the release it reads back from the CSV gives the
    range counts of the release as it was made (range_count uses the estimator's exact covariances)."""
    from dpgui.report.cdf.release_files import read_release
    from dpgui.core.quantiles import range_count

    plan, now, before = _releases(neighbours)
    (tmp_path / "plan.json").write_text(json.dumps({**plan.to_json(), "consistency": "l2"}), encoding="utf-8")
    ranges = {}
    for name, made in (("now", now), ("before", before)):
        write_release_csv(made, tmp_path / f"{name}.csv")
        code, out, err = run_cli(["quantiles", str(tmp_path / f"{name}.csv"), "--plan", str(tmp_path / "plan.json"),
                                  "--probabilities", ",".join(map(str, PROBABILITIES)), "--json"], capsys)
        assert code == 0, err
        assert json.loads(out)["quantiles"] == [dataclasses.asdict(q) for q in quantiles(made, PROBABILITIES)]
        read, _ = read_release(str(tmp_path / f"{name}.csv"), str(tmp_path / "plan.json"))
        assert read.padding_known == made.padding_known
        ranges[name] = [range_count(made, a, b) for a, b in ((0.0, 13.0), (7.0, 29.0), (22.0, 40.0))]
        assert [range_count(read, a, b) for a, b in ((0.0, 13.0), (7.0, 29.0), (22.0, 40.0))] == ranges[name]
    assert ranges["now"] != ranges["before"]  # so the test can tell the estimators apart
