"""The workspace: what the officer has chosen and released, as one typed, immutable value (no Qt).

:class:`WorkspaceState` is a frozen snapshot: the open data source, step 1's column choice, the
dataset's name in the budget ledger, step 2's privacy settings and plan, and the releases made or
restored. :class:`Workspace` holds the current snapshot and tells its listeners which parts
changed (:meth:`Workspace.subscribe`); the window's pages write what the officer typed into it and
redraw from it, and project files, autosave, the CLI and the self-test read and write the same
object (docs/architecture.md, "The layers").

Values that are not chosen yet, or that do not parse, are ``None`` (the pages show why); the
validated whole of step 1 is :meth:`WorkspaceState.column_settings`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

from dpgui.core.focus import FocusChoice, Region
from dpgui.core.mechanism import Release
from dpgui.core.missing import MISSING_AUTO
from dpgui.core.plan import Plan, PrivacySpec, check_noise
from dpgui.core.quantiles import WholeNumbers
from dpgui.data.csv_dialect import default_dialect
from dpgui.data.file_types import CsvDialect
from dpgui.data.binning import check_bounds
from dpgui.data.source_spec import SourceSpec
from dpgui.data.table import TableInfo
from dpgui.errors import DpguiError, ParameterError
from dpgui.report.cdf.bundle import ReleaseInfo
from dpgui.report.ledger import default_dataset_name
from dpgui.report.project_file import Project, ProjectRelease
from dpgui.vocabulary import AUTO, CDF_NOISES, CdfConsistency, Objective, SourceKind
from dpgui.workspace.results import ResultFigures


@dataclass(frozen=True)
class ColumnSettings:
    """What step 1 decides, validated: which column, its public bounds and K bins (``missing`` is
    "auto": missing values follow the neighbour model, docs/privacy-model.md "Missing values")."""

    path: Path
    column: str
    lower: float
    upper: float
    bins: int
    missing: str
    dataset: str = ""  # the budget ledger's name for this data (default: the file's stem)
    source: SourceSpec | None = None  # where the data lives (None: the file at ``path``)
    whole_numbers: WholeNumbers | None = None  # why the column holds whole numbers (public), None: not known

    @property
    def dataset_id(self) -> str:
        return self.dataset or default_dataset_name(self.path)

    @property
    def spec(self) -> SourceSpec:
        """The data's :class:`~dpgui.data.source_spec.SourceSpec` (a file spec for ``path`` if none was given)."""
        return self.source if self.source is not None else SourceSpec(SourceKind.FILE, str(self.path))


@dataclass(frozen=True)
class SourceChoice:
    """The data chosen and opened in step 1: its table. ``n_rows`` is None while it is counted in the
    background (large CSV). (Not :class:`dpgui.data.source.DataSource`, the open connection that reads rows.)

    ``spec``: where the data lives (None: the file ``table.path``, as opened before sources existed);
    for a database, ``table.path`` is only a name for messages and the dataset's default name (the
    table's name, or "query"), never a file. ``engine``: who counts the data, in words ("this
    computer", "the database (PostgreSQL 15.18)", "Spark (local[2])")."""

    table: TableInfo
    n_rows: int | None
    spec: SourceSpec | None = None
    engine: str = "this computer"

    @property
    def path(self) -> Path:
        return self.table.path

    @property
    def source_spec(self) -> SourceSpec:
        """The :class:`~dpgui.data.source_spec.SourceSpec` of the data (a file spec if none was given)."""
        return self.spec if self.spec is not None else SourceSpec(SourceKind.FILE, str(self.table.path))

    @property
    def read_as(self) -> Path | SourceSpec:
        """What the hierarchy mode reads: the file's path when nothing about how to read it was chosen,
        else the spec (a database, Spark, or a file with a chosen CSV dialect or encoding, which the
        path alone would lose)."""
        spec = self.source_spec
        if spec.kind == SourceKind.FILE and spec.dialect is None and spec.encoding is None:
            return self.table.path
        return spec

    @property
    def unconfirmed_dialect(self) -> CsvDialect | None:
        """The CSV dialect the file's first lines suggest (and the preview shows) when it is not its name's
        default and the officer has not stated one (confirmed or chosen in step 1); else None. A release
        waits for the officer's statement: it reads a file only as stated, or with the default."""
        spec = self.source_spec
        dialect = self.table.dialect
        if spec.kind != SourceKind.FILE or spec.dialect is not None or dialect is None:
            return None
        return None if dialect == default_dialect(self.table.path.name) else dialect

    @property
    def is_file(self) -> bool:
        """Is the data a file (or folder) on this computer?"""
        return self.source_spec.kind == SourceKind.FILE

    def is_numeric(self, column: str) -> bool:
        """Does the table have a number column called ``column``?"""
        return any(c.name == column and c.kind == "numeric" for c in self.table.columns)


