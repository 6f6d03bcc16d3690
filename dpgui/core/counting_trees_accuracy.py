"""How accurate counting on trees is (Ghazi et al. 2023): the α-mRMSE of the multiplicative mechanism
(:mod:`dpgui.core.counting_trees`) and of the Gaussian baseline, projected for the planner or simulated.

Ghazi, Kamath, Kumar, Manurangsi & Wu, "On Differentially Private Counting on Trees" (ICALP 2023).
Qt-free and I/O-free; numpy only. The tree's shape and counts are given as in
:mod:`dpgui.core.counting_trees` (``levels`` root first, ``parents`` per level below the root).

Error measure (Definition 1.4)
------------------------------
RMSE_α(z̃, z) = sqrt(E[max(|z̃ − z| − α z, 0)²]); α-mRMSE = max over nodes (and, in the paper, over
data). :func:`alpha_mrmse` is the empirical version over trials for one data set.

Gaussian baseline (Corollary 2.7)
---------------------------------
Each level ℓ gets discrete-Gaussian noise of variance parameter σ_ℓ² = gaussian_sigma2(Δ₂², ρ_ℓ)
(uniform ρ_ℓ = ρ / (noised levels) by default; under ``change`` the root is public and not noised), so
the release is ρ-zCDP and (ε, δ)-DP (CKS conversion, :attr:`PrivacySpec.rho`). Its α-RMSE at a node of
count z is exact: E[max(|Z| − α z, 0)²] summed over the discrete Gaussian pmf; the worst case over data
(z = 0) is the variance itself, so the baseline's α-mRMSE is max_ℓ sqrt(Var Z_ℓ), independent of α
unless the prior shows that no level has a small count.

Honest constants
----------------
The thresholds are huge. At α = 0.5, ε = 1, δ = 1e-6, η = 0.05, one record per person, ``change``, and
a 5-level tree (1, 10, 100, 1000, 10⁵): τ_min = 3.4·10⁵ records (Corollary 4.7's closed form: 1.1·10⁶),
so every node below ~τ_min is released as ⌊α τ_min⌋ = 169,006 and the α-mRMSE is 1.7·10⁵ records,
while the Gaussian baseline's is 12.8 records. The paper's result is asymptotic in the depth d
(log d against √d): the Gaussian baseline's α-mRMSE grows like √d (≈ 2·10⁵ at d = 10⁹ levels) and
the multiplicative one's like log d, so they cross only beyond ~10⁹ levels. For trees of 2–5 levels
the Gaussian baseline wins by four orders of magnitude, and :func:`projected_alpha_mrmse` shows it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpgui.core.counting_trees import (
    DEFAULT_ETA, MultiplicativeParams, check_alpha_eta, check_level_sizes, check_tree, multiplicative_params,
    release_multiplicative,
)
from dpgui.core.noise import RandomSource, SeededRandom
from dpgui.core.noise_moments import discrete_gaussian_pmf
from dpgui.core.noise_mechanisms import GAUSSIAN
from dpgui.core.plan import PrivacySpec
from dpgui.errors import DataError, ParameterError
from dpgui.vocabulary import Noise

__all__ = [
    "ALPHA_MECHANISMS",
    "alpha_rmse",
    "alpha_mrmse",
    "gaussian_baseline_sigma2",
    "release_gaussian_baseline",
    "gaussian_alpha_rmse",
    "AlphaLevelFigure",
    "AlphaMRMSEProjection",
    "projected_alpha_mrmse",
    "simulate_alpha_mrmse",
    "recommend_alpha_mechanism",
]

ALPHA_MECHANISMS = (Noise.GAUSSIAN, Noise.MULTIPLICATIVE)


# ----------------------------------------------------------------------------------------
# Error measure
# ----------------------------------------------------------------------------------------


def _excess(estimates: np.ndarray, truth: np.ndarray, alpha: float) -> np.ndarray:
    est = np.asarray(estimates, dtype=np.float64)
    tru = np.asarray(truth, dtype=np.float64)
    if est.ndim == 1:
        est = est[None, :]
    if est.ndim != 2 or tru.ndim != 1 or est.shape[1] != tru.shape[0]:
        raise ParameterError(
            f"estimates of shape {np.shape(estimates)} do not match {tru.shape[0]} true counts",
            "pass estimates as trials × nodes and truth as one count per node")
    if not math.isfinite(alpha) or alpha < 0:
        raise ParameterError(f"α must be a number ≥ 0, got {alpha!r}", "use e.g. α = 0.5")
    return np.maximum(np.abs(est - tru[None, :]) - alpha * tru[None, :], 0.0)


def alpha_rmse(estimates: np.ndarray, truth: np.ndarray, alpha: float) -> np.ndarray:
    """Per node RMSE_α = sqrt(mean over trials of max(|ẑ − z| − α z, 0)²) (Definition 1.4), records.

    ``estimates``: trials × nodes (or one trial, a vector); ``truth``: the nodes' true counts ≥ 0.
    """
    ex = _excess(estimates, truth, float(alpha))
    return np.asarray(np.sqrt(np.mean(ex * ex, axis=0)))


def alpha_mrmse(estimates: np.ndarray, truth: np.ndarray, alpha: float) -> float:
    """α-mRMSE of Definition 1.4 for one data set: the largest per-node RMSE_α (records), the
    expectation taken as the mean over the trials (rows of ``estimates``). O(trials × nodes)."""
    per_node = alpha_rmse(estimates, truth, alpha)
    return float(per_node.max()) if per_node.size else 0.0


# ----------------------------------------------------------------------------------------
# Gaussian baseline (Corollary 2.7)
# ----------------------------------------------------------------------------------------


def gaussian_baseline_sigma2(level_sizes: Sequence[int], privacy: PrivacySpec,
                             level_rhos: Sequence[float] | None = None) -> tuple[Fraction | None, ...]:
    """σ_ℓ² per level 0..L (None where not noised: the root under ``change``): σ_ℓ² = gaussian_sigma2(Δ₂², ρ_ℓ),
    ρ_ℓ = ρ / (noised levels) unless ``level_rhos`` (one per level, summing to at most privacy.rho) is given."""
    sizes = check_level_sizes(level_sizes)
    rho = privacy.rho
    if rho is None:
        raise ParameterError("the Gaussian baseline needs δ > 0", "give a δ such as 1e-9")
    first = privacy.first_noised_level()
    if level_rhos is None:
        share = rho / (len(sizes) - first)
        rhos = [0.0] * first + [share] * (len(sizes) - first)
    else:
        rhos = [float(x) for x in level_rhos]
        if len(rhos) != len(sizes) or any(x < 0 for x in rhos) or sum(rhos) > rho * (1 + 1e-9):
            raise ParameterError(f"level ρ's {rhos} are not one per level, ≥ 0, summing to ≤ ρ = {rho:.4g}",
                                 "give one ρ_ℓ per level")
    out: list[Fraction | None] = []
    for j, x in enumerate(rhos):
        if j < first or x == 0:
            out.append(None)
            continue
        s2 = GAUSSIAN.scale(privacy.sensitivity, x)
        problem = GAUSSIAN.scale_problem(s2)
        if problem is not None:
            raise ParameterError(f"level {j} needs {problem}", "use a larger ε or δ")
        out.append(s2)
    return tuple(out)


def release_gaussian_baseline(levels_true: Sequence[np.ndarray], privacy: PrivacySpec, rng: RandomSource,
                              level_rhos: Sequence[float] | None = None) -> tuple[np.ndarray, ...]:
    """Corollary 2.7's baseline: every node's count plus discrete-Gaussian noise of its level (raw,
    not clamped; int64). The root under ``change`` is exact. ρ-zCDP, (ε, δ)-DP."""
    levels = [np.asarray(v, dtype=np.int64).reshape(-1) for v in levels_true]
    sig = gaussian_baseline_sigma2([v.size for v in levels], privacy, level_rhos)
    out = []
    for v, s2 in zip(levels, sig):
        out.append(v.copy() if s2 is None else v + GAUSSIAN.sample(rng, [s2], [v.size])[0])
    return tuple(out)


def gaussian_alpha_rmse(counts: np.ndarray, sigma2: float, alpha: float) -> np.ndarray:
    """Exact RMSE_α of count + discrete-Gaussian(σ²) noise at each count z ≥ 0:
    sqrt(Σ_k pmf(k) max(|k| − α z, 0)²), k over |k| ≤ 40σ + 50 (records)."""
    z = np.asarray(counts, dtype=np.float64).reshape(-1)
    half = int(math.ceil(40.0 * math.sqrt(float(sigma2)))) + 50
    k = np.arange(0, half + 1, dtype=np.float64)
    pmf = discrete_gaussian_pmf(k, float(sigma2))
    pmf[1:] *= 2.0  # |k| for k ≥ 1 has two values
    out = np.empty(z.size)
    for idx, zz in enumerate(z):
        ex = np.maximum(k - alpha * zz, 0.0)
        out[idx] = math.sqrt(float(np.dot(pmf, ex * ex)))
    return out


# ----------------------------------------------------------------------------------------
# Projections for the planner
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AlphaLevelFigure:
    """α-RMSE of a level: the largest over its nodes (records); ``nodes``: how many nodes."""

    level: int
    nodes: int
    alpha_rmse: float


@dataclass(frozen=True)
class AlphaMRMSEProjection:
    """Projected α-mRMSE (records) of one mechanism for the user's tree: per level and overall (max)."""

    mechanism: Noise
    alpha: float
    levels: tuple[AlphaLevelFigure, ...]
    alpha_mrmse: float
    method: str
    params: MultiplicativeParams | None = None
    note: str = ""


