"""A public list typed or read from a text file — a statistic's categories, a CDF for each group's groups — read
one way for every statistic, the window and the command line. Public values only: the list is the officer's
(never read from the confidential data file); no Qt, any thread. O(length of the list).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from dpgui.errors import DataError, ParameterError

__all__ = ["check_public_list", "parse_public_list", "read_public_list"]


def parse_public_list(typed: str) -> tuple[str, ...]:
    """The entries of a typed list: one a line, or separated by commas on one line; blanks around each and
    empty entries dropped, order kept. Nothing checked (:func:`check_public_list`)."""
    lines = [line for line in typed.splitlines() if line.strip()]
    entries = lines[0].split(",") if len(lines) == 1 else lines
    return tuple(entry.strip() for entry in entries if entry.strip())


def read_public_list(path: str | os.PathLike[str], what: str) -> tuple[str, ...]:
    """The entries of a public list in a text file (UTF-8, one a line, or comma-separated on one line;
    :func:`parse_public_list`); ``what``: the entries' name in messages ("categories", "groups"). DataError if it
    cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"the list of {what} '{Path(path).name}' cannot be read: {err}",
                        f"choose a text file (UTF-8) with one of the {what} a line") from None
    return parse_public_list(text)


def check_public_list(entries: Sequence[str], entry: str, most: int | None = None) -> None:
    """ParameterError for an entry listed twice, or more than ``most`` entries; ``entry``: an entry's name in
    messages ("category", "group")."""
    seen: set[str] = set()
    for value in entries:
        if value in seen:
            raise ParameterError(f"the {entry} {value!r} is listed twice", f"list each {entry} once")
        seen.add(value)
    if most is not None and len(entries) > most:
        raise ParameterError(f"{len(entries):,} {entry} entries were stated; at most {most:,}",
                             "a list that long is probably a column of identifiers: choose a coarser column")
