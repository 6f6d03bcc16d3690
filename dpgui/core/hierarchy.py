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
  recorded opt-in). Under ``change`` also the root count N.
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
  (:mod:`dpgui.core.counting_trees`, when present).
* **Released values.** ``consistency="none"``: each node max(0, noisy count) (paper 001 eq. 1).
  ``topdown``: paper 001 program (8) from the root down with integrality (children non-negative
  integers summing exactly to their parent's released value); ``gls``: the BLUE on the tree, then
  the same integer top-down step (:mod:`dpgui.core.hierarchy_consistency`). Under change the root is
  N exactly.
* **Errors.** Per node: paper 001 Props 1–2 / eq. (3) (continuous Laplace) and their exact discrete
  versions; per level summed; across levels eq. (5); level budgets by programs (6)/(7) — all in
  :mod:`dpgui.core.hierarchy_budget`, re-exported here.

Everything here is Qt-free and I/O-free; work is vectorised per level (``np.add.reduceat`` over the
contiguous children of each parent), never a Python loop over nodes.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from dpgui.core.accounting import zcdp_epsilon
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
    gaussian_sigma2,
    gaussian_sigma2_problem,
    laplace_scale,
    laplace_scale_problem,
    sample_discrete_gaussian_levels,
    sample_discrete_laplace_levels,
)
from dpgui.core.plan import BUDGET_RTOL, PrivacySpec, budget_total, split_budget
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
    "Hierarchy",
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
    "release_hierarchy",
    "simulate_hierarchy",
    "downstream_allocation",
]

MIN_LEVELS = 2
MAX_LEVELS = 4
MAX_NODES_PER_LEVEL = 500_000
HIERARCHY_NOISES = ("laplace", "gaussian", "multiplicative")
HIERARCHY_NOISE_CHOICES = (*HIERARCHY_NOISES, "auto")
ALLOCATIONS = ("uniform", "optimal", "target")
CONSISTENCY_METHODS = ("topdown", "gls", "none")
CONSISTENCY_CHOICES = (*CONSISTENCY_METHODS, "auto")
PRIOR_SOURCES = ("none", "prior file", "confidential data (opted in)")
#: The coverage of the per-node intervals of a release.
INTERVAL_LEVEL = 0.95


