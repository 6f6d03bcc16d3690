"""The parts of a project file (``.dpgui``) that belong to one statistic each, beside the CDF's workspace
fields: what every statistic's part holds (:class:`ProjectSection`: its choices and its releases) and what
every release kept in a project offers the window and the session list (:class:`SectionRelease`), and how a
statistic's part is read from and written to the project's JSON (:class:`SectionCodec`; the project file holds
one codec per statistic, :data:`dpgui.report.project_file.SECTION_CODECS`).

Public values only, as everywhere in a project file. No Qt; any thread.
"""

from __future__ import annotations

from collections.abc import Callable
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from dpgui.errors import DataError

from dpgui.vocabulary import StatisticKind

__all__ = [
    "DAMAGED", "MAX_COUNT", "ProjectSection", "SectionCodec", "SectionRelease", "field_error", "number_field", "text_field",
    "texts_field", "time_field", "person_column_field", "source_field", "whole_field",
]


class SectionRelease(Protocol):
    """A statistic's release as a project keeps it: its published values and these public facts."""

    @property
    def release_id(self) -> str: ...

    @property
    def created(self) -> datetime:
        """When it was released (UTC, as the ledger recorded it)."""
        ...

    @property
    def dataset(self) -> str:
        """The budget ledger's name for the data set that paid."""
        ...

    @property
    def plan(self) -> dict[str, Any]:
        """Its plan's ``to_json()``: what :func:`dpgui.workspace.statistics.recorded_charge` reads back."""
        ...

    @property
    def subject(self) -> str:
        """What it is of, in words: the column, or the level columns joined by " → "."""
        ...


@dataclass(frozen=True)
class ProjectSection:
    """One statistic's part of a project: its choices (``settings``, the statistic's own frozen type; None:
    never touched) and its releases (oldest first). ``problem``: why a damaged part was left out ("" if
    none); a part left out is empty, and the rest of the project still opens."""

    settings: Any = None
    releases: tuple[Any, ...] = ()
    problem: str = field(default="", compare=False)


class SectionCodec(Protocol):
    """One statistic's part of a project's JSON object, both ways (its own keys only; the project file
    writes the others, the ``mode`` among them)."""

    @property
    def kind(self) -> StatisticKind:
        """The statistic whose part this is."""
        ...

    def read(self, data: dict[str, Any], source: str) -> ProjectSection:
        """The part in ``data``, a project's JSON object upgraded to today's shape
        (:func:`dpgui.report.migrations.upgrade_project`); ``source`` names the file in messages. A damaged
        part is a :class:`~dpgui.errors.DataError` naming the field; a file without the part gives an empty
        :class:`ProjectSection`."""
        ...

    def to_json(self, section: ProjectSection, compact: Callable[[list[Any]], Any]) -> dict[str, Any]:
        """The part's keys and JSON values, in the order they are written; ``compact(list)`` stands for a list
        written on one line."""
        ...

    def left_out(self, problem: str) -> str:
        """The words that tell the officer the part was left out because of ``problem`` (one line)."""
        ...


# ------------------------------------------------------------------ reading a part's fields (one rule for every part)

#: The fix a damaged part's message gives.
DAMAGED = "the file is damaged or was edited by hand; open another project or save it again"
MAX_COUNT = 2**62  # released counts are int64 in the engine


def field_error(where: str, name: str, wanted: str) -> DataError:
    """``where: 'name' must be wanted`` with the fix :data:`DAMAGED` (never quoting the value)."""
    return DataError(f"{where}: '{name}' must be {wanted}", DAMAGED)


def text_field(data: dict[str, Any], where: str, name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise field_error(where, name, "text")
    return value


def texts_field(data: dict[str, Any], where: str, name: str) -> tuple[str, ...]:
    value = data.get(name)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise field_error(where, name, "a list of texts")
    return tuple(value)


def number_field(data: dict[str, Any], where: str, name: str) -> float:
    """A finite number (a bool is not one)."""
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise field_error(where, name, "a number")
    return float(value)


def whole_field(data: dict[str, Any], where: str, name: str) -> int:
    """A whole number ≥ 1 (a bool is not one)."""
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise field_error(where, name, "a whole number ≥ 1")
    return value


def time_field(data: dict[str, Any], where: str, name: str) -> str:
    """A time as ISO 8601 text (kept as written)."""
    value = text_field(data, where, name)
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise field_error(where, name, "a time (ISO 8601)") from None
    return value


def person_column_field(data: dict[str, Any], where: str) -> str | None:
    """A mode's person-ID column (the privacy unit's; absent or null: none, records per person declared)."""
    column = data.get("person_column")
    if column is not None and (not isinstance(column, str) or not column):
        raise field_error(where, "person_column", "a column name or null")
    return column


def source_field(data: dict[str, Any], where: str) -> dict[str, Any] | None:
    """The release's ``source`` record (the data source's public record) or None."""
    source = data.get("source")
    if source is not None and not isinstance(source, dict):
        raise field_error(where, "source", "a data source record or null")
    return source
