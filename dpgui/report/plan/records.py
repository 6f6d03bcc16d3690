"""A release plan in the budget ledger: one spend for the whole plan, one output record listing its parts,
and each part's view of them (:class:`PlanPartRecords`), through which every statistic releases and is
confirmed by its own code as if it had a ledger entry of its own.

The plan's ledger entry (docs/privacy-model.md, "Several statistics under one budget"):

* the spend, recorded once before any noise exists (:func:`spend_plan`): the plan's composed charge and the
  description ``{"kind": "plan", "parts": [{"release_id", "kind", "title", "charge": [ε, δ, ρ]}, …],
  "secure_noise", "source"}`` — each part's own id and charge, fixed before its noise;
* the output, recorded once after every part's noise (:func:`record_plan_output`): the SHA-256 of the parts'
  digests and ``{"kind": "plan", "parts": [{"release_id", "kind", "mechanism", "description",
  "levels_sha256", "params", "secure"}, …]}``. A plan stopped between parts (a crash, a kill) has its spend
  and no output: its budget stays spent, and no part of it can be signed (nothing partial is published).

A part's spend (:meth:`PlanPartRecords.spend`) records nothing: it checks that the plan's recorded spend
names the part with exactly the part's charge, and keeps the part's mechanism and description for the
output. Reading (:meth:`PlanPartRecords.release`, :meth:`PlanPartRecords.release_output`) answers from the
plan's entry, so :func:`dpgui.report.publish.confirm_recorded_release` checks a part's values and parameters
against what the plan recorded at release time.

Public values only; the thread of the ledger. Cost: O(parts) besides the ledger's reads and writes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpgui.errors import DataError
from dpgui.report.ledger import Ledger, ReleaseEntry, ReleaseOutput, Totals
from dpgui.vocabulary import Charge, ReleaseKind

__all__ = ["PLAN_MECHANISM", "PlanEntryPart", "PlanPartRecords", "plan_parts", "record_plan_output", "spend_plan"]

#: The mechanism the ledger records for a plan's one spend (each part's own is in the output record).
PLAN_MECHANISM = "release plan"


@dataclass(frozen=True)
class PlanEntryPart:
    """One part as the plan's spend records it before any noise: its own release id (32 hex digits), its
    statistic's kind, its title in words ("CDF of distance") and the charge its own statistic computes."""

    release_id: str
    kind: str
    title: str
    charge: Charge

    def to_json(self) -> dict[str, Any]:
        c = self.charge
        return {"release_id": self.release_id, "kind": self.kind, "title": self.title,
                "charge": [c.epsilon, c.delta, c.rho]}


def spend_plan(ledger: Ledger, dataset: str, plan_id: str, charge: Charge, parts: Sequence[PlanEntryPart],
               secure: bool, source_record: dict[str, Any] | None) -> Totals:
    """Record the plan's one spend (``charge``: its parts' charges composed by the ledger's rule) with its
    parts, before any noise: the ledger's refusal (no cap, too little left) is raised with nothing recorded."""
    description: dict[str, Any] = {"kind": str(ReleaseKind.PLAN), "parts": [p.to_json() for p in parts],
                                   "secure_noise": bool(secure)}
    if source_record is not None:
        description["source"] = dict(source_record)
    return ledger.spend(dataset, plan_id, charge, mechanism=PLAN_MECHANISM, description=description)


def plan_parts(entry: ReleaseEntry) -> tuple[PlanEntryPart, ...]:
    """The parts a plan's recorded spend lists; a DataError if the entry is not a plan's or is damaged."""
    parts = entry.description.get("parts") if entry.description.get("kind") == ReleaseKind.PLAN else None
    if not isinstance(parts, list):
        raise DataError(f"ledger entry {entry.release_id} is not a release plan's", "name the plan's release id")
    found = []
    for part in parts:
        try:
            epsilon, delta, rho = part["charge"]
            found.append(PlanEntryPart(str(part["release_id"]), str(part["kind"]), str(part["title"]),
                                       Charge(float(epsilon), float(delta), None if rho is None else float(rho))))
        except (KeyError, TypeError, ValueError) as err:
            raise DataError(f"the budget ledger's record of plan {entry.release_id} is damaged ({err})",
                            "restore the ledger from its backup") from None
    return tuple(found)


def _plan_digest(digests: Sequence[str]) -> str:
    """The plan's output digest: the SHA-256 of the JSON list of its parts' digests, in the plan's order."""
    return hashlib.sha256(json.dumps(list(digests), separators=(",", ":")).encode("ascii")).hexdigest()


