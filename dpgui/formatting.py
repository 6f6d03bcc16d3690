"""How numbers (and text that people typed) are written for people: one function per purpose (no Qt,
nothing of dpgui's).

The window, the PDF report and the messages of the readers use these, so that a number written
for one purpose looks the same wherever it appears. Two purposes that look alike are kept apart
when they write some numbers differently (e.g. :func:`format_number` and :func:`format_bound`).
"""

from __future__ import annotations

import math
import unicodedata
from datetime import datetime, timezone


# ---------------------------------------------------------------------------- plain numbers
def format_number(value: float) -> str:
    """A number as a person would write it (bounds, widths, counts, ε in dialogs): whole numbers
    with thousands separators, others to 6 significant digits (separated from 0.001 up).
    ``value`` must be finite."""
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.6g}" if abs(value) >= 1e-3 else f"{value:.6g}"


def format_bound(value: float) -> str:
    """A bound quoted in a message about a column's range: whole numbers with thousands separators,
    others as ``:g`` (6 significant digits, no separators; ``inf`` and ``nan`` as such)."""
    return f"{value:,.0f}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def format_count(count: float) -> str:
    """A released count: ``1,234``, or with one decimal when it is not a whole number."""
    if float(count).is_integer():
        return f"{int(count):,}"
    return f"{count:,.1f}"


def format_significant(value: float | None, significant: int = 3) -> str:
    """A noise figure or budget in the bin-tree view: ``0.313``, ``6.45``, ``1,234`` — a few
    significant digits, thousands separated, no exponent, no trailing zeros; ``—`` for None,
    infinity or NaN."""
    if value is None or not math.isfinite(value):
        return "—"
    if value == 0:
        return "0"
    if abs(value) >= 10 ** (significant - 1):
        return f"{value:,.0f}"
    decimals = max(0, significant - 1 - int(math.floor(math.log10(abs(value)))))
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_parameter(value: float) -> str:
    """A plan parameter (ε, a level's budget or noise standard deviation) in a plot's title, label
    or tooltip: 4 significant digits (3 below 0.001 and from 100,000), ``∞`` for infinity."""
    if not math.isfinite(value):
        return "∞"
    if value == 0:
        return "0"
    if abs(value) >= 1e5 or abs(value) < 1e-3:
        return f"{value:.3g}"
    return f"{value:.4g}"


def format_budget(value: float) -> str:
    """ε or δ in the budget ledger, as people write them: ``0.75``, ``2``, ``1e-6`` (below 0.001: 3
    significant digits with a plain exponent)."""
    if value != 0 and abs(value) < 1e-3:
        shown = f"{value:.3g}"  # "0.0005" from 1e-4 up, "1.5e-05" below
        if "e" not in shown:
            return shown
        mantissa, exponent = shown.split("e")
        return f"{mantissa}e{int(exponent)}"
    return format_number(value)


def format_delta(delta: float) -> str:
    """δ as people write it in a report or dialog: ``0``, ``1e-9``, ``2.5e-7``, ``0.001`` (as
    :func:`format_budget`: below 0.001, 3 significant digits with a plain exponent)."""
    return format_budget(delta)


_ODDS_WORDS = {3: "a thousand", 4: "ten thousand", 5: "a hundred thousand", 6: "a million", 7: "ten million",
               8: "a hundred million", 9: "a billion", 10: "ten billion", 11: "a hundred billion", 12: "a trillion"}


def format_odds(probability: float) -> str:
    """A small probability (such as δ) as odds a person reads at once: ``one in a billion`` (1e-9),
    ``one in 2,000,000`` (5e-7). Never understates the probability: 1/p is rounded down to a whole
    number N, so p ≤ 1/N. ``probability`` must be in (0, 1]."""
    if not 0 < probability <= 1:
        raise ValueError(f"a probability in (0, 1] is needed, not {probability!r}")
    inverse = 1.0 / probability
    exponent = round(math.log10(inverse))
    if exponent in _ODDS_WORDS and abs(inverse / 10.0**exponent - 1.0) < 1e-9:
        return f"one in {_ODDS_WORDS[exponent]}"
    nearest = round(inverse)
    whole = nearest if abs(inverse - nearest) <= 1e-9 * inverse else math.floor(inverse)
    return f"one in {whole:,}"


def format_epsilon(epsilon: float) -> str:
    """The total privacy budget ε as given (``:g``: 6 significant digits, no separators)."""
    return f"{epsilon:g}"


