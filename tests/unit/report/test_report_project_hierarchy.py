"""The hierarchy part of project files (.dpgui): a hierarchy release round-trips to the same values and
can still be authenticated against the budget ledger, nothing confidential is written, older files
open, and a damaged hierarchy part is a message that loses nothing else."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone

import numpy as np
import pytest

from dpgui.core.hierarchy import Hierarchy, plan_hierarchy
from dpgui.core.mechanism import release as cdf_release
from dpgui.core.noise import SecureRandom, SeededRandom
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.tree import TreeShape
from dpgui.errors import DataError
from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_DATA, NODE_LIST_FROM_PRIOR, hierarchy_sha256
from dpgui.report.hierarchy.publish import authenticate_hierarchy_release, spend_and_release_hierarchy
from dpgui.report.ledger import Ledger
from dpgui.report.project_file import Project, ProjectRelease, load_project, project_from_json, project_to_json, save_project
from dpgui.report.hierarchy.project import HierarchySettings, ProjectHierarchyRelease
from dpgui.report.project_sections import ProjectSection
from dpgui.vocabulary import StatisticKind

LEVELS = ("region", "district", "school")


def _dataset() -> tuple[Hierarchy, np.ndarray]:
    """A generated 3-level tree (4 regions, 3 districts each, 5 schools each: 60 leaves) with distinctive,
    large, all-different true leaf counts (confidential)."""
    paths = [(f"R{r}", f"R{r}/D{d}", f"R{r}/D{d}/S{s}") for r in range(4) for d in range(3) for s in range(5)]
    tree = Hierarchy.from_paths(LEVELS, paths)
    leaves = np.zeros(tree.level_sizes[-1], dtype=np.int64)
    leaves[tree.leaf_index(paths)] = 500_009 + 7_919 * np.arange(len(paths), dtype=np.int64)
    return tree, leaves


def _plan(tree: Hierarchy, noise: str = "laplace", neighbours: str = "change", consistency: str = "topdown"):
    delta = 1e-9 if noise != "laplace" else 0.0
    return plan_hierarchy(tree.level_sizes, PrivacySpec(0.05, neighbours, 1, delta), noise=noise,
                          consistency=consistency, alpha=0.1 if noise == "multiplicative" else None)


def _ledgered(noise: str = "laplace", neighbours: str = "change", consistency: str = "topdown", source=None,
              **kw):
    """A hierarchy release made as the window makes it: spent in the ledger, output recorded."""
    tree, leaves = _dataset()
    with Ledger() as ledger:
        ledger.set_cap("schools", 100.0, 1e-6)  # the same cap again changes nothing
        return spend_and_release_hierarchy(ledger, "schools", tree, leaves, _plan(tree, noise, neighbours, consistency),
                                           source or SecureRandom(),
                                           node_list_source=kw.pop("node_list_source", NODE_LIST_FROM_DATA), **kw)


def _cdf_record() -> ProjectRelease:
    shape = TreeShape(16, (4, 4))
    plan = Plan(shape, PrivacySpec(1.0), equal_budgets(shape, PrivacySpec(1.0)))
    released = cdf_release(np.arange(16, dtype=np.int64) * 10, plan, SeededRandom(2), 0.0, 16.0, "l2")
    return ProjectRelease.from_release(released, "cdf-1", datetime(2026, 1, 2, tzinfo=timezone.utc), "age", "drop")


SETTINGS = HierarchySettings(levels=LEVELS, prior_path="", counts_from_data=True, epsilon=0.05, delta=1e-9,
                             neighbours="addremove", records_per_person=3, noise="gaussian", allocation="target",
                             weights=(0.0, 1.0, 2.0, 0.5), target_mse=625.0, consistency="gls",
                             budgets=(0.001, 0.002, 0.003, 0.004), alpha=0.2, categories_public=True,
                             records_estimate=12_000)


def _part(project: Project) -> ProjectSection:
    """The project's hierarchy part."""
    return project.section(StatisticKind.HIERARCHY)


def _project(tmp_path, records: tuple[ProjectHierarchyRelease, ...]) -> Project:
    data = tmp_path / "schools.csv"
    data.write_text("region,district,school\nR0,R0/D0,R0/D0/S0\n")
    return Project(data_path=str(data), dataset="schools", releases=(_cdf_record(),), mode=StatisticKind.HIERARCHY,
                   sections={StatisticKind.HIERARCHY: ProjectSection(SETTINGS, records)})


@pytest.mark.parametrize("noise,neighbours,consistency", [("laplace", "change", "topdown"),
                                                          ("gaussian", "addremove", "gls"),
                                                          ("laplace", "addremove", "none"),
                                                          ("multiplicative", "change", "none")])
