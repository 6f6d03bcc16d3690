"""The "Counts over a hierarchy" part of a project file (``.dpgui``): the officer's hierarchy choices and
every hierarchy release of the workspace, as public values only.

Two keys of the project's JSON object, written after its ``mode``
(:func:`dpgui.report.migrations.upgrade_project` gives files written before them no hierarchy choices and
no hierarchy release)::

    "hierarchy": null | {"levels": ["tz", "airport"], "prior_path": "/abs/prior.csv" | null,
                         "counts_from_data": false, "epsilon": 1.0, "delta": 0.0, "neighbours": "change",
                         "records_per_person": 1, "noise": "auto", "allocation": "uniform",
                         "weights": [..] | null, "target_mse": 625.0 | null, "consistency": "auto",
                         "budgets": [..] | null, "alpha": 0.1, "categories_public": false,
                         "records_estimate": 12000 | null},
    "hierarchy_releases": [{"release_id": "…", "created_utc": "…", "dataset": "flights",
                            "node_list_source": "data (declared public)", "counts_from_data": false,
                            "prior_name": null, "prior_sha256": null, "notes": [..],
                            "plan": {…HierarchyPlan.to_json()…},
                            "level_names": [..], "labels": [[..], ..], "parents": [[..], ..],
                            "counts": [[N], [..], ..], "lower": [[..], ..], "upper": [[..], ..],
                            "interval_method": "…"}]

A release is stored as what it published: the plan, the node list (level names, each level's labels
and each node's parent index: the tree :func:`~dpgui.report.hierarchy.bundle.hierarchy_sha256` hashes),
the released counts per level (root first) and their 95 % intervals (post-processing of the released
counts), and the public facts of :class:`~dpgui.report.hierarchy.bundle.HierarchyReleaseInfo`. Never the
confidential counts: not the data's leaf counts, not the opted-in counts the optimiser may have used.
Like a CDF release, a restored hierarchy release is not marked secure: only the budget ledger's record
can say it may be signed (:func:`dpgui.report.hierarchy.publish.authenticate_hierarchy_release`).

:data:`HIERARCHY_SECTION` (a :class:`~dpgui.report.project_sections.SectionCodec`) reads and writes the two
keys; any problem in them is one :class:`DataError`, which :func:`dpgui.report.project_file.project_from_json`
turns into a message while the rest of the project still opens.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import numpy as np

from dpgui.errors import DataError, DpguiError
from dpgui.report.hierarchy.bundle import NODE_LIST_SOURCES, HierarchyReleaseInfo
from dpgui.report.project_sections import DAMAGED, MAX_COUNT, ProjectSection, field_error
from dpgui.vocabulary import (
    AUTO, HIERARCHY_NOISES, Allocation, HierarchyConsistency, Neighbours, SourceKind, StatisticKind, choices,
)

if TYPE_CHECKING:
    from dpgui.core.hierarchy import HierarchyRelease

__all__ = ["HIERARCHY_SECTION", "HierarchySettings", "ProjectHierarchyRelease", "check_source_record"]



@dataclass(frozen=True)
class HierarchySettings:
    """The hierarchy mode's choices as the officer made them (public; no counts). ``prior_path``: the
    public prior file's absolute path ("" for none); ``budgets``/``weights``: typed by the officer (None:
    the allocation decides); the rest as :class:`dpgui.workspace.hierarchy_planning.HierarchyChoice`."""

    levels: tuple[str, ...] = ()
    prior_path: str = ""
    counts_from_data: bool = False
    epsilon: float = 1.0
    delta: float = 0.0
    neighbours: str = Neighbours.CHANGE
    records_per_person: int = 1
    noise: str = AUTO
    allocation: str = Allocation.UNIFORM
    weights: tuple[float, ...] | None = None
    target_mse: float | None = None
    consistency: str = AUTO
    budgets: tuple[float, ...] | None = None
    alpha: float = 0.1
    categories_public: bool = False  # the officer declared the data's own categories public
    records_estimate: int | None = None  # a published estimate of N typed under add/remove

    def to_json(self) -> dict[str, Any]:
        return {"levels": list(self.levels), "prior_path": self.prior_path or None,
                "counts_from_data": self.counts_from_data, "epsilon": self.epsilon, "delta": self.delta,
                "neighbours": self.neighbours, "records_per_person": self.records_per_person, "noise": self.noise,
                "allocation": self.allocation, "weights": None if self.weights is None else list(self.weights),
                "target_mse": self.target_mse, "consistency": self.consistency,
                "budgets": None if self.budgets is None else list(self.budgets), "alpha": self.alpha,
                "categories_public": self.categories_public, "records_estimate": self.records_estimate}


def _int_tuple(values: Any) -> tuple[int, ...]:
    return tuple(np.asarray(values, dtype=np.int64).tolist())


@dataclass(frozen=True)
class ProjectHierarchyRelease:
    """One hierarchy release as its published values (see the module doc). Tuples, so two compare with ``==``."""

    release_id: str
    created_utc: str  # ISO 8601, UTC, exactly as the ledger recorded it
    dataset: str
    plan: dict[str, Any]  # HierarchyPlan.to_json()
    level_names: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]  # levels 1..L
    parents: tuple[tuple[int, ...], ...]  # levels 1..L: index of each node's parent on the level above
    counts: tuple[tuple[int, ...], ...]  # released counts, levels 0..L
    lower: tuple[tuple[int, ...], ...]
    upper: tuple[tuple[int, ...], ...]
    interval_method: str
    node_list_source: str
    counts_from_data: bool
    prior_name: str | None = None
    prior_sha256: str | None = None
    notes: tuple[str, ...] = ()
    #: where the data was read and who counted it (:meth:`dpgui.data.source.DataSource.public_record`; no secret
    #: in it); None: not recorded
    source: dict[str, Any] | None = None

    @classmethod
    def from_release(cls, release: HierarchyRelease, info: HierarchyReleaseInfo) -> ProjectHierarchyRelease:
        """Record ``release`` (its published values only) with ``info``'s public facts. O(#nodes)."""
        tree = release.hierarchy
        return cls(
            release_id=info.release_id, created_utc=info.created_utc.astimezone(timezone.utc).isoformat(),
            dataset=info.dataset, plan=release.plan.to_json(), level_names=tuple(tree.level_names),
            labels=tuple(tuple(level) for level in tree.labels), parents=tuple(_int_tuple(p) for p in tree.parents),
            counts=tuple(_int_tuple(c) for c in release.counts), lower=tuple(_int_tuple(c) for c in release.lower),
            upper=tuple(_int_tuple(c) for c in release.upper), interval_method=release.interval_method,
            node_list_source=info.node_list_source, counts_from_data=bool(info.counts_from_data),
            prior_name=info.prior_name, prior_sha256=info.prior_sha256, notes=tuple(info.notes),
            source=None if info.source is None else dict(info.source))

    @property
    def created(self) -> datetime:
        return datetime.fromisoformat(self.created_utc)

    @property
    def subject(self) -> str:
        """What it is of, in words (the level columns joined by " → ")."""
        return " → ".join(self.level_names)

    def to_release(self) -> tuple[HierarchyRelease, HierarchyReleaseInfo]:
        """The release and its info again, identical values; ``secure`` False (the ledger says otherwise)."""
        from dpgui.core.hierarchy import Hierarchy, HierarchyPlan, HierarchyRelease

        parents = []
        for level in self.parents:
            array = np.asarray(level, dtype=np.int64)
            array.setflags(write=False)
            parents.append(array)
        tree = Hierarchy(self.level_names, self.labels, tuple(parents))

        def arrays(levels: tuple[tuple[int, ...], ...]) -> tuple[np.ndarray, ...]:
            return tuple(np.asarray(level, dtype=np.int64) for level in levels)

        release = HierarchyRelease(HierarchyPlan.from_json(self.plan), tree, arrays(self.counts), arrays(self.lower),
                                   arrays(self.upper), self.interval_method)
        info = HierarchyReleaseInfo(self.dataset, self.release_id, self.created, self.node_list_source,
                                    self.counts_from_data, False, self.prior_name, self.prior_sha256, self.notes,
                                    None if self.source is None else dict(self.source))
        return release, info

    def to_json(self, compact: Any) -> dict[str, Any]:
        """JSON values; ``compact(list)`` returns what stands for a list written on one line."""
        return {
            "release_id": self.release_id, "created_utc": self.created_utc, "dataset": self.dataset,
            "node_list_source": self.node_list_source, "counts_from_data": self.counts_from_data,
            "prior_name": self.prior_name, "prior_sha256": self.prior_sha256, "notes": list(self.notes),
            "plan": self.plan, "level_names": list(self.level_names),
            "labels": [compact(list(level)) for level in self.labels],
            "parents": [compact(list(level)) for level in self.parents],
            "counts": [compact(list(level)) for level in self.counts],
            "lower": [compact(list(level)) for level in self.lower],
            "upper": [compact(list(level)) for level in self.upper],
            "interval_method": self.interval_method,
            **({} if self.source is None else {"source": self.source}),
        }


