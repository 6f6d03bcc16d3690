"""The session's list names no statistic (dpgui.app.shell.session_releases): a further statistic — here a
made-up one, its mode a minimal :class:`~dpgui.app.mode.StatisticMode` and its statistic a line of the
registry — has its releases collected, listed in the menu and the dialog with its own words and charge, kept
on screen until other data is opened, given back with its data, and shown again through its own mode."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMainWindow, QWidget

from dpgui.app.shell.session_releases import SessionController
from dpgui.data.source_spec import SourceSpec
from dpgui.data.table import TableInfo
from dpgui.vocabulary import Charge, SourceKind
from dpgui.workspace import statistics
from dpgui.workspace.session import ExportKind, SessionRelease, open_data
from dpgui.workspace.state import SourceChoice, Workspace

TALLY = "tally"  # a kind no dpgui has: the controller must not care


class TallyStatistic:
    """The made-up statistic's answers the session asks: its words and its charge."""

    kind = TALLY

    def release_title(self, subject: str) -> str:
        return f"Tally of {subject}"

    def plan_from_json(self, data: dict[str, Any]) -> float:
        return float(data["epsilon"])

    def charge(self, plan: float) -> Charge:
        return Charge(plan)


@dataclass(frozen=True)
class TallyRecord:
    """A tally release as a project keeps it (a SectionRelease)."""

    release_id: str
    dataset: str
    subject: str
    plan: dict[str, Any]
    created: datetime = datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone.utc)


class TallyMode:
    """The made-up statistic's mode: its releases of the open data and the one it shows."""

    kind = TALLY
    release_tip = "Publish the tally"

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.releases: tuple[TallyRecord, ...] = ()
        self.shown: tuple[str, object] | None = None  # (release id, what step 4 shows)
        self.listeners: list[Any] = []
        self.taken: list[tuple[tuple[SessionRelease, ...], bool]] = []
        self.exported: list[str] = []

    def steps(self) -> QWidget:
        return QWidget()

    def has_release(self) -> bool:
        return self.shown is not None

    def is_releasing(self) -> bool:
        return False

    def data_opened(self) -> None:
        pass

    def release(self) -> None:
        pass

    def export_bundle(self) -> None:
        pass

    def export_csv(self) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def released(self, record: TallyRecord, figures: object) -> None:
        """A release made here: held and shown."""
        self.releases += (record,)
        self.shown = (record.release_id, figures)
        for listener in self.listeners:
            listener()

    # the session's releases
    def watch_releases(self, listener: Any) -> None:
        self.listeners.append(listener)

    def session_releases(self) -> tuple[SessionRelease, ...]:
        return tuple(SessionRelease(TALLY, r, r.dataset, r.subject, open_data(self.workspace),
                                    made_here=self.shown is not None and self.shown[0] == r.release_id,
                                    shown=self.shown[1] if self.shown is not None and self.shown[0] == r.release_id
                                    else None)
                     for r in self.releases)

    def take_releases(self, entries: tuple[SessionRelease, ...], chosen: bool) -> None:
        self.taken.append((entries, chosen))
        self.releases = tuple(e.record for e in entries)
        self.shown = None

    def releases_on_screen(self) -> set[str]:
        return {r.release_id for r in self.releases} | ({self.shown[0]} if self.shown is not None else set())

    def show_again(self, entry: SessionRelease) -> object:
        figures = entry.shown if entry.shown is not None else "made again from the record"
        self.shown = (entry.release_id, figures)
        return figures

    def exports_changed(self, release_id: str) -> None:
        self.exported.append(release_id)


class Saved:
    def save(self) -> bool:
        return True


class TallyWindow(QMainWindow):
    """A window with one mode, the made-up statistic's."""

    def __init__(self) -> None:
        super().__init__()
        self.workspace = Workspace()
        self.tally = TallyMode(self.workspace)
        self.statistic_modes = {TALLY: self.tally}
        self.chosen: list[str] = []
        self.project = Saved()

    @property
    def mode(self) -> TallyMode:
        return self.tally

    def choose_mode(self, kind: str) -> None:
        self.chosen.append(kind)

    def export_bundle(self) -> None:
        pass


def open_data_file(window: TallyWindow, path: Path) -> None:
    """The window opens ``path`` (its workspace's source), then tells the session as the main window does."""
    previous = open_data(window.workspace)
    table = TableInfo(path, "csv", (), 10, 5)
    window.workspace.update(source=SourceChoice(table, 10, SourceSpec(SourceKind.FILE, str(path))))
    window.session.source_changed(previous)


def test_a_further_statistic_is_listed_and_shown_again_through_its_own_mode(qtbot, monkeypatch, tmp_path):
    monkeypatch.setitem(statistics.STATISTICS, TALLY, TallyStatistic())
    window = TallyWindow()
    qtbot.addWidget(window)
    window.session = SessionController(window)
    first, second = tmp_path / "stock.csv", tmp_path / "other.csv"
    open_data_file(window, first)
    record = TallyRecord("t1", "warehouse", "stock", {"epsilon": 0.5})
    window.tally.released(record, "the figures")

    entry = window.session.releases.get("t1")
    assert entry is not None and entry.made_here and entry.shown == "the figures" and entry.data_name == "stock.csv"
    assert entry.title == "Tally of stock" and entry.charge() == (0.5, 0.0)
    labels = [a.text() for a in window.session.menu.actions() if a.text()]
    assert "Tally of stock — stock.csv" in labels[0] and "(not exported or saved)" in labels[0]
    dialog = window.session.show_dialog()
    assert [dialog.table.item(0, c).text() for c in range(1, 5)] == ["Tally of stock", "stock.csv", "warehouse",
                                                                     "ε = 0.5"]
    dialog.close()
    assert [e.release_id for e in window.session.not_kept()] == ["t1"]  # on screen: asked before leaving

    open_data_file(window, second)  # its own releases: none; the tally's stays listed
    assert window.tally.taken[-1] == ((), True) and window.tally.releases == () and window.tally.shown is None
    assert window.session.not_kept() == () and [e.release_id for e in window.session.not_kept_elsewhere()] == ["t1"]

    assert window.session.reopen("t1")  # one click: its own mode chosen, shown with what it showed
    assert window.chosen == [TALLY] and window.tally.shown == ("t1", "the figures")
    assert "Tally of stock" in window.statusBar().currentMessage()
    assert "made from <b>stock.csv</b>" in window.session.banner_words("t1")
    window.session.mark_exported("t1", ExportKind.SIGNED_BUNDLE, tmp_path / "t1.manifest.json")
    assert window.tally.exported == ["t1"] and window.session.releases.get("t1").kept

    open_data_file(window, first)  # back: the tally mode holds its data's release again
    assert [e.release_id for e in window.tally.taken[-1][0]] == ["t1"] and window.tally.releases == (record,)
