"""Counts over a categorical hierarchy: the tree, the level-budget plan, projections and the release.

The model (docs/design.md; paper 001 = Ko, Ziani & Fioretto, "Optimal Allocation of Privacy Budget on
Hierarchical Data Release"; paper 004 = counting on trees under (ε, δ)):

* **Tree.** L = 2..4 nested categorical columns. Level 0 is the root (all records, one node); level
  ℓ = 1..L holds the distinct values of column ℓ, each under its one parent. Nodes of a level are
  ordered by (parent index, label), so each parent's children are contiguous. A value under two
  parents, an empty label or a missing value is a :class:`~dpgui.errors.DataError` with its fix.
* **Public.** The node list (every node gets a released count, zeros included), the level budgets,
  weights and noise scales (:class:`HierarchyPlan`), and — when the optimiser needs them — the
  *prior* counts (a public file or an earlier release; the confidential data only by an explicit,
  recorded opt-in: paper 001 §3.2 and §6 note that level budgets computed from the confidential
  counts and then published are not covered by the DP guarantee). Under ``change`` also the root N.
* **Neighbours and sensitivity per level** (:class:`~dpgui.core.plan.PrivacySpec`, L records per
  person): ``change`` — one person's records change their paths; on each level at most 2L node
  counts move by one: L1 sensitivity Δ = 2L, squared L2 Δ₂² = 2L²; the root N is public and not
  noised. ``addremove`` — L records are added or removed: Δ = L, Δ₂² = L², the root is a noised
  level like the others. Each level is one release of a count vector, so by basic composition
  (Laplace: Σ ε_ℓ = ε) or zCDP composition (Gaussian: Σ ρ_ℓ = ρ = zcdp_rho(ε, δ)) the whole is
  (ε, δ)-DP.
* **Noise.** ``laplace``: level ℓ gets exact discrete-Laplace noise of scale
  t_ℓ = laplace_scale(Δ, ε_ℓ) ≥ Δ/ε_ℓ (paper 001 uses Lap(1/ε), Δ = 1; we write its formulas with
  b = Δ/ε). ``gaussian`` (δ > 0): discrete Gaussian σ_ℓ² = gaussian_sigma2(Δ₂², ρ_ℓ) (paper 004's
  Corollary 2.7 baseline). ``multiplicative``: paper 004's Algorithms 1–2
  (:mod:`dpgui.core.counting_trees`).
* **Released values.** ``consistency="none"``: each node max(0, noisy count) (paper 001 eq. 1).
  ``topdown``: paper 001 program (8) from the root down with integrality (children non-negative
  integers summing exactly to their parent's released value); ``gls``: the BLUE on the tree, then
  the same integer top-down step (:mod:`dpgui.core.hierarchy_consistency`). Under change the root is
  N exactly.
* **Errors.** Per node: paper 001 Props 1–2 / eq. (3) (continuous Laplace) and their exact discrete
  versions; per level summed; across levels eq. (5); level budgets by programs (6)/(7) — all in
  :mod:`dpgui.core.hierarchy_budget`, re-exported here. :func:`project_hierarchy` gives per-level
  bias², variance, MSE and the 95 % margin of one count (:attr:`LevelProjection.margin95`) on public
  prior (or assumed, :func:`assumed_levels`) counts: closed form for ``none``, Monte Carlo (seeded
  releases through the release code) for consistent and multiplicative releases;
  :func:`simulate_hierarchy` the same empirically on given counts.
* **Automatic choices** (:func:`plan_hierarchy`, each said in ``HierarchyPlan.notes``): the noise
  with the lower projected error, the consistency with the lower projected weighted MSE.
* **Intervals** (95 %, :func:`release_hierarchy`): exact noise quantiles for ``none`` (≥ 95 % per
  node); a parametric bootstrap for consistent releases (≈ 95 % on average over a level's nodes);
  paper 004's buckets for multiplicative (≥ 95 % per node on its success event).
* **Downstream** (paper 001 §5): :func:`downstream_allocation` / :func:`downstream_projection`, the
  bias² and variance (in %) of a budget split among a node's children in proportion to W(P).

Everything here is Qt-free and I/O-free; work is vectorised per level (``np.add.reduceat`` over the
contiguous children of each parent), never a Python loop over nodes (only building the tree from
label tuples loops over the paths, once).
"""

from __future__ import annotations

import hashlib
import math
import numbers
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from dpgui.core.accounting import release_charge, zcdp_epsilon
from dpgui.core.counting_trees import (
    MultiplicativeParams,
    multiplicative_intervals,
    multiplicative_params,
    multiplicative_privacy,
    recommend_alpha_mechanism,
    release_multiplicative,
)
from dpgui.core.hierarchy_budget import (
    clamped_discrete_gaussian_moments,
    clamped_discrete_laplace_moments,
    clamped_laplace_bias,
    clamped_laplace_mse,
    clamped_laplace_variance,
    least_budget_for_target,
    optimal_allocation,
    weighted_mse,
)
from dpgui.core.noise import (
    RandomSource,
    SeededRandom,
    discrete_gaussian_pmf,
    discrete_gaussian_variance,
    discrete_laplace_variance,
    gaussian_sigma2,
    gaussian_sigma2_problem,
    laplace_scale,
    laplace_scale_problem,
    sample_discrete_gaussian_levels,
    sample_discrete_laplace_levels,
)
from dpgui.core.hierarchy_consistency import gls_consistent, topdown_consistent
from dpgui.core.plan import BUDGET_RTOL, PrivacySpec, budget_total, split_budget
from dpgui.core.quantiles import noise_margin
from dpgui.errors import DataError, ParameterError

__all__ = [
    "MIN_LEVELS",
    "MAX_LEVELS",
    "MAX_NODES_PER_LEVEL",
    "HIERARCHY_NOISES",
    "HIERARCHY_NOISE_CHOICES",
    "ALLOCATIONS",
    "CONSISTENCY_METHODS",
    "CONSISTENCY_CHOICES",
    "INTERVAL_LEVEL",
    "PATH_SEPARATOR",
    "Hierarchy",
    "label_order_key",
    "HierarchyPlan",
    "LevelProjection",
    "HierarchyProjection",
    "HierarchyRelease",
    "clamped_laplace_bias",
    "clamped_laplace_variance",
    "clamped_laplace_mse",
    "clamped_discrete_laplace_moments",
    "clamped_discrete_gaussian_moments",
    "weighted_mse",
    "optimal_allocation",
    "least_budget_for_target",
    "plan_hierarchy",
    "project_hierarchy",
    "assumed_levels",
    "noise_only_projection",
    "release_hierarchy",
    "simulate_hierarchy",
    "projection_trials",
    "downstream_allocation",
    "DOWNSTREAM_WEIGHTS",
    "DownstreamFigure",
    "downstream_projection",
]

MIN_LEVELS = 2
MAX_LEVELS = 4
MAX_NODES_PER_LEVEL = 500_000
#: The range of a level's weight in the weighted MSE (Ko, Ziani & Fioretto's eq. 5), or 0. Only the
#: weights' ratios move the optimal budgets; beyond a ratio of 10¹² the optimiser's arithmetic overflows.
MIN_LEVEL_WEIGHT, MAX_LEVEL_WEIGHT = 1e-6, 1e6
HIERARCHY_NOISES = ("laplace", "gaussian", "multiplicative")
HIERARCHY_NOISE_CHOICES = (*HIERARCHY_NOISES, "auto")
ALLOCATIONS = ("uniform", "optimal", "target", "custom")  # custom: level budgets set by hand (never planned)
CONSISTENCY_METHODS = ("topdown", "gls", "none")
CONSISTENCY_CHOICES = (*CONSISTENCY_METHODS, "auto")
#: Where the counts a plan was optimised and projected on came from (``HierarchyPlan.prior_source``): none, a
#: public prior file, or the confidential data (the officer's recorded opt-in). The one spelling of each.
NO_PRIOR = "none"
PRIOR_FILE = "prior file"
CONFIDENTIAL_PRIOR = "confidential data (opted in)"
PRIOR_SOURCES = (NO_PRIOR, PRIOR_FILE, CONFIDENTIAL_PRIOR)
#: The counts a projection was made at, in words (window and CLI); no counts: no entry.
COUNTS_WORDS = {PRIOR_FILE: "the prior's counts", CONFIDENTIAL_PRIOR: "the data's counts (opted in)"}
#: Between the labels of a node's path in the released CSV (dpgui.report.hierarchy_bundle); refused in labels.
PATH_SEPARATOR = " > "
#: The coverage of the per-node intervals of a release.
INTERVAL_LEVEL = 0.95
NOISE_ONLY_METHOD = ("noise only: no counts are known, so the clamp at zero and the consistency step (which lower the "
                     "error of small counts) are not included")


