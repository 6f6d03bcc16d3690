"""The parts of a project file (``.dpgui``) that belong to one statistic each, beside the CDF's workspace
fields: what every statistic's part holds (:class:`ProjectSection`: its choices and its releases) and what
every release kept in a project offers the window and the session list (:class:`SectionRelease`).

Public values only, as everywhere in a project file. No Qt; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

__all__ = ["ProjectSection", "SectionRelease"]


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
