"""Project files (``.dpgui``): the officer's whole workspace as JSON, and its autosaves.

A project holds what the officer chose and what was published, never the confidential data:

* the data file's path (absolute, as opened), the column, the public bounds, K and the
  missing-value policy, the ledger's name for the data set;
* the plan (:meth:`Plan.to_json`), the consistency method and the settings of the plan step (the
  branching, the objective, the locked levels, δ and the noise asked for);
* every release of the workspace as its **released** noisy node counts per tree level
  (``Release.levels``: differentially private outputs, public) plus its plan, bounds and
  consistency. The estimates, standard errors and final cumulative counts are recomputed from
  them on load (:func:`dpgui.core.mechanism.release_from_levels`, deterministic), so a restored
  release shows exactly the numbers that were published.

A project file is not evidence of a release: whether a release's noise was secure, and whether
it may be signed, comes from the budget ledger's record of it
(:func:`dpgui.report.cdf.publish.authenticate_release`), never from the file.

No histogram, true count or fingerprint of the data is ever written: only the values above.

Format (``version`` 1), one JSON object::

    {"format": "dpgui-project", "version": 1, "app_version": "0.1.0", "saved_utc": "…",
     "data_path": "/abs/data.csv", "source": {…SourceSpec.to_json()…}, "column": "age", "lower": 0.0, "upper": 100.0, "bins": 100,
     "missing": "drop", "dataset": "", "plan": {…Plan.to_json()…} | null, "consistency": "l2",
     "branching": "auto", "objective": "total", "locked_levels": [2], "delta": 1e-9, "noise": "auto",
     "autosave_of": "",
     "releases": [{"release_id": "…", "created_utc": "…", "column": "age", "missing": "drop",
                   "lower": 0.0, "upper": 100.0, "consistency": "l2",
                   "plan": {…}, "levels": [[N], [c, c, …], …]}]}

``lower``, ``upper``, ``bins`` and ``missing`` may be ``null`` (not chosen yet) and ``column``
``""``: a workspace can be saved half-way. ``locked_levels`` are the tree levels whose budget the
officer locked in the plan step (their budgets are the plan's).
``delta`` is the δ of the plan step (0: pure ε-DP) and ``noise`` the noise asked for ("auto",
"laplace" or "gaussian"; the plan says which noise it uses). ``missing_impute`` (optional) is the value missing values are
counted as (the plan holds it too), ``focus`` (optional) the region chosen in the plan step
(``{"region": "lower", "from": null, "to": null}``, or ``"between"`` with its ends); without them the
neighbour model's rule applies and the plan is for the whole range.
``mode`` (after ``releases``) is the statistic the window showed (``"cdf"``, ``"hierarchy"``, ``"counts"``).
Each further statistic has its part after it (its choices and its releases as their released values), read
and written by its codec (:class:`~dpgui.report.project_sections.SectionCodec`, one line of
:data:`SECTION_CODECS` each): ``hierarchy`` and ``hierarchy_releases``
(:mod:`dpgui.report.hierarchy.project`), then ``counts`` and ``counts_releases``
(:mod:`dpgui.report.counts.project`). A damaged part is left out with a message
(``project.section(kind).problem``) and the rest of the project still opens; when it is the part of the
project's mode, or the mode itself is damaged (:attr:`Project.mode_problem`), the project opens in the CDF mode.
``source`` (optional: without it the data is the file at ``data_path``) is where the data lives, as
:meth:`dpgui.data.source_spec.SourceSpec.to_json` (a file with its CSV dialect, or a database URL with a
table or query — never a password: a spec holds none); for a database ``data_path`` is only its
name for messages.
A release's ``"padding": "known_zeros"`` says its GLS estimate used the padding leaves as known
zeros (docs/engine.md, "The estimator"); one published with them unknown has no mark, and is recomputed
with that estimator, so that it shows the numbers that were published.
Files written by earlier versions are read through :func:`dpgui.report.migrations.upgrade_project`
(which also refuses a file of a newer version); what follows the upgrade reads today's shape only.
Writes are atomic (temporary file, fsync, rename).
"""

from __future__ import annotations