# ----------------------------------------------------------------------------------------------
# The tree
# ----------------------------------------------------------------------------------------------


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
    return text


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """The public structure of a hierarchy: level names, node labels, parent indices (no counts).

    ``labels[ℓ-1][i]`` is the label of node i on level ℓ (ℓ = 1..L); ``parents[ℓ-1][i]`` the index on
    level ℓ−1 of its parent (int64; all 0 on level 1, the root). Nodes of a level are ordered by
    (parent index, label), so each parent's children are contiguous on the next level.
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
                raise DataError(f"a path has {len(raw)} values for {depth} levels: {tuple(raw)!r}",
                                f"give one value per level column ({', '.join(names)})")
            path = tuple(_label(v, names[i]) for i, v in enumerate(raw))
            if path in leaves:
                continue
            leaves.add(path)
            for ell in range(1, depth):
                label, parent = path[ell], path[ell - 1]
                seen = parent_of[ell].setdefault(label, parent)
                if seen != parent:
                    raise DataError(
                        f"value {label!r} of level {names[ell]!r} appears under two parents, {seen!r} and {parent!r}",
                        f"make the values unique, e.g. prefix each with its parent ('{parent}/{label}')")
        level_labels: list[list[str]] = [sorted({p[0] for p in leaves})]
        parents: list[np.ndarray] = [np.zeros(len(level_labels[0]), dtype=np.int64)]
        for ell in range(1, depth):
            index = {lab: i for i, lab in enumerate(level_labels[-1])}
            keyed = sorted((index[parent_of[ell][lab]], lab) for lab in parent_of[ell])
            level_labels.append([lab for _, lab in keyed])
            parents.append(np.fromiter((p for p, _ in keyed), dtype=np.int64, count=len(keyed)))
        for ell, labs in enumerate(level_labels):
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
            lookup: dict[tuple[str, ...], int] = {}
            for i in range(self.level_sizes[depth]):
                lookup[self.path(depth, i)] = i
            self._leaf_lookup.update(lookup)
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
            shown = "; ".join("/".join(m) for m in missing[:3])
            more = f" and {len(missing) - 3:,} more" if len(missing) > 3 else ""
            raise DataError(f"{len(missing):,} path(s) of the data are not in the hierarchy's tree: {shown}{more}",
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
    multiplicative: Any = None  # counting_trees.MultiplicativeParams (paper 004), when noise is multiplicative
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        sizes = _check_level_sizes(self.level_sizes)
        object.__setattr__(self, "level_sizes", sizes)
        _check_choice(self.noise, HIERARCHY_NOISES, "noise")
        _check_choice(self.allocation, ALLOCATIONS, "allocation")
        _check_choice(self.consistency, CONSISTENCY_METHODS, "consistency")
        _check_choice(self.prior_source, PRIOR_SOURCES, "prior source")
        weights = tuple(float(w) for w in self.weights)
        if len(weights) != len(sizes) or any(not math.isfinite(w) or w < 0 for w in weights):
            raise ParameterError(f"weights {list(weights)} are not one finite number ≥ 0 per level (root first)",
                                 f"give {len(sizes)} weights")
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "notes", tuple(str(n) for n in self.notes))
        if self.target_mse is not None:
            object.__setattr__(self, "target_mse", float(self.target_mse))
        if self.noise in ("gaussian", "multiplicative") and self.privacy.delta <= 0:
            raise ParameterError(f"{self.noise} noise needs δ > 0", "set δ, e.g. 1e-9, or choose Laplace noise")
        if self.noise == "multiplicative":
            if self.multiplicative is None:
                raise ParameterError("a multiplicative plan needs its paper-004 parameters", "plan it with plan_hierarchy")
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
        """Variance of each level's (unclamped) noise, counts² (0 for the public root)."""
        from dpgui.core.noise import discrete_gaussian_variance, discrete_laplace_variance

        out: list[float] = []
        for s in self.level_scales():
            if s is None:
                out.append(0.0)
            elif self.noise == "gaussian":
                out.append(float(discrete_gaussian_variance(float(s))))
            else:
                out.append(discrete_laplace_variance(float(s)))
        return tuple(out)

    def ledger_charge(self) -> tuple[float, float, float | None]:
        """(ε, δ, ρ or None) the ledger records: laplace (ε, 0, ε²/2) — pure ε-DP is ε²/2-zCDP (Bun &
        Steinke 2016, Prop. 1.4), as :meth:`dpgui.core.plan.Plan.ledger_charge`; gaussian (ε, δ, ρ);
        multiplicative (ε, δ, None): paper 004's (ε, δ) composition, no zCDP figure."""
        eps = self.privacy.epsilon
        if self.noise == "gaussian":
            return eps, self.privacy.delta, budget_total(self.privacy, "gaussian")
        if self.noise == "multiplicative":
            return eps, self.privacy.delta, None
        return eps, 0.0, eps * eps / 2.0

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
            "level_noise_scales": scales,
            "weights": list(self.weights),
            "allocation": self.allocation,
            "consistency": self.consistency,
            "target_mse": self.target_mse,
            "prior_source": self.prior_source,
            "charge": {"epsilon": eps, "delta": delta, "rho": rho},
            "notes": list(self.notes),
            "multiplicative": None,
        }
        if self.multiplicative is not None:
            out["multiplicative"] = self.multiplicative.to_json()
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HierarchyPlan:
        try:
            privacy = PrivacySpec(float(data["epsilon"]), str(data["neighbours"]), int(data["records_per_person"]),
                                  float(data.get("delta") or 0.0))
            multiplicative = None
            if data.get("multiplicative") is not None:
                from dpgui.core.counting_trees import MultiplicativeParams  # type: ignore[import-not-found, unused-ignore]

                multiplicative = MultiplicativeParams.from_json(data["multiplicative"])
            target = data.get("target_mse")
            return cls(tuple(int(s) for s in data["level_sizes"]), privacy, str(data["noise"]),
                       tuple(float(b) for b in data["level_budgets"]), tuple(float(w) for w in data["weights"]),
                       str(data["allocation"]), str(data["consistency"]), None if target is None else float(target),
                       str(data.get("prior_source", "none")), multiplicative, tuple(data.get("notes", ())))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ParameterError):
                raise
            raise ParameterError(f"a saved hierarchy plan is incomplete or malformed ({exc})", "make the plan again") from None