# --------------------------------------------------------------------------------------------- reading

def check_source_record(value: Any) -> bool:
    """Is ``value`` a release's data-source record as dpgui writes it (a JSON object with a kind and
    who counted the data)? Its full contents are checked against the budget ledger before signing."""
    return (isinstance(value, dict) and value.get("kind") in tuple(SourceKind)
            and isinstance(value.get("engine"), str))



def _get(data: dict[str, Any], where: str, name: str, default: Any = ...) -> Any:
    if name not in data:
        if default is not ...:
            return default
        raise DataError(f"{where} has no '{name}' field", DAMAGED)
    return data[name]


def _text(data: dict[str, Any], where: str, name: str, default: Any = ..., nullable: bool = False,
          choices: tuple[str, ...] | None = None) -> Any:
    value = _get(data, where, name, default)
    if value is None and nullable:
        return None
    if not isinstance(value, str) or (choices is not None and value not in choices):
        raise field_error(where, name, "text" if choices is None else " or ".join(repr(c) for c in choices))
    return value


def _number(data: dict[str, Any], where: str, name: str, default: Any = ..., nullable: bool = False) -> Any:
    value = _get(data, where, name, default)
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise field_error(where, name, "a number" + (" or null" if nullable else ""))
    return float(value)


def _numbers(data: dict[str, Any], where: str, name: str) -> tuple[float, ...] | None:
    value = _get(data, where, name, None)
    if value is None:
        return None
    if not isinstance(value, list) or not all(not isinstance(v, bool) and isinstance(v, (int, float))
                                              and math.isfinite(v) for v in value):
        raise field_error(where, name, "a list of numbers or null")
    return tuple(float(v) for v in value)


