"""A hierarchy release recorded in the budget ledger before its noise exists, and its signing.

The same rule as :mod:`dpgui.report.publish` for CDFs (docs/design.md "Signing and the ledger"):
the spend (:meth:`HierarchyPlan.ledger_charge`) is committed first, then the noise is drawn, then
the ledger records the release's output (SHA-256 of the released counts, the public parameters:
the plan, the node list's SHA-256, where the node list and the optimiser's counts came from, and
whether the noise was secure). Only a release the ledger confirms is signed. The window and the
CLI both use :func:`spend_and_release_hierarchy` and :func:`sign_hierarchy_release`.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpgui.core.noise import RandomSource
from dpgui.errors import DataError, DpguiError
from dpgui.report.bundle import BundlePaths, check_bundle_name
from dpgui.report.hierarchy_bundle import HierarchyReleaseInfo, hierarchy_sha256, write_hierarchy_bundle
from dpgui.report.ledger import Ledger, Totals
from dpgui.report.publish import BundleNotRecorded, levels_sha256
from dpgui.report.signing import SecretKey

if TYPE_CHECKING:
    from dpgui.core.hierarchy import Hierarchy, HierarchyPlan, HierarchyRelease

__all__ = [
    "HIERARCHY_MECHANISMS", "check_hierarchy_budget", "hierarchy_charge_text", "hierarchy_mechanism_name",
    "hierarchy_release_params", "authenticate_hierarchy_release", "sign_hierarchy_release",
    "spend_and_release_hierarchy",
]

#: The ledger's mechanism name of each hierarchy noise.
HIERARCHY_MECHANISMS = {"laplace": "discrete_laplace_hierarchy", "gaussian": "discrete_gaussian_hierarchy",
                        "multiplicative": "sparse_vector_hierarchy"}


def hierarchy_mechanism_name(plan: HierarchyPlan) -> str:
    """The ledger's name of the plan's mechanism, e.g. ``discrete_laplace_hierarchy``."""
    return HIERARCHY_MECHANISMS[plan.noise]


def check_hierarchy_budget(ledger: Ledger, dataset: str, plan: HierarchyPlan) -> Totals:
    """Would a release with ``plan`` fit ``dataset``'s cap now? Reads only; call it before reading
    any data. Raises what the spend would (:class:`~dpgui.report.ledger.NoCapSet`,
    :class:`~dpgui.report.ledger.BudgetExceeded`): both use :meth:`HierarchyPlan.ledger_charge`."""
    return ledger.check_spend(dataset, *plan.ledger_charge())


def hierarchy_charge_text(plan: HierarchyPlan) -> str:
    """The charge for messages: "ε = 1", or "ε = 1, δ = 1e-09 (ρ = 0.01497)" when δ > 0."""
    epsilon, delta, rho = plan.ledger_charge()
    if delta <= 0:
        return f"ε = {epsilon:g}"
    return f"ε = {epsilon:g}, δ = {delta:g}" + (f" (ρ = {rho:.4g})" if rho is not None else "")


def hierarchy_release_params(result: HierarchyRelease, info: HierarchyReleaseInfo) -> dict[str, Any]:
    """The public parameters a hierarchy bundle states about a release besides its counts: recorded
    in the ledger at release time, compared before signing. JSON values only."""
    return {
        "kind": "hierarchy",
        "created_utc": info.created_utc.astimezone(timezone.utc).isoformat(),
        "levels": list(result.hierarchy.level_names),
        "node_list_sha256": hierarchy_sha256(result.hierarchy),
        "node_list_source": info.node_list_source,
        "counts_from_data": bool(info.counts_from_data),
        "prior": None if info.prior_name is None else {"name": info.prior_name, "sha256": info.prior_sha256},
        "plan": result.plan.to_json(),
    }


def spend_and_release_hierarchy(ledger: Ledger, dataset: str, hierarchy: Hierarchy, leaf_counts: np.ndarray,
                                plan: HierarchyPlan, source: RandomSource, *, node_list_source: str,
                                counts_from_data: bool = False, prior_name: str | None = None,
                                prior_sha256: str | None = None, notes: tuple[str, ...] = (),
                                release_id: str | None = None) -> tuple[HierarchyRelease, HierarchyReleaseInfo]:
    """Record the plan's (ε, δ, ρ) for ``dataset`` in the ledger, then release the hierarchy's counts.

    ``leaf_counts``: the confidential count of every leaf of ``hierarchy`` (int, in its leaf order);
    ``plan``: from :func:`dpgui.core.hierarchy.plan_hierarchy` for this hierarchy's level sizes;
    ``source``: :class:`~dpgui.core.noise.SecureRandom` for a release that may be signed.
    ``node_list_source`` / ``counts_from_data`` / ``prior_*`` / ``notes``: what the manifest says
    (:class:`~dpgui.report.hierarchy_bundle.HierarchyReleaseInfo`). ``release_id``: the ledger id to
    record (default: a new random one), so that a caller can ask the ledger afterwards.

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
    leaves = np.asarray(leaf_counts)
    if leaves.shape != (hierarchy.level_sizes[-1],):
        raise ParameterError(f"{leaves.shape[0] if leaves.ndim == 1 else leaves.shape} leaf counts for "
                             f"{hierarchy.level_sizes[-1]} leaves", "give one count per leaf, in the hierarchy's order")
    release_id = release_id or uuid.uuid4().hex
    epsilon, delta, rho = plan.ledger_charge()
    mechanism = hierarchy_mechanism_name(plan)
    description = {
        "kind": "hierarchy", "levels": list(hierarchy.level_names), "level_sizes": [int(n) for n in hierarchy.level_sizes],
        "noise": plan.noise, "allocation": plan.allocation, "consistency": plan.consistency,
        "level_budgets": [float(b) for b in plan.level_budgets], "neighbours": plan.privacy.neighbours,
        "records_per_person": plan.privacy.records_per_person, "delta": plan.privacy.delta,
        "node_list_source": node_list_source, "prior_source": plan.prior_source,
        "counts_from_data": bool(counts_from_data), "secure_noise": bool(source.secure),
    }
    ledger.spend(dataset, release_id, epsilon=epsilon, delta=delta, rho=rho, mechanism=mechanism,
                 description=description)
    created = datetime.now(timezone.utc)
    try:
        result = release_hierarchy(hierarchy, leaves, plan, source)
    except Exception as err:  # past the point of no return: never let it pass as "nothing spent"
        raise DpguiError(f"{hierarchy_charge_text(plan)} was spent (ledger release {release_id}) but the release "
                         f"failed: {type(err).__name__}: {err}", "nothing was published; please report this") from err
    info = HierarchyReleaseInfo(dataset, release_id, created, node_list_source, bool(counts_from_data),
                                bool(source.secure), prior_name, prior_sha256, tuple(notes))
    try:
        ledger.record_output(release_id, levels_sha256(result.counts), hierarchy_release_params(result, info),
                             bool(source.secure))
    except DpguiError as err:
        raise DataError(f"{hierarchy_charge_text(plan)} was spent (ledger release {release_id}) but the ledger could "
                        f"not record the released values ({err.problem}); the release is not kept and cannot be "
                        "signed", err.fix) from err
    return result, info