import json
import math
import os
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from dpgui import __version__
from dpgui.core.focus import FocusChoice
from dpgui.core.mechanism import Release, release_from_levels
from dpgui.core.missing import MISSING_POLICIES
from dpgui.core.plan import Plan, check_delta
from dpgui.core.quantiles import WholeNumbers
from dpgui.core.tree import MIN_BINS
from dpgui.errors import DataError, DpguiError
from dpgui.report.files import write_text_atomic
from dpgui.report.migrations import PADDING_KNOWN_ZEROS, PADDING_UNKNOWN, PROJECT_VERSION, upgrade_project
from dpgui.report.counts.project import COUNTS_SECTION
from dpgui.report.grouped_cdf.project import GROUPED_CDF_SECTION
from dpgui.report.hierarchy.project import HIERARCHY_SECTION, check_source_record
from dpgui.report.project_sections import ProjectSection, SectionCodec
from dpgui.vocabulary import AUTO, CDF_NOISES, CdfConsistency, Objective, SourceKind, StatisticKind, choices

PROJECT_FORMAT = "dpgui-project"
PROJECT_SUFFIX = ".dpgui"
_MAX_COUNT = 2**62  # released node counts are int64 in the engine

#: every statistic's part of a project beside the CDF's own fields, in the order the parts are written
SECTION_CODECS: dict[StatisticKind, SectionCodec] = {
    StatisticKind.HIERARCHY: HIERARCHY_SECTION,
    StatisticKind.COUNTS: COUNTS_SECTION,
    StatisticKind.GROUPED_CDF: GROUPED_CDF_SECTION,
}

__all__ = [
    "PROJECT_FORMAT", "PROJECT_VERSION", "PROJECT_SUFFIX", "SECTION_CODECS", "MissingDataFile", "Project",
    "ProjectRelease", "project_data_file", "load_project", "project_from_json", "project_to_json", "save_project",
]


def _utc_text(moment: datetime | str) -> str:
    if isinstance(moment, str):
        return _parse_utc(moment, "created_utc", "a release").isoformat()
    if moment.tzinfo is None:
        raise DataError("a release time has no time zone", "give a UTC time (datetime.now(timezone.utc))")
    return moment.astimezone(timezone.utc).isoformat()


