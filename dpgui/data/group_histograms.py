"""The histogram of a numeric column for each PUBLIC group of a categorical column: the counts a grouped
CDF releases (:mod:`dpgui.core.grouped_cdf`; docs/privacy-model.md, "A CDF for each group").

One :meth:`~dpgui.data.source.DataSource.grouped_counts` of ``(ValueKey(group column), BinKey(column, …))``,
split by group value (:func:`~dpgui.data.histogram.histograms_by_group`), then put on the officer's list
(:class:`~dpgui.core.grouped_cdf.GroupList`): a listed group absent from the data gets a histogram of zeros;
the rows of a value not in the list — or of a missing group value — are dropped or summed into the group
"other", as the list's policy says. The released groups are the list's, in its order, whatever the data
holds: never decided by the data.

Confidential: the histograms are exact counts of confidential rows, for the release (through its noise)
and the officer's checks only; messages never quote a group value. Memory: the source counts every
distinct group value of the data, listed or not (O(distinct values × bins) groups), before the unlisted
ones are dropped or summed. No Qt; safe in a worker thread, with progress and cancel callbacks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from dpgui.core.grouped_cdf import GroupList
from dpgui.core.missing import MISSING_DROP
from dpgui.data.grouped_counts import BinKey, ValueKey
from dpgui.data.histogram import ColumnHistogram, check_missing_policy, histograms_by_group
from dpgui.data.source import DataSource
from dpgui.data.streams import CancelCallback, ProgressCallback
from dpgui.errors import DataError

if TYPE_CHECKING:
    from dpgui.data.bounding import Bounding

__all__ = ["GroupHistograms", "group_histograms", "histograms_on_groups"]


@dataclass(frozen=True, eq=False)
class GroupHistograms:
    """One histogram per released group (``labels``: :attr:`GroupList.released`, in order). Confidential."""

    labels: tuple[str, ...]
    histograms: tuple[ColumnHistogram, ...]
    #: every row counted, of every group value (listed, other, dropped or missing); None: not known
    rows_read: int | None = None

    @property
    def table_rows(self) -> int:
        """The rows of the table as counted (:attr:`rows_read`; without it, the released groups' rows): the
        data's identity takes it, whatever the list of groups. Confidential, as every count here."""
        return self.rows_read if self.rows_read is not None else sum(h.n_rows for h in self.histograms)

    @property
    def counts(self) -> npt.NDArray[np.int64]:
        """The (groups × bins) value-bin counts, as :func:`dpgui.core.grouped_cdf.release_grouped` takes them."""
        return np.stack([h.counts for h in self.histograms])

    @property
    def n_missing(self) -> list[int]:
        """Each group's number of missing values of the numeric column."""
        return [h.n_missing for h in self.histograms]

    def of(self, label: str) -> ColumnHistogram:
        return self.histograms[self.labels.index(label)]


def _zero_histogram(key: BinKey, policy: str) -> ColumnHistogram:
    counts = np.zeros(key.bins, dtype=np.int64)
    counts.flags.writeable = False
    return ColumnHistogram(counts=counts, lower=key.lower, upper=key.upper, bins=key.bins, n_rows=0, n_missing=0,
                           n_clamped_low=0, n_clamped_high=0, missing_policy=policy)


def _summed(parts: Sequence[ColumnHistogram], key: BinKey, policy: str) -> ColumnHistogram:
    """The histogram of the rows of all ``parts`` together (of one BinKey); zeros if none. O(parts × bins)."""
    if not parts:
        return _zero_histogram(key, policy)
    counts: npt.NDArray[np.int64] = np.stack([h.counts for h in parts]).sum(axis=0, dtype=np.int64)
    counts.flags.writeable = False
    return ColumnHistogram(counts=counts, lower=key.lower, upper=key.upper, bins=key.bins,
                           n_rows=sum(h.n_rows for h in parts), n_missing=sum(h.n_missing for h in parts),
                           n_clamped_low=sum(h.n_clamped_low for h in parts),
                           n_clamped_high=sum(h.n_clamped_high for h in parts), missing_policy=policy)


def histograms_on_groups(per_value: Mapping[str | None, ColumnHistogram], groups: GroupList, key: BinKey,
                         missing: str = MISSING_DROP) -> GroupHistograms:
    """The histograms of ``per_value`` (by group value as the data layer labels it, None: missing; one
    BinKey ``key``) put on the public ``groups``: listed → their own (zeros if absent), the others → summed
    into "other" or dropped (:meth:`GroupList.position`). O((values + groups) × bins)."""
    policy = check_missing_policy(missing)
    placed: list[list[ColumnHistogram]] = [[] for _ in groups.released]
    for value, histogram in per_value.items():
        position = groups.position(value)
        if position is not None:
            placed[position].append(histogram)
    return GroupHistograms(groups.released, tuple(_summed(parts, key, policy) for parts in placed),
                           sum(h.n_rows for h in per_value.values()))


def group_histograms(source: DataSource, group_column: str, column: str, lower: float, upper: float, bins: int,
                     groups: GroupList, missing: str = MISSING_DROP, *, bounding: Bounding | None = None,
                     progress: ProgressCallback | None = None,
                     should_cancel: CancelCallback | None = None) -> GroupHistograms:
    """The histogram of ``column`` in ``bins`` bins on [lower, upper) (the one binning rule: out-of-range values
    clamped into the end bins, missing ones in ``n_missing``) for each released group of ``groups``, counted
    by the source in one pass (module docstring); with ``bounding``, of the rows it keeps, at most L a person
    in the whole table (:mod:`dpgui.data.bounding`; the group column's public list is ``groups.labels`` unless
    the bounding names one). DataError for a table without data rows (as for one histogram), a missing column,
    a binned column that is not numeric; ParameterError for bad bounds or bins. Confidential result."""
    key = BinKey(column, lower, upper, bins)
    if bounding is not None and group_column not in bounding.categories:
        bounding = dataclasses.replace(bounding, categories={**bounding.categories, group_column: groups.labels})
    counted = source.grouped_counts((ValueKey(group_column), key), bounding=bounding, progress=progress,
                                    should_cancel=should_cancel)
    if counted.rows == 0:  # the words of one histogram's refusal (dpgui.data.histogram.histogram_of)
        where = f"file {counted.where}" if counted.rows_numbered else counted.where
        raise DataError(f"{where} has no data rows", "choose a table or file with data rows")
    return histograms_on_groups(histograms_by_group(counted, missing), groups, key, missing)
