"""The manifest of a bundle for both noises: what it records (noise, δ, ρ, per-level ρ and σ², the
conversion, the charge), that its schema accepts Laplace and Gaussian manifests and refuses mixed
ones, and that manifests written by the previous dpgui (schema version 1) still verify."""

from __future__ import annotations

import copy
import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpgui.core.accounting import zcdp_rho
from dpgui.core.mechanism import Release, release
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import ZCDP_CONVERSION, PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.report.bundle import (
    SECURE_SOURCE, BundlePaths, manifest_bytes, schema_problems, sha256_hex, software_versions, verify_bundle,
)
from dpgui.report.cdf.bundle import (
    SCHEMA_VERSION, ReleaseInfo, build_manifest, missing_values_json, plan_from_manifest, write_bundle,
)
from dpgui.report.cdf.csv_export import CDF_COLUMNS, release_csv_text
from dpgui.report.signing import SecretKey, generate_key

BINS, LOWER, UPPER = 64, 0.0, 640.0
PDF = b"%PDF-1.4 a stand-in report\n"


@pytest.fixture(scope="module")
def key() -> SecretKey:
    return generate_key()


def _release(privacy: PrivacySpec, noise: str) -> tuple[Release, ReleaseInfo]:
    counts = np.random.default_rng(14).integers(0, 500, BINS)
    plan = auto_plan(BINS, privacy, None, "auto", "gls", "total", noise=noise)
    assert plan.noise == noise
    result = release(counts, plan, SecureRandom(), LOWER, UPPER, "l2", missing=7 if privacy.missing_leaf else 0)
    info = ReleaseInfo("survey", "income", "0123456789abcdef0123456789abcdef",
                       datetime(2026, 11, 24, 8, 0, tzinfo=timezone.utc), privacy.missing_rule)
    return result, info


def _manifest(privacy: PrivacySpec, noise: str) -> tuple[dict[str, Any], Release]:
    result, info = _release(privacy, noise)
    csv_bytes = release_csv_text(result).encode()
    return build_manifest(result, info, "survey", csv_bytes, PDF, "ABCDEF0123456789"), result


def test_a_gaussian_manifest_records_noise_delta_rho_levels_and_charge():
    privacy = PrivacySpec(1.0, "change", 1, 1e-9)
    manifest, result = _manifest(privacy, "gaussian")
    assert schema_problems(manifest) == []
    assert manifest["schema_version"] == SCHEMA_VERSION == 2 and manifest["noise"] == "discrete_gaussian"
    rho = zcdp_rho(1.0, 1e-9)
    p = manifest["privacy"]
    assert (p["epsilon"], p["delta"], p["delta_used"]) == (1.0, 1e-9, 1e-9)
    assert p["rho"] == pytest.approx(rho, rel=1e-12) and p["conversion"] == ZCDP_CONVERSION
    assert p["charged"] == {"epsilon": 1.0, "delta": 1e-9, "rho": pytest.approx(rho, rel=1e-12)}
    tree = manifest["tree"]
    assert tree["level_epsilons"] is None and tree["level_noise_scales"] is None
    assert math.fsum(tree["level_rhos"]) == pytest.approx(rho, rel=1e-9)
    # σ_l² = Δ₂²/(2ρ_l) with Δ₂² = 2 (change, one record per person), computed here from the ρ_l
    assert tree["l2_sensitivity_squared_per_level"] == 2
    for rho_l, sigma2 in zip(tree["level_rhos"], tree["level_sigma2"]):
        assert (sigma2 is None) == (rho_l == 0)
        if sigma2 is not None:
            assert sigma2 == pytest.approx(2 / (2 * rho_l), rel=2.0**-15)  # rounded up to ~16 bits, never down
            assert sigma2 >= 2 / (2 * rho_l) * (1 - 1e-12)
    assert 0 < p["rho_from_noise_scales"] <= rho * (1 + 1e-12)
    assert manifest["noise_choice"]["chosen"] == "gaussian"
    assert plan_from_manifest(json.loads(json.dumps(manifest))) == result.plan


def test_a_laplace_manifest_records_pure_epsilon_and_the_rho_it_is_charged():
    for delta in (0.0, 1e-6):  # a δ the user set is recorded but not used by Laplace noise
        manifest, result = _manifest(PrivacySpec(0.5, "addremove", 2, delta), "laplace")
        assert schema_problems(manifest) == [], delta
        assert manifest["noise"] == "discrete_laplace"
        p = manifest["privacy"]
        assert (p["delta"], p["delta_used"], p["rho"], p["conversion"]) == (delta, 0.0, None, None)
        assert p["charged"] == {"epsilon": 0.5, "delta": 0.0, "rho": 0.125}  # ε²/2
        assert 0.4999 < p["epsilon_from_noise_scales"] <= 0.5
        tree = manifest["tree"]
        assert math.fsum(tree["level_epsilons"]) == pytest.approx(0.5, rel=1e-12)
        assert tree["level_rhos"] is None and tree["level_sigma2"] is None
        assert plan_from_manifest(json.loads(json.dumps(manifest))) == result.plan