# ----------------------------------------------------------------------------------------------
# Projections and releases
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LevelProjection:
    """Error of one level, summed over its nodes (counts²): bias², variance and MSE = bias² + variance."""

    level: int
    nodes: int
    bias2: float
    variance: float
    mse: float


@dataclass(frozen=True)
class HierarchyProjection:
    """Per-level errors of a plan on given counts, eq. (5)'s weighted MSE, and how they were obtained:
    "closed form" or "monte carlo (R trials)"."""

    plan: HierarchyPlan
    levels: tuple[LevelProjection, ...]
    weighted_mse: float
    method: str

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "weighted_mse": self.weighted_mse,
                "levels": [{"level": p.level, "nodes": p.nodes, "bias2": p.bias2, "variance": p.variance, "mse": p.mse}
                           for p in self.levels]}


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
    """Exact per-level bias², variance, MSE of the clamped noisy counts (consistency none)."""
    out = []
    for ell, scale in enumerate(plan.level_scales()):
        n = prior[ell]
        if scale is None:
            out.append(LevelProjection(ell, int(n.size), 0.0, 0.0, 0.0))
            continue
        if plan.noise == "gaussian":
            bias, var = clamped_discrete_gaussian_moments(n, float(scale))
        else:
            bias, var = clamped_discrete_laplace_moments(n, float(scale))
        b2, v = float(np.sum(bias * bias)), float(np.sum(var))
        out.append(LevelProjection(ell, int(n.size), b2, v, b2 + v))
    return tuple(out)


def _weighted(plan: HierarchyPlan, levels: Sequence[LevelProjection]) -> float:
    return math.fsum(w * p.mse for w, p in zip(plan.weights, levels))


def project_hierarchy(plan: HierarchyPlan, prior_levels: Sequence[npt.ArrayLike], *, trials: int = 200, seed: int = 0,
                      hierarchy: Hierarchy | None = None) -> HierarchyProjection:
    """Projected per-level bias², variance and MSE (summed over each level's nodes, counts²) of ``plan``
    when the true counts are ``prior_levels`` (public; root first).

    consistency "none" with laplace/gaussian noise: the exact clamped discrete moments (closed form).
    Otherwise (topdown, gls, multiplicative): Monte Carlo, ``trials`` seeded releases of the prior
    through the same code as a real release; this needs the tree (``hierarchy``)."""
    prior = _check_prior(prior_levels, plan.level_sizes)
    if plan.consistency == "none" and plan.noise != "multiplicative":
        levels = _closed_form_levels(plan, prior)
        return HierarchyProjection(plan, levels, _weighted(plan, levels), "closed form")
    if hierarchy is None:
        raise ParameterError(f"projecting a {plan.consistency} release needs the tree", "pass hierarchy=")
    return simulate_hierarchy(hierarchy, prior[-1], plan, trials=trials, seed=seed)


def _uniform_budgets(sizes: Sequence[int], privacy: PrivacySpec, noise: str) -> tuple[float, ...]:
    first = privacy.first_noised_level()
    shares = split_budget(budget_total(privacy, noise), [1.0] * (len(sizes) - first))
    return (0.0,) * first + tuple(shares)


