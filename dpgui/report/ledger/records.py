"""What a release asks of the budget ledger, as one protocol (:class:`ReleaseRecords`): the spend before the
noise, the record of its output after it, and the two reads that confirm a release before it is signed.

:class:`~dpgui.report.ledger.store.Ledger` is the one implementation for a release of its own; a release
plan's part answers through the plan's one ledger entry instead
(:class:`dpgui.report.plan.records.PlanPartRecords`), so every statistic releases and is confirmed by the
same code whether it is released alone or as part of a plan. Public values only; the thread of the ledger.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from dpgui.report.ledger.store import ReleaseEntry, ReleaseOutput, Totals
from dpgui.vocabulary import Charge

__all__ = ["ReleaseRecords"]


class ReleaseRecords(Protocol):
    """The ledger's part in one release (:func:`dpgui.report.publish.spend_then_release`,
    :func:`dpgui.report.publish.confirm_recorded_release`)."""

    @property
    def path(self) -> Path:
        """The ledger file (for messages)."""
        ...

    def spend(self, dataset_id: str, release_id: str, charge: Charge, mechanism: str = "",
              description: dict[str, Any] | None = None) -> Totals:
        """Record ``charge`` for ``release_id`` before any noise is drawn, or refuse (nothing recorded)."""
        ...

    def record_output(self, release_id: str, levels_sha256: str, params: dict[str, Any], secure: bool) -> None:
        """Record what ``release_id`` published, once, right after the noise."""
        ...

    def release(self, release_id: str) -> ReleaseEntry | None:
        """The recorded spend of ``release_id`` (None: unknown)."""
        ...

    def release_output(self, release_id: str) -> ReleaseOutput | None:
        """The recorded output of ``release_id`` (None: none recorded)."""
        ...
