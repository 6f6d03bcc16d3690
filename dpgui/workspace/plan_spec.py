"""A release plan written as a small TOML file (:class:`PlanSpec`): the data source, the dataset that pays,
the whole budget (ε, δ), the privacy unit, and the statistics with their public parameters and weights.

The format (docs/release-plans.md gives an example)::

    dataset = "flights-2013"
    source = "resources/sample/flights_plan.parquet"   # as --input takes it: a file, a folder, a database URL
    epsilon = 1.0
    delta = 0.0                 # optional (0: pure ε-DP)
    neighbours = "addremove"    # optional ("change" by default, "addremove" with a person column, which needs it)
    records_per_person = 20     # optional (1); L
    person_column = "tailnum"   # optional: dpgui keeps at most L rows of each person

    [[statistic]]
    kind = "cdf"                # cdf | grouped_cdf | counts | hierarchy
    column = "distance"
    lower = 0
    upper = 5000
    bins = 500
    weight = 1                  # optional (1)
    lock = 0.2                  # optional: this statistic's ε, fixed

Each statistic's own keys are read by its part codec (:data:`dpgui.workspace.plan_parts.PART_CODECS`, one
line per statistic), which also makes its :class:`~dpgui.workspace.release_plan.PlanItem`. Reading checks
every value before anything is planned, read or spent, and names the statistic and the key of a bad one
(never a cell of the data: a plan file holds public parameters only). Nothing here reads the data but
:func:`plan_items` for a statistic that needs it to plan (a hierarchy whose categories are declared public),
through the open data source it is given. No Qt; any thread.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dpgui.core.privacy_unit import privacy_unit_words
from dpgui.data.source import DataSource
from dpgui.errors import DataError, ParameterError
from dpgui.vocabulary import Neighbours, ReleaseKind, StatisticKind
from dpgui.workspace.plan_parts import PART_CODECS, PartPrivacy, check_common, part_codec
from dpgui.workspace.release_plan import PlanItem
from dpgui.workspace.statistics import STATISTICS

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before it joined the standard library
    import tomli as tomllib

__all__ = ["PartSpec", "PlanSpec", "check_columns", "plan_items"]

_FIX = "correct the release plan file (docs/release-plans.md shows the form)"
_TOP_KEYS = frozenset({"dataset", "source", "epsilon", "delta", "neighbours", "records_per_person", "person_column",
                       "statistic"})
MAX_PLAN_BYTES = 1 << 20  # a plan file is a page of text; a larger file is not one


@dataclass(frozen=True)
class PartSpec:
    """One statistic of a plan file: its ``kind`` and its table's keys (``settings``: public values only)."""

    kind: StatisticKind
    settings: Mapping[str, Any] = field(hash=False)

    @property
    def weight(self) -> float:
        return float(self.settings.get("weight", 1.0))

    @property
    def lock(self) -> float | None:
        lock = self.settings.get("lock")
        return None if lock is None else float(lock)


