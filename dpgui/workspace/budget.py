"""The budget ledger as the front ends read and set it, outside a release (no Qt): the datasets' totals,
the releases and the cap history (:func:`ledger_view`), and a dataset's cap (:func:`set_cap`).

Each function opens the ledger (``$DPGUI_HOME``, SQLite) on the calling thread and closes it before it
returns. Nothing here reads data or spends: the ledger holds public values only (dataset names, charges,
release ids, the words recorded with them). A release spends through :class:`~dpgui.workspace.flow.ReleaseFlow`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpgui.report.ledger import CapChange, Ledger, ReleaseEntry, Totals
from dpgui.workspace.statistics import release_words

__all__ = ["CapChange", "LedgerView", "ReleaseEntry", "Totals", "ledger_view", "release_words", "set_cap"]


@dataclass(frozen=True)
class LedgerView:
    """What the ledger holds of one dataset (or of all): each dataset's ``totals``, the ``releases``
    (newest first) and each dataset's ``cap_history`` (oldest first)."""

    totals: tuple[Totals, ...]
    releases: tuple[ReleaseEntry, ...]
    cap_history: dict[str, tuple[CapChange, ...]]


def ledger_view(dataset: str | None = None) -> LedgerView:
    """The ledger's datasets, releases and cap changes; of ``dataset`` only when given (its
    :class:`~dpgui.report.ledger.NoCapSet` refusal if it has no cap). Reads only."""
    with Ledger() as ledger:
        datasets = [ledger.totals(dataset)] if dataset else ledger.datasets()
        releases = ledger.releases(dataset)
        history = {t.dataset_id: tuple(ledger.cap_history(t.dataset_id)) for t in datasets}
    return LedgerView(tuple(datasets), tuple(releases), history)


def set_cap(dataset: str, epsilon: float, delta: float = 0.0, reason: str = "") -> Totals:
    """Set (or change) ``dataset``'s cap to (``epsilon``, ``delta``), logged with ``reason``; the ledger's
    refusal (e.g. a cap below what was spent) as a DpguiError. Returns the dataset's totals after it."""
    with Ledger() as ledger:
        ledger.set_cap(dataset, epsilon, delta, reason)
        return ledger.totals(dataset)
