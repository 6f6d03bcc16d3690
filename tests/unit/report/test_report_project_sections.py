"""Every statistic's part of a project file goes through one registry (``SECTION_CODECS``): a project with
the hierarchy's and the counts' parts writes the same text again after a round trip, parts compare as the
workspace they hold, and a codec registered for a kind is all the project file needs to keep its part."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpgui.core.counts import CountsRelease
from dpgui.errors import DataError
from dpgui.report import project_file
from dpgui.report.counts.bundle import CountsReleaseInfo
from dpgui.report.counts.project import CountsSettings, ProjectCountsRelease
from dpgui.report.project_file import SECTION_CODECS, Project, load_project, project_from_json, project_to_json
from dpgui.report.project_sections import ProjectSection
from dpgui.vocabulary import Neighbours, StatisticKind
from dpgui.workspace.counts import counts_plan

GOLDEN = Path(__file__).with_name("golden") / "projects"


def _counts_part() -> ProjectSection:
    plan = counts_plan(("OR", "WA"), 0.5, Neighbours.ADDREMOVE, 2)
    release = CountsRelease(plan, np.array([7, -1], dtype=np.int64), True)
    info = CountsReleaseInfo("people", "state", "a" * 32, datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc), True,
                             {"kind": "file", "format": "csv", "engine": "local"})
    settings = CountsSettings("state", ("OR", "WA"), "/lists/states.txt", 0.5, Neighbours.ADDREMOVE, 2)
    return ProjectSection(settings, (ProjectCountsRelease.from_release(release, info),))


def _both_parts() -> Project:
    """The 2026-11-25 golden project (a hierarchy part with one release), with a counts part added."""
    project = load_project(GOLDEN / "project-2026-11-25.dpgui")
    assert project.section(StatisticKind.HIERARCHY).releases  # the golden file has a hierarchy release
    return replace(project, sections={**project.sections, StatisticKind.COUNTS: _counts_part()})


def test_every_registered_codec_is_for_its_own_kind():
    assert list(SECTION_CODECS) == [StatisticKind.HIERARCHY, StatisticKind.COUNTS,
                                    StatisticKind.GROUPED_CDF]  # the order parts are written
    assert all(codec.kind is kind for kind, codec in SECTION_CODECS.items())


def test_a_project_with_both_parts_round_trips_to_the_same_text():
    project = _both_parts()
    text = project_to_json(project)
    again = project_from_json(text)
    assert again == project and project_to_json(again) == text
    for kind in (StatisticKind.HIERARCHY, StatisticKind.COUNTS):
        assert again.section(kind).releases == project.section(kind).releases and again.section(kind).releases
        assert again.section(kind).settings == project.section(kind).settings
        assert again.section(kind).problem == ""
    # the parts follow the mode, in the registry's order
    assert list(json.loads(text))[-5:] == ["mode", "hierarchy", "hierarchy_releases", "counts", "counts_releases"]


def test_parts_compare_as_the_workspace_they_hold():
    plain = Project(data_path="/data/a.csv")
    empty = ProjectSection()
    assert replace(plain, sections={StatisticKind.HIERARCHY: empty}) == plain  # an empty part is no part
    damaged = ProjectSection(problem="The counts part of the project was left out: …")
    assert replace(plain, sections={StatisticKind.COUNTS: damaged}) == plain  # the problem describes the file
    held = replace(plain, sections={StatisticKind.COUNTS: _counts_part()})
    assert held != plain and held.section(StatisticKind.COUNTS) == _counts_part()
    assert plain.section(StatisticKind.COUNTS) == empty and plain.section(StatisticKind.CDF) == empty
    with pytest.raises(TypeError):  # read-only: a part changed in place would not be compared
        held.sections[StatisticKind.COUNTS] = empty


def test_a_damaged_part_of_the_mode_opens_the_project_in_the_cdf_mode():
    project = replace(_both_parts(), mode=StatisticKind.COUNTS)
    document = json.loads(project_to_json(project))
    document["counts_releases"][0]["counts"] = [7]  # one count for two categories
    loaded = project_from_json(json.dumps(document), source="'work.dpgui'")
    problem = loaded.section(StatisticKind.COUNTS).problem
    assert problem.startswith("The counts part of the project was left out: 'work.dpgui', counts release 1")
    assert loaded.mode is StatisticKind.CDF and loaded.section(StatisticKind.COUNTS).releases == ()
    assert loaded.section(StatisticKind.HIERARCHY) == project.section(StatisticKind.HIERARCHY)  # nothing else lost
    assert loaded.mode_problem == ""


class _MadeUp(StrEnum):
    """A kind the vocabulary does not have (the window would need a member of StatisticKind and a mode)."""

    TALLY = "tally"


class _TallyCodec:
    """A test statistic's part: its settings are one text, its releases whole numbers, under one key."""

    kind = _MadeUp.TALLY

    def read(self, data: dict[str, Any], source: str) -> ProjectSection:
        raw = data.get("tally", {"settings": None, "releases": []})
        if not isinstance(raw, dict) or not isinstance(raw.get("releases"), list):
            raise DataError(f"{source}: 'tally' must be an object with its releases", "save it again")
        return ProjectSection(raw["settings"], tuple(raw["releases"]))

    def to_json(self, section: ProjectSection, compact: Any) -> dict[str, Any]:
        if section.settings is None and not section.releases:
            return {}
        return {"tally": {"settings": section.settings, "releases": compact(list(section.releases))}}

    def left_out(self, problem: str) -> str:
        return f"The tally part of the project was left out: {problem}."


def test_a_registry_line_is_all_the_project_file_needs_for_a_new_part(monkeypatch):
    """With a codec registered for a made-up kind (and nothing else changed in the project file), its part is
    written after the others, read back the same, and left out with its own words when damaged. The kind is
    not a member of :class:`StatisticKind` (a real statistic would add one, and a window mode); the project's
    ``mode`` stays one of the vocabulary's, so this shows the project file's side only."""
    monkeypatch.setitem(project_file.SECTION_CODECS, _MadeUp.TALLY, _TallyCodec())
    part = ProjectSection("three-way", (4, 1, 7))
    project = replace(_both_parts(), sections={**_both_parts().sections, _MadeUp.TALLY: part})
    text = project_to_json(project)
    document = json.loads(text)
    assert list(document)[-1] == "tally" and document["tally"] == {"settings": "three-way", "releases": [4, 1, 7]}
    assert '"releases": [4,1,7]' in text  # the codec's list was written on one line
    again = project_from_json(text)
    assert again == project and project_to_json(again) == text
    assert again.section(_MadeUp.TALLY) == part
    assert again.section(StatisticKind.COUNTS) == _counts_part()
    document["tally"] = []
    damaged = project_from_json(json.dumps(document), source="'work.dpgui'")
    problem = damaged.section(_MadeUp.TALLY).problem
    assert problem == ("The tally part of the project was left out: 'work.dpgui': 'tally' must be an object with "
                       "its releases.")
    assert damaged.section(StatisticKind.COUNTS) == _counts_part()  # the other parts still open
    # without the registry line the part is not read (a file written with it still opens)
    monkeypatch.delitem(project_file.SECTION_CODECS, _MadeUp.TALLY)
    assert project_from_json(text).section(_MadeUp.TALLY) == ProjectSection()


@pytest.mark.parametrize("mode", list(StatisticKind))
def test_every_kind_is_a_mode_a_project_keeps(mode):
    project = replace(_both_parts(), mode=mode)
    assert project_from_json(project_to_json(project)).mode is mode