def _broken(manifest: dict[str, Any], change) -> dict[str, Any]:
    out = copy.deepcopy(manifest)
    change(out)
    return out


def test_the_schema_refuses_manifests_that_mix_the_noises():
    gaussian, _ = _manifest(PrivacySpec(1.0, "change", 1, 1e-6), "gaussian")
    laplace, _ = _manifest(PrivacySpec(1.0, "change", 1), "laplace")
    broken = {
        "Gaussian with per-level ε": _broken(gaussian, lambda m: m["tree"].update(level_epsilons=[0.5, 0.5])),
        "Gaussian without per-level ρ": _broken(gaussian, lambda m: m["tree"].update(level_rhos=None)),
        "Gaussian with δ = 0": _broken(gaussian, lambda m: m["privacy"].update(delta=0.0)),
        "Gaussian without ρ": _broken(gaussian, lambda m: m["privacy"].update(rho=None)),
        "Gaussian without the conversion": _broken(gaussian, lambda m: m["privacy"].update(conversion=None)),
        "Gaussian as schema version 1": _broken(gaussian, lambda m: m.update(schema_version=1)),
        "Laplace without per-level ε": _broken(laplace, lambda m: m["tree"].update(level_epsilons=None)),
        "Laplace with a ρ budget": _broken(laplace, lambda m: m["privacy"].update(rho=0.5)),
        "Laplace using δ": _broken(laplace, lambda m: m["privacy"].update(delta_used=1e-6)),
        "version 2 without the charge": _broken(laplace, lambda m: m["privacy"].pop("charged")),
        "a charge without ρ": _broken(laplace, lambda m: m["privacy"]["charged"].pop("rho")),
        "an unknown noise": _broken(laplace, lambda m: m.update(noise="uniform")),
    }
    assert schema_problems(gaussian) == [] and schema_problems(laplace) == []
    for why, manifest in broken.items():
        assert schema_problems(manifest), why


def test_gaussian_and_laplace_bundles_are_written_and_verify(key, tmp_path):
    for noise, privacy in (("gaussian", PrivacySpec(1.0, "change", 1, 1e-9)), ("laplace", PrivacySpec(1.0))):
        result, info = _release(privacy, noise)
        folder = tmp_path / noise
        folder.mkdir()
        paths = write_bundle(folder, "survey", result, info, PDF, key)
        checked = verify_bundle(paths.manifest, key.public_key)
        assert checked.ok, checked.failure
        assert "the manifest follows schema version 2" in [text for text, _ok in checked.checks]
        assert checked.manifest is not None and plan_from_manifest(checked.manifest) == result.plan


# ------------------------------------------------------------------------------------------ old manifests

def _version1_manifest(result: Release, info: ReleaseInfo, name: str, csv_bytes: bytes, pdf_bytes: bytes,
                       key_id: str) -> dict[str, Any]:
    """The manifest exactly as dpgui wrote it before δ and Gaussian noise (schema version 1): a copy
    of the previous ``build_manifest``, kept here so that the test does not depend on today's code."""
    plan = result.plan
    privacy = plan.privacy
    plan_json = plan.to_json()
    return {
        "schema_version": 1,
        "kind": "cdf",
        "release_id": info.release_id,
        "created_utc": info.created_utc.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "software": software_versions(),
        "dataset": info.dataset,
        "column": info.column,
        "mechanism": "tree of noisy counts (hierarchical histogram), post-processed",
        "noise": "discrete_laplace",
        "random_source": SECURE_SOURCE if result.secure else "seeded_test_only",
        "neighbours": privacy.neighbours,
        "records_per_person": privacy.records_per_person,
        "privacy": {"epsilon": privacy.epsilon, "delta": 0.0, "rho": None,
                    "epsilon_from_noise_scales": float(plan.epsilon_spent())},
        "tree": {
            "branching": plan_json["branching"],
            "padded_bins": plan_json["padded_bins"],
            "levels": plan_json["levels"],
            "level_epsilons": plan_json["level_epsilons"],
            "level_noise_scales": plan_json["level_noise_scales"],
            "sensitivity_per_level": plan_json["sensitivity_per_level"],
            "missing_leaf": bool(plan.shape.missing_leaf),
        },
        "estimator": plan.estimator,
        "consistency": result.consistency,
        "bounds": {"lower": result.lower, "upper": result.upper},
        "bins": plan.shape.bins,
        "missing_values": missing_values_json(result, info.missing),
        "total_records": {"public": privacy.root_public,
                          "value": int(result.total) if privacy.root_public else None,
                          "released_estimate": float(result.total)},
        "files": {
            "csv": {"name": f"{name}.csv", "sha256": sha256_hex(csv_bytes), "columns": list(CDF_COLUMNS)},
            "pdf": {"name": f"{name}.pdf", "sha256": sha256_hex(pdf_bytes)},
        },
        "signer": {"key_id": key_id, "algorithm": "Ed25519, minisign format (BLAKE2b-512 prehash)"},
    }


