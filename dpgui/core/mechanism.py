"""The release: noise the tree, estimate, make consistent (DESIGN.md §1–3).

Only :func:`noisy_tree` reads the confidential counts; everything after it is post-processing of
public values. Noise is exact discrete Laplace from :mod:`dpgui.core.noise`; a release drawn
from a seeded (non-cryptographic) source is marked ``secure = False`` and must never be published.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from dpgui.core.consistency import make_consistent
from dpgui.core.estimators import covering_estimate, gls_estimate
from dpgui.core.noise import RandomSource, sample_discrete_laplace_levels
from dpgui.core.plan import Plan
from dpgui.core.projection import prefix_variances
from dpgui.errors import ParameterError

CONSISTENCY_METHODS = ("l2", "l1", "none")


def noisy_tree(counts: np.ndarray, plan: Plan, source: RandomSource) -> list[np.ndarray | None]:
    """The released node counts per level (root first): the only step that sees the data.

    Root: exact N under the change model; noised or not released under add/remove. Levels
    with zero budget are not released (``None``). Noise: exact integer discrete Laplace at the
    plan's rational scales. O(#nodes).
    """
    counts = np.asarray(counts)
    if counts.shape != (plan.shape.bins,):
        raise ParameterError(
            f"histogram has {counts.size} bins but the plan has {plan.shape.bins}", "plan with the histogram's K"
        )
    return add_noise(plan, plan.shape.level_counts(counts.astype(np.int64)), source)


def add_noise(plan: Plan, true_levels: Sequence[np.ndarray], source: RandomSource) -> list[np.ndarray | None]:
    """Released levels from true node counts per level: noised, exact (public root) or None."""
    noised = [lvl for lvl, scale in enumerate(plan.scales) if scale is not None]
    noise = sample_discrete_laplace_levels(
        source, [plan.scales[lvl] for lvl in noised], [true_levels[lvl].size for lvl in noised]
    )
    out: list[np.ndarray | None] = [None] * (plan.shape.height + 1)
    for lvl, z in zip(noised, noise):
        out[lvl] = true_levels[lvl] + z
    if plan.privacy.root_public:
        out[0] = np.array(true_levels[0], copy=True)
    return out


def estimate_cumulative(plan: Plan, levels: Sequence[np.ndarray | None]) -> np.ndarray:
    """Unbiased Ĉ_1..Ĉ_K from released levels with the plan's estimator; Ĉ_K = N if N is public."""
    if plan.estimator == "covering":
        estimate = covering_estimate(plan.shape, levels)
    else:
        estimate = gls_estimate(plan.shape, levels, plan.level_variances())
    if plan.privacy.root_public:
        estimate[-1] = float(levels[0][0])  # type: ignore[index]
    return estimate


@dataclass(frozen=True)
class Release:
    """A released CDF: public values only (the true counts are not kept here)."""

    plan: Plan
    lower: float
    upper: float
    consistency: str
    cumulative: np.ndarray  # final cumulative counts C_1..C_K (int64 unless consistency = none)
    total: float  # N: public (change) or released estimate (add/remove)
    estimate: np.ndarray  # unbiased Ĉ before consistency
    std_error: np.ndarray  # exact standard error of each Ĉ_j (before consistency)
    levels: tuple[np.ndarray | None, ...]  # released noisy node counts, root first
    secure: bool

    @property
    def cdf(self) -> np.ndarray:
        return self.cumulative / self.total if self.total > 0 else np.zeros(self.cumulative.size)

    def bin_edges(self) -> tuple[np.ndarray, np.ndarray]:
        k = self.plan.shape.bins
        edges = self.lower + (self.upper - self.lower) * np.arange(k + 1) / k
        edges[-1] = self.upper
        return edges[:-1], edges[1:]


def release_from_levels(
    plan: Plan, levels: Sequence[np.ndarray | None], lower: float, upper: float, consistency: str, secure: bool,
    std_error: np.ndarray | None = None,
) -> Release:
    """Post-process released levels into a :class:`Release`.

    ``std_error`` (= √prefix_variances(plan)) depends only on the plan; pass it when releasing
    many times with one plan (simulation) to skip recomputing it, O(K·h) per call.
    """
    if consistency not in CONSISTENCY_METHODS:
        raise ParameterError(f"unknown consistency {consistency!r}", "use l2, l1 or none")
    estimate = estimate_cumulative(plan, levels)
    if plan.privacy.root_public:
        total: float = float(levels[0][0])  # type: ignore[index]
    else:
        total = float(max(0, int(np.floor(estimate[-1] + 0.5))))
    final = make_consistent(estimate, int(total), consistency)
    if std_error is None:
        std_error = np.sqrt(prefix_variances(plan))
    return Release(plan, lower, upper, consistency, final, total, estimate, std_error, tuple(levels), secure)


def release(
    counts: np.ndarray, plan: Plan, source: RandomSource, lower: float = 0.0, upper: float = 1.0, consistency: str = "l2"
) -> Release:
    """Noise, estimate and make consistent: a complete ε-DP release of the histogram's CDF."""
    if consistency not in CONSISTENCY_METHODS:
        raise ParameterError(f"unknown consistency {consistency!r}", "use l2, l1 or none")
    levels = noisy_tree(counts, plan, source)
    return release_from_levels(plan, levels, lower, upper, consistency, bool(source.secure))