def plan_hierarchy(level_sizes: Sequence[int], privacy: PrivacySpec, *, noise: str = "auto", allocation: str = "uniform",
                   weights: Sequence[float] | None = None, target_mse: float | None = None, consistency: str = "auto",
                   prior_levels: Sequence[npt.ArrayLike] | None = None, prior_source: str = "none",
                   alpha: float | None = None, hierarchy: Hierarchy | None = None) -> HierarchyPlan:
    """The plan of a hierarchy release: noise, level budgets, weights, consistency.

    allocation ``uniform`` (equal budget per noised level; needs no counts), ``optimal`` (program 6)
    or ``target`` (program 7 with τ = ``target_mse``: the least ε; it must not exceed
    ``privacy.epsilon``); the last two need ``prior_levels`` (public counts, root first).
    ``noise="auto"``: laplace, or gaussian when δ > 0 and its projected weighted MSE is lower.
    ``consistency="auto"``: topdown or gls, the one with the lower projected weighted MSE (needs
    ``prior_levels`` and ``hierarchy``; otherwise topdown, said in ``notes``).
    """
    sizes = _check_level_sizes(level_sizes)
    if hierarchy is not None and hierarchy.level_sizes != sizes:
        raise ParameterError(f"the tree has {hierarchy.level_sizes} nodes per level, the plan {sizes}", "plan for this tree")
    _check_choice(noise, HIERARCHY_NOISE_CHOICES, "noise")
    _check_choice(allocation, ALLOCATIONS, "allocation")
    _check_choice(consistency, CONSISTENCY_CHOICES, "consistency")
    _check_choice(prior_source, PRIOR_SOURCES, "prior source")
    w = tuple([1.0] * len(sizes) if weights is None else [float(x) for x in weights])
    prior = None if prior_levels is None else _check_prior(prior_levels, sizes)
    if allocation != "uniform" and prior is None:
        raise ParameterError(f"the {allocation} allocation needs node counts (paper 001's programs)",
                             "give a public prior (--prior), opt in to counts from the data, or use the uniform allocation")
    if allocation == "target" and target_mse is None:
        raise ParameterError("the target allocation needs a target weighted MSE", "give target:TAU, e.g. target:1000")
    if prior is not None and prior_source == "none":
        prior_source = "prior file"
    notes: list[str] = []
    if noise == "auto":
        candidates = ["laplace"] + (["gaussian"] if privacy.delta > 0 else [])
    else:
        candidates = [noise]
    if "multiplicative" in candidates:
        raise ParameterError("multiplicative noise (paper 004) is not available in this build", "use laplace or gaussian noise")
    methods = ["topdown", "gls"] if consistency == "auto" else [consistency]
    if consistency == "auto" and (prior is None or hierarchy is None):
        methods = ["topdown"]
        notes.append("consistency: topdown by default (no public prior counts to project topdown against gls)")
    best: tuple[float, HierarchyPlan] | None = None
    for nz in candidates:
        pr = privacy
        if nz == "gaussian" and pr.delta <= 0:
            raise ParameterError("Gaussian noise needs δ > 0", "set δ, e.g. 1e-9, or choose Laplace noise")
        if allocation == "uniform":
            budgets = _uniform_budgets(sizes, pr, nz)
        elif allocation == "optimal":
            assert prior is not None
            budgets = optimal_allocation(prior, pr, w, nz)
        else:
            assert prior is not None and target_mse is not None
            budgets = least_budget_for_target(prior, pr, w, target_mse, nz)
            need = math.fsum(budgets)
            eps = need if nz == "laplace" else zcdp_epsilon(need, pr.delta)
            if eps > privacy.epsilon * (1 + 1e-12):
                raise ParameterError(f"the target weighted MSE {target_mse:g} needs ε = {eps:.4g} with {nz} noise, "
                                     f"more than the ε = {privacy.epsilon:g} allowed", "raise ε or the target")
            pr = privacy.with_epsilon(eps)
            if nz == "gaussian":
                total = budget_total(pr, "gaussian")
                budgets = tuple(b * total / need for b in budgets)
        for method in methods:
            plan = HierarchyPlan(sizes, pr, nz, budgets, w, allocation, method,
                                 None if target_mse is None else float(target_mse), prior_source, None, tuple(notes))
            if len(candidates) * len(methods) == 1:
                return plan
            if prior is None:
                score = math.fsum(wl * n * v for wl, n, v in zip(w, sizes, plan.level_noise_variances()))
            else:
                score = project_hierarchy(plan, prior, trials=_auto_trials(sizes), seed=0, hierarchy=hierarchy).weighted_mse
            if best is None or score < best[0]:
                best = (score, plan)
    assert best is not None
    chosen = best[1]
    if len(candidates) > 1:
        how = "projected weighted MSE" if prior is not None else "noise variance (no prior counts)"
        chosen = _with_note(chosen, f"noise: {chosen.noise}, the lower {how} of {', '.join(candidates)}")
    if len(methods) > 1:
        chosen = _with_note(chosen, f"consistency: {chosen.consistency}, the lower projected weighted MSE of topdown and gls")
    return chosen


def _with_note(plan: HierarchyPlan, note: str) -> HierarchyPlan:
    from dataclasses import replace

    return replace(plan, notes=(*plan.notes, note))


