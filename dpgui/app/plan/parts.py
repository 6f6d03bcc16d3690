"""The statistics of the window's release plan as the officer states them: each is a plan file's
:class:`~dpgui.workspace.plan_spec.PartSpec` (its kind and its table's keys — ``name``, ``weight``, ``lock``,
``column``, ``lower``, ``upper``, ``bins``, ``group_column``, ``groups``, ``other``, ``categories``, ``levels``,
``nodes``, ``records_estimate``), the problem of each in the window's words by the setting it concerns
(:func:`part_problems`), and the plan as its file states it (:func:`plan_spec_of`), whose items
(:func:`~dpgui.workspace.plan_spec.plan_items`) the window splits and releases.

Public values only: the settings are typed by the officer (the lists of groups and categories are public lists,
never read from the data); nothing here reads the data. No Qt; any thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dpgui.vocabulary import Neighbours, Noise, OtherGroups, StatisticKind
from dpgui.errors import DpguiError
from dpgui.workspace.public_lists import check_public_list
from dpgui.workspace.plan_spec import PartSpec, PlanSpec

__all__ = ["KIND_LABELS", "PlanPrivacy", "default_part", "editable", "noise_problem", "part_problems",
           "part_subject", "plan_spec_of", "replaced", "spec_privacy"]

#: each statistic a plan may hold, in the words of the Add menu
KIND_LABELS: dict[StatisticKind, str] = {
    StatisticKind.CDF: "CDF of a number column",
    StatisticKind.GROUPED_CDF: "CDF for each group",
    StatisticKind.COUNTS: "Counts of one column",
    StatisticKind.HIERARCHY: "Counts over a hierarchy",
}
#: the settings every statistic has, as a new one has them (a plan file may leave them out)
_OPTIONAL: dict[str, Any] = {"name": "", "weight": 1.0, "lock": None}
#: the most bins a statistic of the plan may have (each is planned on a worker; the CDF page allows as many)
MAX_BINS = 4096


def replaced(part: PartSpec, **changes: Any) -> PartSpec:
    """``part`` with some settings changed."""
    return PartSpec(part.kind, {**part.settings, **changes})


@dataclass(frozen=True)
class PlanPrivacy:
    """The plan's whole budget (ε, δ) and its protection (neighbour model, records per person L, and the person-ID
    column that enforces L; None: L declared)."""

    epsilon: float
    delta: float
    neighbours: Neighbours
    records_per_person: int = 1
    person_column: str | None = None

    @property
    def noise(self) -> Noise:
        """At δ = 0 every part is Laplace; at δ > 0 every part that can is Gaussian (a plan has one noise)."""
        return Noise.GAUSSIAN if self.delta > 0 else Noise.LAPLACE


def default_part(kind: StatisticKind, columns: Sequence[str]) -> PartSpec:
    """A new statistic of ``kind`` with the first of ``columns`` chosen, weight 1, no lock, 32 bins on [0, 100)."""
    first = columns[0] if columns else ""
    settings: dict[str, Any] = dict(_OPTIONAL)
    if kind in (StatisticKind.CDF, StatisticKind.GROUPED_CDF):
        settings.update(column=first, lower=0.0, upper=100.0, bins=32)
    if kind is StatisticKind.GROUPED_CDF:
        settings.update(group_column=columns[1] if len(columns) > 1 else first, groups=(), other=OtherGroups.DROP)
    if kind is StatisticKind.COUNTS:
        settings.update(column=first, categories=())
    if kind is StatisticKind.HIERARCHY:
        settings.update(levels=tuple(columns[:2]), nodes="data", records_estimate=None)
    return PartSpec(kind, settings)


def part_subject(choice: PartSpec) -> str:
    """What the statistic is of, in words ("distance", "dep_delay for each carrier", "dest_tzone → dest")."""
    if choice.kind is StatisticKind.GROUPED_CDF:
        return f"{choice.settings.get('column', '')} for each {choice.settings.get('group_column', '')}"
    if choice.kind is StatisticKind.HIERARCHY:
        return " → ".join(choice.settings.get("levels", ()))
    return str(choice.settings.get("column", ""))


def part_problems(choice: PartSpec) -> dict[str, str]:
    """What is wrong with ``choice``, by the setting it concerns (empty: nothing), in the officer's words."""
    get = choice.settings.get
    problems: dict[str, str] = {}
    weight = get("weight", 1.0)
    if not (isinstance(weight, (int, float)) and weight > 0):
        problems["weight"] = "The weight must be a number above 0 (1 = as important as the others)."
    lock = get("lock")
    if lock is not None and not (isinstance(lock, (int, float)) and lock > 0):
        problems["lock"] = "A fixed budget must be a number above 0 (or leave it empty to let the split decide)."
    if choice.kind is StatisticKind.HIERARCHY:
        levels = tuple(get("levels", ()))
        if len(levels) < 2 or any(not level for level in levels) or len(set(levels)) < len(levels):
            problems["levels"] = "Choose 2 to 4 different columns, the widest category first."
        estimate = get("records_estimate")
        if estimate is not None and not (isinstance(estimate, int) and estimate >= 1):
            problems["records_estimate"] = "The estimate of the number of records must be a whole number above 0."
        return problems
    if not get("column"):
        problems["column"] = "Choose a column (open the data first)."
    if choice.kind in (StatisticKind.CDF, StatisticKind.GROUPED_CDF):
        lower, upper = get("lower"), get("upper")
        if lower is None or upper is None or not lower < upper:
            problems["bounds"] = "The lower bound must be below the upper bound."
        bins = get("bins", 0)
        if not (isinstance(bins, int) and 2 <= bins <= MAX_BINS):
            problems["bins"] = f"The number of bins must be a whole number from 2 to {MAX_BINS:,}."
    if choice.kind is StatisticKind.GROUPED_CDF:
        if get("group_column") == get("column"):
            problems["group_column"] = "The group column must differ from the number column."
        try:
            check_public_list(tuple(get("groups", ())), "group")  # the rest when the split plans it (GroupList)
        except DpguiError as err:
            problems["groups"] = _sentence(err)
        if not get("groups"):
            problems["groups"] = "Type the public list of groups, one per line."
    if choice.kind is StatisticKind.COUNTS:
        categories = tuple(get("categories", ()))
        try:
            check_public_list(categories, "category")
        except DpguiError as err:
            problems["categories"] = _sentence(err)
        if not categories:
            problems["categories"] = "Type the public list of categories, one per line."
    return problems