# ----------------------------------------------------------------------------------------------
# The tree
# ----------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------
# The plan
# ----------------------------------------------------------------------------------------------


def _check_choice(value: object, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise ParameterError(f"unknown {what} {value!r}", "use " + ", ".join(repr(a) for a in allowed))
    return str(value)


def _check_multiplicative_params(params: MultiplicativeParams, sizes: tuple[int, ...], privacy: PrivacySpec) -> None:
    """Paper 004's parameters must be the ones made for this tree and privacy spec (an edited saved
    plan could otherwise draw noise for another ε, neighbour model or group size than the ledger is
    charged for), and their composition (:func:`counting_trees.multiplicative_privacy`) must stay
    within the spec's (ε, δ). ParameterError otherwise. O(rounds)."""
    made_for = (params.level_sizes, params.neighbours, params.records_per_person, params.group_size,
                params.epsilon, params.delta)
    this = (sizes, privacy.neighbours, privacy.records_per_person, privacy.level_sensitivity, privacy.epsilon,
            privacy.delta)
    if made_for != this:
        raise ParameterError("the multiplicative mechanism's parameters were made for another tree or privacy spec "
                             "than the plan's", "make the plan again (do not edit a saved plan)")
    try:
        eps, delta = multiplicative_privacy(params)
    except (ArithmeticError, ValueError):
        eps, delta = math.inf, math.inf
    if not (eps <= privacy.epsilon * (1 + BUDGET_RTOL) and delta <= privacy.delta * (1 + BUDGET_RTOL)):
        raise ParameterError(f"the multiplicative mechanism's parameters spend (ε, δ) = ({eps:.4g}, {delta:.3g}), more "
                             f"than the plan's ({privacy.epsilon:g}, {privacy.delta:g})",
                             "make the plan again (do not edit a saved plan)")


#: The largest number of records a plan may assume (beyond any real table; keeps the counts in int64).
MAX_ASSUMED_RECORDS = 10**15


def check_assumed_records(records: object) -> int:
    """``records`` as the number of records a projection assumes: a whole number from 1 to 10¹⁵
    (ParameterError with the fix otherwise)."""
    if isinstance(records, bool) or not isinstance(records, numbers.Integral) or not 1 <= int(records) <= MAX_ASSUMED_RECORDS:
        raise ParameterError(f"the number of records to assume, {records!r}, is not a whole number from 1 to "
                             f"{MAX_ASSUMED_RECORDS:.0e}", "give a public figure such as 12000 (an estimate will do)")
    return int(records)


def assumed_levels(hierarchy: Hierarchy, records: int) -> tuple[np.ndarray, ...]:
    """Counts per level (root first) when ``records`` are spread evenly over the leaves: each leaf gets
    ⌊records / leaves⌋, the first (records mod leaves) leaves in the tree's order one more, and every
    node is the sum of its leaves. Each level's mean count is records / categories. Public: it uses the
    tree's shape and ``records`` only. O(nodes)."""
    total = check_assumed_records(records)
    leaves = hierarchy.level_sizes[-1]
    counts = np.full(leaves, total // leaves, dtype=np.int64)
    counts[: total % leaves] += 1
    return hierarchy.aggregate(counts)


def _check_level_sizes(level_sizes: Sequence[int]) -> tuple[int, ...]:
    sizes = tuple(int(s) for s in level_sizes)
    if not MIN_LEVELS + 1 <= len(sizes) <= MAX_LEVELS + 1 or sizes[0] != 1 or any(s < 1 for s in sizes):
        raise ParameterError(f"level sizes {sizes} are not (1, n_1, …, n_L) with 2 ≤ L ≤ 4 and n_ℓ ≥ 1",
                             "give the node count of each level, root (1) first")
    return sizes


@dataclass(frozen=True)
class HierarchyPlan:
    """Everything that decides a hierarchy release's noise; public and JSON-serialisable.

    ``level_budgets[ℓ]`` for ℓ = 0..L: ε_ℓ (laplace, Σ = privacy.epsilon) or ρ_ℓ (gaussian,
    Σ = privacy.rho); 0 for the root under change (public, exact); () for multiplicative.
    ``weights`` are eq. (5)'s w_ℓ (root first). ``notes`` say how automatic choices were made.
    ``allocation`` "custom": the level budgets were set by hand (not by :func:`plan_hierarchy`).
    ``assumed_records``: without prior counts, the number of records the plan's projected errors assume,
    spread evenly over the categories (:func:`dpgui.core.hierarchy_errors.assumed_levels`): N under
    change (public), a published estimate typed by the officer under add/remove (never the data's
    count); None: not stated.
    """

    level_sizes: tuple[int, ...]
    privacy: PrivacySpec
    noise: str
    level_budgets: tuple[float, ...]
    weights: tuple[float, ...]
    allocation: str
    consistency: str
    target_mse: float | None = None
    prior_source: str = "none"
    multiplicative: MultiplicativeParams | None = None  # paper 004's parameters, when noise is multiplicative
    notes: tuple[str, ...] = ()
    assumed_records: int | None = None

    def __post_init__(self) -> None:
        sizes = _check_level_sizes(self.level_sizes)
        if self.assumed_records is not None:
            object.__setattr__(self, "assumed_records", check_assumed_records(self.assumed_records))
        object.__setattr__(self, "level_sizes", sizes)
        _check_choice(self.noise, HIERARCHY_NOISES, "noise")
        _check_choice(self.allocation, ALLOCATIONS, "allocation")
        _check_choice(self.consistency, CONSISTENCY_METHODS, "consistency")
        _check_choice(self.prior_source, PRIOR_SOURCES, "prior source")
        weights = tuple(float(w) for w in self.weights)
        if len(weights) != len(sizes) or not all(_usable_weight(w) for w in weights):
            raise ParameterError(f"weights {list(weights)} are not one weight per level (root first), each 0 or from "
                                 f"{MIN_LEVEL_WEIGHT:g} to {MAX_LEVEL_WEIGHT:g}", f"give {len(sizes)} weights")
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "notes", tuple(str(n) for n in self.notes))
        if self.target_mse is not None:
            object.__setattr__(self, "target_mse", float(self.target_mse))
        if self.noise in ("gaussian", "multiplicative") and self.privacy.delta <= 0:
            raise ParameterError(f"{self.noise} noise needs δ > 0", "set δ, e.g. 1e-9, or choose Laplace noise")
        if self.noise == "multiplicative":
            if self.multiplicative is None:
                raise ParameterError("a multiplicative plan needs its paper-004 parameters", "plan it with plan_hierarchy")
            if self.consistency != "none" or self.allocation != "uniform":
                raise ParameterError(f"a multiplicative plan releases its counts as they are (consistency none, uniform "
                                     f"allocation), not with {self.consistency} consistency and a {self.allocation} "
                                     "allocation", "make the plan again (do not edit a saved plan)")
            _check_multiplicative_params(self.multiplicative, sizes, self.privacy)
            object.__setattr__(self, "level_budgets", ())
            return
        budgets = tuple(float(b) for b in self.level_budgets)
        unit = "ρ" if self.noise == "gaussian" else "ε"
        if len(budgets) != len(sizes):
            raise ParameterError(f"{len(budgets)} level budgets for {len(sizes)} levels (root first)",
                                 f"give {len(sizes)} budgets (0 for the public root under change)")
        if any(not math.isfinite(b) or b < 0 for b in budgets):
            raise ParameterError(f"level budgets must be finite and ≥ 0, got {list(budgets)}", "give positive budgets")
        first = self.privacy.first_noised_level()
        if first == 1 and budgets[0] != 0:
            raise ParameterError("under change the root count is public and exact: it takes no budget",
                                 "give the root a budget of 0")
        for ell in range(first, len(sizes)):
            if budgets[ell] <= 0:
                raise ParameterError(f"level {ell} has no budget, but every node of every level is released",
                                     f"give level {ell} a budget > 0")
        total, expected = math.fsum(budgets), budget_total(self.privacy, self.noise)
        if abs(total - expected) > BUDGET_RTOL * expected:
            raise ParameterError(f"level budgets sum to {unit} = {total:.12g}, not {unit} = {expected:.12g}",
                                 f"make the budgets add up to {unit}")
        object.__setattr__(self, "level_budgets", budgets)
        for ell, scale in enumerate(self.level_scales()):
            if scale is None:
                continue
            problem = gaussian_sigma2_problem(scale) if self.noise == "gaussian" else laplace_scale_problem(scale)
            if problem is not None:
                raise ParameterError(f"level {ell}'s budget {unit} = {budgets[ell]:.3g} is too small: {problem}",
                                     "raise ε or give this level more of it")

    @property
    def n_levels(self) -> int:
        return len(self.level_sizes) - 1

    @property
    def budget_name(self) -> str:
        return {"laplace": "ε", "gaussian": "ρ"}.get(self.noise, "")

    def level_scales(self) -> tuple[Fraction | None, ...]:
        """Per level 0..L: the discrete-Laplace scale t_ℓ = laplace_scale(Δ, ε_ℓ) or the Gaussian
        σ_ℓ² = gaussian_sigma2(Δ₂², ρ_ℓ) (exact rationals); None where not noised (public root, or
        a multiplicative plan, whose noise is paper 004's)."""
        if self.noise == "multiplicative":
            return (None,) * len(self.level_sizes)
        out: list[Fraction | None] = []
        for b in self.level_budgets:
            if b <= 0:
                out.append(None)
            elif self.noise == "gaussian":
                out.append(gaussian_sigma2(self.privacy.level_l2_sensitivity_squared, b))
            else:
                out.append(laplace_scale(self.privacy.level_sensitivity, b))
        return tuple(out)

    def level_noise_variances(self) -> tuple[float, ...]:
        """Variance of each level's (unclamped) noise, counts² (0 for the public root and for a
        multiplicative plan, whose noise is not per level)."""
        out: list[float] = []
        for s in self.level_scales():
            if s is None:
                out.append(0.0)
            elif self.noise == "gaussian":
                out.append(float(discrete_gaussian_variance(float(s))))
            else:
                out.append(discrete_laplace_variance(float(s)))
        return tuple(out)

    def epsilon_spent(self) -> float:
        """ε the release really spends (≤ the planned ε): laplace Σ_ℓ Δ/t_ℓ exactly (basic composition,
        rounded up to a float); gaussian the CKS conversion of :meth:`rho_spent` at δ; multiplicative
        paper 004's composition (:func:`counting_trees.multiplicative_privacy`)."""
        if self.multiplicative is not None:
            return float(multiplicative_privacy(self.multiplicative)[0])
        if self.noise == "gaussian":
            return zcdp_epsilon(self.rho_spent(), self.privacy.delta)
        total = sum((Fraction(self.privacy.level_sensitivity) / s for s in self.level_scales() if s is not None), Fraction(0))
        return math.nextafter(float(total), math.inf) if Fraction(float(total)) < total else float(total)

    def rho_spent(self) -> float:
        """zCDP ρ of a Gaussian release: Σ_ℓ Δ₂²/(2σ_ℓ²) over noised levels (≤ the planned ρ);
        laplace: ε_spent²/2 (pure ε-DP is ε²/2-zCDP); multiplicative: not a zCDP mechanism (nan)."""
        if self.multiplicative is not None:
            return math.nan
        if self.noise == "gaussian":
            l2sq = Fraction(self.privacy.level_l2_sensitivity_squared)
            total = sum((l2sq / (2 * s) for s in self.level_scales() if s is not None), Fraction(0))
            return math.nextafter(float(total), math.inf) if Fraction(float(total)) < total else float(total)
        eps = self.epsilon_spent()
        return eps * eps / 2.0

    def ledger_charge(self) -> tuple[float, float, float | None]:
        """(ε, δ, ρ or None) the ledger records, by the rule every statistic's charge follows
        (:func:`dpgui.core.accounting.release_charge`): laplace (ε, 0, ε²/2); gaussian (ε, δ, ρ);
        multiplicative (ε, δ, None): Ghazi et al.'s (2023) (ε, δ) composition, no zCDP figure. Never less
        than what the noise spends (:meth:`epsilon_spent`, :meth:`rho_spent`): level budgets may sum to the
        planned total within a relative 10⁻⁹ (a saved or typed plan), and then the larger figure is charged."""
        spent_delta = None if self.multiplicative is None else multiplicative_privacy(self.multiplicative)[1]
        charge = release_charge(self.noise, self.privacy.epsilon, self.privacy.delta,
                                planned_rho=self.privacy.rho,
                                spent_epsilon=self.epsilon_spent(), spent_rho=self.rho_spent(), spent_delta=spent_delta)
        return charge.epsilon, charge.delta, charge.rho

    def to_json(self) -> dict[str, Any]:
        scales = [None if s is None else float(s) for s in self.level_scales()]
        eps, delta, rho = self.ledger_charge()
        out: dict[str, Any] = {
            "level_sizes": list(self.level_sizes),
            "epsilon": self.privacy.epsilon,
            "delta": self.privacy.delta,
            "neighbours": self.privacy.neighbours,
            "records_per_person": self.privacy.records_per_person,
            "sensitivity_per_level": self.privacy.level_sensitivity,
            "l2_sensitivity_squared_per_level": self.privacy.level_l2_sensitivity_squared,
            "noise": self.noise,
            "level_budgets": list(self.level_budgets),
            "budget_unit": self.budget_name,
            "budget_total": math.fsum(self.level_budgets),  # ε (laplace) or ρ (gaussian: its ε at δ is "epsilon")
            "level_noise_scales": scales,
            "weights": list(self.weights),
            "allocation": self.allocation,
            "consistency": self.consistency,
            "target_mse": self.target_mse,
            "prior_source": self.prior_source,
            "charge": {"epsilon": eps, "delta": delta, "rho": rho},
            "epsilon_spent": self.epsilon_spent(),
            "notes": list(self.notes),
            "multiplicative": None,
        }
        if self.multiplicative is not None:
            out["multiplicative"] = self.multiplicative.to_json()
        if self.assumed_records is not None:  # (absent, not null, when unstated: older plans read the same)
            out["assumed_records"] = self.assumed_records
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HierarchyPlan:
        try:
            privacy = PrivacySpec(float(data["epsilon"]), str(data["neighbours"]), int(data["records_per_person"]),
                                  float(data.get("delta") or 0.0))
            multiplicative = None
            if data.get("multiplicative") is not None:
                multiplicative = MultiplicativeParams.from_json(data["multiplicative"])
            target = data.get("target_mse")
            assumed = data.get("assumed_records")
            return cls(tuple(int(s) for s in data["level_sizes"]), privacy, str(data["noise"]),
                       tuple(float(b) for b in data["level_budgets"]), tuple(float(w) for w in data["weights"]),
                       str(data["allocation"]), str(data["consistency"]), None if target is None else float(target),
                       str(data.get("prior_source", "none")), multiplicative, tuple(data.get("notes", ())),
                       None if assumed is None else assumed)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ParameterError):
                raise
            raise ParameterError(f"a saved hierarchy plan is incomplete or malformed ({exc})", "make the plan again") from None


