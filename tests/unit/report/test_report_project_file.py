"""Project files (.dpgui): round trip, clear errors for bad files, and nothing confidential inside."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone

import numpy as np
import pytest

from dpgui.core.mechanism import release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.tree import TreeShape
from dpgui.errors import DataError
from dpgui.report.migrations import PROJECT_VERSION
from dpgui.report.project_file import (
    MissingDataFile, Project, ProjectRelease, project_data_file, load_project, project_from_json,
    project_to_json, save_project,
)

K = 64
# Distinctive true counts: large, not round, all different, and far from anything else in a project.
TRUE_COUNTS = 1_000_003 + 7_919 * np.arange(K, dtype=np.int64)


def _plan(neighbours: str = "change", branching: tuple[int, ...] = (4, 4, 4), epsilon: float = 1.0) -> Plan:
    shape = TreeShape(K, branching)
    privacy = PrivacySpec(epsilon, neighbours)
    return Plan(shape, privacy, equal_budgets(shape, privacy))


def _releases():
    first = release(TRUE_COUNTS, _plan("change"), SeededRandom(3), 10.0, 74.0, "l2")
    second = release(TRUE_COUNTS, _plan("addremove", (8, 8), 0.5), SeededRandom(4), 10.0, 74.0, "l1")
    return first, second


def _project(tmp_path, releases=None) -> Project:
    first, second = releases or _releases()
    records = (
        ProjectRelease.from_release(first, "rel-1", datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc), "age", "drop"),
        ProjectRelease.from_release(second, "rel-2", datetime(2026, 1, 2, 4, 0, tzinfo=timezone.utc), "age", "drop"),
    )
    data = tmp_path / "people.csv"
    data.write_text("age\n1\n")
    return Project(data_path=str(data), column="age", lower=10.0, upper=74.0, bins=K, missing="drop",
                   dataset="people-2026", plan=_plan("addremove", (8, 8), 0.5).to_json(), consistency="l1",
                   branching="8x8", objective="max", locked_levels=(0, 2), releases=records)


def test_round_trip_with_two_releases(tmp_path):
    releases = _releases()
    project = _project(tmp_path, releases)
    saved = save_project(project, tmp_path / "work.dpgui")
    assert saved.saved_utc and saved == project  # the time stamp is not part of the workspace
    loaded = load_project(tmp_path / "work.dpgui")
    assert loaded == project
    assert loaded.saved_utc == saved.saved_utc
    assert loaded.plan_object() == _plan("addremove", (8, 8), 0.5)
    assert (loaded.column, loaded.lower, loaded.upper, loaded.bins, loaded.missing, loaded.dataset) == (
        "age", 10.0, 74.0, K, "drop", "people-2026")
    assert [r.release_id for r in loaded.releases] == ["rel-1", "rel-2"]
    assert loaded.locked_levels == (0, 2)
    for original, record in zip(releases, loaded.releases):
        again = record.to_release()
        # The published numbers come back exactly: same levels, same estimates, same consistent CDF.
        np.testing.assert_array_equal(again.cumulative, original.cumulative)
        np.testing.assert_array_equal(again.estimate, original.estimate)
        np.testing.assert_array_equal(again.std_error, original.std_error)
        assert again.total == original.total
        assert again.plan == original.plan and again.consistency == original.consistency
        assert (again.lower, again.upper, again.secure) == (10.0, 74.0, False)
        for a, b in zip(again.levels, original.levels):
            assert (a is None and b is None) or np.array_equal(a, b)
        assert record.created.tzinfo is not None
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically


def test_secure_is_never_read_from_a_file(tmp_path):
    """Whether a release's noise was secure comes from the budget ledger only:
    a "secure" key (written by dpgui 0.1, or by hand) is ignored, whatever its value, and never written."""
    saved = save_project(_project(tmp_path), tmp_path / "work.dpgui")
    document = json.loads((tmp_path / "work.dpgui").read_text())
    assert all("secure" not in r for r in document["releases"])
    for value in (True, "yes", None):
        for r in document["releases"]:
            r["secure"] = value
        loaded = project_from_json(json.dumps(document))
        assert loaded == saved
        assert all(not record.to_release().secure for record in loaded.releases)


def test_a_file_from_before_locked_levels_has_none_locked(tmp_path):
    document = json.loads(project_to_json(_project(tmp_path)))
    del document["locked_levels"]
    assert project_from_json(json.dumps(document)).locked_levels == ()


def test_delta_and_the_noise_choice_round_trip_and_old_files_open_as_pure_auto(tmp_path):
    privacy = PrivacySpec(0.7, "change", delta=1e-9)
    shape = TreeShape(K, (4, 4, 5), True)
    gaussian = Plan(shape, privacy, equal_budgets(shape, privacy, "gaussian"), "gls", "gaussian")
    project = replace(_project(tmp_path), plan=gaussian.to_json(), delta=1e-9, noise="gaussian", locked_levels=(1,))
    save_project(project, tmp_path / "work.dpgui")
    loaded = load_project(tmp_path / "work.dpgui")
    assert loaded == project and (loaded.delta, loaded.noise) == (1e-9, "gaussian")
    assert loaded.plan_object() == gaussian and loaded.plan_object().level_rhos == gaussian.level_rhos
    document = json.loads((tmp_path / "work.dpgui").read_text())
    assert (document["delta"], document["noise"]) == (1e-9, "gaussian")
    del document["delta"], document["noise"]
    old = project_from_json(json.dumps(document))
    assert (old.delta, old.noise) == (0.0, "auto")


def test_half_finished_workspace_round_trips(tmp_path):
    project = Project(data_path=str(tmp_path / "x.csv"))  # only a file opened so far
    assert project_from_json(project_to_json(project)) == project
    text = project_to_json(project)
    assert json.loads(text)["lower"] is None and json.loads(text)["plan"] is None
    locks_without_plan = {**json.loads(text), "locked_levels": [1]}
    assert "'locked_levels' must be an empty list (the project has no plan)" in _error(json.dumps(locks_without_plan))


def _numbers(value, out: list) -> list:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return out
    if isinstance(value, (int, float)):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            _numbers(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _numbers(v, out)
    return out


def _keys(value, out: set) -> set:
    if isinstance(value, dict):
        out.update(value)
        for v in value.values():
            _keys(v, out)
    elif isinstance(value, list):
        for v in value:
            _keys(v, out)
    return out


def test_no_confidential_value_is_saved(tmp_path):
    """Every number in the file is a public value (bounds, K, plan, released noisy counts), and no
    true count, true cumulative count or true node count appears unless noise happened to leave a
    released node count equal to it."""
    releases = _releases()
    project = _project(tmp_path, releases)
    document = json.loads(project_to_json(project))

    public: set = {project.lower, project.upper, project.bins, PROJECT_VERSION}
    public.update(_numbers(project.plan, []))
    released_values: set = set()
    for record in project.releases:
        public.update(_numbers(record.plan, []))
        public.update((record.lower, record.upper))
        for level in record.levels:
            if level is not None:
                released_values.update(level)
    public |= released_values
    found = _numbers(document, [])
    assert found, "the scan found no numbers"
    assert set(found) <= public, sorted(set(found) - public)[:10]

    true_values = set(TRUE_COUNTS.tolist()) | set(np.cumsum(TRUE_COUNTS).tolist())
    for plan in (r.plan for r in releases):
        for level, counts in enumerate(plan.shape.level_counts(TRUE_COUNTS)):
            if level == 0 and plan.privacy.root_public:
                continue  # N is public under the change model (it is released exactly)
            true_values.update(counts.tolist())
    leaked = (set(found) & true_values) - released_values
    assert not leaked, leaked
    # The check has teeth: most true counts are not among the released values.
    assert len(true_values - released_values) > len(true_values) // 2

    keys = {k.lower() for k in _keys(document, set())}
    for word in ("hist", "count", "true", "cumulative", "estimate", "cdf", "hash", "fingerprint"):
        assert not any(word in k for k in keys), (word, keys)


@pytest.fixture
def good(tmp_path) -> dict:
    return json.loads(project_to_json(_project(tmp_path)))


def _error(text: str) -> str:
    with pytest.raises(DataError) as info:
        project_from_json(text, source="'work.dpgui'")
    message = str(info.value)
    assert "\n" not in message and "'work.dpgui'" in message
    return message


def test_not_json_or_not_a_project():
    assert "not valid JSON" in _error("{ this is not json")
    assert "not a dpgui project" in _error("{ this is not json")
    assert "not a dpgui project" in _error('{"format": "something-else", "version": 1}')
    assert "not a dpgui project" in _error("[1, 2, 3]")
    assert "not a dpgui project" in _error("")


def test_newer_version_is_refused(good):
    good["version"] = PROJECT_VERSION + 1
    message = _error(json.dumps(good))
    assert "newer dpgui" in message and "update dpgui" in message


@pytest.mark.parametrize("field", ["data_path", "column", "lower", "upper", "bins", "missing", "plan",
                                   "consistency", "releases", "version"])
def test_missing_field(good, field):
    del good[field]
    message = _error(json.dumps(good))
    assert f"no '{field}' field" in message


def test_missing_field_in_a_release(good):
    del good["releases"][1]["levels"]
    message = _error(json.dumps(good))
    assert "release 2" in message and "'levels'" in message


@pytest.mark.parametrize("field, value, words", [
    ("bins", "64", "'bins' must be a whole number"),
    ("bins", True, "'bins' must be a whole number"),
    ("bins", 1, "'bins' must be a whole number ≥ 2"),
    ("lower", "ten", "'lower' must be a number"),
    ("lower", 100.0, "not below the upper bound"),
    ("missing", "skip", "'missing' must be 'drop' or 'error'"),
    ("consistency", "l3", "'consistency' must be"),
    ("column", 7, "'column' must be text"),
    ("data_path", "", "'data_path' must be the path"),
    ("releases", {}, "'releases' must be a list"),
    ("plan", [1], "'plan' must be a plan"),
    ("version", "1", "'version' must be a whole number"),
    ("objective", "median", "'objective' must be"),
    ("saved_utc", "yesterday", "'saved_utc' is not a date"),
    ("locked_levels", [3], "'locked_levels' must be a list of distinct tree levels from 0 to 2"),
    ("locked_levels", [1, 1], "'locked_levels' must be a list of distinct tree levels"),
    ("locked_levels", [True], "'locked_levels' must be a list of distinct tree levels"),
    ("locked_levels", "1", "'locked_levels' must be a list of distinct tree levels"),
    ("delta", -1e-9, "'delta' must be a number with 0 ≤ δ < 1"),
    ("delta", 1, "'delta' must be a number with 0 ≤ δ < 1"),
    ("delta", "1e-9", "'delta' must be a number with 0 ≤ δ < 1"),
    ("delta", None, "'delta' must be a number with 0 ≤ δ < 1"),
    ("noise", "cauchy", "'noise' must be 'auto' or 'laplace' or 'gaussian'"),
])
def test_wrong_types(good, field, value, words):
    good[field] = value
    assert words in _error(json.dumps(good))


def test_wrong_release_contents(good):
    bad = json.loads(json.dumps(good))
    bad["releases"][0]["levels"][2] = bad["releases"][0]["levels"][2][:-1]
    assert "levels[2]" in _error(json.dumps(bad)) and "whole numbers" in _error(json.dumps(bad))
    bad = json.loads(json.dumps(good))
    bad["releases"][0]["levels"][3][0] = 1.5
    assert "levels[3]" in _error(json.dumps(bad))
    bad = json.loads(json.dumps(good))
    bad["releases"][0]["levels"].pop()
    assert "a list of 4 levels" in _error(json.dumps(bad))
    bad = json.loads(json.dumps(good))
    bad["releases"][0]["levels"][1] = None
    assert "level 1 of the release is missing" in _error(json.dumps(bad))
    bad = json.loads(json.dumps(good))
    bad["releases"][0]["plan"]["level_epsilons"] = [0.1, 0.1, 0.1]
    assert "the plan is not valid" in _error(json.dumps(bad))
    bad = json.loads(json.dumps(good))
    del bad["releases"][0]["plan"]["branching"]
    assert "the plan is not valid (no 'branching' field)" in _error(json.dumps(bad))
    bad = json.loads(json.dumps(good))
    bad["releases"][0]["created_utc"] = "2026-01-02T03:04:05"  # no time zone
    assert "has no time zone" in _error(json.dumps(bad))


def test_nan_is_refused(good):
    text = json.dumps(good).replace('"lower": 10.0', '"lower": NaN')
    assert "not valid JSON" in _error(text)


def test_files(tmp_path):
    project = _project(tmp_path)
    with pytest.raises(DataError, match="does not exist"):
        save_project(project, tmp_path / "no-such-folder" / "work.dpgui")
    with pytest.raises(DataError, match="is a folder"):
        save_project(project, tmp_path)
    with pytest.raises(DataError, match="does not exist"):
        load_project(tmp_path / "nothing.dpgui")
    (tmp_path / "binary.dpgui").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(DataError, match="not a dpgui project"):
        load_project(tmp_path / "binary.dpgui")
    # Saving again replaces the file in one step.
    save_project(project, tmp_path / "work.dpgui")
    save_project(replace(project, column="height"), tmp_path / "work.dpgui")
    assert load_project(tmp_path / "work.dpgui").column == "height"


def test_missing_data_file_is_reported_clearly(tmp_path):
    project = _project(tmp_path)
    assert project_data_file(project) == tmp_path / "people.csv"
    moved = replace(project, data_path=str(tmp_path / "moved" / "people.csv"))
    with pytest.raises(MissingDataFile) as info:
        project_data_file(moved)
    assert info.value.project is moved
    assert str(tmp_path / "moved" / "people.csv") in str(info.value)
    assert "not found" in str(info.value) and "locate it" in str(info.value)


def test_the_planners_noise_choice_comes_back_with_the_plan(tmp_path):
    from dpgui.core.planner import auto_plan

    plan = auto_plan(K, PrivacySpec(0.5, delta=1e-6), noise="auto")
    assert plan.noise_choice is not None and plan.noise_choice.gaussian is not None
    project = replace(_project(tmp_path), plan=plan.to_json(), delta=1e-6, locked_levels=())
    loaded = project_from_json(project_to_json(project)).plan_object()
    assert loaded == plan and loaded.noise_choice == plan.noise_choice


def test_a_plan_made_for_a_region_keeps_it_in_the_project_and_older_plans_have_none(tmp_path):
    from dpgui.core.focus import focus_offer

    offer = focus_offer(K, PrivacySpec(1.0), (1, 3))
    assert offer.worth_it
    project = replace(_project(tmp_path), plan=offer.focused_plan.to_json(), locked_levels=())
    save_project(project, tmp_path / "work.dpgui")
    loaded = load_project(tmp_path / "work.dpgui")
    assert loaded == project and loaded.plan_object() == offer.focused_plan
    assert loaded.plan_object().focus == (1, 3)
    document = json.loads((tmp_path / "work.dpgui").read_text())
    del document["plan"]["focus"]
    assert project_from_json(json.dumps(document)).plan_object().focus is None


def test_a_release_from_before_the_padding_zeros_reopens_as_published(tmp_path):
    """A release saved without "padding" (made before GLS used the padding leaves as known zeros) is recomputed
    with the estimator of then, shows the numbers it was published with, and keeps that when saved again;
    releases made now are saved with "padding": "known_zeros"."""
    from dpgui.core.mechanism import release_from_levels

    plan = Plan(TreeShape(K - 3, (4, 4, 4)), PrivacySpec(1.0, "change"), equal_budgets(TreeShape(K - 3, (4, 4, 4)),
                                                                                     PrivacySpec(1.0, "change")))
    made = release(TRUE_COUNTS[:K - 3], plan, SeededRandom(9), 10.0, 74.0, "none")
    record = ProjectRelease.from_release(made, "rel-new", datetime(2026, 1, 2, tzinfo=timezone.utc), "age", "drop")
    project = replace(_project(tmp_path), releases=(record,), bins=K - 3)
    document = json.loads(project_to_json(project))
    assert document["releases"][0]["padding"] == "known_zeros"
    assert project_from_json(json.dumps(document)).releases[0].to_release().estimate.tolist() == made.estimate.tolist()
    del document["releases"][0]["padding"]  # a file written before
    old = project_from_json(json.dumps(document)).releases[0]
    assert not old.padding_known
    reopened = old.to_release()
    published = release_from_levels(plan, list(made.levels), 10.0, 74.0, "none", False, padding_known=False)
    assert reopened.estimate.tolist() == published.estimate.tolist()
    assert reopened.estimate.tolist() != made.estimate.tolist()  # the two estimators differ on this padded tree
    again = ProjectRelease.from_release(reopened, "rel-old", datetime(2026, 1, 2, tzinfo=timezone.utc), "age", "drop")
    assert "padding" not in json.loads(project_to_json(replace(project, releases=(again,))))["releases"][0]
    document["releases"][0]["padding"] = "something else"
    with pytest.raises(DataError, match="padding"):
        project_from_json(json.dumps(document))


@pytest.mark.parametrize("size", [0, 1, 6, 7, 8, 13, 14, 15, 100])
def test_levels_are_written_in_blocks_as_the_same_json_text(monkeypatch, size):
    """A long level is encoded in blocks (the GIL is let go between them); the text is json.dumps's."""
    import dpgui.report.project_file as project_file

    monkeypatch.setattr(project_file, "_JSON_BLOCK", 7)
    values = tuple(np.random.default_rng(size).integers(-10**12, 10**12, size).tolist())
    assert project_file._compact_numbers(values) == json.dumps(values, separators=(",", ":"))
