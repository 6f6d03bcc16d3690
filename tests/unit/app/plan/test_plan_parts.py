"""The statistics of the window's release plan as stated (no Qt): each kind's defaults, each bad value named by
the setting it concerns, and the plan's items — split exactly as the same statistics built by hand."""

from __future__ import annotations

import math

import pytest

from dpgui.app.plan.parts import PartChoice, PlanPrivacy, default_part, part_problems, plan_items_of
from dpgui.core.plan import PrivacySpec
from dpgui.errors import ParameterError
from dpgui.vocabulary import Neighbours, StatisticKind
from dpgui.workspace.plan_split import PlanPart, split_plan
from dpgui.workspace.planning import PlanRequest
from dpgui.workspace.statistics.cdf import CDF
from dpgui.workspace.statistics.counts import COUNTS, CountsPlanRequest

COLUMNS = ["delay", "carrier", "ontime"]


def test_each_kind_starts_with_the_first_columns_and_weight_one() -> None:
    cdf = default_part(StatisticKind.CDF, COLUMNS)
    assert (cdf.get("column"), cdf.get("lower"), cdf.get("upper"), cdf.get("bins"), cdf.weight, cdf.lock) == \
        ("delay", 0.0, 100.0, 32, 1.0, None)
    grouped = default_part(StatisticKind.GROUPED_CDF, COLUMNS)
    assert grouped.get("group_column") == "carrier" and grouped.get("groups") == ()
    assert default_part(StatisticKind.HIERARCHY, COLUMNS).get("levels") == ("delay", "carrier")
    assert part_problems(cdf) == {}


def test_bad_values_are_named_by_their_setting() -> None:
    cdf = default_part(StatisticKind.CDF, COLUMNS)
    assert set(part_problems(cdf.with_settings(lower=5.0, upper=5.0))) == {"bounds"}
    assert set(part_problems(cdf.with_settings(upper=None))) == {"bounds"}
    assert set(part_problems(cdf.with_settings(weight=0.0))) == {"weight"}
    assert set(part_problems(cdf.with_settings(weight=None))) == {"weight"}
    assert set(part_problems(cdf.with_settings(lock="a lot"))) == {"lock"}
    assert set(part_problems(cdf.with_settings(bins=1))) == {"bins"}
    assert set(part_problems(cdf.with_settings(column=""))) == {"column"}
    grouped = default_part(StatisticKind.GROUPED_CDF, COLUMNS)
    assert part_problems(grouped) == {"groups": "Type the public list of groups, one per line."}
    assert set(part_problems(grouped.with_settings(groups=("AA", "AA")))) == {"groups"}
    assert set(part_problems(grouped.with_settings(groups=("AA",), group_column="delay"))) == {"group_column"}
    counts = default_part(StatisticKind.COUNTS, COLUMNS)
    assert set(part_problems(counts)) == {"categories"}
    assert set(part_problems(counts.with_settings(categories=("a", "a")))) == {"categories"}
    assert set(part_problems(default_part(StatisticKind.HIERARCHY, COLUMNS).with_settings(levels=("a",)))) == \
        {"levels"}


def test_the_items_split_as_the_same_statistics_built_by_hand() -> None:
    choices = [default_part(StatisticKind.CDF, COLUMNS).with_settings(bins=64),
               PartChoice(StatisticKind.COUNTS, {"column": "ontime", "categories": ("yes", "no", "late"),
                                                 "weight": 4.0, "lock": None})]
    items = plan_items_of(choices, PlanPrivacy(1.0, 0.0, Neighbours.ADDREMOVE))
    assert [item.title for item in items] == ["CDF of delay", "Counts of ontime"]
    by_hand = [PlanPart(CDF, PlanRequest(64, PrivacySpec(1.0, Neighbours.ADDREMOVE, 1))),
               PlanPart(COUNTS, CountsPlanRequest(("yes", "no", "late"), 1.0, Neighbours.ADDREMOVE), weight=4.0)]
    ours, theirs = split_plan([item.part for item in items], 1.0), split_plan(by_hand, 1.0)
    assert [p.budget for p in ours.parts] == [p.budget for p in theirs.parts]
    assert [p.margin95 for p in ours.parts] == [p.margin95 for p in theirs.parts]
    assert math.isclose(ours.charge.epsilon, 1.0) and ours.charge.epsilon <= 1.0 + 1e-12
    spend = items[0].spend_of(ours.parts[0].planned.plan)
    assert (spend.column, spend.lower, spend.upper, spend.bins) == ("delay", 0.0, 100.0, 64)


def test_a_statistic_with_a_problem_is_refused_by_its_number() -> None:
    bad = default_part(StatisticKind.CDF, COLUMNS).with_settings(lower=9.0, upper=1.0)
    with pytest.raises(ParameterError) as refused:
        plan_items_of([default_part(StatisticKind.CDF, COLUMNS), bad], PlanPrivacy(1.0, 0.0, Neighbours.CHANGE))
    assert refused.value.problem.startswith("statistic 2 (CDF of a number column): The lower bound")
