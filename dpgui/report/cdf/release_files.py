"""A released CDF read back from its files: a signed bundle's manifest and CSV, or a CSV written with
``dpgui release --out`` and the release record written beside it.

``dpgui release --out OUT.csv`` writes two files: the CSV, and ``OUT.release.json`` (:func:`record_path`),
the release's public record — the plan, N as released, the missing values' count, the consistency
step and the CSV's SHA-256 — which is what the quantile intervals need beyond the CSV. ``dpgui
quantiles OUT.csv`` finds it there; ``--plan FILE`` names it (or what ``release --json`` printed)
explicitly.

Everything read here was handed over by someone: every field is checked (a manifest against the
manifest schema, a record field by field) and every problem is one :class:`~dpgui.errors.DpguiError`
naming the file and the field, never a traceback. Nothing here reads confidential data.
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpgui.core.mechanism import Release
from dpgui.core.plan import Plan
from dpgui.core.projection import published_with_known_zeros
from dpgui.core.quantiles import WholeNumbers
from dpgui.errors import DataError, DpguiError, ParameterError
from dpgui.report.bundle import MANIFEST_SUFFIX, SECURE_SOURCE, schema_problems
from dpgui.report.cdf.bundle import plan_from_manifest
from dpgui.report.cdf.csv_export import CDF_COLUMNS, CDF_COLUMNS_V1
from dpgui.report.files import open_regular_text, read_json_file, sha256_regular_file, write_text_atomic
from dpgui.report.migrations import upgrade_cdf_table, upgrade_manifest
from dpgui.vocabulary import CdfConsistency, StatisticKind, choices

#: The release record written beside ``--out OUT.csv``: ``OUT.release.json``.
RECORD_SUFFIX = ".release.json"
_CONSISTENCY = choices(*CdfConsistency)
_NAME_BYTES = 255  # the longest file name on most file systems
_WHOLE_NUMBER_SOURCES = frozenset(w.value for w in WholeNumbers)  # who said the column holds whole numbers
_WRITTEN_BY_DPGUI = "give the file dpgui wrote"


def record_path(csv_path: str | os.PathLike[str]) -> Path:
    """Where the release record of the CSV ``csv_path`` is written: ``OUT.csv`` → ``OUT.release.json``;
    the stem cut so that the name fits in 255 bytes (a CSV whose own name fits always gets a record)."""
    path = Path(csv_path)
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    while len(os.fsencode(stem + RECORD_SUFFIX)) > _NAME_BYTES:
        stem = stem[:-1]
    return path.with_name(stem + RECORD_SUFFIX)


def write_record(csv_path: Path, record: dict[str, Any]) -> Path:
    """Write ``record`` (the release's public JSON, as ``release --json`` prints it) beside the CSV just
    written at ``csv_path``, with the CSV's name and SHA-256 (so that a CSV changed or replaced later is
    not read with it). Atomic (:func:`write_text_atomic`); returns the record's path."""
    import json

    entry = {"name": csv_path.name, "sha256": sha256_regular_file(csv_path, "CSV file")}
    return write_text_atomic(record_path(csv_path), json.dumps({**record, "csv": entry}, indent=2) + "\n")


@dataclass(frozen=True)
class _Source:
    """What the CSV's own columns do not say: its plan and the facts read with it."""

    plan: Plan
    csv_path: Path
    consistency: str
    total: float | None  # N as released; None: the CSV's last cumulative count
    missing_count: float | None
    facts: dict[str, Any]


def read_release(target: str | os.PathLike[str], plan_file: str | os.PathLike[str] | None) -> tuple[Release, dict[str, Any]]:
    """A released CDF read back from a bundle's manifest and CSV, or from a CSV and its release record
    (``plan_file``, else the record beside the CSV, else a manifest beside it that names it).

    Returns the :class:`~dpgui.core.mechanism.Release` (levels are not in the files; only the cumulative
    counts, their unbiased estimates and standard errors, N and the plan) and facts for the report. The
    CSV's SHA-256 is compared with the manifest's or the record's; the signature is not checked (that is
    ``dpgui verify``). O(K)."""
    path = Path(target)
    if not path.exists():
        raise DataError(f"file not found: '{path}' does not exist", "check the path")
    if path.name.endswith(MANIFEST_SUFFIX):
        source = _from_manifest(path, _json_object(path, "manifest"))
    elif plan_file is not None:
        source = _from_record(path, Path(plan_file), explicit=True)
    elif record_path(path).exists():
        source = _from_record(path, record_path(path), explicit=False)
    else:
        found = _manifest_naming(path)
        if found is None:
            raise ParameterError(
                f"{path.name} alone does not say the plan its errors come from (no {record_path(path).name} beside "
                "it, and no manifest beside it names it)", "give --plan OUT.release.json (written beside the CSV by "
                "'dpgui release --out') or the JSON 'dpgui release --json' printed, or the bundle's NAME.manifest.json")
        source = _from_manifest(*found)
    return _release_of(source)


