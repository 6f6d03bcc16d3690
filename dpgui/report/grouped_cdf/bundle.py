"""The CDF of a numeric column for each group as a signed bundle: the CSV (one row per released group and
bin edge), the manifest (kind ``grouped_cdf``, its own schema ``manifest.schema.json`` beside this module)
and the four files written by the shared :func:`dpgui.report.bundle.write_signed_files`.

Public values only: the groups are the officer's list (never read from the data, unless the officer declared
the data's own values public: ``groups_source``), the plan is made from
public parameters, and each group's size is a released noisy value, written in the CSV only — the manifest
says that the sizes are released with noise and holds no value the data decided. O(groups × K); any thread.
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

import numpy as np

from dpgui.core.grouped_cdf import GroupedRelease
from dpgui.core.missing import missing_rule_text
from dpgui.core.privacy_unit import privacy_unit_record, unit_of_source
from dpgui.core.tree import bin_edges
from dpgui.formatting import iso_utc, utc_stamp
from dpgui.report.bundle import (
    SECURE_SOURCE, BundlePaths, check_bundle_target, sha256_hex, software_versions, write_signed_files,
)
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import StatisticKind

__all__ = ["GROUPED_CDF_CSV_COLUMNS", "GROUPED_CDF_SCHEMA", "GROUP_SIZES_WORDS", "MECHANISM", "GroupedReleaseInfo",
           "build_grouped_cdf_manifest", "default_grouped_cdf_bundle_name", "grouped_cdf_csv_text",
           "released_levels", "write_grouped_cdf_bundle"]

GROUPED_CDF_SCHEMA = Path(__file__).with_name("manifest.schema.json")
#: One row per released group and value-bin edge: the group, the edge (the upper edge of bin j), the released
#: cumulative count of the group's values below it and its standard error, and the group's released (noisy)
#: size with the standard error of its unbiased estimate (the same on every row of a group).
GROUPED_CDF_CSV_COLUMNS = ("group", "value", "cumulative_count", "std_error", "group_size", "group_size_std_error")
MECHANISM = "tree of noisy counts for each group (hierarchical histograms), post-processed"
#: What the manifest states about the groups' sizes.
GROUP_SIZES_WORDS = ("each group's number of records is released only as a noisy estimate, in the CSV's column "
                     "group_size: no exact group size is published, under either neighbour model (one record may "
                     "change its group)")


@dataclass(frozen=True)
class GroupedReleaseInfo:
    """Public facts about a grouped CDF release besides its values: the dataset that paid, the numeric and the
    group column, the ledger id, when the noise was drawn, whether it was secure, and the source's public
    record (None: not recorded)."""

    dataset: str
    column: str
    group_column: str
    release_id: str
    created_utc: datetime
    secure: bool
    source: dict[str, Any] | None = None


def released_levels(release: GroupedRelease) -> list[np.ndarray | None]:
    """Per tree level 0..h (root first), the released noisy node counts of that level of every group, group
    after group in the plan's order: the (group × node) vector the level's noise was drawn for, as the ledger's
    digest covers it. None for a level no group released. O(groups × nodes)."""
    height = len(release.releases[0].levels)
    out: list[np.ndarray | None] = []
    for level in range(height):
        parts = [r.levels[level] for r in release.releases]
        out.append(None if any(p is None for p in parts)
                   else np.concatenate([np.asarray(p, dtype=np.int64) for p in parts]))
    return out


def default_grouped_cdf_bundle_name(info: GroupedReleaseInfo) -> str:
    """``<dataset>-<column>-by-<group column>-<UTC time>-<first 8 of the release id>``, safe as a file name."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{info.dataset}-{info.column}-by-{info.group_column}").strip("._-")
    return f"{(safe or 'release')[:100]}-{utc_stamp(info.created_utc)}-{info.release_id[:8]}"


def _number(value: Any) -> str:
    """A released value as the CSV writes it: a whole number as an integer, any other as ``repr(float)``."""
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return repr(float(value))


