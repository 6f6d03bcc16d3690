"""The mean and the sum of a numeric column from its released CDF, with 95 % intervals (post-processing:
no budget, no confidential data; docs/engine.md "Mean and sum").

A released CDF gives the bin counts ``ĉ_k = C_{k+1} − C_k`` of the K equal-width bins of the public bounds
[lower, upper). The position of each value inside its bin is not released, so every value is taken at its
bin's midpoint ``m_k``: the **sum** is ``Σ_k m_k·ĉ_k`` and the **mean** is that sum over the released number
of values ``C_K`` (missing values are not values). Values outside the bounds were counted in the first or
last bin (clamped), so these are the sum and the mean of the *clamped* values.

**Variance, exactly.** Both estimators are linear in the node noise, and a sum over bins with bin values
``e_k`` is a linear functional of the cumulative counts: ``Σ_k e_k c_k = Σ_{j<K} (e_{j−1} − e_j)·C_j +
e_{K−1}·C_K`` (summation by parts; for midpoints ``= m_{K−1}·C_K − w·Σ_{j<K} C_j``). Its variance, with the
leaf weights ``q_i = Σ_{j>i} α_j`` of the prefix weights α (:func:`functional_variance`):

* covering sum (Rameshwar, Tandon & Sharma, eq. 5): each prefix adds a run of nodes per released level,
  so a node's weight is the sum of α over the prefixes whose run holds it; ``Var = Σ_l v_l Σ_nodes g²``;
* GLS (Hay et al. 2010; the BLUE): ``Var qᵀx̂ = Σ_v ‖P_v q‖²/λ_v + (qᵀ1)²/(K̄ λ_c)`` minus the known zeros'
  ``E(q)ᵀ Q E(q)``: the spectral form that :mod:`dpgui.core.projection` evaluates for prefixes (where only the
  boundary nodes count), here summed over every node because the weights q are spread over all leaves (for a
  sum over bins q is the bins' values themselves). The known-zero term is linear in q: ``E(q) = Σ_j α_j E(j)``,
  i.e. ``E_t(q) = Σ_{i ≥ a_t} q_i / σ_t``. (Linear algebra of its own: the projection module offers the
  variance of one prefix or one range, not of a functional over all of them; it reuses that module's
  eigenvalues, spine and known-zero form Q.)

**Intervals, ≥ 95 %.** As for the counts (:mod:`dpgui.core.quantiles`): centred on the unbiased estimate
before consistency, so consistency (a projection, or a clamp) cannot move them, then widened to hold the
released value. The margin of a functional with standard error σ is ``σ·(Z_TAIL + LATTICE_SLACK/√v_min)``,
v_min the smallest noised level variance: Z_TAIL·σ is the tails' one-sided 97.5 % bound of
:func:`~dpgui.core.quantiles.noise_margin`, and the counts' one-record lattice slack becomes one noise draw's
largest weight in the functional, which is at most σ/√v_min (its share of the variance, ``g²·v_l``, cannot
exceed the whole ``σ²``); checked by exact convolution on small trees in the tests.

* **sum** (the midpoint sum ``S``): ``S̃ ± margin(σ_S)``.
* **mean** (``μ = S/C``, the count noisy unless public): Fieller's (1954) set ``{μ : |S̃ − μ·C̃| ≤
  margin(σ_D(μ))}``, ``D(μ) = S − μ·C`` a linear functional with ``Var D = Var S − 2μ Cov(S, C) + μ² Var C``:
  at the true μ, D = 0, so the set holds it whenever that one count-like statement does (≥ 95 %), with no
  delta-method approximation; it is intersected with [m_0, m_{K−1}], where the midpoint mean must lie. When the
  count is not clearly positive (C̃² ≤ k² Var C) the set is unbounded and the interval is that whole range.
* **binning**: a value lies in its bin, within ± w/2 of the midpoint, so the mean of the clamped values is
  within ± w/2 of the midpoint mean (deterministic), and the true sum within ± w/2 per value. The interval
  for the TRUE mean (``low``/``high``) is the noise interval ± w/2: each end fails only on a one-sided event of
  ≤ 2.5 %, so it holds the mean of the clamped values in ≥ 95 % of releases. The true sum's interval runs from
  the lower-edge sum's lower bound to the upper-edge sum's upper bound (each one-sided, ≤ 2.5 %).

Qt-free, no I/O, any thread. O(K̄) per release (the GLS sums run over every node).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpgui.core.mechanism import Release
from dpgui.core.plan import Plan
from dpgui.core.projection import _known_zero_form, _spine, gls_eigenvalues, has_padding
from dpgui.core.quantiles import LATTICE_SLACK, Z_TAIL, Quantile, quantiles, whole_number_step
from dpgui.vocabulary import Estimator

__all__ = ["NO_MEAN", "CdfMoments", "GroupSummary", "MomentEstimate", "cdf_moments", "functional_variance",
           "functional_covariances", "group_summaries", "margin_factor"]

#: Why a release has no mean, in the reports' words.
NO_MEAN = "no mean: the released total is not positive"


@dataclass(frozen=True)
class MomentEstimate:
    """A mean or a sum of a released CDF, in the column's units.

    ``value``: from the released (consistent) bin counts, every value at its bin's midpoint.
    ``noise_low``/``noise_high``: holds the midpoint-based quantity of the true counts with probability ≥ 95 %
    (the noise alone), and ``value``. ``low``/``high``: holds the quantity of the clamped values themselves
    (noise and binning) with probability ≥ 95 %. ``binning``: how far binning alone can move it, at most
    (w/2 for the mean; w/2 per value for the sum, here times the released count)."""

    value: float
    noise_low: float
    noise_high: float
    low: float
    high: float
    binning: float

    @property
    def noise_margin(self) -> float:
        """The larger distance from ``value`` to an end of the noise interval (the "±" the reports show)."""
        return max(self.value - self.noise_low, self.noise_high - self.value)


@dataclass(frozen=True)
class CdfMoments:
    """The sum and the mean of a released CDF; ``mean`` is None when the released number of values ``count``
    is not positive (:data:`NO_MEAN`). ``bin_width``: w; ``per_value``: the most binning can move one value,
    w/2 (or (w − 1)/2 for whole numbers on bins centred on them); column units."""

    count: float
    sum: MomentEstimate
    mean: MomentEstimate | None
    bin_width: float
    per_value: float


def functional_variance(plan: Plan, alpha: np.ndarray, padding_known: bool = True) -> float:
    """Exact Var(Σ_j α_j Ĉ_j), j = 1..len(α) ≤ leaves, of the plan's estimator (before consistency), counts² × α².

    Under a public root the last real leaf's prefix is N, published exactly: its weight adds no variance.
    ``padding_known``: as :func:`dpgui.core.projection.prefix_variances`. O(K̄)."""
    return float(functional_covariances(plan, [alpha], padding_known)[0, 0])


def functional_covariances(plan: Plan, alphas: Sequence[np.ndarray], padding_known: bool = True) -> np.ndarray:
    """The exact covariance matrix of the functionals ``Σ_j α_j Ĉ_j`` (one per α of ``alphas``, each of length
    ≤ leaves), counts² × α², in one pass over the tree for all of them (:func:`functional_variance`). O(n·K̄)."""
    shape = plan.shape
    a = np.zeros((len(alphas), shape.leaves))
    for row, alpha in enumerate(alphas):
        values = np.asarray(alpha, dtype=float)
        if values.size > shape.leaves:
            raise ValueError("more prefix weights than real leaves")
        a[row, :values.size] = values
    if plan.privacy.root_public:
        a[:, -1] = 0.0
    if plan.estimator is Estimator.COVERING:
        return _covering_covariances(plan, a)
    return _gls_covariances(plan, a, padding_known)


def _covering_covariances(plan: Plan, a: np.ndarray) -> np.ndarray:
    """Covering sum: prefix j adds, per released level, the run of nodes [start_l(j), end_l(j)); a node's weight
    is Σ α_j over the prefixes whose run holds it (a difference array), and ``Cov = Σ_l v_l g_lᵀ g_l'``."""
    shape = plan.shape
    s = shape.leaves_per_node
    variances = plan.level_variances()
    prefixes = np.arange(1, shape.leaves + 1, dtype=np.int64)
    out = np.zeros((a.shape[0], a.shape[0]))
    above = None
    for level, known in enumerate(plan.released()):
        if not known:
            continue
        nodes = shape.nodes_at_level(level)
        end = prefixes // s[level]
        start = np.zeros_like(prefixes) if above is None else (prefixes // s[above]) * (s[above] // s[level])
        weights = np.array([np.cumsum(np.bincount(start, row, nodes + 1) - np.bincount(end, row, nodes + 1))[:nodes]
                            for row in a])
        if np.isfinite(variances[level]):
            out += float(variances[level]) * (weights @ weights.T)
        above = level
    return out


def _gls_covariances(plan: Plan, a: np.ndarray, padding_known: bool) -> np.ndarray:
    """GLS: the leaf weights q_i = Σ_{j>i} α_j; ``Σ_v ⟨P_v q, P_v q'⟩/λ_v + (qᵀ1)(q'ᵀ1)/(K̄ λ_c)`` with
    ``⟨P_v q, P_v q'⟩ = Σ_c Q_c Q'_c/s − Q_v Q'_v/(b·s)`` (Q: sums over a node's leaves, s leaves per child),
    minus the known zeros' ``E(q)ᵀ Q E(q')`` with ``E_t(q) = Σ_{i ≥ a_t} q_i / σ_t``."""
    shape = plan.shape
    s = shape.leaves_per_node
    lam, lam_c = gls_eigenvalues(shape, plan.level_variances())
    q = np.zeros((a.shape[0], shape.padded_bins))
    running = np.cumsum(a, axis=1)  # q_i = Σ_{j ≥ i+1} α_j = total − Σ_{j ≤ i} α_j (forward sums: contiguous, fast)
    q[:, 0] = running[:, -1]
    q[:, 1:shape.leaves] = running[:, -1:] - running[:, :-1]
    out = np.zeros((a.shape[0], a.shape[0]))
    sums = q  # the sums of the level-(m+1) nodes, from the leaves up
    for m in range(shape.height - 1, -1, -1):
        child, b = s[m + 1], shape.branching[m]
        node = sums.reshape(a.shape[0], -1, b).sum(axis=2)
        out += (sums @ sums.T / child - node @ node.T / (b * child)) / float(lam[m])
        sums = node
    if np.isfinite(lam_c):
        out += np.outer(sums[:, 0], sums[:, 0]) / (shape.padded_bins * lam_c)
    if padding_known and has_padding(shape):
        starts, sizes = _spine(shape)
        e = np.stack([q[:, start:].sum(axis=1) for start in starts], axis=1) / np.asarray(sizes, dtype=float)
        out -= e @ _known_zero_form(shape, lam, lam_c) @ e.T
    return out


def margin_factor(plan: Plan) -> float:
    """k with margin(σ) = k·σ for a linear functional of the estimate: ``Z_TAIL + LATTICE_SLACK/√v_min``."""
    variances = plan.level_variances()
    noised = variances[np.isfinite(variances) & (variances > 0)]
    return Z_TAIL + LATTICE_SLACK / math.sqrt(float(noised.min()))


def _sum_weights(values: np.ndarray) -> np.ndarray:
    """α with Σ_k values_k·c_k = Σ_j α_j C_j (summation by parts), j = 1..K."""
    alpha = np.empty(values.size)
    alpha[:-1] = values[:-1] - values[1:]
    alpha[-1] = values[-1]
    return alpha


def _ratio_interval(s: float, c: float, var_s: float, cov: float, var_c: float, k: float,
                    floor: float, ceiling: float) -> tuple[float, float]:
    """Fieller's set {μ : (s − μc)² ≤ k²(var_s − 2μ cov + μ² var_c)} ∩ [floor, ceiling] (its hull)."""
    a = c * c - k * k * var_c
    if a <= 0:
        return floor, ceiling
    b = s * c - k * k * cov  # the quadratic a·μ² − 2b·μ + (s² − k² var_s) ≤ 0
    root = math.sqrt(max(b * b - a * (s * s - k * k * var_s), 0.0))
    low, high = (b - root) / a, (b + root) / a
    return min(max(low, floor), ceiling), max(min(high, ceiling), floor)


def cdf_moments(release: Release, whole_numbers: bool = False) -> CdfMoments:
    """The sum and the mean of the clamped values of a released CDF, with their 95 % intervals (the module's
    docstring says what each holds). ``whole_numbers`` (public: the column holds whole numbers) with bins
    centred on whole numbers (:func:`~dpgui.core.quantiles.whole_number_step` w): a bin's values are w whole
    numbers around its midpoint, so binning moves a value by at most (w − 1)/2 (0 for w = 1), values outside the
    bounds counting as the nearest whole number inside. Post-processing of public values. O(K̄)."""
    plan = release.plan
    k = plan.shape.bins
    lows, highs = release.bin_edges()
    mids = (lows + highs) / 2.0
    width = float(highs[0] - lows[0])
    step = whole_number_step(release.lower, release.upper, k) if whole_numbers else None
    half = width / 2.0 if step is None else (step - 1) / 2.0
    counts = np.diff(np.concatenate(([0.0], np.asarray(release.cumulative, dtype=float))))
    estimate = np.asarray(release.estimate, dtype=float)[:k]
    factor = margin_factor(plan)
    alpha = _sum_weights(mids)
    last = np.zeros(k)
    last[-1] = 1.0  # C_K, the number of values
    gram = functional_covariances(plan, [alpha, last], release.padding_known)
    var_s, cov, var_c = float(gram[0, 0]), float(gram[0, 1]), float(gram[1, 1])
    count, count_estimate = release.values_total, float(estimate[-1])
    centre, value = float(alpha @ estimate), float(mids @ counts)

    def edge_bound(side: int) -> float:
        """The one-sided 97.5 % bound on the sum with every value at its bin's lowest (side −1) or highest (+1)
        possible value, ``S + side·half·C``: below it (above it) with probability ≥ 97.5 %."""
        shift = side * half
        spread = math.sqrt(max(var_s + 2 * shift * cov + shift * shift * var_c, 0.0))
        return centre + shift * count_estimate + side * factor * spread

    margin = factor * math.sqrt(var_s)
    total = MomentEstimate(value, min(centre - margin, value), max(centre + margin, value),
                           min(edge_bound(-1), value), max(edge_bound(1), value), half * max(count, 0.0))
    if count <= 0:
        return CdfMoments(count, total, None, width, half)
    mean_value = value / count
    low, high = _ratio_interval(centre, count_estimate, var_s, cov, var_c, factor, float(mids[0]), float(mids[-1]))
    low, high = min(low, mean_value), max(high, mean_value)
    mean = MomentEstimate(mean_value, low, high, max(low - half, release.lower), min(high + half, release.upper), half)
    return CdfMoments(count, total, mean, width, half)


@dataclass(frozen=True)
class GroupSummary:
    """One group of a grouped CDF: its label, mean and sum (:func:`cdf_moments`) and median
    (:func:`dpgui.core.quantiles.quantiles`, its interval ≥ 95 % as there)."""

    label: str
    moments: CdfMoments
    median: Quantile | None  # None when the group's released number of values is not positive


def group_summaries(labels: Sequence[str], releases: Sequence[Release],
                    whole_numbers: bool = False) -> list[GroupSummary]:
    """Mean, sum and median with their intervals for every group of a grouped release, in the given order
    (each interval holds for its own group and statistic; ``whole_numbers`` as for :func:`cdf_moments` and
    :func:`~dpgui.core.quantiles.quantiles`). O(groups × K̄)."""
    out = []
    for label, group in zip(labels, releases):
        median = quantiles(group, [0.5], whole_numbers)[0] if group.values_total > 0 else None
        out.append(GroupSummary(label, cdf_moments(group, whole_numbers), median))
    return out
