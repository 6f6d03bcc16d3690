"""The one registry of statistics: every kind of release dpgui makes, keyed by
:class:`~dpgui.vocabulary.StatisticKind`, each a :class:`~dpgui.workspace.statistic.Statistic` in its own
module of this package (:mod:`.cdf`, :mod:`.hierarchy`), which never imports another (a contract in
pyproject's ``[tool.importlinter]``). A new statistic is one module here (its engine, report and PDF code
in their own folders of those layers) and one line of :data:`STATISTICS` (and its PDF report one line of
:data:`dpgui.pdf.sections.SECTIONS`, the PDF layer being above this one).

What picks a statistic by a recorded kind goes through here: the verifier (:func:`verify`, the manifest's
``kind``), the ledger's words (:func:`release_words`, the entry's ``kind``), a release's charge read back
(:func:`recorded_charge`). Public values only; no Qt; any thread.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from dpgui.core.privacy_unit import privacy_unit_words, unit_of_source
from dpgui.errors import DataError
from dpgui.report.bundle import SCHEMA_PATH, Verification, schema_problems, source_text, verify_bundle
from dpgui.report.plan.bundle import PLAN_SCHEMA
from dpgui.report.signing import PublicKey
from dpgui.vocabulary import Charge, ReleaseKind, StatisticKind
from dpgui.workspace.statistic import Statistic
from dpgui.workspace.statistics.cdf import CDF
from dpgui.workspace.statistics.counts import COUNTS
from dpgui.workspace.statistics.grouped_cdf import GROUPED_CDF
from dpgui.workspace.statistics.hierarchy import HIERARCHY

__all__ = ["STATISTICS", "recorded_charge", "release_words", "statistic", "verify"]

#: Every statistic, by its kind (the manifest's and the ledger's ``kind`` token).
STATISTICS: dict[StatisticKind, Statistic[Any, Any, Any, Any, Any]] = {
    StatisticKind.CDF: CDF,
    StatisticKind.HIERARCHY: HIERARCHY,
    StatisticKind.COUNTS: COUNTS,
    StatisticKind.GROUPED_CDF: GROUPED_CDF,
}


def _find(kind: object) -> Statistic[Any, Any, Any, Any, Any] | None:
    """The statistic of a recorded ``kind`` token (a str equals its str-enum member), None if unknown."""
    return next((found for key, found in STATISTICS.items() if key == kind), None)


def statistic(kind: str) -> Statistic[Any, Any, Any, Any, Any]:
    """The statistic of the recorded ``kind`` token; a DataError for a kind this dpgui does not know."""
    found = _find(kind)
    if found is None:
        raise DataError(f"{str(kind)[:40]!r} is not a kind of release this dpgui knows "
                        f"({', '.join(str(k) for k in STATISTICS)})", "open it with the dpgui that made it")
    return found


def _schema_of(manifest: dict[str, Any]) -> Path:
    """The schema of a manifest's statistic (a release plan's: :data:`~dpgui.report.plan.bundle.PLAN_SCHEMA`);
    the shared one for a kind this dpgui does not know (it says why)."""
    if manifest.get("kind") == ReleaseKind.PLAN:
        return PLAN_SCHEMA
    found = _find(manifest.get("kind"))
    return SCHEMA_PATH if found is None else found.manifest_schema


def verify(manifest_path: str | os.PathLike[str], public_key: PublicKey) -> Verification:
    """:func:`dpgui.report.bundle.verify_bundle`, the manifest checked against its own statistic's schema
    (picked by its signed ``kind``), and a release plan's every part's own manifest against its statistic's
    (a failure names the part). Reads the bundle's files; O(file sizes)."""
    verification = verify_bundle(manifest_path, public_key, _schema_of)
    manifest = verification.manifest
    if not verification.ok or manifest is None or manifest.get("kind") != ReleaseKind.PLAN:
        return verification
    checks = list(verification.checks)
    for number, part in enumerate(manifest["parts"], 1):
        words = f"part {number} ({str(part['title'])[:80]})"
        found = _find(part["kind"])
        problems = (["its kind is not one this dpgui knows"] if found is None
                    else schema_problems(part["manifest"], found.manifest_schema))
        if not problems and (part["manifest"].get("release_id") != part["release_id"]
                             or part["manifest"].get("files", {}).get("csv", {}).get("sha256") != part["csv"]["sha256"]):
            problems = ["its own manifest names another release or another CSV than the plan lists for it"]
        if problems:
            checks.append((f"{words}: its manifest does not follow its statistic's schema ({problems[0]})", False))
            return replace(verification, ok=False, checks=tuple(checks))
        checks.append((f"{words}: its manifest follows its statistic's schema", True))
    return replace(verification, checks=tuple(checks))


def release_words(description: dict[str, Any]) -> str:
    """What a ledger entry says was released, in words, from its recorded ``description``: its statistic's
    words (the column of a CDF, the levels of a hierarchy) and the data source (its query or table, or the
    file's format; :func:`~dpgui.report.bundle.source_text`), e.g. "CDF of column 'wage' from the query
    'SELECT …' on sqlite:///wages.db (its number of rows kept private); counted by the database (SQLite
    3.45.1)", then the privacy unit when one was enforced ("; at most 20 records per person, enforced: …",
    :func:`~dpgui.core.privacy_unit.privacy_unit_words`). An entry that recorded no source says so ("source not
    recorded"); one without a kind that names a column is a CDF's."""
    kind = description.get("kind", StatisticKind.CDF if "column" in description else None)
    found = _find(kind)
    if kind == ReleaseKind.PLAN:
        parts = description.get("parts")
        titles = [str(p.get("title")) for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
        what = f"release plan of {len(titles)} statistic{'s' if len(titles) != 1 else ''} ({'; '.join(titles)})"
    else:
        what = "release (kind not recorded)" if found is None else found.ledger_words(description)
    source = description.get("source")
    if not isinstance(source, dict):
        return f"{what}; source not recorded"
    unit = unit_of_source(source)
    if unit is None:
        return f"{what} from {source_text(source)}"
    words = privacy_unit_words(unit, unit.records_per_person)
    return f"{what} from {source_text(source)}; {words[0].lower()}{words[1:]}"


def recorded_charge(kind: str, plan: dict[str, Any]) -> Charge:
    """The (ε, δ, ρ) a release of ``kind`` with the recorded ``plan`` (its ``to_json()``) charged. O(levels)."""
    found = statistic(kind)
    return found.charge(found.plan_from_json(plan))
