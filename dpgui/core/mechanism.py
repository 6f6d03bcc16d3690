"""The release: noise the tree, estimate, make consistent (docs/engine.md, "The engine's pipeline").

Only :func:`noisy_tree` reads the confidential counts; everything after it is post-processing of
public values. Noise is exact discrete Laplace or discrete Gaussian (the plan's ``noise``) from
:mod:`dpgui.core.noise`; a release drawn
from a seeded (non-cryptographic) source is marked ``secure = False`` and must never be published.

Missing values (docs/privacy-model.md "Missing values"): under ``change`` the tree's leaf K+1 holds the
number of missing values (``TreeShape.missing_leaf``), the public root is N = all rows, and the
release gives C_1..C_K (values ≤ each bin edge) and the missing count N − C_K; under ``addremove``
missing rows are dropped and N is the released total of the values. With a public value to count them
as (``PrivacySpec.impute``, change only) they are counted in that value's bin before the noise
(:func:`leaf_counts`): no leaf of their own, N = all rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence

import numpy as np

from dpgui.core.consistency import make_consistent
from dpgui.core.estimators import covering_estimate, gls_estimate
from dpgui.core.missing import impute_missing
from dpgui.core.noise import RandomSource
from dpgui.core.plan import Plan
from dpgui.core.projection import prefix_variances
from dpgui.core.tree import bin_edges
from dpgui.errors import ParameterError
from dpgui.vocabulary import CdfConsistency, Estimator


def noisy_tree(counts: np.ndarray, plan: Plan, source: RandomSource, missing: int = 0) -> list[np.ndarray | None]:
    """The released node counts per level (root first): the only step that sees the data.

    ``counts``: the K value-bin counts; ``missing``: the number of missing values, counted in the
    tree's missing leaf when it has one (change model) and otherwise dropped (add/remove: dropping a
    record is a neighbour). Root: exact N (all rows) under the change model; noised or not released
    under add/remove. Levels with zero budget are not released (``None``). Noise: exact integer
    discrete Laplace at the plan's rational scales, or discrete Gaussian at its rational σ². O(#nodes).
    """
    counts = np.asarray(counts)
    if counts.shape != (plan.shape.bins,):
        raise ParameterError(
            f"histogram has {counts.size} bins but the plan has {plan.shape.bins}", "plan with the histogram's K"
        )
    if isinstance(missing, bool) or not isinstance(missing, (int, np.integer)) or missing < 0:
        raise ParameterError(f"the number of missing values must be a whole number ≥ 0, got {missing!r}",
                             "pass the histogram's n_missing")
    if plan.privacy.root_public and not plan.shape.missing_leaf and missing:
        # A change-model tree without the missing leaf (older project files): dropping the missing
        # values would change the public N. Plans made now always have the leaf.
        raise ParameterError("this plan has no leaf for missing values, so they cannot be released under change",
                             "make the plan again (the tree then counts missing values in a leaf of their own)")
    return add_noise(plan, plan.shape.level_counts(counts.astype(np.int64), int(missing)), source)


def add_noise(plan: Plan, true_levels: Sequence[np.ndarray], source: RandomSource) -> list[np.ndarray | None]:
    """Released levels from true node counts per level: noised, exact (public root) or None."""
    noised = [lvl for lvl, scale in enumerate(plan.scales) if scale is not None]
    noise = plan.mechanism.sample(source, [scale for scale in plan.scales if scale is not None],
                                  [true_levels[lvl].size for lvl in noised])
    out: list[np.ndarray | None] = [None] * (plan.shape.height + 1)
    for lvl, z in zip(noised, noise):
        out[lvl] = true_levels[lvl] + z
    if plan.privacy.root_public:
        out[0] = np.array(true_levels[0], copy=True)
    return out


def estimate_cumulative(plan: Plan, levels: Sequence[np.ndarray | None], padding_known: bool = True) -> np.ndarray:
    """Unbiased Ĉ_j for every real leaf j (1..K, or 1..K+1 with the missing leaf) from released levels
    with the plan's estimator; the last one is N if N is public. ``padding_known=False``: GLS as dpgui
    computed it before it used the padding zeros (to show a release made then as it was published)."""
    if plan.estimator is Estimator.COVERING:
        estimate = covering_estimate(plan.shape, levels)
    else:
        estimate = gls_estimate(plan.shape, levels, plan.level_variances(), padding_known)
    if plan.privacy.root_public:
        estimate[-1] = float(levels[0][0])  # type: ignore[index]
    return estimate


@dataclass(frozen=True)
class Release:
    """A released CDF: public values only (the true counts are not kept here).

    ``cumulative``, ``estimate`` and ``std_error`` have one entry per value bin (K). Under the change
    model ``total`` is N = all rows (public) and ``missing`` = N − C_K the released number of missing
    values; under add/remove missing rows were dropped (``missing`` is None) and ``total`` = C_K.
    """

    plan: Plan
    lower: float
    upper: float
    consistency: CdfConsistency
    cumulative: np.ndarray  # final cumulative counts C_1..C_K (int64 unless consistency = none)
    total: float  # N: public (change: all rows, missing included) or released estimate (add/remove)
    estimate: np.ndarray  # unbiased Ĉ before consistency
    std_error: np.ndarray  # exact standard error of each Ĉ_j (before consistency)
    levels: tuple[np.ndarray | None, ...]  # released noisy node counts, root first
    secure: bool
    missing: float | None = None  # released count of missing values (change); None: dropped or imputed
    #: GLS used the padding leaves as known zeros (every release dpgui makes); False: a release made
    #: before, recomputed from a project file with the estimator it was published with
    padding_known: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "consistency", CdfConsistency(self.consistency))

    @property
    def missing_rule(self) -> str:
        """``"bucket"`` (missing values counted in a noised leaf, N = all rows), ``"impute"`` (counted as
        ``plan.privacy.impute``, N = all rows) or ``"drop"``."""
        return self.plan.missing_rule

    @property
    def values_total(self) -> float:
        """The released number of non-missing values, C_K: the denominator of the values' CDF."""
        return float(self.cumulative[-1])

    @property
    def missing_std_error(self) -> float | None:
        """Standard error of the released missing count (that of Ĉ_K, since N is exact); None if dropped."""
        return None if self.missing is None else float(self.std_error[-1])

    @property
    def cdf(self) -> np.ndarray:
        """C_j / C_K: the CDF of the values (missing values are not values)."""
        n = self.values_total
        return self.cumulative / n if n > 0 else np.zeros(self.cumulative.size)

    def bin_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) edge of each value bin, column units: the edges the histogram counted with
        (:func:`~dpgui.core.tree.bin_edges`). O(K)."""
        edges = bin_edges(self.lower, self.upper, self.plan.shape.bins)
        return edges[:-1], edges[1:]


def release_from_levels(
    plan: Plan, levels: Sequence[np.ndarray | None], lower: float, upper: float, consistency: str, secure: bool,
    std_error: np.ndarray | None = None, padding_known: bool = True,
) -> Release:
    """Post-process released levels into a :class:`Release`.

    ``std_error`` (= √prefix_variances(plan)) depends only on the plan; pass it when releasing
    many times with one plan (simulation) to skip recomputing it, O(K·h) per call.
    ``padding_known=False`` recomputes a release made before GLS used the padding zeros as it was
    published (:attr:`Release.padding_known`).
    """
    if consistency not in tuple(CdfConsistency):
        raise ParameterError(f"unknown consistency {consistency!r}", "use l2, l1 or none")
    estimate = estimate_cumulative(plan, levels, padding_known)
    if plan.privacy.root_public:
        total: float = float(levels[0][0])  # type: ignore[index]
    else:
        total = float(max(0, int(np.floor(estimate[-1] + 0.5))))
    # Consistency over every real leaf: with the missing leaf, the last (= N) is C_{K+1} and C_K ≤ N.
    final = make_consistent(estimate, int(total), consistency)
    if std_error is None:
        std_error = np.sqrt(prefix_variances(plan, padding_known=padding_known))
    k = plan.shape.bins
    missing = float(total - final[k - 1]) if plan.shape.missing_leaf else None
    return Release(plan, lower, upper, CdfConsistency(consistency), final[:k], total, estimate[:k], np.asarray(std_error)[:k],
                   tuple(levels), secure, missing, padding_known)


def leaf_counts(counts: np.ndarray, plan: Plan, missing: int, lower: float, upper: float) -> tuple[np.ndarray, int]:
    """(value-bin counts, missing values left for the tree) as the plan's missing rule counts them: with
    ``plan.privacy.impute`` the missing values are added to the bin of that value on [lower, upper)
    (:func:`dpgui.core.missing.impute_missing`) and none are left; otherwise unchanged (the missing
    leaf, or dropped: :func:`noisy_tree`). Confidential in, confidential out. O(K)."""
    impute = plan.privacy.impute
    valid = isinstance(missing, (int, np.integer)) and not isinstance(missing, bool) and missing > 0
    if impute is None or not valid:  # nothing to impute (a bad count is refused by noisy_tree)
        return np.asarray(counts), missing
    return impute_missing(np.asarray(counts), int(missing), impute, lower, upper), 0


def release(
    counts: np.ndarray, plan: Plan, source: RandomSource, lower: float = 0.0, upper: float = 1.0,
    consistency: str = CdfConsistency.L2, missing: int = 0,
) -> Release:
    """Noise, estimate and make consistent: a complete ε-DP (Laplace) or (ε, δ)-DP (Gaussian) release
    of the histogram's CDF.

    ``missing``: the number of missing values (counted in the missing leaf under change, dropped
    under add/remove; see :func:`noisy_tree`; counted as ``plan.privacy.impute`` when it is given,
    :func:`leaf_counts`)."""
    if consistency not in tuple(CdfConsistency):
        raise ParameterError(f"unknown consistency {consistency!r}", "use l2, l1 or none")
    counts, missing = leaf_counts(counts, plan, missing, lower, upper)
    levels = noisy_tree(counts, plan, source, missing)
    return release_from_levels(plan, levels, lower, upper, consistency, bool(source.secure))
