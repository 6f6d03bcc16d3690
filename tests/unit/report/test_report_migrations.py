"""Files written by earlier versions of dpgui (frozen under tests/unit/report/golden/, made by the code of the
commit each folder names: see its README) are read as today's model by dpgui.report.migrations; a file of a
newer version is refused; today's files pass the migrations unchanged.

The old releases' published numbers (``projects/*.published.json``) were computed by the old code when it
made the file: a reopened release must show exactly those, an independent check of the estimator the
upgraded model selects."""

from __future__ import annotations

import copy
import csv
import json
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from dpgui.core.mechanism import release
from dpgui.core.missing import MISSING_RULE_TEXT
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.tree import TreeShape
from dpgui.errors import DataError, DpguiError, ParameterError
from dpgui.report.bundle import BundlePaths, manifest_bytes, schema_problems, verify_bundle
from dpgui.report.cdf.bundle import ReleaseInfo, build_manifest, plan_from_manifest
from dpgui.report.cdf.csv_export import CDF_COLUMNS, CDF_COLUMNS_V1
from dpgui.report.migrations import (
    DROPPED_BEFORE_N, MANIFEST_VERSION, PROJECT_VERSION, upgrade_cdf_table, upgrade_manifest, upgrade_project,
)
from dpgui.report.project_file import ProjectRelease, load_project, project_from_json, project_to_json, save_project
from dpgui.report.cdf.publish import check_missing_rule
from dpgui.report.cdf.release_files import read_release
from dpgui.report.signing import PublicKey, generate_key
from dpgui.report.project_sections import ProjectSection
from dpgui.vocabulary import StatisticKind

GOLDEN = Path(__file__).with_name("golden")
KEY = PublicKey.from_text((GOLDEN / "golden.pub").read_text(encoding="utf-8"))

#: Every frozen bundle: (folder/name, schema version, kind).
BUNDLES = [
    ("5910ebe/cdf-v1-missing-word", 1, "cdf"),
    ("5910ebe/cdf-v1-missing-error", 1, "cdf"),
    ("feee1e6-parent/cdf-v1", 1, "cdf"),
    ("da1db88/cdf-gaussian", 2, "cdf"),
    ("f1ec720-parent/hierarchy", 3, "hierarchy"),
    ("1e03105-parent/cdf-laplace", 4, "cdf"),
    ("1e03105-parent/hierarchy", 4, "hierarchy"),
]
CDF_BUNDLES = [name for name, _version, kind in BUNDLES if kind == "cdf"]


def _manifest_path(name: str) -> Path:
    return GOLDEN / "bundles" / f"{name}.manifest.json"


def _manifest(name: str) -> dict:
    return json.loads(_manifest_path(name).read_text(encoding="utf-8"))


def _csv_rows(path: Path) -> tuple[tuple[str, ...], np.ndarray]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    return tuple(rows[0]), np.asarray([[float(x) for x in row] for row in rows[1:] if row])


# ------------------------------------------------------------------------------------------------ bundles

@pytest.mark.parametrize(("name", "version", "kind"), BUNDLES)
def test_each_frozen_bundle_still_verifies_as_it_was_signed(name, version, kind):
    checked = verify_bundle(_manifest_path(name), KEY)
    assert checked.ok, checked.failure
    assert f"the manifest follows schema version {version}" in [text for text, _ok in checked.checks]
    assert checked.manifest == _manifest(name)  # the verifier shows what was signed, not an upgraded copy
    assert checked.manifest["kind"] == kind