# ----------------------------------------------------------------------------------------------
# Projections and releases
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LevelProjection:
    """Error of one level, summed over its nodes (counts²): bias², variance and MSE = bias² + variance;
    ``over_sq`` and ``under_sq`` split the MSE by the sign of the error (Σ E[e²; e > 0], Σ E[e²; e < 0]).

    The level's stated error is :attr:`margin95`, the product's one 95 % margin
    (:func:`dpgui.core.quantiles.noise_margin`) of :attr:`std_error`."""

    level: int
    nodes: int
    bias2: float
    variance: float
    mse: float
    over_sq: float
    under_sq: float

    @property
    def std_error(self) -> float:
        """The standard error the level's 95 % margin is computed from, records: the root-mean-square
        error of one released count of the level, taken on its worse side, √(2·max(over, under)/nodes).
        It is the RMSE when the errors are symmetric, and larger when the clamp at zero makes small
        counts err upwards only (then a plain RMSE would state a margin that holds less than 95 % of
        the time). For clamped counts (consistency none) it is exactly the noise's standard deviation."""
        return math.sqrt(2.0 * max(self.over_sq, self.under_sq, 0.0) / max(self.nodes, 1))

    @property
    def margin95(self) -> float:
        """The level's 95 % margin in records: ``noise_margin(std_error)`` (2.2·SE + 1; 0 for an exact
        level). A released count of the level lies within ± this of its true count in about 95 % of
        cases, counted over the level's categories and over releases (at the counts projected)."""
        return float(noise_margin(self.std_error))

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "nodes": self.nodes, "bias2": self.bias2, "variance": self.variance,
                "mse": self.mse, "std_error": self.std_error, "margin95": self.margin95}


@dataclass(frozen=True)
class HierarchyProjection:
    """Per-level errors of a plan on given counts, eq. (5)'s weighted MSE, and how they were obtained:
    "closed form" or "monte carlo (R trials)"."""

    plan: HierarchyPlan
    levels: tuple[LevelProjection, ...]
    weighted_mse: float
    method: str

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "weighted_mse": self.weighted_mse, "levels": [p.to_json() for p in self.levels]}