def format_level_budget(epsilon: float) -> str:
    """One tree level's share of ε in a report: 4 significant digits."""
    return f"{epsilon:.4g}"


def format_figure(value: float) -> str:
    """A budget figure (ε, δ, ρ, seconds) in a message of the ledger: up to 6 significant digits, no
    trailing noise (``0.5``, ``1e-06``)."""
    return f"{value:.6g}"


def format_percent(share: float) -> str:
    """A share in [0, 1] (a quantile's probability) as a percentage: ``25 %``, ``2.5 %``."""
    return f"{share * 100:g} %"


def format_percent_of(value: float, total: float) -> str:
    """``value`` as a share of ``total`` (an error as a share of N), 2 significant digits: ``0.51 %``."""
    return f"{100 * value / total:.2g} %"


def format_margin(margin: float) -> str:
    """A projected 95 % error margin, to one decimal, without its unit (a table whose heading says
    "records"): ``± 1,234.5``."""
    return f"± {margin:,.1f}"


def format_margin_records(margin: float) -> str:
    """A projected 95 % error margin in records, to one decimal: ``± 1,234.5 records``."""
    return f"{format_margin(margin)} records"


def format_level_margin(margin: float, unit: bool = True) -> str:
    """A hierarchy level's 95 % margin: ``± 16.4 records`` (``± 16.4`` without ``unit``), or ``exact`` for a
    level published without noise (the total N under change)."""
    if margin == 0:
        return "exact"
    return format_margin_records(margin) if unit else format_margin(margin)


def format_margin_of_n(margin: float, n: int | None, n_name: str = "N") -> str:
    """A 95 % margin in records, with its share of N when N is known:
    ``± 27.4 records (0.27 % of N = 10,000)``."""
    share = f" ({format_percent_of(margin, n)} of {n_name} = {n:,})" if n else ""
    return f"{format_margin_records(margin)}{share}"


def format_relative_margin(ratio: float | None) -> str:
    """A 95 % margin as a share of a count (``ratio`` = margin ÷ count): ``± 33 %``, ``± 1.3 %``,
    ``± 250 %``; ``∞`` for an empty category (any error is infinitely large against 0), ``—`` unknown."""
    if ratio is None or math.isnan(ratio):
        return "—"
    if math.isinf(ratio):
        return "∞"
    percent = 100.0 * ratio
    return f"± {percent:,.0f} %" if percent >= 10 else f"± {percent:.2g} %"


def format_share_whole(share: float | None) -> str:
    """A share in [0, 1] as a whole percentage (``8 %``; ``< 1 %`` for a share below one half percent
    but above 0), ``—`` unknown."""
    if share is None or math.isnan(share):
        return "—"
    if 0 < share < 0.005:
        return "< 1 %"
    return f"{100.0 * share:.0f} %"


def cdf_margin_words(worst: float, average: float, n: int | None = None, n_name: str = "N") -> str:
    """A CDF plan's stated errors in words, the same in the window, the CLI and the PDF:
    ``± 27.4 records at the worst point of the CDF, ± 21.9 records on average`` (each with its share
    of N when N is known; ``n_name`` names N, e.g. "your estimate of N")."""
    return (f"{format_margin_of_n(worst, n, n_name)} at the worst point of the CDF, "
            f"{format_margin_of_n(average, n, n_name)} on average")


# ---------------------------------------------------------------------------- values in column units
def value_decimals(width: float) -> int:
    """Decimals that show a value to the precision of one bin of this width (0 for bins ≥ 1 wide,
    at most 6; 0 for a width that is not a positive finite number)."""
    if not (width > 0 and math.isfinite(width)):
        return 0
    return int(min(6, max(0, math.ceil(-math.log10(width) - 1e-9))))


def edge_decimals(lower: float, width: float) -> int:
    """Decimals that show every bin edge lower + j·width exactly (at most 2 more than
    :func:`value_decimals` needs)."""
    cap = min(6, value_decimals(width) + 2)
    for d in range(cap + 1):
        if all(abs(round(x, d) - x) <= 1e-9 * max(1.0, abs(x)) for x in (lower, width)):
            return d
    return cap


def format_fixed(value: float, decimals: int) -> str:
    """A value in column units (a quantile, a count, an interval end) with thousands separators
    and exactly ``decimals`` decimals; never ``-0``."""
    text = f"{value:,.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text[1:].replace(",", "")) == 0 else text


