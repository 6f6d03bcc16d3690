"""The "Counts of one column" part of a project file (``.dpgui``): the officer's choices and every counts
release of the workspace, as public values only.

Two optional keys of the project's JSON object (a file without them has no counts choices and no counts
release; nothing to upgrade)::

    "counts": null | {"column": "state", "categories": ["OR", "WA"], "categories_path": "/abs/list.txt" | null,
                      "epsilon": 1.0, "neighbours": "change", "records_per_person": 1},
    "counts_releases": [{"release_id": "…", "created_utc": "…", "dataset": "people", "column": "state",
                         "plan": {…CountsPlan.to_json()…}, "counts": [c, c, …], "source": {…} | null}]

A release is stored as what it published: the plan (its public categories), the released noisy counts in
the plan's order and the public facts of :class:`~dpgui.report.counts.bundle.CountsReleaseInfo`; never a
confidential count. A restored release is not marked secure: only the budget ledger's record can say it
may be signed (:func:`dpgui.report.counts.publish.authenticate_counts_release`).

:data:`COUNTS_SECTION` (a :class:`~dpgui.report.project_sections.SectionCodec`) reads and writes the two keys;
any problem in them is one :class:`DataError`, which :func:`dpgui.report.project_file.project_from_json` turns
into a message while the rest still opens.
O(categories); any thread.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from dpgui.core.counts import CountsPlan, CountsRelease
from dpgui.errors import DataError, DpguiError
from dpgui.report.counts.bundle import CountsReleaseInfo
from dpgui.report.project_sections import (
    DAMAGED, MAX_COUNT, ProjectSection, field_error, person_column_field, text_field, texts_field, source_field,
    time_field,
)
from dpgui.vocabulary import Neighbours, StatisticKind, choices

__all__ = ["COUNTS_SECTION", "CountsSettings", "ProjectCountsRelease"]



@dataclass(frozen=True)
class CountsSettings:
    """The counts mode's choices (public; no counts): the column, the stated categories (typed, or read
    from ``categories_path``, the public list's absolute path, "" for typed), ε, the neighbour model and
    the records per person, and the person-ID column that enforces them (None: declared; written only when set).
    """

    column: str = ""
    categories: tuple[str, ...] = ()
    categories_path: str = ""
    epsilon: float = 1.0
    neighbours: str = Neighbours.CHANGE
    records_per_person: int = 1
    person_column: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"column": self.column, "categories": list(self.categories),
                "categories_path": self.categories_path or None, "epsilon": self.epsilon,
                "neighbours": str(self.neighbours), "records_per_person": self.records_per_person,
                **({"person_column": self.person_column} if self.person_column is not None else {})}


@dataclass(frozen=True)
class ProjectCountsRelease:
    """One counts release as its published values (see the module doc). Tuples, so two compare with ``==``."""

    release_id: str
    created_utc: str  # ISO 8601, UTC, as the ledger recorded it
    dataset: str
    column: str
    plan: dict[str, Any]  # CountsPlan.to_json()
    counts: tuple[int, ...]  # released (noisy) counts, in the plan's category order
    source: dict[str, Any] | None = None  # DataSource.public_record() (no secret in it); None: not recorded

    @classmethod
    def from_release(cls, release: CountsRelease, info: CountsReleaseInfo) -> ProjectCountsRelease:
        """Record ``release`` (its published values only) with ``info``'s public facts. O(categories)."""
        return cls(info.release_id, info.created_utc.astimezone(timezone.utc).isoformat(), info.dataset, info.column,
                   release.plan.to_json(), tuple(int(c) for c in release.counts.tolist()),
                   None if info.source is None else dict(info.source))

    @property
    def created(self) -> datetime:
        return datetime.fromisoformat(self.created_utc)

    @property
    def subject(self) -> str:
        """What it is of, in words (the column)."""
        return self.column

    def to_release(self) -> tuple[CountsRelease, CountsReleaseInfo]:
        """The release and its info again, identical values; ``secure`` False (the ledger says otherwise)."""
        import numpy as np

        release = CountsRelease(CountsPlan.from_json(self.plan), np.asarray(self.counts, dtype=np.int64), False)
        return release, CountsReleaseInfo(self.dataset, self.column, self.release_id, self.created, False,
                                          None if self.source is None else dict(self.source))

    def to_json(self) -> dict[str, Any]:
        return {"release_id": self.release_id, "created_utc": self.created_utc, "dataset": self.dataset,
                "column": self.column, "plan": self.plan, "counts": list(self.counts), "source": self.source}


