"""Where do you need accuracy: a region of the range the plan is optimised for (docs/engine.md, "Where do
you need accuracy").

The user names a region in the column's units ([a, b], or a preset: the lowest or highest 10 % of the
range between the public bounds, its middle 20 %: fractions of the bounds, never of the data, and named
so, :meth:`FocusChoice.words`); :func:`value_span` turns it into the CDF points that answer questions
about it, and :func:`focus_offer` plans for those points and says whether that is worth it: the focused
plan is offered when its 95 % margin there (the figure the window and the command line show) is at least
:data:`WORTH_IT` below the default plan's. Data-independent, as all planning: only K, the public bounds,
ε and the neighbour model are used, never a count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dpgui.core.plan import Plan, PrivacySpec
from dpgui.core.planner import auto_plan, focus_error, focused_plan
from dpgui.core.projection import Span, check_span
from dpgui.core.tree import TreeShape, check_bins
from dpgui.vocabulary import Estimator, Name, Noise, Objective
from dpgui.errors import ParameterError

#: The focused plan is offered when it lowers the 95 % margin shown for the region by at least this
#: fraction (about 10 % of the squared error, the rule's measure before the margins were compared).
WORTH_IT = 0.05


class Region(Name):
    """Where the officer needs accuracy: everywhere (no focus), a preset part of the range between the
    public bounds, or an interval typed in the column's units (``BETWEEN``). A ``str`` equal to its value,
    the word ``--focus`` and project files use."""

    EVERYWHERE = "everywhere"
    LOWER = "lower"
    UPPER = "upper"
    MIDDLE = "middle"
    BETWEEN = "between"


#: Named regions as fractions of the range [lower, upper] between the public bounds (not of the data);
#: "everywhere" is no focus (every CDF point).
PRESETS: dict[str, tuple[float, float] | None] = {
    Region.EVERYWHERE: None,
    Region.LOWER: (0.0, 0.1),
    Region.UPPER: (0.9, 1.0),
    Region.MIDDLE: (0.4, 0.6),
}
#: The presets' names, as fractions of the range between the bounds (:meth:`FocusChoice.words`).
PRESET_NAMES = {Region.LOWER: "the lowest 10 % of the range", Region.UPPER: "the highest 10 % of the range",
                Region.MIDDLE: "the middle 20 % of the range"}


def _number(value: float) -> str:
    return f"{value:.10g}"


def _span_words(low: float, high: float, dash: bool) -> str:
    """"0–500", or "−100 to −40" (``dash`` False: where a dash would read as a minus sign)."""
    return f"{_number(low)}–{_number(high)}" if dash else f"{_number(low)} to {_number(high)}"


@dataclass(frozen=True)
class FocusChoice:
    """The region the officer chose (``region``; for ``BETWEEN`` the typed ends ``low``/``high`` in the
    column's units): public, the officer's choice, kept with the data source it was made for and stored
    in project files (:meth:`to_json`)."""

    region: Region = Region.EVERYWHERE
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "region", Region(self.region))
        except ValueError:
            raise ParameterError(f"unknown region {self.region!r}", "use " + ", ".join(r.value for r in Region)) from None
        if self.region is Region.BETWEEN:
            if self.low is None or self.high is None:
                raise ParameterError("a region between two values needs both", "give where it starts and ends")
            low, high = parse_interval(f"{self.low!r}:{self.high!r}")
            object.__setattr__(self, "low", low)
            object.__setattr__(self, "high", high)
        else:
            object.__setattr__(self, "low", None)
            object.__setattr__(self, "high", None)

    def interval(self, lower: float, upper: float) -> tuple[float, float] | None:
        """The region in the column's units on the range [lower, upper) (None: everywhere). O(1)."""
        if self.region is Region.BETWEEN:
            assert self.low is not None and self.high is not None
            return self.low, self.high
        return preset_interval(self.region, lower, upper)

    def words(self, lower: float, upper: float, label: str = "") -> str:
        """The region in words that say what it is: a preset as a fraction of the range between the bounds,
        e.g. "the lowest 10 % of the range 0–5000 (0–500)"; a typed one as "age from 20 to 35"; "" for
        everywhere. O(1)."""
        interval = self.interval(lower, upper)
        if interval is None:
            return ""
        if self.region is Region.BETWEEN:
            return f"{label or 'values'} from {_number(interval[0])} to {_number(interval[1])}"
        dash = lower >= 0  # one style for the range and the part (negative values read badly beside a dash)
        return f"{PRESET_NAMES[self.region]} {_span_words(lower, upper, dash)} ({_span_words(*interval, dash)})"

    def to_json(self) -> dict[str, Any]:
        return {"region": self.region.value, "from": self.low, "to": self.high}

    @classmethod
    def from_json(cls, data: object) -> FocusChoice:
        """A choice from :meth:`to_json`'s dict; ParameterError for anything else."""
        if not isinstance(data, dict):
            raise ParameterError("the region is not an object", "save the project again")
        return cls(data.get("region"), data.get("from"), data.get("to"))  # type: ignore[arg-type]  # checked

    @classmethod
    def parse(cls, text: str) -> FocusChoice:
        """``--focus``: a preset's name or ``LO:HI`` in the column's units. O(1)."""
        word = str(text).strip()
        if word in {r.value for r in Region} - {Region.BETWEEN.value}:
            return cls(Region(word))
        low, high = parse_interval(word)
        return cls(Region.BETWEEN, low, high)


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
    (objective 'total') or max_j Var Ĉ_j there ('max'). ``worth_it``: the focused plan lowers the 95 %
    margin there (:meth:`margins`, what is shown) by at least :data:`WORTH_IT`; only then is it the plan
    to use (:attr:`plan`)."""

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
        """Fraction by which the focused plan lowers the 95 % margin in the region (:meth:`margins`, the
        figures shown beside it; 0 if it does not)."""
        default, focused = self.margins()
        return 0.0 if default <= 0 else max(0.0, 1.0 - focused / default)

    def margins(self) -> tuple[float, float]:
        """(default, focused) 95 % error margins in records in the region: ``noise_margin`` of the
        root-mean-square SE over its CDF points ('total') or of the worst SE there ('max')."""
        from dpgui.core.quantiles import noise_margin

        points = max(1, self.span[1] - self.span[0] + 1)
        scale = points if self.objective == Objective.TOTAL else 1

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
                estimator: str = Estimator.GLS, objective: str = Objective.TOTAL, noise: str = Noise.LAPLACE,
                budgets: str | Sequence[float] = "auto", locked: Mapping[int, float] | None = None,
                default: Plan | None = None) -> FocusOffer:
    """Plan for the CDF points of ``focus`` (prefix lengths) and compare with the plan without focus
    (``default`` if given: it must be :func:`auto_plan`'s plan for these arguments). Both errors exact,
    in the focus; the focused plan is the default whenever planning for the focus gains nothing, so
    ``focused_error ≤ default_error`` always. Same privacy: both plans spend exactly the same ε (δ)."""
    if objective not in tuple(Objective):
        raise ParameterError(f"unknown objective {objective!r}", "use 'total' or 'max'")
    if default is None:
        default = auto_plan(bins, privacy, shape, budgets, estimator, objective, locked, noise=noise)
    focused = focused_plan(default, focus, shape, budgets, locked, objective=objective)
    span = check_span(default.shape, privacy.root_public, focus)
    default_error = focus_error(default, objective, span)
    focused_error = focus_error(focused, objective, span)
    offer = FocusOffer(span, objective, default, focused, default_error, focused_error, False)
    worth_it = focused is not default and offer.gain >= WORTH_IT
    return FocusOffer(span, objective, default, focused, default_error, focused_error, bool(worth_it))

