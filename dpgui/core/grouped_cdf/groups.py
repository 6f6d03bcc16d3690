"""The public list of groups of a grouped CDF, and what becomes of a row whose group is not in it.

The list is the officer's (typed, or read from a public file), never read from the confidential data: the
released groups — their labels, their number and their order — are decided before anything is read, so
they are the same for every pair of neighbouring tables. A listed group absent from the data is released
too (zeros plus noise). A row whose group value is not in the list is dropped or counted in one extra
group named :data:`OTHER_LABEL`, as the officer chooses (:class:`OtherGroups`); a row whose group value is
missing (null, NaN, an empty cell) is treated exactly like a value not in the list. No I/O, any thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dpgui.errors import ParameterError
from dpgui.vocabulary import OtherGroups

__all__ = ["GROUPS_FROM_DATA", "MAX_GROUPS", "OTHER_LABEL", "GroupList"]

#: The most listed groups a grouped CDF releases (not counting "other"). Each group's release is a whole
#: tree (K̄ noisy counts, an estimate, a page of small multiples): a thousand groups of 1,024 bins are a
#: million noisy counts, about what the window, the PDF and a CSV per statistic stay usable with.
MAX_GROUPS = 1000

#: What a list read from the data says of itself.
GROUPS_FROM_DATA = ("the values of the group column in the data, declared public by the publisher (e.g. an official "
                    "list); differential privacy does not cover which groups exist")
#: The label of the extra group that counts the rows whose group is not in the list (or is missing).
OTHER_LABEL = "other"


@dataclass(frozen=True)
class GroupList:
    """The public groups, in the order they are released, and the :class:`OtherGroups` policy; ``from_data``: the
    list is the data's own values, declared public by the officer (:data:`GROUPS_FROM_DATA`).

    ``labels`` match a row's group value as the data layer labels it (a CSV cell as written, a typed value
    as its text; :mod:`dpgui.data.grouped_counts`), exactly: case and spaces count. :attr:`released` is
    ``labels`` followed by :data:`OTHER_LABEL` when the policy keeps the other rows. ParameterError for an
    empty list, more than :data:`MAX_GROUPS` labels, a label that is not text or is empty, a label given
    twice, or :data:`OTHER_LABEL` listed while the other rows are kept under that name. O(groups).
    """

    labels: tuple[str, ...]
    other: OtherGroups = OtherGroups.DROP
    #: the labels are the data's own values of the group column, which the officer declared public (an official
    #: list), as a hierarchy's categories may be: differential privacy does not cover the list itself
    from_data: bool = False

    @property
    def source_words(self) -> str:
        """Where the list comes from, in words (the manifest's and the PDF's statement)."""
        return (GROUPS_FROM_DATA if self.from_data
                else "a public list stated by the publisher before the data was read (typed or from a file)")

    def __post_init__(self) -> None:
        labels = self.labels
        if isinstance(labels, str) or not isinstance(labels, Sequence):
            raise ParameterError("the groups must be a list of labels", "give one label per group, e.g. AA, DL, UA")
        if self.other not in tuple(OtherGroups):
            raise ParameterError(f"unknown policy for the groups not in the list: {self.other!r}",
                                 "use 'drop' (leave those rows out) or 'other' (count them in one group 'other')")
        object.__setattr__(self, "other", OtherGroups(self.other))
        if not labels:
            raise ParameterError("the list of groups is empty",
                                 "give the public list of groups (typed, or from a public file); it is never read "
                                 "from the data")
        if len(labels) > MAX_GROUPS:
            raise ParameterError(f"{len(labels):,} groups are listed; a grouped CDF releases at most {MAX_GROUPS:,}",
                                 "list fewer groups, or merge some (rows of a group not listed can be counted in "
                                 "'other')")
        seen: set[str] = set()
        for label in labels:
            if not isinstance(label, str) or not label:
                raise ParameterError(f"every group label must be non-empty text, got {label!r}",
                                     "remove the empty label (a row with an empty group value counts as not listed)")
            if label in seen:
                raise ParameterError(f"the group {label!r} is listed twice", "list each group once")
            seen.add(label)
        if self.other is OtherGroups.OTHER and OTHER_LABEL in seen:
            raise ParameterError(f"the group {OTHER_LABEL!r} is listed while the rows of the groups not in the list "
                                 f"are counted in a group of that name", f"rename the listed group {OTHER_LABEL!r}, "
                                 "or drop the rows of the groups not in the list")
        object.__setattr__(self, "labels", tuple(labels))

    @property
    def released(self) -> tuple[str, ...]:
        """The labels of the released groups, in order: the list, then :data:`OTHER_LABEL` if kept."""
        return self.labels + ((OTHER_LABEL,) if self.other is OtherGroups.OTHER else ())

    def position(self, value: str | None) -> int | None:
        """Where a row whose group value is ``value`` (None: missing) is counted: its index in
        :attr:`released`, the index of "other" for a value not listed (or missing) when kept, else None
        (dropped). O(groups)."""
        if value is not None and value in self.labels:
            return self.labels.index(value)
        return len(self.labels) if self.other is OtherGroups.OTHER else None
