"""A release that is recorded in the budget ledger before its noise exists, and its signing.

This is the one place where the app and the CLI draw noise for publication: the spend is
committed (one SQLite transaction, durable) first, then the noise is drawn, then the ledger
records the release's output (a SHA-256 of the released levels, its public parameters and
whether the noise was secure). If the program dies in between, the budget is wasted but nothing
was released unrecorded; a refused spend (cap reached, no cap set) raises before any noise is
drawn.

It is also the one place where a release becomes a signed bundle (:func:`sign_release`): only a
release that the ledger confirms (:func:`authenticate_release`) is signed, whether it was made
in this session or read back from a project file. The rule is in docs/privacy-model.md, "Signing and
the ledger".
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dpgui.core.mechanism import Release, release
from dpgui.core.missing import MISSING_AUTO, MISSING_RULE_TEXT, MISSING_RULES
from dpgui.core.noise import RandomSource
from dpgui.core.plan import Plan, PrivacySpec
from dpgui.core.projection import has_padding
from dpgui.core.quantiles import WholeNumbers
from dpgui.errors import DataError, DpguiError, ParameterError
from dpgui.report.bundle import BundlePaths, ReleaseInfo, check_bundle_name, source_text, write_bundle
from dpgui.report.csv_export import joined_texts
from dpgui.report.ledger import Ledger, ReleaseOutput, Totals, new_release_id
from dpgui.report.migrations import PADDING_KNOWN_ZEROS, PADDING_UNKNOWN
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import CdfConsistency, Estimator, Noise, StatisticKind

MECHANISM = "discrete_laplace_tree"  # the ledger's mechanism name of a Laplace release
MECHANISMS: dict[str, str] = {Noise.LAPLACE: MECHANISM, Noise.GAUSSIAN: "discrete_gaussian_tree"}
_Result = TypeVar("_Result")


class Chargeable(Protocol):
    """A plan the ledger can charge: a CDF :class:`~dpgui.core.plan.Plan` or a
    :class:`~dpgui.core.hierarchy.HierarchyPlan`."""

    def ledger_charge(self) -> tuple[float, float, float | None]:
        """(ε, δ, ρ or None): what the ledger records for a release with this plan."""
        ...


def check_release_budget(ledger: Ledger, dataset: str, plan: Chargeable) -> Totals:
    """Would a release with ``plan`` fit ``dataset``'s cap now? Reads only; call it before reading
    any data. Returns the current totals, or raises :class:`~dpgui.report.ledger.NoCapSet` /
    :class:`~dpgui.report.ledger.BudgetExceeded` (``short_of == "cap_delta"``: a Gaussian release and
    a cap with δ = 0, whose fix is to raise the cap's δ) exactly as the spend would: both use
    :meth:`Plan.ledger_charge`, so the check and the spend can never disagree."""
    return ledger.check_spend(dataset, *plan.ledger_charge())


def mechanism_name(plan: Plan) -> str:
    """The ledger's name of the mechanism: ``discrete_laplace_tree`` or ``discrete_gaussian_tree``."""
    return MECHANISMS[plan.noise]


def charge_text(plan: Chargeable, with_rho: bool = False) -> str:
    """The charge for messages: "ε = 1" (pure ε-DP) or "ε = 1, δ = 1e-09" (δ > 0; with ``with_rho``
    "ε = 1, δ = 1e-09 (ρ = 0.01497)" when the plan is charged a ρ)."""
    epsilon, delta, rho = plan.ledger_charge()
    if delta <= 0:
        return f"ε = {epsilon:g}"
    return f"ε = {epsilon:g}, δ = {delta:g}" + (f" (ρ = {rho:.4g})" if with_rho and rho is not None else "")


class BundleNotRecorded(DataError):
    """A bundle was written but the budget ledger could not point to it; its files were removed
    (``problem`` names any that could not be)."""


_REMADE = ("release it again (a new release spends budget), or export a release in the dpgui session "
           "that made it")
_EDITED = ("open the project as dpgui saved it (an unedited copy), or release the data again (a new release "
           "spends budget)")


def check_missing_rule(plan: Plan, missing: str = MISSING_AUTO) -> str:
    """The missing-value rule a release with ``plan`` applies (docs/privacy-model.md "Missing values"), or a
    ParameterError before anything is spent.

    The rule is the neighbour model's (``"bucket"`` under change, ``"drop"`` under add/remove), never
    the caller's or the data's. ``missing`` is what the caller asked for: "auto" or the name of a rule
    (:data:`~dpgui.core.missing.MISSING_RULES`; the neighbour model's rule applies); any other word
    (such as "error", stopping at a missing value, which would make publishing depend on the data) is
    refused.
    """
    if missing != MISSING_AUTO and missing not in MISSING_RULES:
        raise ParameterError(
            f"{str(missing)[:40]!r} is not a missing-value rule (a release applies its neighbour model's)",
            "leave it out: missing values are " + MISSING_RULE_TEXT[plan.privacy.missing_rule],
        )
    if plan.missing_rule != plan.privacy.missing_rule:
        raise ParameterError(
            "this plan was made before missing values had a leaf of their own in the tree (under change, dropping "
            "them would change the public N)",
            "make the plan again (auto, or a branching that covers K + 1 leaves)",
        )
    return plan.privacy.missing_rule


def publishes_private_row_count(privacy: PrivacySpec, source_record: dict[str, Any] | None) -> bool:
    """Would a release publish N exactly (the neighbour model ``change``) from a query whose row count was not
    stated public? The record of a query holds the officer's statement (``row_count_public``); a record
    without it (made before the statement existed) is a query whose row count was never stated public."""
    return (privacy.root_public and source_record is not None and source_record.get("query") is not None
            and source_record.get("row_count_public") is not True)


def check_row_count_public(privacy: PrivacySpec, source_record: dict[str, Any] | None) -> None:
    """Refuse, before anything is spent, a release that would publish a query's row count that is not public
    (:func:`publishes_private_row_count`): :func:`dpgui.data.source.neighbours_for` decides the model before
    anything is read; this is the last check, on what the manifest would say."""
    if publishes_private_row_count(privacy, source_record):
        raise ParameterError(
            "this release would publish N, the exact number of rows the query returns, and that number was not "
            "stated public", "state that it is public (--n-public; in the window the box 'The number of rows this "
            "query returns is public'), or use the neighbour model addremove, which keeps N private")


def spend_and_release(ledger: Ledger, dataset: str, column: str, missing: str, counts: np.ndarray, plan: Plan,
                      source: RandomSource, lower: float, upper: float, consistency: str,
                      *, n_missing: int, release_id: str | None = None,
                      source_record: dict[str, Any] | None = None,
                      whole_numbers: WholeNumbers | None = None) -> tuple[Release, ReleaseInfo]:
    """Record the plan's (ε, δ, ρ) for ``dataset`` in the ledger (:meth:`Plan.ledger_charge`), then release
    the histogram's CDF (ε-DP with discrete Laplace noise, or (ε, δ)-DP and ρ-zCDP with discrete
    Gaussian noise, as ``plan.noise`` says).

    ``counts``: the confidential histogram (K bins); ``n_missing``: its number of missing values,
    counted in the tree's missing leaf under change and dropped under add/remove
    (:func:`check_missing_rule`; ``missing`` is checked there; required, so that no caller forgets it:
    under change, leaving them out would publish the number of non-missing values as N).
    Only public plan parameters go to the ledger.
    ``release_id``: the ledger id to record (default: a new random one); a caller that passes it can
    ask the ledger afterwards whether the spend was recorded (``Ledger.release``).
    ``source_record``: where the data was read and who counted it
    (:meth:`dpgui.data.source.DataSource.public_record`; no secret in it), recorded in the ledger's description
    and parameters and in the manifest; None: not recorded. ``whole_numbers``: why the column is known
    to hold whole numbers (public), recorded with the output and stated in the manifest; None: not known.
    Raises the ledger's refusal (cap exceeded / no cap) and :func:`check_row_count_public`'s before any noise
    is drawn. Every limit of the noise sampler is checked when the :class:`Plan` is built; should the release
    still fail after the spend, the error is a DpguiError that says the budget was spent and under which
    ledger id. After the noise, the release's output is recorded in the ledger (what :func:`authenticate_release` checks).
    """
    if consistency not in tuple(CdfConsistency):  # checked before spending, not after
        raise ParameterError(f"unknown consistency {consistency!r}", "use l2, l1 or none")
    rule = check_missing_rule(plan, missing)
    check_row_count_public(plan.privacy, source_record)
    release_id = release_id or new_release_id()
    description = {
        "kind": str(StatisticKind.CDF), "column": column, "bins": plan.shape.bins, "bounds": [lower, upper],
        "branching": list(plan.shape.branching), "estimator": plan.estimator, "consistency": consistency,
        "neighbours": plan.privacy.neighbours, "records_per_person": plan.privacy.records_per_person,
        "secure_noise": bool(source.secure), "noise": plan.noise, "delta": plan.privacy.delta,
    }
    if source_record is not None:
        description["source"] = dict(source_record)

    def draw() -> tuple[Release, ReleaseInfo]:
        created = datetime.now(timezone.utc)
        result = release(counts, plan, source, lower, upper, consistency, missing=n_missing)
        return result, ReleaseInfo(dataset, column, release_id, created, rule,
                                   None if source_record is None else dict(source_record), whole_numbers)

    return spend_then_release(ledger, dataset, release_id, plan, mechanism_name(plan), description, draw,
                              lambda out: (levels_sha256(out[0].levels), release_params(*out), out[0].secure))


def release_words(description: dict[str, Any]) -> str:
    """What a ledger entry says was released, in words, from its recorded ``description``: the kind, the
    column (CDF) or the levels (hierarchy), and the data source (its query or table, or the file's
    format; :func:`~dpgui.report.bundle.source_text`), e.g. "CDF of column 'wage' from the query 'SELECT …'
    on sqlite:///wages.db (its number of rows kept private); counted by the database (SQLite 3.45.1)".
    An entry that recorded no source says so ("source not recorded")."""
    if description.get("kind") == StatisticKind.HIERARCHY:
        levels = description.get("levels")
        what = ("hierarchy counts over " + " > ".join(repr(str(level)) for level in levels)
                if isinstance(levels, list) and levels else "hierarchy counts")
    elif "column" in description:
        what = f"CDF of column {str(description['column'])!r}"
    else:
        what = "release (kind not recorded)"
    source = description.get("source")
    return f"{what} from {source_text(source)}" if isinstance(source, dict) else f"{what}; source not recorded"


def spend_then_release(ledger: Ledger, dataset: str, release_id: str, plan: Chargeable, mechanism: str,
                       description: dict[str, Any], draw: Callable[[], _Result],
                       output: Callable[[_Result], tuple[str, dict[str, Any], bool]]) -> _Result:
    """The one order of a release (CDF or hierarchy): spend, draw the noise, record the output.

    Records ``plan.ledger_charge()`` for ``dataset`` under ``release_id`` (``mechanism``, the public
    ``description``; the ledger's refusal is raised before any noise exists), then calls ``draw()``
    (the release; its time is taken there), then records ``output(result)`` = (SHA-256 of the
    released values, the public parameters, whether the noise was secure) in the ledger: what
    :func:`confirm_recorded_release` checks before signing. A failure after the spend says that the
    budget was spent and under which ledger id. Returns ``draw()``'s result.
    """
    epsilon, delta, rho = plan.ledger_charge()
    ledger.spend(dataset, release_id, epsilon=epsilon, delta=delta, rho=rho, mechanism=mechanism,
                 description=description)
    try:
        result = draw()
        digest, params, secure = output(result)
    except Exception as err:  # a bug past the point of no return: never let it pass as "nothing spent"
        raise DpguiError(f"{charge_text(plan)} was spent (ledger release {release_id}) but the release "
                         f"failed: {type(err).__name__}: {err}", "nothing was published; please report this") from err
    try:
        ledger.record_output(release_id, digest, params, secure)
    except DpguiError as err:
        raise DataError(f"{charge_text(plan)} was spent (ledger release {release_id}) but the ledger could not "
                        f"record the released values ({err.problem}); the release is not kept and cannot be signed",
                        err.fix) from err
    return result


# ------------------------------------------------------------------ what the ledger records
_HASH_BLOCK = 1 << 20  # numbers written out per step of levels_sha256 (bounds its memory: ~10 MB)

def levels_sha256(levels: Sequence[np.ndarray | Sequence[int] | None]) -> str:
    """Hex SHA-256 of released noisy node counts, root first (``None`` for a level not released).

    Canonical form: compact JSON of a list of lists of whole numbers (``null`` for a missing
    level), so the same numbers give the same digest whether they come from the engine (int64
    arrays) or from a project file (lists). The levels are public (released) values. O(#nodes):
    the JSON text is made by Arrow in blocks of 2²⁰ numbers and hashed as it is made (the bytes
    of ``json.dumps(..., separators=(",", ":"))``; 18 million nodes at K = 2²⁴ in about a second).
    """
    digest = hashlib.sha256(b"[")
    for i, level in enumerate(levels):
        if i:
            digest.update(b",")
        if level is None:
            digest.update(b"null")
            continue
        values = np.asarray(level, dtype=np.int64)
        digest.update(b"[")
        for start in range(0, values.size, _HASH_BLOCK):
            text = joined_texts(pc.cast(pa.array(values[start:start + _HASH_BLOCK]), pa.string()), ",")
            digest.update(text if start + _HASH_BLOCK < values.size else text[:-1])  # no "," after the last
        digest.update(b"]")
    digest.update(b"]")
    return digest.hexdigest()


#: Parameters that a ledger record made before they were recorded does not hold, with the value by which a
#: release states nothing about them (no notes, no data source, padding that changes nothing). A restored
#: release with another value cannot be checked against such a record, so it is not signed.
_STATES_NOTHING: dict[str, Any] = {"padding": None, "notes": [], "source": None}


def padding_param(result: Release) -> str | None:
    """How the release's estimate treated the tree's padding leaves, as the ledger records it:
    ``"known_zeros"`` (every release since GLS used them as zeros) or ``"unknown"`` (a release made
    before, recomputed as it was published); None when that changes nothing the bundle states (no
    padding leaves, or the covering estimator, which never reads them)."""
    if result.plan.estimator != Estimator.GLS or not has_padding(result.plan.shape):
        return None
    return PADDING_KNOWN_ZEROS if result.padding_known else PADDING_UNKNOWN


def release_params(result: Release, info: ReleaseInfo) -> dict[str, Any]:
    """Everything a bundle states about a release besides its levels (see
    :func:`dpgui.report.bundle.build_manifest`, the CSV and the PDF), or what it is recomputed from:
    recorded in the ledger at release time, compared field by field before signing
    (:func:`confirm_recorded_release`). ``source`` is None when the release records none;
    ``padding``: :func:`padding_param`."""
    params: dict[str, Any] = {
        "column": info.column,
        "missing": info.missing,
        "created_utc": info.created_utc.astimezone(timezone.utc).isoformat(),
        "lower": float(result.lower),
        "upper": float(result.upper),
        "consistency": result.consistency,
        "plan": result.plan.to_json(),
        "padding": padding_param(result),
        "source": None if info.source is None else dict(info.source),
    }
    if info.whole_numbers is not None:
        params["whole_numbers"] = str(info.whole_numbers)
    return params


_PARAM_NAMES = {"column": "column", "missing": "missing-value policy", "created_utc": "release time",
                "lower": "lower bound", "upper": "upper bound", "consistency": "consistency method", "plan": "plan",
                "intervals_sha256": "95 % intervals", "interval_method": "95 % interval method",
                "source": "data source", "padding": "padding (how the estimate used the padding leaves)",
                "whole_numbers": "whole-number statement"}


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values (a float read back from a file equals the float that was written)."""
    if isinstance(a, float) or isinstance(b, float):
        return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)) and float(a) == float(b)
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _without_noise_choice(plan: Any) -> Any:
    return {k: v for k, v in plan.items() if k != "noise_choice"} if isinstance(plan, dict) else plan


def _param_matches(key: str, restored: Any, recorded: Any) -> bool:
    """Is the restored release's parameter ``key`` the recorded one? A plan's ``noise_choice`` (how a
    planner chose the noise) is compared when the restored plan carries one; project files of some
    earlier versions left it out, and the signed plan then takes the recorded one
    (:func:`authenticate_release`)."""
    if key == "plan" and isinstance(restored, dict) and "noise_choice" not in restored:
        return _same(restored, _without_noise_choice(recorded))
    return _same(restored, recorded)


def _check_params(rid: str, params: dict[str, Any], recorded: dict[str, Any]) -> None:
    """Refuse, naming the fields, a release whose parameters are not exactly the recorded ones: every field
    of either side is compared (a field deleted from a project file is a difference too). A field the
    record does not hold (recorded before dpgui recorded it) passes only with the value that states nothing
    (:data:`_STATES_NOTHING`); otherwise it cannot be checked and the release is refused."""
    keys = list(params) + [k for k in recorded if k not in params]
    unchecked = [k for k in keys if k not in recorded and not (k in _STATES_NOTHING and _same(params[k], _STATES_NOTHING[k]))]
    differing = [k for k in keys if k in recorded and (k not in params or not _param_matches(k, params[k], recorded[k]))]
    if differing:
        names = ", ".join(_PARAM_NAMES.get(k, k) for k in differing)
        raise DataError(f"the {names} of release {rid} {'differs' if len(differing) == 1 else 'differ'} from what the "
                        "budget ledger recorded when it was released (was the project file edited?), so it cannot be "
                        "signed", _EDITED)
    if unchecked:
        names = ", ".join(_PARAM_NAMES.get(k, k) for k in unchecked)
        raise DataError(f"the budget ledger's record of release {rid} was made by an earlier dpgui, which did not "
                        f"record its {names}, so the saved project cannot be checked against it and is not signed",
                        _REMADE)


def authenticate_release(ledger: Ledger, result: Release, info: ReleaseInfo) -> Release:
    """The release confirmed by the ledger, with its ``secure`` flag taken from the ledger's record.

    Signing needs all of: the ledger holds ``info.release_id`` for ``info.dataset``; it recorded
    the release's output at release time; the parameters and the SHA-256 of the released levels
    are the ones recorded; the noise was drawn from the secure source. The ``secure`` flag of
    ``result`` is not trusted (a release read from a file has none). Anything else raises
    :class:`DataError` saying why. Reads only. O(#nodes).
    """
    output = confirm_recorded_release(ledger, info.release_id, info.dataset, release_params(result, info),
                                      levels_sha256(result.levels),
                                      dataset_fix="name the dataset {recorded!r} in step 1, or release the data again")
    check_signed_row_count(info.release_id, result.plan.privacy, info.source)
    recorded_plan = output.params["plan"]
    if result.plan.noise_choice is None and isinstance(recorded_plan, dict) and "noise_choice" in recorded_plan:
        result = replace(result, plan=Plan.from_json(recorded_plan))  # the reasons the planner gave, as recorded
    return result if result.secure else replace(result, secure=True)


def check_signed_row_count(release_id: str, privacy: PrivacySpec, source: dict[str, Any] | None) -> None:
    """A release recorded by an earlier dpgui that published a query's exact row count without the statement
    that it is public is not signed (:func:`publishes_private_row_count`): signing would publish it now."""
    if publishes_private_row_count(privacy, source):
        raise DataError(f"release {release_id} publishes N, the exact number of rows its query returns, which was not "
                        "stated public (an earlier dpgui published it under 'change'), so it is not signed",
                        "release the data again: a query now gets the neighbour model addremove unless its row count "
                        "is stated public")


def confirm_recorded_release(ledger: Ledger, release_id: str, dataset: str, params: dict[str, Any], digest: str,
                             *, dataset_fix: str = "name the dataset {recorded!r}") -> ReleaseOutput:
    """The ledger's record of a release's output, if it confirms that the release may be signed.

    Needs all of: the ledger holds ``release_id`` for ``dataset``; it recorded the release's output at
    release time; the public ``params`` (compared as JSON values, field by field in both directions:
    :func:`_check_params`) and the SHA-256 ``digest`` of the released values (:func:`levels_sha256`) are the ones recorded;
    the noise was drawn from the secure source. Anything else raises :class:`DataError` saying why
    (``dataset_fix``: the fix for another dataset's release, ``{recorded!r}`` its recorded name).
    Used for CDF and hierarchy releases alike. Reads only. O(#nodes).
    """
    rid = release_id
    entry = ledger.release(rid)
    if entry is None:
        raise DataError(f"release {rid} is not in the budget ledger {ledger.path}, so it cannot be signed",
                        "only a release made with this ledger can be signed; release the data again")
    if entry.dataset_id != dataset:
        raise DataError(f"the budget ledger records release {rid} for dataset {entry.dataset_id!r}, not "
                        f"{dataset!r}, so it cannot be signed", dataset_fix.format(recorded=entry.dataset_id))
    output = ledger.release_output(rid)
    if output is None:
        raise DataError(f"the budget ledger holds no record of the values released by release {rid} (it was made by an "
                        "earlier dpgui, or dpgui stopped while releasing it), so it cannot be signed from a saved project",
                        _REMADE)
    _check_params(rid, params, output.params)
    if digest != output.levels_sha256:
        raise DataError(f"the released counts of release {rid} differ from those recorded in the budget ledger when it "
                        "was released (was the project file edited?), so it cannot be signed", _EDITED)
    if not output.secure:
        raise DataError(f"release {rid} was drawn with test noise (a seeded generator, not the operating system's "
                        "secure random source), so it must not be signed or published",
                        "release the data again with dpgui's normal (secure) noise")
    return output


def write_and_record_bundle(ledger: Ledger, release_id: str, directory: str | os.PathLike[str], name: str,
                            write: Callable[[], BundlePaths]) -> BundlePaths:
    """Write a bundle with ``write()`` and point ``release_id``'s ledger entry at its manifest.

    A trial of the ledger's pointer first (nothing is written if the ledger would refuse it), then
    ``write()``, then the pointer. If the pointer still cannot be recorded, the written files are
    removed and :class:`BundleNotRecorded` says so: no signed bundle exists that its ledger does not
    point to. The one way a CDF or hierarchy bundle is written.
    """
    pointer = str(BundlePaths.of(Path(directory), check_bundle_name(name)).manifest.resolve())  # write() checks
    ledger.check_bundle_pointer(release_id, pointer)
    paths = write()
    try:
        ledger.record_bundle(release_id, pointer)
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


def sign_release(ledger: Ledger, directory: str | os.PathLike[str], name: str, result: Release, info: ReleaseInfo,
                 pdf_bytes: bytes, key: SecretKey) -> BundlePaths:
    """Write the signed bundle of a ledger-confirmed release and point its ledger entry at it.

    The one way a release becomes a signed bundle (the window, the CLI and the self-test use it):
    :func:`authenticate_release` first, then a trial of the ledger's bundle pointer, then
    :func:`~dpgui.report.bundle.write_bundle`, then the pointer. If the pointer still cannot be
    recorded, the written files are removed and :class:`DataError` says so: no signed bundle
    exists that its ledger does not point to. ``pdf_bytes`` should be rendered from the release
    this function would sign (:func:`authenticate_release`'s result).
    """
    confirmed = authenticate_release(ledger, result, info)
    return write_and_record_bundle(ledger, info.release_id, directory, name,
                                   lambda: write_bundle(directory, name, confirmed, info, pdf_bytes, key))