def _json_object(path: Path, what: str) -> dict[str, Any]:
    data = read_json_file(path, what)
    if not isinstance(data, dict):
        raise DpguiError(f"the {what} {path.name} is not a dpgui {what}", _WRITTEN_BY_DPGUI)
    return data


def _manifest_naming(csv_path: Path) -> tuple[Path, dict[str, Any]] | None:
    """The manifest beside ``csv_path`` whose ``files.csv.name`` is its name (unreadable ones skipped)."""
    if not csv_path.parent.is_dir():
        return None
    for candidate in sorted(csv_path.parent.glob(f"*{MANIFEST_SUFFIX}")):
        try:
            data = _json_object(candidate, "manifest")
        except DpguiError:
            continue
        files = data.get("files")
        entry = files.get("csv") if isinstance(files, dict) else None
        if isinstance(entry, dict) and entry.get("name") == csv_path.name:
            return candidate, data
    return None


def _from_manifest(path: Path, manifest: dict[str, Any]) -> _Source:
    kind = manifest.get("kind", StatisticKind.CDF)
    if kind != StatisticKind.CDF:  # another statistic's bundle: say what it is, before its schema would
        what = ("counts over a hierarchy" if kind == StatisticKind.HIERARCHY
                else f"a statistic of kind {str(kind)[:40]!r}")
        raise ParameterError(f"{path.name} is a release of {what}, which has no quantiles of one CDF",
                             "read its CSV, or give the manifest of a CDF release ('dpgui verify' says what a bundle "
                             "holds)")
    problems = schema_problems(manifest)
    if problems:
        raise DpguiError(f"the manifest {path.name} is not a dpgui manifest: {problems[0]}", _WRITTEN_BY_DPGUI)
    manifest = upgrade_manifest(manifest, path.name)
    plan = plan_from_manifest(manifest)
    entry = manifest["files"]["csv"]  # its name is a plain file name (the schema's pattern): no folder, no ".."
    csv_path = path.with_name(entry["name"])
    if sha256_regular_file(csv_path, "CSV file") != entry["sha256"]:
        raise DpguiError(f"{csv_path.name} does not match the SHA-256 in {path.name} (it was changed after signing)",
                         "use the CSV of the bundle as it was written")
    facts = {"manifest": str(path), "dataset": manifest["dataset"], "column": manifest["column"],
             "release_id": manifest["release_id"], "secure_noise": manifest["random_source"] == SECURE_SOURCE}
    whole = manifest.get("whole_numbers")  # the column was stated (or typed) to hold whole numbers
    if isinstance(whole, dict) and whole.get("source") in _WHOLE_NUMBER_SOURCES:
        facts["whole_numbers"] = whole["source"]
    return _Source(plan, csv_path, manifest["consistency"], float(manifest["total_records"]["released_estimate"]),
                   manifest["missing_values"]["released_count"], facts)