@pytest.mark.parametrize(("name", "version", "kind"), BUNDLES)
def test_each_frozen_manifest_upgrades_to_todays_shape(name, version, kind):
    original = _manifest(name)
    kept = copy.deepcopy(original)
    today = upgrade_manifest(original, name)
    assert original == kept  # a pure function: the signed document is not changed
    assert today["schema_version"] == MANIFEST_VERSION and original["schema_version"] == version
    assert {k: v for k, v in today.items() if k != "schema_version"}.keys() >= set(original) - {"schema_version"}
    if kind == "cdf":
        missing = today["missing_values"]
        assert set(missing) >= {"rule", "description", "released_count", "std_error"}
        assert today["noise"] in ("discrete_laplace", "discrete_gaussian")
        assert {"delta", "rho"} <= set(today["privacy"]) and "missing_leaf" in today["tree"]
    else:
        assert {k: v for k, v in today.items() if k != "schema_version"} == \
            {k: v for k, v in original.items() if k != "schema_version"}  # versions 3 and 4 are today's shape


def test_a_version_1_manifest_states_the_policy_it_applied():
    word, error = (upgrade_manifest(_manifest(f"5910ebe/cdf-v1-missing-{n}"), n)["missing_values"]
                   for n in ("word", "error"))
    assert _manifest("5910ebe/cdf-v1-missing-word")["missing_values"] == "drop"  # as the old dpgui wrote it
    assert word == {"rule": "drop", "description": DROPPED_BEFORE_N, "released_count": None, "std_error": None}
    assert error["rule"] == "error" and error["description"] == MISSING_RULE_TEXT["error"]
    assert error["released_count"] is None


@pytest.mark.parametrize("name", CDF_BUNDLES)
def test_each_frozen_cdf_bundle_is_read_back_as_a_release(name):
    manifest = _manifest(name)
    found, facts = read_release(_manifest_path(name), None)
    plan = found.plan
    assert plan == plan_from_manifest(manifest)
    assert plan.shape.bins == manifest["bins"] == 8 and list(plan.shape.branching) == manifest["tree"]["branching"]
    assert plan.privacy.epsilon == manifest["privacy"]["epsilon"]
    assert plan.privacy.delta == (manifest["privacy"].get("delta") or 0.0)
    assert plan.noise == {"discrete_laplace": "laplace", "discrete_gaussian": "gaussian"}[manifest.get("noise",
                                                                                                   "discrete_laplace")]
    header, table = _csv_rows(GOLDEN / "bundles" / Path(name).parent / manifest["files"]["csv"]["name"])
    assert found.cumulative.tolist() == table[:, header.index("cumulative_count")].tolist()
    assert found.std_error.tolist() == table[:, header.index("std_error")].tolist()
    assert facts["delta"] == plan.privacy.delta and facts["noise"] == plan.noise  # the same keys at δ = 0
    if header == CDF_COLUMNS_V1:
        assert found.estimate.tolist() == found.cumulative.tolist() and "no unbiased_estimate column" in facts["note"]
    else:
        assert found.estimate.tolist() == table[:, header.index("unbiased_estimate")].tolist() and "note" not in facts
    assert found.total == manifest["total_records"]["released_estimate"]


def test_a_hierarchy_manifest_has_no_quantiles():
    with pytest.raises(ParameterError, match="hierarchy"):
        read_release(_manifest_path("f1ec720-parent/hierarchy"), None)


@pytest.mark.parametrize("folder", ["5910ebe", "feee1e6-parent"])
def test_a_csv_and_what_release_json_printed_are_read_back(folder):
    """``dpgui release --out CSV --json`` of the old dpgui: the printed JSON is the record ``--plan`` reads."""
    path = GOLDEN / "records" / folder / "cdf-out.csv"
    printed = json.loads((GOLDEN / "records" / folder / "cdf-out.json").read_text(encoding="utf-8"))
    found, facts = read_release(path, path.with_suffix(".json"))
    header, table = _csv_rows(path)
    assert found.cumulative.tolist() == table[:, header.index("cumulative_count")].tolist()
    assert found.total == printed["n_released"] and found.plan.privacy.epsilon == printed["epsilon"]
    assert ("note" in facts) == (header == CDF_COLUMNS_V1)


