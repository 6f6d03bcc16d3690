"""Noisy counts of the categories of one column: each public category's count plus discrete Laplace
noise (the exact sampler of Canonne, Kamath & Steinke 2020, :mod:`dpgui.core.noise`), pure ε-DP.

The categories are public (stated by the officer, never read from the data); a row whose value is
none of them, or missing, counts in :data:`OTHER`, so the node list never depends on the data.
Sensitivity (L1): one person holds ``records_per_person`` rows; under ``change`` each of them may move
from one category to another (2 counts change by 1), under ``addremove`` each may be added or removed
(1 count changes by 1). Scale = sensitivity / ε. Cost O(categories); no I/O, any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpgui.core.noise import RandomSource, discrete_laplace_variance, laplace_scale, sample_discrete_laplace
from dpgui.core.plan import PrivacySpec
from dpgui.errors import ParameterError
from dpgui.vocabulary import Neighbours, Noise

__all__ = ["OTHER", "CountsPlan", "CountsRelease", "release_counts"]

#: The last category: every row whose value is none of the stated categories, or missing.
OTHER = "(other or missing)"


@dataclass(frozen=True)
class CountsPlan:
    """The public plan: the stated categories (in the released order, :data:`OTHER` last) and the privacy."""

    categories: tuple[str, ...]
    privacy: PrivacySpec

    def __post_init__(self) -> None:
        if not self.categories or len(set(self.categories)) != len(self.categories) or OTHER in self.categories:
            raise ParameterError("the categories must be one or more different names",
                                 f"state each category once (not {OTHER!r}, which dpgui adds)")

    @property
    def noise(self) -> Noise:
        return Noise.LAPLACE

    @property
    def labels(self) -> tuple[str, ...]:
        """The released categories: the stated ones, then :data:`OTHER`."""
        return self.categories + (OTHER,)

    @property
    def sensitivity(self) -> int:
        per_row = 2 if self.privacy.neighbours == Neighbours.CHANGE else 1
        return per_row * self.privacy.records_per_person

    @property
    def scale(self) -> Fraction:
        return laplace_scale(self.sensitivity, self.privacy.epsilon)

    @property
    def std_error(self) -> float:
        """The standard deviation of each released count's noise (records)."""
        return float(np.sqrt(discrete_laplace_variance(float(self.scale))))

    def ledger_charge(self) -> tuple[float, float, float]:
        """(ε, 0, ε²/2): pure ε-DP is ε²/2-zCDP (Bun & Steinke 2016), the CDF's rule for Laplace noise."""
        epsilon = self.privacy.epsilon
        return epsilon, 0.0, epsilon * epsilon / 2.0

    def to_json(self) -> dict[str, Any]:
        return {"categories": list(self.categories), "epsilon": self.privacy.epsilon,
                "neighbours": self.privacy.neighbours, "records_per_person": self.privacy.records_per_person}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CountsPlan:
        return cls(tuple(str(c) for c in data["categories"]),
                   PrivacySpec(float(data["epsilon"]), Neighbours(str(data["neighbours"])), int(data["records_per_person"])))


@dataclass(frozen=True, eq=False)
class CountsRelease:
    """The released (noisy, public) count of each of ``plan.labels``; ``secure``: noise from the OS."""

    plan: CountsPlan
    counts: np.ndarray
    secure: bool

    @property
    def levels(self) -> tuple[np.ndarray]:
        """The released values as the ledger's digest takes them (one level)."""
        return (self.counts,)


def release_counts(true_counts: np.ndarray, plan: CountsPlan, source: RandomSource) -> CountsRelease:
    """Each count plus discrete Laplace noise of the plan's scale. ``true_counts``: CONFIDENTIAL, one per
    ``plan.labels``; only the noisy counts leave. O(categories)."""
    counts = np.asarray(true_counts, dtype=np.int64)
    if counts.shape != (len(plan.labels),):
        raise ParameterError(f"{counts.size} counts for {len(plan.labels)} categories",
                             "give one count per category, the other values last")
    noisy = counts + sample_discrete_laplace(source, plan.scale, counts.size)
    return CountsRelease(plan, noisy.astype(np.int64), bool(source.secure))
