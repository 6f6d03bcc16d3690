"""A hierarchy's tree: nested categorical labels, their one order, and the node counts of each level."""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from dpgui.errors import DataError, ParameterError


MIN_LEVELS = 2
MAX_LEVELS = 4
MAX_NODES_PER_LEVEL = 500_000
#: Between the labels of a node's path in the released CSV (dpgui.report.hierarchy.bundle); refused in labels.
PATH_SEPARATOR = " > "


_NUMBER_LABEL = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$")
_DIGIT_RUNS = re.compile(r"([0-9]+)")

LabelOrderKey = tuple[int, float, tuple[tuple[int, int, str, str], ...], str]


def label_order_key(label: str) -> LabelOrderKey:
    """The one order of category labels (the tree in the window, the CSV, the PDF): labels that are
    numbers by their value (1, 2, 10, 100, 101; −1 and 0.5 too), before the others; the others in
    natural order, a run of digits by its value and the rest ignoring case ("R2" before "R10", "apple"
    before "Banana"); exact ties by the text itself. Labels stay text: only their order reads them."""
    stripped = label.strip()
    if _NUMBER_LABEL.match(stripped):
        return (0, float(stripped), (), label)
    parts = tuple((0, int(run), "", "") if _DIGIT_RUNS.fullmatch(run) else (1, 0, run.casefold(), run)
                  for run in _DIGIT_RUNS.split(label) if run)
    return (1, 0.0, parts, label)


#: Unicode category Cc (C0 and C1 control characters: line breaks, tabs, NUL, …).
_CONTROL_CHARACTER = re.compile("[\x00-\x1f\x7f-\x9f]")


