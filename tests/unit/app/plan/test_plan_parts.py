"""The statistics of the window's release plan as stated (no Qt): each kind's defaults, each bad value named by
the setting it concerns, and the plan's items — split exactly as the same statistics built by hand."""

from __future__ import annotations

import math

import pytest

from dpgui.app.plan.parts import (
    PlanPrivacy, default_part, editable, noise_problem, part_problems, plan_spec_of, replaced,
)
from dpgui.core.plan import PrivacySpec
from dpgui.errors import ParameterError
from dpgui.vocabulary import Neighbours, StatisticKind
from dpgui.workspace.plan_spec import PartSpec, PlanSpec, plan_items
from dpgui.workspace.plan_split import PlanPart, split_plan
from dpgui.workspace.planning import PlanRequest
from dpgui.workspace.statistics.cdf import CDF
from dpgui.workspace.statistics.counts import COUNTS, CountsPlanRequest

COLUMNS = ["delay", "carrier", "ontime"]


def test_each_kind_starts_with_the_first_columns_and_weight_one() -> None:
    cdf = default_part(StatisticKind.CDF, COLUMNS)
    get = cdf.settings.get
    assert (get("column"), get("lower"), get("upper"), get("bins"), cdf.weight, cdf.lock) == \
        ("delay", 0.0, 100.0, 32, 1.0, None)
    grouped = default_part(StatisticKind.GROUPED_CDF, COLUMNS)
    assert grouped.settings.get("group_column") == "carrier" and grouped.settings.get("groups") == ()
    assert default_part(StatisticKind.HIERARCHY, COLUMNS).settings.get("levels") == ("delay", "carrier")
    assert part_problems(cdf) == {}


def test_bad_values_are_named_by_their_setting() -> None:
    cdf = default_part(StatisticKind.CDF, COLUMNS)
    assert set(part_problems(replaced(cdf, lower=5.0, upper=5.0))) == {"bounds"}
    assert set(part_problems(replaced(cdf, upper=None))) == {"bounds"}
    assert set(part_problems(replaced(cdf, weight=0.0))) == {"weight"}
    assert set(part_problems(replaced(cdf, weight=None))) == {"weight"}
    assert set(part_problems(replaced(cdf, lock="a lot"))) == {"lock"}
    assert set(part_problems(replaced(cdf, bins=1))) == {"bins"}
    assert set(part_problems(replaced(cdf, column=""))) == {"column"}
    grouped = default_part(StatisticKind.GROUPED_CDF, COLUMNS)
    assert part_problems(grouped) == {"groups": "Type the public list of groups, one per line."}
    assert set(part_problems(replaced(grouped, groups=("AA", "AA")))) == {"groups"}
    assert set(part_problems(replaced(grouped, groups=("AA",), group_column="delay"))) == {"group_column"}
    counts = default_part(StatisticKind.COUNTS, COLUMNS)
    assert set(part_problems(counts)) == {"categories"}
    assert set(part_problems(replaced(counts, categories=("a", "a")))) == {"categories"}
    assert set(part_problems(replaced(default_part(StatisticKind.HIERARCHY, COLUMNS), levels=("a",)))) == \
        {"levels"}


def test_the_items_split_as_the_same_statistics_built_by_hand() -> None:
    choices = [replaced(default_part(StatisticKind.CDF, COLUMNS), bins=64),
               PartSpec(StatisticKind.COUNTS, {"column": "ontime", "categories": ("yes", "no", "late"),
                                               "weight": 4.0, "lock": None})]
    spec = plan_spec_of(choices, PlanPrivacy(1.0, 0.0, Neighbours.ADDREMOVE), "flights", "/data/flights.csv")
    items = plan_items(spec)
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
    bad = replaced(default_part(StatisticKind.CDF, COLUMNS), lower=9.0, upper=1.0)
    spec = plan_spec_of([default_part(StatisticKind.CDF, COLUMNS), bad], PlanPrivacy(1.0, 0.0, Neighbours.CHANGE),
                        "flights", "/data/flights.csv")
    with pytest.raises(ParameterError) as refused:
        plan_items(spec)
    assert refused.value.problem.startswith("statistic 2: 'lower' must be less than 'upper'")


def test_the_plan_file_reads_back_as_the_window_edits_it() -> None:
    parts = [replaced(default_part(StatisticKind.GROUPED_CDF, COLUMNS), groups=("AA", "DL"), weight=4.0, lock=0.25,
                      name="Delays"),
             replaced(default_part(StatisticKind.COUNTS, COLUMNS), column="ontime", categories=("yes", "no"))]
    privacy = PlanPrivacy(2.0, 1e-9, Neighbours.ADDREMOVE, 3)
    spec = plan_spec_of(parts, privacy, "flights", "/data/flights.csv")
    again = PlanSpec.from_toml(spec.to_toml())
    assert again == spec and (again.epsilon, again.delta, again.records_per_person) == (2.0, 1e-9, 3)
    assert again.parts[0].settings["noise"] == "gaussian"  # the plan's one noise, stated in the file
    assert [editable(part) for part in again.parts] == parts


def test_one_noise_for_the_plan_and_counts_only_without_delta() -> None:
    counts = replaced(default_part(StatisticKind.COUNTS, COLUMNS), column="ontime", categories=("yes",))
    parts = [default_part(StatisticKind.CDF, COLUMNS), default_part(StatisticKind.HIERARCHY, COLUMNS), counts]
    pure, gaussian = PlanPrivacy(1.0, 0.0, Neighbours.CHANGE), PlanPrivacy(1.0, 1e-9, Neighbours.CHANGE)
    assert noise_problem(parts, pure) == "" and "Laplace noise only" in noise_problem(parts, gaussian)
    assert noise_problem(parts[:2], gaussian) == ""
    spec = plan_spec_of(parts, gaussian, "flights", "/data/flights.csv")
    assert [part.settings.get("noise") for part in spec.parts] == ["gaussian", "gaussian", None]