def test_round_trip_gives_the_same_values_and_the_ledger_still_confirms_it(tmp_path, noise, neighbours, consistency):
    result, info = _ledgered(noise, neighbours, consistency, notes=("'school' holds numbers",))
    record = ProjectHierarchyRelease.from_release(result, info)
    project = _project(tmp_path, (record,))
    saved = save_project(project, tmp_path / "work.dpgui")
    loaded = load_project(tmp_path / "work.dpgui")
    assert loaded == project == saved and loaded.section(StatisticKind.HIERARCHY).problem == ""
    assert loaded.mode == "hierarchy" and loaded.section(StatisticKind.HIERARCHY).settings == SETTINGS
    assert loaded.releases == project.releases  # the CDF release is kept alongside

    again, again_info = loaded.section(StatisticKind.HIERARCHY).releases[0].to_release()
    assert again.plan == result.plan and again.plan.to_json() == result.plan.to_json()
    assert again.hierarchy.level_names == result.hierarchy.level_names
    assert again.hierarchy.labels == result.hierarchy.labels
    assert hierarchy_sha256(again.hierarchy) == hierarchy_sha256(result.hierarchy)
    assert again.interval_method == result.interval_method
    for name in ("counts", "lower", "upper"):
        for mine, theirs in zip(getattr(again, name), getattr(result, name), strict=True):
            assert mine.dtype == np.int64
            np.testing.assert_array_equal(mine, theirs)
    assert again_info.created_utc == info.created_utc and again_info.notes == info.notes
    assert not again_info.secure  # a project file is not evidence: only the ledger may say so
    with Ledger() as ledger:
        assert authenticate_hierarchy_release(ledger, again, again_info).secure


def test_a_counts_edited_in_the_file_is_refused_by_the_ledger_not_by_the_file(tmp_path):
    result, info = _ledgered()
    project = _project(tmp_path, (ProjectHierarchyRelease.from_release(result, info),))
    document = json.loads(project_to_json(project))
    document["hierarchy_releases"][0]["counts"][3][0] += 1  # still a valid file
    edited = project_from_json(json.dumps(document)).section(StatisticKind.HIERARCHY).releases[0]
    with Ledger() as ledger, pytest.raises(DataError, match=r"released counts of release .* differ"):
        authenticate_hierarchy_release(ledger, *edited.to_release())
    document = json.loads(project_to_json(project))
    document["hierarchy_releases"][0]["labels"][2][0] = "R0/D0/S9"  # another node list
    edited = project_from_json(json.dumps(document)).section(StatisticKind.HIERARCHY).releases[0]
    with Ledger() as ledger, pytest.raises(DataError, match="node_list_sha256"):
        authenticate_hierarchy_release(ledger, *edited.to_release())
    # seeded (test) noise round-trips too, and stays unsignable
    seeded = ProjectHierarchyRelease.from_release(*_ledgered(source=SeededRandom(4)))
    with Ledger() as ledger, pytest.raises(DataError, match="test noise"):
        authenticate_hierarchy_release(ledger, *project_from_json(project_to_json(
            _project(tmp_path, (seeded,)))).section(StatisticKind.HIERARCHY).releases[0].to_release())


def _numbers(value, out: list) -> list:
    if isinstance(value, bool):
        return out
    if isinstance(value, (int, float)):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _numbers(item, out)
    elif isinstance(value, list):
        for item in value:
            _numbers(item, out)
    return out


def test_nothing_confidential_is_written(tmp_path):
    tree, leaves = _dataset()
    # seeded noise (fixed: at ε = 0.05 a node's noise is 0 with probability ≈ 1/240, so a true count may be
    # released exactly by chance; these seeds release none of the leaves exactly)
    releases = [_ledgered("laplace", "change", "topdown", source=SeededRandom(21), counts_from_data=True),
                _ledgered("laplace", "addremove", "gls", source=SeededRandom(22), node_list_source=NODE_LIST_FROM_PRIOR,
                          prior_name="prior.csv", prior_sha256="ab" * 32)]
    project = _project(tmp_path, tuple(ProjectHierarchyRelease.from_release(r, i) for r, i in releases))
    text = project_to_json(project)
    found = set(_numbers(json.loads(text), []))
    released: set = set()
    for result, _ in releases:
        for name in ("counts", "lower", "upper"):
            for level in getattr(result, name):
                released.update(level.tolist())
    true_values = set(leaves.tolist())
    for level, counts in enumerate(tree.aggregate(leaves)):
        if level > 0:  # the root N is public under change (released exactly)
            true_values.update(counts.tolist())
    leaked = (found & true_values) - released
    assert not leaked, sorted(leaked)[:5]
    assert not (found & set(leaves.tolist())), "a true leaf count is in the project file"
    # the check has teeth: the true counts are near the released ones but (at ε = 0.05) none is one of them
    assert len(true_values - released) > len(true_values) // 2
    assert json.dumps(leaves.tolist(), separators=(",", ":")) not in text


