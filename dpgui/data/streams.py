"""What every reader of confidential data hands out and reports with: the path and callback types, the
streams of ``(item, fraction read)``, :func:`watched` (progress and cancel around a stream), and the
wording of a reader's errors (:func:`short_error_text`, which cuts a quoted row or cell out, and
:func:`column_not_found`).

The bottom of the file readers: :mod:`dpgui.data.readers` (the dispatcher and the CSV/Excel readers),
:mod:`dpgui.data.parquet_files` and :mod:`dpgui.data.stat_files` import it, it imports none of them.
No I/O, no Qt.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TypeVar, Union

from dpgui.data.file_types import CSV_DELIMITERS
from dpgui.errors import Cancelled, DataError, ParameterError

__all__ = [
    "CancelCallback",
    "PathLike",
    "ProgressCallback",
    "Stream",
    "check_callbacks",
    "column_not_found",
    "short_error_text",
    "watched",
]

PathLike = Union[str, "os.PathLike[str]"]
#: ``progress(fraction)``: the fraction (0..1) of the file read so far.
ProgressCallback = Callable[[float], None]
#: ``should_cancel()``: True to stop reading (raises :class:`~dpgui.errors.Cancelled`).
CancelCallback = Callable[[], bool]
T = TypeVar("T")
#: A stream of items, each with the fraction (0..1) of the file read once it is yielded; a
#: generator, so that a reader left unfinished can be closed (its file with it).
Stream = Generator[tuple[T, float], None, None]


#: The parts of a reader's message that quote the data: Arrow's "Expected 2 columns, got 3: <the row>"
#: and "invalid value '<the cell>'" (a confidential value never reaches a message).
_QUOTED_DATA = (re.compile(r"(got \d+)\s*:.*"), re.compile(r"(invalid value)\s*'.*"))


def short_error_text(err: BaseException, limit: int = 200) -> str:
    """The message of ``err`` on one line, cut to ``limit`` characters (for a DataError's problem),
    with the row or cell a reader quoted cut out (:data:`_QUOTED_DATA`)."""
    text = " ".join(str(err).split())
    for pattern in _QUOTED_DATA:
        text = pattern.sub(r"\1", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def column_not_found(column: str, where: str, names: Sequence[str]) -> DataError:
    """The one message for a column that is not there: ``where`` names the data ("'people.csv'", "table
    people in sqlite:///census.db"), ``names`` its columns (the first 10 are listed)."""
    shown = ", ".join(repr(n) for n in names[:10]) + (f" (and {len(names) - 10} more)" if len(names) > 10 else "")
    separators = [d for d in CSV_DELIMITERS if len(names) == 1 and d in names[0]]
    if separators:  # one column whose name holds a separator: the file was read with the wrong one
        name = CSV_DELIMITERS[separators[0]]
        return DataError(f"column '{column}' not found in {where}: it was read as one column, {shown}, whose name "
                         f"holds a {name}, so the field separator is probably wrong",
                         f"read it as {name}-separated (command line: --delimiter {name.split()[-1]}; in the window: "
                         "the file's field separator)")
    return DataError(f"column '{column}' not found in {where}",
                     f"choose among its columns: {shown}" if names else "it has no columns")


def check_callbacks(progress: object, should_cancel: object) -> None:
    """:class:`~dpgui.errors.ParameterError` unless each callback is None or callable."""
    for name, f in (("progress", progress), ("should_cancel", should_cancel)):
        if f is not None and not callable(f):
            raise ParameterError(f"{name} {f!r} is not callable", f"pass a function or None as {name}")


def watched(
    items: Stream[T],
    progress: ProgressCallback | None,
    should_cancel: CancelCallback | None,
) -> Iterator[T]:
    """Yield the items of ``(item, fraction)`` pairs; before each, raise
    :class:`~dpgui.errors.Cancelled` if ``should_cancel()``; after each, call
    ``progress(fraction)`` (never decreasing), and ``progress(1.0)`` at the end."""
    done = 0.0
    with contextlib.closing(items):
        for item, fraction in items:
            if should_cancel is not None and should_cancel():
                raise Cancelled()
            yield item
            if progress is not None:
                done = max(done, fraction)
                progress(done)
    if progress is not None:
        progress(1.0)

