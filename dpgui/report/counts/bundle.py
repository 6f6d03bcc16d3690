"""The counts of one column as a signed bundle: the CSV (one row per category), the manifest (kind
``counts``, its own schema ``manifest.schema.json`` beside this module) and the four files written by the
shared :func:`dpgui.report.bundle.write_signed_files`. Public values only; O(categories); any thread.
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from dpgui.core.counts import CountsRelease
from dpgui.core.privacy_unit import privacy_unit_record, unit_of_source
from dpgui.formatting import iso_utc, utc_stamp
from dpgui.report.bundle import (
    SECURE_SOURCE, BundlePaths, check_bundle_target, sha256_hex, software_versions, write_signed_files,
)
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import StatisticKind

__all__ = ["COUNTS_CSV_COLUMNS", "COUNTS_SCHEMA", "CountsReleaseInfo", "build_counts_manifest", "counts_csv_text",
           "default_counts_bundle_name", "write_counts_bundle"]

COUNTS_SCHEMA = Path(__file__).with_name("manifest.schema.json")
COUNTS_CSV_COLUMNS = ("category", "released_count", "std_error")
MECHANISM = "discrete_laplace_counts"


@dataclass(frozen=True)
class CountsReleaseInfo:
    """Public facts about a counts release besides its values: the dataset that paid, the column, the
    ledger id, when the noise was drawn, whether it was secure, and the source's public record."""

    dataset: str
    column: str
    release_id: str
    created_utc: datetime
    secure: bool
    source: dict[str, Any] | None = None


def default_counts_bundle_name(info: CountsReleaseInfo) -> str:
    """``<dataset>-<column>-counts-<UTC time>-<first 8 of the release id>``, safe as a file name."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{info.dataset}-{info.column}").strip("._-") or "release"
    return f"{safe[:100]}-counts-{utc_stamp(info.created_utc)}-{info.release_id[:8]}"


def counts_csv_text(release: CountsRelease) -> str:
    """``category,released_count,std_error``, one row per stated category, in the plan's order."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COUNTS_CSV_COLUMNS)
    for label, count in zip(release.plan.labels, release.counts.tolist()):
        writer.writerow([label, int(count), repr(release.plan.std_error)])
    return out.getvalue()


def build_counts_manifest(release: CountsRelease, info: CountsReleaseInfo, name: str, csv_bytes: bytes,
                          pdf_bytes: bytes, key_id: str) -> dict[str, Any]:
    """The manifest (public values only) satisfying :data:`COUNTS_SCHEMA`."""
    plan = release.plan
    epsilon, delta, rho = plan.ledger_charge()
    return {
        "schema_version": 1, "kind": str(StatisticKind.COUNTS), "release_id": info.release_id,
        "created_utc": iso_utc(info.created_utc), "software": software_versions(), "dataset": info.dataset,
        "column": info.column, "categories": list(plan.labels), "mechanism": MECHANISM, "noise": str(plan.noise),
        "random_source": SECURE_SOURCE if info.secure else "seeded_test_only",
        "neighbours": plan.privacy.neighbours, "records_per_person": plan.privacy.records_per_person,
        "privacy_unit": privacy_unit_record(unit_of_source(info.source), plan.privacy.records_per_person),
        "privacy": {"epsilon": plan.privacy.epsilon, "delta": 0.0,
                    "charged": {"epsilon": epsilon, "delta": delta, "rho": rho}},
        "plan": plan.to_json(),
        "source": info.source,
        "files": {"csv": {"name": f"{name}.csv", "sha256": sha256_hex(csv_bytes), "columns": list(COUNTS_CSV_COLUMNS)},
                  "pdf": {"name": f"{name}.pdf", "sha256": sha256_hex(pdf_bytes)}},
        "signer": {"key_id": key_id, "algorithm": "Ed25519, minisign format (BLAKE2b-512 prehash)"},
    }


def write_counts_bundle(directory: str | os.PathLike[str], name: str, release: CountsRelease, info: CountsReleaseInfo,
                        pdf_bytes: bytes, key: SecretKey) -> BundlePaths:
    """The four files of a counts bundle (a release drawn with test noise is refused by the schema)."""
    paths = check_bundle_target(directory, name)
    csv_bytes = counts_csv_text(release).encode("utf-8")
    manifest = build_counts_manifest(release, info, name, csv_bytes, pdf_bytes, key.public_key.key_id_hex)
    return write_signed_files(paths, info.release_id, csv_bytes, pdf_bytes, manifest, key, COUNTS_SCHEMA)
