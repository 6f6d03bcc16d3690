"""Seeded releases of a release plan on its data, each part's error measured against its projection: what
``dpgui simulate --spec`` prints. For studying a plan only: the noise is seeded (insecure), nothing is spent,
nothing is written or published, and only error figures leave (never a count).

For each part, every trial releases it with its own plan at its share of the budget through its statistic's
own release code (:meth:`~dpgui.workspace.plan_parts.common.PartCodec.trial_errors`) and keeps the errors of
the published values its 95 % margin is of (a CDF: the worst CDF point's estimate; a CDF for each group: that
point in every group; counts: every category; a hierarchy: every count of its worst level). The projection is
the standard error the margin states, SE = (margin − 1) / 2.2 (:func:`dpgui.core.quantiles.noise_margin`). The
simulated figure is measured the same way, on the worse side of the errors, √(2·max(E[e²; e > 0], E[e²; e < 0]))
(the root-mean-square error when the errors are symmetric), with its standard error over the trials (the delta
method on the per-trial means). A part "matches" when the two differ by at most 4 such standard errors.

A hierarchy's projection is made at public or assumed counts (never the data's own), so its simulation on the
data may differ where the clamp at zero or the consistency step acts on small counts; the output says so.

Confidential data: the counts are read once (as a release reads them) and stay here. Cost: trials × each part's
release (milliseconds each for a CDF of K = 500). No Qt; any thread.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpgui.core.noise import SeededRandom
from dpgui.data.source import DataSource
from dpgui.workspace.plan_parts import part_codec
from dpgui.workspace.plan_split import PlanSplit
from dpgui.workspace.release_plan import PlanItem

__all__ = ["PartSimulation", "simulate_plan"]


@dataclass(frozen=True)
class PartSimulation:
    """One part's simulated error beside its projection (records): ``projected_se`` (from its 95 % margin),
    ``simulated_se`` and ``se_of_se`` (its standard error over the trials), the number of errors measured."""

    title: str
    projected_se: float
    simulated_se: float
    se_of_se: float
    errors: int

    def within(self, standard_errors: float) -> bool:
        """Does the simulation match the projection within ``standard_errors`` of its own standard error?"""
        return abs(self.simulated_se - self.projected_se) <= standard_errors * self.se_of_se


def worse_side_se(errors: np.ndarray) -> tuple[float, float]:
    """The worse-side standard error of ``errors`` (trials × values) and its standard error over the trials:
    √(2·max(mean over, mean under)) with over/under the per-trial means of e² on each side. O(errors)."""
    squared = errors.astype(np.float64) ** 2
    over = np.where(errors > 0, squared, 0.0).mean(axis=1)
    under = np.where(errors < 0, squared, 0.0).mean(axis=1)
    side = over if over.mean() >= under.mean() else under
    se = math.sqrt(2 * float(side.mean()))
    trials = side.size
    spread = float(side.std(ddof=1)) / math.sqrt(trials) if trials > 1 else math.inf
    return se, (spread / se if se > 0 else spread)  # d√(2m) = dm / √(2m)


def simulate_plan(items: Sequence[PlanItem], split: PlanSplit, data: DataSource, trials: int,
                  seed: int) -> list[PartSimulation]:
    """``trials`` seeded releases of every part of ``items`` (planned at their shares: ``split``) on ``data``,
    each part's error beside its projection (module docstring). The counts are read once per part."""
    results = []
    for i, (item, planned) in enumerate(zip(items, split.parts)):
        statistic = item.part.statistic
        spend = item.spend_of(planned.planned.plan)
        counts = statistic.count(data, spend)  # CONFIDENTIAL: stays here
        codec = part_codec(statistic.kind)
        random = SeededRandom(seed + 7919 * i)
        errors = np.stack([codec.trial_errors(spend, counts, planned.planned, random) for _ in range(trials)])
        simulated, spread = worse_side_se(errors)
        projected = max(planned.margin95 - 1.0, 0.0) / 2.2
        results.append(PartSimulation(item.title, projected, simulated, spread, int(errors.size)))
    return results
