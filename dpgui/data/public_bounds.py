"""Suggestions for a column's bounds from public information only.

The bounds of a differentially private CDF must not come from the confidential data
(:data:`WHY_NOT_CONFIDENTIAL` says why, for the user). This module suggests nothing from the
confidential file's values (it reads them only to refuse a "public" reference file that holds
them); it suggests bounds from:

* a published schema (:func:`suggest_from_schema`, :func:`find_schema_for`): a
  Frictionless Table Schema, a Data Package, or a simple ``{"columns": {...}}`` file;
* a file the user marks as public (:func:`suggest_from_reference`): its minimum and
  maximum;
* the column's storage type (:func:`suggest_from_type`): e.g. ``uint8`` is 0..255.

Each returns a :class:`BoundsSuggestion` with a one-sentence explanation for the user.
No Qt.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import pathlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dpgui.core.tree import MAX_BINS, MIN_BINS
from dpgui.data.file_types import SUPPORTED_EXTENSIONS, TableFormat
from dpgui.data.readers import check_table_file, float64_values, numeric_column_batches
from dpgui.data.streams import CancelCallback, PathLike, ProgressCallback, check_callbacks, short_error_text, watched
from dpgui.data.table import ColumnInfo
from dpgui.errors import DataError, ParameterError
from dpgui.formatting import format_bound

__all__ = [
    "BoundsSuggestion",
    "WHY_NOT_CONFIDENTIAL",
    "find_schema_for",
    "suggest_from_reference",
    "suggest_from_schema",
    "suggest_from_type",
]

#: Why the app does not offer the confidential data's own minimum and maximum (for the user).
WHY_NOT_CONFIDENTIAL = (
    "The smallest and largest values in your confidential data belong to real people, so "
    "using them as bounds would publish the most extreme person's value. "
    "Bounds must come from public knowledge (a codebook, a published range, common sense) "
    "and be chosen before looking at the data. "
    "Values outside the bounds are not lost: they are counted in the first or last bin."
)

# Rows per batch when scanning a public reference file.
_BATCH_ROWS = 1_000_000

# Value ranges of small integer types (larger ones would make useless bounds).
_TYPE_RANGES = {"bool": (0, 1), "int8": (-128, 127), "uint8": (0, 255)}


@dataclass(frozen=True)
class BoundsSuggestion:
    """Suggested bounds for a column, in its unit; either may be None (not known).

    ``source``: 'schema', 'reference' or 'type'; ``explanation``: one plain sentence
    saying where the numbers come from.
    """

    lower: float | None
    upper: float | None
    source: str
    explanation: str


# --------------------------------------------------------------------------- schema


def find_schema_for(data_path: PathLike) -> pathlib.Path | None:
    """The first published schema found next to a data file, or None.

    Looks for ``<file>.schema.json`` (``data.csv.schema.json``), then
    ``<stem>.schema.json`` (``data.schema.json``, the stem without ``.csv``, ``.csv.gz``
    and the like), then ``datapackage.json`` in the same folder. O(1); reads nothing.
    """
    p = pathlib.Path(os.fspath(data_path))
    name = p.name
    stem = next(
        (name[: -len(ext)] for ext in sorted(SUPPORTED_EXTENSIONS, key=len, reverse=True)
         if name.lower().endswith(ext)),
        p.stem,
    )
    for candidate in (f"{name}.schema.json", f"{stem}.schema.json", "datapackage.json"):
        path = p.with_name(candidate)
        if path.is_file():
            return path
    return None


def _load_json(path: pathlib.Path) -> Any:
    try:
        with open(path, encoding="utf-8-sig") as f:
            return json.load(f)
    except FileNotFoundError:
        raise DataError(f"schema file not found: '{path}'", "check the path, or choose the file again") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataError(
            f"'{path.name}' is not valid JSON: {short_error_text(err)}",
            "fix the schema file (or remove it) and retry",
        ) from err
    except OSError as err:
        raise DataError(f"cannot read '{path.name}': {short_error_text(err)}", "check the file's permissions") from err


def _bad_schema(path: pathlib.Path, what: str) -> DataError:
    return DataError(
        f"'{path.name}' is not a table schema: {what}",
        'use a Table Schema ({"fields": [{"name": ..., "constraints": {"minimum": ..., '
        '"maximum": ...}}]}) or {"columns": {"name": {"minimum": ..., "maximum": ...}}}',
    )


def _schema_fields(path: pathlib.Path, doc: Any) -> list[dict[str, Any]]:
    """Every field description in a Table Schema, a Data Package or a ``columns`` map,
    normalised to ``{"name": ..., "constraints": {...}}``."""
    if not isinstance(doc, dict):
        raise _bad_schema(path, "the top level is not a JSON object")
    if "resources" in doc:  # a Data Package: the schemas of its resources, in order
        if not isinstance(doc["resources"], list):
            raise _bad_schema(path, '"resources" is not a list')
        fields: list[dict[str, Any]] = []
        for resource in doc["resources"]:
            schema = resource.get("schema") if isinstance(resource, dict) else None
            if isinstance(schema, str):  # a path to a schema file, relative to the package
                if "://" in schema:
                    continue  # a URL: not fetched
                schema = _load_json(path.parent / schema)
            if isinstance(schema, dict):
                fields += _schema_fields(path, schema)
        return fields
    if "fields" in doc:
        if not isinstance(doc["fields"], list) or not all(isinstance(f, dict) for f in doc["fields"]):
            raise _bad_schema(path, '"fields" is not a list of objects')
        return list(doc["fields"])
    if "columns" in doc:
        if not isinstance(doc["columns"], dict) or not all(isinstance(c, dict) for c in doc["columns"].values()):
            raise _bad_schema(path, '"columns" is not an object of objects')
        return [{"name": name, "constraints": c} for name, c in doc["columns"].items()]
    raise _bad_schema(path, 'it has no "fields", "columns" or "resources"')


def _number(path: pathlib.Path, column: str, key: str, value: Any) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise DataError(
            f"the {key} of column '{column}' in '{path.name}' is not a finite number: {value!r}",
            "fix the schema file, or enter the bounds yourself",
        )
    return float(value)


def suggest_from_schema(schema_path: PathLike, column: str) -> BoundsSuggestion | None:
    """Bounds of ``column`` published in a schema file, or None if it gives none.

    Accepts a Frictionless Table Schema (``{"fields": [{"name", "type", "constraints":
    {"minimum", "maximum", "enum"}}]}``), a Data Package (``datapackage.json``: the first
    resource schema that describes the column; schemas given as relative paths are read,
    URLs are not fetched), or ``{"columns": {"name": {"minimum", "maximum"}}}``. A numeric
    ``enum`` gives its smallest and largest value. Either bound may be None.
    Raises :class:`~dpgui.errors.DataError` for unreadable JSON, a file of another shape,
    a bound that is not a number, or a minimum above the maximum.
    """
    path = pathlib.Path(os.fspath(schema_path))
    fields = _schema_fields(path, _load_json(path))
    field = next((f for f in fields if f.get("name") == column), None)
    if field is None:
        return None
    constraints = field.get("constraints", {})
    if not isinstance(constraints, dict):
        raise _bad_schema(path, f'the "constraints" of column \'{column}\' are not an object')
    lower = upper = None
    enum = constraints.get("enum")
    if isinstance(enum, list) and enum:
        values = [_number(path, column, "enum value", v) for v in enum]
        lower, upper = min(values), max(values)
    if constraints.get("minimum") is not None:
        lower = _number(path, column, "minimum", constraints["minimum"])
    if constraints.get("maximum") is not None:
        upper = _number(path, column, "maximum", constraints["maximum"])
    if lower is None and upper is None:
        return None
    if lower is not None and upper is not None and lower > upper:
        raise DataError(
            f"the minimum {format_bound(lower)} of column '{column}' in '{path.name}' is above its "
            f"maximum {format_bound(upper)}",
            "fix the schema file, or enter the bounds yourself",
        )
    if lower is not None and upper is not None:
        says = f"lies between {format_bound(lower)} and {format_bound(upper)}"
    elif lower is not None:
        says = f"is at least {format_bound(lower)}"
    else:
        says = f"is at most {format_bound(upper)}"  # type: ignore[arg-type]
    return BoundsSuggestion(
        lower, upper, "schema",
        f"The published description of the data ('{path.name}') says that '{column}' {says}.",
    )


# --------------------------------------------------------------------------- reference


def suggest_from_reference(
    reference_path: PathLike,
    column: str,
    *,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCallback | None = None,
    confidential: PathLike | None = None,
) -> BoundsSuggestion:
    """The smallest and largest value of ``column`` in a file the user marks as PUBLIC.

    ``confidential``: the file being released. A reference that is that file (any path or link to
    it) or a byte-identical copy of it is refused before it is read; one that holds the same values
    of ``column`` in another form (compressed, re-sorted, with a blank line, re-exported in another
    format) is refused after both are read (the confidential file's column only to compare its values:
    nothing from it is suggested). Either way its minimum and maximum would be the confidential data's
    own (:data:`WHY_NOT_CONFIDENTIAL`), published as the release's bounds.

    Reads the file like :func:`~dpgui.data.histogram.column_histogram` (any supported
    format, streamed: O(rows) time, O(batch) memory; same ``progress``/``should_cancel``
    callbacks); missing and infinite values are skipped. Never call it on the
    confidential file (see :data:`WHY_NOT_CONFIDENTIAL`).
    Raises :class:`~dpgui.errors.DataError` (file or column unusable, no finite value),
    :class:`~dpgui.errors.Cancelled`.
    """
    check_callbacks(progress, should_cancel)
    if not isinstance(column, str) or not column:
        raise ParameterError(f"column name {column!r} is not a non-empty string", "pick a column")
    p, fmt = check_table_file(reference_path)
    fix = "choose a file that is already public, or type bounds you know from what the column means"
    if confidential is not None and _same_data_file(p, pathlib.Path(confidential)):
        raise DataError(
            f"the reference file '{p.name}' is the confidential data file itself (or an identical copy): its "
            "smallest and largest values are the confidential data's own", fix)
    share = 1.0 if confidential is None else 0.5  # of the progress bar: the reference, then the data
    values = _ColumnValues(p, fmt, column, _scaled(progress, 0.0, share), should_cancel)
    if values.count == 0:
        raise DataError(
            f"column '{column}' in the public file '{p.name}' has no finite values",
            "choose another public file or column, or enter the bounds yourself",
        )
    if confidential is not None and values.same_values(pathlib.Path(confidential), _scaled(progress, share, 1.0),
                                                       should_cancel):
        raise DataError(
            f"the reference file '{p.name}' holds the same values of '{column}' as the confidential data (a copy in "
            "another form): its smallest and largest values are the confidential data's own", fix)
    return BoundsSuggestion(
        values.lo, values.hi, "reference",
        f"In the public file '{p.name}', '{column}' goes from {format_bound(values.lo)} to {format_bound(values.hi)}.",
    )


def _scaled(progress: ProgressCallback | None, start: float, end: float) -> ProgressCallback | None:
    """``progress`` for one part of the work: its fraction mapped onto [start, end]."""
    return None if progress is None else (lambda fraction: progress(start + (end - start) * fraction))


_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def _mixed(bits: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64's finaliser of each 64-bit word (wrapping arithmetic): a value's fingerprint. O(n)."""
    with np.errstate(over="ignore"):
        z = bits + _MIX[0]
        z = (z ^ (z >> np.uint64(30))) * _MIX[1]
        z = (z ^ (z >> np.uint64(27))) * _MIX[2]
        mixed: npt.NDArray[np.uint64] = z ^ (z >> np.uint64(31))
        return mixed