def _sentence(err: DpguiError) -> str:
    return f"{err.problem[:1].upper()}{err.problem[1:]}."


def plan_spec_of(parts: Sequence[PartSpec], privacy: PlanPrivacy, dataset: str, source: str) -> PlanSpec:
    """The plan as its file states it: ``parts`` in order, each with the settings its table holds (an unset
    value left out, lists as lists, the noise of every number statistic the plan's one noise), paid by
    ``dataset``, of the data at ``source``. Nothing is checked here (:func:`part_problems` is, and the plan
    file's own checks when its items are made)."""
    return PlanSpec(dataset, source, privacy.epsilon, privacy.delta, privacy.neighbours, privacy.records_per_person,
                    privacy.person_column, tuple(PartSpec(part.kind, _file_settings(part, privacy)) for part in parts))


def _file_settings(part: PartSpec, privacy: PlanPrivacy) -> dict[str, Any]:
    settings = {key: list(value) if isinstance(value, tuple) else value for key, value in part.settings.items()
                if value is not None and value != ""}
    if part.kind is not StatisticKind.COUNTS:  # a column's counts have Laplace noise only
        settings["noise"] = str(privacy.noise)
    if isinstance(settings.get("other"), OtherGroups):
        settings["other"] = str(settings["other"])
    return settings


def noise_problem(parts: Sequence[PartSpec], privacy: PlanPrivacy) -> str:
    """Why the plan's statistics cannot share one noise at its δ ("" if they can): a column's counts have Laplace
    noise only, and δ > 0 gives every other statistic Gaussian noise."""
    if privacy.noise is Noise.GAUSSIAN and any(part.kind is StatisticKind.COUNTS for part in parts):
        return ("The counts of one column have Laplace noise only, which cannot share a budget with the Gaussian "
                "noise that δ > 0 gives the other statistics: set δ to 0, or remove the counts.")
    return ""


def spec_privacy(spec: PlanSpec) -> PlanPrivacy:
    """The budget and protection of a plan file."""
    return PlanPrivacy(spec.epsilon, spec.delta, spec.neighbours, spec.records_per_person, spec.person_column)


def editable(part: PartSpec) -> PartSpec:
    """A plan file's statistic as the window edits it (lists as tuples; the noise is the plan's, not kept)."""
    settings = {key: tuple(value) if isinstance(value, list) else value for key, value in part.settings.items()
                if key != "noise"}
    optional = {**_OPTIONAL, **({"records_estimate": None} if part.kind is StatisticKind.HIERARCHY else {})}
    return PartSpec(part.kind, {**optional, **settings})
