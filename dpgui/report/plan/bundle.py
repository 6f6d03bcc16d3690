"""The signed bundle of a release plan: one manifest listing every part, one CSV per part, one summary CSV,
one PDF (a summary page and each part's pages) and the manifest's minisign signature.

Files, for the bundle name ``NAME``: ``NAME.csv`` (the summary: one row per part, :data:`SUMMARY_COLUMNS`),
``NAME.partI.csv`` (part I's released values, its statistic's own CSV), ``NAME.pdf``, ``NAME.manifest.json``
and ``NAME.manifest.json.minisig``, written in the crash-safe order of :mod:`dpgui.report.bundle` (the
manifest last). The manifest (:data:`PLAN_SCHEMA`, kind ``plan``) states the plan's whole charge and its
split, and for each part its title, kind, own release id, weight, share of the budget, projected 95 % margin,
its CSV's name and SHA-256, and the part's own manifest as its statistic makes it (checked against that
statistic's schema when signing and verifying), so :func:`dpgui.report.bundle.verify_bundle` names the part
whose CSV was edited, removed or swapped.

Public values only: the parts' released values and public parameters; never a count read from the data.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from dpgui.errors import DataError
from dpgui.formatting import iso_utc
from dpgui.report.bundle import (
    SECURE_SOURCE, BundlePaths, check_bundle_target, schema_problems, sha256_hex, software_versions, write_signed_files,
)
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import Charge, ReleaseKind

__all__ = ["PLAN_SCHEMA", "PLAN_SCHEMA_VERSION", "SUMMARY_COLUMNS", "PlanBundlePart", "PlanSummary",
           "build_plan_manifest", "part_csv_name", "plan_paths", "summary_csv_text", "write_plan_bundle"]

PLAN_SCHEMA = Path(__file__).with_name("manifest.schema.json")
#: The version of a plan's manifest schema (its own numbering, as every statistic's).
PLAN_SCHEMA_VERSION = 1
SUMMARY_COLUMNS = ("part", "statistic", "kind", "release_id", "weight", "epsilon", "delta", "rho",
                   "margin95_records", "csv_file")


@dataclass(frozen=True)
class PlanSummary:
    """What the plan as a whole states, all public: its release id, dataset, time, the officer's (ε, δ), the
    charge recorded (its parts' charges composed by the ledger's rule), which split was used and its weighted
    margin beside the equal split's (records), the privacy unit in words, the data source's public record and
    whether every part's noise came from the secure source."""

    release_id: str
    dataset: str
    created_utc: datetime
    epsilon: float
    delta: float
    charge: Charge
    split: str
    weighted_margin: float
    equal_weighted_margin: float
    privacy_unit: str
    source: dict[str, Any] | None
    secure: bool
    #: the plan file's neighbour model, records per person and person column (for a plan made like this one)
    unit: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanBundlePart:
    """One part as its bundle states it: ``title`` ("CDF of distance"), its statistic's ``kind``, its own
    ``release_id``, ``weight``, its share of the budget (``charge``: what its own statistic charges), its
    projected 95 % margin (records), its CSV's bytes and its own ``manifest`` (made by its statistic for
    this bundle's CSV and PDF) with the JSON Schema that manifest follows, and its ``settings`` as the plan
    file states them."""

    title: str
    kind: str
    release_id: str
    weight: float
    charge: Charge
    margin95: float
    csv_bytes: bytes
    manifest: dict[str, Any]
    schema: Path
    #: the statistic's table as the plan file states it (public), for a plan made like this one
    settings: dict[str, Any] = field(default_factory=dict)


def part_csv_name(name: str, index: int) -> str:
    """The file name of part ``index`` (0-based)'s CSV in the bundle ``name``: ``NAME.part1.csv``, …"""
    return f"{name}.part{index + 1}.csv"


def plan_paths(directory: str | os.PathLike[str], name: str, parts: int) -> tuple[BundlePaths, tuple[Path, ...]]:
    """The bundle's four files and the parts' CSVs, refused before anything is spent or written if the folder
    cannot take them or one of them exists (dpgui never overwrites a bundle)."""
    paths = check_bundle_target(directory, name)
    more = tuple(paths.csv.with_name(part_csv_name(name, i)) for i in range(parts))
    existing = [p.name for p in more if p.exists()]
    if existing:
        raise DataError(f"{existing[0]} already exists in {paths.csv.parent}",
                        "choose another bundle name; dpgui never overwrites a bundle")
    return paths, more