def _parse_utc(text: str, name: str, where: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise DataError(f"{where}: '{name}' is not a date and time: {text!r}",
                        "the file is damaged; open another project or save it again") from None
    if moment.tzinfo is None:
        raise DataError(f"{where}: '{name}' has no time zone: {text!r}", "the file is damaged; save it again")
    return moment


@dataclass(frozen=True)
class ProjectRelease:
    """One published release: its plan, bounds and released noisy node counts (public values only).

    ``levels[l]`` are the released counts of tree level ``l`` (root first; padded leaves included),
    or ``None`` for a level that was not released. Under the change model ``levels[0]`` is the
    public total N. There is no "secure" flag: the budget ledger says that (see the module doc).
    """

    release_id: str
    created_utc: str  # ISO 8601 with time zone (UTC)
    lower: float
    upper: float
    consistency: str
    plan: dict[str, Any]  # Plan.to_json()
    levels: tuple[tuple[int, ...] | None, ...]
    column: str = ""
    missing: str = ""
    #: where the data was read and who counted it (:meth:`dpgui.data.source.DataSource.public_record`; no secret
    #: in it), as the ledger recorded it; None: not recorded
    source: dict[str, Any] | None = None
    #: GLS used the padding leaves as known zeros ("padding": "known_zeros"); False: the release was published
    #: with them unknown, and is recomputed with that estimator
    padding_known: bool = True
    #: why the column is known to hold whole numbers ("stated" or "type", :class:`WholeNumbers`); None: not known
    whole_numbers: WholeNumbers | None = None

    @classmethod
    def from_release(cls, release: Release, release_id: str, created_utc: datetime | str,
                     column: str = "", missing: str = "", source: dict[str, Any] | None = None,
                     whole_numbers: WholeNumbers | None = None) -> ProjectRelease:
        """Record ``release`` (its released levels only: the estimates are recomputed on load)."""
        levels = tuple(None if lvl is None else tuple(np.asarray(lvl, dtype=np.int64).tolist())
                       for lvl in release.levels)
        return cls(str(release_id), _utc_text(created_utc), float(release.lower), float(release.upper),
                   release.consistency, release.plan.to_json(), levels, column, missing,
                   None if source is None else dict(source), release.padding_known, whole_numbers)

    @property
    def created(self) -> datetime:
        return datetime.fromisoformat(self.created_utc)

    def plan_object(self) -> Plan:
        return Plan.from_json(self.plan)

    def to_release(self) -> Release:
        """The :class:`Release` again: same released levels, same (recomputed) estimates and CDF.

        Marked ``secure = False`` (not confirmed): :func:`dpgui.report.cdf.publish.authenticate_release`
        returns it marked secure only if the budget ledger's record says so."""
        levels = [None if lvl is None else np.asarray(lvl, dtype=np.int64) for lvl in self.levels]
        return release_from_levels(self.plan_object(), levels, self.lower, self.upper, self.consistency, False,
                                   padding_known=self.padding_known)


@dataclass(frozen=True)
class Project:
    """The workspace: data file, column settings, plan, and the releases made in it.

    ``saved_utc``, ``app_version`` and ``autosave_of`` describe the file, not the workspace: they
    are left out of ``==`` so two saves of the same workspace compare equal. ``sections``: each further
    statistic's part (:meth:`section`); an empty part and an absent one compare equal, and so do two parts
    that differ only in their ``problem``.
    """

    data_path: str
    source: dict[str, Any] | None = None  # SourceSpec.to_json() (no secret in it); None: the file at data_path
    column: str = ""
    lower: float | None = None
    upper: float | None = None
    bins: int | None = None
    missing: str | None = None
    dataset: str = ""
    plan: dict[str, Any] | None = None  # Plan.to_json(); rebuild with plan_object()
    consistency: str = CdfConsistency.L2
    branching: str = AUTO  # the plan step's branching setting ("auto", "16", "4x16x16")
    objective: str = Objective.TOTAL
    locked_levels: tuple[int, ...] = ()  # levels whose budget is locked in the plan step (sorted)
    delta: float = 0.0  # the plan step's δ (0: pure ε-DP)
    noise: str = AUTO  # the noise asked for: "auto", "laplace" or "gaussian"
    missing_impute: float | None = None  # the value missing values are counted as (None: the neighbour model's rule)
    focus: dict[str, Any] | None = None  # the region chosen in the plan step (FocusChoice.to_json()); None: everywhere
    whole_numbers: WholeNumbers | None = None  # the data step: the column holds whole numbers (stated, or its type)
    releases: tuple[ProjectRelease, ...] = ()
    mode: StatisticKind = StatisticKind.CDF  # the mode the window was in
    #: each further statistic's choices and releases (made or restored in this workspace, oldest first)
    sections: Mapping[StatisticKind, ProjectSection] = field(default_factory=dict, compare=False)
    format: str = PROJECT_FORMAT
    version: int = PROJECT_VERSION
    saved_utc: str = field(default="", compare=False)
    app_version: str = field(default=__version__, compare=False)
    autosave_of: str = field(default="", compare=False)  # autosaves: the project file being edited, if any
    mode_problem: str = field(default="", compare=False)  # why a damaged mode was read as the CDF's
    #: what ``==`` compares of ``sections``: the parts that hold something, by kind
    _kept_sections: tuple[tuple[StatisticKind, ProjectSection], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        sections = MappingProxyType(dict(self.sections))  # read-only, so what ``==`` compares stays true
        kept = sorted(((kind, part) for kind, part in sections.items() if part != ProjectSection()),
                      key=lambda item: item[0])
        object.__setattr__(self, "sections", sections)
        object.__setattr__(self, "_kept_sections", tuple(kept))

    def section(self, kind: StatisticKind) -> ProjectSection:
        """The part of the statistic ``kind`` (an empty one if the project holds none)."""
        return self.sections.get(kind, ProjectSection())

    def plan_object(self) -> Plan | None:
        return None if self.plan is None else Plan.from_json(self.plan)

    @property
    def name(self) -> str:
        """A short name for messages: the data file's name (a database: its table or query)."""
        if self.source is not None and self.source.get("kind") != SourceKind.FILE:
            return self.data_path
        return Path(self.data_path).name

    def saved(self) -> datetime | None:
        return datetime.fromisoformat(self.saved_utc) if self.saved_utc else None


# --------------------------------------------------------------------------------------------- JSON

def _release_json(r: ProjectRelease, levels: Any) -> dict[str, Any]:
    return {"release_id": r.release_id, "created_utc": r.created_utc, "column": r.column, "missing": r.missing,
            "lower": r.lower, "upper": r.upper, "consistency": r.consistency,
            "plan": r.plan, "levels": levels, **({} if r.source is None else {"source": r.source}),
            **({"padding": PADDING_KNOWN_ZEROS} if r.padding_known else {}),
            **({} if r.whole_numbers is None else {"whole_numbers": str(r.whole_numbers)})}


_JSON_BLOCK = 1 << 16  # numbers per json.dumps call in _compact_numbers


def _compact_numbers(values: tuple[int, ...]) -> str:
    """``json.dumps(values, separators=(",", ":"))``, made in blocks of 2¹⁶ numbers: one call on a
    million numbers holds the GIL for ~0.1 s (the autosave runs on a worker beside the GUI
    thread); a block holds it for a few ms. The same text. O(len)."""
    if len(values) <= _JSON_BLOCK:
        return json.dumps(values, separators=(",", ":"))
    blocks = (json.dumps(values[i:i + _JSON_BLOCK], separators=(",", ":"))[1:-1]
              for i in range(0, len(values), _JSON_BLOCK))
    return "[" + ",".join(blocks) + "]"


def project_to_json(project: Project) -> str:
    """The project as JSON text: indented, except each release level's counts, one level per line."""
    token = f"@@levels-{uuid.uuid4().hex}-"
    compact: list[str] = []

    def one_line(values: list[Any]) -> str:
        compact.append(json.dumps(values, separators=(",", ":"), ensure_ascii=False))
        return f"{token}{len(compact) - 1}"

    def placeholder(levels: tuple[tuple[int, ...] | None, ...]) -> list[str]:
        names = []
        for lvl in levels:
            names.append(f"{token}{len(compact)}")
            compact.append("null" if lvl is None else _compact_numbers(lvl))
        return names

    document = {
        "format": PROJECT_FORMAT, "version": PROJECT_VERSION, "app_version": project.app_version,
        "saved_utc": project.saved_utc, "data_path": project.data_path,
        **({} if project.source is None else {"source": project.source}), "column": project.column,
        "lower": project.lower, "upper": project.upper, "bins": project.bins, "missing": project.missing,
        "dataset": project.dataset, "plan": project.plan, "consistency": project.consistency,
        "branching": project.branching, "objective": project.objective,
        "locked_levels": list(project.locked_levels), "delta": project.delta, "noise": project.noise,
        **({} if project.missing_impute is None else {"missing_impute": project.missing_impute}),
        **({} if project.focus is None else {"focus": project.focus}),
        **({} if project.whole_numbers is None else {"whole_numbers": str(project.whole_numbers)}),
        "autosave_of": project.autosave_of,
        "releases": [_release_json(r, placeholder(r.levels)) for r in project.releases],
        "mode": str(project.mode),
        **{key: value for kind, codec in SECTION_CODECS.items()
           for key, value in codec.to_json(project.section(kind), one_line).items()},
    }
    try:
        text = json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False)
    except ValueError as err:  # a NaN or infinity slipped in: refuse rather than write invalid JSON
        raise DataError(f"the project cannot be saved: {err}", "check the bounds and the plan") from None
    if compact:
        text = re.sub(f'"{re.escape(token)}(\\d+)"', lambda m: compact[int(m.group(1))], text)
    return text + "\n"


class _Reader:
    """Typed access to one JSON object with messages that name the file and the field."""

    def __init__(self, data: Any, where: str, source: str) -> None:
        if not isinstance(data, dict):
            raise DataError(f"{where} is not a JSON object", "the file is damaged; open another project")
        self.data, self.where, self.source = data, where, source

    def _fail(self, name: str, wanted: str, value: Any) -> DpguiError:
        shown = json.dumps(value, ensure_ascii=False)
        shown = shown if len(shown) <= 40 else shown[:37] + "…"
        return DataError(f"{self.where}: '{name}' must be {wanted}, got {shown}",
                         "the file is damaged or was edited by hand; open another project or save it again")

    def get(self, name: str, default: Any = ...) -> Any:
        if name not in self.data:
            if default is not ...:
                return default
            raise DataError(f"{self.where} has no '{name}' field",
                            "the file is damaged or not a complete dpgui project; open another project")
        return self.data[name]

    def text(self, name: str, default: Any = ..., choices: Sequence[str] | None = None,
             nullable: bool = False) -> Any:
        value = self.get(name, default)
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            raise self._fail(name, "text" if choices is None else " or ".join(repr(c) for c in choices), value)
        if choices is not None and value not in choices:
            raise self._fail(name, " or ".join(repr(c) for c in choices), value)
        return value

    def number(self, name: str, nullable: bool = False) -> float | None:
        value = self.get(name)
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self._fail(name, "a number" + (" or null" if nullable else ""), value)
        return float(value)

    def integer(self, name: str, minimum: int, nullable: bool = False, default: Any = ...) -> int | None:
        value = self.get(name, default)
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self._fail(name, f"a whole number ≥ {minimum}" + (" or null" if nullable else ""), value)
        return value

    def delta(self, name: str) -> float:
        """δ with 0 ≤ δ < 1."""
        value = self.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self._fail(name, "a number with 0 ≤ δ < 1", value)
        try:
            return check_delta(value)
        except DpguiError:
            raise self._fail(name, "a number with 0 ≤ δ < 1", value) from None

    def plan(self, name: str, nullable: bool) -> dict[str, Any] | None:
        value = self.get(name)
        if value is None and nullable:
            return None
        if not isinstance(value, dict):
            raise self._fail(name, "a plan (a JSON object)" + (" or null" if nullable else ""), value)
        try:
            Plan.from_json(value)
        except DpguiError as err:
            raise DataError(f"{self.where}: the plan is not valid ({err.problem})",
                            "the file is damaged or was edited by hand; open another project") from None
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            detail = f"no '{err.args[0]}' field" if isinstance(err, KeyError) else str(err)
            raise DataError(f"{self.where}: the plan is not valid ({detail})",
                            "the file is damaged or was edited by hand; open another project") from None
        return value

    def locked_levels(self, name: str, plan: dict[str, Any] | None) -> tuple[int, ...]:
        """Sorted distinct levels; each must be a level of ``plan`` that gets noise (none without a plan)."""
        value = self.get(name)
        plan_object = None if plan is None else Plan.from_json(plan)
        first = 0 if plan_object is None else plan_object.privacy.first_noised_level()
        height = -1 if plan_object is None else plan_object.shape.height
        if (not isinstance(value, list) or len(set(map(repr, value))) != len(value)
                or not all(type(v) is int and first <= v <= height for v in value)):
            wanted = (f"a list of distinct tree levels from {first} to {height}" if plan_object is not None
                      else "an empty list (the project has no plan)")
            raise self._fail(name, wanted, value)
        return tuple(sorted(value))


def _missing_impute(reader: _Reader) -> float | None:
    """The value missing values are counted as (absent: None, the neighbour model's rule)."""
    if "missing_impute" not in reader.data:
        return None
    return reader.number("missing_impute", nullable=True)


def _whole_numbers(reader: _Reader) -> WholeNumbers | None:
    """Why the column holds whole numbers ("stated" or "type"); None when the file does not say."""
    value = reader.text("whole_numbers", None, choices=[w.value for w in WholeNumbers], nullable=True)
    return None if value is None else WholeNumbers(value)


def _focus(reader: _Reader) -> dict[str, Any] | None:
    """The region chosen in the plan step (:meth:`FocusChoice.to_json`), checked; None: everywhere."""
    value = reader.get("focus", None)
    if value is None:
        return None
    try:
        return FocusChoice.from_json(value).to_json()
    except DpguiError:
        raise reader._fail("focus", "a region such as {\"region\": \"lower\"}", value) from None


def _check_bounds(reader: _Reader, lower: float | None, upper: float | None) -> None:
    if lower is not None and upper is not None and not lower < upper:
        raise DataError(f"{reader.where}: the lower bound {lower:g} is not below the upper bound {upper:g}",
                        "the file is damaged or was edited by hand; open another project")


def _levels(reader: _Reader, plan: Plan) -> tuple[tuple[int, ...] | None, ...]:
    raw = reader.get("levels")
    shape = plan.shape
    if not isinstance(raw, list) or len(raw) != shape.height + 1:
        raise reader._fail("levels", f"a list of {shape.height + 1} levels (root first)", raw)
    released = plan.released()
    out: list[tuple[int, ...] | None] = []
    for level, values in enumerate(raw):
        nodes = shape.nodes_at_level(level)
        if values is None:
            if released[level]:
                raise DataError(f"{reader.where}: level {level} of the release is missing",
                                "the file is damaged; open another project")
            out.append(None)
            continue
        if not released[level]:
            raise DataError(f"{reader.where}: level {level} has counts but its plan gives it no budget",
                            "the file is damaged or was edited by hand; open another project")
        if (not isinstance(values, list) or len(values) != nodes
                or not all(type(v) is int and -_MAX_COUNT < v < _MAX_COUNT for v in values)):
            raise reader._fail(f"levels[{level}]", f"a list of {nodes:,} whole numbers", values)
        out.append(tuple(values))
    if plan.privacy.root_public and out[0] is not None and out[0][0] < 0:
        raise DataError(f"{reader.where}: the public total N is negative", "the file is damaged")
    return tuple(out)


def _release_from_json(data: Any, where: str, source: str) -> ProjectRelease:
    reader = _Reader(data, where, source)
    plan_json = reader.plan("plan", nullable=False)
    assert plan_json is not None
    plan = Plan.from_json(plan_json)
    lower, upper = reader.number("lower"), reader.number("upper")
    _check_bounds(reader, lower, upper)
    created = reader.text("created_utc")
    _parse_utc(created, "created_utc", where)
    assert lower is not None and upper is not None
    return ProjectRelease(
        release_id=reader.text("release_id"), created_utc=created, lower=lower, upper=upper,
        consistency=reader.text("consistency", choices=choices(*CdfConsistency)), plan=plan_json,
        levels=_levels(reader, plan), column=reader.text("column", ""), missing=reader.text("missing", ""),
        source=_release_source(reader),
        padding_known=reader.text("padding", choices=(PADDING_KNOWN_ZEROS, PADDING_UNKNOWN)) == PADDING_KNOWN_ZEROS,
        whole_numbers=_whole_numbers(reader),
    )


def _release_source(reader: _Reader) -> dict[str, Any] | None:
    value = reader.get("source", None)
    if value is not None and not check_source_record(value):
        raise reader._fail("source", "a data source record (kind, engine, …)", value)
    return None if value is None else dict(value)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def project_from_json(text: str, source: str = "the project") -> Project:
    """Read and check a project; every problem is a :class:`DataError` naming ``source`` and the field."""
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as err:
        detail = f" (line {err.lineno}: {err.msg})" if isinstance(err, json.JSONDecodeError) else ""
        raise DataError(f"{source} is not a dpgui project: it is not valid JSON{detail}",
                        f"open a {PROJECT_SUFFIX} file saved by dpgui") from None
    if not isinstance(data, dict) or data.get("format") != PROJECT_FORMAT:
        raise DataError(f"{source} is not a dpgui project (no \"format\": \"{PROJECT_FORMAT}\" in it)",
                        f"open a {PROJECT_SUFFIX} file saved by dpgui")
    version = _Reader(data, source, source).integer("version", 1)
    assert version is not None
    data = upgrade_project(data, version, source)
    reader = _Reader(data, source, source)
    data_path = reader.text("data_path")
    if not data_path.strip():
        raise reader._fail("data_path", "the path of the data file", data_path)
    source_record = data.get("source")  # checked in full by SourceSpec.from_json where the data is opened
    if source_record is not None and not (isinstance(source_record, dict)
                                          and source_record.get("kind") in tuple(SourceKind)
                                          and isinstance(source_record.get("location"), str)):
        raise reader._fail("source", "a data source (kind, location, …)", source_record)
    lower, upper = reader.number("lower", nullable=True), reader.number("upper", nullable=True)
    _check_bounds(reader, lower, upper)
    bins = reader.integer("bins", MIN_BINS, nullable=True)
    plan = reader.plan("plan", nullable=True)
    raw_releases = reader.get("releases")
    if not isinstance(raw_releases, list):
        raise reader._fail("releases", "a list of releases", raw_releases)
    releases = tuple(_release_from_json(item, f"{source}, release {i + 1}", source)
                     for i, item in enumerate(raw_releases))
    saved = reader.text("saved_utc", "")
    if saved:
        _parse_utc(saved, "saved_utc", source)
    sections = _sections(data, source)
    mode, mode_problem = _mode(reader)
    if sections.get(mode, ProjectSection()).problem:  # its part was left out: the CDF's steps are shown
        mode = StatisticKind.CDF
    return Project(
        data_path=data_path, source=source_record, column=reader.text("column"), lower=lower, upper=upper, bins=bins,
        missing=reader.text("missing", choices=MISSING_POLICIES, nullable=True),
        dataset=reader.text("dataset", ""), plan=plan,
        consistency=reader.text("consistency", choices=choices(*CdfConsistency)),
        branching=reader.text("branching", AUTO),
        objective=reader.text("objective", Objective.TOTAL, choices=choices(*Objective)),
        locked_levels=reader.locked_levels("locked_levels", plan), delta=reader.delta("delta"),
        noise=reader.text("noise", choices=choices(AUTO, *CDF_NOISES)), missing_impute=_missing_impute(reader),
        focus=_focus(reader), whole_numbers=_whole_numbers(reader), releases=releases, version=PROJECT_VERSION,
        saved_utc=saved, app_version=reader.text("app_version", ""),
        autosave_of=reader.text("autosave_of", ""), mode=mode, sections=sections, mode_problem=mode_problem,
    )


def _sections(data: dict[str, Any], source: str) -> dict[StatisticKind, ProjectSection]:
    """Every statistic's part (:data:`SECTION_CODECS`); a damaged one is left out with its message, and the rest
    of the project still opens."""
    sections = {}
    for kind, codec in SECTION_CODECS.items():
        try:
            sections[kind] = codec.read(data, source)
        except DpguiError as err:
            sections[kind] = ProjectSection(problem=codec.left_out(err.problem))
    return sections


def _mode(reader: _Reader) -> tuple[StatisticKind, str]:
    """The statistic the window showed, and why it is the CDF's if the file's ``mode`` is damaged ("" if not)."""
    try:
        return StatisticKind(reader.text("mode", choices=choices(*StatisticKind))), ""
    except DpguiError as err:
        return StatisticKind.CDF, (f"The project's mode was left out: {err.problem}. The rest of the project was "
                                   "opened, with the CDF's steps shown.")


# --------------------------------------------------------------------------------------------- files

def save_project(project: Project, path: str | os.PathLike[str],
                 now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> Project:
    """Write ``project`` to ``path`` atomically (never a half-written file); returns it with ``saved_utc`` set."""
    target = Path(path)
    if target.is_dir():
        raise DataError(f"cannot save the project as {target}: it is a folder",
                        f"give a file name ending in {PROJECT_SUFFIX}")
    folder = target.parent
    if not folder.is_dir():
        raise DataError(f"cannot save the project: the folder {folder} does not exist", "choose another folder")
    if not os.access(folder, os.W_OK):
        raise DataError(f"cannot save the project: the folder {folder} is not writable", "choose another folder")
    stamped = replace(project, saved_utc=now().astimezone(timezone.utc).isoformat(timespec="seconds"),
                       app_version=__version__)
    try:
        write_text_atomic(target, project_to_json(stamped))
    except OSError as err:
        raise DataError(f"cannot save the project to {target}: {err.strerror or err}",
                        "check the disk space and permissions, or choose another place") from None
    return stamped


def load_project(path: str | os.PathLike[str]) -> Project:
    """Read a project file (see :func:`project_from_json`; the data file is checked separately)."""
    target = Path(path)
    try:
        raw = target.read_bytes()
    except FileNotFoundError:
        raise DataError(f"the project file {target} does not exist", "check the name, or choose another file") from None
    except IsADirectoryError:
        raise DataError(f"{target} is a folder, not a project file", f"choose a {PROJECT_SUFFIX} file") from None
    except OSError as err:
        raise DataError(f"cannot read the project file {target}: {err.strerror or err}",
                        "check its permissions") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(f"'{target.name}' is not a dpgui project: it is not a text file",
                        f"open a {PROJECT_SUFFIX} file saved by dpgui") from None
    return project_from_json(text, source=f"'{target.name}'")


class MissingDataFile(DataError):
    """The project's data file is not where the project says; ``project`` is the project read."""

    def __init__(self, project: Project) -> None:
        self.project = project
        super().__init__(f"the data file of this project was not found: {project.data_path}",
                         "it may have been moved, renamed or be on a drive that is not connected; locate it")


def project_data_file(project: Project) -> Path:
    """The project's data file (or folder of Parquet files), or :class:`MissingDataFile` if it is not there."""
    path = Path(project.data_path)
    if not (path.is_file() or path.is_dir()):
        raise MissingDataFile(project)
    return path