def _label(value: object, level_name: str) -> str:
    """A node label: a non-empty string; numbers become their text; None/NaN/empty are errors."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise DataError(f"a value of level column {level_name!r} is missing",
                        "fill in or drop the rows with a missing level value")
    if isinstance(value, str):
        text = value
    elif isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, (bool, np.bool_)):
        text = str(value)
    else:
        raise DataError(f"level column {level_name!r} holds a value of type {type(value).__name__}",
                        "give text (or numeric) category labels")
    if not text.strip():
        raise DataError(f"level column {level_name!r} has an empty value",
                        "fill in or drop the rows with an empty level value")
    if PATH_SEPARATOR in text:
        raise DataError(f"a value of level column {level_name!r} contains '{PATH_SEPARATOR.strip()}' between "
                        f"spaces, which separates the levels of a path in the released CSV",
                        f"replace '{PATH_SEPARATOR}' in the values, e.g. by ' / '")
    if _CONTROL_CHARACTER.search(text):
        raise DataError(f"a value of level column {level_name!r} holds a control character (a line break, "
                        "tab or the like)", "remove line breaks and tabs from the category values")
    return text


def _check_lookalikes(level_name: str, labels: Sequence[str]) -> None:
    """Two labels of a level that differ only in Unicode normalisation or surrounding spaces ('Café' with
    a composed é and with e + combining accent; 'Paris' and 'Paris ') show the same in the CSV, the PDF
    and the window: a DataError naming the column (not the values: they may be confidential). O(n)."""
    seen: dict[str, str] = {}
    for label in labels:
        key = unicodedata.normalize("NFC", label).strip()
        other = seen.setdefault(key, label)
        if other != label:
            raise DataError(f"two values of level column {level_name!r} look the same but differ (Unicode "
                            "normalisation or leading/trailing spaces; not shown here: values of the data are never "
                            "quoted in a message)",
                            "make them one value (same characters, no leading or trailing spaces) or clearly different")


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """The public structure of a hierarchy: level names, node labels, parent indices (no counts).

    ``labels[ℓ-1][i]`` is the label of node i on level ℓ (ℓ = 1..L); ``parents[ℓ-1][i]`` the index on
    level ℓ−1 of its parent (int64; all 0 on level 1, the root). Nodes of a level are ordered by
    parent index, then label (:func:`label_order_key`), so each parent's children are contiguous on
    the next level.
    """

    level_names: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]
    parents: tuple[np.ndarray, ...]
    _leaf_lookup: dict[tuple[str, ...], int] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def from_paths(cls, level_names: Sequence[str], paths: Sequence[Sequence[object]]) -> Hierarchy:
        """The tree whose leaves are the given full paths (one label per level, top first; repeats are
        one leaf). A value under two parents, empty or missing labels, fewer than 2 or more than 4
        levels, or more than 500,000 nodes on a level raise :class:`DataError`/:class:`ParameterError`
        naming the problem and its fix. O(P log P) for P paths."""
        names = tuple(str(n) for n in level_names)
        depth = len(names)
        if depth < MIN_LEVELS:
            raise ParameterError(f"a hierarchy needs at least {MIN_LEVELS} level columns, got {depth}",
                                 "choose 2 to 4 nested columns, e.g. region,district")
        if depth > MAX_LEVELS:
            raise ParameterError(f"a hierarchy has at most {MAX_LEVELS} level columns, got {depth}",
                                 "choose 2 to 4 nested columns (drop the finest or merge some)")
        if len(set(names)) != depth:
            raise ParameterError(f"a level column is given twice: {', '.join(names)}", "give each level column once")
        if len(paths) == 0:
            raise DataError("the hierarchy has no rows", "give data (or a prior) with at least one row")
        # parent_of[ℓ][label] = the label on level ℓ−1 (ℓ ≥ 1; level 0 labels have the root as parent)
        parent_of: list[dict[str, str]] = [{} for _ in range(depth)]
        leaves: set[tuple[str, ...]] = set()
        for raw in paths:
            if len(raw) != depth:
                raise DataError(f"a path has {len(raw)} values for {depth} levels",
                                f"give one value per level column ({', '.join(names)})")
            path = tuple(_label(v, names[i]) for i, v in enumerate(raw))
            if path in leaves:
                continue
            leaves.add(path)
            for ell in range(1, depth):
                label, parent = path[ell], path[ell - 1]
                seen = parent_of[ell].setdefault(label, parent)
                if seen != parent:
                    raise DataError(  # the values are not quoted: they may be confidential cells
                        f"a value of level {names[ell]!r} appears under two parents of level {names[ell - 1]!r}",
                        f"make the values of {names[ell]!r} unique, e.g. prefix each with its parent ('PARENT/VALUE')")
        level_labels: list[list[str]] = [sorted({p[0] for p in leaves}, key=label_order_key)]
        parents: list[np.ndarray] = [np.zeros(len(level_labels[0]), dtype=np.int64)]
        for ell in range(1, depth):
            index = {lab: i for i, lab in enumerate(level_labels[-1])}
            keyed = sorted(((index[parent_of[ell][lab]], lab) for lab in parent_of[ell]),
                           key=lambda item: (item[0], label_order_key(item[1])))
            level_labels.append([lab for _, lab in keyed])
            parents.append(np.fromiter((p for p, _ in keyed), dtype=np.int64, count=len(keyed)))
        for ell, labs in enumerate(level_labels):
            _check_lookalikes(names[ell], labs)
            if len(labs) > MAX_NODES_PER_LEVEL:
                raise ParameterError(
                    f"level {names[ell]!r} has {len(labs):,} distinct values, more than {MAX_NODES_PER_LEVEL:,}",
                    "choose a coarser column for this level (a hierarchy level is a category, not an identifier)")
        for p in parents:
            p.setflags(write=False)
        return cls(names, tuple(tuple(labs) for labs in level_labels), tuple(parents))

    @property
    def n_levels(self) -> int:
        """L, the number of level columns (the root not counted)."""
        return len(self.level_names)

    @property
    def level_sizes(self) -> tuple[int, ...]:
        """(1, n_1, …, n_L): nodes per level, root first."""
        return (1, *(len(labs) for labs in self.labels))

    @property
    def n_nodes(self) -> int:
        return sum(self.level_sizes)

    def _check_level(self, level: int, top: int) -> int:
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= top:
            raise ParameterError(f"level must be a whole number in 0..{top}, got {level!r}", f"give a level 0..{top}")
        return int(level)

    def child_ranges(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(start, end) on level+1, end exclusive, of the children of each node of ``level`` (0..L−1)."""
        level = self._check_level(level, self.n_levels - 1)
        parents = self.parents[level]
        nodes = np.arange(self.level_sizes[level], dtype=np.int64)
        return (np.searchsorted(parents, nodes, side="left").astype(np.int64),
                np.searchsorted(parents, nodes, side="right").astype(np.int64))

    def path(self, level: int, index: int) -> tuple[str, ...]:
        """The labels from level 1 down to node ``index`` of ``level`` (() for the root)."""
        level = self._check_level(level, self.n_levels)
        if not 0 <= int(index) < self.level_sizes[level]:
            raise ParameterError(f"node {index} does not exist on level {level}",
                                 f"give an index below {self.level_sizes[level]}")
        out: list[str] = []
        i = int(index)
        for ell in range(level, 0, -1):
            out.append(self.labels[ell - 1][i])
            i = int(self.parents[ell - 1][i])
        return tuple(reversed(out))

    def leaf_index(self, paths: Sequence[Sequence[str]]) -> np.ndarray:
        """Index among the leaves of each full path (int64); a path not in the tree is a DataError naming
        the first few and the fix (add them to the prior). O(P)."""
        if not self._leaf_lookup:
            depth = self.n_levels
            columns: list[list[str]] = []
            ancestor = np.arange(self.level_sizes[depth], dtype=np.int64)
            for ell in range(depth, 0, -1):  # the label of every leaf's ancestor on each level, vectorised
                labels = self.labels[ell - 1]
                columns.append([labels[i] for i in ancestor.tolist()])
                ancestor = self.parents[ell - 1][ancestor]
            self._leaf_lookup.update({path: i for i, path in enumerate(zip(*reversed(columns)))})
        lookup = self._leaf_lookup
        out = np.empty(len(paths), dtype=np.int64)
        missing: list[tuple[str, ...]] = []
        for k, p in enumerate(paths):
            key = tuple(str(v) for v in p)
            i = lookup.get(key, -1)
            if i < 0:
                missing.append(key)
            out[k] = i
        if missing:
            raise DataError(f"{len(missing):,} path(s) of the data are not in the hierarchy's tree (not listed: "
                            "values of the data are never quoted in a message)",
                            "add them to the prior (the public list of categories) or fix the data")
        return out

    def aggregate(self, leaf_counts: npt.ArrayLike) -> tuple[np.ndarray, ...]:
        """int64 counts of levels 0..L (root first) from the leaf counts, summed up the tree. O(nodes)."""
        leaves = np.asarray(leaf_counts)
        if leaves.shape != (self.level_sizes[-1],):
            raise DataError(f"{leaves.size} leaf counts for {self.level_sizes[-1]} leaves",
                            "give one count per leaf, in the hierarchy's leaf order")
        if leaves.dtype.kind not in "iu" and (leaves.dtype.kind != "f" or np.any(leaves != np.floor(leaves))):
            raise DataError("leaf counts must be whole numbers", "give integer counts")
        counts = leaves.astype(np.int64)
        if counts.size and counts.min() < 0:
            raise DataError("leaf counts must be ≥ 0", "give non-negative counts")
        levels = [counts]
        for ell in range(self.n_levels - 1, -1, -1):
            starts, _ = self.child_ranges(ell)
            levels.append(np.add.reduceat(levels[-1], starts).astype(np.int64))
        return tuple(reversed(levels))
