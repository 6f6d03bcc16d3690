"""The product's one stated error: the **95 % margin**, in records.

Every error figure the window, the CLI (text and ``--json``) and the PDF state is a 95 % margin,
``noise_margin(SE) = 2.2·SE + 1`` (:func:`dpgui.core.quantiles.noise_margin`; a ≥ 95 % bound for the
discrete Laplace and Gaussian noise of the releases, checked by exact computation in the tests), named
:data:`MARGIN_NAME`:

* a CDF plan: :func:`cdf_margins` — the margin at the CDF point with the largest standard error
  ("at the worst point") and at the root-mean-square standard error over the noised points ("on
  average"), of the unbiased estimate before consistency (:func:`dpgui.core.planner.margin95`);
* a hierarchy plan: :attr:`dpgui.core.hierarchy.LevelProjection.margin95` per level, of the count
  actually released (clamped or consistent) at public or assumed counts
  (:func:`dpgui.core.hierarchy_errors.plan_errors`).

Words: :func:`dpgui.formatting.format_margin_records` and :func:`dpgui.formatting.cdf_margin_words`.
Qt-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpgui.core.plan import Plan
from dpgui.core.planner import margin95
from dpgui.vocabulary import AccuracyWhere

__all__ = ["MARGIN_NAME", "MARGIN_MEANING", "CdfMargins", "cdf_margins"]

#: The one name of the stated error, wherever it is shown.
MARGIN_NAME = "95 % margin"
#: What it means, in one sentence a non-programmer can read.
MARGIN_MEANING = ("the 95 % margin: the published count is within ± this many records of the true count in at least "
                  "95 of 100 releases")


@dataclass(frozen=True)
class CdfMargins:
    """A CDF plan's stated errors, records: ``worst`` at the least precise CDF point, ``average`` at the
    root-mean-square standard error over the noised points."""

    worst: float
    average: float

    def to_json(self) -> dict[str, Any]:
        return {"worst": self.worst, "average": self.average}


def cdf_margins(plan: Plan) -> CdfMargins:
    """The 95 % margins the product states for a CDF plan (the window's plan summary and plots, ``dpgui
    plan`` and ``simulate``, the PDF): ``margin95(plan, 'every')`` and ``margin95(plan, 'average')``.
    Exact; O(K̄ + h³)."""
    return CdfMargins(margin95(plan, AccuracyWhere.EVERY), margin95(plan, AccuracyWhere.AVERAGE))

