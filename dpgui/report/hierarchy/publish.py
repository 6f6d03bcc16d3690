"""A hierarchy release recorded in the budget ledger before its noise exists, and its signing.

The same rule as :mod:`dpgui.report.publish` for CDFs (docs/privacy-model.md "Signing and the ledger"):
the spend (:meth:`HierarchyPlan.ledger_charge`) is committed first, then the noise is drawn, then
the ledger records the release's output (SHA-256 of the released counts, the public parameters:
the plan, the node list's SHA-256, where the node list and the optimiser's counts came from, and
whether the noise was secure). Only a release the ledger confirms is signed. The window and the
CLI both use :func:`spend_and_release_hierarchy` and :func:`sign_hierarchy_release`; the order of
spend, noise and record, the ledger's confirmation and the bundle's pointer are the CDF's own
(:func:`~dpgui.report.publish.spend_then_release`, :func:`~dpgui.report.publish.confirm_recorded_release`,
:func:`~dpgui.report.publish.write_and_record_bundle`), as are the budget check and the charge's words
(:func:`~dpgui.report.publish.check_release_budget`, :func:`~dpgui.report.publish.charge_text`).
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import numpy as np

from dpgui.core.noise import RandomSource
from dpgui.report.bundle import BundlePaths
from dpgui.report.hierarchy.bundle import HierarchyReleaseInfo, hierarchy_sha256, write_hierarchy_bundle
from dpgui.report.ledger import Ledger, new_release_id
from dpgui.report.ledger.records import ReleaseRecords
from dpgui.report.publish import (
    check_row_count_public, check_signed_row_count, confirm_recorded_release, levels_sha256, spend_then_release,
    write_and_record_bundle,
)
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import Noise, StatisticKind

if TYPE_CHECKING:
    from dpgui.core.hierarchy import Hierarchy, HierarchyPlan, HierarchyRelease

__all__ = [
    "HIERARCHY_MECHANISMS", "hierarchy_mechanism_name",
    "hierarchy_release_params", "authenticate_hierarchy_release", "sign_hierarchy_release",
    "spend_and_release_hierarchy",
]

#: The ledger's mechanism name of each hierarchy noise.
HIERARCHY_MECHANISMS: dict[str, str] = {
    Noise.LAPLACE: "discrete_laplace_hierarchy", Noise.GAUSSIAN: "discrete_gaussian_hierarchy",
    Noise.MULTIPLICATIVE: "sparse_vector_hierarchy"}


def hierarchy_mechanism_name(plan: HierarchyPlan) -> str:
    """The ledger's name of the plan's mechanism, e.g. ``discrete_laplace_hierarchy``."""
    return HIERARCHY_MECHANISMS[plan.noise]


def hierarchy_release_params(result: HierarchyRelease, info: HierarchyReleaseInfo) -> dict[str, Any]:
    """Everything a hierarchy bundle states about a release besides its counts (its 95 % intervals and
    their method included, by SHA-256; the notes the manifest and the PDF repeat; the data source, None
    when the release records none): recorded in the ledger at release time, compared field by field
    before signing. JSON values only."""
    params: dict[str, Any] = {
        "kind": str(StatisticKind.HIERARCHY),
        "created_utc": info.created_utc.astimezone(timezone.utc).isoformat(),
        "levels": list(result.hierarchy.level_names),
        "node_list_sha256": hierarchy_sha256(result.hierarchy),
        "node_list_source": info.node_list_source,
        "counts_from_data": bool(info.counts_from_data),
        # either part alone is checked too: nothing the release carries passes unchecked
        "prior": (None if info.prior_name is None and info.prior_sha256 is None
                  else {"name": info.prior_name, "sha256": info.prior_sha256}),
        "plan": result.plan.to_json(),
        # the 95 % intervals are published too (CSV, manifest): pinned like the counts
        "interval_method": result.interval_method,
        "intervals_sha256": levels_sha256((*result.lower, *result.upper)),
        "notes": list(info.notes),
        "source": None if info.source is None else dict(info.source),
    }
    return params


def spend_and_release_hierarchy(ledger: ReleaseRecords, dataset: str, hierarchy: Hierarchy, leaf_counts: np.ndarray,
                                plan: HierarchyPlan, source: RandomSource, *, node_list_source: str,
                                counts_from_data: bool = False, prior_name: str | None = None,
                                prior_sha256: str | None = None, notes: tuple[str, ...] = (),
                                release_id: str | None = None, source_record: dict[str, Any] | None = None,
                                ) -> tuple[HierarchyRelease, HierarchyReleaseInfo]:
    """Record the plan's (ε, δ, ρ) for ``dataset`` in the ledger, then release the hierarchy's counts.

    ``leaf_counts``: the confidential count of every leaf of ``hierarchy`` (int, in its leaf order);
    ``plan``: from :func:`dpgui.core.hierarchy.plan_hierarchy` for this hierarchy's level sizes;
    ``source``: :class:`~dpgui.core.noise.SecureRandom` for a release that may be signed.
    ``node_list_source`` / ``counts_from_data`` / ``prior_*`` / ``notes``: what the manifest says
    (:class:`~dpgui.report.hierarchy.bundle.HierarchyReleaseInfo`). ``release_id``: the ledger id to
    record (default: a new random one), so that a caller can ask the ledger afterwards.
    ``source_record``: where the data was read and who counted it (:meth:`dpgui.data.source.DataSource.public_record`),
    recorded in the ledger and the manifest; None: not recorded.

    Raises the ledger's refusal (no cap, cap exceeded) before any noise is drawn, and a
    ParameterError for a plan that does not fit the hierarchy (before spending). Should the release
    fail after the spend, the error says the budget was spent and under which ledger id. After the
    noise, the release's output is recorded in the ledger (what :func:`authenticate_hierarchy_release`
    checks). Only public values go to the ledger. O(#nodes) besides the engine's release.
    """
    from dpgui.core.hierarchy import release_hierarchy
    from dpgui.errors import ParameterError

    if tuple(int(n) for n in plan.level_sizes) != tuple(int(n) for n in hierarchy.level_sizes):
        raise ParameterError(f"the plan is for level sizes {list(plan.level_sizes)} but the hierarchy has "
                             f"{list(hierarchy.level_sizes)}", "make the plan for this hierarchy")
    check_row_count_public(plan.privacy, source_record)
    leaves = np.asarray(leaf_counts)
    if leaves.shape != (hierarchy.level_sizes[-1],):
        raise ParameterError(f"{leaves.shape[0] if leaves.ndim == 1 else leaves.shape} leaf counts for "
                             f"{hierarchy.level_sizes[-1]} leaves", "give one count per leaf, in the hierarchy's order")
    release_id = release_id or new_release_id()
    description = {
        "kind": str(StatisticKind.HIERARCHY), "levels": list(hierarchy.level_names),
        "level_sizes": [int(n) for n in hierarchy.level_sizes],
        "noise": plan.noise, "allocation": plan.allocation, "consistency": plan.consistency,
        "level_budgets": [float(b) for b in plan.level_budgets], "neighbours": plan.privacy.neighbours,
        "records_per_person": plan.privacy.records_per_person, "delta": plan.privacy.delta,
        "node_list_source": node_list_source, "prior_source": plan.prior_source,
        "counts_from_data": bool(counts_from_data), "secure_noise": bool(source.secure),
    }
    if source_record is not None:
        description["source"] = dict(source_record)

    def draw() -> tuple[HierarchyRelease, HierarchyReleaseInfo]:
        created = datetime.now(timezone.utc)
        result = release_hierarchy(hierarchy, leaves, plan, source)
        return result, HierarchyReleaseInfo(dataset, release_id, created, node_list_source, bool(counts_from_data),
                                            bool(source.secure), prior_name, prior_sha256, tuple(notes),
                                            None if source_record is None else dict(source_record))

    return spend_then_release(
        ledger, dataset, release_id, plan, hierarchy_mechanism_name(plan), description, draw,
        lambda out: (levels_sha256(out[0].counts), hierarchy_release_params(*out), bool(source.secure)))


def authenticate_hierarchy_release(ledger: ReleaseRecords, result: HierarchyRelease,
                                   info: HierarchyReleaseInfo) -> HierarchyReleaseInfo:
    """The release's info with ``secure`` taken from the ledger's record, if the ledger confirms it.

    Signing needs all of: the ledger holds ``info.release_id`` for ``info.dataset``; it recorded the
    release's output at release time; the parameters (plan, node list, sources, the 95 % intervals
    and their method) and the SHA-256 of the released counts are the ones recorded; the noise was drawn
    from the secure source. Anything else raises :class:`DataError` saying why. Reads only. O(#nodes).
    """
    confirm_recorded_release(ledger, info.release_id, info.dataset, hierarchy_release_params(result, info),
                             levels_sha256(result.counts))
    check_signed_row_count(info.release_id, result.plan.privacy, info.source)
    return info if info.secure else replace(info, secure=True)


def sign_hierarchy_release(ledger: Ledger, directory: str | os.PathLike[str], name: str, result: HierarchyRelease,
                           info: HierarchyReleaseInfo, pdf_bytes: bytes, key: SecretKey,
                           projection: dict[str, Any] | None = None) -> BundlePaths:
    """Write the signed bundle of a ledger-confirmed hierarchy release and point its ledger entry at it.

    :func:`authenticate_hierarchy_release` first, then a trial of the ledger's bundle pointer, then
    :func:`~dpgui.report.hierarchy.bundle.write_hierarchy_bundle`, then the pointer; if the pointer
    still cannot be recorded, the written files are removed and :class:`BundleNotRecorded` says so.
    ``pdf_bytes``: :func:`dpgui.pdf.hierarchy.render_hierarchy_pdf` of this release;
    ``projection``: :func:`~dpgui.report.hierarchy.bundle.projection_json` for the manifest, if any.
    """
    confirmed = authenticate_hierarchy_release(ledger, result, info)
    return write_and_record_bundle(
        ledger, info.release_id, directory, name,
        lambda: write_hierarchy_bundle(directory, name, result, confirmed, hierarchy_mechanism_name(result.plan),
                                       pdf_bytes, key, projection))
