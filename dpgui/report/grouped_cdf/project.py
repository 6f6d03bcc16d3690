"""The "CDF for each group" part of a project file (``.dpgui``): the officer's choices and every grouped CDF
release of the workspace, as public values only.

Two optional keys of the project's JSON object (a file without them has no grouped choices and no grouped
release; nothing to upgrade)::

    "grouped_cdf": null | {"column": "dep_delay", "group_column": "carrier", "groups": ["AA", "DL"],
                           "groups_path": "/abs/carriers.txt" | null, "other_groups": "drop" | "other",
                           "lower": -60.0, "upper": 300.0, "bins": 64, "epsilon": 1.0, "delta": 0.0,
                           "neighbours": "change", "records_per_person": 1},
    "grouped_cdf_releases": [{"release_id": "…", "created_utc": "…", "dataset": "flights", "column": "dep_delay",
                              "group_column": "carrier", "plan": {…GroupedPlan.to_json()…}, "lower": -60.0,
                              "upper": 300.0, "consistency": "l2", "levels": [[[n], [n, n], …], …],
                              "source": {…} | null}]

A release is stored as what it published: the shared plan (its public groups), the bounds, the consistency
step and every released group's noisy node counts, root first (``levels[g][l]``); the estimates are
recomputed from them (the same post-processing), never a confidential count. A restored release is not
marked secure: only the budget ledger's record can say it may be signed
(:func:`dpgui.report.grouped_cdf.publish.authenticate_grouped_cdf_release`).

:data:`GROUPED_CDF_SECTION` (a :class:`~dpgui.report.project_sections.SectionCodec`) reads and writes the two
keys; any problem in them is one :class:`DataError`, which :func:`dpgui.report.project_file.project_from_json`
turns into a message while the rest still opens. O(groups × nodes); any thread.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from dpgui.core.grouped_cdf import GroupedPlan, GroupedRelease
from dpgui.vocabulary import CdfConsistency, Neighbours, OtherGroups, StatisticKind, choices
from dpgui.core.mechanism import release_from_levels
from dpgui.core.projection import prefix_variances
from dpgui.errors import DataError, DpguiError
from dpgui.report.grouped_cdf.bundle import GroupedReleaseInfo
from dpgui.report.project_sections import (
    DAMAGED, MAX_COUNT, ProjectSection, field_error, number_field, person_column_field, text_field, whole_field,
    source_field, time_field,
)

__all__ = ["GROUPED_CDF_SECTION", "GroupedCdfSettings", "ProjectGroupedRelease"]


Levels = tuple[tuple[int, ...] | None, ...]


@dataclass(frozen=True)
class GroupedCdfSettings:
    """The grouped CDF's choices (public; no counts): the numeric and the group column, the public groups
    (typed, or read from ``groups_path``, the public list's absolute path, "" for typed), what becomes of the
    rows of other groups, the bounds and bins, ε, δ, the neighbour model and the records per person."""

    column: str = ""
    group_column: str = ""
    groups: tuple[str, ...] = ()
    groups_path: str = ""
    other_groups: str = OtherGroups.DROP
    lower: float = 0.0
    upper: float = 1.0
    bins: int = 64
    epsilon: float = 1.0
    delta: float = 0.0
    neighbours: str = Neighbours.CHANGE
    records_per_person: int = 1
    person_column: str | None = None  # the person-ID column that enforces L (None: declared; written only when set)

    def to_json(self) -> dict[str, Any]:
        return {"column": self.column, "group_column": self.group_column, "groups": list(self.groups),
                "groups_path": self.groups_path or None, "other_groups": str(self.other_groups),
                "lower": self.lower, "upper": self.upper, "bins": self.bins, "epsilon": self.epsilon,
                "delta": self.delta, "neighbours": str(self.neighbours), "records_per_person": self.records_per_person,
                **({"person_column": self.person_column} if self.person_column is not None else {})}


@dataclass(frozen=True)
class ProjectGroupedRelease:
    """One grouped CDF release as its published values (see the module doc). Tuples, so two compare with ``==``."""

    release_id: str
    created_utc: str  # ISO 8601, UTC, as the ledger recorded it
    dataset: str
    column: str
    group_column: str
    plan: dict[str, Any]  # GroupedPlan.to_json()
    lower: float
    upper: float
    consistency: str
    levels: tuple[Levels, ...]  # per released group, its noisy node counts per level, root first
    source: dict[str, Any] | None = None  # DataSource.public_record() (no secret in it); None: not recorded

    @classmethod
    def from_release(cls, release: GroupedRelease, info: GroupedReleaseInfo) -> ProjectGroupedRelease:
        """Record ``release`` (its published values only) with ``info``'s public facts. O(groups × nodes)."""
        first = release.releases[0]
        levels = tuple(tuple(None if lv is None else tuple(int(c) for c in np.asarray(lv).tolist()) for lv in r.levels)
                       for r in release.releases)
        return cls(info.release_id, info.created_utc.astimezone(timezone.utc).isoformat(), info.dataset, info.column,
                   info.group_column, release.plan.to_json(), float(first.lower), float(first.upper),
                   str(first.consistency), levels, None if info.source is None else dict(info.source))

    @property
    def created(self) -> datetime:
        return datetime.fromisoformat(self.created_utc)

    @property
    def subject(self) -> str:
        """What it is of, in words: "dep_delay for each carrier"."""
        return f"{self.column} for each {self.group_column}"

    def to_release(self) -> tuple[GroupedRelease, GroupedReleaseInfo]:
        """The release and its info again, identical values (each group's estimate recomputed from its levels
        with the shared plan, as the release computed it); ``secure`` False (the ledger says otherwise)."""
        plan = GroupedPlan.from_json(self.plan)
        variances = prefix_variances(plan.tree)
        std_error = np.sqrt(variances)
        releases = tuple(
            release_from_levels(plan.tree, [None if lv is None else np.asarray(lv, dtype=np.int64) for lv in group],
                                self.lower, self.upper, self.consistency, False, std_error)
            for group in self.levels)
        release = GroupedRelease(plan, releases, math.sqrt(float(variances[-1])))
        return release, GroupedReleaseInfo(self.dataset, self.column, self.group_column, self.release_id, self.created,
                                           False, None if self.source is None else dict(self.source))

    def to_json(self, compact: Callable[[list[Any]], Any] = list) -> dict[str, Any]:
        """JSON values; ``compact(list)`` stands for a list written on one line (one per group)."""
        return {"release_id": self.release_id, "created_utc": self.created_utc, "dataset": self.dataset,
                "column": self.column, "group_column": self.group_column, "plan": self.plan, "lower": self.lower,
                "upper": self.upper, "consistency": self.consistency,
                "levels": [compact([None if lv is None else list(lv) for lv in group]) for group in self.levels],
                "source": self.source}


# --------------------------------------------------------------------------------------------- reading





def _settings(data: Any, where: str) -> GroupedCdfSettings:
    if not isinstance(data, dict):
        raise DataError(f"{where} is not a JSON object", DAMAGED)
    groups = data.get("groups")
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise field_error(where, "groups", "a list of texts")
    path = data.get("groups_path")
    if path is not None and not isinstance(path, str):
        raise field_error(where, "groups_path", "text or null")
    other = data.get("other_groups", OtherGroups.DROP)
    if other not in choices(*OtherGroups):
        raise field_error(where, "other_groups", " or ".join(repr(c) for c in choices(*OtherGroups)))
    neighbours = data.get("neighbours", Neighbours.CHANGE)
    if neighbours not in choices(*Neighbours):
        raise field_error(where, "neighbours", " or ".join(repr(c) for c in choices(*Neighbours)))
    return GroupedCdfSettings(text_field(data, where, "column"), text_field(data, where, "group_column"), tuple(groups),
                              path or "", OtherGroups(other), number_field(data, where, "lower"),
                              number_field(data, where, "upper"), whole_field(data, where, "bins"),
                              number_field(data, where, "epsilon"), number_field(data, where, "delta"), Neighbours(neighbours),
                              whole_field(data, where, "records_per_person"), person_column_field(data, where))


def _levels(value: Any, groups: int, sizes: tuple[int | None, ...], where: str) -> tuple[Levels, ...]:
    """Every group's levels, level l ``sizes[l]`` whole numbers, or None where ``sizes[l]`` is None (a level the
    plan does not noise); DataError otherwise."""
    wanted = f"{groups:,} groups' levels of {', '.join(str(s) for s in sizes)} whole numbers"
    if not isinstance(value, list) or len(value) != groups:
        raise field_error(where, "levels", wanted)
    out = []
    for group in value:
        if not isinstance(group, list) or len(group) != len(sizes):
            raise field_error(where, "levels", wanted)
        for level, size in zip(group, sizes):
            if (level is None) != (size is None) or (level is not None and (
                    not isinstance(level, list) or len(level) != size
                    or not all(type(c) is int and abs(c) < MAX_COUNT for c in level))):
                raise field_error(where, "levels", wanted)
        out.append(tuple(None if level is None else tuple(level) for level in group))
    return tuple(out)


def _release(data: Any, where: str) -> ProjectGroupedRelease:
    if not isinstance(data, dict):
        raise DataError(f"{where} is not a JSON object", DAMAGED)
    plan = data.get("plan")
    try:
        grouped = GroupedPlan.from_json(plan) if isinstance(plan, dict) else None
    except (DpguiError, KeyError, TypeError, ValueError):
        grouped = None
    if grouped is None:
        raise field_error(where, "plan", "a grouped CDF plan")
    consistency = data.get("consistency")
    if consistency not in choices(*CdfConsistency):
        raise field_error(where, "consistency", " or ".join(repr(c) for c in choices(*CdfConsistency)))
    shape = grouped.tree.shape  # a level the plan does not noise is not released (None)
    sizes = tuple(None if scale is None else shape.nodes_at_level(level)
                  for level, scale in enumerate(grouped.tree.scales))
    levels = _levels(data.get("levels"), len(grouped.labels), sizes, where)
    source = source_field(data, where)
    created = time_field(data, where, "created_utc")
    return ProjectGroupedRelease(text_field(data, where, "release_id"), created, text_field(data, where, "dataset"),
                                 text_field(data, where, "column"), text_field(data, where, "group_column"), plan,  # type: ignore[arg-type]
                                 number_field(data, where, "lower"), number_field(data, where, "upper"),
                                 CdfConsistency(consistency), levels, source)


class _GroupedCdfSection:
    """The grouped CDF's part of a project (:class:`~dpgui.report.project_sections.SectionCodec`): the two keys
    of the module doc, written only when there is something to keep (a file without them stays as it was)."""

    kind = StatisticKind.GROUPED_CDF

    def read(self, data: dict[str, Any], source: str) -> ProjectSection:
        """The grouped choices and releases of a project's JSON object (both absent: none). Any problem is a
        :class:`DataError` naming the field. O(groups × nodes of the releases)."""
        raw = data.get("grouped_cdf")
        settings = None if raw is None else _settings(raw, f"{source}, grouped CDF choices")
        raw_releases = data.get("grouped_cdf_releases", [])
        if not isinstance(raw_releases, list):
            raise field_error(source, "grouped_cdf_releases", "a list of releases")
        return ProjectSection(settings, tuple(_release(item, f"{source}, grouped CDF release {i + 1}")
                                              for i, item in enumerate(raw_releases)))

    def to_json(self, section: ProjectSection, compact: Callable[[list[Any]], Any]) -> dict[str, Any]:
        """The two keys of the module doc; none when there is nothing to keep. Each group's levels on one line."""
        settings: GroupedCdfSettings | None = section.settings
        if settings is None and not section.releases:
            return {}
        return {"grouped_cdf": None if settings is None else settings.to_json(),
                "grouped_cdf_releases": [r.to_json(compact) for r in section.releases]}

    def left_out(self, problem: str) -> str:
        return (f"The grouped CDF part of the project was left out: {problem}. The rest of the project was opened "
                "(grouped CDF releases of this file are still in the budget ledger).")


#: the grouped CDF's part of a project file (one line of :data:`dpgui.report.project_file.SECTION_CODECS`)
GROUPED_CDF_SECTION = _GroupedCdfSection()
