"""Errors that reach the user.

Every error raised for bad input is a :class:`DpguiError` whose message names the problem
and the fix in one line, so the CLI can print it (exit code 2) and the GUI can show it
next to the field, without a traceback.
"""

from __future__ import annotations


class DpguiError(ValueError):
    """Bad input or parameters; ``str(err)`` is one line: what is wrong and how to fix it."""

    def __init__(self, problem: str, fix: str = "") -> None:
        self.problem = problem
        self.fix = fix
        message = problem if not fix else f"{problem}; {fix}"
        super().__init__(message)


class DataError(DpguiError):
    """A file or column cannot be read as asked (missing file, wrong type, malformed rows)."""


class ParameterError(DpguiError):
    """A privacy or plan parameter is out of range (ε ≤ 0, inverted bounds, K < 1, …)."""


class Cancelled(DpguiError):
    """The user stopped a long read (not a fault of the input); nothing was produced."""

    def __init__(self, problem: str = "reading was cancelled", fix: str = "") -> None:
        super().__init__(problem, fix)