@dataclass(frozen=True)
class PlanSpec:
    """A release plan as its file states it (module docstring), checked."""

    dataset: str
    source: str
    epsilon: float
    delta: float
    neighbours: Neighbours
    records_per_person: int
    person_column: str | None
    parts: tuple[PartSpec, ...]

    @property
    def privacy(self) -> PartPrivacy:
        return PartPrivacy(self.epsilon, self.delta, self.neighbours, self.records_per_person, self.person_column)

    def unit_words(self) -> str:
        """The plan's privacy unit in words (:func:`dpgui.core.privacy_unit.privacy_unit_words`): enforced by the
        person-ID column, or declared."""
        return privacy_unit_words(self.privacy.unit(), self.records_per_person)

    @property
    def unit(self) -> dict[str, Any]:
        """The privacy unit as a plan's bundle records it (for a plan made like it)."""
        return {"neighbours": str(self.neighbours), "records_per_person": self.records_per_person,
                "person_column": self.person_column}

    @classmethod
    def like(cls, manifest: Mapping[str, Any], dataset: str, source: str, epsilon: float,
             delta: float = 0.0) -> PlanSpec:
        """A new plan with the statistics, public parameters, weights and privacy unit of the release plan whose
        (verified) ``manifest`` is given, on new data: ``dataset`` (a new identity in the ledger), ``source`` and
        a new budget (ε, δ). A DataError for a manifest that is not a release plan's; the new source's columns
        are checked when it is opened (:func:`plan_items`). Nothing read."""
        if manifest.get("kind") != ReleaseKind.PLAN:
            raise DataError("the manifest is not a release plan's", "give the manifest of a bundle made by "
                            "'dpgui release --spec' (NAME.manifest.json)")
        unit = manifest["privacy"].get("unit")
        if not isinstance(unit, dict) or not all(isinstance(p.get("settings"), dict) and p["settings"]
                                                 for p in manifest["parts"]):
            raise DataError("the release plan's manifest does not record its plan file's settings (it was not made "
                            "from a plan file)", "write the plan file by hand (docs/release-plans.md)")
        data: dict[str, Any] = {"dataset": dataset, "source": source, "epsilon": epsilon, "delta": delta,
                                "neighbours": unit["neighbours"], "records_per_person": unit["records_per_person"],
                                "statistic": [{"kind": part["kind"], **part["settings"]} for part in manifest["parts"]]}
        if unit.get("person_column") is not None:
            data["person_column"] = unit["person_column"]
        return cls.from_dict(data, "the plan made like the manifest")

    @classmethod
    def read(cls, path: str | Path) -> PlanSpec:
        """The plan file at ``path`` (UTF-8 TOML); a DataError naming the file for one that cannot be read
        or parsed, a ParameterError naming the statistic and key for a bad value. Relative source paths are
        read from the plan file's folder."""
        file = Path(path)
        try:
            if file.stat().st_size > MAX_PLAN_BYTES:
                raise DataError(f"the release plan file {file.name} is larger than {MAX_PLAN_BYTES // 1024} KB",
                                "give the plan file (a page of TOML), not the data")
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise DataError(f"the release plan file {file.name} cannot be read ({err})",
                            "check the path, or save the plan as UTF-8 text") from None
        spec = cls.from_toml(text, file.name)
        source = Path(spec.source)
        if "://" not in spec.source and not source.is_absolute():
            spec = PlanSpec(spec.dataset, str(file.parent / source), spec.epsilon, spec.delta, spec.neighbours,
                            spec.records_per_person, spec.person_column, spec.parts)
        return spec

    @classmethod
    def from_toml(cls, text: str, name: str = "the release plan") -> PlanSpec:
        """The plan in ``text`` (TOML); errors as :meth:`read`."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise DataError(f"{name} is not valid TOML ({err})", _FIX) from None
        return cls.from_dict(data, name)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], name: str = "the release plan") -> PlanSpec:
        unknown = sorted(set(data) - _TOP_KEYS)
        if unknown:
            raise ParameterError(f"{name}: {_key(unknown[0])} is not a setting of a release plan", _FIX)
        dataset = _text(data, name, "dataset")
        source = _text(data, name, "source")
        epsilon = _number(data, name, "epsilon", positive=True)
        delta = _number(data, name, "delta", default=0.0)
        if not 0 <= delta < 1:
            raise ParameterError(f"{name}: 'delta' must be in [0, 1)", _FIX)
        person = data.get("person_column")
        neighbours_text = data.get("neighbours", str(Neighbours.ADDREMOVE if person is not None else Neighbours.CHANGE))
        if neighbours_text not in tuple(Neighbours):
            raise ParameterError(f"{name}: 'neighbours' must be {' or '.join(Neighbours)}", _FIX)
        records = data.get("records_per_person", 1)
        if isinstance(records, bool) or not isinstance(records, int) or records < 1:
            raise ParameterError(f"{name}: 'records_per_person' must be a whole number ≥ 1", _FIX)
        if person is not None and (not isinstance(person, str) or not person.strip()):
            raise ParameterError(f"{name}: 'person_column' must be a column name", _FIX)
        if person is not None and neighbours_text == Neighbours.CHANGE:
            raise ParameterError(f"{name}: a person-ID column protects one person added or removed, and 'neighbours' "
                                 "is \"change\" (the number of rows kept depends on each person's rows, so it is not "
                                 "public)", "write neighbours = \"addremove\" (the default with a person_column)")
        tables = data.get("statistic")
        if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
            raise ParameterError(f"{name} lists no statistic", "add one [[statistic]] table per statistic")
        parts = tuple(_part(table, f"{name}, statistic {i + 1}") for i, table in enumerate(tables))
        spec = cls(dataset, source, epsilon, delta, Neighbours(neighbours_text), records, person, parts)
        for i, part in enumerate(parts):
            PART_CODECS[part.kind].check(part.settings, f"{name}, statistic {i + 1}", spec.privacy)
        return spec

    def to_dict(self) -> dict[str, Any]:
        """The plan as its file's tables (:meth:`to_toml`)."""
        data: dict[str, Any] = {"dataset": self.dataset, "source": self.source, "epsilon": self.epsilon,
                                "delta": self.delta, "neighbours": str(self.neighbours),
                                "records_per_person": self.records_per_person}
        if self.person_column is not None:
            data["person_column"] = self.person_column
        data["statistic"] = [{"kind": str(p.kind), **dict(p.settings)} for p in self.parts]
        return data

    def to_toml(self) -> str:
        """The plan as a TOML file that :meth:`from_toml` reads back to an equal plan (the window's Save)."""
        lines = [f"{k} = {_toml_value(v)}" for k, v in self.to_dict().items() if k != "statistic"]
        for part in self.parts:
            lines += ["", "[[statistic]]", f"kind = {_toml_value(str(part.kind))}"]
            lines += [f"{k} = {_toml_value(v)}" for k, v in part.settings.items()]
        return "\n".join(lines) + "\n"

    def titles(self) -> tuple[str, ...]:
        """Each statistic's title in words ("CDF of distance"), its ``name`` if it has one; nothing read."""
        return tuple(str(p.settings.get("name") or STATISTICS[p.kind].release_title(PART_CODECS[p.kind].subject(p.settings)))
                     for p in self.parts)

    def columns(self) -> tuple[str, ...]:
        """Every column the plan reads (the person column included), in the order first named."""
        names: list[str] = []
        for part in self.parts:
            names += [c for c in PART_CODECS[part.kind].columns(part.settings) if c not in names]
        if self.person_column is not None and self.person_column not in names:
            names.append(self.person_column)
        return tuple(names)