def projected_alpha_mrmse(level_sizes: Sequence[int], privacy: PrivacySpec, alpha: float, mechanism: str,
                          prior_levels: Sequence[np.ndarray] | None = None, *, eta: float = DEFAULT_ETA) -> AlphaMRMSEProjection:
    """Projected α-mRMSE of ``mechanism`` ("gaussian" | "multiplicative") per level (records).

    * gaussian — exact: without a prior, the worst case over data (a node of count 0 on every level):
      sqrt(Var) of the level's discrete Gaussian; with ``prior_levels``, the exact RMSE_α at the level's
      smallest prior count (RMSE_α decreases with the count).
    * multiplicative — closed form on the success event (probability ≥ 1 − η per node,
      :mod:`dpgui.core.counting_trees`): a node of count w is released within α w if w ≥ (1−β)τ_1, else as ⌊α τ_min⌋ ≥ w,
      so its excess is max(⌊α τ_min⌋ − (1+α) w, 0). Without a prior the worst case (w = 0) is
      ⌊α τ_min⌋ on every level. :func:`simulate_alpha_mrmse` measures either mechanism on a tree by a
      seeded simulation (the tests check the closed form against it).
    """
    sizes = check_level_sizes(level_sizes)
    if mechanism not in ALPHA_MECHANISMS:
        raise ParameterError(f"unknown mechanism {mechanism!r}", "use 'gaussian' or 'multiplicative'")
    a, e = check_alpha_eta(alpha, eta)
    mins: list[float] | None = None
    if prior_levels is not None:
        pl = [np.asarray(v, dtype=np.float64).reshape(-1) for v in prior_levels]
        if tuple(v.size for v in pl) != sizes:
            raise DataError(f"the prior's level sizes {tuple(v.size for v in pl)} differ from {sizes}",
                            "use a prior with the same tree")
        mins = [float(v.min()) for v in pl]
    figures: list[AlphaLevelFigure] = []
    if mechanism == Noise.GAUSSIAN:
        sig = gaussian_baseline_sigma2(sizes, privacy)
        for j, (n, s2) in enumerate(zip(sizes, sig)):
            if s2 is None:
                val = 0.0
            elif mins is None:
                val = math.sqrt(GAUSSIAN.variance(float(s2)))
            else:
                val = float(gaussian_alpha_rmse(np.array([mins[j]]), float(s2), a)[0])
            figures.append(AlphaLevelFigure(j, n, val))
        method = ("closed form (exact, worst case over data: an empty node per level)" if mins is None
                  else "closed form (exact at each level's smallest prior count)")
        worst = max(f.alpha_rmse for f in figures)
        return AlphaMRMSEProjection(Noise.GAUSSIAN, a, tuple(figures), worst, method,
                                    note="discrete Gaussian per level, uniform ρ_ℓ (Corollary 2.7), unclamped")
    params = multiplicative_params(sizes, privacy, a, e)
    bz = math.floor(params.bucket_zero)
    for j, n in enumerate(sizes):
        if j == 0 and params.root_public:
            val = 0.0
        elif mins is None:
            val = float(bz)
        else:
            val = max(bz - (1 + a) * mins[j], 0.0)
        figures.append(AlphaLevelFigure(j, n, val))
    method = ("closed form on the success event (prob. ≥ 1 − η), worst case over data: an empty node"
              if mins is None else "closed form on the success event (prob. ≥ 1 − η) at each level's smallest prior count")
    worst = max(f.alpha_rmse for f in figures)
    note = (f"τ_min = {params.tau_min:.4g} records: nodes below ~{params.tau_min:.3g} are released as "
            f"{bz:,}; without the clip of Ghazi et al.'s Lemma 3.3 a failure (prob. ≤ η = {e:g}) is not bounded")
    return AlphaMRMSEProjection(Noise.MULTIPLICATIVE, a, tuple(figures), worst, method, params=params, note=note)


