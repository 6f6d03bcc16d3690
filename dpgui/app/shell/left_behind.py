"""Workspaces that other data took off the screen while they held a release neither exported nor saved,
kept in the autosave folder until the session ends cleanly, so that a crash loses no release from view.

The autosave (:mod:`dpgui.app.shell.project`) holds the open data's workspace only. When the officer opens other
data anyway (Release → Releases of This Session keeps listing the release), the leaving workspace is written
to ``<dpgui home>/autosave/left-<id>.dpgui`` (public values only, as any project file; on a worker). A clean
exit removes these files; after a crash they are found at the next start and, if the officer restores the
last workspace, their releases are listed again under Releases of This Session (shown in one click, spending
nothing); if the officer discards it, they go too. GUI thread only, except the writing.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from dpgui.app.workers import Worker, WorkerPool
from dpgui.errors import DpguiError
from dpgui.report.project_file import PROJECT_SUFFIX, Project, load_project, save_project

PREFIX = "left-"


def _write(project: Project, path: Path, progress: Any, should_cancel: Any) -> Project:
    return save_project(project, path)


class LeftBehind:
    """The ``left-*.dpgui`` files of this session (``written``) and of a crashed one (``recovered``)."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.written: list[Path] = []
        self.recovered: list[Path] = []
        self._pool = WorkerPool()

    def start(self, folder: Path, crashed: bool) -> None:
        """The session owns the autosave ``folder``; after a crash the files found there are the crashed
        session's (a clean exit leaves none)."""
        self.folder = folder
        self.recovered = sorted(folder.glob(f"{PREFIX}*{PROJECT_SUFFIX}")) if crashed else []

    def keep(self, project: Project) -> None:
        """Write ``project`` (the workspace other data is about to replace) on a worker."""
        if self.folder is None:
            return
        path = self.folder / f"{PREFIX}{uuid.uuid4().hex}{PROJECT_SUFFIX}"
        self.written.append(path)
        self._pool.start(Worker(_write, project, path))

    def recovered_projects(self) -> list[Project]:
        """The crashed session's workspaces that other data had replaced (files that do not load are skipped)."""
        projects = []
        for path in self.recovered:
            try:
                projects.append(load_project(path))
            except DpguiError:
                continue
        return projects

    def adopt_recovered(self) -> None:
        """The recovered releases are listed in this session: their files are this session's from now on."""
        self.written += self.recovered
        self.recovered = []

    def discard_recovered(self) -> None:
        _remove(self.recovered)
        self.recovered = []

    def end(self, keep_recovered: bool) -> None:
        """Clean exit: this session's files go (after their writing), and the crashed session's unless
        ``keep_recovered`` (nobody answered the restore question yet)."""
        if self._pool.busy():
            self._pool.wait(5000)  # a file still being written is removed once written
        _remove(self.written)
        self.written = []
        if not keep_recovered:
            self.discard_recovered()


def _remove(paths: list[Path]) -> None:
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass
