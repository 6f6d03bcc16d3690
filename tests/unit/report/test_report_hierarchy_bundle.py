"""Hierarchy releases on the report side: the CSV (one row per node), the manifest (kind
"hierarchy", schema version 3; CDF manifests still verify: tests/unit/report/test_report_manifest.py),
the ledger's record, signing only what the ledger confirms, verification and the PDF."""

from __future__ import annotations

import copy
import csv
import io
import json
import re
from dataclasses import replace
from datetime import datetime, timezone

import numpy as np
import pytest

from dpgui.core.hierarchy import Hierarchy, plan_hierarchy, release_hierarchy
from dpgui.core.noise import SecureRandom, SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.errors import DataError, ParameterError
from dpgui.report.bundle import schema_problems, verify_bundle
from dpgui.report.hierarchy.bundle import (
    HIERARCHY_CSV_COLUMNS, NODE_LIST_FROM_DATA, NODE_LIST_FROM_PRIOR, HierarchyReleaseInfo, build_hierarchy_manifest,
    hierarchy_csv_text, hierarchy_sha256,
)
from dpgui.report.hierarchy.publish import (
    authenticate_hierarchy_release, sign_hierarchy_release, spend_and_release_hierarchy,
)
from dpgui.report.keystore import create_key, load_public_key, load_secret_key
from dpgui.report.ledger import Ledger, NoCapSet

PASSPHRASE = "a long test passphrase"
PATHS = [("OR", "OR/Portland"), ("OR", "OR/Salem"), ("WA", "WA/Seattle"), ("WA", "WA/Spokane"), ("WA", "WA/Tacoma")]
LEAF_COUNTS = np.array([120, 45, 300, 0, 33], dtype=np.int64)


@pytest.fixture
def hierarchy() -> Hierarchy:
    return Hierarchy.from_paths(("state", "city"), PATHS)


def _plan(hierarchy: Hierarchy, epsilon: float = 1.0, delta: float = 0.0, noise: str = "laplace"):
    return plan_hierarchy(hierarchy.level_sizes, PrivacySpec(epsilon, "change", 1, delta), noise=noise,
                          consistency="topdown")


@pytest.fixture
def key(tmp_path):
    files = create_key("officer", PASSPHRASE, tmp_path / "keys")
    return load_secret_key(files.secret_path, PASSPHRASE), load_public_key(files.public_path)


def _in_leaf_order(hierarchy: Hierarchy) -> np.ndarray:
    leaves = np.zeros(hierarchy.level_sizes[-1], dtype=np.int64)
    leaves[hierarchy.leaf_index(PATHS)] = LEAF_COUNTS
    return leaves


def _released(ledger: Ledger, hierarchy: Hierarchy, plan, source=None, **kw):
    return spend_and_release_hierarchy(ledger, "cities", hierarchy, _in_leaf_order(hierarchy), plan,
                                       source or SecureRandom(), node_list_source=kw.pop("node_list_source",
                                                                                         NODE_LIST_FROM_DATA), **kw)


def _pdf(result, info) -> bytes:
    from dpgui.pdf.hierarchy import render_hierarchy_pdf

    return render_hierarchy_pdf(result, info, _projection(result), "ABCDEF0123456789")


def _projection(result) -> dict:
    from dpgui.core.hierarchy_errors import plan_errors
    from dpgui.report.hierarchy.bundle import errors_json

    return errors_json(plan_errors(result.plan, result.hierarchy))


# ---------------------------------------------------------------- CSV
def test_the_csv_has_one_row_per_node_root_first_with_its_path_and_interval(hierarchy):
    plan = _plan(hierarchy)
    result = release_hierarchy(hierarchy, _in_leaf_order(hierarchy), plan, SeededRandom(7))
    rows = list(csv.reader(io.StringIO(hierarchy_csv_text(result))))
    assert tuple(rows[0]) == HIERARCHY_CSV_COLUMNS
    body = rows[1:]
    assert len(body) == hierarchy.n_nodes == 1 + 2 + 5
    assert body[0] == ["0", "(all records)", "", str(int(LEAF_COUNTS.sum()))] + [str(int(LEAF_COUNTS.sum()))] * 2
    assert [r[1] for r in body[1:3]] == ["state", "state"] and [r[2] for r in body[1:3]] == ["OR", "WA"]
    assert [r[2] for r in body[3:]] == [f"{s} > {c}" for s, c in PATHS]  # labels kept as they are ('/' inside)
    for level, _name, path, count, low, high in body:
        ell = int(level)
        index = [hierarchy.path(ell, i) for i in range(hierarchy.level_sizes[ell])].index(
            tuple(path.split(" > ")) if path else ())
        assert int(count) == result.counts[ell][index]
        assert (int(low), int(high)) == (result.lower[ell][index], result.upper[ell][index])
        assert int(low) <= int(count) <= int(high)


# ---------------------------------------------------------------- ledger
def test_the_spend_is_recorded_before_the_noise_with_the_plans_charge(hierarchy, monkeypatch):
    import dpgui.core.hierarchy as core

    plan = _plan(hierarchy, 0.8)
    with Ledger() as ledger:
        ledger.set_cap("cities", 5)
        seen = []

        def release_after_the_spend(*args, **kwargs):
            seen.append(len(ledger.releases("cities")))  # the spend is already on disk when the noise is drawn
            return real(*args, **kwargs)

        real = core.release_hierarchy
        monkeypatch.setattr(core, "release_hierarchy", release_after_the_spend)
        result, info = _released(ledger, hierarchy, plan)
        entry = ledger.release(info.release_id)
        assert seen == [1]
        assert entry is not None and entry.dataset_id == "cities"
        # independently: pure ε-DP Laplace is charged (ε, 0, ε²/2) (Bun & Steinke 2016, Prop. 1.4)
        assert (entry.epsilon, entry.delta, entry.rho) == (0.8, 0.0, pytest.approx(0.32))
        assert entry.mechanism == "discrete_laplace_hierarchy"
        assert entry.description["levels"] == ["state", "city"] and entry.description["secure_noise"] is True
        output = ledger.release_output(info.release_id)
        assert output is not None and output.secure
        assert output.params["node_list_sha256"] == hierarchy_sha256(hierarchy)
        assert info.secure and not info.counts_from_data and info.node_list_source == NODE_LIST_FROM_DATA
        assert int(result.counts[0][0]) == int(LEAF_COUNTS.sum())


def test_no_cap_refuses_before_any_noise_and_records_nothing(hierarchy, monkeypatch):
    import dpgui.core.hierarchy as core

    def never(*args, **kwargs):
        raise AssertionError("noise was drawn")

    monkeypatch.setattr(core, "release_hierarchy", never)
    with Ledger() as ledger:
        with pytest.raises(NoCapSet):
            _released(ledger, hierarchy, _plan(hierarchy))
        assert ledger.releases() == []


def test_a_plan_for_another_tree_is_refused_before_the_spend(hierarchy):
    other = Hierarchy.from_paths(("state", "city"), PATHS[:3])
    with Ledger() as ledger:
        ledger.set_cap("cities", 5)
        with pytest.raises(ParameterError, match="level sizes"):
            _released(ledger, hierarchy, _plan(other))
        assert ledger.releases() == []


