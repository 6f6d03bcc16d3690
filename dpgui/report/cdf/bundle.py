"""A released CDF as a signed bundle: its manifest (the plan, the privacy figures, the bounds and bins,
the missing values, what the officer stated) and the four files written by the shared
:func:`dpgui.report.bundle.write_signed_files`.

Only public values go into the manifest: the plan, the released (noisy) values' digest, the officer's
statements and the data source's public record. Cost: the CSV text, O(K); no Qt, any thread.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dpgui.core.mechanism import Release
from dpgui.core.plan import ZCDP_CONVERSION, Plan
from dpgui.core.privacy_unit import privacy_unit_record, unit_of_source
from dpgui.core.missing import MISSING_DROP, MISSING_IMPUTE, missing_rule_text
from dpgui.core.quantiles import WholeNumbers, whole_number_step
from dpgui.core.tree import bin_edges
from dpgui.errors import DataError
from dpgui.formatting import iso_utc, utc_stamp
from dpgui.report.bundle import (
    SECURE_SOURCE, SOURCE_SCHEMA_VERSION, BundlePaths, check_bundle_target, sha256_hex, software_versions,
    write_signed_files,
)
from dpgui.report.cdf.csv_export import CDF_COLUMNS, release_csv_bytes
from dpgui.report.migrations import DROPPED_BEFORE_N, MANIFEST_VERSION, upgrade_manifest
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import Noise, StatisticKind


#: The schema version of a CDF manifest: noise, δ, ρ, per-level ρ and σ², the charge (the versions that
#: :mod:`dpgui.report.migrations` reads are 1 to 5).
SCHEMA_VERSION = 2


#: The version of a CDF manifest that records what the officer stated for it: the public value missing
#: values were counted as (``missing_values.value``), the region the plan was made for (``focus``), that
#: the column holds whole numbers (``whole_numbers``). A manifest without them keeps its version (2 or 4),
#: so a restored release writes what it always did.
STATEMENTS_SCHEMA_VERSION = MANIFEST_VERSION


@dataclass(frozen=True)
class ReleaseInfo:
    """Public facts about a release that the :class:`Release` itself does not carry."""

    dataset: str  # the officer's name for the data set (the ledger's id)
    column: str
    release_id: str  # the ledger entry of this release
    created_utc: datetime  # when the noise was drawn
    missing: str  # the missing-value rule the release applied (:class:`~dpgui.core.missing.MissingRule`)
    #: where the data was read and who counted it (:meth:`dpgui.data.source.DataSource.public_record`);
    #: None: not recorded
    source: dict[str, Any] | None = None
    #: why the column is known to hold whole numbers (:class:`~dpgui.core.quantiles.WholeNumbers`: the
    #: officer's statement or the file's declared type; public), None: not known
    whole_numbers: WholeNumbers | None = None


def default_bundle_name(info: ReleaseInfo) -> str:
    """``<dataset>-<column>-<UTC time>-<first 8 of the release id>``, safe as a file name."""
    stamp = utc_stamp(info.created_utc)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{info.dataset}-{info.column}").strip("._-") or "release"
    return f"{safe[:100]}-{stamp}-{info.release_id[:8]}"


def privacy_json(plan: Plan) -> dict[str, Any]:
    """The manifest's ``privacy``: the (ε, δ) set, the plan's zCDP ρ (Gaussian; null for Laplace), what
    the noise drawn spends, the δ the guarantee uses (0 for Laplace: a δ set is unused), the
    ρ → (ε, δ) conversion (Gaussian) and the (ε, δ, ρ) charged to the budget ledger
    (:meth:`Plan.ledger_charge`; a Laplace release is charged ρ = ε²/2)."""
    privacy = plan.privacy
    gaussian = plan.noise == Noise.GAUSSIAN
    epsilon, delta, rho = plan.ledger_charge()
    return {
        "epsilon": privacy.epsilon,
        "delta": privacy.delta,
        "rho": privacy.rho if gaussian else None,
        # the noise scales are rounded so that their exact ε (and ρ) is ≤ what is charged
        "epsilon_from_noise_scales": float(plan.epsilon_spent()),
        "rho_from_noise_scales": float(plan.rho_spent()) if gaussian else None,
        "delta_used": plan.delta_spent,
        "conversion": ZCDP_CONVERSION if gaussian else None,
        "charged": {"epsilon": epsilon, "delta": delta, "rho": rho},
    }


def build_manifest(release: Release, info: ReleaseInfo, name: str, csv_bytes: bytes, pdf_bytes: bytes,
                   key_id: str) -> dict[str, Any]:
    """The manifest (public values only), as a JSON-ready dict that satisfies ``manifest.schema.json``.

    Laplace plans list ``tree.level_epsilons`` and ``tree.level_noise_scales`` (the scales t_l);
    Gaussian plans have those null and list ``tree.level_rhos`` and ``tree.level_sigma2`` (σ_l²)
    instead. ``noise_choice`` is there when a planner chose the noise (both noises' projected errors).
    """
    plan = release.plan
    privacy = plan.privacy
    plan_json = plan.to_json()
    manifest: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": str(StatisticKind.CDF),
        "release_id": info.release_id,
        "created_utc": iso_utc(info.created_utc),
        "software": software_versions(),
        "dataset": info.dataset,
        "column": info.column,
        "mechanism": "tree of noisy counts (hierarchical histogram), post-processed",
        "noise": plan_json["noise"],
        "random_source": SECURE_SOURCE if release.secure else "seeded_test_only",
        "neighbours": privacy.neighbours,
        "records_per_person": privacy.records_per_person,
        "privacy_unit": privacy_unit_record(unit_of_source(info.source), privacy.records_per_person),
        "privacy": privacy_json(plan),
        "tree": {
            "branching": plan_json["branching"],
            "padded_bins": plan_json["padded_bins"],
            "levels": plan_json["levels"],
            "level_epsilons": plan_json["level_epsilons"],
            "level_noise_scales": plan_json["level_noise_scales"],
            "level_rhos": plan_json.get("level_rhos"),
            "level_sigma2": plan_json.get("level_sigma2"),
            "sensitivity_per_level": plan_json["sensitivity_per_level"],
            "l2_sensitivity_squared_per_level": plan_json.get("l2_sensitivity_squared_per_level"),
            "missing_leaf": bool(plan.shape.missing_leaf),  # one more leaf after the K bins counts missing values
        },
        "estimator": plan.estimator,
        "consistency": release.consistency,
        "bounds": {"lower": release.lower, "upper": release.upper},
        "bins": plan.shape.bins,
        "missing_values": missing_values_json(release, info.missing),
        "total_records": {"public": privacy.root_public,
                          "value": int(release.total) if privacy.root_public else None,
                          "released_estimate": float(release.total)},
        "files": {
            "csv": {"name": f"{name}.csv", "sha256": sha256_hex(csv_bytes), "columns": list(CDF_COLUMNS)},
            "pdf": {"name": f"{name}.pdf", "sha256": sha256_hex(pdf_bytes)},
        },
        "signer": {"key_id": key_id, "algorithm": "Ed25519, minisign format (BLAKE2b-512 prehash)"},
    }
    if "noise_choice" in plan_json:
        manifest["noise_choice"] = plan_json["noise_choice"]
    if info.source is not None:
        manifest["schema_version"] = SOURCE_SCHEMA_VERSION
        manifest["source"] = dict(info.source)
    focus = focus_json(plan, release.lower, release.upper)
    if focus is not None:
        manifest["focus"] = focus
    if info.whole_numbers is not None:
        whole = WholeNumbers(info.whole_numbers)
        step = whole_number_step(release.lower, release.upper, plan.shape.bins)
        manifest["whole_numbers"] = {
            "source": whole.value, "description": whole.description,
            "bins_centred": step is not None,
            "quantiles": ("whole numbers (bins centred on whole numbers)" if step is not None
                          else "interpolated within bins (the bins are not centred on whole numbers)")}
    if focus is not None or plan.privacy.impute is not None or info.whole_numbers is not None:
        manifest["schema_version"] = STATEMENTS_SCHEMA_VERSION
    return manifest


def focus_json(plan: Plan, lower: float, upper: float) -> dict[str, Any] | None:
    """The region the plan was optimised for (docs/engine.md "Where do you need accuracy"), as the
    manifest states it: its CDF points (prefix lengths) and their bin edges in the column's units
    (:func:`dpgui.core.tree.bin_edges`), or None for a plan made for the whole range. Public: the plan
    and the bounds only. O(K)."""
    if plan.focus is None:
        return None
    first, last = plan.focus
    edges = bin_edges(lower, upper, plan.shape.bins)
    low, high = float(edges[first]), float(edges[min(last, plan.shape.bins)])
    return {"first_prefix": first, "last_prefix": last, "from": low, "to": high,
            "description": f"the tree and the level budgets were chosen for the CDF at the bin edges from {low:g} "
                           f"to {high:g} (the same ε is spent; accuracy moves there from the rest of the range)"}


def plan_from_manifest(manifest: dict[str, Any]) -> Plan:
    """The plan a CDF manifest of any schema version describes (read from its copy in today's shape,
    :func:`dpgui.report.migrations.upgrade_manifest`). Raises KeyError/TypeError for a manifest that lacks
    the plan's fields, :class:`~dpgui.errors.ParameterError` for values no plan can have, and
    :class:`~dpgui.errors.DataError` for a manifest of a newer version."""
    manifest = upgrade_manifest(manifest, "")
    tree, privacy, missing = manifest["tree"], manifest["privacy"], manifest["missing_values"]
    return Plan.from_json({
        "bins": manifest["bins"], "branching": tree["branching"], "missing_leaf": bool(tree["missing_leaf"]),
        "epsilon": privacy["epsilon"], "delta": privacy["delta"], "neighbours": manifest["neighbours"],
        "records_per_person": manifest["records_per_person"], "estimator": manifest["estimator"],
        "noise": manifest["noise"], "level_epsilons": tree["level_epsilons"], "level_rhos": tree["level_rhos"],
        "missing_impute": float(missing["value"]) if missing["rule"] == MISSING_IMPUTE else None,
    })


def missing_values_json(release: Release, rule: str) -> dict[str, Any]:
    """The manifest's account of missing values: the rule, in words, and (``bucket``) the released
    noisy count N − C_K with its standard error (docs/privacy-model.md "Missing values")."""
    impute = release.plan.privacy.impute
    description = missing_rule_text(rule, impute)
    if rule == MISSING_DROP and release.plan.privacy.root_public:  # restored: no release applies it now
        description = DROPPED_BEFORE_N
    out: dict[str, Any] = {"rule": str(rule), "description": description,
                           "released_count": None if release.missing is None else float(release.missing),
                           "std_error": release.missing_std_error}
    if rule == MISSING_IMPUTE:
        out["value"] = impute
    return out


def write_bundle(directory: str | os.PathLike[str], name: str, release: Release, info: ReleaseInfo,
                 pdf_bytes: bytes, key: SecretKey) -> BundlePaths:
    """Write the four files of a bundle (crash-safe order, see the module docstring).

    ``pdf_bytes``: the human-readable report (rendered by the app layer, which owns Qt).
    Raises DataError if the release is not secure (test noise), the folder is not writable or any
    bundle file already exists. Use :func:`dpgui.report.cdf.publish.sign_release`, which checks the
    release against the budget ledger and records the bundle there.
    """
    if not release.secure:
        raise DataError(f"release {info.release_id} was drawn with test noise (a seeded generator), which must never be "
                        "signed or published", "release the data again with dpgui's normal (secure) noise")
    paths = check_bundle_target(directory, name)
    csv_bytes = release_csv_bytes(release)
    manifest = build_manifest(release, info, name, csv_bytes, pdf_bytes, key.public_key.key_id_hex)
    return write_signed_files(paths, info.release_id, csv_bytes, pdf_bytes, manifest, key)