@dataclass(frozen=True)
class ColumnChoice:
    """Step 1 as typed: the column ("" if none), the public bounds and K (None while empty or invalid), and
    why the column is known to hold whole numbers (the officer's statement or the file's type; None: not
    known)."""

    column: str = ""
    lower: float | None = None
    upper: float | None = None
    bins: int | None = None
    whole_numbers: WholeNumbers | None = None


@dataclass(frozen=True)
class PlanChoice:
    """Step 2: the privacy settings (None while ε or δ is invalid), the plan (None while none is ready),
    the consistency step, the branching as typed ("auto", "16", "4x16x16"), the planner's objective,
    the levels whose budget the officer locked, whether a plan is being computed, the noise asked
    for (``"auto"``: the planner picks Laplace or Gaussian at the privacy's (ε, δ); ``"laplace"``;
    ``"gaussian"``, which needs δ > 0), and the region the officer needs accurate (``focus``; None while a
    typed one is not valid). The noise the plan uses is ``plan.noise``; the value missing values are
    counted as is ``privacy.impute``. ``person_column``: the person-ID column of the privacy unit (None: the
    records per person are declared), which keeps at most ``privacy.records_per_person`` rows a person."""

    privacy: PrivacySpec | None = None
    plan: Plan | None = None
    consistency: str = "l2"
    branching: str = "auto"
    objective: str = "total"
    locked_levels: tuple[int, ...] = ()
    planning: bool = False
    noise: str = "auto"
    focus: FocusChoice | None = None
    person_column: str | None = None

    def __post_init__(self) -> None:
        check_noise(self.noise, (AUTO, *CDF_NOISES))
        if self.consistency not in tuple(CdfConsistency):
            raise ParameterError(f"unknown consistency step {self.consistency!r}",
                                 f"use one of {', '.join(CdfConsistency)}")
        if self.objective not in tuple(Objective):
            raise ParameterError(f"unknown objective {self.objective!r}", f"use one of {', '.join(Objective)}")
        object.__setattr__(self, "locked_levels", tuple(sorted(set(self.locked_levels))))


@dataclass(frozen=True)
class DataContext:
    """What planning takes from step 1: K (None while not valid), the plots' value axis
    ``[lower, upper)`` with its label (0 to 1, "value" while the bounds are not valid), and the
    file's row count ``n_rows`` (None while unknown; public only where the neighbour model says so)."""

    bins: int | None = None
    lower: float = 0.0
    upper: float = 1.0
    label: str = "value"
    n_rows: int | None = None


@dataclass(frozen=True, eq=False)  # compared by identity: a Release holds numpy arrays
class ShownRelease:
    """The release the results step shows and Export writes: made in this session (``counts``: its
    confidential histogram, for the officer's own comparison, never exported; ``data_path``: the
    file it was read from, which an export must never overwrite) or restored from a project
    (``restored``; ``counts`` and ``data_path`` None). For a restored release, ``confirmed`` says
    whether the budget ledger confirms that it may be signed, and ``problem`` why not."""

    release: Release
    info: ReleaseInfo
    counts: np.ndarray | None = field(default=None, repr=False)
    data_path: Path | None = None
    restored: bool = False
    confirmed: bool = False
    problem: str = ""
    figures: ResultFigures | None = None  # what step 4 shows of it, if made on a worker (None: made when shown)

    @property
    def release_id(self) -> str:
        """The budget ledger's id of the release."""
        return self.info.release_id