def test_old_files_open_in_the_cdf_mode(tmp_path):
    project = _project(tmp_path, ())
    document = json.loads(project_to_json(project))
    for key in ("mode", "hierarchy", "hierarchy_releases"):
        del document[key]
    loaded = project_from_json(json.dumps(document))
    assert loaded.mode == "cdf" and _part(loaded).settings is None and _part(loaded).releases == ()
    assert _part(loaded).problem == "" and loaded.releases == project.releases
    # choices saved before the "categories are public" declaration existed: not declared
    older = json.loads(project_to_json(project))
    del older["hierarchy"]["categories_public"]
    assert _part(project_from_json(json.dumps(older))).settings == replace(SETTINGS, categories_public=False)
    # choices saved before a typed estimate of N existed: none typed; a bad one is refused with the fix
    del older["hierarchy"]["records_estimate"]
    assert _part(project_from_json(json.dumps(older))).settings == replace(SETTINGS, categories_public=False,
                                                                           records_estimate=None)
    older["hierarchy"]["records_estimate"] = -3
    assert _part(project_from_json(json.dumps(older))).problem
    # a project without hierarchy choices writes them as null and reads them back the same
    plain = replace(loaded)
    assert project_from_json(project_to_json(plain)) == plain


def test_a_damaged_mode_is_a_message_and_the_rest_opens(tmp_path):
    """A mode that is not a statistic's: the project opens in the CDF mode, saying so; nothing else is lost
    (the hierarchy part too is kept: the mode is read apart from it)."""
    result, info = _ledgered(source=SeededRandom(1))
    project = _project(tmp_path, (ProjectHierarchyRelease.from_release(result, info),))
    loaded = _damaged(json.loads(project_to_json(project)), lambda d: d.__setitem__("mode", "tree"))
    message = loaded.mode_problem
    assert "'mode' must be 'cdf' or 'hierarchy'" in message and "'work.dpgui'" in message, message
    assert "\n" not in message and "mode was left out" in message
    assert loaded.mode == "cdf" and _part(loaded) == _part(project) and _part(loaded).problem == ""
    assert loaded.releases == project.releases and loaded.dataset == "schools"
    assert loaded.data_path == project.data_path


def _damaged(document: dict, edit) -> Project:
    edit(document)
    return project_from_json(json.dumps(document), source="'work.dpgui'")


@pytest.mark.parametrize("edit,words", [
    (lambda d: d["hierarchy_releases"][0]["counts"][2].pop(), "'counts[2]' must be a list of 12 whole numbers"),
    (lambda d: d["hierarchy_releases"][0]["parents"][1].__setitem__(0, 99), "'parents[1]' must be parent indices"),
    (lambda d: d["hierarchy_releases"][0]["plan"].pop("level_sizes"), "the plan is not valid"),
    (lambda d: d["hierarchy_releases"][0].__setitem__("created_utc", "yesterday"), "'created_utc' must be"),
    (lambda d: d["hierarchy_releases"][0].__setitem__("node_list_source", "a guess"), "'node_list_source' must be"),
    (lambda d: d["hierarchy"].__setitem__("noise", "uniform"), "hierarchy choices: 'noise' must be"),
    (lambda d: d["hierarchy"].__setitem__("levels", "region"), "'levels' must be a list"),
    (lambda d: d.__setitem__("hierarchy_releases", {}), "'hierarchy_releases' must be a list"),
])
def test_a_damaged_hierarchy_part_is_a_message_and_the_rest_opens(tmp_path, edit, words):
    result, info = _ledgered(source=SeededRandom(1))
    project = _project(tmp_path, (ProjectHierarchyRelease.from_release(result, info),))
    loaded = _damaged(json.loads(project_to_json(project)), edit)
    message = _part(loaded).problem
    assert words in message and "'work.dpgui'" in message and "\n" not in message, message
    assert "hierarchy part of the project was left out" in message
    assert loaded.mode == "cdf" and _part(loaded).settings is None and _part(loaded).releases == ()
    # nothing else is lost
    assert loaded.releases == project.releases and loaded.dataset == "schools"
    assert loaded.data_path == project.data_path


def test_the_released_values_are_written_one_level_per_line(tmp_path):
    result, info = _ledgered()
    text = project_to_json(_project(tmp_path, (ProjectHierarchyRelease.from_release(result, info),)))
    leaf_line = json.dumps(result.counts[3].tolist(), separators=(",", ":"))
    assert any(line.strip().rstrip(",") == leaf_line for line in text.splitlines())
    assert len(text.splitlines()) < 200  # 60 leaves: not one number per line
