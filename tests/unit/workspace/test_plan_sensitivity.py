"""The sensitivity a release plan states for every part — one person moves each level of each statistic's noised
counts by at most Δ₁ = L (add/remove) or 2L (change) in L1, Δ₂² = L² or 2L² in squared L2 — against a brute-force
enumeration of every neighbour of small tables, for each kind of part: a CDF's tree levels, a CDF for each group's
(group × node) levels, counts over a hierarchy's levels and the counts of one column."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np
import pytest

from dpgui.core.grouped_cdf import GroupList
from dpgui.vocabulary import Neighbours, OtherGroups
from dpgui.core.hierarchy import Hierarchy
from dpgui.core.plan import PrivacySpec
from dpgui.workspace.planning import PlanRequest, plan_cdf
from dpgui.workspace.statistics.grouped_cdf import GroupedCdfPlanRequest

BINS = 4
GROUPS = ("a", "b")
CATEGORIES = ("u", "v")
PATHS = (("r1", "d1"), ("r1", "d2"), ("r2", "d3"), ("r2", "d4"))
#: every value one record can take: (bin of x, group, category, path index)
VALUES = tuple(itertools.product(range(BINS), (*GROUPS, "elsewhere"), CATEGORIES, range(len(PATHS))))
HIERARCHY = Hierarchy.from_paths(("region", "district"), PATHS)


@functools.cache
def _plans(neighbours: Neighbours) -> tuple[Any, Any]:
    """The CDF's and the CDF for each group's tree plans at L = 1 (L scales both sensitivities)."""
    privacy = PrivacySpec(1.0, neighbours, 1)
    return (plan_cdf(PlanRequest(BINS, privacy)).plan,
            GroupedCdfPlanRequest(GroupList(GROUPS, OtherGroups.OTHER), BINS, privacy).plan_now().tree)


def _levels(records, neighbours: Neighbours) -> dict[str, list[np.ndarray]]:
    """Each kind's noised level vectors of a table of ``records``."""
    tree, grouped = _plans(neighbours)
    histogram = np.zeros(BINS, dtype=np.int64)
    by_group = {label: np.zeros(BINS, dtype=np.int64) for label in (*GROUPS, "other")}
    categories = np.zeros(len(CATEGORIES), dtype=np.int64)
    leaves = np.zeros(len(PATHS), dtype=np.int64)
    for x, group, category, path in records:
        histogram[x] += 1
        by_group[group if group in GROUPS else "other"][x] += 1
        categories[CATEGORIES.index(category)] += 1
        leaves[path] += 1
    cdf = tree.shape.level_counts(histogram)
    if tree.privacy.root_public:  # the root under change is N, published exactly: not noised
        cdf = cdf[1:]
    group_levels = [np.concatenate(level) for level in zip(*(grouped.shape.level_counts(h) for h in by_group.values()))]
    hierarchy = list(HIERARCHY.aggregate(leaves))
    if neighbours is Neighbours.CHANGE:
        hierarchy = hierarchy[1:]  # the root is N, public under change
    return {"cdf": cdf, "grouped_cdf": group_levels, "hierarchy": hierarchy, "counts": [categories]}


def _neighbours(records, neighbours: Neighbours):
    for i in range(len(records)):
        if neighbours is Neighbours.ADDREMOVE:
            yield records[:i] + records[i + 1:]  # one record removed (adding one is the same pair read backwards)
        else:
            for value in VALUES:
                if value != records[i]:
                    yield records[:i] + [value] + records[i + 1:]  # one record changed to any other value


@pytest.mark.parametrize("neighbours", [Neighbours.ADDREMOVE, Neighbours.CHANGE])
def test_every_part_moves_each_level_by_at_most_the_stated_sensitivity(neighbours):
    stated = PrivacySpec(1.0, neighbours, 1).sensitivity
    rng = np.random.default_rng(33)
    worst = dict.fromkeys(("cdf", "grouped_cdf", "hierarchy", "counts"), (0, 0))
    for _ in range(6):  # small random tables of 5 records
        records = [VALUES[i] for i in rng.integers(0, len(VALUES), 5)]
        base = _levels(records, neighbours)
        for other in _neighbours(records, neighbours):
            for kind, levels in _levels(other, neighbours).items():
                for a, b in zip(base[kind], levels):
                    diff = np.abs(a - b)
                    worst[kind] = (max(worst[kind][0], int(diff.sum())), max(worst[kind][1], int((diff ** 2).sum())))
    for kind, (l1, l2_squared) in worst.items():
        assert l1 == stated.l1, (kind, l1)  # reached: the stated figure is the least that holds
        assert l2_squared == stated.l2_squared, (kind, l2_squared)
