"""Tree shapes over K equal-width bins (Rameshwar, Tandon & Sharma §IV; docs/engine.md, "The tree shape").

A shape is a branching vector ``n = (n_1, …, n_h)``: level 0 is the root, level ``l`` holds
``n_1·…·n_l`` nodes, each the sum of its ``n_{l+1}`` children, and level ``h`` holds the
``K̄ = Π n_l ≥ K`` leaves. Leaves ``K+1 … K̄`` are public zero-count padding.

With ``missing_leaf`` (the ``change`` neighbour model, docs/privacy-model.md "Missing values") leaf
``K+1`` is a real leaf, the count of missing values, and the padding starts after it: the tree
has ``leaves = K + 1`` real leaves. ``bins`` is always K, the number of value bins.

Leaf positions are 0-based; "prefix j" means the first ``j`` leaves, i.e. the cumulative count
``C_j`` of bins ``1..j`` in the paper's 1-based notation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Sequence

import numpy as np

from dpgui.errors import ParameterError

#: The fewest value bins a tree (and so a release) has.
MIN_BINS = 2
#: The most value bins the engine and the data layer accept.
MAX_BINS = 2**26


def bin_edges(lower: float, upper: float, bins: int) -> np.ndarray:
    """The ``bins + 1`` edges of the equal-width value bins on [lower, upper): edge j = j·w + lower with
    w = (upper − lower)/bins, the last one upper, i.e. ``numpy.linspace(lower, upper, bins + 1)``. The one
    formula: the histogram counts with these edges (:mod:`dpgui.data.histogram`, bin j = [edge j, edge j+1))
    and a release prints them, so a published edge is the one the records were counted against (another
    rounding, e.g. lower + (upper − lower)·j/bins, gives 0.3 where the count used 0.30000000000000004). O(K)."""
    return np.linspace(lower, upper, bins + 1)


def check_bins(bins: object, minimum: int = MIN_BINS) -> int:
    """The one rule for a number of bins K: a whole number (not a bool) with ``minimum ≤ K ≤ MAX_BINS``;
    returns it as an int, else :class:`~dpgui.errors.ParameterError`. ``minimum`` is :data:`MIN_BINS`
    for a tree; a plain histogram (:func:`dpgui.data.histogram.values_histogram`) may have 1 bin. O(1)."""
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise ParameterError(f"the number of bins must be a whole number, got {bins!r}",
                             "give a whole number such as 256")
    k = int(bins)
    if k < minimum:
        raise ParameterError(f"the number of bins must be at least {minimum}, got {k}", f"use {minimum} or more bins")
    if k > MAX_BINS:
        raise ParameterError(f"{k:,} is too many bins (the maximum is {MAX_BINS:,} = 2**26)",
                             f"use at most {MAX_BINS:,} bins")
    return k


@dataclass(frozen=True)
class TreeShape:
    """A level-uniform tree over ``bins`` value leaves (plus the missing leaf if ``missing_leaf``)
    padded to ``Π branching`` leaves."""

    bins: int
    branching: tuple[int, ...]
    missing_leaf: bool = False

    def __post_init__(self) -> None:
        check_bins(self.bins)
        if len(self.branching) == 0:
            raise ParameterError("the branching vector is empty", "give at least one factor, e.g. 16")
        for b in self.branching:
            if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 2:
                raise ParameterError(
                    f"every branching factor must be a whole number ≥ 2, got {b!r}",
                    "use factors such as 16x16 or 2x2x2",
                )
        object.__setattr__(self, "branching", tuple(int(b) for b in self.branching))
        object.__setattr__(self, "missing_leaf", bool(self.missing_leaf))
        if self.padded_bins < self.leaves:
            if self.missing_leaf and self.padded_bins == self.bins:
                top = "x".join(str(b) for b in (self.branching[0] + 1, *self.branching[1:]))
                raise ParameterError(
                    f"branching {self.label} covers only {self.padded_bins} leaves but the tree needs K + 1 = "
                    f"{self.leaves} (the K = {self.bins} bins and one leaf that counts missing values)",
                    f"use factors whose product is at least K + 1 (e.g. {top}: one more top branch holds the missing "
                    "leaf), auto, or count missing values as a value you choose (impute)",
                )
            if self.missing_leaf:
                raise ParameterError(
                    f"branching {self.label} covers only {self.padded_bins} leaves but the tree needs K + 1 = "
                    f"{self.leaves} (the K = {self.bins} bins and one leaf that counts missing values)",
                    "use factors whose product is at least K + 1, or auto",
                )
            raise ParameterError(
                f"branching {self.label} covers only {self.padded_bins} bins but K = {self.bins}",
                "use factors whose product is at least K",
            )
        if self.padded_bins > max(2**27, 4 * self.bins):
            raise ParameterError(
                f"branching {self.label} pads K = {self.bins} to {self.padded_bins} leaves",
                "use factors whose product is at most about 2K",
            )

    @classmethod
    def parse(cls, bins: int, text: str, missing_leaf: bool = False) -> TreeShape:
        """Parse ``"16"`` (equal factor, as many levels as needed) or ``"4x16x16"``."""
        bins = check_bins(bins)
        parts = text.lower().replace("*", "x").split("x")
        try:
            factors = [int(p) for p in parts]
        except ValueError:
            raise ParameterError(
                f"cannot read branching {text!r}", "use auto, a factor like 16, or factors like 4x16x16"
            ) from None
        if len(factors) == 1:
            return cls.uniform(bins, factors[0], missing_leaf)
        return cls(bins, tuple(factors), missing_leaf)

    @classmethod
    def uniform(cls, bins: int, factor: int, missing_leaf: bool = False) -> TreeShape:
        """Equal branching ``factor`` with the fewest levels whose product reaches the K value bins.

        The missing leaf never adds a level: when ``factor``^h is exactly K, the root gets one more
        child (``factor + 1`` at the top: a branch holding the missing leaf and padding), so K̄ grows
        by K/``factor`` leaves instead of ``factor``-fold (K = 997, factor 997: one level of 998 leaves,
        not 997 × 997). The value bins' tree and its errors are those of the K-bin tree."""
        bins = check_bins(bins)
        if isinstance(factor, bool) or not isinstance(factor, (int, np.integer)) or factor < 2:
            raise ParameterError(f"branching factor must be ≥ 2, got {factor!r}", "use e.g. 2 or 16")
        levels, span = 1, factor
        while span < bins:
            levels += 1
            span *= factor
        branching = [int(factor)] * levels
        if missing_leaf and span == bins:  # no room for leaf K + 1: one more top branch, not one more level
            branching[0] += 1
        return cls(bins, tuple(branching), missing_leaf)

    @property
    def leaves(self) -> int:
        """Real (not padding) leaves: K, or K + 1 with the missing leaf."""
        return self.bins + int(self.missing_leaf)

    @property
    def missing_branch(self) -> bool:
        """Is the top level's last branch there only for the missing leaf (the other branches hold exactly the
        K bins, as :meth:`uniform` makes it when B^h = K)? Then a report says so. O(h)."""
        rest = math.prod(self.branching[1:])
        return self.missing_leaf and (self.branching[0] - 1) * rest == self.bins

    @property
    def height(self) -> int:
        """Number of levels below the root (h)."""
        return len(self.branching)

    @property
    def padded_bins(self) -> int:
        """K̄ = Π n_l."""
        return math.prod(self.branching)

    @property
    def label(self) -> str:
        return "x".join(str(b) for b in self.branching)

    @property
    def leaves_per_node(self) -> tuple[int, ...]:
        """s_l for l = 0..h: leaves under one level-l node (s_0 = K̄, s_h = 1)."""
        sizes = [self.padded_bins]
        for b in self.branching:
            sizes.append(sizes[-1] // b)
        return tuple(sizes)

    def nodes_at_level(self, level: int) -> int:
        return self.padded_bins // self.leaves_per_node[level]

    @property
    def node_count(self) -> int:
        return sum(self.nodes_at_level(level) for level in range(self.height + 1))

    def level_counts(self, leaf_counts: np.ndarray, missing: int = 0) -> list[np.ndarray]:
        """True node counts per level (root first) from the K (unpadded) value-bin counts and,
        with the missing leaf, the number of missing values (leaf K+1). O(K̄)."""
        padded = np.zeros(self.padded_bins, dtype=np.int64)
        padded[: self.bins] = leaf_counts
        if self.missing_leaf:
            padded[self.bins] = missing
        levels = [padded]
        for size in reversed(self.leaves_per_node[:-1]):
            levels.append(padded.reshape(-1, size).sum(axis=1))
        return levels[::-1]

    def node_intervals(self, level: int, lower: float, upper: float) -> tuple[np.ndarray, np.ndarray]:
        """Value-space ``[lo, hi)`` of every node at ``level``; padding extends past ``upper``."""
        width = (upper - lower) / self.bins
        size = self.leaves_per_node[level]
        starts = np.arange(self.nodes_at_level(level), dtype=np.float64) * size
        return lower + starts * width, lower + (starts + size) * width

    def covering_digits(self, prefix: np.ndarray, released: Sequence[bool] | None = None) -> np.ndarray:
        """Nodes per level in the covering of each prefix (Rameshwar, Tandon & Sharma Lemma IV.1), shape (len, h+1).

        Column ``l`` counts the level-``l`` nodes of the covering of the first ``j`` leaves. With all
        levels released it is the mixed-radix digit ``(j // s_l) mod n_l`` and the root column is
        ``j // K̄``. A level not released is replaced by its children, so its count moves down to
        the next released level. O(len·h).
        """
        sizes = self.leaves_per_node
        released = [True] * (self.height + 1) if released is None else list(released)
        prefix = np.asarray(prefix, dtype=np.int64)
        digits = np.zeros((prefix.size, self.height + 1), dtype=np.int64)
        above: int | None = None  # nearest released level above
        for level in range(self.height + 1):
            if not released[level]:
                continue
            full = prefix // sizes[level]
            if above is not None:
                full = full - (prefix // sizes[above]) * (sizes[above] // sizes[level])
            digits[:, level] = full
            above = level
        return digits


def beta_star() -> float:
    """β* of Rameshwar, Tandon & Sharma Lemma IV.3: the root of log β = 3(β − 1)/β above 3 (≈ 16.79)."""
    from scipy.optimize import brentq

    return float(brentq(lambda b: math.log(b) - 3.0 * (b - 1.0) / b, 3.0, 100.0))
