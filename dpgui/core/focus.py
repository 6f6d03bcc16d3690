"""Where do you need accuracy: a region of the range the plan is optimised for (docs/design.md, "Where do
you need accuracy").

The user names a region in the column's units ([a, b], or a preset: the lowest or highest 10 % of the
range, the middle 40–60 %); :func:`value_span` turns it into the CDF points that answer questions about
it, and :func:`focus_offer` plans for those points and says whether that is worth it: the focused plan
is offered when its exact error there is at least 10 % below the default plan's. Data-independent, as
all planning: only K, the public bounds, ε and the neighbour model are used, never a count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dpgui.core.plan import OBJECTIVES, Plan, PrivacySpec
from dpgui.core.planner import auto_plan, focus_error, focused_plan
from dpgui.core.projection import Span, check_span
from dpgui.core.tree import TreeShape, check_bins
from dpgui.errors import ParameterError

#: The focused plan is offered when it lowers the error in the region by at least this fraction.
WORTH_IT = 0.10

#: Named regions as fractions of the range [lower, upper]; "everywhere" is no focus (every CDF point).
PRESETS: dict[str, tuple[float, float] | None] = {
    "everywhere": None,
    "lower": (0.0, 0.1),
    "upper": (0.9, 1.0),
    "middle": (0.4, 0.6),
}


def parse_interval(text: str) -> tuple[float, float]:
    """``"LO:HI"`` (column units) as two finite numbers; ParameterError with the fix otherwise. O(1)."""
    parts = str(text).split(":")
    if len(parts) != 2:
        raise ParameterError(f"cannot read the region {text!r}", "give it as LO:HI in the column's units, e.g. 20:35")
    try:
        low, high = float(parts[0]), float(parts[1])
    except ValueError:
        raise ParameterError(f"the region {text!r} is not two numbers",
                             "give it as LO:HI in the column's units, e.g. 20:35") from None
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ParameterError(f"the region {text!r} is not two finite numbers", "give finite numbers, e.g. 20:35")
    return low, high


def preset_interval(name: str, lower: float, upper: float) -> tuple[float, float] | None:
    """The value interval of a preset (:data:`PRESETS`) on the range [lower, upper); None for "everywhere"."""
    if name not in PRESETS:
        raise ParameterError(f"unknown region {name!r}", "use " + ", ".join(PRESETS) + ", or LO:HI")
    fractions = PRESETS[name]
    if fractions is None:
        return None
    width = upper - lower
    return lower + fractions[0] * width, lower + fractions[1] * width


def _edge(j: int, lower: float, upper: float, bins: int) -> float:
    """Bin edge j of :func:`dpgui.core.tree.bin_edges` (the histogram's and the release's) in O(1)."""
    return upper if j == bins else lower + j * ((upper - lower) / bins)


def value_span(low: float, high: float, lower: float, upper: float, bins: int) -> Span:
    """The CDF points (prefix lengths first..last) that answer questions about values in [low, high]:
    prefix j is the count below the bin edge lower + j·w, w = (upper − lower)/K (the release's bins), so
    the span runs from the last edge at or below ``low`` to the first edge at or above ``high`` (prefix 0,
    always 0, left out). ParameterError, with the fix, for an inverted interval or one outside the bounds. O(1)."""
    bins = check_bins(bins)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ParameterError("the region's ends must be finite numbers", "give two numbers, e.g. 20 and 35")
    if low > high:
        raise ParameterError(f"the region is inverted: {low:g} is above {high:g}",
                             f"give the smaller value first: {high:g} to {low:g}")
    if low < lower or high > upper:
        raise ParameterError(f"the region {low:g}–{high:g} is outside the bounds {lower:g}–{upper:g}",
                             f"choose a region between {lower:g} and {upper:g}")
    width = (upper - lower) / bins
    first = min(bins, max(0, math.floor((low - lower) / width)))
    while first < bins and _edge(first + 1, lower, upper, bins) <= low:  # float rounding: the edges decide
        first += 1
    while first > 0 and _edge(first, lower, upper, bins) > low:
        first -= 1
    last = min(bins, max(0, math.ceil((high - lower) / width)))
    while last > 0 and _edge(last - 1, lower, upper, bins) >= high:
        last -= 1
    while last < bins and _edge(last, lower, upper, bins) < high:
        last += 1
    return max(1, first), max(1, last)


@dataclass(frozen=True)
class FocusOffer:
    """The answer to "where do you need accuracy": both plans and their exact errors in the region.

    ``default_error``/``focused_error`` are in counts²: Σ_j Var Ĉ_j over the region's CDF points
    (objective 'total') or max_j Var Ĉ_j there ('max'). ``worth_it``: the focused plan lowers it by at
    least :data:`WORTH_IT`; only then is it the plan to use (:attr:`plan`)."""

    span: Span
    objective: str
    default_plan: Plan
    focused_plan: Plan
    default_error: float
    focused_error: float
    worth_it: bool

    @property
    def plan(self) -> Plan:
        """The plan to release with: the focused one if it is worth it, else the default."""
        return self.focused_plan if self.worth_it else self.default_plan

    @property
    def gain(self) -> float:
        """Fraction by which the focused plan lowers the error in the region (0 if it does not)."""
        return 0.0 if self.default_error <= 0 else max(0.0, 1.0 - self.focused_error / self.default_error)

    def margins(self) -> tuple[float, float]:
        """(default, focused) 95 % error margins in records in the region: ``noise_margin`` of the
        root-mean-square SE over its CDF points ('total') or of the worst SE there ('max')."""
        from dpgui.core.quantiles import noise_margin

        points = max(1, self.span[1] - self.span[0] + 1)
        scale = points if self.objective == "total" else 1

        def margin(error: float) -> float:
            return float(noise_margin(math.sqrt(max(error, 0.0) / scale)))

        return margin(self.default_error), margin(self.focused_error)

    def to_json(self) -> dict[str, object]:
        default_margin, focused_margin = self.margins()
        return {"first_prefix": self.span[0], "last_prefix": self.span[1], "objective": self.objective,
                "default_error": self.default_error, "focused_error": self.focused_error,
                "default_margin95": default_margin, "focused_margin95": focused_margin,
                "gain": self.gain, "worth_it": self.worth_it,
                "used": "focused" if self.worth_it else "default"}


def focus_offer(bins: int, privacy: PrivacySpec, focus: Span, shape: TreeShape | None = None,
                estimator: str = "gls", objective: str = "total", noise: str = "laplace",
                budgets: str | Sequence[float] = "auto", locked: Mapping[int, float] | None = None,
                default: Plan | None = None) -> FocusOffer:
    """Plan for the CDF points of ``focus`` (prefix lengths) and compare with the plan without focus
    (``default`` if given: it must be :func:`auto_plan`'s plan for these arguments). Both errors exact,
    in the focus; the focused plan is the default whenever planning for the focus gains nothing, so
    ``focused_error ≤ default_error`` always. Same privacy: both plans spend exactly the same ε (δ)."""
    if objective not in OBJECTIVES:
        raise ParameterError(f"unknown objective {objective!r}", "use 'total' or 'max'")
    if default is None:
        default = auto_plan(bins, privacy, shape, budgets, estimator, objective, locked, noise=noise)
    focused = focused_plan(default, focus, shape, budgets, locked, objective=objective)
    span = check_span(default.shape, privacy.root_public, focus)
    default_error = focus_error(default, objective, span)
    focused_error = focus_error(focused, objective, span)
    worth_it = focused is not default and focused_error <= (1.0 - WORTH_IT) * default_error
    return FocusOffer(span, objective, default, focused, default_error, focused_error, bool(worth_it))

