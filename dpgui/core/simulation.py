"""Monte-Carlo projection of the error *after* consistency (which has no closed form).

Runs the real release pipeline on a public or synthetic histogram with a seeded, insecure
generator: for studying plans only, never for publishing. Memory O(K) per trial; time
O(trials · #nodes) plus consistency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpgui.core.mechanism import add_noise, leaf_counts, release_from_levels
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import Plan
from dpgui.core.projection import prefix_variances

NORMS = ("sq_l2", "l1", "l2", "linf")


def _norms(error: np.ndarray) -> tuple[float, float, float, float]:
    squared = float(np.dot(error, error))
    return squared, float(np.abs(error).sum()), math.sqrt(squared), float(np.abs(error).max())


@dataclass(frozen=True)
class SimulationResult:
    """Per-trial error norms of the final cumulative counts (``counts``) and of F = C/N (``cdf``)."""

    trials: int
    seed: int
    counts: dict[str, np.ndarray]
    cdf: dict[str, np.ndarray]

    @staticmethod
    def summary(per_trial: dict[str, np.ndarray]) -> dict[str, float]:
        """``mean_<norm>`` and its standard error ``se_<norm>`` over trials."""
        out: dict[str, float] = {}
        for name, values in per_trial.items():
            out[f"mean_{name}"] = float(values.mean())
            out[f"se_{name}"] = float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else math.nan
        return out

    def to_json(self) -> dict[str, Any]:
        return {"trials": self.trials, "seed": self.seed, "counts": self.summary(self.counts),
                "cdf": self.summary(self.cdf)}


def simulate(plan: Plan, counts: np.ndarray, trials: int, consistency: str, seed: int,
             n_missing: int = 0, lower: float = 0.0, upper: float = 1.0) -> SimulationResult:
    """Release ``trials`` times with seeded noise and measure each release against the truth.

    ``counts``: the K value-bin counts on [lower, upper); ``n_missing``: the missing values, counted in
    the tree's missing leaf when the plan has one (change model: N = all rows), in the bin of the plan's
    imputed value when it has one, and otherwise dropped, as a release does (docs/privacy-model.md, "Missing
    values"; :func:`dpgui.core.mechanism.leaf_counts`)."""
    counts, n_missing = leaf_counts(np.asarray(counts, dtype=np.int64), plan, n_missing, lower, upper)
    counts = np.asarray(counts, dtype=np.int64)
    truth = np.cumsum(counts).astype(np.float64)
    n = float(truth[-1])  # C_K, the denominator of the values' CDF
    true_levels = plan.shape.level_counts(counts, n_missing)
    source = SeededRandom(seed)
    std_error = np.sqrt(prefix_variances(plan))
    per_counts = np.empty((trials, len(NORMS)))
    per_cdf = np.empty((trials, len(NORMS)))
    for trial in range(trials):
        levels = add_noise(plan, true_levels, source)
        result = release_from_levels(plan, levels, 0.0, 1.0, consistency, secure=False, std_error=std_error)
        per_counts[trial] = _norms(result.cumulative - truth)
        per_cdf[trial] = _norms(result.cdf - (truth / n if n > 0 else 0.0))
    return SimulationResult(
        trials, seed,
        {name: per_counts[:, i] for i, name in enumerate(NORMS)},
        {name: per_cdf[:, i] for i, name in enumerate(NORMS)},
    )