def _auto_trials(sizes: Sequence[int]) -> int:
    """Monte Carlo trials for the automatic choices: enough pooled node-trials (≥ 20,000 over the
    tree), at least 4 and at most 200."""
    return int(min(200, max(4, math.ceil(20_000 / sum(sizes)))))


def _noise_levels(plan: HierarchyPlan, rng: RandomSource) -> list[np.ndarray | None]:
    scales = plan.level_scales()
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


def _noise_half_width(plan: HierarchyPlan, scale: Fraction) -> int:
    """Smallest integer q with P(|Z| ≤ q) ≥ 95 % for the level's noise Z (exact pmf)."""
    miss = 1.0 - INTERVAL_LEVEL
    s = float(scale)
    if plan.noise == "gaussian":
        half = int(math.ceil(14.0 * math.sqrt(s))) + 2
        k = np.arange(0, half + 1)
        pmf = discrete_gaussian_pmf(k, s)
        upper_tail = 1.0 - (pmf[0] + 2.0 * np.cumsum(pmf[1:]))  # P(|Z| > k) for k = 1..half
        tails = np.concatenate([[1.0 - pmf[0]], upper_tail])
        return int(np.argmax(tails <= miss))
    # discrete Laplace: P(|Z| > m) = 2 q^{m+1}/(1+q)
    q = math.exp(-1.0 / s)
    m = max(0, math.ceil(math.log(miss * (1.0 + q) / 2.0) / math.log(q)) - 1)
    while m > 0 and 2.0 * q**m / (1.0 + q) <= miss:  # float guard: smallest such m
        m -= 1
    while 2.0 * q ** (m + 1) / (1.0 + q) > miss:
        m += 1
    return m


def release_hierarchy(hierarchy: Hierarchy, leaf_counts: npt.ArrayLike, plan: HierarchyPlan,
                      rng: RandomSource) -> HierarchyRelease:
    """Release every node's count under ``plan`` (noise from ``rng``: SecureRandom for a real release).

    Each noised level ℓ gets independent exact noise (discrete Laplace t_ℓ or discrete Gaussian σ_ℓ²);
    under change the root is N exactly. Then: ``none`` — max(0, noisy count) per node; ``topdown`` —
    paper 001 program (8) with integrality from the root down; ``gls`` — the BLUE, then the same
    integer top-down step. Released counts are non-negative int64; consistent releases have every
    parent equal to the sum of its children.

    Intervals (95 %): for ``none``, [max(0, c − q_ℓ), c + q_ℓ] with q_ℓ the smallest integer with
    P(|Z_ℓ| ≤ q_ℓ) ≥ 95 % for the level's exact noise: it holds the true count with probability ≥ 95 %
    for every true count (if n + Z ≥ 0 it is the interval of the noisy count; if the clamp acted,
    n < −Z ≤ q_ℓ and the interval [0, q_ℓ] holds n). For consistent releases see
    ``interval_method`` (the same half-width per level, an approximation).
    Time O(nodes) vectorised.
    """
    if plan.level_sizes != hierarchy.level_sizes:
        raise ParameterError(f"the plan is for {plan.level_sizes} nodes per level, the tree has {hierarchy.level_sizes}",
                             "plan for this tree")
    true_levels = hierarchy.aggregate(leaf_counts)
    if plan.noise == "multiplicative":
        raise ParameterError("multiplicative noise (paper 004) is not available in this build", "use laplace or gaussian noise")
    noise = _noise_levels(plan, rng)
    root_public = plan.privacy.root_public
    noisy = [true_levels[ell] + noise[ell] if noise[ell] is not None else true_levels[ell].copy()
             for ell in range(len(true_levels))]
    counts: tuple[np.ndarray, ...]
    if plan.consistency == "none":
        counts = tuple(np.maximum(v, 0).astype(np.int64) for v in noisy)
    else:
        counts = _consistent(hierarchy, plan, noisy, int(true_levels[0][0]) if root_public else None)
    scales = plan.level_scales()
    lower, upper = [], []
    for ell, c in enumerate(counts):
        s = scales[ell]
        q = 0 if s is None else _noise_half_width(plan, s)
        lower.append(np.maximum(c - q, 0).astype(np.int64))
        upper.append((c + q).astype(np.int64))
    method = ("the level's exact noise quantile around the clamped count (≥ 95 % for every true count)"
              if plan.consistency == "none" else
              "the level's exact noise quantile around the consistent count (approximate)")
    return HierarchyRelease(plan, hierarchy, counts, tuple(lower), tuple(upper), method)