def _bool(data: dict[str, Any], where: str, name: str, default: Any = ...) -> bool:
    value = _get(data, where, name, default)
    if not isinstance(value, bool):
        raise field_error(where, name, "true or false")
    return value


def _settings(data: Any, where: str) -> HierarchySettings:
    from dpgui.core.hierarchy import MAX_LEVELS

    if not isinstance(data, dict):
        raise DataError(f"{where} is not a JSON object", DAMAGED)
    levels = _get(data, where, "levels")
    if (not isinstance(levels, list) or len(levels) > MAX_LEVELS
            or not all(isinstance(v, str) and v for v in levels)):
        raise field_error(where, "levels", f"a list of at most {MAX_LEVELS} column names")
    records = _get(data, where, "records_per_person", 1)
    if isinstance(records, bool) or not isinstance(records, int) or records < 1:
        raise field_error(where, "records_per_person", "a whole number ≥ 1")
    alpha = _number(data, where, "alpha", 0.1)
    if not 0 < alpha < 1:
        raise field_error(where, "alpha", "a number between 0 and 1")
    estimate = _get(data, where, "records_estimate")
    if estimate is not None and (isinstance(estimate, bool) or not isinstance(estimate, int) or not 1 <= estimate <= 10**15):
        raise field_error(where, "records_estimate", "a whole number from 1 to 10¹⁵, or null")
    return HierarchySettings(
        levels=tuple(levels), prior_path=_text(data, where, "prior_path", None, nullable=True) or "",
        counts_from_data=_bool(data, where, "counts_from_data", False), epsilon=_number(data, where, "epsilon"),
        delta=_number(data, where, "delta", 0.0),
        neighbours=_text(data, where, "neighbours", Neighbours.CHANGE, choices=choices(*Neighbours)),
        records_per_person=records, noise=_text(data, where, "noise", AUTO, choices=choices(*HIERARCHY_NOISES, AUTO)),
        allocation=_text(data, where, "allocation", Allocation.UNIFORM, choices=choices(*Allocation)),
        weights=_numbers(data, where, "weights"), target_mse=_number(data, where, "target_mse", None, nullable=True),
        consistency=_text(data, where, "consistency", AUTO, choices=choices(*HierarchyConsistency, AUTO)),
        budgets=_numbers(data, where, "budgets"), alpha=alpha,
        categories_public=_bool(data, where, "categories_public"), records_estimate=estimate)


def _int_levels(data: dict[str, Any], where: str, name: str, sizes: tuple[int, ...], minimum: int,
                ) -> tuple[tuple[int, ...], ...]:
    value = _get(data, where, name)
    if not isinstance(value, list) or len(value) != len(sizes):
        raise field_error(where, name, f"a list of {len(sizes)} levels")
    out = []
    for level, (values, size) in enumerate(zip(value, sizes)):
        if (not isinstance(values, list) or len(values) != size
                or not all(type(v) is int and minimum <= v < MAX_COUNT for v in values)):
            raise field_error(where, f"{name}[{level}]", f"a list of {size:,} whole numbers ≥ {minimum}")
        out.append(tuple(values))
    return tuple(out)


