"""The statistics of the window's release plan as the officer states them (:class:`PartChoice`: a kind and the
settings a plan file's table of that statistic holds — ``name``, ``weight``, ``lock``, ``column``, ``lower``,
``upper``, ``bins``, ``group_column``, ``groups``, ``other``, ``levels``, ``nodes``, ``categories``), the problem
of each in words (:func:`part_problems`: the field it concerns and what to fix), and the plan's items made of
them (:func:`plan_items_of`: each statistic's plan request, weight, lock and spend, for
:func:`~dpgui.workspace.plan_split.split_plan` and :func:`~dpgui.workspace.release_plan.release_plan`).

Public values only: the settings are typed by the officer (the lists of groups and categories are public lists,
never read from the data); nothing here reads the data. No Qt; any thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dpgui.core.grouped_cdf import GroupList, OtherGroups
from dpgui.core.plan import PrivacySpec
from dpgui.errors import DpguiError, ParameterError
from dpgui.vocabulary import CdfConsistency, Neighbours, Noise, StatisticKind
from dpgui.workspace.counts import parse_categories
from dpgui.workspace.grouped_cdf import parse_groups
from dpgui.workspace.plan_split import PlanPart
from dpgui.workspace.planning import PlanRequest
from dpgui.workspace.release_plan import PlanItem
from dpgui.workspace.statistics.cdf import CDF, CdfSpend
from dpgui.workspace.statistics.counts import COUNTS, CountsPlanRequest, CountsSpend
from dpgui.workspace.statistics.grouped_cdf import GROUPED_CDF, GroupedCdfPlanRequest, GroupedCdfSpend

__all__ = ["KIND_LABELS", "PartChoice", "PlanPrivacy", "default_part", "part_problems", "part_subject",
           "plan_items_of"]

#: each statistic a plan may hold, in the words of the Add menu
KIND_LABELS: dict[StatisticKind, str] = {
    StatisticKind.CDF: "CDF of a number column",
    StatisticKind.GROUPED_CDF: "CDF for each group",
    StatisticKind.COUNTS: "Counts of one column",
    StatisticKind.HIERARCHY: "Counts over a hierarchy",
}
#: the most bins a statistic of the plan may have (each is planned on a worker; the CDF page allows as many)
MAX_BINS = 4096


@dataclass(frozen=True)
class PartChoice:
    """One statistic of the plan as stated: its ``kind`` and its ``settings`` (the plan file's keys; lists as
    tuples of text). Public values only."""

    kind: StatisticKind
    settings: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.settings.get(key, default)

    def with_settings(self, **changes: Any) -> PartChoice:
        return PartChoice(self.kind, {**self.settings, **changes})

    @property
    def weight(self) -> float:
        return float(self.get("weight", 1.0))

    @property
    def lock(self) -> float | None:
        lock = self.get("lock")
        return None if lock is None else float(lock)


@dataclass(frozen=True)
class PlanPrivacy:
    """The plan's whole budget (ε, δ) and its protection (neighbour model, records per person)."""

    epsilon: float
    delta: float
    neighbours: Neighbours
    records_per_person: int = 1

    @property
    def noise(self) -> Noise:
        """At δ = 0 every part is Laplace; at δ > 0 every part that can is Gaussian (a plan has one noise)."""
        return Noise.GAUSSIAN if self.delta > 0 else Noise.LAPLACE


def default_part(kind: StatisticKind, columns: Sequence[str]) -> PartChoice:
    """A new statistic of ``kind`` with the first of ``columns`` chosen, weight 1, no lock, 32 bins on [0, 100)."""
    first = columns[0] if columns else ""
    settings: dict[str, Any] = {"name": "", "weight": 1.0, "lock": None}
    if kind in (StatisticKind.CDF, StatisticKind.GROUPED_CDF):
        settings.update(column=first, lower=0.0, upper=100.0, bins=32)
    if kind is StatisticKind.GROUPED_CDF:
        settings.update(group_column=columns[1] if len(columns) > 1 else first, groups=(), other=OtherGroups.DROP)
    if kind is StatisticKind.COUNTS:
        settings.update(column=first, categories=())
    if kind is StatisticKind.HIERARCHY:
        settings.update(levels=tuple(columns[:2]), nodes="data")
    return PartChoice(kind, settings)


def part_subject(choice: PartChoice) -> str:
    """What the statistic is of, in words ("distance", "dep_delay for each carrier", "dest_tzone → dest")."""
    if choice.kind is StatisticKind.GROUPED_CDF:
        return f"{choice.get('column', '')} for each {choice.get('group_column', '')}"
    if choice.kind is StatisticKind.HIERARCHY:
        return " → ".join(choice.get("levels", ()))
    return str(choice.get("column", ""))


