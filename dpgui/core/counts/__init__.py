"""Noisy counts of the categories of one column: each public category's count plus discrete Laplace
noise (the exact sampler of Canonne, Kamath & Steinke 2020, through the noise seam
:data:`dpgui.core.noise_mechanisms.LAPLACE`), pure ε-DP.

The categories are public (stated by the officer, typed or from a file, never read from the data) and
they are the whole list: as for a hierarchy's node list, a row whose value is none of them is refused
before anything is spent (a missing value is refused by the data layer's counting,
:meth:`dpgui.data.source.DataSource.path_counts`), so the released rows never depend on the data.

Sensitivity (L1): one person holds ``records_per_person`` rows; under ``change`` each of them may move
from one category to another (2 counts change by 1), under ``addremove`` each may be added or removed
(1 count changes by 1). Scale t = laplace_scale(Δ₁, ε) ≥ Δ₁/ε, so the release is Δ₁/t ≤ ε-DP.
Cost O(categories); no I/O, any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpgui.core.noise import RandomSource
from dpgui.core.noise_mechanisms import LAPLACE, Sensitivity
from dpgui.core.plan import PrivacySpec
from dpgui.errors import ParameterError
from dpgui.vocabulary import Neighbours, Noise

__all__ = ["MARGIN_CONFIDENCE", "CountsPlan", "CountsRelease", "release_counts"]

#: The confidence of the stated margin of error of each count.
MARGIN_CONFIDENCE = 0.95


@dataclass(frozen=True)
class CountsPlan:
    """The public plan: the stated categories (in the released order) and the privacy (ε; δ = 0)."""

    categories: tuple[str, ...]
    privacy: PrivacySpec

    def __post_init__(self) -> None:
        if not self.categories or len(set(self.categories)) != len(self.categories) or "" in self.categories:
            raise ParameterError("the categories must be one or more different, non-empty names",
                                 "state each category once")
        if self.privacy.delta != 0:
            raise ParameterError("the counts of one column are released with Laplace noise, which spends no δ",
                                 "set δ = 0")
        problem = LAPLACE.scale_problem(self.scale)
        if problem is not None:
            raise ParameterError(f"ε = {self.privacy.epsilon:g} is too small for these counts: {problem}",
                                 "use a larger ε")

    @property
    def noise(self) -> Noise:
        return Noise.LAPLACE

    @property
    def labels(self) -> tuple[str, ...]:
        """The released categories: the stated ones, in their order."""
        return self.categories

    @property
    def sensitivity(self) -> int:
        """Δ₁: how many counts' worth one person can move (2 per record under change, 1 under add/remove)."""
        return self.sensitivities.l1

    @property
    def sensitivities(self) -> Sensitivity:
        """One person's L records: under change (L, −L) on two counts at most (Δ₁ = 2L, Δ₂² = 2L²), under
        add/remove L on one count (Δ₁ = L, Δ₂² = L²)."""
        records = self.privacy.records_per_person
        moved = 2 if self.privacy.neighbours == Neighbours.CHANGE else 1
        return Sensitivity(moved * records, moved * records * records)

    @property
    def scale(self) -> Fraction:
        """The exact discrete Laplace scale t the noise is drawn at (rounded up from Δ₁/ε)."""
        return LAPLACE.scale(self.sensitivities, self.privacy.epsilon)

    @property
    def std_error(self) -> float:
        """The standard deviation of each released count's noise (records)."""
        return float(np.sqrt(LAPLACE.variance(float(self.scale))))

    @property
    def margin(self) -> int:
        """The 95 % margin of error of each released count (records): the smallest whole m with
        P(|noise| ≤ m) ≥ 95 %. Known before anything is spent (it depends on ε and the model only)."""
        return LAPLACE.half_width(self.scale, 1.0 - MARGIN_CONFIDENCE)

    def ledger_charge(self) -> tuple[float, float, float]:
        """(ε, 0, ε²/2) by the one rule of every plan (:func:`dpgui.core.noise_mechanisms.ledger_charge`): pure
        ε-DP is ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4); the noise spends Δ₁/t ≤ ε (t rounded up), so the
        planned figures are charged."""
        charge = LAPLACE.charge(self.privacy.epsilon, 0.0, LAPLACE.spent(self.sensitivities, [self.scale]))
        assert charge.rho is not None  # a per-count noise is charged a ρ (ledger_charge)
        return charge.epsilon, charge.delta, charge.rho

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
        raise ParameterError(f"{counts.size} counts for {len(plan.labels)} categories", "give one count per category")
    noise = LAPLACE.sample(source, [plan.scale], [counts.size])[0]
    return CountsRelease(plan, (counts + noise).astype(np.int64), bool(source.secure))
