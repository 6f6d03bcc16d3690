"""The sensitivity of a grouped CDF, checked by brute force, and its charge against the closed form.

Small tables (3 listed groups a, b, c, one value z not in the list and missing group values; 4 value bins
and missing values) are counted here without the engine: each record's (released group, leaf) by the rule
the privacy model states (a value not listed, or missing, goes to "other" or is dropped; a missing numeric
value goes to the missing leaf under change, is dropped under add/remove), and the (group × node) vector of
every level by the node that holds the leaf. Every neighbour is enumerated — add/remove: a new person with
1..L records in any cells, or any of one person's records removed; change: any of one person's ≤ L records
moved to any cell, its group included — and the largest L1 and squared L2 distance of each level's vector
must EQUAL the stated figures (L, L² under add/remove; 2L, 2L² under change): a factor 2 either way fails.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from dpgui.core.accounting import zcdp_rho
from dpgui.core.grouped_cdf import GroupedPlan, GroupList, GroupTreePrivacy, level_sensitivities
from dpgui.vocabulary import Neighbours, Noise, OtherGroups
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.tree import TreeShape
from dpgui.errors import ParameterError

LISTED = ("a", "b", "c")
BINS = 4
CELLS = [(g, v) for g in (*LISTED, "z", None) for v in (*range(BINS), None)]  # 25 (group value, numeric value)


def _plan(neighbours: Neighbours, policy: OtherGroups, records: int, noise: Noise = Noise.LAPLACE,
          groups: tuple[str, ...] = LISTED) -> GroupedPlan:
    delta = 1e-9 if noise is Noise.GAUSSIAN else 0.0
    privacy = GroupTreePrivacy.of(PrivacySpec(1.0, neighbours, records, delta))
    shape = TreeShape.uniform(BINS, 2, privacy.missing_leaf)
    return GroupedPlan(GroupList(groups, policy), Plan(shape, privacy, equal_budgets(shape, privacy, noise), noise=noise))


def _flat_index(plan: GroupedPlan, cell: tuple[str | None, int | None]) -> list[int]:
    """Per level, the cell's entry in the flattened (group × node) vector, or -1 (not counted)."""
    group, value = cell
    policy_other = plan.groups.other is OtherGroups.OTHER
    row = LISTED.index(group) if group in LISTED else (len(LISTED) if policy_other else None)
    missing_leaf = plan.tree.privacy.neighbours is Neighbours.CHANGE  # the "bucket" rule
    leaf = value if value is not None else (BINS if missing_leaf else None)
    branching = plan.tree.shape.branching
    out = []
    for level in range(len(branching) + 1):
        nodes = math.prod(branching[:level])
        leaves_under = math.prod(branching[level:])
        out.append(-1 if row is None or leaf is None else row * nodes + leaf // leaves_under)
    return out


def _vectors(table: list[list[int]], index: np.ndarray, sizes: list[int]) -> list[np.ndarray]:
    cells = [c for person in table for c in person]
    out = []
    for level, size in enumerate(sizes):
        flat = index[cells, level] if cells else np.empty(0, dtype=np.int64)
        out.append(np.bincount(flat[flat >= 0], minlength=size))
    return out


def _neighbours(table: list[list[int]], neighbours: Neighbours, records: int):
    cells = range(len(CELLS))
    if neighbours is Neighbours.ADDREMOVE:
        for k in range(1, records + 1):  # a new person
            for added in itertools.combinations_with_replacement(cells, k):
                yield [*table, list(added)]
        for p, person in enumerate(table):  # any of one person's records removed
            for keep in itertools.product((True, False), repeat=len(person)):
                if not all(keep):
                    yield [*table[:p], [c for c, kept in zip(person, keep) if kept], *table[p + 1:]]
    else:
        for p, person in enumerate(table):  # any of one person's records changed, to any cell
            for moved in itertools.product(cells, repeat=len(person)):
                yield [*table[:p], list(moved), *table[p + 1:]]


def _tables(records: int) -> list[list[list[int]]]:
    """Base tables of ≤ `records` records per person: all in one cell, spread over groups, missing values."""
    at = {cell: i for i, cell in enumerate(CELLS)}
    people = [[at["a", 0]] * records, [at["z", None]] * records, [at["b", 3], at[None, 1]][:records],
              [at["c", None]], [at["a", 2]]]
    return [[], people[:1], people[1:3], people[:4], people[2:]]


@pytest.mark.parametrize("records", [1, 2])
@pytest.mark.parametrize("policy", list(OtherGroups))
@pytest.mark.parametrize("neighbours", list(Neighbours))
def test_every_level_of_all_groups_moves_exactly_as_far_as_the_stated_sensitivity(neighbours, policy, records):
    plan = _plan(neighbours, policy, records)
    index = np.array([_flat_index(plan, cell) for cell in CELLS])
    shape = plan.tree.shape
    sizes = [len(plan.labels) * shape.nodes_at_level(level) for level in range(shape.height + 1)]
    worst_l1, worst_l2 = [0] * len(sizes), [0] * len(sizes)
    for table in _tables(records):
        before = _vectors(table, index, sizes)
        for other in _neighbours(table, neighbours, records):
            for level, vector in enumerate(_vectors(other, index, sizes)):
                diff = vector - before[level]
                worst_l1[level] = max(worst_l1[level], int(np.abs(diff).sum()))
                worst_l2[level] = max(worst_l2[level], int((diff**2).sum()))
    factor = 2 if neighbours is Neighbours.CHANGE else 1  # the figures of the privacy model, typed here
    assert worst_l1 == [factor * records] * len(sizes)
    assert worst_l2 == [factor * records**2] * len(sizes)
    stated = level_sensitivities(plan.tree)
    assert [s.l1 for s in stated] == worst_l1 and [s.l2_squared for s in stated] == worst_l2
    assert plan.level_sensitivities == stated


@pytest.mark.parametrize("neighbours", list(Neighbours))
def test_the_whole_grouped_release_costs_the_shared_plans_budget_once(neighbours):
    records = 3
    for groups in (LISTED, tuple(f"g{i}" for i in range(200))):
        laplace = _plan(neighbours, OtherGroups.OTHER, records, Noise.LAPLACE, groups)
        l1 = (2 if neighbours is Neighbours.CHANGE else 1) * records
        scales = laplace.tree.scales
        assert scales[0] is not None  # the group sizes are noised, under change too
        assert laplace.epsilon_spent() == sum(Fraction(l1) / t for t in scales if t is not None)
        assert laplace.epsilon_spent() <= 1
        assert laplace.ledger_charge() == (1.0, 0.0, 0.5)  # ε, no δ, ε²/2 (pure ε-DP as zCDP)

        gaussian = _plan(neighbours, OtherGroups.DROP, records, Noise.GAUSSIAN, groups)
        l2_squared = (2 if neighbours is Neighbours.CHANGE else 1) * records**2
        assert gaussian.tree.scales[0] is not None
        rho = sum(Fraction(l2_squared) / (2 * s) for s in gaussian.tree.scales if s is not None)
        assert gaussian.rho_spent() == rho
        assert float(rho) <= zcdp_rho(1.0, 1e-9) * (1 + 1e-9)
        assert gaussian.ledger_charge() == (1.0, 1e-9, zcdp_rho(1.0, 1e-9))


def test_a_shared_plan_that_publishes_the_group_sizes_is_refused():
    privacy = PrivacySpec(1.0, Neighbours.CHANGE)
    shape = TreeShape.uniform(BINS, 2, privacy.missing_leaf)
    public_root = Plan(shape, privacy, equal_budgets(shape, privacy))
    with pytest.raises(ParameterError, match="size"):
        GroupedPlan(GroupList(LISTED), public_root)
    noised = GroupTreePrivacy.of(privacy)
    assert not noised.root_public and noised.first_noised_level() == 0
    assert noised.with_epsilon(2.0).root_public is False and noised.pure().root_public is False
    assert noised.sensitivity == privacy.sensitivity
