"""What every statistic's part codec of a release plan file shares (:mod:`dpgui.workspace.plan_parts`): the
plan's privacy as each part is planned under it (:class:`PartPrivacy`), the codec protocol
(:class:`PartCodec`) and the readers of a statistic's table, whose errors name the statistic and the key
(never a value of the data: a plan file holds public parameters only). No Qt; any thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dpgui.core.noise import RandomSource
from dpgui.core.plan import PrivacySpec
from dpgui.core.privacy_unit import PrivacyUnit
from dpgui.data.source import DataSource
from dpgui.errors import ParameterError
from dpgui.vocabulary import Neighbours, StatisticKind
from dpgui.workspace.plan_split import PlanPart
from dpgui.workspace.release_plan import PlanItem
from dpgui.workspace.statistic import Planned

__all__ = ["FIX", "PartCodec", "PartPrivacy", "check_common", "check_keys", "column_of", "number_of", "plan_part",
           "texts_of", "whole_of"]

FIX = "correct the release plan file (docs/release-plans.md shows the form)"
#: The keys every statistic's table may hold besides its own.
COMMON_KEYS = frozenset({"name", "weight", "lock"})


@dataclass(frozen=True)
class PartPrivacy:
    """The plan's privacy, under which each part is planned (each at its share of ε, δ): the neighbour model,
    L (records per person) and the person-ID column that enforces L (None: L is declared, not enforced): every
    part counts at most L rows of each person, each with its own secret choice of rows (its budget is its own,
    so its rows need not be the other parts')."""

    epsilon: float
    delta: float
    neighbours: Neighbours
    records_per_person: int
    person_column: str | None

    def spec(self) -> PrivacySpec:
        """The privacy spec of a part at the plan's whole budget (the split replaces ε and δ)."""
        return PrivacySpec(self.epsilon, self.neighbours, self.records_per_person, self.delta)

    def unit(self) -> PrivacyUnit | None:
        """The privacy unit each part's spend counts with (None: L declared, no person-ID column)."""
        return None if self.person_column is None else PrivacyUnit(self.person_column, self.records_per_person)


class PartCodec(Protocol):
    """One statistic's part of a plan file: what its table holds and how its plan item is made."""

    @property
    def kind(self) -> StatisticKind:
        ...

    def check(self, settings: Mapping[str, Any], where: str, privacy: PartPrivacy) -> None:
        """A ParameterError naming ``where`` and the key for a bad or unknown key; nothing read."""
        ...

    def subject(self, settings: Mapping[str, Any]) -> str:
        """What the statistic is of, for its title ("distance", "dep_delay for each carrier")."""
        ...

    def columns(self, settings: Mapping[str, Any]) -> tuple[str, ...]:
        """The columns the statistic reads."""
        ...

    def numeric_columns(self, settings: Mapping[str, Any]) -> tuple[str, ...]:
        """The columns among :meth:`columns` that must hold numbers (a CDF's column)."""
        ...

    def trial_errors(self, spend: Any, counts: Any, planned: Planned[Any, Any], random: RandomSource) -> np.ndarray:
        """One release of ``spend`` on ``counts`` (CONFIDENTIAL) with the seeded ``random`` (a simulation: never
        published): the errors of the published values the part's 95 % margin is of (``planned``: its plan
        at its share), pooled (:func:`dpgui.workspace.plan_simulation.simulate_plan`)."""
        ...

    def item(self, settings: Mapping[str, Any], privacy: PartPrivacy, data: DataSource | None, where: str) -> PlanItem:
        """The statistic's plan item (``data``: the open source, for a statistic that reads it to plan)."""
        ...


def _key(name: str) -> str:
    return repr(str(name)[:40])


def check_keys(settings: Mapping[str, Any], where: str, own: frozenset[str]) -> None:
    """A ParameterError for a key that is neither the statistic's (``own``) nor a common one."""
    unknown = sorted(set(settings) - own - COMMON_KEYS)
    if unknown:
        raise ParameterError(f"{where}: {_key(unknown[0])} is not a setting of this statistic "
                             f"(it takes {', '.join(sorted(own | COMMON_KEYS))})", FIX)


def check_common(settings: Mapping[str, Any], where: str) -> None:
    """The keys every statistic's table may hold: ``name`` (text), ``weight`` (> 0), ``lock`` (ε > 0)."""
    name = settings.get("name", "")
    if not isinstance(name, str):
        raise ParameterError(f"{where}: 'name' must be a text", FIX)
    for key in ("weight", "lock"):
        if key in settings:
            number_of(settings, where, key, positive=True)


def column_of(settings: Mapping[str, Any], where: str, key: str) -> str:
    value = settings.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ParameterError(f"{where}: {_key(key)} must be a column name", FIX)
    return value


def number_of(settings: Mapping[str, Any], where: str, key: str, *, positive: bool = False) -> float:
    value = settings.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or (
            positive and value <= 0):
        raise ParameterError(f"{where}: {_key(key)} must be a {'number > 0' if positive else 'number'}", FIX)
    return float(value)


def whole_of(settings: Mapping[str, Any], where: str, key: str, default: int | None = None) -> int:
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(f"{where}: {_key(key)} must be a whole number ≥ 1", FIX)
    return value


def texts_of(settings: Mapping[str, Any], where: str, key: str) -> tuple[str, ...]:
    value = settings.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise ParameterError(f"{where}: {_key(key)} must be a list of non-empty texts", FIX)
    if len(set(value)) != len(value):
        raise ParameterError(f"{where}: {_key(key)} lists a value twice", "list each value once")
    return tuple(value)


def bounds_of(settings: Mapping[str, Any], where: str) -> tuple[float, float]:
    """The public bounds ``lower`` < ``upper``."""
    lower, upper = number_of(settings, where, "lower"), number_of(settings, where, "upper")
    if not lower < upper:
        raise ParameterError(f"{where}: 'lower' must be less than 'upper'", "give the public bounds low to high")
    return lower, upper


def plan_part(statistic: Any, request: Any, settings: Mapping[str, Any]) -> PlanPart:
    """The part the split plans, from a statistic's table: its ``weight`` (default 1), ``lock`` (None: the split
    decides) and ``name`` ("": the statistic's title), as :func:`check_common` checked them."""
    lock = settings.get("lock")
    return PlanPart(statistic, request, float(settings.get("weight", 1.0)), None if lock is None else float(lock),
                    str(settings.get("name", "")))