def simulate_alpha_mrmse(parents: Sequence[np.ndarray], levels_true: Sequence[np.ndarray], privacy: PrivacySpec,
                         alpha: float, mechanism: str, *, eta: float = DEFAULT_ETA, trials: int = 20,
                         seed: int = 0) -> AlphaMRMSEProjection:
    """Seeded simulation (SeededRandom, insecure: simulation only) of ``mechanism`` on a given tree:
    the empirical α-RMSE per level and α-mRMSE over ``trials`` releases."""
    pars, w = check_tree(parents, levels_true)
    sizes = tuple(v.size for v in w)
    a, e = check_alpha_eta(alpha, eta)
    rng = SeededRandom(seed)
    params = multiplicative_params(sizes, privacy, a, e) if mechanism == Noise.MULTIPLICATIVE else None
    runs: list[list[np.ndarray]] = [[] for _ in sizes]
    for _ in range(int(trials)):
        rel = (release_multiplicative(pars, w, params, rng) if params is not None
               else release_gaussian_baseline(w, privacy, rng))
        for j, v in enumerate(rel):
            runs[j].append(v)
    figures = tuple(AlphaLevelFigure(j, n, alpha_mrmse(np.vstack(runs[j]), w[j], a)) for j, n in enumerate(sizes))
    return AlphaMRMSEProjection(Noise(mechanism), a, figures, max(f.alpha_rmse for f in figures),
                                f"monte carlo ({int(trials)} trials, seed {seed})", params=params)


def recommend_alpha_mechanism(level_sizes: Sequence[int], privacy: PrivacySpec, alpha: float,
                              prior_levels: Sequence[np.ndarray] | None = None, *,
                              eta: float = DEFAULT_ETA) -> tuple[Noise, AlphaMRMSEProjection, AlphaMRMSEProjection]:
    """Both projections side by side and the mechanism with the lower projected α-mRMSE
    (ties go to the Gaussian baseline, whose guarantee has no failure event)."""
    g = projected_alpha_mrmse(level_sizes, privacy, alpha, Noise.GAUSSIAN, prior_levels, eta=eta)
    m = projected_alpha_mrmse(level_sizes, privacy, alpha, Noise.MULTIPLICATIVE, prior_levels, eta=eta)
    return (Noise.MULTIPLICATIVE if m.alpha_mrmse < g.alpha_mrmse else Noise.GAUSSIAN), g, m
