"""The one binning rule (stated in :mod:`dpgui.data.histogram`): in numpy (:class:`Binner`) and as SQL.

The public bounds' checks (:func:`check_bounds`, :func:`check_bin_count`) and the rule itself, for files
(:class:`Binner`, batch by batch) and for counting where the data lives: a database or Spark counts the
bins of a column with ONE aggregate query::

    SELECT key, COUNT(*) FROM (SELECT <bin_key_sql(col, …)> AS key FROM <source>) AS k GROUP BY key

so that only ``K + 3`` (key, count) pairs leave it (:class:`~dpgui.data.grouped_counts.BinKey`, the
counting primitive's key); :func:`~dpgui.data.histogram.histogram_of` turns them into the
:class:`~dpgui.data.histogram.ColumnHistogram` that :func:`~dpgui.data.histogram.column_histogram`
gives for the same rows in a file — bit for bit, because the SQL does the same IEEE double
operations in the same order as :class:`Binner`:

* ``v = CAST(x AS DOUBLE)``; ``t = (v - lower) * scale`` with ``scale = bins / (upper - lower)``;
  ``i = trunc(min(t, bins - 1))`` (``t >= 0`` for in-range values);
* the exact correction against the edges ``edge_j = j*step + lower`` (``step = (upper - lower) /
  bins``; these are ``numpy.linspace(lower, upper, bins + 1)``'s edges for ``0 < j < bins``):
  ``i - 1`` if ``i > 0`` and ``v < edge_i``, else ``i + 1`` if ``i < bins - 1`` and
  ``v >= edge_(i+1)``, else ``i`` (the two cases exclude each other since the edges increase).

Keys: ``0..bins-1`` a bin; :data:`KEY_MISSING` (-1) null or NaN; :data:`KEY_LOW` (-2) ``v < lower``
(incl. ``-inf``), counted in bin 0; :data:`KEY_HIGH` (-3) ``v >= upper`` (incl. ``+inf``), counted in
bin ``bins - 1`` (:class:`Binner` puts them there too: bin 0's and bin ``bins-1``'s outer edges are never
tested, and ``edge_(bins-1) <= upper`` for ``bins <= 2**50``); :data:`KEY_NOT_NUMBER` (-4, SQLite
only: a text or blob value in a column of dynamic type).

Float constants are written so that each dialect reads back exactly the same double:
PostgreSQL ``CAST('repr' AS DOUBLE PRECISION)`` (``float8in`` is ``strtod``, correctly rounded);
SQLite, Spark and the generic dialect as an exact dyadic product ``CAST(m AS …) * 2**k`` built from
integer literals (SQLite 3.40's decimal parser is off by one ulp on some values; Java's
``Double.parseDouble`` before JDK 19 on a few), which every engine evaluates without rounding.
NaN: PostgreSQL and Spark order NaN above every number and make it equal to itself, so NaN is tested
first (``= 'NaN'`` / ``isnan``); SQLite has no NaN (it stores NULL); the generic dialect uses
``v <> v``.

No I/O, no Qt; the SQL text is O(1) in the number of bins. :class:`SqlDialect` names the dialects.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import numpy.typing as npt

from dpgui.core.tree import bin_edges, check_bins
from dpgui.errors import ParameterError
from dpgui.vocabulary import Name

__all__ = [
    "DIALECTS",
    "KEY_HIGH",
    "KEY_LOW",
    "KEY_MISSING",
    "KEY_NOT_NUMBER",
    "Binner",
    "SqlDialect",
    "bin_key_sql",
    "check_bin_count",
    "check_bounds",
    "float_literal",
]


class SqlDialect(Name):
    """The SQL dialects :func:`bin_key_sql` writes (tokens as SQLAlchemy names the dialects)."""

    POSTGRESQL = "postgresql"
    SQLITE = "sqlite"
    SPARK = "spark"
    GENERIC = "generic"


#: The SQL dialects :func:`bin_key_sql` writes.
DIALECTS = tuple(SqlDialect)

KEY_MISSING = -1
KEY_LOW = -2
KEY_HIGH = -3
KEY_NOT_NUMBER = -4

# Up to this many bins the edges are kept in a table (16 MiB at most).
_EDGE_TABLE_MAX = 1 << 20
# Values binned per inner step (temporaries of this size stay in the CPU cache).
_BLOCK = 1 << 16


_DOUBLE = {SqlDialect.POSTGRESQL: "DOUBLE PRECISION", SqlDialect.SQLITE: "REAL", SqlDialect.SPARK: "DOUBLE",
           SqlDialect.GENERIC: "DOUBLE PRECISION"}
_INTEGER = {SqlDialect.POSTGRESQL: "BIGINT", SqlDialect.SQLITE: "INTEGER", SqlDialect.SPARK: "BIGINT",
            SqlDialect.GENERIC: "BIGINT"}
# Powers of two as exact integer literals (at most 2**62 each: a BIGINT everywhere).
_MAX_SHIFT = 62


def check_bounds(lower: object, upper: object) -> tuple[float, float]:
    """Public bounds: finite numbers with lower < upper (the data layer's and the app's one check)."""
    values = []
    for name, value in (("lower", lower), ("upper", upper)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ParameterError(
                f"{name} bound {value!r} is not a number",
                f"enter a finite number for the {name} bound",
            )
        v = float(value)
        if not math.isfinite(v):
            raise ParameterError(
                f"{name} bound {v} is not finite",
                f"enter a finite number for the {name} bound (out-of-range values are "
                "clamped into the end bins anyway)",
            )
        values.append(v)
    lo, hi = values
    if lo >= hi:
        raise ParameterError(
            f"bounds inverted: lower bound {lo:g} is not less than upper bound {hi:g}",
            "make the lower bound smaller than the upper bound",
        )
    if not math.isfinite(hi - lo):
        raise ParameterError(
            f"bounds [{lo:g}, {hi:g}) are too far apart to compute in float64",
            "choose narrower bounds",
        )
    return lo, hi


def check_bin_count(bins: object) -> int:
    """K under the one bin-count rule (:func:`dpgui.core.tree.check_bins`); a histogram may have 1 bin."""
    return check_bins(bins, minimum=1)


class Binner:
    """Precomputed edges for one (lower, upper, bins); :meth:`add` bins one chunk."""

    def __init__(self, lower: float, upper: float, bins: int) -> None:
        self.lower = lower
        self.upper = upper
        self.bins = bins
        scale = bins / (upper - lower)
        if not math.isfinite(scale) or scale == 0.0:
            raise ParameterError(
                f"bounds [{lower:g}, {upper:g}) are too close together for {bins} bins",
                "widen the bounds or use fewer bins",
            )
        self.scale = scale
        # Bin edges are edge_j = j*step + lower, computed as numpy.linspace does (edge_K is
        # upper exactly). For up to _EDGE_TABLE_MAX bins they are tabulated (a gather is
        # fastest); above that they are recomputed per value to keep memory O(bins) int64.
        self.step = (upper - lower) / bins
        self.tabulated = bins <= _EDGE_TABLE_MAX
        if self.tabulated:
            edges = bin_edges(lower, upper, bins)
            # Lower/upper edge of each bin, with NaN sentinels at the two ends: comparisons
            # with NaN are False, so nothing is moved out of bin 0 or past bin bins-1.
            self.lo_edges = edges[:-1].copy()
            self.lo_edges[0] = np.nan
            self.hi_edges = edges[1:].copy()
            self.hi_edges[-1] = np.nan
        self.counts = np.zeros(bins, dtype=np.int64)
        self.n_low = 0
        self.n_high = 0

    def indices(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
        """Bin index (int64) of each value of ``x`` (float64, no NaN), clamped."""
        n = x.shape[0]
        with np.errstate(over="ignore", invalid="ignore"):
            # Overflow to +-inf is harmless: clamped just below.
            t = np.subtract(x, self.lower)
            t *= self.scale
        # Clamping before the cast keeps +-inf and huge values out of the int conversion;
        # truncation equals floor once t >= 0.
        np.clip(t, 0.0, float(self.bins - 1), out=t)
        idx = np.empty(n, dtype=np.int64)
        np.copyto(idx, t, casting="unsafe")
        if self.bins == 1:
            return idx
        # Exact correction against the float64 edges (rounding in the formula can be off
        # by one bin for x within an ulp or so of an edge).
        if self.tabulated:
            np.take(self.lo_edges, idx, out=t)
            idx -= x < t
            np.take(self.hi_edges, idx, out=t)
            idx += x >= t
        else:
            np.copyto(t, idx, casting="unsafe")
            t *= self.step
            t += self.lower
            idx -= (x < t) & (idx > 0)
            np.add(idx, 1, out=t, casting="unsafe")
            t *= self.step
            t += self.lower
            idx += (x >= t) & (idx < self.bins - 1)
        return idx

    def add(self, x: npt.NDArray[np.float64]) -> None:
        """Add the float64 values ``x`` (NaN already removed) to the counts."""
        # Work in cache-sized blocks (as numpy.histogram does): the temporaries stay in
        # L2, which is faster than whole-batch passes and bounds extra memory.
        lower, upper = self.lower, self.upper
        for start in range(0, x.shape[0], _BLOCK):
            xb = x[start : start + _BLOCK]
            self.n_low += int(np.count_nonzero(xb < lower))
            self.n_high += int(np.count_nonzero(xb >= upper))
            # np.add.at rather than np.bincount(minlength=bins): unlike a per-block bincount
            # it does not allocate K counters per block, which at large K dominates.
            np.add.at(self.counts, self.indices(xb), 1)

    def keys(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
        """The bin key (module docstring) of each value of ``x`` (float64, NaN where missing): its bin,
        :data:`KEY_LOW` below ``lower``, :data:`KEY_HIGH` at or above ``upper``, :data:`KEY_MISSING` for NaN.
        Counts nothing. O(n) in cache-sized blocks."""
        keys = np.full(x.shape[0], KEY_MISSING, dtype=np.int64)
        present = ~np.isnan(x)
        values = x[present]
        found = np.empty(values.shape[0], dtype=np.int64)
        for start in range(0, values.shape[0], _BLOCK):
            found[start:start + _BLOCK] = self.indices(values[start:start + _BLOCK])
        found[values < self.lower] = KEY_LOW
        found[values >= self.upper] = KEY_HIGH
        keys[present] = found
        return keys


def _check_dialect(dialect: object) -> SqlDialect:
    if not isinstance(dialect, str) or dialect not in tuple(SqlDialect):
        raise ParameterError(f"SQL dialect {dialect!r} is not known", f"use one of {', '.join(DIALECTS)}")
    return SqlDialect(dialect)


def float_literal(value: float, dialect: SqlDialect | str) -> str:
    """An SQL expression of type double whose value is exactly ``value`` (finite) in ``dialect``."""
    dialect = _check_dialect(dialect)
    v = float(value)
    if not math.isfinite(v):
        raise ParameterError(f"value {v!r} is not finite", "use a finite number")
    double = _DOUBLE[dialect]
    if dialect is SqlDialect.POSTGRESQL:
        return f"CAST('{v!r}' AS {double})"
    if v == 0.0:
        return f"CAST(0 AS {double})"
    # v = m * 2**e exactly, m an integer with |m| < 2**53.
    mantissa, exponent = math.frexp(v)  # v = mantissa * 2**exponent, 0.5 <= |mantissa| < 1
    m = int(mantissa * (1 << 53))
    e = exponent - 53
    while m % 2 == 0:
        m //= 2
        e += 1
    text = f"CAST({m} AS {double})"
    # Each step multiplies or divides by a power of two <= 2**62. Every partial result is m times a
    # power of two between 1 and 2**e: at most 53 significant bits, lowest bit >= v's, magnitude <= |v|'s
    # when e > 0: representable, so every step is exact (no overflow, no rounding, also for subnormal v).
    op = "*" if e > 0 else "/"
    rest = abs(e)
    while rest > 0:
        k = min(rest, _MAX_SHIFT)
        text = f"({text} {op} CAST({1 << k} AS {double}))"
        rest -= k
    return text


def _missing_test(v: str, dialect: SqlDialect) -> str:
    if dialect is SqlDialect.POSTGRESQL:
        return f"{v} IS NULL OR {v} = CAST('NaN' AS DOUBLE PRECISION)"
    if dialect is SqlDialect.SPARK:
        return f"{v} IS NULL OR isnan({v})"
    if dialect is SqlDialect.SQLITE:
        return f"{v} IS NULL"
    return f"{v} IS NULL OR {v} <> {v}"


def _smaller(a: str, b: str, dialect: SqlDialect) -> str:
    if dialect is SqlDialect.POSTGRESQL:
        return f"LEAST({a}, {b})"
    if dialect is SqlDialect.SPARK:
        return f"least({a}, {b})"
    if dialect is SqlDialect.SQLITE:
        return f"MIN({a}, {b})"
    return f"CASE WHEN {a} < {b} THEN {a} ELSE {b} END"


def _truncate(t: str, dialect: SqlDialect) -> str:
    """``t`` (a double, 0 <= t < 2**53) truncated to an integer (PostgreSQL's CAST rounds)."""
    if dialect is SqlDialect.POSTGRESQL:
        return f"CAST(trunc({t}) AS BIGINT)"
    if dialect is SqlDialect.GENERIC:
        return f"CAST(FLOOR({t}) AS BIGINT)"
    return f"CAST({t} AS {_INTEGER[dialect]})"


def bin_key_sql(x: str, lower: float, upper: float, bins: int, dialect: SqlDialect | str) -> str:
    """An SQL expression giving each row's bin key (see the module docstring) for column expression ``x``.

    ``x``: a column or expression of any numeric type (cast to double here: integers, decimals and
    reals are binned as their nearest double, as the file readers do); in SQLite its raw value
    (``typeof`` is tested: text and blob values give :data:`KEY_NOT_NUMBER`). ``lower``/``upper``/
    ``bins``: as :func:`~dpgui.data.histogram.column_histogram` (checked the same way).
    ``dialect``: one of :data:`DIALECTS`. The text refers to ``x`` several times (the database
    evaluates a handful of double operations per row).
    """
    dialect = _check_dialect(dialect)
    lo, hi = check_bounds(lower, upper)
    k = check_bin_count(bins)
    scale = k / (hi - lo)
    if not math.isfinite(scale) or scale == 0.0:
        raise ParameterError(
            f"bounds [{lo:g}, {hi:g}) are too close together for {k} bins",
            "widen the bounds or use fewer bins",
        )
    step = (hi - lo) / k
    double = _DOUBLE[dialect]
    v = f"CAST({x} AS {double})"
    lo_sql = float_literal(lo, dialect)
    hi_sql = float_literal(hi, dialect)
    if k == 1:
        index = "0"
    else:
        t = f"(({v} - {lo_sql}) * {float_literal(scale, dialect)})"
        i = _truncate(_smaller(t, float_literal(k - 1, dialect), dialect), dialect)
        step_sql = float_literal(step, dialect)

        def edge(j: str) -> str:
            return f"(CAST({j} AS {double}) * {step_sql} + {lo_sql})"

        index = (
            f"CASE WHEN {i} > 0 AND {v} < {edge(i)} THEN {i} - 1 "
            f"WHEN {i} < {k - 1} AND {v} >= {edge(f'{i} + 1')} THEN {i} + 1 "
            f"ELSE {i} END"
        )
    not_number = ""
    if dialect is SqlDialect.SQLITE:
        not_number = f"WHEN typeof({x}) IN ('text', 'blob') THEN {KEY_NOT_NUMBER} "
    return (
        f"CASE {not_number}WHEN {_missing_test(v, dialect)} THEN {KEY_MISSING} "
        f"WHEN {v} < {lo_sql} THEN {KEY_LOW} "
        f"WHEN {v} >= {hi_sql} THEN {KEY_HIGH} "
        f"ELSE {index} END"
    )
