"""What the main window asks of the statistic it releases: one mode object per statistic of the window's table
(:data:`~dpgui.app.shell.mode_table.MODES`: the CDF of a number column, counts over a hierarchy of categories,
the counts of one column), chosen under "What to release". The window holds the current one and asks it, never
which statistic it is: its steps, its release and exports, its part of a project file and its releases in the
session's list. A further statistic adds a mode, not a branch. A mode asks the window in turn only what
:class:`ModeHost` offers (no mode imports the window).
GUI thread only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QStatusBar, QWidget

from dpgui.app.dialogs.database import SessionPasswords
from dpgui.app.dialogs.export import BundleExportDialog
from dpgui.core.noise import RandomSource
from dpgui.report.project_file import Project
from dpgui.report.project_sections import ProjectSection
from dpgui.vocabulary import ReleaseKind, StatisticKind
from dpgui.workspace.session import SessionRelease


class StatisticMode(Protocol):
    """A statistic's steps in the window, its release and its exports."""

    @property
    def kind(self) -> StatisticKind | ReleaseKind:
        """Which statistic, or a release plan of several (also the ``mode`` a project file records; a plan's as
        the CDF's)."""
        ...

    @property
    def release_tip(self) -> str:
        """The Release action's status tip: what a release publishes."""
        ...

    def steps(self) -> QWidget:
        """The mode's steps, shown under "What to release"."""
        ...

    def has_release(self) -> bool:
        """Does the mode show a release (made or restored) that Export can write?"""
        ...

    def is_releasing(self) -> bool:
        """Is a release of this mode running (on a worker)?"""
        ...

    def data_opened(self) -> None:
        """The open data changed, or this mode was chosen: take the open data (its columns, the dataset)."""
        ...

    def release(self) -> None:
        """Release → Release…: check the settings, confirm with the officer, release on a worker."""
        ...

    def export_bundle(self) -> None:
        """File → Export Signed Bundle… of the shown release."""
        ...

    def export_csv(self) -> None:
        """File → Export Release CSV Only… of the shown release (unsigned)."""
        ...

    def shutdown(self) -> None:
        """The window closes: cancel the mode's workers."""
        ...

    # the session's releases
    def watch_releases(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after the mode's releases or the one it shows changed (the session's list
        collects them)."""
        ...

    def session_releases(self) -> tuple[SessionRelease, ...]:
        """The mode's releases as the session lists them, oldest first, each with the data it was made from:
        the one shown with what it shows (``shown``; ``made_here`` if released in this session), the others
        without."""
        ...

    def take_releases(self, entries: tuple[SessionRelease, ...], chosen: bool) -> None:
        """Other data is open: hold ``entries`` (the session's releases of this kind of that data, oldest
        first; none, usually) and show none. ``chosen``: this is the chosen mode (else it takes the open
        data when it is chosen)."""
        ...

    def releases_on_screen(self) -> set[str]:
        """The ids of the releases the mode holds and of the one it shows."""
        ...

    def show_again(self, entry: SessionRelease) -> object:
        """Show the session's release ``entry`` of this kind (maybe of other data) in the results step, the
        window having chosen this mode: what the session holds of it (``entry.shown``), else made again from
        its record, restored (signable only if the budget ledger confirms it). Returns what it shows, which
        the session keeps. Spends nothing."""
        ...

    def exports_changed(self, release_id: str) -> None:
        """The session recorded an export of ``release_id``: the results step's banner, if it shows that
        release, says where it went."""
        ...

    # the mode's part of a project file
    def project_section(self) -> ProjectSection | None:
        """The mode's choices and releases as a project keeps them (public values only); None for the mode
        whose part is the project's own fields (the CDF's workspace)."""
        ...

    def release_count(self) -> int:
        """How many releases the mode's part of the workspace holds (made or restored)."""
        ...

    def on_project_change(self, react: Callable[[], None]) -> None:
        """Call ``react`` after each change of the mode's part of the project (its choices, its releases)."""
        ...

    def restore_project(self, project: Project, data_name: str) -> list[str]:
        """Put the mode's part of ``project`` into its steps, the project's data being open (named
        ``data_name`` in messages); the problems to tell the officer (a damaged part, a choice it cannot
        take). Nothing is released and no budget is spent; a restored release is not marked secure until
        the budget ledger's record says so."""
        ...


class ReleaseWords(Protocol):
    """The session's words on step 4's banner (:class:`~dpgui.app.shell.session_releases.SessionController`)."""

    def nothing_shown_words(self) -> str: ...

    def banner_words(self, release_id: str) -> str: ...


class Autosave(Protocol):
    """The project's autosave (:class:`~dpgui.app.shell.project.ProjectController`)."""

    def autosave_now(self) -> None: ...


class ModeHost(Protocol):
    """What every mode needs of the main window: the noise and the session's passwords, the session's
    words and the autosave, the Export actions it enables, the status bar and error box, the first
    budget question (:meth:`ask_cap`, with the cap's δ) and what follows an export."""

    noise_source: Callable[[], RandomSource]
    passwords: SessionPasswords

    @property
    def session(self) -> ReleaseWords: ...

    @property
    def project(self) -> Autosave: ...
    export_action: QAction
    export_bundle_action: QAction

    def window(self) -> QWidget: ...

    def statusBar(self) -> QStatusBar: ...

    def show_error(self, title: str, message: str) -> None: ...

    def ask_cap(self, dataset: str, epsilon: float, delta: float = 0.0) -> float | None: ...

    def similar_datasets(self, dataset: str) -> list[str]: ...

    def protected_paths(self, release_id: str) -> list[str]: ...

    def after_bundle_export(self, dialog: BundleExportDialog) -> None: ...

    def csv_exported(self, release_id: str, dataset: str, path: Path) -> None: ...