class PlanPartRecords:
    """Part ``index`` of the plan ``plan_id`` of ``ledger``, as the ledger a statistic releases through
    (:class:`~dpgui.report.ledger.records.ReleaseRecords`; module docstring). Made by the plan's release for
    each part after the plan's spend (:attr:`output` then holds what the part's release recorded), and by the
    plan's signing to confirm each part."""

    def __init__(self, ledger: Ledger, plan_id: str, index: int) -> None:
        self.ledger = ledger
        self.plan_id = plan_id
        self.index = index
        self.kept: dict[str, Any] | None = None  # the part's spend and output, as its release recorded them

    @property
    def path(self) -> Path:
        return self.ledger.path

    def _plan_entry(self) -> tuple[ReleaseEntry, PlanEntryPart]:
        entry = self.ledger.release(self.plan_id)
        if entry is None:
            raise DataError(f"release plan {self.plan_id} is not in the budget ledger {self.ledger.path}",
                            "only a plan released with this ledger can be signed")
        parts = plan_parts(entry)
        if not 0 <= self.index < len(parts):
            raise DataError(f"release plan {self.plan_id} has {len(parts)} parts, not a part {self.index + 1}",
                            "sign the plan's parts as it released them")
        return entry, parts[self.index]

    def spend(self, dataset_id: str, release_id: str, charge: Charge, mechanism: str = "",
              description: dict[str, Any] | None = None) -> Totals:
        """Record nothing: check that the plan's recorded spend (on ``dataset_id``) names this part as
        ``release_id`` with exactly ``charge``, and keep the part's mechanism and description."""
        entry, part = self._plan_entry()
        if entry.dataset_id != dataset_id or part.release_id != release_id or part.charge != charge:
            raise DataError(f"part {self.index + 1} of release plan {self.plan_id} is not the one the plan's spend "
                            "recorded (dataset, id or charge)", "report this as a bug: nothing of it was released")
        self.kept = {"release_id": release_id, "kind": part.kind, "mechanism": mechanism,
                     "description": dict(description or {})}
        return self.ledger.totals(dataset_id)

    def record_output(self, release_id: str, levels_sha256: str, params: dict[str, Any], secure: bool) -> None:
        """Keep the part's output for the plan's one output record (:func:`record_plan_output`)."""
        if self.kept is None or self.kept["release_id"] != release_id:
            raise DataError(f"part {self.index + 1} of release plan {self.plan_id} recorded an output before its "
                            "spend", "report this as a bug")
        self.kept.update(levels_sha256=levels_sha256, params=params, secure=bool(secure))

    def release(self, release_id: str) -> ReleaseEntry | None:
        """This part as a ledger entry of its own: the plan's dataset and time, the part's charge."""
        entry, part = self._plan_entry()
        if release_id != part.release_id:
            return None
        recorded = self._recorded_part() or {}
        c = part.charge
        return ReleaseEntry(part.release_id, entry.dataset_id, entry.created_utc, c.epsilon, c.delta, c.rho,
                            str(recorded.get("mechanism", "")), dict(recorded.get("description") or {}), entry.bundle)

    def release_output(self, release_id: str) -> ReleaseOutput | None:
        """This part's output as the plan's output record holds it (None: the plan recorded none)."""
        recorded = self._recorded_part()
        if recorded is None or recorded.get("release_id") != release_id:
            return None
        output = self.ledger.release_output(self.plan_id)
        assert output is not None  # _recorded_part read it
        params = recorded.get("params")
        return ReleaseOutput(release_id, str(recorded.get("levels_sha256")), params if isinstance(params, dict) else {},
                             recorded.get("secure") is True, output.recorded_utc)

    def _recorded_part(self) -> dict[str, Any] | None:
        output = self.ledger.release_output(self.plan_id)
        if output is None:
            return None
        parts = output.params.get("parts")
        if not isinstance(parts, list) or not 0 <= self.index < len(parts) or not isinstance(parts[self.index], dict):
            return None
        part: dict[str, Any] = parts[self.index]
        return part


def record_plan_output(ledger: Ledger, plan_id: str, parts: Sequence[PlanPartRecords]) -> None:
    """Record the plan's one output after every part's noise: each part's kept spend and output, in order.
    A part that recorded no output is a bug (a DataError; the plan's budget stays spent, nothing is signed)."""
    kept = [p.kept for p in parts]
    if any(k is None or "levels_sha256" not in k for k in kept):
        raise DataError(f"a part of release plan {plan_id} recorded no output", "report this as a bug")
    records = [k for k in kept if k is not None]
    ledger.record_output(plan_id, _plan_digest([k["levels_sha256"] for k in records]),
                         {"kind": str(ReleaseKind.PLAN), "parts": records}, all(k["secure"] for k in records))