class _ColumnValues:
    """The finite values of a numeric column of a file, read once (streamed): their number, smallest and
    largest, and a fingerprint of them as a multiset (the wrapping sum of each value's mixed bits: the
    same values in any order, any file format, give the same fingerprint). O(rows), O(batch) memory."""

    def __init__(self, p: pathlib.Path, fmt: TableFormat, column: str, progress: ProgressCallback | None,
                 should_cancel: CancelCallback | None) -> None:
        self.count, self.fingerprint = 0, np.uint64(0)
        self.lo, self.hi = math.inf, -math.inf
        for arr in watched(numeric_column_batches(p, fmt, column, _BATCH_ROWS), progress, should_cancel):
            x, _ = float64_values(arr)
            finite = x[np.isfinite(x)] + 0.0  # -0.0 is 0.0
            if finite.size:
                self.count += int(finite.size)
                self.lo, self.hi = min(self.lo, float(finite.min())), max(self.hi, float(finite.max()))
                with np.errstate(over="ignore"):
                    self.fingerprint += _mixed(finite.view(np.uint64)).sum(dtype=np.uint64)
        self.column = column

    def same_values(self, confidential: pathlib.Path, progress: ProgressCallback | None,
                    should_cancel: CancelCallback | None) -> bool:
        """Does the confidential file's column hold exactly these values (as a multiset)? False when it
        cannot be read as numbers (then it is not this column in another form)."""
        try:
            data, fmt = check_table_file(confidential)
            other = _ColumnValues(data, fmt, self.column, progress, should_cancel)
        except DataError:
            return False
        return (other.count, other.fingerprint) == (self.count, self.fingerprint)


