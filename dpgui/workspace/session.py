"""The releases of one session of the window: every release made or restored since the window opened,
of every data source, so that none leaves the officer's reach when other data is opened (no Qt).

Each statistic's workspace (the CDF's :mod:`dpgui.workspace.state`, the others' own) holds the releases
of the data that is open — what a project file keeps. :class:`SessionReleases` holds them all, each with
the data it was made from, where it was exported and the project file it was saved in, so that the
window can list them, show any of them again (``shown``: the object its mode's results step shows, made
when first needed) and ask before other data takes a release that is neither exported nor saved off the
screen. Every statistic is treated alike: its words and its charge come from its statistic
(:func:`dpgui.workspace.statistics.statistic`), what it shows from its mode.

Public values only, as in a project file, except what ``shown`` holds of a release made in this session
that its results step shows the officer (a CDF's confidential histogram), which never leaves this
process (never exported, saved or listed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum
from pathlib import Path

from dpgui.data.source_spec import SourceSpec
from dpgui.report.project_file import ProjectRelease
from dpgui.report.project_sections import SectionRelease
from dpgui.workspace.state import Observable, Workspace
from dpgui.vocabulary import ReleaseKind, SourceKind, StatisticKind
from dpgui.workspace.statistics import recorded_charge, statistic


class ExportKind(Enum):
    """How a release was written out: a signed bundle (CSV + PDF + manifest + signature) or a CSV alone."""

    SIGNED_BUNDLE = "signed bundle"
    CSV = "CSV file"


@dataclass(frozen=True)
class ExportRecord:
    """One export of a release: its kind and where it went (a bundle's manifest, or the CSV file)."""

    kind: ExportKind
    path: Path


@dataclass(frozen=True, eq=False)  # compared by identity: it may hold a release's arrays
class SessionRelease:
    """One release of the session.

    ``record``: its public values (what a project file keeps: the CDF's workspace record, or a statistic's
    section record), from which its mode makes ``shown`` (what its results step shows: a CDF's
    :class:`~dpgui.workspace.state.ShownRelease`, a hierarchy's outcome, …) again when none is held.
    ``source``: the data it was made from (None: not known, e.g. a project of an older version).
    ``dataset``: the budget ledger's name that paid. ``subject``: what it is of, in words (the column, or
    the level columns joined by " → "). ``made_here``: released in this session (False: restored from a
    project or an autosave). ``exports``: where it was exported in this session; ``saved_in``: the project
    file that holds it (None: none yet)."""

    kind: StatisticKind  # what it publishes (the registry's kind)
    record: ProjectRelease | SectionRelease
    dataset: str
    subject: str
    source: SourceSpec | None
    made_here: bool
    shown: object | None = None  # the mode's own object (only the mode that made it reads it)
    exports: tuple[ExportRecord, ...] = ()
    saved_in: Path | None = None

    @property
    def release_id(self) -> str:
        return self.record.release_id

    @property
    def created(self) -> datetime:
        return self.record.created

    @property
    def title(self) -> str:
        """What it is, in its statistic's words: "CDF of distance", "Counts over dest_tz → origin → route"."""
        return statistic(self.kind).release_title(self.subject)

    @property
    def kept(self) -> bool:
        """Exported or saved in a project file: the release can be found again after this session."""
        return bool(self.exports) or self.saved_in is not None

    @property
    def signed_bundles(self) -> tuple[Path, ...]:
        """The manifests of the signed bundles written of it in this session."""
        return tuple(e.path for e in self.exports if e.kind is ExportKind.SIGNED_BUNDLE)

    @property
    def data_name(self) -> str:
        """The data it was made from, in words ("flights.csv", "table people in postgresql://…")."""
        return "data not recorded" if self.source is None else self.source.display_name()

    def charge(self) -> tuple[float, float]:
        """(ε, δ) the release charged to its dataset (its statistic's charge of the recorded plan). O(levels)."""
        charge = recorded_charge(self.kind, self.record.plan)
        return charge.epsilon, charge.delta


@dataclass(frozen=True)
class SessionState:
    """The releases of the session, in the order they were made or restored."""

    releases: tuple[SessionRelease, ...] = ()


def open_data(workspace: Workspace) -> SourceSpec | None:
    """The data open in ``workspace`` (None: none)."""
    source = workspace.state.source
    return None if source is None else source.source_spec


def same_data(a: SourceSpec, b: SourceSpec) -> bool:
    """The same data, however it is read: the same file or folder (absolute paths compared; a CSV's
    dialect may differ), or the same database or Spark table or query."""
    if a.kind == SourceKind.FILE and b.kind == SourceKind.FILE:
        return os.path.abspath(a.location) == os.path.abspath(b.location)
    return replace(a, dialect=None, encoding=None) == replace(b, dialect=None, encoding=None)


class SessionReleases(Observable[SessionState]):
    """The session's :class:`SessionRelease` list and its listeners (:class:`~dpgui.workspace.state.Observable`:
    one thread, the GUI thread in the window; listeners hear ``"releases"`` after each change)."""

    def __init__(self) -> None:
        super().__init__(SessionState())

    @property
    def releases(self) -> tuple[SessionRelease, ...]:
        return self.state.releases

    def get(self, release_id: str) -> SessionRelease | None:
        return next((r for r in self.state.releases if r.release_id == release_id), None)

    def add(self, entry: SessionRelease) -> SessionRelease:
        """Keep ``entry``; a release already listed keeps its record, source and exports, and takes the
        shown object (``shown``) and the project file of ``entry`` if it had none."""
        known = self.get(entry.release_id)
        if known is None:
            self.update(releases=self.state.releases + (entry,))
            return entry
        merged = replace(known, shown=known.shown or entry.shown, saved_in=known.saved_in or entry.saved_in,
                         made_here=known.made_here or entry.made_here)
        if any(getattr(merged, f) is not getattr(known, f) for f in ("shown", "saved_in", "made_here")):
            self._replace(merged)
        return merged

    def _replace(self, entry: SessionRelease) -> None:
        self.update(releases=tuple(entry if r.release_id == entry.release_id else r for r in self.state.releases))

    def mark_exported(self, release_id: str, kind: ExportKind, path: Path) -> None:
        """Record that the release ``release_id`` was written to ``path`` (unknown ids are ignored)."""
        entry = self.get(release_id)
        if entry is not None:
            self._replace(replace(entry, exports=entry.exports + (ExportRecord(kind, Path(path)),)))

    def mark_saved(self, release_ids: set[str], project_file: Path) -> None:
        """Record that the releases ``release_ids`` are in the project file ``project_file``."""
        if any(r.release_id in release_ids and r.saved_in != project_file for r in self.state.releases):
            self.update(releases=tuple(replace(r, saved_in=project_file) if r.release_id in release_ids else r
                                       for r in self.state.releases))

    def of_data(self, spec: SourceSpec, kind: StatisticKind | ReleaseKind) -> tuple[SessionRelease, ...]:
        """The releases of kind ``kind`` made or restored from the data ``spec`` (:func:`same_data`), oldest first."""
        return tuple(r for r in self.state.releases
                     if r.kind is kind and r.source is not None and same_data(r.source, spec))

    def not_kept(self, release_ids: set[str]) -> tuple[SessionRelease, ...]:
        """Those of ``release_ids`` that are neither exported nor saved in a project file, oldest first."""
        return tuple(r for r in self.state.releases if r.release_id in release_ids and not r.kept)