def test_an_old_csv_table_gets_todays_columns():
    header, table = _csv_rows(GOLDEN / "bundles" / "5910ebe" / "cdf-v1-missing-word.csv")
    assert header == CDF_COLUMNS_V1
    upgraded, note = upgrade_cdf_table(header, table)
    assert upgraded.shape == (8, len(CDF_COLUMNS)) and note is not None
    np.testing.assert_array_equal(upgraded[:, :7], table)
    np.testing.assert_array_equal(upgraded[:, CDF_COLUMNS.index("unbiased_estimate")],
                                  table[:, CDF_COLUMNS.index("cumulative_count")])
    same, none = upgrade_cdf_table(CDF_COLUMNS, upgraded)
    assert same is upgraded and none is None


# ----------------------------------------------------------------------------------------------- projects

@pytest.mark.parametrize("day", ["2026-11-21", "2026-11-25"])
def test_each_frozen_project_reopens_its_release_as_published(day):
    project = load_project(GOLDEN / "projects" / f"project-{day}.dpgui")
    published = json.loads((GOLDEN / "projects" / f"project-{day}.published.json").read_text(encoding="utf-8"))
    (stored,) = project.releases
    assert not stored.padding_known  # made before GLS took the padding leaves as known zeros
    shown = stored.to_release()
    assert shown.cumulative.tolist() == published["cumulative"] and shown.total == published["total"]
    np.testing.assert_allclose(shown.estimate, published["estimate"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(shown.std_error, published["std_error"], rtol=1e-12, atol=1e-12)
    assert not shown.secure  # only the ledger can say so


def test_the_first_project_format_is_upgraded():
    text = (GOLDEN / "projects" / "project-2026-11-21.dpgui").read_text(encoding="utf-8")
    assert '"secure"' in text and '"locked_levels"' not in text and '"delta"' not in text
    project = project_from_json(text)
    assert project.locked_levels == () and project.delta == 0.0 and project.noise == "auto"
    assert project.mode is StatisticKind.CDF and project.section(StatisticKind.HIERARCHY) == ProjectSection()
    assert project.missing == "drop" and project.releases[0].missing == "drop"
    # its plan was made under change before missing values had a leaf of their own: no new release with it
    with pytest.raises(ParameterError, match="make the plan again"):
        check_missing_rule(project.releases[0].plan_object())
    written = project_to_json(project)
    assert '"secure"' not in written and '"padding"' not in written  # still read as published (no mark)
    assert project_from_json(written) == project


def test_the_project_of_2026_11_25_keeps_its_hierarchy_and_choices():
    project = load_project(GOLDEN / "projects" / "project-2026-11-25.dpgui")
    assert project.mode is StatisticKind.HIERARCHY and project.locked_levels == (2,) and project.delta == 1e-7
    assert project.noise == "gaussian" and project.releases[0].source == {
        "kind": "file", "location": "/data/ages.csv", "format": "csv", "engine": "this computer"}
    settings = project.section(StatisticKind.HIERARCHY).settings
    assert settings is not None and settings.levels == ("region", "district") and settings.consistency == "topdown"
    assert settings.categories_public is False and settings.records_estimate is None
    (restored,) = project.section(StatisticKind.HIERARCHY).releases
    hierarchy_release, info = restored.to_release()
    assert [level.tolist() for level in hierarchy_release.counts] == [list(c) for c in restored.counts]
    assert hierarchy_release.counts[0][0] == sum(hierarchy_release.counts[1]) == sum(hierarchy_release.counts[2])
    assert info.dataset == "schools" and info.prior_name == "prior.csv" and not info.secure


@pytest.mark.parametrize("day", ["2026-11-21", "2026-11-25"])
def test_an_upgraded_project_saves_and_reopens_unchanged(tmp_path, day):
    project = load_project(GOLDEN / "projects" / f"project-{day}.dpgui")
    saved = save_project(project, tmp_path / "again.dpgui")
    again = load_project(tmp_path / "again.dpgui")
    assert again == saved == project
    assert (tmp_path / "again.dpgui").read_text(encoding="utf-8") == project_to_json(saved)


# ------------------------------------------------------------------------------------- today's files, newer files

def _todays_project_text() -> str:
    """A project as this dpgui writes it: the choices and hierarchy release of the frozen 2026-11-25 file,
    and a CDF release made now (its padding known zeros: written with its mark)."""
    plan = auto_plan(16, PrivacySpec(1.0), TreeShape(16, (3, 6), missing_leaf=True))
    made = release(np.arange(1, 17, dtype=np.int64), plan, SeededRandom(3), 0.0, 16.0, "l2", missing=0)
    project = load_project(GOLDEN / "projects" / "project-2026-11-25.dpgui")
    fresh = ProjectRelease.from_release(made, "3c" * 16, "2026-11-28T04:00:00+00:00", "age", "bucket")
    return project_to_json(replace(project, plan=plan.to_json(), locked_levels=(), releases=(fresh,)))


def test_todays_project_passes_the_migrations_unchanged():
    text = _todays_project_text()
    document = json.loads(text)
    assert document["releases"][0]["padding"] == "known_zeros" and document["mode"] == "hierarchy"
    assert upgrade_project(document, PROJECT_VERSION, "today") == document
    assert project_to_json(project_from_json(text)) == text


def test_todays_manifest_passes_the_migrations_unchanged():
    plan = auto_plan(8, PrivacySpec(1.0, "change", 1, 0.0, 3.0))  # imputed: a version 5 manifest
    made = release(np.arange(8, dtype=np.int64), plan, SeededRandom(4), 0.0, 8.0, "l2", missing=0)
    info = ReleaseInfo("d", "x", "5d" * 16, datetime(2026, 11, 28, tzinfo=timezone.utc), "impute")
    manifest = build_manifest(made, info, "n", b"csv", b"pdf", "ABCDEF0123456789")
    assert schema_problems(manifest) == [] and manifest["schema_version"] == MANIFEST_VERSION
    assert upgrade_manifest(manifest, "n.manifest.json") == manifest
    assert plan_from_manifest(manifest) == plan


def test_a_project_of_a_newer_version_is_refused():
    document = json.loads(_todays_project_text())
    document["version"] = PROJECT_VERSION + 1
    with pytest.raises(DataError, match="saved by a newer dpgui") as info:
        project_from_json(json.dumps(document), "'next.dpgui'")
    assert "'next.dpgui'" in info.value.problem and info.value.fix == "update dpgui to open it"


def test_a_manifest_of_a_newer_version_is_refused(tmp_path):
    newer = {**_manifest("1e03105-parent/cdf-laplace"), "schema_version": MANIFEST_VERSION + 1}
    with pytest.raises(DataError, match="written by a newer dpgui") as info:
        upgrade_manifest(newer, "next.manifest.json")
    assert "next.manifest.json" in info.value.problem and info.value.fix == "update dpgui to read it"
    with pytest.raises(DpguiError, match="newer dpgui"):
        plan_from_manifest(newer)
    key = generate_key()
    paths = BundlePaths.of(tmp_path, "next")
    body = manifest_bytes(newer)
    paths.manifest.write_bytes(body)
    paths.signature.write_text(key.sign(body, "dpgui release next"))
    checked = verify_bundle(paths.manifest, key.public_key)
    assert not checked.ok and checked.failure is not None
    assert checked.failure.startswith("the manifest was written by a newer dpgui (schema version 6")


@pytest.mark.parametrize("day", ["2026-11-21", "2026-11-25"])
def test_the_project_steps_are_pure_and_an_upgraded_document_passes_them_unchanged(day):
    document = json.loads((GOLDEN / "projects" / f"project-{day}.dpgui").read_text(encoding="utf-8"))
    kept = copy.deepcopy(document)
    upgraded = upgrade_project(document, 1, day)
    assert document == kept and upgraded != document
    assert upgrade_project(upgraded, PROJECT_VERSION, day) == upgraded
    assert all(r["padding"] == "unknown" and "secure" not in r for r in upgraded["releases"])