def _same_data_file(a: pathlib.Path, b: pathlib.Path) -> bool:
    """True if ``a`` and ``b`` are one file (any path or link) or have the same bytes (compared in
    blocks by :func:`filecmp.cmp`, which reads nothing when the sizes differ). O(size) at worst."""
    import filecmp

    try:
        return os.path.samefile(a, b) or filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False


# --------------------------------------------------------------------------- type


def suggest_from_type(column_info: ColumnInfo) -> BoundsSuggestion | None:
    """Bounds implied by the column's storage type alone (boolean 0..1, int8 -128..127,
    uint8 0..255), or None for wider types, whose range says nothing useful. O(1)."""
    key = "bool" if column_info.kind == "boolean" else column_info.dtype
    if key not in _TYPE_RANGES:
        return None
    lo, hi = _TYPE_RANGES[key]
    what = "yes/no (0 or 1)" if key == "bool" else f"whole numbers from {lo} to {hi} ({key})"
    return BoundsSuggestion(
        float(lo), float(hi), "type",
        f"The file stores '{column_info.name}' as {what}, so no value can lie outside that range.",
    )


# --------------------------------------------------------------------------- whole numbers

#: Why bins centred on whole numbers help (one sentence, for the user).
WHY_WHOLE_NUMBER_BINS = (
    "With bins centred on whole numbers (edges at a−0.5, a+0.5, …) every value sits in the middle "
    "of its own bin, so a quantile's bin names the value itself; with edges on whole numbers the "
    "top value is counted in the bin below it and quantiles can be off by up to a bin."
)


