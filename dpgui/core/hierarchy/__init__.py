"""Counts over a categorical hierarchy: the tree, the level-budget plan, projections and the release.

The model (docs/engine.md; Ko, Ziani & Fioretto, "Optimal Allocation of Privacy Budget on Hierarchical
Data Release"; Ghazi, Kamath, Kumar, Manurangsi & Wu 2023, "On Differentially Private Counting on Trees"):

* **Tree** (:mod:`.tree`). L = 2..4 nested categorical columns. Level 0 is the root (all records, one
  node); level ℓ = 1..L holds the distinct values of column ℓ, each under its one parent. Nodes of a
  level are ordered by (parent index, label), so each parent's children are contiguous. A value under
  two parents, an empty label or a missing value is a :class:`~dpgui.errors.DataError` with its fix.
* **Public.** The node list (every node gets a released count, zeros included), the level budgets,
  weights and noise scales (:class:`HierarchyPlan`, :mod:`.plan`), and — when the optimiser needs them —
  the *prior* counts (a public file or an earlier release; the confidential data only by an explicit,
  recorded opt-in: Ko, Ziani & Fioretto §3.2 and §6 note that level budgets computed from the
  confidential counts and then published are not covered by the DP guarantee). Under ``change`` also
  the root N.
* **Neighbours and sensitivity per level** (:class:`~dpgui.core.plan.PrivacySpec`, L records per
  person): ``change`` — one person's records change their paths; on each level at most 2L node
  counts move by one: L1 sensitivity Δ = 2L, squared L2 Δ₂² = 2L²; the root N is public and not
  noised. ``addremove`` — L records are added or removed: Δ = L, Δ₂² = L², the root is a noised
  level like the others. Each level is one release of a count vector, so by basic composition
  (Laplace: Σ ε_ℓ = ε) or zCDP composition (Gaussian: Σ ρ_ℓ = ρ = zcdp_rho(ε, δ)) the whole is
  (ε, δ)-DP.
* **Noise** (:mod:`dpgui.core.noise_mechanisms`). ``laplace``: level ℓ gets exact discrete-Laplace noise
  of scale t_ℓ = laplace_scale(Δ, ε_ℓ) ≥ Δ/ε_ℓ (Ko, Ziani & Fioretto use Lap(1/ε), Δ = 1; we write
  their formulas with b = Δ/ε). ``gaussian`` (δ > 0): discrete Gaussian σ_ℓ² = gaussian_sigma2(Δ₂², ρ_ℓ)
  (Ghazi et al.'s Corollary 2.7 baseline). ``multiplicative``: Ghazi et al.'s Algorithms 1–2
  (:mod:`dpgui.core.counting_trees`).
* **Released values** (:mod:`.release`). ``consistency="none"``: each node max(0, noisy count) (Ko, Ziani
  & Fioretto eq. 1). ``topdown``: their program (8) from the root down with integrality (children
  non-negative integers summing exactly to their parent's released value); ``gls``: the BLUE on the tree,
  then the same integer top-down step (:mod:`dpgui.core.hierarchy_consistency`). Under change the root
  is N exactly.
* **Errors** (:mod:`.projection`). Per node: Ko, Ziani & Fioretto's Props 1–2 / eq. (3) (continuous
  Laplace) and their exact discrete versions; per level summed; across levels eq. (5); level budgets by
  programs (6)/(7) — all in :mod:`dpgui.core.hierarchy_budget`. :func:`project_hierarchy` gives per-level
  bias², variance, MSE and the 95 % margin of one count (:attr:`LevelProjection.margin95`) on public
  prior (or assumed, :func:`assumed_levels`) counts: closed form for ``none``, Monte Carlo (seeded
  releases through the release code) for consistent and multiplicative releases;
  :func:`simulate_hierarchy` the same empirically on given counts.
* **Automatic choices** (:func:`plan_hierarchy`, :mod:`.planner`; each said in ``HierarchyPlan.notes``):
  the noise with the lower projected error, the consistency with the lower projected weighted MSE.
* **Intervals** (95 %, :func:`release_hierarchy`): exact noise quantiles for ``none`` (≥ 95 % per
  node); a parametric bootstrap for consistent releases (≈ 95 % on average over a level's nodes);
  Ghazi et al.'s buckets for multiplicative (≥ 95 % per node on its success event).
* **Downstream** (:mod:`.downstream`; Ko, Ziani & Fioretto §5): :func:`downstream_allocation` /
  :func:`downstream_projection`, the bias² and variance (in %) of a budget split among a node's children
  in proportion to W(P).

Everything here is Qt-free and I/O-free; work is vectorised per level (``np.add.reduceat`` over the
contiguous children of each parent), never a Python loop over nodes (only building the tree from
label tuples loops over the paths, once).

This package's names are its rooms' (tree, plan, release, projection, planner, downstream), gathered
here as the hierarchy's one public surface, so that a caller imports ``dpgui.core.hierarchy`` whatever
room a name lives in.
"""

from __future__ import annotations

from dpgui.core.hierarchy.downstream import (
    DOWNSTREAM_WEIGHTS,
    DownstreamFigure,
    downstream_allocation,
    downstream_projection,
)
from dpgui.core.hierarchy.plan import (
    MAX_ASSUMED_RECORDS,
    MAX_LEVEL_WEIGHT,
    MIN_LEVEL_WEIGHT,
    HierarchyPlan,
    assumed_levels,
    check_assumed_records,
)
from dpgui.core.hierarchy.planner import plan_hierarchy
from dpgui.core.hierarchy.projection import (
    NOISE_ONLY_METHOD,
    PROJECTION_DRAWS,
    HierarchyProjection,
    LevelProjection,
    counts_projected_on,
    counts_words,
    noise_only_projection,
    project_hierarchy,
    projection_trials,
    simulate_hierarchy,
)
from dpgui.core.hierarchy.release import INTERVAL_LEVEL, HierarchyRelease, release_hierarchy
from dpgui.core.hierarchy.tree import (
    MAX_LEVELS,
    MAX_NODES_PER_LEVEL,
    MIN_LEVELS,
    PATH_SEPARATOR,
    Hierarchy,
    label_order_key,
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

__all__ = [
    "MIN_LEVELS",
    "MAX_LEVELS",
    "MAX_NODES_PER_LEVEL",
    "MAX_ASSUMED_RECORDS",
    "MIN_LEVEL_WEIGHT",
    "MAX_LEVEL_WEIGHT",
    "INTERVAL_LEVEL",
    "NOISE_ONLY_METHOD",
    "PROJECTION_DRAWS",
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
    "check_assumed_records",
    "counts_words",
    "counts_projected_on",
    "noise_only_projection",
    "release_hierarchy",
    "simulate_hierarchy",
    "projection_trials",
    "downstream_allocation",
    "DOWNSTREAM_WEIGHTS",
    "DownstreamFigure",
    "downstream_projection",
]