def part_problems(choice: PartChoice) -> dict[str, str]:
    """What is wrong with ``choice``, by the setting it concerns (empty: nothing), in the officer's words."""
    problems: dict[str, str] = {}
    weight = choice.get("weight", 1.0)
    if not (isinstance(weight, (int, float)) and weight > 0):
        problems["weight"] = "The weight must be a number above 0 (1 = as important as the others)."
    lock = choice.get("lock")
    if lock is not None and not (isinstance(lock, (int, float)) and lock > 0):
        problems["lock"] = "A fixed budget must be a number above 0 (or leave it empty to let the split decide)."
    if choice.kind is StatisticKind.HIERARCHY:
        levels = tuple(choice.get("levels", ()))
        if len(levels) < 2 or any(not level for level in levels) or len(set(levels)) < len(levels):
            problems["levels"] = "Choose 2 to 4 different columns, the widest category first."
        return problems
    if not choice.get("column"):
        problems["column"] = "Choose a column (open the data first)."
    if choice.kind in (StatisticKind.CDF, StatisticKind.GROUPED_CDF):
        lower, upper = choice.get("lower"), choice.get("upper")
        if lower is None or upper is None or not lower < upper:
            problems["bounds"] = "The lower bound must be below the upper bound."
        bins = choice.get("bins", 0)
        if not (isinstance(bins, int) and 2 <= bins <= MAX_BINS):
            problems["bins"] = f"The number of bins must be a whole number from 2 to {MAX_BINS:,}."
    if choice.kind is StatisticKind.GROUPED_CDF:
        if choice.get("group_column") == choice.get("column"):
            problems["group_column"] = "The group column must differ from the number column."
        try:
            parse_groups("\n".join(choice.get("groups", ())), choice.get("other", OtherGroups.DROP))
        except DpguiError as err:
            problems["groups"] = ("Type the public list of groups, one per line." if not choice.get("groups") else
                                  f"{err.problem[:1].upper()}{err.problem[1:]}.")
    if choice.kind is StatisticKind.COUNTS:
        categories = tuple(choice.get("categories", ()))
        try:
            parse_categories("\n".join(categories))
        except DpguiError as err:
            problems["categories"] = f"{err.problem[:1].upper()}{err.problem[1:]}."
        if not categories:
            problems["categories"] = "Type the public list of categories, one per line."
    return problems


def plan_items_of(choices: Sequence[PartChoice], privacy: PlanPrivacy) -> list[PlanItem]:
    """The plan's items, in order: each statistic's plan request at the plan's whole budget (the split replaces
    it by its share), its weight, lock and name, how its spend is made of its plan, and its subject.
    ParameterError naming the statistic for one with a problem (:func:`part_problems`) or one a plan of this
    window cannot hold yet (counts over a hierarchy: their categories are read from the data)."""
    items = []
    for i, choice in enumerate(choices):
        problems = part_problems(choice)
        if problems:
            raise ParameterError(f"statistic {i + 1} ({KIND_LABELS[choice.kind]}): {next(iter(problems.values()))}",
                                 "correct it in the plan's list")
        items.append(_item_of(choice, privacy))
    return items


def _item_of(choice: PartChoice, privacy: PlanPrivacy) -> PlanItem:
    spec = PrivacySpec(privacy.epsilon, privacy.neighbours, privacy.records_per_person, privacy.delta)
    name, weight, lock = str(choice.get("name") or ""), choice.weight, choice.lock
    column = str(choice.get("column", ""))
    if choice.kind is StatisticKind.CDF:
        lower, upper, bins = float(choice.get("lower")), float(choice.get("upper")), int(choice.get("bins"))
        part = PlanPart(CDF, PlanRequest(bins, spec, noise=privacy.noise), weight, lock, name)
        return PlanItem(part, lambda plan: CdfSpend(column, lower, upper, bins, plan, CdfConsistency.L2), column)
    if choice.kind is StatisticKind.GROUPED_CDF:
        lower, upper, bins = float(choice.get("lower")), float(choice.get("upper")), int(choice.get("bins"))
        group_column = str(choice.get("group_column"))
        groups = GroupList(tuple(choice.get("groups")), OtherGroups(choice.get("other", OtherGroups.DROP)))
        part = PlanPart(GROUPED_CDF, GroupedCdfPlanRequest(groups, bins, spec, privacy.noise), weight, lock, name)
        return PlanItem(part, lambda plan: GroupedCdfSpend(column, group_column, lower, upper, plan),
                        part_subject(choice))
    if choice.kind is StatisticKind.COUNTS:
        request = CountsPlanRequest(tuple(choice.get("categories")), privacy.epsilon, privacy.neighbours,
                                    privacy.records_per_person)
        return PlanItem(PlanPart(COUNTS, request, weight, lock, name), lambda plan: CountsSpend(column, plan), column)
    raise ParameterError(f"counts over a hierarchy ({part_subject(choice)}) cannot be part of a plan in the window yet",
                         "release them on their own (Counts over a hierarchy), or remove them from the plan")
