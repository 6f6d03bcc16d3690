"""A release of any statistic recorded in the budget ledger before its noise exists, and its signing.

:func:`spend_then_release` is the one order in which the app and the CLI draw noise for publication
(each statistic's ``spend_and_release`` calls it, :mod:`dpgui.report.cdf.publish`,
:mod:`dpgui.report.hierarchy.publish`): the spend is
committed (one SQLite transaction, durable) first, then the noise is drawn, then the ledger
records the release's output (a SHA-256 of the released levels, its public parameters and
whether the noise was secure). If the program dies in between, the budget is wasted but nothing
was released unrecorded; a refused spend (cap reached, no cap set) raises before any noise is
drawn.

It is also the one place where a release is confirmed before it becomes a signed bundle
(:func:`confirm_recorded_release`, :func:`write_and_record_bundle`): only a release that the ledger
confirms is signed, whether it was made in this session or read back from a project file. The rule is in
docs/privacy-model.md, "Signing and the ledger".
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dpgui.core.plan import PrivacySpec
from dpgui.errors import DataError, DpguiError, ParameterError
from dpgui.report.bundle import BundlePaths, check_bundle_name
from dpgui.report.ledger import Ledger, ReleaseOutput, Totals
from dpgui.report.ledger.records import ReleaseRecords
from dpgui.vocabulary import Charge


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
    :class:`~dpgui.report.ledger.BudgetExceeded` (``short_of is Shortfall.CAP_DELTA``: a Gaussian release and
    a cap with δ = 0, whose fix is to raise the cap's δ) exactly as the spend would: both use
    :meth:`Plan.ledger_charge`, so the check and the spend can never disagree."""
    return ledger.check_spend(dataset, Charge(*plan.ledger_charge()))


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


def spend_then_release(ledger: ReleaseRecords, dataset: str, release_id: str, plan: Chargeable, mechanism: str,
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
    ledger.spend(dataset, release_id, Charge(*plan.ledger_charge()), mechanism=mechanism, description=description)
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


def check_signed_row_count(release_id: str, privacy: PrivacySpec, source: dict[str, Any] | None) -> None:
    """A release recorded by an earlier dpgui that published a query's exact row count without the statement
    that it is public is not signed (:func:`publishes_private_row_count`): signing would publish it now."""
    if publishes_private_row_count(privacy, source):
        raise DataError(f"release {release_id} publishes N, the exact number of rows its query returns, which was not "
                        "stated public (an earlier dpgui published it under 'change'), so it is not signed",
                        "release the data again: a query now gets the neighbour model addremove unless its row count "
                        "is stated public")


def confirm_recorded_release(ledger: ReleaseRecords, release_id: str, dataset: str, params: dict[str, Any], digest: str,
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
                            write: Callable[[], BundlePaths], more: Sequence[Path] = ()) -> BundlePaths:
    """Write a bundle with ``write()`` and point ``release_id``'s ledger entry at its manifest.

    A trial of the ledger's pointer first (nothing is written if the ledger would refuse it), then
    ``write()``, then the pointer. If the pointer still cannot be recorded, the written files are
    removed and :class:`BundleNotRecorded` says so: no signed bundle exists that its ledger does not
    point to. The one way a bundle is written (``more``: the files it writes besides the four, a release
    plan's parts' CSVs, removed with them).
    """
    pointer = str(BundlePaths.of(Path(directory), check_bundle_name(name)).manifest.resolve())  # write() checks
    ledger.check_bundle_pointer(release_id, pointer)
    paths = write()
    try:
        ledger.record_bundle(release_id, pointer)
    except DpguiError as err:
        left = []
        for path in (paths.manifest, paths.signature, paths.pdf, paths.csv, *more):  # manifest first: no bundle at once
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


def joined_texts(texts: pa.Array, after_each: str) -> bytes:
    """The UTF-8 bytes of the strings ``texts``, each followed by ``after_each``. O(bytes)."""
    cells = pc.binary_join_element_wise(texts, "", after_each)  # text + after_each + ""
    offsets = np.frombuffer(cells.buffers()[1], dtype=np.int32)[cells.offset:cells.offset + len(cells) + 1]
    data = cells.buffers()[2]
    return data.slice(int(offsets[0]), int(offsets[-1] - offsets[0])).to_pybytes() if data is not None else b""