# --------------------------------------------------------------------------------------------- reading




def _settings(data: Any, where: str) -> CountsSettings:
    if not isinstance(data, dict):
        raise DataError(f"{where} is not a JSON object", DAMAGED)
    epsilon = data.get("epsilon")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon):
        raise field_error(where, "epsilon", "a number")
    records = data.get("records_per_person", 1)
    if isinstance(records, bool) or not isinstance(records, int) or records < 1:
        raise field_error(where, "records_per_person", "a whole number ≥ 1")
    neighbours = data.get("neighbours", Neighbours.CHANGE)
    if neighbours not in choices(*Neighbours):
        raise field_error(where, "neighbours", " or ".join(repr(c) for c in choices(*Neighbours)))
    path = data.get("categories_path")
    if path is not None and not isinstance(path, str):
        raise field_error(where, "categories_path", "text or null")
    return CountsSettings(text_field(data, where, "column"), texts_field(data, where, "categories"), path or "", float(epsilon),
                          Neighbours(neighbours), records, person_column_field(data, where))


def _release(data: Any, where: str) -> ProjectCountsRelease:
    if not isinstance(data, dict):
        raise DataError(f"{where} is not a JSON object", DAMAGED)
    plan = data.get("plan")
    try:
        categories = CountsPlan.from_json(plan).categories if isinstance(plan, dict) else None
    except (DpguiError, KeyError, TypeError, ValueError):
        categories = None
    if categories is None:
        raise field_error(where, "plan", "a counts plan")
    counts = data.get("counts")
    if (not isinstance(counts, list) or len(counts) != len(categories)
            or not all(type(c) is int and abs(c) < MAX_COUNT for c in counts)):
        raise field_error(where, "counts", f"a list of {len(categories):,} whole numbers")
    source = source_field(data, where)
    created = time_field(data, where, "created_utc")
    return ProjectCountsRelease(text_field(data, where, "release_id"), created, text_field(data, where, "dataset"),
                                text_field(data, where, "column"), plan, tuple(counts), source)  # type: ignore[arg-type]


class _CountsSection:
    """The counts' part of a project (:class:`~dpgui.report.project_sections.SectionCodec`): the two keys of the
    module doc, written only when there is something to keep (a file without them stays as it was)."""

    kind = StatisticKind.COUNTS

    def read(self, data: dict[str, Any], source: str) -> ProjectSection:
        """The counts choices and releases of a project's JSON object (both absent: none). Any problem is a
        :class:`DataError` naming the field. O(categories of the releases)."""
        raw = data.get("counts")
        settings = None if raw is None else _settings(raw, f"{source}, counts choices")
        raw_releases = data.get("counts_releases", [])
        if not isinstance(raw_releases, list):
            raise field_error(source, "counts_releases", "a list of releases")
        return ProjectSection(settings, tuple(_release(item, f"{source}, counts release {i + 1}")
                                              for i, item in enumerate(raw_releases)))

    def to_json(self, section: ProjectSection, compact: Callable[[list[Any]], Any]) -> dict[str, Any]:
        """The two keys of the module doc; none when there is nothing to keep. The counts are one list each
        (``compact`` is not needed)."""
        settings: CountsSettings | None = section.settings
        if settings is None and not section.releases:
            return {}
        return {"counts": None if settings is None else settings.to_json(),
                "counts_releases": [r.to_json() for r in section.releases]}

    def left_out(self, problem: str) -> str:
        return (f"The counts part of the project was left out: {problem}. The rest of the project was opened "
                "(counts releases of this file are still in the budget ledger).")


#: the counts' part of a project file (one line of :data:`dpgui.report.project_file.SECTION_CODECS`)
COUNTS_SECTION = _CountsSection()