def whole_number_reason(column_info: ColumnInfo, table_format: str, schema_path: PathLike | None) -> str | None:
    """One sentence saying which public information makes the column whole-numbered, or None.

    Public: a published schema's ``"type": "integer"``, or an integer storage type in a file
    format with a declared schema (Parquet; Stata's byte/int/long). The type a CSV/TSV/Excel reader infers from the
    values is not public and does not count. O(1) plus reading the schema file.
    """
    if schema_path is not None:
        path = pathlib.Path(os.fspath(schema_path))
        try:
            fields = _schema_fields(path, _load_json(path))
        except DataError:
            fields = []
        field = next((f for f in fields if f.get("name") == column_info.name), None)
        if field is not None and field.get("type") == "integer":
            return f"The published description of the data ('{path.name}') says '{column_info.name}' holds whole numbers."
    dtype = column_info.dtype
    if table_format in ("parquet", "dta") and (dtype.startswith(("int", "uint"))):
        return f"The file's declared schema stores '{column_info.name}' as whole numbers ({dtype})."
    return None


def whole_number_bins(lower: float, upper: float, bins: int) -> tuple[float, float, int, int]:
    """Bins centred on the whole numbers a = ⌈lower⌉ … b = ⌊upper⌋: ``(a − 0.5, a − 0.5 + K·step, K, step)``.
    ``step`` is the bin width ``(upper − lower) / bins`` when that is a whole number (the width chosen is
    kept: 0 to 100 in 100 bins gives 101 bins of 1, the top value in a bin of its own), else the smallest
    whole number giving K ≤ ``bins``; K is at least :data:`~dpgui.core.tree.MIN_BINS` and at most
    :data:`~dpgui.core.tree.MAX_BINS`. O(1)."""
    a, b = math.ceil(lower), math.floor(upper)
    if b < a:
        raise ParameterError(
            f"no whole number lies between {format_bound(lower)} and {format_bound(upper)}", "widen the bounds"
        )
    values = b - a + 1
    width = (upper - lower) / max(1, int(bins))
    step = max(1, math.ceil(values / max(MIN_BINS, int(bins))))
    if width >= 1 and abs(width - round(width)) <= 1e-9 * width and math.ceil(values / round(width)) <= MAX_BINS:
        step = round(width)
    k = max(MIN_BINS, math.ceil(values / step))
    start = a - 0.5
    return start, start + k * step, k, step
