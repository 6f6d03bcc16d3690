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

* covering sum (Rameshwar, Tandon & Sharma 2024, eq. 5): each prefix adds a run of nodes per released level,
  so a node's weight is the sum of α over the prefixes whose run holds it; ``Var = Σ_l v_l Σ_nodes g²``;
* GLS (Hay et al. 2010; the BLUE): ``Var qᵀx̂ = Σ_v ‖P_v q‖²/λ_v + (qᵀ1)²/(K̄ λ_c)`` minus the known zeros'
  ``E(q)ᵀ Q E(q)``: the spectral form that :mod:`dpgui.core.projection` evaluates for prefixes (where only the
  boundary nodes count), here summed over every node because the weights q are spread over all leaves. The
  known-zero term is linear in q, so ``E(q) = Σ_j α_j E(j)``. (Linear algebra of its own: the projection module
  offers the variance of one prefix or one range, not of a functional over all of them.)

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
from dpgui.core.projection import _known_zero_basis, _known_zero_form, gls_eigenvalues, has_padding
from dpgui.core.quantiles import LATTICE_SLACK, Z_TAIL, Quantile, quantiles
from dpgui.vocabulary import Estimator

__all__ = ["NO_MEAN", "CdfMoments", "GroupSummary", "MomentEstimate", "cdf_moments", "functional_variance",
           "group_summaries", "margin_factor"]

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
    is not positive (:data:`NO_MEAN`). ``bin_width``: w, column units."""

    count: float
    sum: MomentEstimate
    mean: MomentEstimate | None
    bin_width: float


def _leaf_weights(alpha: np.ndarray, padded: int) -> np.ndarray:
    """q_i = Σ_{j>i} α_j over the K̄ leaves (prefix j holds leaves 0..j−1; α[j−1] is α_j)."""
    q = np.zeros(padded)
    q[:alpha.size] = np.cumsum(alpha[::-1])[::-1]
    return q


def functional_variance(plan: Plan, alpha: np.ndarray, padding_known: bool = True) -> float:
    """Exact Var(Σ_j α_j Ĉ_j), j = 1..len(α) ≤ leaves, of the plan's estimator (before consistency), counts² × α².

    Under a public root the last real leaf's prefix is N, published exactly: its weight adds no variance.
    ``padding_known``: as :func:`dpgui.core.projection.prefix_variances`. O(K̄)."""
    shape = plan.shape
    a = np.asarray(alpha, dtype=float).copy()
    if a.size > shape.leaves:
        raise ValueError("more prefix weights than real leaves")
    if plan.privacy.root_public and a.size == shape.leaves:
        a[-1] = 0.0
    variances = plan.level_variances()
    s = shape.leaves_per_node
    if plan.estimator is Estimator.COVERING:
        prefixes = np.arange(1, a.size + 1, dtype=np.int64)
        total, above = 0.0, None
        for level, known in enumerate(plan.released()):
            if not known:
                continue
            nodes = shape.nodes_at_level(level)
            end = prefixes // s[level]
            start = np.zeros_like(prefixes) if above is None else (prefixes // s[above]) * (s[above] // s[level])
            edges = np.bincount(start, a, nodes + 1) - np.bincount(end, a, nodes + 1)
            weights = np.cumsum(edges)[:nodes]
            if np.isfinite(variances[level]):
                total += float(variances[level]) * float(weights @ weights)
            above = level
        return total
    lam, lam_c = gls_eigenvalues(shape, variances)
    q = _leaf_weights(a, shape.padded_bins)
    total = 0.0
    for m in range(shape.height):
        child, b = s[m + 1], shape.branching[m]
        sums = q.reshape(-1, b, child).sum(axis=2)  # Q_c of every level-m node's children
        spread = float((sums * sums).sum()) / child - float((sums.sum(axis=1) ** 2).sum()) / (b * child)
        total += spread / float(lam[m])
    if np.isfinite(lam_c):
        total += float(q.sum()) ** 2 / (shape.padded_bins * lam_c)
    if padding_known and has_padding(shape):
        e = a @ _known_zero_basis(shape, np.arange(1, a.size + 1, dtype=np.int64))
        total -= float(e @ _known_zero_form(shape, lam, lam_c) @ e)
    return max(total, 0.0)


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


def cdf_moments(release: Release) -> CdfMoments:
    """The sum and the mean of the clamped values of a released CDF, with their 95 % intervals (the module's
    docstring says what each holds). Post-processing of public values. O(K̄)."""
    plan = release.plan
    k = plan.shape.bins
    lows, highs = release.bin_edges()
    mids = (lows + highs) / 2.0
    width = float(highs[0] - lows[0])
    counts = np.diff(np.concatenate(([0.0], np.asarray(release.cumulative, dtype=float))))
    estimate = np.asarray(release.estimate, dtype=float)[:k]
    factor = margin_factor(plan)
    last = np.zeros(k)
    last[-1] = 1.0

    def variance(alpha: np.ndarray) -> float:
        return functional_variance(plan, alpha, release.padding_known)

    def bounds(values: np.ndarray) -> tuple[float, float, float]:
        alpha = _sum_weights(values)
        centre = float(alpha @ estimate)
        return centre, factor * math.sqrt(variance(alpha)), float(values @ counts)

    count = release.values_total
    centre, margin, value = bounds(mids)
    low_centre, low_margin, _ = bounds(lows)
    high_centre, high_margin, _ = bounds(highs)
    total = MomentEstimate(value, min(centre - margin, value), max(centre + margin, value),
                           min(low_centre - low_margin, value), max(high_centre + high_margin, value),
                           width / 2.0 * max(count, 0.0))
    if count <= 0:
        return CdfMoments(count, total, None, width)
    mean_value = value / count
    alpha = _sum_weights(mids)
    var_s, var_c = variance(alpha), variance(last)
    cov = (var_s + var_c - variance(alpha - last)) / 2.0
    low, high = _ratio_interval(centre, float(estimate[-1]), var_s, cov, var_c, factor, float(mids[0]), float(mids[-1]))
    low, high = min(low, mean_value), max(high, mean_value)
    mean = MomentEstimate(mean_value, low, high, max(low - width / 2.0, release.lower),
                          min(high + width / 2.0, release.upper), width / 2.0)
    return CdfMoments(count, total, mean, width)


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
    (each interval holds for its own group and statistic). O(groups × K̄)."""
    out = []
    for label, group in zip(labels, releases):
        median = quantiles(group, [0.5], whole_numbers)[0] if group.values_total > 0 else None
        out.append(GroupSummary(label, cdf_moments(group), median))
    return out