def summary_csv_text(parts: Sequence[PlanBundlePart], name: str) -> str:
    """The summary CSV (:data:`SUMMARY_COLUMNS`): one row per part, in the plan's order. O(parts)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(SUMMARY_COLUMNS)
    for i, part in enumerate(parts):
        c = part.charge
        writer.writerow([i + 1, part.title, part.kind, part.release_id, repr(float(part.weight)), repr(c.epsilon),
                         repr(c.delta), "" if c.rho is None else repr(c.rho), repr(float(part.margin95)),
                         part_csv_name(name, i)])
    return out.getvalue()


def build_plan_manifest(summary: PlanSummary, parts: Sequence[PlanBundlePart], name: str, csv_bytes: bytes,
                        pdf_bytes: bytes, key_id: str) -> dict[str, Any]:
    """The plan's manifest (public values only) satisfying :data:`PLAN_SCHEMA`. O(parts + their manifests)."""
    charge = summary.charge
    return {
        "schema_version": PLAN_SCHEMA_VERSION, "kind": str(ReleaseKind.PLAN), "release_id": summary.release_id,
        "created_utc": iso_utc(summary.created_utc), "software": software_versions(), "dataset": summary.dataset,
        "random_source": SECURE_SOURCE if summary.secure else "seeded_test_only",
        "privacy": {"epsilon": summary.epsilon, "delta": summary.delta,
                    "charged": {"epsilon": charge.epsilon, "delta": charge.delta, "rho": charge.rho},
                    "composition": "the parts' budgets add up (ε for Laplace parts, ρ for Gaussian ones, converted to "
                                   "ε at the plan's δ as the ledger does): one ledger entry for the whole plan",
                    "privacy_unit": summary.privacy_unit, **({"unit": summary.unit} if summary.unit else {})},
        "split": {"used": summary.split, "weighted_margin95_records": summary.weighted_margin,
                  "equal_split_weighted_margin95_records": summary.equal_weighted_margin},
        "source": summary.source,
        "parts": [{"title": p.title, "kind": p.kind, "release_id": p.release_id, "weight": p.weight,
                   "charged": {"epsilon": p.charge.epsilon, "delta": p.charge.delta, "rho": p.charge.rho},
                   "margin95_records": p.margin95,
                   "csv": {"name": part_csv_name(name, i), "sha256": sha256_hex(p.csv_bytes)},
                   "settings": p.settings, "manifest": p.manifest} for i, p in enumerate(parts)],
        "files": {"csv": {"name": f"{name}.csv", "sha256": sha256_hex(csv_bytes), "columns": list(SUMMARY_COLUMNS)},
                  "pdf": {"name": f"{name}.pdf", "sha256": sha256_hex(pdf_bytes)}},
        "signer": {"key_id": key_id, "algorithm": "Ed25519, minisign format (BLAKE2b-512 prehash)"},
    }


def write_plan_bundle(directory: str | os.PathLike[str], name: str, summary: PlanSummary,
                      parts: Sequence[PlanBundlePart], pdf_bytes: bytes, key: SecretKey) -> BundlePaths:
    """Write the plan's signed bundle (module docstring). Each part's manifest is checked against its own
    statistic's schema first (a failure is a bug: never sign what the verifier would reject)."""
    paths, more = plan_paths(directory, name, len(parts))
    for i, part in enumerate(parts):
        problems = schema_problems(part.manifest, part.schema)
        if problems:
            raise RuntimeError(f"part {i + 1}'s manifest does not satisfy its schema: {problems[0]}")
    csv_bytes = summary_csv_text(parts, name).encode("utf-8")
    manifest = build_plan_manifest(summary, parts, name, csv_bytes, pdf_bytes, key.public_key.key_id_hex)
    return write_signed_files(paths, summary.release_id, csv_bytes, pdf_bytes, manifest, key, PLAN_SCHEMA,
                              more={path: part.csv_bytes for path, part in zip(more, parts)})