@dataclass(frozen=True, eq=False)
class HierarchyRelease:
    """A released hierarchy: ``counts[ℓ]`` the released non-negative int64 counts of level ℓ (root
    first); ``lower``/``upper`` the per-node interval (``interval_method`` says what it covers)."""

    plan: HierarchyPlan
    hierarchy: Hierarchy
    counts: tuple[np.ndarray, ...]
    lower: tuple[np.ndarray, ...]
    upper: tuple[np.ndarray, ...]
    interval_method: str = ""


def counts_projected_on(prior_source: str) -> str:
    """What a plan's counts are, in the words of its notes ("consistency: …, simulated on the prior"): the
    prior, or the confidential counts when the officer opted in to them (``prior_source``)."""
    return "the confidential counts (opted in)" if prior_source == CONFIDENTIAL_PRIOR else "the prior"


def _check_prior(prior_levels: Sequence[npt.ArrayLike], level_sizes: Sequence[int]) -> tuple[np.ndarray, ...]:
    levels = tuple(np.asarray(c) for c in prior_levels)
    sizes = tuple(int(a.size) for a in levels)
    if sizes != tuple(level_sizes):
        raise DataError(f"the prior has {sizes} nodes per level, the hierarchy {tuple(level_sizes)}",
                        "give a prior over the same tree (root first)")
    out = []
    for a in levels:
        f = a.astype(np.float64)
        if np.any(~np.isfinite(f)) or np.any(f < 0) or np.any(f != np.floor(f)):
            raise DataError("prior counts must be whole numbers ≥ 0", "fix the prior's count column")
        out.append(f.astype(np.int64))
    return tuple(out)


def _closed_form_levels(plan: HierarchyPlan, prior: tuple[np.ndarray, ...]) -> tuple[LevelProjection, ...]:
    """Exact per-level bias², variance, MSE of the clamped noisy counts (consistency none). The error of
    max(0, n + Z) − n is Z when Z > 0, so the upward part Σ E[e²; e > 0] is half the noise variance per
    node (the noise is symmetric) and the downward part is the rest of the MSE."""
    out = []
    for ell, (scale, noise_variance) in enumerate(zip(plan.level_scales(), plan.level_noise_variances())):
        n = prior[ell]
        if scale is None:
            out.append(LevelProjection(ell, int(n.size), 0.0, 0.0, 0.0, 0.0, 0.0))
            continue
        if plan.noise == "gaussian":
            bias, var = clamped_discrete_gaussian_moments(n, float(scale))
        else:
            bias, var = clamped_discrete_laplace_moments(n, float(scale))
        b2, v = float(np.sum(bias * bias)), float(np.sum(var))
        over = n.size * noise_variance / 2.0
        out.append(LevelProjection(ell, int(n.size), b2, v, b2 + v, over, max(b2 + v - over, 0.0)))
    return tuple(out)


def noise_only_projection(plan: HierarchyPlan) -> HierarchyProjection:
    """The projection of a plan when no counts are known: the noise alone on every node (the large-count
    limit, before the clamp at zero and the consistency step, which only shrink the error of small
    counts); per level n_ℓ · Var, half of it upwards. A multiplicative plan has no per-level noise:
    ParameterError (project it at counts)."""
    if plan.noise == "multiplicative":
        raise ParameterError("the multiplicative mechanism's error depends on the counts",
                             "project it at counts (a prior, or an assumed number of records)")
    levels = tuple(LevelProjection(ell, int(n), 0.0, n * v, n * v, n * v / 2.0, n * v / 2.0)
                   for ell, (n, v) in enumerate(zip(plan.level_sizes, plan.level_noise_variances())))
    return HierarchyProjection(plan, levels, _weighted(plan, levels), NOISE_ONLY_METHOD)


def _weighted(plan: HierarchyPlan, levels: Sequence[LevelProjection]) -> float:
    return math.fsum(w * p.mse for w, p in zip(plan.weights, levels))


#: Monte Carlo projections of consistent releases: pooled node draws wanted per level (the 95 % margin's
#: standard error then comes within about 1 % of its value), and the limits on simulated copies of the tree.
PROJECTION_DRAWS = 20_000
_PROJECTION_MAX_COPIES = 400
_PROJECTION_NODE_BUDGET = 800_000  # GLS: node draws in all (the whole tree in every copy)


def _level_figures(level: int, errors: np.ndarray) -> LevelProjection:
    """Bias², variance, MSE and the signed parts of the MSE of one level from ``errors`` (copies × nodes:
    released − true). Bias² is the unbiased Σ (mean error² − s²/R) over the nodes (s² the copies'
    variance, ddof 1; the plain squared mean would add variance/R), at least 0; variance = MSE − bias²."""
    copies = errors.shape[0]
    err = errors.astype(np.float64)
    sq = err * err
    mean = err.mean(axis=0)
    m = float(sq.sum() / copies)
    sample_var = (sq.sum(axis=0) - copies * mean * mean) / (copies - 1)
    b2 = max(float(np.sum(mean * mean - sample_var / copies)), 0.0)
    over = float(sq[err > 0].sum() / copies)
    return LevelProjection(level, int(err.shape[1]), b2, max(m - b2, 0.0), m, over, max(m - over, 0.0))