def grouped_cdf_csv_text(release: GroupedRelease) -> str:
    """The CSV (:data:`GROUPED_CDF_CSV_COLUMNS`): for each released group in the plan's order, one row per bin
    j = 1..K whose value is the bin's upper edge (:func:`dpgui.core.tree.bin_edges`). O(groups × K)."""
    first = release.releases[0]
    edges = bin_edges(first.lower, first.upper, release.plan.tree.shape.bins)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(GROUPED_CDF_CSV_COLUMNS)
    size_error = repr(float(release.total_std_error))
    for label, group in zip(release.labels, release.releases):
        size = repr(float(group.total))
        for edge, cumulative, error in zip(edges[1:].tolist(), group.cumulative.tolist(), group.std_error.tolist()):
            writer.writerow([label, repr(float(edge)), _number(cumulative), repr(float(error)), size, size_error])
    return out.getvalue()


def build_grouped_cdf_manifest(release: GroupedRelease, info: GroupedReleaseInfo, name: str, csv_bytes: bytes,
                               pdf_bytes: bytes, key_id: str) -> dict[str, Any]:
    """The manifest (public values only) satisfying :data:`GROUPED_CDF_SCHEMA`: the groups and the policy for
    the others, the shared plan (:meth:`GroupedPlan.to_json`), the privacy figures charged once for all groups,
    and the statement that group sizes are released with noise. O(groups + levels)."""
    plan = release.plan
    tree = plan.tree
    privacy = tree.privacy
    epsilon, delta, rho = plan.ledger_charge()
    first = release.releases[0]
    rule = tree.missing_rule
    return {
        "schema_version": 1, "kind": str(StatisticKind.GROUPED_CDF), "release_id": info.release_id,
        "created_utc": iso_utc(info.created_utc), "software": software_versions(), "dataset": info.dataset,
        "column": info.column, "group_column": info.group_column,
        "groups": list(plan.groups.labels),
        **({"groups_source": plan.groups.source_words} if plan.groups.from_data else {}),
        "other_groups": {"policy": str(plan.groups.other),
                         "description": f"rows whose group is not listed (or missing) are {plan.groups.other.words}"},
        "released_groups": list(plan.labels),
        "group_sizes": {"released": "with noise", "description": GROUP_SIZES_WORDS},
        "mechanism": MECHANISM, "noise": str(tree.noise),
        "random_source": SECURE_SOURCE if info.secure else "seeded_test_only",
        "neighbours": privacy.neighbours, "records_per_person": privacy.records_per_person,
        "privacy_unit": privacy_unit_record(unit_of_source(info.source), privacy.records_per_person),
        "privacy": {"epsilon": privacy.epsilon, "delta": privacy.delta,
                    "charged": {"epsilon": epsilon, "delta": delta, "rho": rho},
                    "composition": "the groups compose in parallel (one record is in one group's tree): the "
                                   "shared plan's budget is charged once, however many groups are released"},
        "plan": plan.to_json(),
        "estimator": str(tree.estimator), "consistency": str(first.consistency),
        "bounds": {"lower": first.lower, "upper": first.upper}, "bins": tree.shape.bins,
        "missing_values": {"rule": str(rule), "description": missing_rule_text(rule, privacy.impute)},
        "source": info.source,
        "files": {"csv": {"name": f"{name}.csv", "sha256": sha256_hex(csv_bytes),
                          "columns": list(GROUPED_CDF_CSV_COLUMNS)},
                  "pdf": {"name": f"{name}.pdf", "sha256": sha256_hex(pdf_bytes)}},
        "signer": {"key_id": key_id, "algorithm": "Ed25519, minisign format (BLAKE2b-512 prehash)"},
    }


def write_grouped_cdf_bundle(directory: str | os.PathLike[str], name: str, release: GroupedRelease,
                             info: GroupedReleaseInfo, pdf_bytes: bytes, key: SecretKey) -> BundlePaths:
    """The four files of a grouped CDF bundle (a release drawn with test noise is refused by the schema)."""
    paths = check_bundle_target(directory, name)
    csv_bytes = grouped_cdf_csv_text(release).encode("utf-8")
    manifest = build_grouped_cdf_manifest(release, info, name, csv_bytes, pdf_bytes, key.public_key.key_id_hex)
    return write_signed_files(paths, info.release_id, csv_bytes, pdf_bytes, manifest, key, GROUPED_CDF_SCHEMA)
