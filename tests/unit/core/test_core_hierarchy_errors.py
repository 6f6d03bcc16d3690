"""How useful a hierarchy plan's counts will be, before anything is spent (dpgui.core.hierarchy_errors).

The figures (median count, margin ÷ count, share of categories below the margin, the warning) are checked
against an independent computation; the assumed counts use N and the tree's shape only; the curves of the
margin against ε pass through the plan's own figures and fall as ε grows.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgui.core.hierarchy import Hierarchy, HierarchyPlan, assumed_levels, plan_hierarchy
from dpgui.core.hierarchy_errors import (
    NO_COUNTS, LevelErrors, margin_curves, mostly_noise_warnings, plan_at_epsilon, plan_errors,
)
from dpgui.core.plan import PrivacySpec
from dpgui.core.projection_curves import epsilon_grid
from dpgui.errors import ParameterError

# the shape of the exam data of the issue: many small schools (median 8 pupils)
RNG = np.random.default_rng(8)
PATHS = [(f"R{r}", f"R{r}D{d}", f"R{r}D{d}S{s}") for r in range(3) for d in range(4) for s in range(int(RNG.integers(4, 12)))]
TREE = Hierarchy.from_paths(("region", "district", "school"), PATHS)
LEAVES = np.zeros(TREE.level_sizes[-1], dtype=np.int64)
np.add.at(LEAVES, TREE.leaf_index(PATHS), np.maximum(RNG.lognormal(math.log(8), 0.7, len(PATHS)).astype(np.int64), 1))
PRIOR = TREE.aggregate(LEAVES)


def test_assumed_counts_spread_n_evenly_and_depend_on_the_shape_only():
    for n in (1, 5, 1000, 123_457):
        levels = assumed_levels(TREE, n)
        assert [int(level.sum()) for level in levels] == [n] * len(levels)  # every level adds up to N
        leaves = levels[-1]
        assert leaves.max() - leaves.min() <= 1  # evenly: the leaves differ by one record at most
        for level in range(1, TREE.n_levels):  # each node is the sum of its leaves
            sums = np.zeros(TREE.level_sizes[level], dtype=np.int64)
            np.add.at(sums, TREE.parents[level], levels[level + 1])
            assert np.array_equal(sums, levels[level])
    with pytest.raises(ParameterError):
        assumed_levels(TREE, 0)


def test_the_usefulness_figures_follow_their_definitions():
    plan = plan_hierarchy(TREE.level_sizes, PrivacySpec(1.0), consistency="none")
    errors = plan_errors(plan, TREE, PRIOR, "a prior")
    assert errors.counts_words == "a prior"
    for figures, counts, projected in zip(errors.levels, PRIOR, errors.projection.levels):
        margin = projected.margin95
        assert figures.margin95 == margin and figures.categories == counts.size
        assert figures.median_count == float(np.median(counts))
        assert figures.mostly_noise == sum(1 for c in counts if c < margin) / counts.size
        ratios = sorted(margin / c if c else math.inf for c in counts)
        middle = (ratios[(len(ratios) - 1) // 2] + ratios[len(ratios) // 2]) / 2
        assert figures.relative == pytest.approx(middle)
        assert LevelErrors.from_json({**figures.to_json(), "nodes": figures.categories}) == figures
    school = errors.levels[3]
    assert school.is_mostly_noise and school.relative > 1  # schools of ~8 pupils at ε = 1: ± 16 records
    warnings = errors.warnings(TREE.level_names)
    assert len(warnings) == sum(f.is_mostly_noise for f in errors.levels[1:]) >= 1
    assert any("'school'" in w and f"{100 * school.mostly_noise:.0f} %" in w and "mostly noise" in w for w in warnings)


def test_no_warning_when_at_most_half_of_a_level_is_below_the_margin():
    levels = [LevelErrors(1, 4, 10.0, 12.0, 0.8, 0.5), LevelErrors(2, 4, 10.0, 9.0, 1.1, 0.75)]
    warnings = mostly_noise_warnings(levels, ("a", "b"))
    assert len(warnings) == 1 and "'b' (75 %)" in warnings[0] and "± 10.0 records" in warnings[0]


def test_without_counts_the_errors_are_the_noises_and_with_n_the_assumed_counts():
    privacy = PrivacySpec(1.0, "addremove")
    bare = plan_hierarchy(TREE.level_sizes, privacy, consistency="topdown")
    errors = plan_errors(bare, TREE)
    assert errors.counts is None and errors.counts_words == NO_COUNTS
    assert all(f.median_count is None and f.mostly_noise is None for f in errors.levels)
    sds = [math.sqrt(v) for v in bare.level_noise_variances()]
    assert [f.margin95 for f in errors.levels] == pytest.approx([2.2 * sd + 1 for sd in sds])
    assumed = plan_hierarchy(TREE.level_sizes, privacy, consistency="topdown", assumed_records=5000)
    assert assumed.assumed_records == 5000 and HierarchyPlan.from_json(assumed.to_json()) == assumed
    errors = plan_errors(assumed, TREE)
    assert errors.counts_words.startswith("5,000 records (a published estimate of N)")
    assert [int(c.sum()) for c in errors.counts] == [5000] * 4
    # a plan that states nothing serialises as before (no key), so older plans read the same
    assert "assumed_records" not in bare.to_json()


@pytest.mark.slow
def test_the_margin_curves_pass_through_the_plan_and_fall_with_epsilon():
    plan = plan_hierarchy(TREE.level_sizes, PrivacySpec(1.0), consistency="topdown", assumed_records=4000)
    errors = plan_errors(plan, TREE)
    grid = epsilon_grid(1.0, 5)
    epsilons, margins = margin_curves(plan, TREE, errors, grid.tolist())
    at = int(np.flatnonzero(epsilons == 1.0)[0])
    assert margins[at].tolist() == [f.margin95 for f in errors.levels]
    assert np.all(margins[:, 0] == 0)  # change: the total is exact at every ε
    for level in range(1, 4):
        assert np.all(np.diff(margins[:, level]) < 0), level  # more ε, less error
    # each point is the plan with the same budget shares at that ε
    scaled = plan_at_epsilon(plan, 0.5)
    assert scaled.privacy.epsilon == 0.5 and scaled.level_budgets == pytest.approx([b / 2 for b in plan.level_budgets])