def _release(data: Any, where: str) -> ProjectHierarchyRelease:
    from dpgui.core.hierarchy import MAX_LEVELS, MIN_LEVELS, HierarchyPlan

    if not isinstance(data, dict):
        raise DataError(f"{where} is not a JSON object", DAMAGED)
    plan_json = _get(data, where, "plan")
    if not isinstance(plan_json, dict):
        raise field_error(where, "plan", "a plan (a JSON object)")
    try:
        plan = HierarchyPlan.from_json(plan_json)
    except DpguiError as err:
        raise DataError(f"{where}: the plan is not valid ({err.problem})", DAMAGED) from None
    sizes = tuple(int(n) for n in plan.level_sizes)
    names = _get(data, where, "level_names")
    if (not isinstance(names, list) or not MIN_LEVELS <= len(names) <= MAX_LEVELS or len(names) != len(sizes) - 1
            or not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names)):
        raise field_error(where, "level_names", f"the {len(sizes) - 1} distinct level names of the plan's tree")
    labels = _get(data, where, "labels")
    if not isinstance(labels, list) or len(labels) != len(names):
        raise field_error(where, "labels", f"a list of {len(names)} levels of labels")
    for level, (values, size) in enumerate(zip(labels, sizes[1:])):
        if not isinstance(values, list) or len(values) != size or not all(isinstance(v, str) and v for v in values):
            raise field_error(where, f"labels[{level}]", f"a list of {size:,} non-empty labels")
    parents = _int_levels(data, where, "parents", sizes[1:], 0)
    for level, values in enumerate(parents):
        above = sizes[level]
        if any(v >= above for v in values) or any(b < a for a, b in itertools.pairwise(values)):
            raise field_error(where, f"parents[{level}]", f"parent indices in 0..{above - 1}, in order")
    created = _text(data, where, "created_utc")
    try:
        moment = datetime.fromisoformat(created)
    except ValueError:
        raise field_error(where, "created_utc", "a date and time") from None
    if moment.tzinfo is None:
        raise field_error(where, "created_utc", "a date and time with its time zone")
    release_id = _text(data, where, "release_id")
    if not release_id.strip():
        raise field_error(where, "release_id", "the release's id in the budget ledger")
    notes = _get(data, where, "notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise field_error(where, "notes", "a list of sentences")
    return ProjectHierarchyRelease(
        release_id=release_id, created_utc=created, dataset=_text(data, where, "dataset"), plan=plan_json,
        level_names=tuple(names), labels=tuple(tuple(v) for v in labels), parents=parents,
        counts=_int_levels(data, where, "counts", sizes, 0), lower=_int_levels(data, where, "lower", sizes, 0),
        upper=_int_levels(data, where, "upper", sizes, 0), interval_method=_text(data, where, "interval_method", ""),
        node_list_source=_text(data, where, "node_list_source", choices=NODE_LIST_SOURCES),
        counts_from_data=_bool(data, where, "counts_from_data"),
        prior_name=_text(data, where, "prior_name", None, nullable=True),
        prior_sha256=_text(data, where, "prior_sha256", None, nullable=True), notes=tuple(notes),
        source=_source(data, where))


def _source(data: dict[str, Any], where: str) -> dict[str, Any] | None:
    value = _get(data, where, "source", None)
    if value is not None and not check_source_record(value):
        raise field_error(where, "source", "a data source record (kind, engine, …)")
    return None if value is None else dict(value)


class _HierarchySection:
    """The hierarchy's part of a project (:class:`~dpgui.report.project_sections.SectionCodec`): the two keys of
    the module doc, always written (null and [] when there is nothing to keep)."""

    kind = StatisticKind.HIERARCHY

    def read(self, data: dict[str, Any], source: str) -> ProjectSection:
        """The hierarchy choices and releases of a project's JSON object (upgraded to today's shape by
        :func:`dpgui.report.migrations.upgrade_project`). Any problem is a :class:`DataError` naming the field.
        O(#nodes of the releases)."""
        raw = _get(data, source, "hierarchy")
        settings = None if raw is None else _settings(raw, f"{source}, hierarchy choices")
        raw_releases = _get(data, source, "hierarchy_releases")
        if not isinstance(raw_releases, list):
            raise field_error(source, "hierarchy_releases", "a list of releases")
        releases = tuple(_release(item, f"{source}, hierarchy release {i + 1}") for i, item in enumerate(raw_releases))
        return ProjectSection(settings, releases)

    def to_json(self, section: ProjectSection, compact: Callable[[list[Any]], Any]) -> dict[str, Any]:
        """The two keys of the module doc (``compact`` as in :meth:`ProjectHierarchyRelease.to_json`)."""
        settings: HierarchySettings | None = section.settings
        return {"hierarchy": None if settings is None else settings.to_json(),
                "hierarchy_releases": [r.to_json(compact) for r in section.releases]}

    def left_out(self, problem: str) -> str:
        return (f"The hierarchy part of the project was left out: {problem}. The rest of the project was opened; "
                "choose the hierarchy's levels again (hierarchy releases of this file are still in the budget ledger).")


#: the hierarchy's part of a project file (one line of :data:`dpgui.report.project_file.SECTION_CODECS`)
HIERARCHY_SECTION = _HierarchySection()