# ---------------------------------------------------------------- signing and verifying
def test_a_signed_bundle_verifies_and_any_changed_file_fails(hierarchy, key, tmp_path):
    secret, public = key
    with Ledger() as ledger:
        ledger.set_cap("cities", 5, 1e-6)
        plan = _plan(hierarchy, 1.0, 1e-7, "gaussian")
        result, info = _released(ledger, hierarchy, plan, node_list_source=NODE_LIST_FROM_PRIOR,
                                 prior_name="cities.csv", prior_sha256="a" * 64)
        (tmp_path / "out").mkdir()
        paths = sign_hierarchy_release(ledger, tmp_path / "out", "cities", result, info, _pdf(result, info), secret,
                                       _projection(result))
        assert ledger.release(info.release_id).bundle == str(paths.manifest.resolve())
    checked = verify_bundle(paths.manifest, public)
    assert checked.ok, checked.failure
    manifest = checked.manifest
    assert manifest["kind"] == "hierarchy" and manifest["noise"] == "gaussian"
    assert manifest["privacy"]["charged"] == {"epsilon": 1.0, "delta": 1e-7, "rho": plan.ledger_charge()[2]}
    assert manifest["ledger"]["mechanism"] == "discrete_gaussian_hierarchy"
    assert manifest["prior"]["file"] == {"name": "cities.csv", "sha256": "a" * 64}
    assert manifest["hierarchy"]["level_sizes"] == [1, 2, 5] and manifest["total_records"]["value"] == 498
    assert [row["level"] for row in manifest["projection"]["levels"]] == [0, 1, 2]
    assert len(re.findall(rb"/Type\s*/Page[^s]", paths.pdf.read_bytes())) == 3  # two of text, one table of 8 counts
    original = paths.csv.read_bytes()
    paths.csv.write_bytes(original.replace(b"OR > OR/Salem", b"OR > OR/Salam"))
    assert not verify_bundle(paths.manifest, public).ok
    assert "CSV" in verify_bundle(paths.manifest, public).failure
    paths.csv.write_bytes(original)
    body = paths.manifest.read_bytes()
    paths.manifest.write_bytes(body.replace(b'"cities"', b'"towns"', 1))
    assert "signature" in verify_bundle(paths.manifest, public).failure


def test_only_a_release_the_ledger_confirms_is_signed(hierarchy, key, tmp_path):
    secret, _ = key
    with Ledger() as ledger:
        ledger.set_cap("cities", 5)
        plan = _plan(hierarchy)
        seeded, seeded_info = _released(ledger, hierarchy, plan, SeededRandom(1))
        with pytest.raises(DataError, match="test noise"):
            authenticate_hierarchy_release(ledger, seeded, seeded_info)
        result, info = _released(ledger, hierarchy, plan)
        assert authenticate_hierarchy_release(ledger, result, replace(info, secure=False)).secure  # the ledger's flag
        edited = replace(result, counts=(result.counts[0], result.counts[1] + 1, result.counts[2]))
        with pytest.raises(DataError, match="released counts"):
            authenticate_hierarchy_release(ledger, edited, info)
        with pytest.raises(DataError, match="node_list_source"):
            authenticate_hierarchy_release(ledger, result, replace(info, node_list_source=NODE_LIST_FROM_PRIOR))
        with pytest.raises(DataError, match="not in the budget ledger"):
            authenticate_hierarchy_release(ledger, result, replace(info, release_id="f" * 32))
        (tmp_path / "out").mkdir()
        with pytest.raises(DataError, match="test noise"):
            sign_hierarchy_release(ledger, tmp_path / "out", "seeded", seeded, seeded_info, b"%PDF", secret)
        assert list((tmp_path / "out").iterdir()) == []


# ---------------------------------------------------------------- the schema
def test_the_schema_takes_hierarchy_manifests_and_refuses_broken_ones(hierarchy):
    result = release_hierarchy(hierarchy, _in_leaf_order(hierarchy), _plan(hierarchy), SecureRandom())
    info = HierarchyReleaseInfo("cities", "0" * 32, datetime.now(timezone.utc), NODE_LIST_FROM_DATA, False, True,
                                notes=("column 'zip' is numeric; its values are used as categories",))
    manifest = build_hierarchy_manifest(result, info, "discrete_laplace_hierarchy", "n", b"csv", b"pdf", "ABCD")
    assert schema_problems(json.loads(json.dumps(manifest))) == []
    broken = {
        "schema version 2": lambda m: m.update(schema_version=2),
        "no ledger record": lambda m: m.pop("ledger"),
        "an unknown node-list source": lambda m: m["hierarchy"].update(node_list_source="guessed"),
        "one level": lambda m: m["hierarchy"].update(levels=["state"]),
        "a CDF field": lambda m: m.update(bins=4),
        "no counts_from_data": lambda m: m["prior"].pop("counts_from_data"),
    }
    for name, change in broken.items():
        copy_ = copy.deepcopy(manifest)
        change(copy_)
        assert schema_problems(copy_), name
    as_cdf = dict(manifest, kind="cdf")
    assert schema_problems(as_cdf)  # a hierarchy manifest is not a CDF manifest