def _json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON documents (what was written to the ledger and read back)."""
    return json.dumps(json.loads(json.dumps(a)), sort_keys=True) == json.dumps(b, sort_keys=True)


_EDITED = "release the data again (a new release spends budget)"


def authenticate_hierarchy_release(ledger: Ledger, result: HierarchyRelease,
                                   info: HierarchyReleaseInfo) -> HierarchyReleaseInfo:
    """The release's info with ``secure`` taken from the ledger's record, if the ledger confirms it.

    Signing needs all of: the ledger holds ``info.release_id`` for ``info.dataset``; it recorded the
    release's output at release time; the parameters (plan, node list, sources) and the SHA-256 of
    the released counts are the ones recorded; the noise was drawn from the secure source. Anything
    else raises :class:`DataError` saying why. Reads only. O(#nodes).
    """
    rid = info.release_id
    entry = ledger.release(rid)
    if entry is None:
        raise DataError(f"release {rid} is not in the budget ledger {ledger.path}, so it cannot be signed",
                        "only a release made with this ledger can be signed; release the data again")
    if entry.dataset_id != info.dataset:
        raise DataError(f"the budget ledger records release {rid} for dataset {entry.dataset_id!r}, not "
                        f"{info.dataset!r}, so it cannot be signed", f"name the dataset {entry.dataset_id!r}")
    output = ledger.release_output(rid)
    if output is None:
        raise DataError(f"the budget ledger holds no record of the values released by release {rid}, so it cannot "
                        "be signed", _EDITED)
    params = hierarchy_release_params(result, info)
    differing = [key for key in params if not _json_equal(params[key], output.params.get(key))]
    if differing:
        raise DataError(f"the {', '.join(differing)} of release {rid} differ from what the budget ledger recorded "
                        "when it was released, so it cannot be signed", _EDITED)
    if levels_sha256(result.counts) != output.levels_sha256:
        raise DataError(f"the released counts of release {rid} differ from those recorded in the budget ledger when "
                        "it was released, so it cannot be signed", _EDITED)
    if not output.secure:
        raise DataError(f"release {rid} was drawn with test noise (a seeded generator, not the operating system's "
                        "secure random source), so it must not be signed or published",
                        "release the data again with dpgui's normal (secure) noise")
    return info if info.secure else replace(info, secure=True)


def sign_hierarchy_release(ledger: Ledger, directory: str | os.PathLike[str], name: str, result: HierarchyRelease,
                           info: HierarchyReleaseInfo, pdf_bytes: bytes, key: SecretKey,
                           projection: dict[str, Any] | None = None) -> BundlePaths:
    """Write the signed bundle of a ledger-confirmed hierarchy release and point its ledger entry at it.

    :func:`authenticate_hierarchy_release` first, then a trial of the ledger's bundle pointer, then
    :func:`~dpgui.report.hierarchy_bundle.write_hierarchy_bundle`, then the pointer; if the pointer
    still cannot be recorded, the written files are removed and :class:`BundleNotRecorded` says so.
    ``pdf_bytes``: :func:`dpgui.app.pdf_hierarchy.render_hierarchy_pdf` of this release;
    ``projection``: :func:`~dpgui.report.hierarchy_bundle.projection_json` for the manifest, if any.
    """
    confirmed = authenticate_hierarchy_release(ledger, result, info)
    pointer = str(BundlePaths.of(Path(directory), check_bundle_name(name)).manifest.resolve())
    ledger.check_bundle_pointer(info.release_id, pointer)
    paths = write_hierarchy_bundle(directory, name, result, confirmed, hierarchy_mechanism_name(result.plan),
                                   pdf_bytes, key, projection)
    try:
        ledger.record_bundle(info.release_id, pointer)
    except DpguiError as err:
        left = []
        for path in (paths.manifest, paths.signature, paths.pdf, paths.csv):  # manifest first: no bundle at once
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                left.append(path.name)
        removed = (f"could not remove {', '.join(left)}: delete {'them' if len(left) > 1 else 'it'} by hand"
                   if left else "the written files were removed")
        raise BundleNotRecorded(f"the bundle was written but the budget ledger could not record it ({err.problem}); "
                                f"{removed}", err.fix) from err
    return paths
