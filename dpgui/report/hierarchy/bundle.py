"""The files of a hierarchy release: its CSV (one row per node), its manifest (kind ``hierarchy``,
schema version 3; 4 when it records its data ``source``) and its signed bundle.

Public values only: the node list (published: every node gets a released count), the released
counts and their 95 % intervals, the plan, where the node list and the optimiser's counts came
from, and the ledger's record of the charge. Never written: the confidential counts, or any hash
of the input file. The bundle is written like a CDF bundle (:func:`dpgui.report.bundle.write_signed_files`:
crash-safe order, manifest last) and verified by the same :func:`dpgui.report.bundle.verify_bundle`.
Callers sign through :func:`dpgui.report.hierarchy.publish.sign_hierarchy_release`, which checks the
release against the budget ledger first.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpgui.core.hierarchy import PATH_SEPARATOR  # one definition: the engine refuses labels holding it
from dpgui.core.privacy_unit import privacy_unit_record, unit_of_source
from dpgui.errors import DataError
from dpgui.formatting import iso_utc, utc_stamp
from dpgui.report.bundle import (
    SECURE_SOURCE, SOURCE_SCHEMA_VERSION, BundlePaths, check_bundle_target, sha256_hex, software_versions,
    write_signed_files,
)
from dpgui.report.files import write_text_atomic
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import Noise, StatisticKind

if TYPE_CHECKING:  # the engine is imported where it is used
    from dpgui.core.hierarchy import Hierarchy, HierarchyPlan, HierarchyProjection, HierarchyRelease
    from dpgui.core.hierarchy_errors import PlanErrors

__all__ = [
    "HIERARCHY_CSV_COLUMNS", "HIERARCHY_SCHEMA_VERSION", "NODE_LIST_FROM_DATA", "NODE_LIST_FROM_PRIOR", "PATH_SEPARATOR",
    "ROOT_NAME", "HierarchyReleaseInfo", "build_hierarchy_manifest", "default_hierarchy_bundle_name",
    "errors_json", "hierarchy_csv_text", "hierarchy_sha256", "projection_json", "write_hierarchy_bundle", "write_hierarchy_csv",
]

HIERARCHY_SCHEMA_VERSION = 3  # the manifest schema version that added kind "hierarchy"
HIERARCHY_CSV_COLUMNS = ("level", "level_name", "path", "released_count", "ci95_low", "ci95_high")
ROOT_NAME = "(all records)"  # the level name of the root (level 0)
NODE_LIST_FROM_PRIOR = "prior file"
NODE_LIST_FROM_DATA = "data (declared public)"  # the officer declared them public: --categories-public, or the window's box
NODE_LIST_SOURCES = (NODE_LIST_FROM_PRIOR, NODE_LIST_FROM_DATA)
MECHANISM_TEXT: dict[str, str] = {
    Noise.LAPLACE: "per-level discrete Laplace counts over a categorical hierarchy (Ko, Ziani & Fioretto 2025), post-processed",
    Noise.GAUSSIAN: "per-level discrete Gaussian counts over a categorical hierarchy (Ghazi et al. 2023, Corollary 2.7), "
                "post-processed",
    Noise.MULTIPLICATIVE: "counting on trees with a multiplicative and additive guarantee (Ghazi et al. 2023, Algorithms 1-2)",
}


@dataclass(frozen=True)
class HierarchyReleaseInfo:
    """Public facts about a hierarchy release that :class:`~dpgui.core.hierarchy.HierarchyRelease`
    does not carry.

    ``node_list_source``: :data:`NODE_LIST_FROM_PRIOR` or :data:`NODE_LIST_FROM_DATA` (the officer
    declared the categories in the data public). ``counts_from_data``: the optimiser's counts came
    from the confidential data (the officer opted in). ``prior_name`` / ``prior_sha256``: the public
    prior file, if one was used (its name, not its folder). ``secure``: the noise came from the
    operating system's secure source. ``notes``: sentences the report repeats (e.g. a numeric
    column used as a level). ``source``: where the data was read and who counted it
    (:meth:`dpgui.data.source.DataSource.public_record`); None: not recorded.
    """

    dataset: str
    release_id: str
    created_utc: datetime
    node_list_source: str
    counts_from_data: bool
    secure: bool
    prior_name: str | None = None
    prior_sha256: str | None = None
    notes: tuple[str, ...] = ()
    source: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.node_list_source not in NODE_LIST_SOURCES:
            raise ValueError(f"node_list_source must be one of {NODE_LIST_SOURCES}, not {self.node_list_source!r}")


def hierarchy_sha256(hierarchy: Hierarchy) -> str:
    """Hex SHA-256 of the published node list: compact JSON of the level names, the labels and the
    parent indices of every level (public). It ties the released counts to their nodes. O(#nodes)."""
    canonical = {
        "level_names": list(hierarchy.level_names),
        "labels": [list(level) for level in hierarchy.labels],
        "parents": [[int(x) for x in np.asarray(p, dtype=np.int64).tolist()] for p in hierarchy.parents],
    }
    text = json.dumps(canonical, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hierarchy_csv_text(release: HierarchyRelease) -> str:
    """CSV with columns ``level,level_name,path,released_count,ci95_low,ci95_high``, one row per node,
    root first, then every level in the hierarchy's order (by parent, then label).

    ``level``: 0 for the root (all records), 1..L; ``level_name``: the level's column (``(all records)``
    for the root); ``path``: the labels from level 1 down to the node joined by `` > `` (empty for
    the root); ``released_count``: the released non-negative integer count; ``ci95_low..ci95_high``:
    the engine's 95 % interval of the node's true count. A ``level_name`` or ``path`` that a spreadsheet
    would run as a formula (it starts with = + - @ and is not a number) is written with a leading
    apostrophe (:func:`_spreadsheet_safe`). Public values only. O(#nodes).
    """
    hierarchy = release.hierarchy
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HIERARCHY_CSV_COLUMNS)
    for level in range(hierarchy.n_levels + 1):
        name = ROOT_NAME if level == 0 else hierarchy.level_names[level - 1]
        counts = np.asarray(release.counts[level])
        lower = np.asarray(release.lower[level])
        upper = np.asarray(release.upper[level])
        for index in range(counts.shape[0]):
            path = "" if level == 0 else PATH_SEPARATOR.join(hierarchy.path(level, index))
            writer.writerow([level, _spreadsheet_safe(name), _spreadsheet_safe(path), _number(counts[index]),
                             _number(lower[index]), _number(upper[index])])
    return buffer.getvalue()


#: First characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _spreadsheet_safe(text: str) -> str:
    """``text`` with a leading apostrophe if a spreadsheet would run it as a formula (it starts with
    = + - @, a tab or a carriage return and is not a plain number): category labels and column names
    come from the data file, which may be hostile. Plain numbers such as ``-3`` are kept."""
    if text.startswith(FORMULA_STARTS):
        try:
            float(text)
        except ValueError:
            return "'" + text
    return text


def _number(value: Any) -> int | str:
    """A whole number as an int, any other as its shortest exact decimal (``repr``)."""
    number = float(value)
    return int(number) if number.is_integer() else repr(number)


def write_hierarchy_csv(release: HierarchyRelease, path: str | os.PathLike[str]) -> Path:
    """Write :func:`hierarchy_csv_text` to ``path`` atomically."""
    return write_text_atomic(path, hierarchy_csv_text(release))


def default_hierarchy_bundle_name(info: HierarchyReleaseInfo, level_names: tuple[str, ...]) -> str:
    """``<dataset>-<first level>-<last level>-<UTC time>-<first 8 of the release id>``, safe as a file name."""
    import re

    stamp = utc_stamp(info.created_utc)
    text = f"{info.dataset}-{level_names[0]}-{level_names[-1]}" if level_names else info.dataset
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-") or "hierarchy"
    return f"{safe[:100]}-{stamp}-{info.release_id[:8]}"


def projection_json(projection: HierarchyProjection, counts: str) -> dict[str, Any]:
    """A :class:`~dpgui.core.hierarchy.HierarchyProjection` as JSON: per level (root first) the number of
    nodes, the sums over its nodes of bias², variance and MSE (records²), the standard error and the
    95 % margin of one count (:attr:`~dpgui.core.hierarchy.LevelProjection.margin95`), the weighted MSE
    (Ko, Ziani & Fioretto, eq. 5), how it was computed, and ``counts``: which counts it was computed at."""
    out = projection.to_json()
    return {"method": out["method"], "counts": counts, "weighted_mse": float(out["weighted_mse"]),
            "levels": out["levels"]}


def errors_json(errors: PlanErrors) -> dict[str, Any]:
    """The stated errors of a plan (:func:`dpgui.core.hierarchy_errors.plan_errors`) as the CLI prints
    and the manifest records them: :func:`projection_json` at the counts they were computed at, each
    level with its usefulness figures (median count, margin ÷ count for the median category, share of
    categories below the margin; null without counts)."""
    out = projection_json(errors.projection, errors.counts_words)
    for row, figures in zip(out["levels"], errors.levels):
        row.update({k: v for k, v in figures.to_json().items() if k not in ("level", "categories", "margin95")})
    return out


def charge_json(plan: HierarchyPlan) -> dict[str, Any]:
    """The (ε, δ, ρ) the ledger is charged for ``plan`` (:meth:`HierarchyPlan.ledger_charge`)."""
    epsilon, delta, rho = plan.ledger_charge()
    return {"epsilon": float(epsilon), "delta": float(delta), "rho": None if rho is None else float(rho)}


def build_hierarchy_manifest(release: HierarchyRelease, info: HierarchyReleaseInfo, mechanism: str, name: str,
                             csv_bytes: bytes, pdf_bytes: bytes, key_id: str,
                             projection: dict[str, Any] | None = None) -> dict[str, Any]:
    """The manifest of a hierarchy release (public values only), a JSON-ready dict that satisfies
    ``manifest.schema.json`` (kind ``hierarchy``, schema version 3). ``mechanism``: the ledger's
    mechanism name; ``projection``: :func:`projection_json` of the plan's projection, if any."""
    plan = release.plan
    privacy = plan.privacy
    hierarchy = release.hierarchy
    charged = charge_json(plan)
    root = float(np.asarray(release.counts[0])[0])
    manifest: dict[str, Any] = {
        "schema_version": HIERARCHY_SCHEMA_VERSION,
        "kind": str(StatisticKind.HIERARCHY),
        "release_id": info.release_id,
        "created_utc": iso_utc(info.created_utc),
        "software": software_versions(),
        "dataset": info.dataset,
        "mechanism": MECHANISM_TEXT.get(plan.noise, plan.noise),
        "noise": plan.noise,
        "random_source": SECURE_SOURCE if info.secure else "seeded_test_only",
        "neighbours": privacy.neighbours,
        "records_per_person": privacy.records_per_person,
        "privacy_unit": privacy_unit_record(unit_of_source(info.source), privacy.records_per_person),
        "privacy": {"epsilon": privacy.epsilon, "delta": privacy.delta,
                    "rho": privacy.rho if plan.noise == Noise.GAUSSIAN else None, "charged": charged},
        "hierarchy": {
            "levels": list(hierarchy.level_names),
            "level_sizes": [int(n) for n in hierarchy.level_sizes],
            "nodes": int(hierarchy.n_nodes),
            "node_list_source": info.node_list_source,
            "node_list_sha256": hierarchy_sha256(hierarchy),
        },
        "plan": plan.to_json(),
        "prior": {
            "source": plan.prior_source,
            "counts_from_data": info.counts_from_data,
            "file": (None if info.prior_name is None or info.prior_sha256 is None
                     else {"name": info.prior_name, "sha256": info.prior_sha256}),
        },
        "consistency": plan.consistency,
        "total_records": {"public": bool(privacy.root_public), "value": int(root) if privacy.root_public else None,
                          "released_estimate": root},
        "ledger": {"release_id": info.release_id, "mechanism": mechanism, "charged": charged},
        "files": {
            "csv": {"name": f"{name}.csv", "sha256": sha256_hex(csv_bytes), "columns": list(HIERARCHY_CSV_COLUMNS)},
            "pdf": {"name": f"{name}.pdf", "sha256": sha256_hex(pdf_bytes)},
        },
        "signer": {"key_id": key_id, "algorithm": "Ed25519, minisign format (BLAKE2b-512 prehash)"},
    }
    if projection is not None:
        manifest["projection"] = projection
    if release.interval_method:  # what the CSV's ci95 columns guarantee (per node, or on average over a level)
        manifest["intervals"] = {"level": 0.95, "method": release.interval_method}
    if info.notes:
        manifest["notes"] = list(info.notes)
    if info.source is not None:
        manifest["schema_version"] = SOURCE_SCHEMA_VERSION
        manifest["source"] = dict(info.source)
    return manifest


def write_hierarchy_bundle(directory: str | os.PathLike[str], name: str, release: HierarchyRelease,
                           info: HierarchyReleaseInfo, mechanism: str, pdf_bytes: bytes, key: SecretKey,
                           projection: dict[str, Any] | None = None) -> BundlePaths:
    """Write the four files of a hierarchy bundle (CSV, PDF, manifest, signature; crash-safe order).

    Raises DataError if the release's noise was not secure, the folder is not writable or a bundle
    file already exists. Use :func:`dpgui.report.hierarchy.publish.sign_hierarchy_release`, which
    checks the release against the budget ledger and records the bundle there.
    """
    if not info.secure:
        raise DataError(f"release {info.release_id} was drawn with test noise (a seeded generator), which must never be "
                        "signed or published", "release the data again with dpgui's normal (secure) noise")
    paths = check_bundle_target(directory, name)
    csv_bytes = hierarchy_csv_text(release).encode("utf-8")
    manifest = build_hierarchy_manifest(release, info, mechanism, name, csv_bytes, pdf_bytes,
                                        key.public_key.key_id_hex, projection)
    return write_signed_files(paths, info.release_id, csv_bytes, pdf_bytes, manifest, key)