def check_columns(spec: PlanSpec, data: DataSource) -> None:
    """Refuse, naming the statistic, a source without a column the plan reads or whose column a statistic needs
    as numbers holds something else (a plan made like last year's on a source whose schema changed). Reads the
    source's column names and kinds only (its schema, no value). O(columns)."""
    kinds = {column.name: column.kind for column in data.columns()}
    for i, (part, title) in enumerate(zip(spec.parts, spec.titles())):
        codec = PART_CODECS[part.kind]
        for column in codec.columns(part.settings):
            if column not in kinds:
                raise DataError(f"statistic {i + 1} ({title}): the source has no column {column[:60]!r}",
                                "choose the source that has it, or change the plan")
        for column in codec.numeric_columns(part.settings):
            if kinds[column] != "numeric":
                raise DataError(f"statistic {i + 1} ({title}): column {column[:60]!r} of the source holds "
                                f"{kinds[column]} values, not numbers", "choose the source whose column holds "
                                "numbers (a changed column type is not the same statistic), or change the plan")
    if spec.person_column is not None and spec.person_column not in kinds:
        raise DataError(f"the source has no person-ID column {spec.person_column[:60]!r}",
                        "choose the source that has it, or change the plan's person_column")


def plan_items(spec: PlanSpec, data: DataSource | None = None) -> list[PlanItem]:
    """Every statistic of ``spec`` as a plan item (its part, how its spend is made, its subject), in order.
    ``data``: the open data source, for a statistic that reads it to plan (a hierarchy whose categories are
    declared public reads its level columns' paths: CONFIDENTIAL counts, used for the node list only); a
    DataError names the statistic that needs it when None. The source's columns are checked first
    (:func:`check_columns`). O(parts), plus such a read."""
    if data is not None:
        check_columns(spec, data)
    return [replace(part_codec(part.kind).item(part.settings, spec.privacy, data, f"statistic {i + 1}"),
                    settings=dict(part.settings)) for i, part in enumerate(spec.parts)]


def _part(table: Mapping[str, Any], where: str) -> PartSpec:
    kind = table.get("kind")
    if kind not in tuple(StatisticKind):
        raise ParameterError(f"{where}: 'kind' must be {' or '.join(StatisticKind)}", _FIX)
    settings = {k: v for k, v in table.items() if k != "kind"}
    check_common(settings, where)
    return PartSpec(StatisticKind(kind), settings)


def _key(name: str) -> str:
    return repr(name[:40])


def _text(data: Mapping[str, Any], where: str, name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ParameterError(f"{where}: {_key(name)} must be a non-empty text", _FIX)
    return value


def _number(data: Mapping[str, Any], where: str, name: str, *, positive: bool = False,
            default: float | None = None) -> float:
    value = data.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or (
            positive and value <= 0):
        raise ParameterError(f"{where}: {_key(name)} must be a {'number > 0' if positive else 'number'}", _FIX)
    return float(value)


def _toml_value(value: Any) -> str:
    """A TOML value of a plan file: text, whole or real numbers, booleans, lists of them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, Sequence):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"a plan file holds no {type(value).__name__}")
