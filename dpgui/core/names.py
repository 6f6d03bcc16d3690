"""Domain words as enums: a :class:`Name` is a ``str`` equal to its value, so it is stored, compared and
printed as the word project files, manifests, ledgers and the command line have always used."""

from __future__ import annotations

from enum import Enum


class Name(str, Enum):
    """Base of the product's word enums (no members of its own): ``str(x)``, ``f"{x}"`` and ``repr(x)``
    give the word, e.g. ``drop`` and ``'drop'``, never ``MissingRule.DROP``."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __repr__(self) -> str:  # messages quote the word
        return repr(self.value)
