"""Tests of dpgui.data.binning: the binning rule as SQL gives, row by row, the bin of binning.Binner.

The SQL runs in SQLite (in memory); PostgreSQL runs the same checks in tests/unit/data/test_sql_source.py.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpgui.data.binning import KEY_HIGH, KEY_LOW, KEY_MISSING, KEY_NOT_NUMBER, bin_key_sql, float_literal
from dpgui.data.histogram import column_histogram, histogram_from_keys, values_histogram
from dpgui.errors import DataError, ParameterError
from binning_cases import CASES, _binner_keys, adversarial_values

def _sqlite_keys(x: np.ndarray, lower: float, upper: float, k: int) -> np.ndarray:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, x REAL)")
    con.executemany("INSERT INTO t (id, x) VALUES (?, ?)", ((i, float(v)) for i, v in enumerate(x)))
    sql = f"SELECT {bin_key_sql('x', lower, upper, k, 'sqlite')} FROM t ORDER BY id"
    keys = np.array([r[0] for r in con.execute(sql)], dtype=np.int64)
    con.close()
    return keys


@pytest.mark.parametrize("lower, upper, k", CASES)
def test_sqlite_keys_equal_the_binner_row_by_row(lower, upper, k):
    rng = np.random.default_rng(16)
    x = np.concatenate([adversarial_values(lower, upper, k, rng), [np.nan]])
    expected = _binner_keys(x, lower, upper, k)
    got = _sqlite_keys(x, lower, upper, k)
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, [(repr(float(x[i])), int(got[i]), int(expected[i])) for i in bad[:5]]
    # And the assembled histogram equals values_histogram's counts and column_histogram's fields.
    values, counts = np.unique(got, return_counts=True)
    h = histogram_from_keys(zip(values.tolist(), counts.tolist()), lower, upper, k, "drop")
    finite = x[~np.isnan(x)]
    assert np.array_equal(h.counts, values_histogram(finite, lower, upper, k))
    assert (h.n_rows, h.n_missing) == (len(x), 1)
    assert (h.n_clamped_low, h.n_clamped_high) == (int(np.sum(finite < lower)), int(np.sum(finite >= upper)))


def test_histogram_equals_column_histogram_of_a_parquet_file(tmp_path):
    rng = np.random.default_rng(3)
    lower, upper, k = 0.1, 0.7, 97
    x = np.concatenate([adversarial_values(lower, upper, k, rng), [np.nan, np.nan]])
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"x": pa.array(x, mask=np.isnan(x))}), path)
    keys = _sqlite_keys(x, lower, upper, k)
    values, counts = np.unique(keys, return_counts=True)
    h = histogram_from_keys(zip(values.tolist(), counts.tolist()), lower, upper, k, "drop")
    assert h == column_histogram(path, "x", lower, upper, k)
    assert h.n_missing == 2


def test_linspace_edges_are_j_step_plus_lower():
    """The SQL's edges j*step + lower are numpy.linspace's (the table Binner uses up to 2**20 bins)."""
    for lower, upper, k in CASES:
        if k > 1 << 20:
            continue
        edges = np.linspace(lower, upper, k + 1)
        step = (upper - lower) / k
        j = np.arange(k, dtype=np.float64)
        assert np.array_equal(edges[:-1], j * step + lower)
        assert edges[-1] == upper


def test_float_literals_round_trip_in_sqlite():
    rng = np.random.default_rng(5)
    raw = np.frombuffer(rng.bytes(8 * 3000), dtype=np.float64)
    values = np.concatenate([raw[np.isfinite(raw)], rng.standard_normal(2000) * 10.0 ** rng.integers(-320, 300, 2000),
                             [0.1, 0.7, 5e-324, -5e-324, 1.7976931348623157e308, 2.2250738585072014e-308,
                              2.225073858507201e-308, 2.1238058959277430e-293, 1.0, -2.0, 0.0, 2.0**-1074]])
    values = values[np.isfinite(values)]
    con = sqlite3.connect(":memory:")
    for chunk in np.array_split(values, 50):
        sql = "SELECT " + ", ".join(float_literal(float(v), "sqlite") for v in chunk)
        row = con.execute(sql).fetchone()
        assert all(isinstance(r, float) for r in row)
        assert [float(v) for v in chunk] == list(row)
    # The plain decimal literal is not always read back (SQLite 3.40): the reason for the dyadic form.
    # (Not asserted: a later SQLite may read them all correctly.)


def test_sqlite_text_value_is_key_minus_4():
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (x REAL)")
    con.executemany("INSERT INTO t VALUES (?)", [(1.5,), ("abc",), (b"\x00",), (None,), (2,)])
    keys = [r[0] for r in con.execute(f"SELECT {bin_key_sql('x', 0.0, 4.0, 4, 'sqlite')} FROM t")]
    assert keys == [1, KEY_NOT_NUMBER, KEY_NOT_NUMBER, KEY_MISSING, 2]
    with pytest.raises(DataError, match="'x' in table t holds 2 values that are not numbers"):
        histogram_from_keys([(1, 1), (KEY_NOT_NUMBER, 2)], 0.0, 4.0, 4, "drop", column="x", source_name="table t")


def test_histogram_from_keys_fields_and_errors():
    h = histogram_from_keys([(KEY_LOW, 3), (KEY_HIGH, 4), (KEY_MISSING, 2), (0, 1), (4, 5)], 0.0, 1.0, 5, "drop")
    assert h.counts.tolist() == [4, 0, 0, 0, 9]
    assert (h.n_rows, h.n_missing, h.n_clamped_low, h.n_clamped_high, h.total) == (15, 2, 3, 4, 13)
    assert not h.counts.flags.writeable
    with pytest.raises(DataError, match=r"2 missing values.*choose to drop them"):
        histogram_from_keys([(KEY_MISSING, 2), (0, 1)], 0.0, 1.0, 5, "error", column="x")
    # Missing values only: a histogram with N = 0 (as the file path), not an error under "drop".
    only_missing = histogram_from_keys([(KEY_MISSING, 2)], 0.0, 1.0, 5, "drop")
    assert (only_missing.n_rows, only_missing.total) == (2, 0)
    with pytest.raises(DataError, match="no data rows"):
        histogram_from_keys([], 0.0, 1.0, 5, "drop", source_name="table t")
    with pytest.raises(RuntimeError):
        histogram_from_keys([(5, 1)], 0.0, 1.0, 5, "drop")
    with pytest.raises(ParameterError):
        bin_key_sql("x", 1.0, 0.0, 5, "sqlite")
    with pytest.raises(ParameterError):
        bin_key_sql("x", 0.0, 1.0, 5, "oracle")


@pytest.mark.parametrize("dialect", ["postgresql", "spark", "generic"])
def test_other_dialects_write_their_own_functions(dialect):
    sql = bin_key_sql("col", 0.1, 0.7, 10, dialect)
    assert {"postgresql": "CAST('0.1' AS DOUBLE PRECISION)", "spark": "isnan(CAST(col AS DOUBLE))",
            "generic": "<> CAST(col AS DOUBLE PRECISION)"}[dialect] in sql
    assert "typeof" not in sql
