"""The session's list of releases (dpgui.workspace.session): kept across data, merged by id, marked when
exported or saved, found by the data they were made from (however that data is read)."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np

from dpgui.core.mechanism import release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.data.file_types import CsvDialect
from dpgui.data.source_spec import SourceSpec
from dpgui.report.project_file import ProjectRelease
from dpgui.vocabulary import StatisticKind
from dpgui.workspace.session import ExportKind, SessionRelease, SessionReleases, same_data


def entry(release_id: str, location: str, epsilon: float = 0.5) -> SessionRelease:
    made = release(np.arange(16), auto_plan(16, PrivacySpec(epsilon)), SeededRandom(1), 0.0, 16.0, "l2")
    record = ProjectRelease.from_release(made, release_id, datetime(2026, 1, 2, tzinfo=timezone.utc), "age")
    return SessionRelease(StatisticKind.CDF, record, "people", "age", SourceSpec("file", location), made_here=True)


def test_the_list_keeps_merges_and_marks_releases(tmp_path):
    releases = SessionReleases()
    heard: list[frozenset[str]] = []
    releases.subscribe(heard.append)
    first = releases.add(entry("r1", str(tmp_path / "people.csv")))
    releases.add(entry("r2", str(tmp_path / "other.csv"), epsilon=0.25))
    assert releases.add(entry("r1", str(tmp_path / "elsewhere.csv"))).source == first.source  # known: kept as is
    assert [r.release_id for r in releases.releases] == ["r1", "r2"] and len(heard) == 2
    assert releases.get("r2").charge() == (0.25, 0.0)
    assert [r.release_id for r in releases.not_kept({"r1", "r2"})] == ["r1", "r2"]
    releases.mark_exported("r1", ExportKind.SIGNED_BUNDLE, tmp_path / "b.manifest.json")
    releases.mark_saved({"r2"}, tmp_path / "other.dpgui")
    assert releases.not_kept({"r1", "r2"}) == ()
    assert releases.get("r1").signed_bundles == (tmp_path / "b.manifest.json",)
    assert releases.get("r2").saved_in == tmp_path / "other.dpgui" and releases.get("r2").signed_bundles == ()
    semicolons = SourceSpec("file", str(tmp_path / "people.csv"), dialect=CsvDialect(";", ","))
    assert [r.release_id for r in releases.of_data(semicolons, StatisticKind.CDF)] == ["r1"]
    assert releases.of_data(semicolons, StatisticKind.HIERARCHY) == ()


def test_same_data_ignores_how_it_is_read_only():
    people = SourceSpec("file", "/data/people.csv")
    assert same_data(people, SourceSpec("file", "/data/../data/people.csv", dialect=CsvDialect(";", ",")))
    assert not same_data(people, SourceSpec("file", "/data/other.csv"))
    table = SourceSpec("database", "sqlite:////data/x.db", table="t")
    assert same_data(table, SourceSpec("database", "sqlite:////data/x.db", table="t"))
    assert not same_data(table, SourceSpec("database", "sqlite:////data/x.db", query="SELECT * FROM t"))
    assert not same_data(table, people)