def _consistent_levels(hierarchy: Hierarchy, plan: HierarchyPlan, counts: tuple[np.ndarray, ...], seed: int,
                       draws: int) -> tuple[tuple[LevelProjection, ...], str]:
    """Monte Carlo figures of a topdown or gls release of ``counts``: independent seeded copies of the
    release run as one forest (:func:`_forest_release`). Top-down level ℓ depends on levels 0..ℓ only,
    so each level is simulated on the tree cut at it with ⌈draws / n_ℓ⌉ copies (2..400): a small level
    gets as many draws as a large one. GLS needs the whole tree in each copy: ⌈draws / smallest level⌉
    copies within a node budget. Returns the levels and the method's words. O(copies · nodes)."""
    rng = SeededRandom(seed)
    sizes = plan.level_sizes
    if plan.consistency == "topdown":
        cut: list[LevelProjection] = []
        copies_used: list[int] = []
        for ell in range(len(sizes)):
            copies = int(np.clip(math.ceil(draws / sizes[ell]), 2, _PROJECTION_MAX_COPIES))
            again = _forest_release(hierarchy.parents, plan, counts, copies, ell, rng)[ell]
            cut.append(_level_figures(ell, again - counts[ell][None, :]))
            copies_used.append(copies)
        low, high = min(copies_used), max(copies_used)
        runs = f"{low}" if low == high else f"{low}–{high}"
        return tuple(cut), f"monte carlo ({runs} simulated releases per level)"
    cap = max(2, _PROJECTION_NODE_BUDGET // sum(sizes))
    copies = int(np.clip(math.ceil(draws / min(sizes)), 2, min(cap, _PROJECTION_MAX_COPIES)))
    again_levels = _forest_release(hierarchy.parents, plan, counts, copies, len(sizes) - 1, rng)
    levels = tuple(_level_figures(ell, again - counts[ell][None, :]) for ell, again in enumerate(again_levels))
    return levels, f"monte carlo ({copies} simulated releases)"


def project_hierarchy(plan: HierarchyPlan, prior_levels: Sequence[npt.ArrayLike], *, trials: int = 200, seed: int = 0,
                      hierarchy: Hierarchy | None = None, draws: int = PROJECTION_DRAWS) -> HierarchyProjection:
    """Projected per-level bias², variance and MSE (summed over each level's nodes, counts²), and the
    95 % margin of each level (:attr:`LevelProjection.margin95`), of ``plan`` when the true counts are
    ``prior_levels`` (public, or assumed; root first).

    consistency "none" with laplace/gaussian noise: the exact clamped discrete moments (closed form).
    topdown and gls: Monte Carlo, seeded copies of the release of the counts through the release's
    consistency code (:func:`_consistent_levels`, about ``draws`` node draws per level); multiplicative:
    ``trials`` seeded releases (:func:`simulate_hierarchy`). Both need the tree (``hierarchy``)."""
    prior = _check_prior(prior_levels, plan.level_sizes)
    if plan.consistency == "none" and plan.noise != "multiplicative":
        levels = _closed_form_levels(plan, prior)
        return HierarchyProjection(plan, levels, _weighted(plan, levels), "closed form")
    if hierarchy is None:
        raise ParameterError(f"projecting a {plan.consistency} release needs the tree", "pass hierarchy=")
    if plan.multiplicative is not None:
        return simulate_hierarchy(hierarchy, prior[-1], plan, trials=trials, seed=seed)
    if hierarchy.level_sizes != plan.level_sizes:
        raise ParameterError(f"the plan is for {plan.level_sizes} nodes per level, the tree has {hierarchy.level_sizes}",
                             "plan for this tree")
    truth = hierarchy.aggregate(prior[-1])  # a release's true counts are its leaves' sums
    levels, method = _consistent_levels(hierarchy, plan, truth, seed, draws)
    return HierarchyProjection(plan, levels, _weighted(plan, levels), method)


def _usable_weight(weight: float) -> bool:
    return weight == 0 or MIN_LEVEL_WEIGHT <= weight <= MAX_LEVEL_WEIGHT


def _uniform_budgets(sizes: Sequence[int], privacy: PrivacySpec, noise: str) -> tuple[float, ...]:
    first = privacy.first_noised_level()
    shares = split_budget(budget_total(privacy, noise), [1.0] * (len(sizes) - first))
    return (0.0,) * first + tuple(shares)


def _budgets_for(sizes: tuple[int, ...], privacy: PrivacySpec, noise: str, allocation: str, weights: tuple[float, ...],
                 prior: tuple[np.ndarray, ...] | None, target_mse: float | None) -> tuple[PrivacySpec, tuple[float, ...]]:
    """(the plan's privacy spec, level budgets) of one noise: uniform, program (6) or program (7)."""
    if allocation == "uniform":
        return privacy, _uniform_budgets(sizes, privacy, noise)
    assert prior is not None
    if allocation == "optimal":
        return privacy, optimal_allocation(prior, privacy, weights, noise)
    assert target_mse is not None

    def epsilon_of(budgets: tuple[float, ...]) -> float:  # refused above the ε allowed
        need = math.fsum(budgets)
        eps = need if noise == "laplace" else zcdp_epsilon(need, privacy.delta)
        if eps > privacy.epsilon * (1 + 1e-12):
            raise ParameterError(f"the target weighted MSE {target_mse:g} needs ε = {eps:.4g} with {noise} noise, "
                                 f"more than the ε = {privacy.epsilon:g} allowed", "raise ε or the target")
        return eps

    least = least_budget_for_target(prior, privacy, weights, target_mse, noise)
    least_epsilon = epsilon_of(least)  # before the rounding steps, which build plans at that ε
    try:
        budgets = _meet_target(sizes, privacy, noise, weights, prior, target_mse, least)
    except ParameterError as err:
        if "sampler" not in err.problem and least_epsilon > 0:  # (a Gaussian ρ that small converts to ε = 0)
            raise
        raise ParameterError(f"the target weighted MSE {target_mse:g} is met with ε = {least_epsilon:.3g}, whose noise is "
                             "beyond the noise sampler's limit", "give a smaller target") from None
    need = math.fsum(budgets)
    eps = epsilon_of(budgets)
    spec = privacy.with_epsilon(eps)
    if noise == "gaussian":  # the ρ of the rounded-up ε is ≥ the need: scale the budgets up to it
        total = budget_total(spec, "gaussian")
        budgets = tuple(b * total / need for b in budgets)
    return spec, budgets


def _multiplicative_plan(sizes: tuple[int, ...], privacy: PrivacySpec, weights: tuple[float, ...], allocation: str,
                         consistency: str, prior_source: str, alpha: float | None, notes: list[str],
                         assumed_records: int | None = None) -> HierarchyPlan:
    if alpha is None:
        raise ParameterError("the multiplicative mechanism (Ghazi et al. 2023) needs α, its multiplicative error",
                             "give α in (0, 1), e.g. 0.5")
    if allocation != "uniform":
        raise ParameterError("the multiplicative mechanism spends its budget by the rounds of Ghazi et al. 2023, not by "
                             f"a {allocation} allocation", "use the uniform allocation with multiplicative noise")
    if consistency in ("topdown", "gls"):
        raise ParameterError("the multiplicative mechanism's counts are bucketed upper estimates; making them consistent "
                             "would void its (α, η) guarantee", "use consistency none with multiplicative noise")
    if consistency == "auto":
        notes.append("consistency: none (the multiplicative mechanism's (α, η) guarantee is for its own counts)")
    params = multiplicative_params(sizes, privacy, alpha, 1.0 - INTERVAL_LEVEL)
    return HierarchyPlan(sizes, privacy, "multiplicative", (), weights, "uniform", "none", None, prior_source, params,
                         tuple(notes), assumed_records)


def plan_hierarchy(level_sizes: Sequence[int], privacy: PrivacySpec, *, noise: str = "auto", allocation: str = "uniform",
                   weights: Sequence[float] | None = None, target_mse: float | None = None, consistency: str = "auto",
                   prior_levels: Sequence[npt.ArrayLike] | None = None, prior_source: str = "none",
                   alpha: float | None = None, hierarchy: Hierarchy | None = None, trials: int | None = None,
                   assumed_records: int | None = None) -> HierarchyPlan:
    """The plan of a hierarchy release: noise, level budgets, weights, consistency. Public: it depends on
    the tree's shape, the privacy spec and the public prior only.

    ``allocation``: ``uniform`` (equal budget per noised level; needs no counts), ``optimal``
    (program 6 within ε or ρ) or ``target`` (program 7 with τ = ``target_mse``: the least ε, which must
    not exceed ``privacy.epsilon``; the plan's spec carries that ε). The last two need ``prior_levels``
    (public counts, root first; ``prior_source`` says where they come from). ``custom`` (level budgets
    set by hand) is a plan's record of budgets the officer typed, never planned: ParameterError.

    ``noise="auto"``: with δ > 0 and α given, paper 004's multiplicative mechanism if its projected
    α-mRMSE is below the Gaussian baseline's (:func:`counting_trees.recommend_alpha_mechanism`);
    otherwise laplace or (δ > 0) gaussian, the one with the lower eq. (5) weighted MSE of its clamped
    counts (closed form on the prior; without a prior: Σ w_ℓ n_ℓ · noise variance, the large-count
    limit), or — for the target allocation — the one that meets τ with the smaller ε.
    ``consistency="auto"``: topdown or gls, the lower Monte Carlo projected weighted MSE on the prior
    (:func:`project_hierarchy`, seeded; ``trials`` is used by multiplicative projections only);
    without ``prior_levels`` and ``hierarchy``: topdown. Every automatic choice is said in
    ``notes``. ``assumed_records``: recorded in the plan (:attr:`HierarchyPlan.assumed_records`) for the
    projections; it chooses nothing. O(distinct prior counts) for the programs; the Monte Carlo
    O(trials · nodes).
    """
    assumed = None if assumed_records is None else check_assumed_records(assumed_records)
    sizes = _check_level_sizes(level_sizes)
    if hierarchy is not None and hierarchy.level_sizes != sizes:
        raise ParameterError(f"the tree has {hierarchy.level_sizes} nodes per level, the plan {sizes}", "plan for this tree")
    _check_choice(noise, HIERARCHY_NOISE_CHOICES, "noise")
    _check_choice(allocation, ALLOCATIONS, "allocation")
    if allocation == "custom":
        raise ParameterError("the custom allocation is level budgets set by hand: the planner cannot invent them",
                             "plan with the uniform, optimal or target allocation, then set the level budgets")
    _check_choice(consistency, CONSISTENCY_CHOICES, "consistency")
    _check_choice(prior_source, PRIOR_SOURCES, "prior source")
    w = tuple([1.0] * len(sizes) if weights is None else [float(x) for x in weights])
    if len(w) != len(sizes) or not all(_usable_weight(x) for x in w):
        raise ParameterError(f"weights {list(w)} are not one weight per level (root first), each 0 or from "
                             f"{MIN_LEVEL_WEIGHT:g} to {MAX_LEVEL_WEIGHT:g}", f"give {len(sizes)} weights, e.g. 1 each")
    prior = None if prior_levels is None else _check_prior(prior_levels, sizes)
    if prior is not None and prior_source == "none":
        prior_source = PRIOR_FILE
    if allocation == "target" and target_mse is None:
        raise ParameterError("the target allocation needs a target weighted MSE", "give target:TAU, e.g. target:1000")
    notes: list[str] = []
    # Figures computed on opted-in confidential counts stay out of the notes (published in the
    # manifest): the opt-in covers the choices made on them, not their projected errors.
    confidential = prior is not None and prior_source == CONFIDENTIAL_PRIOR

    def shown(figures: str) -> str:
        return "figures on the confidential counts, not published" if confidential else figures

    counts_words = counts_projected_on(prior_source if prior is not None else "none")

    if noise in ("gaussian", "multiplicative") and privacy.delta <= 0:
        raise ParameterError(f"{noise} noise needs δ > 0", "set δ, e.g. 1e-9, or choose Laplace noise")
    if noise == "multiplicative":
        return _multiplicative_plan(sizes, privacy, w, allocation, consistency, prior_source, alpha, notes, assumed)
    if noise == "auto" and privacy.delta > 0:
        if alpha is not None and allocation == "uniform" and consistency in ("auto", "none"):
            choice, gauss, mult = recommend_alpha_mechanism(sizes, privacy, alpha, prior)
            if choice == "multiplicative":
                notes.append("noise: multiplicative, projected α-mRMSE below the Gaussian baseline's (α = "
                             f"{alpha:g}; {shown(f'{mult.alpha_mrmse:.4g} against {gauss.alpha_mrmse:.4g}')})")
                return _multiplicative_plan(sizes, privacy, w, allocation, consistency, prior_source, alpha, notes, assumed)
            notes.append("multiplicative not chosen: projected α-mRMSE not below the Gaussian baseline's (α = "
                         f"{alpha:g}; {shown(f'{mult.alpha_mrmse:.4g} against {gauss.alpha_mrmse:.4g}')})")
        elif alpha is None:
            notes.append("multiplicative (Ghazi et al. 2023) not considered: no α given")
    if allocation != "uniform" and prior is None:
        raise ParameterError(f"the {allocation} allocation needs node counts (the programs of Ko, Ziani & Fioretto 2025)",
                             "give a public prior (--prior), opt in to counts from the data, or use the uniform allocation")
    candidates = (["laplace", "gaussian"] if privacy.delta > 0 else ["laplace"]) if noise == "auto" else [noise]
    target = None if target_mse is None else float(target_mse)
    scored: list[tuple[float, str, PrivacySpec, tuple[float, ...]]] = []
    refused: list[ParameterError] = []
    for nz in candidates:
        try:
            spec, budgets = _budgets_for(sizes, privacy, nz, allocation, w, prior, target)
        except ParameterError as exc:  # auto + target: a noise that needs more than ε drops out
            if len(candidates) == 1 or allocation != "target":
                raise
            refused.append(exc)
            continue
        if len(candidates) == 1:
            scored.append((0.0, nz, spec, budgets))
            break
        if allocation == "target":  # program (7): both meet τ; the better needs the smaller ε
            score = spec.epsilon
        else:
            probe = HierarchyPlan(sizes, spec, nz, budgets, w, allocation, "none", target, prior_source)
            if prior is None:
                score = math.fsum(wl * n * v for wl, n, v in zip(w, sizes, probe.level_noise_variances()))
            else:
                score = _weighted(probe, _closed_form_levels(probe, prior))
        scored.append((score, nz, spec, budgets))
    if not scored:
        raise refused[0]
    _, nz, spec, budgets = min(scored, key=lambda item: item[0])
    if len(candidates) > 1:
        if allocation == "target":
            how = "ε that meets the target (program 7)"
        elif prior is not None:
            how = f"weighted MSE (eq. 5) of the clamped counts on {counts_words}"
        else:
            how = "noise variance Σ w_ℓ n_ℓ Var (no prior counts)"
        figures = ", ".join(f"{n} {s:.4g}" for s, n, _, _ in scored)
        dropped = f"; {len(refused)} noise(s) need more than ε = {privacy.epsilon:g}" if refused else ""
        notes.append(f"noise: {nz}, the lower {how}: {shown(figures) if prior is not None else figures}{dropped}")
    if consistency != "auto":
        return HierarchyPlan(sizes, spec, nz, budgets, w, allocation, consistency, target, prior_source, None, tuple(notes),
                             assumed)
    where = f"on {counts_words}"
    if prior is None and assumed is not None and hierarchy is not None:
        prior, where = assumed_levels(hierarchy, assumed), f"at {assumed:,} records spread evenly"
    if prior is None or hierarchy is None:
        missing = "counts (a public prior, or a number of records)" if prior is None else "the tree"
        notes.append(f"consistency: topdown by default (projecting topdown against gls needs {missing})")
        return HierarchyPlan(sizes, spec, nz, budgets, w, allocation, "topdown", target, prior_source, None, tuple(notes),
                             assumed)
    runs = projection_trials(sizes) if trials is None else int(trials)
    projected = []
    for method in ("topdown", "gls"):
        plan = HierarchyPlan(sizes, spec, nz, budgets, w, allocation, method, target, prior_source, None, tuple(notes),
                             assumed)
        projected.append((project_hierarchy(plan, prior, trials=runs, seed=0, hierarchy=hierarchy).weighted_mse, method, plan))
    best = min(projected, key=lambda item: item[0])
    return _with_note(best[2], f"consistency: {best[1]}, the lower projected weighted MSE (simulated {where}): "
                      + shown(", ".join(f"{m} {s:.4g}" for s, m, _ in projected)))


def _meet_target(sizes: tuple[int, ...], privacy: PrivacySpec, noise: str, weights: tuple[float, ...],
                 prior: tuple[np.ndarray, ...], tau: float, budgets: tuple[float, ...]) -> tuple[float, ...]:
    """Program (7)'s budgets, raised by the least factor that keeps eq. (5) ≤ τ at the scales a release
    really uses (laplace_scale/gaussian_sigma2 round the scale up by ≤ 2⁻¹⁶ relative, or one
    2⁻¹⁶ step for tiny scales). A few multiplicative steps, each by the square root of the excess."""
    factor = 1.0
    for _ in range(60):
        scaled = tuple(b * factor for b in budgets)
        total = math.fsum(scaled)
        eps = total if noise == "laplace" else zcdp_epsilon(total, privacy.delta)
        pr = privacy.with_epsilon(eps)
        if noise == "gaussian":
            scaled = tuple(b * budget_total(pr, "gaussian") / total for b in scaled)
        plan = HierarchyPlan(sizes, pr, noise, scaled, weights, "target", "none", tau)
        achieved = _weighted(plan, _closed_form_levels(plan, prior))
        if achieved <= tau:
            return scaled
        factor *= math.sqrt(achieved / tau) * (1.0 + 1e-12)
    raise ParameterError("the target allocation could not meet τ at the sampler's scales", "raise the target")


def _with_note(plan: HierarchyPlan, note: str) -> HierarchyPlan:
    return replace(plan, notes=(*plan.notes, note))


def projection_trials(sizes: Sequence[int]) -> int:
    """Monte Carlo trials of a projection (the automatic choices, the window's and the CLI's projections):
    enough pooled node-trials (≥ 20,000 over the tree; about 0.7 % standard error on a level's summed
    MSE for a small tree), at least 4 and at most 200, so a tree of 10⁵ leaves still plans in seconds."""
    return int(min(200, max(4, math.ceil(20_000 / sum(sizes)))))


# ----------------------------------------------------------------------------------------------
# Release
# ----------------------------------------------------------------------------------------------


def _noise_levels(plan: HierarchyPlan, rng: RandomSource, top: int | None = None) -> list[np.ndarray | None]:
    """Independent exact noise for each noised level 0..top (all levels by default)."""
    scales = plan.level_scales()[: None if top is None else top + 1]
    noised = [ell for ell, s in enumerate(scales) if s is not None]
    sizes = [plan.level_sizes[ell] for ell in noised]
    fractions = [s for s in scales if s is not None]
    if plan.noise == "gaussian":
        draws = sample_discrete_gaussian_levels(rng, fractions, sizes)
    else:
        draws = sample_discrete_laplace_levels(rng, fractions, sizes)
    out: list[np.ndarray | None] = [None] * len(scales)
    for ell, d in zip(noised, draws):
        out[ell] = d
    return out


def _release_counts(parents: Sequence[np.ndarray], plan: HierarchyPlan, true_levels: Sequence[np.ndarray],
                    rng: RandomSource, top: int | None = None) -> tuple[np.ndarray, ...]:
    """Released int64 counts of levels 0..top (default L) for true counts ``true_levels``: noise, then
    the clamp or the consistency step (top-down needs only levels 0..top, so a truncated tree is a
    valid release of its levels)."""
    if plan.multiplicative is not None:
        return tuple(release_multiplicative(parents, true_levels, plan.multiplicative, rng))
    depth = len(true_levels) - 1 if top is None else top
    noise = _noise_levels(plan, rng, depth)
    noisy = [true_levels[ell] + noise[ell] if noise[ell] is not None else np.asarray(true_levels[ell]).copy()
             for ell in range(depth + 1)]
    if plan.consistency == "none":
        return tuple(np.maximum(v, 0).astype(np.int64) for v in noisy)
    root_known = int(true_levels[0][0]) if plan.privacy.root_public else None
    if plan.consistency == "topdown":
        root = root_known if root_known is not None else max(0, int(noisy[0][0]))
        out = topdown_consistent(list(parents[:depth]), noisy, root)
    else:
        variances = list(plan.level_noise_variances()[: depth + 1])
        out = gls_consistent(list(parents[:depth]), noisy, variances, None if root_known is None else float(root_known))
    return tuple(np.asarray(a, dtype=np.int64) for a in out)


def _noise_half_width(plan: HierarchyPlan, scale: Fraction) -> int:
    """Smallest integer q with P(|Z| ≤ q) ≥ 95 % for the level's exact noise Z."""
    miss = 1.0 - INTERVAL_LEVEL
    s = float(scale)
    if plan.noise == "gaussian":
        half = int(math.ceil(14.0 * math.sqrt(s))) + 2
        pmf = discrete_gaussian_pmf(np.arange(0, half + 1), s)
        outside = 1.0 - (pmf[0] + 2.0 * np.concatenate([[0.0], np.cumsum(pmf[1:])]))  # P(|Z| > k), k = 0..half
        return int(np.argmax(outside <= miss))
    # discrete Laplace: P(|Z| > m) = 2 q^{m+1}/(1+q), q = e^{−1/t}
    q = math.exp(-1.0 / s)
    m = max(0, math.ceil(math.log(miss * (1.0 + q) / 2.0) / math.log(q)) - 1)
    while m > 0 and 2.0 * q**m / (1.0 + q) <= miss:
        m -= 1
    while 2.0 * q ** (m + 1) / (1.0 + q) > miss:
        m += 1
    return m


# Parametric bootstrap of the consistent releases' intervals: pooled |error| draws per level.
_BOOTSTRAP_DRAWS = 20_000  # pooled node draws wanted per level
_BOOTSTRAP_MIN_TRIALS = 2
_BOOTSTRAP_MAX_TRIALS = 400  # top-down: a small level is re-released on the tree cut at it (cheap)
_BOOTSTRAP_MAX_GLS_TRIALS = 400  # GLS: the whole tree in each copy
_BOOTSTRAP_NODE_BUDGET = 800_000  # node draws for a GLS bootstrap (≈ 8 copies of a 10⁵-leaf tree)


def _pooled_half_width(errors: list[np.ndarray]) -> int:
    """The ⌈(m+1)·95 %⌉-th smallest of the m pooled |errors| (the conformal rank: a new exchangeable
    draw is ≤ it with probability ≥ 95 %, where the plain 95 % quantile of few draws falls short)."""
    pooled = np.sort(np.abs(np.concatenate([e.ravel() for e in errors]))) if errors else np.zeros(0)
    if pooled.size == 0:
        return 0
    rank = min(pooled.size, math.ceil((pooled.size + 1) * INTERVAL_LEVEL))
    return int(pooled[rank - 1])


def _forest_release(parents: Sequence[np.ndarray], plan: HierarchyPlan, counts: tuple[np.ndarray, ...], copies: int,
                    top: int, rng: RandomSource) -> list[np.ndarray]:
    """``copies`` independent consistent re-releases of levels 0..top of the tree whose true counts are
    ``counts``, in one vectorised call: the copies hang under an extra super-root (a forest), copy r's
    node i of level ℓ is node r·n_ℓ + i, and each copy's root keeps its own value — exact for top-down
    (the copies' roots are non-negative integers summing to the super-root's total, so the integer
    projection returns them unchanged); for GLS the copies' roots are measured (add/remove: with the
    root's noise variance, the super-root unmeasured; change: with a variance of 10⁻⁶ counts², the
    super-root known exactly), which reproduces each copy's own GLS up to the super-root's rounding.
    Returns, per level 0..top, an array (copies × n_ℓ)."""
    sizes = plan.level_sizes
    forest = [np.zeros(copies, dtype=np.int64)]
    for ell in range(top):
        forest.append((np.arange(copies, dtype=np.int64)[:, None] * sizes[ell] + parents[ell][None, :]).ravel())
    scales = plan.level_scales()
    noisy: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]
    for ell in range(top + 1):
        base = np.tile(counts[ell], copies)
        s = scales[ell]
        if s is not None:
            draw = (sample_discrete_gaussian_levels(rng, [s], [base.size]) if plan.noise == "gaussian"
                    else sample_discrete_laplace_levels(rng, [s], [base.size]))[0]
            base = base + draw
        noisy.append(base)
    root_public = plan.privacy.root_public
    if plan.consistency == "topdown":
        roots = noisy[1] if root_public else np.maximum(noisy[1], 0)
        noisy[1] = roots
        out = topdown_consistent(forest, noisy, int(roots.sum()))
    else:
        variances = [math.inf, *plan.level_noise_variances()[: top + 1]]
        if root_public:
            variances[1] = 1e-6
        known = float(copies * int(counts[0][0])) if root_public else None
        out = gls_consistent(forest, noisy, variances, known)
    return [np.asarray(out[ell + 1], dtype=np.int64).reshape(copies, sizes[ell]) for ell in range(top + 1)]


