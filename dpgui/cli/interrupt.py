"""What an interrupted command (Ctrl-C) says about the budget: a release interrupted once its ledger id
was made carries that id (:class:`InterruptedRelease`), so that :func:`dpgui.cli.main` asks the ledger
whether it was spent rather than assuming it (stdlib only: no state is kept in the parsed options)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class InterruptedRelease(KeyboardInterrupt):
    """Ctrl-C during a release whose ledger id ``release_id`` was made (it may have been spent)."""

    def __init__(self, release_id: str) -> None:
        super().__init__(release_id)
        self.release_id = release_id


@contextmanager
def interrupt_names(release_id: str) -> Iterator[None]:
    """An interruption inside the block is re-raised as :class:`InterruptedRelease` of ``release_id``."""
    try:
        yield
    except InterruptedRelease:
        raise
    except KeyboardInterrupt:
        raise InterruptedRelease(release_id) from None