def moment_decimals(*spreads: float) -> int:
    """Decimals for a mean or a sum and its intervals: the smallest of ``spreads`` (its noise margin, its
    binning allowance) to two significant digits, at most 6 (0 when none is a positive finite number)."""
    positive = [s for s in spreads if s > 0 and math.isfinite(s)]
    return int(min(6, max(0, 1 - math.floor(math.log10(min(positive)))))) if positive else 0


def moment_words(value: float, margin: float, binning: float, low: float, high: float, decimals: int,
                 per_value: bool = False) -> str:
    """A mean or a sum from a released CDF, the same in the window and the PDF: ``1,234.5 ± 12.3 (95 %),
    binning adds at most ± 5.0: 1,217.2 to 1,251.8`` — the noise's 95 % margin, what binning can add
    (``per value`` for a sum; to at least two significant digits; "binning adds nothing" when it cannot), and the
    interval that holds the true figure of the values."""
    binned = ("binning adds nothing" if binning == 0 else f"binning adds at most ± "
              f"{format_fixed(binning, max(decimals, moment_decimals(binning)))}{' per value' if per_value else ''}")
    return (f"{format_fixed(value, decimals)} ± {format_fixed(margin, decimals)} (95 %), {binned}: "
            f"{format_fixed(low, decimals)} to {format_fixed(high, decimals)}")


def format_edge(value: float, decimals: int) -> str:
    """A bin edge or width to the edges' precision (:func:`edge_decimals`) without trailing zeros:
    ``1,000``, not ``1,000.0000``."""
    text = format_fixed(value, decimals)
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_node_edge(value: float, step: float) -> str:
    """An edge of a bin-tree node with enough decimals to tell nodes ``step`` wide apart, without
    trailing zeros (``:.6g`` from 10⁹ and below 10⁻⁶; non-finite values as ``str``)."""
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 1e9 or (value != 0 and abs(value) < 1e-6):
        return f"{value:.6g}"
    decimals = 0 if step <= 0 else max(0, 3 - int(math.floor(math.log10(step))))
    decimals = min(decimals, 12)
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


# ---------------------------------------------------------------------------- axis ticks
def format_log_tick(value: float) -> str:
    """A log-axis tick label as a plain number: 0.05, 2, 1,000, 1,000,000 (never 10³ or 1e+06)."""
    if value >= 1:
        return f"{value:,.0f}" if abs(value - round(value)) < 1e-6 * value else f"{value:,.3g}"
    return f"{value:.3g}"


def format_linear_tick(value: float, decimals: int) -> str:
    """A linear-axis tick label at its step's ``decimals`` (:func:`format_fixed`); ``:.3g`` from 10¹⁵."""
    if abs(value) >= 1e15:
        return f"{value:.3g}"
    return format_fixed(value, decimals)


# ---------------------------------------------------------------------------- text people typed
#: Unicode categories that move the cursor or change how the text around them is read: control
#: characters (ESC, CR, LF, tab), format characters (right-to-left overrides) and line/paragraph separators.
_CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def control_character(text: str) -> str | None:
    """The first character of ``text`` that a terminal or a log would not show as itself (ESC, CR,
    LF, tab, a right-to-left override, a line separator), escaped (``\\x1b``); None when there is none.
    A reason or name holding one could forge lines of a printed history. O(len(text))."""
    for char in text:
        if unicodedata.category(char) in _CONTROL_CATEGORIES:
            return char.encode("unicode_escape").decode("ascii")
    return None


def printable_text(text: str) -> str:
    """``text`` with every character of :func:`control_character`'s kind escaped (``\\n``, ``\\x1b``,
    ``\\u202e``), so that text stored before such characters were refused prints as one honest line."""
    return "".join(char.encode("unicode_escape").decode("ascii")
                   if unicodedata.category(char) in _CONTROL_CATEGORIES else char for char in text)


# ---------------------------------------------------------------------------- moments in UTC
def iso_utc(moment: datetime, *, microseconds: bool = False) -> str:
    """``moment`` (timezone-aware) in UTC, ISO 8601 with a "Z": ``2026-11-21T20:58:12Z`` (manifests,
    signatures), or to the microsecond, ``2026-11-21T20:58:12.123456Z`` (the budget ledger's records)."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ" if microseconds else "%Y-%m-%dT%H:%M:%SZ")


def utc_stamp(moment: datetime) -> str:
    """``moment`` (timezone-aware) in UTC as a compact stamp for a file name: ``20261121T205812Z``."""
    return moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
