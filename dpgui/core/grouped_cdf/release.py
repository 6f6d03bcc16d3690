"""The release of a grouped CDF: every listed group's CDF, as one CDF release gives it, and each group's
noisy size (docs/privacy-model.md, "A CDF for each group").

Each released group's histogram goes through the single CDF's steps with the shared tree plan
(:mod:`dpgui.core.mechanism`: :func:`~dpgui.core.mechanism.leaf_counts`, :func:`~dpgui.core.mechanism.noisy_tree`,
:func:`~dpgui.core.mechanism.release_from_levels`): the same noise at the same level scales, the same
estimator and consistency. The root of every group's tree is noised (:class:`GroupTreePrivacy`), so each
group's ``total`` is its released size, never the exact one. A listed group absent from the data is
released from zero counts, with noise like any other.

Only :func:`release_grouped` reads confidential counts (through ``noisy_tree``); spend before calling it.
Cost: O(groups × K̄) plus one projection of the prefix variances, shared by every group.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpgui.core.grouped_cdf.plan import GroupedPlan
from dpgui.core.mechanism import Release, leaf_counts, noisy_tree, release_from_levels
from dpgui.core.noise import RandomSource
from dpgui.core.projection import prefix_variances
from dpgui.errors import ParameterError
from dpgui.vocabulary import CdfConsistency

__all__ = ["GroupedRelease", "release_grouped"]


@dataclass(frozen=True)
class GroupedRelease:
    """A released grouped CDF: public values only. ``releases[i]`` is the group ``plan.labels[i]``'s
    :class:`~dpgui.core.mechanism.Release` (cumulative counts, their standard errors, its released size
    ``total``); ``total_std_error`` is the standard error of each group's unbiased size estimate (the last
    real leaf's prefix, the same for every group: one plan)."""

    plan: GroupedPlan
    releases: tuple[Release, ...]
    total_std_error: float

    @property
    def labels(self) -> tuple[str, ...]:
        return self.plan.labels

    @property
    def totals(self) -> npt.NDArray[np.float64]:
        """Each group's released size, in the order of :attr:`labels`."""
        return np.array([r.total for r in self.releases], dtype=np.float64)

    @property
    def secure(self) -> bool:
        return all(r.secure for r in self.releases)

    def of(self, label: str) -> Release:
        """The release of the group ``label`` (KeyError if it is not released)."""
        if label not in self.labels:
            raise KeyError(label)
        return self.releases[self.labels.index(label)]


def _checked_counts(counts: Sequence[npt.ArrayLike] | npt.ArrayLike, missing: Sequence[int] | None,
                    groups: int, bins: int) -> tuple[npt.NDArray[np.int64], list[int]]:
    """(groups × bins) int64 counts and the missing values per group; ParameterError when they do not fit."""
    table = np.asarray(counts)
    if table.shape != (groups, bins):
        raise ParameterError(f"the counts have shape {table.shape}, the grouped plan needs {groups} groups × {bins} bins",
                             "give one histogram per released group, in the plan's order")
    if table.size and (not np.issubdtype(table.dtype, np.integer) or int(table.min()) < 0):
        raise ParameterError("the counts must be whole numbers ≥ 0", "give the histograms' counts")
    missing_list = [0] * groups if missing is None else list(missing)
    if len(missing_list) != groups:
        raise ParameterError(f"{len(missing_list)} missing counts for {groups} groups",
                             "give one number of missing values per released group")
    return table.astype(np.int64), missing_list


def release_grouped(counts: Sequence[npt.ArrayLike] | npt.ArrayLike, plan: GroupedPlan, source: RandomSource,
                    lower: float, upper: float, consistency: str = CdfConsistency.L2,
                    missing: Sequence[int] | None = None) -> GroupedRelease:
    """Noise, estimate and make consistent every released group's CDF with the shared tree plan.

    ``counts[i]``: the K value-bin counts of the group ``plan.labels[i]`` (zeros for a listed group absent
    from the data); ``missing[i]``: its number of missing values (None: none), counted as the plan's missing
    rule says (the missing leaf under change, dropped under add/remove, or imputed). Confidential in, public
    out; ε-DP (Laplace) or (ε, δ)-DP (Gaussian) at the shared plan's charge, once for all groups
    (:mod:`dpgui.core.grouped_cdf.plan`). Noise is drawn group after group from ``source``."""
    if consistency not in tuple(CdfConsistency):
        raise ParameterError(f"unknown consistency {consistency!r}", "use l2, l1 or none")
    tree = plan.tree
    table, missing_list = _checked_counts(counts, missing, len(plan.labels), tree.shape.bins)
    variances = prefix_variances(tree)
    std_error = np.sqrt(variances)
    releases = []
    for row, n_missing in zip(table, missing_list):
        leaves, left = leaf_counts(row, tree, n_missing, lower, upper)
        levels = noisy_tree(leaves, tree, source, left)
        releases.append(release_from_levels(tree, levels, lower, upper, consistency, bool(source.secure), std_error))
    return GroupedRelease(plan, tuple(releases), math.sqrt(float(variances[-1])))