def _from_record(csv_path: Path, path: Path, explicit: bool) -> _Source:
    """The release record ``path`` (written beside the CSV, or what ``release --json`` printed)."""
    record = _json_object(path, "release record")

    def bad(field: str, what: str) -> DpguiError:
        return DpguiError(f"the release record {path.name} has no valid {field} ({what})", _WRITTEN_BY_DPGUI)

    entry = record.get("csv")
    if entry is not None or not explicit:  # a record written beside a CSV names it and its SHA-256
        if not (isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("sha256"), str)):
            raise bad("csv", "the CSV's name and SHA-256")
        renamed = entry["name"] != csv_path.name and not explicit  # (a renamed copy is read with --plan)
        if renamed or sha256_regular_file(csv_path, "CSV file") != entry["sha256"]:
            raise DpguiError(f"{csv_path.name} is not the CSV that {path.name} was written with (it was changed or "
                             "replaced since)", "use the CSV as dpgui release wrote it")
    try:
        plan = Plan.from_json(record)
    except DpguiError as err:
        raise DpguiError(f"the release record {path.name}: {err.problem}", _WRITTEN_BY_DPGUI) from None
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as err:
        raise bad("plan", f"{type(err).__name__} {str(err)[:60]}") from None
    consistency = record.get("consistency", CdfConsistency.L2)
    if consistency not in _CONSISTENCY:
        raise bad("consistency", "l2, l1 or none")

    def number(value: object, field: str) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise bad(field, "a finite number ≥ 0")
        return float(value)

    missing = record.get("missing_values")
    missing_count = number(missing.get("released_count"), "missing_values") if isinstance(missing, dict) else None
    facts = {"release_id": record.get("release_id"), "dataset": record.get("dataset"), "record": str(path)}
    if record.get("whole_numbers") in _WHOLE_NUMBER_SOURCES:
        facts["whole_numbers"] = record["whole_numbers"]
    return _Source(plan, csv_path, str(consistency), number(record.get("n_released"), "n_released"), missing_count,
                   facts)


def _read_table(csv_path: Path, bins: int) -> tuple[tuple[str, ...], np.ndarray]:
    """The header and the rows (finite numbers) of a released CDF's CSV; at most ``bins`` rows are read."""
    not_cdf = "give a CSV written by dpgui release"
    rows: list[list[float]] = []
    try:
        with open_regular_text(csv_path, "CSV file") as handle:
            reader = csv.reader(handle)
            header = tuple(next(reader, ()))
            if header not in (CDF_COLUMNS, CDF_COLUMNS_V1):
                raise DpguiError(f"{csv_path.name} is not a released CDF (its header is not {','.join(CDF_COLUMNS)})",
                                 not_cdf)
            for line, row in enumerate(reader, start=2):
                if not row:
                    continue
                values = [float(x) for x in row]
                if len(values) != len(header) or not all(math.isfinite(v) for v in values):
                    raise DpguiError(f"{csv_path.name} is not a released CDF: line {line:,} does not hold "
                                     f"{len(header)} finite numbers", not_cdf)
                rows.append(values)
                if len(rows) > bins:
                    break
    except (ValueError, UnicodeDecodeError, csv.Error) as err:
        if isinstance(err, DpguiError):
            raise
        raise DpguiError(f"{csv_path.name} is not a released CDF (a field is not a number, or not UTF-8)", not_cdf) from None
    if len(rows) != bins:
        more = f"more than {bins:,}" if len(rows) > bins else f"{len(rows):,}"
        raise DpguiError(f"{csv_path.name} has {more} bins but its plan has {bins:,}", "give the plan of this release")
    return header, np.asarray(rows, dtype=float)


def _release_of(source: _Source) -> tuple[Release, dict[str, Any]]:
    plan, facts = source.plan, dict(source.facts)
    table, note = upgrade_cdf_table(*_read_table(source.csv_path, plan.shape.bins))
    if note is not None:
        facts["note"] = note
    cumulative = table[:, CDF_COLUMNS.index("cumulative_count")].copy()
    total = float(cumulative[-1]) if source.total is None else source.total
    estimate = table[:, CDF_COLUMNS.index("unbiased_estimate")].copy()
    std_error = table[:, CDF_COLUMNS.index("std_error")].copy()
    if np.any(std_error < 0):
        raise DpguiError(f"{source.csv_path.name} has a negative standard error", "give a CSV written by dpgui release")
    release = Release(plan, float(table[0, 0]), float(table[-1, 1]), CdfConsistency(source.consistency), cumulative, total,
                      estimate, std_error, (), bool(facts.get("secure_noise", False)), source.missing_count,
                      padding_known=published_with_known_zeros(plan, std_error))
    facts.update({"csv": str(source.csv_path), "bins": plan.shape.bins, "bounds": [release.lower, release.upper],
                  "n": total, "epsilon": plan.privacy.epsilon, "delta": plan.privacy.delta, "noise": plan.noise})
    return release, facts
