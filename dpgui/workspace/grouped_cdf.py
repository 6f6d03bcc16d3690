"""The public list of groups of a CDF for each group, from the officer's choices, for the window and the command
line alike (no Qt): typed (comma-separated on one line, or one a line) or read from a public text file (one a
line) — never read from the data. :class:`~dpgui.core.grouped_cdf.GroupList` checks the list (empty, too
long, a group twice, "other" listed while the other rows are kept under that name). O(length); any thread.
"""

from __future__ import annotations

import os
from pathlib import Path

from dpgui.core.grouped_cdf import GroupList, OtherGroups
from dpgui.errors import DataError

__all__ = ["parse_groups", "read_groups"]


def parse_groups(typed: str, other: str = OtherGroups.DROP) -> GroupList:
    """The groups of a typed list: one a line, or separated by commas on one line; blanks around each and
    empty entries dropped, order kept; ``other``: what becomes of the rows of a group not listed
    (ParameterError from :class:`GroupList` for a list it refuses)."""
    lines = [line for line in typed.splitlines() if line.strip()]
    entries = lines[0].split(",") if len(lines) == 1 else lines
    return GroupList(tuple(entry.strip() for entry in entries if entry.strip()), OtherGroups(other))


def read_groups(path: str | os.PathLike[str], other: str = OtherGroups.DROP) -> GroupList:
    """The public list of groups in a text file (UTF-8, one a line, or comma-separated on one line;
    :func:`parse_groups`). Read as public: never the confidential data file itself. DataError if it cannot be
    read."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"the list of groups '{Path(path).name}' cannot be read: {err}",
                        "choose a text file (UTF-8) with one group a line") from None
    return parse_groups(text, other)
