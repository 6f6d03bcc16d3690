"""The one binning rule (:mod:`dpgui.data.histogram`) as SQL, for counting where the data lives.

A database or Spark computes the histogram of a column with ONE aggregate query::

    SELECT key, COUNT(*) FROM (SELECT <bin_key_sql(col, …)> AS key FROM <source>) AS k GROUP BY key

so that only ``K + 3`` (key, count) pairs leave it; :func:`histogram_from_keys` turns them into the
:class:`~dpgui.data.histogram.ColumnHistogram` that :func:`~dpgui.data.histogram.column_histogram`
gives for the same rows in a file — bit for bit, because the SQL does the same IEEE double
operations in the same order as :class:`dpgui.data.histogram._Binner`:

* ``v = CAST(x AS DOUBLE)``; ``t = (v - lower) * scale`` with ``scale = bins / (upper - lower)``;
  ``i = trunc(min(t, bins - 1))`` (``t >= 0`` for in-range values);
* the exact correction against the edges ``edge_j = j*step + lower`` (``step = (upper - lower) /
  bins``; these are ``numpy.linspace(lower, upper, bins + 1)``'s edges for ``0 < j < bins``):
  ``i - 1`` if ``i > 0`` and ``v < edge_i``, else ``i + 1`` if ``i < bins - 1`` and
  ``v >= edge_(i+1)``, else ``i`` (the two cases exclude each other since the edges increase).

Keys: ``0..bins-1`` a bin; :data:`KEY_MISSING` (-1) null or NaN; :data:`KEY_LOW` (-2) ``v < lower``
(incl. ``-inf``), counted in bin 0; :data:`KEY_HIGH` (-3) ``v >= upper`` (incl. ``+inf``), counted in
bin ``bins - 1`` (``_Binner`` puts them there too: bin 0's and bin ``bins-1``'s outer edges are never
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

No I/O, no Qt; the SQL text is O(1) in the number of bins.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from dpgui.core.missing import MISSING_ERROR
from dpgui.data.histogram import ColumnHistogram, _check_bins, _check_missing, check_bounds
from dpgui.errors import DataError, ParameterError
from dpgui.vocabulary import Name

__all__ = [
    "DIALECTS",
    "SqlDialect",
    "KEY_HIGH",
    "KEY_LOW",
    "KEY_MISSING",
    "KEY_NOT_NUMBER",
    "bin_key_sql",
    "float_literal",
    "histogram_from_keys",
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

_DOUBLE = {SqlDialect.POSTGRESQL: "DOUBLE PRECISION", SqlDialect.SQLITE: "REAL", SqlDialect.SPARK: "DOUBLE",
           SqlDialect.GENERIC: "DOUBLE PRECISION"}
_INTEGER = {SqlDialect.POSTGRESQL: "BIGINT", SqlDialect.SQLITE: "INTEGER", SqlDialect.SPARK: "BIGINT",
            SqlDialect.GENERIC: "BIGINT"}
# Powers of two as exact integer literals (at most 2**62 each: a BIGINT everywhere).
_MAX_SHIFT = 62


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
    k = _check_bins(bins)
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


def histogram_from_keys(
    rows: Iterable[tuple[int, int]],
    lower: float,
    upper: float,
    bins: int,
    missing_policy: str,
    *,
    column: str = "the column",
    source_name: str = "the source",
) -> ColumnHistogram:
    """The :class:`~dpgui.data.histogram.ColumnHistogram` of the ``(key, count)`` rows of the query over
    :func:`bin_key_sql` (each key at most once; any order): keys ``0..bins-1`` are bins, -2 counts
    into bin 0 and ``n_clamped_low``, -3 into bin ``bins-1`` and ``n_clamped_high``, -1 into
    ``n_missing``; ``n_rows`` is the sum of all counts. Raises DataError for no rows at all,
    for missing values under ``missing_policy="error"``, and for text values (key -4), naming
    ``column`` and ``source_name``. O(bins + number of rows)."""
    lo, hi = check_bounds(lower, upper)
    k = _check_bins(bins)
    policy = _check_missing(missing_policy)
    counts = np.zeros(k, dtype=np.int64)
    n_missing = n_low = n_high = n_not_number = 0
    seen: set[int] = set()
    for raw_key, raw_count in rows:
        key, count = int(raw_key), int(raw_count)
        if key in seen or count < 0:
            raise RuntimeError(f"the aggregate query returned key {key} twice or a negative count")
        seen.add(key)
        if 0 <= key < k:
            counts[key] += count
        elif key == KEY_MISSING:
            n_missing = count
        elif key == KEY_LOW:
            n_low = count
            counts[0] += count
        elif key == KEY_HIGH:
            n_high = count
            counts[k - 1] += count
        elif key == KEY_NOT_NUMBER:
            n_not_number = count
        else:
            raise RuntimeError(f"the aggregate query returned bin key {key}, outside -4..{k - 1}")
    if n_not_number:
        raise DataError(
            f"column '{column}' in {source_name} holds {n_not_number:,} values that are not numbers (text)",
            "choose a numeric column, or convert or remove the text values in the database",
        )
    n_rows = int(counts.sum()) + n_missing
    if n_rows == 0:
        raise DataError(f"{source_name} has no data rows", "choose a table or query with data rows")
    if policy == MISSING_ERROR and n_missing:
        raise DataError(
            f"column '{column}' in {source_name} has {n_missing:,} missing values (null or NaN)",
            "fill or remove the missing values, or choose to drop them",
        )
    counts.flags.writeable = False
    return ColumnHistogram(
        counts=counts,
        lower=lo,
        upper=hi,
        bins=k,
        n_rows=n_rows,
        n_missing=n_missing,
        n_clamped_low=n_low,
        n_clamped_high=n_high,
        missing_policy=policy,
    )