def _write_old_bundle(folder: Path, name: str, manifest: dict[str, Any], csv_bytes: bytes, key: SecretKey) -> BundlePaths:
    """The four files as the previous write_bundle left them (same bytes; no temporaries needed here)."""
    paths = BundlePaths.of(folder, name)
    body = manifest_bytes(manifest)
    paths.csv.write_bytes(csv_bytes)
    paths.pdf.write_bytes(PDF)
    paths.signature.write_text(key.sign(body, f"dpgui release {manifest['release_id']} file:{paths.manifest.name} "
                                        "signed:2026-11-01T10:00:00Z"))
    paths.manifest.write_bytes(body)
    return paths


def test_a_manifest_of_the_previous_dpgui_still_verifies(key, tmp_path):
    result, info = _release(PrivacySpec(0.75), "laplace")
    csv_bytes = release_csv_text(result).encode()
    old = _version1_manifest(result, info, "old", csv_bytes, PDF, key.public_key.key_id_hex)
    assert not {"delta_used", "charged", "conversion"} & set(old["privacy"]) and "level_rhos" not in old["tree"]
    paths = _write_old_bundle(tmp_path, "old", old, csv_bytes, key)
    checked = verify_bundle(paths.manifest, key.public_key)
    assert checked.ok, checked.failure
    assert "the manifest follows schema version 1" in [text for text, _ok in checked.checks]
    assert plan_from_manifest(old) == result.plan  # and the plan it describes is read back
    # a version-1 manifest written before the missing-value record (policy name only) verifies too
    older = copy.deepcopy(old)
    older["missing_values"] = "drop"
    del older["tree"]["missing_leaf"]
    older_paths = _write_old_bundle(tmp_path, "older", older | {"files": old["files"]}, csv_bytes, key)
    assert verify_bundle(older_paths.manifest, key.public_key).ok
    # and a changed byte in it is still caught
    older_paths.manifest.write_bytes(older_paths.manifest.read_bytes().replace(b'"epsilon": 0.75', b'"epsilon": 0.76'))
    assert not verify_bundle(older_paths.manifest, key.public_key).ok



def test_a_release_with_a_plan_made_for_a_region_records_the_region_in_the_manifest(key, tmp_path):
    """The region a plan was made for is recorded in the manifest (schema version 5): its CDF points and
    their bin edges; a focused plan's bundle verifies and its plan reads back equal."""
    from dpgui.core.focus import focus_offer

    counts = np.random.default_rng(15).integers(0, 500, BINS)
    plan = focus_offer(BINS, PrivacySpec(1.0), (1, 3)).focused_plan
    assert plan.focus == (1, 3)
    result = release(counts, plan, SecureRandom(), LOWER, UPPER, "l2", missing=7)
    info = ReleaseInfo("survey", "income", "0123456789abcdef0123456789abcdef",
                       datetime(2026, 11, 24, 8, 0, tzinfo=timezone.utc), plan.privacy.missing_rule)
    manifest = build_manifest(result, info, "survey", release_csv_text(result).encode(), PDF, "ABCDEF0123456789")
    assert schema_problems(manifest) == [] and manifest["schema_version"] == 5
    width = (UPPER - LOWER) / BINS
    assert manifest["focus"]["first_prefix"] == 1 and manifest["focus"]["last_prefix"] == 3
    assert manifest["focus"]["from"] == pytest.approx(LOWER + width) and manifest["focus"]["to"] == pytest.approx(
        LOWER + 3 * width)
    paths = write_bundle(tmp_path, "survey", result, info, PDF, key)
    checked = verify_bundle(paths.manifest, key.public_key)
    assert checked.ok, checked.failure
    assert checked.manifest is not None and plan_from_manifest(checked.manifest) == plan