def _bootstrap_half_widths(hierarchy: Hierarchy, plan: HierarchyPlan, counts: tuple[np.ndarray, ...]) -> list[int]:
    """Per-level half-widths q_ℓ of a consistent release's 95 % intervals (docstring of
    :func:`release_hierarchy`): the released counts are taken as the truth, the release is repeated
    with a seeded generator (post-processing of public values: no privacy cost), and q_ℓ is the
    conformal 95 % rank of |re-released − released| pooled over the level's nodes and the trials.
    The seed is a hash of the released counts: the intervals are a function of the release, with
    independent bootstrap draws across releases. Top-down level ℓ is re-released on the tree cut at ℓ
    (it depends on levels 0..ℓ only), GLS on the whole tree; the copies of a level run as one forest."""
    digest = hashlib.sha256(b"".join(np.ascontiguousarray(c, dtype=np.int64).tobytes() for c in counts)).digest()
    rng = SeededRandom(int.from_bytes(digest[:8], "little"))
    parents = hierarchy.parents
    sizes = plan.level_sizes
    widths = [0] * len(sizes)
    first = plan.privacy.first_noised_level()
    if plan.consistency == "topdown":
        for ell in range(max(first, 1), len(sizes)):  # an add/remove root is the clamped noisy root: exact width
            copies = int(np.clip(math.ceil(_BOOTSTRAP_DRAWS / sizes[ell]), _BOOTSTRAP_MIN_TRIALS, _BOOTSTRAP_MAX_TRIALS))
            again = _forest_release(parents, plan, counts, copies, ell, rng)[ell]
            widths[ell] = _pooled_half_width([again - counts[ell][None, :]])
        return widths
    smallest = min(sizes[first:])
    cap = max(_BOOTSTRAP_MIN_TRIALS, _BOOTSTRAP_NODE_BUDGET // sum(sizes))
    copies = int(np.clip(math.ceil(_BOOTSTRAP_DRAWS / smallest), _BOOTSTRAP_MIN_TRIALS, min(cap, _BOOTSTRAP_MAX_GLS_TRIALS)))
    again_levels = _forest_release(parents, plan, counts, copies, len(sizes) - 1, rng)
    return [0 if ell < first else _pooled_half_width([again_levels[ell] - counts[ell][None, :]]) for ell in range(len(sizes))]


def release_hierarchy(hierarchy: Hierarchy, leaf_counts: npt.ArrayLike, plan: HierarchyPlan,
                      rng: RandomSource) -> HierarchyRelease:
    """Release every node's count under ``plan`` (noise from ``rng``: SecureRandom for a real release).

    Each noised level ℓ gets independent exact noise (discrete Laplace t_ℓ or discrete Gaussian σ_ℓ²);
    under change the root is N exactly. Then: ``none`` — max(0, noisy count) per node (paper 001
    eq. 1); ``topdown`` — program (8) with integrality from the root down (root: N, or max(0, noisy
    root) under add/remove); ``gls`` — the BLUE, then the same integer top-down step; multiplicative —
    paper 004's Algorithms 1–2 (:func:`counting_trees.release_multiplicative`). Counts are
    non-negative int64; topdown/gls releases have every parent equal to the sum of its children.

    The 95 % interval [lower, upper] of each node (``interval_method`` says which):

    * ``none``: [max(0, c − q_ℓ), c + q_ℓ], q_ℓ the smallest integer with P(|Z_ℓ| ≤ q_ℓ) ≥ 95 % for the
      level's exact noise. It holds the true count with probability ≥ 95 % for *every* node and true
      count: if n + Z ≥ 0 it is the noisy count's interval; if the clamp acted, n < −Z ≤ q_ℓ and
      [0, q_ℓ] holds n.
    * ``topdown``/``gls``: [max(0, c − q_ℓ), c + q_ℓ] with q_ℓ from a parametric bootstrap: the
      released counts are taken as the truth and the release is repeated (seeded; post-processing of
      public values, no privacy cost), q_ℓ = the 95 % quantile of |error| pooled over level ℓ's nodes
      and the trials (≥ 20,000 pooled draws where the time allows, ≥ 2 trials; top-down levels are re-released on
      the tree cut at ℓ, which is exact since top-down level ℓ depends on levels 0..ℓ only). It
      covers the true count in ≈ 95 % of cases on average over a level's nodes, not for each node.
    * multiplicative: :func:`counting_trees.multiplicative_intervals` — on paper 004's success event
      (probability ≥ 1 − η, η = 5 %) a count released as bucket ⌊M_i⌋ lies in [(1−β)τ_i, ⌊M_i⌋], one
      released as ⌊M_0⌋ in [0, ⌊M_0⌋]: ≥ 95 % for every node.

    Time O(nodes) vectorised (the bootstrap: O(trials · nodes), under 1 s for 10⁵ leaves).
    """
    if plan.level_sizes != hierarchy.level_sizes:
        raise ParameterError(f"the plan is for {plan.level_sizes} nodes per level, the tree has {hierarchy.level_sizes}",
                             "plan for this tree")
    true_levels = hierarchy.aggregate(leaf_counts)
    counts = _release_counts(hierarchy.parents, plan, true_levels, rng)
    lower: list[np.ndarray] = []
    upper: list[np.ndarray] = []
    if plan.multiplicative is not None:
        low, high = multiplicative_intervals(counts, plan.multiplicative)
        method = ("the success event of Ghazi et al. 2023 (Lemma 4.6): the bucket the count fell in, "
                  f"≥ {1 - plan.multiplicative.eta:.0%} per node")
        return HierarchyRelease(plan, hierarchy, counts, low, high, method)
    if plan.consistency == "none":
        widths = [0 if s is None else _noise_half_width(plan, s) for s in plan.level_scales()]
        method = "exact noise quantile of each level around the clamped count: ≥ 95 % for every node"
    else:
        widths = _bootstrap_half_widths(hierarchy, plan, counts)
        if plan.consistency == "topdown" and not plan.privacy.root_public:
            scale0 = plan.level_scales()[0]
            assert scale0 is not None
            widths[0] = _noise_half_width(plan, scale0)  # the root is the clamped noisy root: exact
        method = ("parametric bootstrap around the consistent count (released counts as truth, |error| "
                  "pooled per level): ≈ 95 % on average over a level's nodes")
    for c, q in zip(counts, widths):
        lower.append(np.maximum(c - q, 0).astype(np.int64))
        upper.append((c + q).astype(np.int64))
    return HierarchyRelease(plan, hierarchy, counts, tuple(lower), tuple(upper), method)


def simulate_hierarchy(hierarchy: Hierarchy, leaf_counts: npt.ArrayLike, plan: HierarchyPlan, *, trials: int,
                       seed: int) -> HierarchyProjection:
    """Empirical per-level bias², variance and MSE (summed over each level's nodes, counts²) of
    ``trials`` releases with ``SeededRandom(seed)`` (insecure: simulation only). MSE is the mean
    squared error; bias² is the unbiased estimate Σ (mean error² − s²/R) over the level's nodes (s² the
    trials' variance, ddof 1; the plain squared mean error would add variance/R), at least 0; variance
    = MSE − bias². O(trials · nodes)."""
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 2:
        raise ParameterError(f"trials must be a whole number ≥ 2, got {trials!r}", "give e.g. 200")
    if plan.level_sizes != hierarchy.level_sizes:
        raise ParameterError(f"the plan is for {plan.level_sizes} nodes per level, the tree has {hierarchy.level_sizes}",
                             "plan for this tree")
    true_levels = hierarchy.aggregate(leaf_counts)
    rng = SeededRandom(seed)
    sums = [np.zeros(a.size) for a in true_levels]
    squares = [np.zeros(a.size) for a in true_levels]
    upward = [0.0] * len(true_levels)
    for _ in range(int(trials)):
        counts = _release_counts(hierarchy.parents, plan, true_levels, rng)
        for ell, c in enumerate(counts):
            err = c.astype(np.float64) - true_levels[ell]
            sums[ell] += err
            squares[ell] += err * err
            upward[ell] += float(np.sum(err[err > 0] ** 2))
    levels = []
    for ell, (s, sq) in enumerate(zip(sums, squares)):
        mean = s / trials
        sample_var = (sq - trials * mean * mean) / (trials - 1)  # per node, ddof 1
        b2 = max(float(np.sum(mean * mean - sample_var / trials)), 0.0)
        m = float(np.sum(sq / trials))
        over = upward[ell] / trials
        levels.append(LevelProjection(ell, int(s.size), b2, max(m - b2, 0.0), m, over, max(m - over, 0.0)))
    return HierarchyProjection(plan, tuple(levels), _weighted(plan, levels), f"monte carlo ({int(trials)} trials)")


DOWNSTREAM_WEIGHTS = ("log", "linear", "quadratic")


def _allocation_shares(counts: np.ndarray, weight: str) -> np.ndarray:
    """Paper 001 §5: shares (in %) of a budget split in proportion to W(P_i), P_i = c_i / Σ_j c_j, with
    W(p) = log(1 + p), p or p² (along the last axis). All-zero counts split equally."""
    c = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    total = c.sum(axis=-1, keepdims=True)
    p = np.where(total > 0, c / np.where(total > 0, total, 1.0), 1.0 / c.shape[-1])
    wv = np.log1p(p) if weight == "log" else (p if weight == "linear" else p * p)
    share: np.ndarray = 100.0 * wv / wv.sum(axis=-1, keepdims=True)
    return share


def downstream_allocation(prior_counts_of_children: npt.ArrayLike, released_trials: npt.ArrayLike,
                          weight: str = "linear") -> tuple[float, float]:
    """Paper 001 §5: a budget B split among the children of a node in proportion to W(P_i),
    P_i = N_i / Σ_j N_j, W = log(1 + p) ("log", favours small groups), p ("linear") or p² ("quadratic").
    ``prior_counts_of_children``: the true counts N_i; ``released_trials``: released counts of the same
    children in each of many releases (trials × children). Returns (bias², variance) of the
    misallocation in percent of B, summed over the children: bias² = Σ_i (E[s̃_i] − s_i)², variance =
    Σ_i Var(s̃_i) (ddof 0), s the shares in %. O(trials · children)."""
    _check_choice(weight, DOWNSTREAM_WEIGHTS, "weight function")
    truth = np.asarray(prior_counts_of_children, dtype=np.float64)
    rel = np.asarray(released_trials, dtype=np.float64)
    if rel.ndim != 2 or rel.shape[1] != truth.size or truth.size == 0:
        raise ParameterError(f"released trials of shape {rel.shape} for {truth.size} children",
                             "give an array of shape (trials, children)")
    true_share = _allocation_shares(truth, weight)
    s = _allocation_shares(rel, weight)
    return float(np.sum((s.mean(axis=0) - true_share) ** 2)), float(np.sum(s.var(axis=0)))


@dataclass(frozen=True)
class DownstreamFigure:
    """Misallocation of paper 001 §5 for one weight function: bias² and variance in %² of the budget."""

    weight: str
    bias2: float
    variance: float


def downstream_projection(hierarchy: Hierarchy, leaf_counts: npt.ArrayLike, plan: HierarchyPlan, *, level: int,
                          node: int, trials: int = 500, seed: int = 0,
                          weights: Sequence[str] = DOWNSTREAM_WEIGHTS) -> tuple[DownstreamFigure, ...]:
    """Paper 001 §5 as a projection: the budget of node ``node`` of ``level`` (0..L−1) split among its
    children by W(P) from ``trials`` simulated releases of ``plan`` (SeededRandom(seed); counts from a
    public prior) — bias² and variance of the misallocation per weight function. O(trials · nodes)."""
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 2:
        raise ParameterError(f"trials must be a whole number ≥ 2, got {trials!r}", "give e.g. 500")
    start, end = hierarchy.child_ranges(level)
    if not 0 <= int(node) < start.size:
        raise ParameterError(f"node {node} does not exist on level {level}", f"give an index below {start.size}")
    lo, hi = int(start[node]), int(end[node])
    true_levels = hierarchy.aggregate(leaf_counts)
    rng = SeededRandom(seed)
    released = np.empty((int(trials), hi - lo))
    for r in range(int(trials)):
        released[r] = _release_counts(hierarchy.parents, plan, true_levels, rng, top=None)[level + 1][lo:hi]
    truth = true_levels[level + 1][lo:hi]
    return tuple(DownstreamFigure(w, *downstream_allocation(truth, released, w)) for w in weights)