@dataclass(frozen=True)
class WorkspaceState:
    """One snapshot of the workspace (see the module doc). Compare two with ``==``."""

    source: SourceChoice | None = None
    column: ColumnChoice = ColumnChoice()
    dataset: str = ""
    plan: PlanChoice = PlanChoice()
    releases: tuple[ProjectRelease, ...] = ()  # made or restored in this workspace, oldest first
    shown: ShownRelease | None = None

    def column_settings(self) -> ColumnSettings | None:
        """Step 1 validated (a number column of the source, bounds checked, K and a dataset name
        given), or None."""
        choice = self.column
        if (self.source is None or not self.source.is_numeric(choice.column) or choice.lower is None
                or choice.upper is None or choice.bins is None or not self.dataset.strip()):
            return None
        try:
            lower, upper = check_bounds(choice.lower, choice.upper)
        except DpguiError:
            return None
        return ColumnSettings(self.source.path, choice.column, lower, upper, int(choice.bins), MISSING_AUTO,
                              self.dataset.strip(), self.source.spec, choice.whole_numbers)

    def data_context(self) -> DataContext:
        """What planning needs from step 1 (see :class:`DataContext`)."""
        choice = self.column
        lower, upper = 0.0, 1.0
        if choice.lower is not None and choice.upper is not None and choice.lower < choice.upper:
            lower, upper = float(choice.lower), float(choice.upper)
        n_rows = None if self.source is None else self.source.n_rows
        return DataContext(choice.bins, lower, upper, choice.column or "value", n_rows)

    def to_project(self, autosave_of: str = "") -> Project | None:
        """The workspace as a project file's contents (public values only), or None without data."""
        if self.source is None:
            return None
        choice, plan = self.column, self.plan
        spec = self.source.source_spec
        if spec.kind == SourceKind.FILE:  # an absolute path, so that the project opens from anywhere
            spec = SourceSpec(SourceKind.FILE, os.path.abspath(spec.location), dialect=spec.dialect, encoding=spec.encoding)
        return Project(
            data_path=spec.location if spec.kind == SourceKind.FILE else spec.display_name(),
            source=None if self.source.spec is None else spec.to_json(), column=choice.column, lower=choice.lower,
            upper=choice.upper, bins=choice.bins, missing=None, dataset=self.dataset.strip(),
            plan=None if plan.plan is None else plan.plan.to_json(), consistency=plan.consistency,
            branching=plan.branching.strip() or "auto", objective=plan.objective,
            locked_levels=() if plan.plan is None else plan.locked_levels,
            releases=self.releases, autosave_of=autosave_of, noise=plan.noise,
            delta=plan.privacy.delta if plan.privacy is not None else (
                plan.plan.privacy.delta if plan.plan is not None else 0.0),
            missing_impute=plan.privacy.impute if plan.privacy is not None else (
                plan.plan.privacy.impute if plan.plan is not None else None),
            focus=None if plan.focus is None or plan.focus.region is Region.EVERYWHERE else plan.focus.to_json(),
            whole_numbers=choice.whole_numbers,
        )


Listener = Callable[[frozenset[str]], None]
PARTS = frozenset(f.name for f in fields(WorkspaceState))


StateT = TypeVar("StateT")


class Observable(Generic[StateT]):
    """A frozen dataclass state and the listeners told of each change (the CDF's :class:`Workspace`
    and the hierarchy's :class:`~dpgui.workspace.hierarchy.HierarchyWorkspace`).

    :meth:`update` replaces whole parts; listeners get the names of the parts whose value changed
    (not the same object and not equal), after the new state is in place, in the order they
    subscribed. An update that changes nothing notifies no one. A listener may update the state
    itself: that change is announced to every listener at once, before the listeners after it hear
    of the first change (so read ``state``, not a copy taken earlier). Not thread-safe: used from
    one thread (the GUI thread in the window).
    """

    def __init__(self, state: StateT) -> None:
        self._state = state
        self._listeners: list[Listener] = []

    @property
    def state(self) -> StateT:
        return self._state

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(changed_parts)`` after each change; returns the function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def update(self, **parts: object) -> frozenset[str]:
        """Replace the named parts of the state; returns (and announces) the names that changed."""
        old = self._state
        new: Any = replace(old, **parts)  # type: ignore[type-var]
        changed = frozenset(name for name in parts if getattr(old, name) is not getattr(new, name)
                            and getattr(old, name) != getattr(new, name))
        if not changed:
            return changed
        self._state = new
        for listener in list(self._listeners):
            listener(changed)
        return changed


class Workspace(Observable[WorkspaceState]):
    """The current :class:`WorkspaceState` and the listeners told of each change (:class:`Observable`).

    :meth:`update` replaces whole parts (``source``, ``column``, ``dataset``, ``plan``, ``releases``,
    ``shown``).
    """

    def __init__(self, state: WorkspaceState | None = None) -> None:
        super().__init__(state if state is not None else WorkspaceState())

    def update(self, **parts: object) -> frozenset[str]:
        """Replace the named parts of the state; returns (and announces) the names that changed."""
        unknown = set(parts) - PARTS
        if unknown:
            raise TypeError(f"WorkspaceState has no part {', '.join(sorted(unknown))}")
        return super().update(**parts)

    def update_column(self, **values: object) -> frozenset[str]:
        """Change some of step 1's fields (``column``, ``lower``, ``upper``, ``bins``)."""
        return self.update(column=replace(self._state.column, **values))  # type: ignore[arg-type]

    def update_plan(self, **values: object) -> frozenset[str]:
        """Change some of step 2's fields (see :class:`PlanChoice`)."""
        return self.update(plan=replace(self._state.plan, **values))  # type: ignore[arg-type]