def _consistent(hierarchy: Hierarchy, plan: HierarchyPlan, noisy: list[np.ndarray],
                root_known: int | None) -> tuple[np.ndarray, ...]:
    """The consistency helper's top-down / GLS step (dpgui.core.hierarchy_consistency)."""
    from dpgui.core import hierarchy_consistency as hc  # type: ignore[attr-defined, unused-ignore]

    parents = list(hierarchy.parents)
    if plan.consistency == "topdown":
        root = root_known if root_known is not None else max(0, int(noisy[0][0]))
        out = hc.topdown_consistent(parents, noisy, root)
    else:
        variances = list(plan.level_noise_variances())
        out = hc.gls_consistent(parents, noisy, variances, None if root_known is None else float(root_known))
    return tuple(np.asarray(a, dtype=np.int64) for a in out)


def simulate_hierarchy(hierarchy: Hierarchy, leaf_counts: npt.ArrayLike, plan: HierarchyPlan, *, trials: int,
                       seed: int) -> HierarchyProjection:
    """Empirical per-level bias², variance and MSE (summed over each level's nodes, counts²) of
    ``trials`` releases with ``SeededRandom(seed)`` (insecure: simulation only). Per node, bias is
    mean − true and variance the trials' variance (ddof 0), so bias² + variance = the empirical MSE."""
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 2:
        raise ParameterError(f"trials must be a whole number ≥ 2, got {trials!r}", "give e.g. 200")
    true_levels = hierarchy.aggregate(leaf_counts)
    rng = SeededRandom(seed)
    sums = [np.zeros(a.size) for a in true_levels]
    squares = [np.zeros(a.size) for a in true_levels]
    for _ in range(int(trials)):
        rel = release_hierarchy(hierarchy, true_levels[-1], plan, rng)
        for ell, c in enumerate(rel.counts):
            err = c.astype(np.float64) - true_levels[ell]
            sums[ell] += err
            squares[ell] += err * err
    levels = []
    for ell, (s, sq) in enumerate(zip(sums, squares)):
        mean = s / trials
        mse = sq / trials
        b2 = float(np.sum(mean * mean))
        m = float(np.sum(mse))
        levels.append(LevelProjection(ell, int(s.size), b2, m - b2, m))
    return HierarchyProjection(plan, tuple(levels), _weighted(plan, levels), f"monte carlo ({int(trials)} trials)")


_WEIGHT_FUNCTIONS = ("log", "linear", "quadratic")


def downstream_allocation(prior_counts_of_children: npt.ArrayLike, released_trials: npt.ArrayLike,
                          weight: str = "linear") -> tuple[float, float]:
    """Paper 001 §5: a budget split among the children of a node in proportion to W(count), with
    W = log(1 + c), c or c². ``released_trials`` is an array (trials × children) of released child
    counts, ``prior_counts_of_children`` the true ones. Returns (bias², variance) of the misallocation
    in percentage points, summed over the children: bias² = Σ_j (E[share_j] − share_j)², variance =
    Σ_j Var(share_j), shares in % of the budget. A trial whose weights are all 0 splits equally."""
    _check_choice(weight, _WEIGHT_FUNCTIONS, "weight function")
    truth = np.asarray(prior_counts_of_children, dtype=np.float64)
    rel = np.asarray(released_trials, dtype=np.float64)
    if rel.ndim != 2 or rel.shape[1] != truth.size or truth.size == 0:
        raise ParameterError(f"released trials of shape {rel.shape} for {truth.size} children",
                             "give an array of shape (trials, children)")

    def shares(c: np.ndarray) -> np.ndarray:
        c = np.maximum(c, 0.0)
        wv = np.log1p(c) if weight == "log" else (c if weight == "linear" else c * c)
        tot = wv.sum(axis=-1, keepdims=True)
        eq = np.full_like(wv, 1.0 / wv.shape[-1])
        return 100.0 * np.where(tot > 0, wv / np.where(tot > 0, tot, 1.0), eq)

    true_share = shares(truth[None, :])[0]
    s = shares(rel)
    mean = s.mean(axis=0)
    return float(np.sum((mean - true_share) ** 2)), float(np.sum(s.var(axis=0)))
