"""The privacy unit a release states: at most L records per person, enforced by a person-ID column or declared.

A :class:`PrivacyUnit` (public: what a manifest states) names the person-ID column and L. With one, the
data source keeps at most L rows of each person (:class:`dpgui.data.bounding.Bounding`, a uniformly random
choice that does not depend on the values released), and neighbouring tables differ by one person with at
most L records added or removed: the plan's :class:`~dpgui.core.plan.PrivacySpec` must say ``addremove`` and
``records_per_person = L`` (:meth:`PrivacyUnit.check_privacy`, before anything is spent). ``change`` is
refused: the number of rows kept depends on each person's rows, so the bounded total is not public.
Without a person-ID column, L is the officer's declaration, stated as such (:func:`privacy_unit_words`).

Where it travels: a release's source record (:meth:`dpgui.data.source.DataSource.public_record`) gets the
unit under :data:`SOURCE_KEY` (:func:`with_privacy_unit`: the source counted at most L rows a person), so
the ledger's description, the release's info, the project file and the manifest's ``source`` carry it with
the rest of how the data was counted; every manifest also states it in its own ``privacy_unit`` field
(:func:`privacy_unit_record`). The number of people and of dropped rows are confidential and never here.
No Qt, any thread.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

from dpgui.core.plan import PrivacySpec
from dpgui.errors import ParameterError
from dpgui.vocabulary import Neighbours

__all__ = ["SOURCE_KEY", "PrivacyUnit", "check_unit_fields", "privacy_unit_record", "privacy_unit_words", "unit_of_source",
           "with_privacy_unit"]

#: The key of a source record that holds the privacy unit the source counted with.
SOURCE_KEY = "privacy_unit"


def _records(n: int) -> str:
    return f"{n:,} record" + ("" if n == 1 else "s")


def check_unit_fields(person_column: object, records_per_person: object) -> int:
    """L as an int, or ParameterError unless ``person_column`` is a non-empty text and ``records_per_person`` a
    whole number ≥ 1 (the checks of every privacy unit: :class:`PrivacyUnit`, :class:`dpgui.data.bounding.Bounding`)."""
    if not isinstance(person_column, str) or not person_column:
        raise ParameterError(f"person-ID column {person_column!r} is not a column name",
                             "pick the column that identifies the person of each row")
    if isinstance(records_per_person, bool) or not isinstance(records_per_person, numbers.Integral) \
            or records_per_person < 1:
        raise ParameterError(f"records per person {records_per_person!r} is not a whole number of at least 1",
                             "keep at least 1 record per person (e.g. 1, 5 or 20)")
    return int(records_per_person)


@dataclass(frozen=True)
class PrivacyUnit:
    """At most ``records_per_person`` (L ≥ 1) rows of each value of ``person_column`` are counted (public)."""

    person_column: str
    records_per_person: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "records_per_person", check_unit_fields(self.person_column, self.records_per_person))

    def check_privacy(self, privacy: PrivacySpec) -> None:
        """ParameterError unless ``privacy`` is the unit's: add/remove neighbours (one person with at most L
        records) and ``records_per_person`` = L. Called where a spend is made, before anything is read or spent."""
        if privacy.neighbours is not Neighbours.ADDREMOVE:
            raise ParameterError(
                f"with a person-ID column ('{self.person_column}') the neighbour model must be add/remove: how "
                "many rows dpgui keeps depends on each person's rows, so the total number of rows counted is not "
                "public (the neighbour model 'change' would publish it)",
                "use the neighbour model addremove (the number of rows kept private), or no person-ID column")
        if privacy.records_per_person != self.records_per_person:
            raise ParameterError(
                f"the plan is for {_records(privacy.records_per_person)} per person but the person-ID column "
                f"'{self.person_column}' keeps at most {_records(self.records_per_person)} per person",
                f"make the plan with {self.records_per_person:,} records per person")

    def source_record(self) -> dict[str, Any]:
        """The unit as a source record states it: the column and L (never the salt, nor any count)."""
        return {"person_column": self.person_column, "records_per_person": self.records_per_person}

    @classmethod
    def from_source_record(cls, record: object) -> PrivacyUnit:
        """The unit a source record's :data:`SOURCE_KEY` holds (ParameterError if it is not one)."""
        if not isinstance(record, dict) or set(record) != {"person_column", "records_per_person"}:
            raise ParameterError("the recorded privacy unit is not a person-ID column and a number of records",
                                 "the record was edited: use the one dpgui wrote")
        return cls(record["person_column"], record["records_per_person"])


def with_privacy_unit(source_record: dict[str, Any] | None, unit: PrivacyUnit | None) -> dict[str, Any] | None:
    """``source_record`` with ``unit`` under :data:`SOURCE_KEY` (a new dict; unchanged without a unit).
    ValueError (a bug) for a unit without a source record: the unit is stated where the source is."""
    if unit is None:
        return source_record
    if source_record is None:
        raise ValueError("a release with a privacy unit records its data source")
    return {**source_record, SOURCE_KEY: unit.source_record()}


def unit_of_source(source_record: dict[str, Any] | None) -> PrivacyUnit | None:
    """The privacy unit a source record states (None: none, L was declared)."""
    if source_record is None or SOURCE_KEY not in source_record:
        return None
    return PrivacyUnit.from_source_record(source_record[SOURCE_KEY])


def privacy_unit_words(unit: PrivacyUnit | None, records_per_person: int) -> str:
    """The privacy unit in words, e.g. "At most 20 records per person, enforced: dpgui kept at most 20 rows of
    each value of 'tailnum' (chosen at random, not by their values)" or "At most 1 record per person —
    declared by you, not checked by dpgui (no person-ID column)"."""
    if unit is None:
        return (f"At most {_records(records_per_person)} per person — declared by you, not checked by dpgui "
                "(no person-ID column)")
    limit = unit.records_per_person
    return (f"At most {_records(limit)} per person, enforced: dpgui kept at most {limit:,} "
            f"row{'' if limit == 1 else 's'} of each value of '{unit.person_column}' (chosen at random, not by "
            "their values)")


def privacy_unit_record(unit: PrivacyUnit | None, records_per_person: int) -> dict[str, Any]:
    """A manifest's ``privacy_unit`` field: L, whether dpgui enforced it, the person-ID column (null when
    declared) and the statement in words (:func:`privacy_unit_words`)."""
    if unit is not None and unit.records_per_person != records_per_person:  # a bug: the spend checks it
        raise ValueError("the privacy unit's L is not the plan's records per person")
    return {"records_per_person": records_per_person, "enforced": unit is not None,
            "person_column": None if unit is None else unit.person_column,
            "statement": privacy_unit_words(unit, records_per_person)}
