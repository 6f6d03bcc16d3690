"""Tests of dpgui.data.histogram and dpgui.data.readers: binning rule, file readers, missing policies, errors."""

from __future__ import annotations

import datetime
import gzip
import math
import sys
import threading
import time

import numpy as np
import openpyxl
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpgui.core.tree import MAX_BINS
from dpgui.data.histogram import (
    ColumnHistogram, column_histogram, values_histogram,
)
from dpgui.data.readers import list_columns
from dpgui.errors import Cancelled, DataError, ParameterError

LOWER, UPPER, BINS = -3.0, 5.0, 16


def _write_csv(path, columns: dict[str, list], sep=",", compress=False):
    names = list(columns)
    n = len(columns[names[0]])
    lines = [sep.join(names)]
    for i in range(n):
        cells = []
        for name in names:
            v = columns[name][i]
            if v is None or (isinstance(v, float) and math.isnan(v)):
                cells.append("")
            elif isinstance(v, (float, np.floating)):
                cells.append(repr(float(v)))
            else:
                cells.append(str(v.item() if isinstance(v, np.generic) else v))
        lines.append(sep.join(cells))
    text = "\n".join(lines) + "\n"
    if compress:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _reference(values: np.ndarray, lower: float, upper: float, bins: int) -> np.ndarray:
    """numpy.histogram on clamped values (clamping = out-of-range into the end bins)."""
    v = values[~np.isnan(values)]
    w = (upper - lower) / bins
    v = np.clip(v, lower, upper - w / 2)  # x >= upper -> inside the last bin
    counts, _ = np.histogram(v, bins=bins, range=(lower, upper))
    return counts


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def values(rng):
    # Mostly in range, some out of range on both sides, some missing.
    v = rng.normal(1.0, 2.5, size=5000)
    v[rng.choice(v.size, 50, replace=False)] = np.nan
    return v


# ----------------------------------------------------------------- values_histogram


def test_values_histogram_matches_numpy_in_range(rng):
    v = rng.uniform(LOWER, UPPER, size=100_000)
    expected, _ = np.histogram(v, bins=BINS, range=(LOWER, UPPER))
    got = values_histogram(v, LOWER, UPPER, BINS)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, expected)


def test_values_histogram_clamps_out_of_range_and_infinities():
    v = np.array([-np.inf, -1e308, -4.0, -3.0, 0.0, 4.999, 5.0, 6.0, 1e308, np.inf])
    got = values_histogram(v, LOWER, UPPER, 8)
    # bin width 1: bin 0 = [-3, -2), bin 7 = [4, 5)
    assert got.sum() == v.size  # nothing dropped
    assert got[0] == 4  # -inf, -1e308, -4, -3
    assert got[3] == 1  # 0.0 in [0, 1)
    assert got[7] == 5  # 4.999, 5, 6, 1e308, inf


def test_values_histogram_edges_are_half_open():
    lower, upper, bins = 0.0, 1.0, 10
    edges = np.linspace(lower, upper, bins + 1)
    # Each interior edge belongs to the bin on its right; the value just below to the left.
    for j in range(1, bins):
        e = edges[j]
        assert values_histogram(np.array([e]), lower, upper, bins)[j] == 1
        below = np.nextafter(e, -np.inf)
        assert values_histogram(np.array([below]), lower, upper, bins)[j - 1] == 1
    just_below_upper = np.nextafter(upper, -np.inf)
    assert values_histogram(np.array([just_below_upper]), lower, upper, bins)[-1] == 1


@pytest.mark.parametrize("bins", [1, 2, 7, 1000, 4096])
def test_computed_edges_match_edge_table(rng, monkeypatch, bins):
    # Above _EDGE_TABLE_MAX bins the edges are recomputed per value: same result.
    import dpgui.data.binning as H  # noqa: N812 (the module, as the tests name it)

    lower, upper = -1.7, 3.3
    edges = np.linspace(lower, upper, bins + 1)
    v = np.concatenate([
        rng.uniform(lower - 1, upper + 1, 20_000),
        edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf), [-np.inf, np.inf],
    ])
    table = values_histogram(v, lower, upper, bins)
    monkeypatch.setattr(H, "_EDGE_TABLE_MAX", 0)
    computed = values_histogram(v, lower, upper, bins)
    np.testing.assert_array_equal(table, computed)
    in_range = v[(v >= lower) & (v < upper)]
    expected, _ = np.histogram(in_range, bins=bins, range=(lower, upper))
    expected[0] += np.count_nonzero(v < lower)
    expected[-1] += np.count_nonzero(v >= upper)
    np.testing.assert_array_equal(table, expected)


def test_values_histogram_one_bin():
    got = values_histogram(np.array([-10.0, 0.5, 10.0]), 0.0, 1.0, 1)
    np.testing.assert_array_equal(got, [3])


def test_values_histogram_refuses_nan():
    with pytest.raises(ParameterError, match="NaN"):
        values_histogram(np.array([1.0, np.nan]), 0.0, 2.0, 2)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=True, width=64), min_size=0, max_size=50),
    st.floats(-1e6, 1e6),
    st.floats(1e-3, 1e6),
    st.integers(1, 300),
)
def test_values_histogram_property(xs, lower, width, bins):
    upper = lower + width
    v = np.array(xs, dtype=np.float64)
    got = values_histogram(v, lower, upper, bins)
    assert got.shape == (bins,)
    assert got.sum() == v.size
    edges = np.linspace(lower, upper, bins + 1)
    # Each value is in the bin whose [edge_j, edge_j+1) contains it, or clamped.
    for x in v:
        if x < lower:
            j = 0
        elif x >= upper:
            j = bins - 1
        else:
            j = int(np.searchsorted(edges, x, side="right")) - 1
            j = min(j, bins - 1)
        single = values_histogram(np.array([x]), lower, upper, bins)
        assert single[j] == 1


# ----------------------------------------------------------------- files: correctness


@pytest.mark.slow
@pytest.mark.parametrize(
    "name,sep,compress",
    [
        ("data.csv", ",", False),
        ("data.tsv", "\t", False),
        ("data.tab", "\t", False),
        ("data.csv.gz", ",", True),
        ("data.tsv.gz", "\t", True),
        ("DATA.CSV", ",", False),
    ],
)
@pytest.mark.parametrize("batch_rows", [1_000_000, 37])
def test_text_files_match_numpy(tmp_path, values, rng, name, sep, compress, batch_rows):
    other = rng.integers(0, 10, size=values.size)
    path = _write_csv(
        tmp_path / name, {"id": list(other), "x": list(values), "label": ["a"] * values.size},
        sep=sep, compress=compress,
    )
    h = column_histogram(path, "x", LOWER, UPPER, BINS, batch_rows=batch_rows)
    assert isinstance(h, ColumnHistogram)
    np.testing.assert_array_equal(h.counts, _reference(values, LOWER, UPPER, BINS))
    assert h.counts.dtype == np.int64
    assert h.n_rows == values.size
    assert h.n_missing == int(np.isnan(values).sum()) == 50
    assert h.total == h.n_rows - h.n_missing
    finite = values[~np.isnan(values)]
    assert h.n_clamped_low == int((finite < LOWER).sum()) > 0
    assert h.n_clamped_high == int((finite >= UPPER).sum()) > 0
    assert (h.lower, h.upper, h.bins, h.missing_policy) == (LOWER, UPPER, BINS, "drop")


def test_csv_multiple_blocks_with_floats_after_integers(tmp_path, rng):
    # Integers in the 1 MiB head, floats much later: the type must not be fixed from the
    # head (pyarrow alone would infer int64 and fail on 1.5).
    n = 600_000
    v = rng.integers(-5, 10, size=n).astype(np.float64)
    v[-3:] = [1.5, 2.25, -0.5]
    path = tmp_path / "ints.csv"
    path.write_text(
        "x\n" + "\n".join(str(int(x)) if x == int(x) else repr(float(x)) for x in v) + "\n"
    )
    h = column_histogram(path, "x", LOWER, UPPER, BINS, batch_rows=100)
    np.testing.assert_array_equal(h.counts, _reference(v, LOWER, UPPER, BINS))
    assert h.n_rows == n


@pytest.mark.parametrize("batch_rows", [1_000_000, 333])
@pytest.mark.parametrize("ext", [".parquet", ".pq"])
def test_parquet_matches_numpy(tmp_path, values, batch_rows, ext):
    mask = np.isnan(values)
    table = pa.table(
        {
            "x": pa.array(values, mask=mask),  # nulls
            "y": pa.array(values),  # float NaN
            "s": pa.array(["t"] * values.size),
        }
    )
    path = tmp_path / f"data{ext}"
    pq.write_table(table, path, row_group_size=1000)
    for col in ("x", "y"):
        h = column_histogram(path, col, LOWER, UPPER, BINS, batch_rows=batch_rows)
        np.testing.assert_array_equal(h.counts, _reference(values, LOWER, UPPER, BINS))
        assert h.n_rows == values.size
        assert h.n_missing == 50


@pytest.mark.parametrize("dtype", [pa.int8(), pa.int32(), pa.uint16(), pa.float32(), pa.decimal128(10, 2)])
def test_parquet_numeric_types(tmp_path, dtype):
    raw = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, None]
    if pa.types.is_decimal(dtype):
        import decimal

        arr = pa.array([None if x is None else decimal.Decimal(x) for x in raw], type=dtype)
    else:
        arr = pa.array(raw, type=dtype)
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"v": arr}), path)
    h = column_histogram(path, "v", 0, 10, 5)
    np.testing.assert_array_equal(h.counts, [2, 2, 2, 2, 2])
    assert h.n_missing == 1


def test_integer_bounds_and_numpy_scalars_accepted(tmp_path):
    path = _write_csv(tmp_path / "a.csv", {"x": [1, 2, 3]})
    h = column_histogram(path, "x", np.int64(0), np.float32(4), np.int32(4))
    np.testing.assert_array_equal(h.counts, [0, 1, 1, 1])
    assert isinstance(h.lower, float) and isinstance(h.bins, int)


def test_counts_read_only(tmp_path):
    path = _write_csv(tmp_path / "a.csv", {"x": [1, 2, 3]})
    h = column_histogram(path, "x", 0, 4, 4)
    with pytest.raises(ValueError):
        h.counts[0] = 5
    np.testing.assert_array_equal(h.edges, [0, 1, 2, 3, 4])
    assert h.bin_width == 1.0


def test_histogram_equality(tmp_path):
    path = _write_csv(tmp_path / "a.csv", {"x": [1, 2, 3]})
    a = column_histogram(path, "x", 0, 4, 4)
    b = column_histogram(path, "x", 0, 4, 4)
    c = column_histogram(path, "x", 0, 4, 2)
    assert a == b and a != c and a != "x"


def test_clamping_counts(tmp_path):
    xs = [-100.0, -3.0000001, -3.0, 0.0, 4.9999, 5.0, 5.0, 1e9, float("inf"), float("-inf")]
    path = _write_csv(tmp_path / "c.csv", {"x": xs})
    h = column_histogram(path, "x", LOWER, UPPER, 8)
    assert h.n_clamped_low == 3  # -100, -3.0000001, -inf
    assert h.n_clamped_high == 4  # 5, 5, 1e9, inf
    assert h.counts[0] == 4  # the three clamped + -3.0
    assert h.counts[-1] == 5  # the four clamped + 4.9999
    assert h.total == len(xs)


# ----------------------------------------------------------------- missing policy


def _with_missing(tmp_path):
    return _write_csv(tmp_path / "m.csv", {"x": [1.0, None, 2.0, float("nan"), 3.0], "k": list("abcde")})


def test_missing_drop(tmp_path):
    h = column_histogram(_with_missing(tmp_path), "x", 0, 4, 4, missing="drop")
    assert (h.n_rows, h.n_missing, h.total) == (5, 2, 3)
    np.testing.assert_array_equal(h.counts, [0, 1, 1, 1])


def test_missing_drop_na_tokens(tmp_path):
    path = tmp_path / "na.csv"
    path.write_text("x\n1\nNA\n\nNaN\nnull\n2\n")
    h = column_histogram(path, "x", 0, 4, 4)
    # In a one-column CSV the blank line is an empty cell: a row with a missing value.
    assert (h.n_rows, h.n_missing, h.total) == (6, 4, 2)


def test_blank_line_in_one_column_csv_is_a_missing_value(tmp_path):
    """A one-column CSV writes an empty cell as a blank line; it is a missing
    value (a row), here, in the row count the window shows and under missing="error". In a wider
    file a blank line has no fields and is not a row."""
    from dpgui.data.table import count_rows, inspect_table

    one = tmp_path / "one.csv"
    one.write_text("x\n7\n\n3\n\n")  # the last blank line before EOF is an empty cell too
    h = column_histogram(one, "x", 0, 10, 2)
    assert (h.n_rows, h.n_missing, h.total) == (4, 2, 2)
    np.testing.assert_array_equal(h.counts, [1, 1])
    assert inspect_table(one).n_rows == 4 and count_rows(one) == 4
    with pytest.raises(DataError, match="missing value at data row 2"):
        column_histogram(one, "x", 0, 10, 2, missing="error")
    tsv = tmp_path / "one.tsv"
    tsv.write_text("x\n\n5\n")
    assert (column_histogram(tsv, "x", 0, 10, 2).n_missing, count_rows(tsv)) == (1, 2)
    wide = tmp_path / "wide.csv"
    wide.write_text("x,y\n7,1\n\n3,2\n")
    h = column_histogram(wide, "x", 0, 10, 2)
    assert (h.n_rows, h.n_missing) == (2, 0) and count_rows(wide) == 2


def test_missing_error_names_row(tmp_path):
    with pytest.raises(DataError, match=r"missing value at data row 2") as err:
        column_histogram(_with_missing(tmp_path), "x", 0, 4, 4, missing="error")
    assert "'x'" in str(err.value) and "m.csv" in str(err.value)


def test_missing_error_parquet_later_batch(tmp_path):
    v = np.arange(100, dtype=np.float64)
    v[73] = np.nan
    path = tmp_path / "m.parquet"
    pq.write_table(pa.table({"x": v}), path)
    with pytest.raises(DataError, match=r"row 74"):
        column_histogram(path, "x", 0, 100, 10, missing="error", batch_rows=10)


def test_missing_error_without_missing_values(tmp_path):
    path = _write_csv(tmp_path / "ok.csv", {"x": [1, 2, 3]})
    h = column_histogram(path, "x", 0, 4, 4, missing="error")
    assert (h.n_missing, h.total, h.missing_policy) == (0, 3, "error")


def test_unknown_missing_policy(tmp_path):
    path = _write_csv(tmp_path / "ok.csv", {"x": [1, 2, 3]})
    with pytest.raises(ParameterError, match="missing-value policy 'impute'"):
        column_histogram(path, "x", 0, 4, 4, missing="impute")


def test_all_values_missing(tmp_path):
    """Read, not refused: refusing when every value is missing would make publishing depend on the
    data; the release counts them in its missing leaf (change) or drops them (add/remove)."""
    path = _write_csv(tmp_path / "allna.csv", {"x": [None, None, None], "k": [1, 2, 3]})
    h = column_histogram(path, "x", 0, 4, 4)
    assert (h.n_rows, h.n_missing, h.total) == (3, 3, 0)
    ppath = tmp_path / "allna.parquet"
    pq.write_table(pa.table({"x": pa.array([None, None], type=pa.float64())}), ppath)
    h = column_histogram(ppath, "x", 0, 4, 4)
    assert (h.n_rows, h.n_missing, h.total) == (2, 2, 0)


# ----------------------------------------------------------------- file errors


def test_file_not_found(tmp_path):
    with pytest.raises(DataError, match=r"file not found.*nope.csv"):
        column_histogram(tmp_path / "nope.csv", "x", 0, 1, 1)
    with pytest.raises(DataError, match="file not found"):
        list_columns(tmp_path / "nope.parquet")


def test_directory(tmp_path):
    d = tmp_path / "dir.csv"
    d.mkdir()
    with pytest.raises(DataError, match="is a directory"):
        column_histogram(d, "x", 0, 1, 1)


def test_unknown_extension(tmp_path):
    path = tmp_path / "data.json"  # (was data.xlsx, which is now supported)
    path.write_text("x\n1\n")
    with pytest.raises(DataError, match=r"unsupported file type.*data\.json.*\.csv.*\.parquet.*\.xlsx"):
        column_histogram(path, "x", 0, 1, 1)


@pytest.mark.parametrize("name", ["empty.csv", "empty.parquet", "empty.tsv"])
def test_empty_file(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"")
    with pytest.raises(DataError, match="is empty"):
        column_histogram(path, "x", 0, 1, 1)


def test_empty_gz_file(tmp_path):
    path = tmp_path / "empty.csv.gz"
    with gzip.open(path, "wb"):
        pass
    with pytest.raises(DataError, match="empty"):
        column_histogram(path, "x", 0, 1, 1)


def test_header_only_csv(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("x,y\n")
    with pytest.raises(DataError, match="no data rows"):
        column_histogram(path, "x", 0, 1, 1)


def test_zero_row_parquet(tmp_path):
    path = tmp_path / "z.parquet"
    pq.write_table(pa.table({"x": pa.array([], type=pa.float64())}), path)
    with pytest.raises(DataError, match="no data rows"):
        column_histogram(path, "x", 0, 1, 1)


def test_not_a_parquet_file(tmp_path):
    path = tmp_path / "fake.parquet"
    path.write_text("x\n1\n2\n")
    with pytest.raises(DataError, match="not a readable Parquet file"):
        column_histogram(path, "x", 0, 1, 1)


def test_ragged_rows(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("a,b,c\n1,2,3\n4,5\n6,7,8\n")
    with pytest.raises(DataError, match=r"malformed file 'ragged.csv'.*Expected 3 columns, got 2") as err:
        column_histogram(path, "a", 0, 10, 2)
    assert "as many fields as the header" in str(err.value)


def test_ragged_row_in_later_block_names_position(tmp_path):
    path = tmp_path / "ragged2.csv"
    # Beyond the 1 MiB head used for type inference, in a later streamed block.
    lines = ["a,b"] + [f"{i},{i}" for i in range(200_000)] + ["1,2,3"] + ["5,5"] * 10
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"after data row [\d,]+\):.*Expected 2 columns, got 3"):
        column_histogram(path, "a", 0, 10, 2, batch_rows=1000)


def test_bad_encoding(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("x,name\n1,caf\xe9\n2,na\xefve\n".encode("latin-1"))
    # The numeric column still reads; the non-UTF-8 column is reported as such.
    h = column_histogram(path, "x", 0, 4, 4)
    assert h.total == 2
    with pytest.raises(DataError, match="not valid UTF-8") as err:
        column_histogram(path, "name", 0, 4, 4)
    assert "'name'" in str(err.value)


def test_column_not_found_lists_columns(tmp_path):
    cols = {f"c{i}": [1, 2] for i in range(12)}
    path = _write_csv(tmp_path / "wide.csv", cols)
    with pytest.raises(DataError, match=r"column 'zzz' not found in 'wide.csv'.*'c0'.*'c9' \(and 2 more\)") as err:
        column_histogram(path, "zzz", 0, 1, 1)
    assert "'c10'" not in str(err.value)
    ppath = tmp_path / "p.parquet"
    pq.write_table(pa.table({"a": [1.0], "b": [2.0]}), ppath)
    with pytest.raises(DataError, match=r"column 'zzz' not found in 'p.parquet'.*choose among its columns: 'a', 'b'"):
        column_histogram(ppath, "zzz", 0, 1, 1)


def test_text_column_not_numeric(tmp_path):
    path = _write_csv(tmp_path / "t.csv", {"name": ["x", "y", "12"], "v": [1, 2, 3]})
    with pytest.raises(DataError, match=r"column 'name' in 't.csv' is not numeric \(inferred type: text") as err:
        column_histogram(path, "name", 0, 1, 1)
    assert "pick a numeric column" in str(err.value)
    ppath = tmp_path / "t.parquet"
    pq.write_table(pa.table({"name": ["1", "2"]}), ppath)  # numeric-looking strings
    with pytest.raises(DataError, match=r"not numeric.*text"):
        column_histogram(ppath, "name", 0, 1, 1)


def test_text_value_late_in_numeric_csv_column(tmp_path):
    path = tmp_path / "late.csv"
    path.write_text("x\n" + "1\n" * 600_000 + "oops\n")  # beyond the 1 MiB head
    with pytest.raises(DataError, match=r"column 'x' in 'late.csv' has a value that is not a number at data row "
                                        r"600,001") as err:
        column_histogram(path, "x", 0, 1, 1, batch_rows=1000)
    assert "oops" not in str(err.value)  # the cell itself is never quoted


def test_datetime_column_not_numeric(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("when,x\n2024-01-01T00:00:00,1\n2024-01-02T00:00:00,2\n")
    with pytest.raises(DataError, match=r"not numeric.*datetime"):
        column_histogram(path, "when", 0, 1, 1)


def test_boolean_column(tmp_path):
    path = tmp_path / "b.csv"
    path.write_text("flag,x\ntrue,1\nfalse,2\n")
    with pytest.raises(DataError, match=r"column 'flag' in 'b.csv' is boolean"):
        column_histogram(path, "flag", 0, 1, 1)
    ppath = tmp_path / "b.parquet"
    pq.write_table(pa.table({"flag": [True, False]}), ppath)
    with pytest.raises(DataError, match="boolean"):
        column_histogram(ppath, "flag", 0, 1, 1)


# ----------------------------------------------------------------- parameter errors


@pytest.fixture
def ok_csv(tmp_path):
    return _write_csv(tmp_path / "ok.csv", {"x": [1, 2, 3]})


@pytest.mark.parametrize("lower,upper", [(float("nan"), 1.0), (0.0, float("inf")), (-math.inf, 0.0)])
def test_bounds_not_finite(ok_csv, lower, upper):
    with pytest.raises(ParameterError, match="not finite"):
        column_histogram(ok_csv, "x", lower, upper, 4)
    with pytest.raises(ParameterError, match="not finite"):
        values_histogram(np.array([1.0]), lower, upper, 4)


@pytest.mark.parametrize("lower,upper", [(5.0, 1.0), (2.0, 2.0)])
def test_bounds_inverted(ok_csv, lower, upper):
    with pytest.raises(ParameterError, match="bounds inverted"):
        column_histogram(ok_csv, "x", lower, upper, 4)


@pytest.mark.parametrize("lower,upper", [("0", 1.0), (0.0, None), (True, 2.0)])
def test_bounds_not_numbers(ok_csv, lower, upper):
    with pytest.raises(ParameterError, match="not a number"):
        column_histogram(ok_csv, "x", lower, upper, 4)


def test_bounds_too_wide(ok_csv):
    with pytest.raises(ParameterError, match="too far apart"):
        column_histogram(ok_csv, "x", -1e308, 1e308, 4)


@pytest.mark.parametrize("bins", [0, -3, 2.5, 4.0, "8", None, True])
def test_bins_invalid(ok_csv, bins):
    with pytest.raises(ParameterError, match="number of bins"):
        column_histogram(ok_csv, "x", 0, 4, bins)


def test_bins_too_many(ok_csv):
    with pytest.raises(ParameterError, match=r"too many bins.*maximum is 67,108,864"):
        column_histogram(ok_csv, "x", 0, 4, MAX_BINS + 1)


def test_max_bins_allowed():
    counts = values_histogram(np.array([0.0, 0.5, 1.0]), 0.0, 1.0, MAX_BINS)
    assert counts.size == MAX_BINS and counts.sum() == 3
    assert counts[0] == 1 and counts[MAX_BINS // 2] == 1 and counts[-1] == 1


@pytest.mark.parametrize("batch_rows", [0, -1, 1.5])
def test_batch_rows_invalid(ok_csv, batch_rows):
    with pytest.raises(ParameterError, match="batch_rows"):
        column_histogram(ok_csv, "x", 0, 4, 4, batch_rows=batch_rows)


def test_parameter_errors_checked_before_file(tmp_path):
    # A bad parameter is reported even if the file is also missing.
    with pytest.raises(ParameterError, match="bounds inverted"):
        column_histogram(tmp_path / "nope.csv", "x", 1, 0, 4)


def test_error_messages_are_one_line(tmp_path, ok_csv):
    path = tmp_path / "ragged.csv"
    path.write_text("a,b\n1,2\n3\n")
    for call in (
        lambda: column_histogram(path, "a", 0, 1, 1),
        lambda: column_histogram(ok_csv, "nope", 0, 1, 1),
        lambda: column_histogram(ok_csv, "x", 1, 0, 1),
    ):
        with pytest.raises((DataError, ParameterError)) as err:
            call()
        assert "\n" not in str(err.value)
        assert err.value.fix  # every error says how to fix it


# ----------------------------------------------------------------- list_columns


def test_list_columns_csv(tmp_path):
    path = tmp_path / "mixed.tsv"
    path.write_text("n\ts\tb\td\te\n1.5\tx\ttrue\t2024-01-01\t\n2\ty\tfalse\t2024-01-02\t\n")
    assert list_columns(path) == [
        ("n", "numeric"),
        ("s", "text"),
        ("b", "boolean"),
        ("d", "datetime"),
        ("e", "empty"),
    ]


def test_list_columns_parquet(tmp_path):
    path = tmp_path / "m.parquet"
    table = pa.table(
        {
            "i": pa.array([1], type=pa.int16()),
            "f": [1.0],
            "s": ["a"],
            "c": pa.array(["a"]).dictionary_encode(),
            "b": [True],
            "t": pa.array([0], type=pa.timestamp("s")),
        }
    )
    pq.write_table(table, path)
    assert list_columns(path) == [
        ("i", "numeric"),
        ("f", "numeric"),
        ("s", "text"),
        ("c", "text"),
        ("b", "boolean"),
        ("t", "datetime"),
    ]


def test_list_columns_reads_only_the_head(tmp_path):
    # A malformed row far beyond the head does not stop list_columns.
    path = tmp_path / "big.csv"
    path.write_text("x,y\n" + "1,2\n" * 400_000 + "1,2,3\n")
    assert list_columns(path) == [("x", "numeric"), ("y", "numeric")]


# ----------------------------------------------------------------- Excel (.xlsx)


def _frame_with_missing(values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"id": np.arange(values.size), "x": values, "label": ["a"] * values.size})


@pytest.mark.slow
def test_xlsx_histogram_equals_csv(tmp_path, values):
    frame = _frame_with_missing(values[:2000])
    frame.to_excel(tmp_path / "d.xlsx", index=False)
    frame.to_csv(tmp_path / "d.csv", index=False)
    for batch_rows in (1_000_000, 37):
        from_xlsx = column_histogram(tmp_path / "d.xlsx", "x", LOWER, UPPER, BINS, batch_rows=batch_rows)
        assert from_xlsx == column_histogram(tmp_path / "d.csv", "x", LOWER, UPPER, BINS)
    assert from_xlsx.n_missing == int(np.isnan(values[:2000]).sum()) > 0
    ints = column_histogram(tmp_path / "d.xlsx", "id", 0, 2000, 10)
    np.testing.assert_array_equal(ints.counts, [200] * 10)


def test_xlsx_list_columns_first_sheet(tmp_path):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["n", "s", "b", "when", None, "mixed"])
    sheet.append([1.5, "x", True, datetime.datetime(2024, 1, 1), None, 1])
    sheet.append([2, "y", False, datetime.datetime(2024, 1, 2), None, True])
    book.create_sheet("second").append(["other"])
    book.save(tmp_path / "m.xlsx")
    assert list_columns(tmp_path / "m.xlsx") == [
        ("n", "numeric"), ("s", "text"), ("b", "boolean"), ("when", "datetime"),
        ("Unnamed: 4", "empty"), ("mixed", "text"),  # a number and a yes/no: not numeric
    ]


def test_xlsx_not_numeric_errors(tmp_path):
    frame = pd.DataFrame({"name": ["x", "y"], "flag": [True, False], "when": pd.to_datetime(["2024-01-01"] * 2)})
    frame.to_excel(tmp_path / "t.xlsx", index=False)
    with pytest.raises(DataError, match=r"column 'name' in 't.xlsx' is not numeric \(inferred type: text"):
        column_histogram(tmp_path / "t.xlsx", "name", 0, 1, 1)
    with pytest.raises(DataError, match=r"column 'flag' in 't.xlsx' is boolean"):
        column_histogram(tmp_path / "t.xlsx", "flag", 0, 1, 1)
    with pytest.raises(DataError, match=r"not numeric.*datetime"):
        column_histogram(tmp_path / "t.xlsx", "when", 0, 1, 1)
    with pytest.raises(DataError, match=r"column 'zzz' not found in 't.xlsx'.*'name', 'flag', 'when'"):
        column_histogram(tmp_path / "t.xlsx", "zzz", 0, 1, 1)


@pytest.mark.parametrize("bad", ["oops", True])
def test_xlsx_late_non_numeric_cell_names_row(tmp_path, bad):
    # Beyond the ~1,000 rows used for type inference, and in a later batch.
    pd.DataFrame({"x": [1.0] * 1500 + [bad] + [2.0]}).to_excel(tmp_path / "late.xlsx", index=False)
    with pytest.raises(DataError, match=r"column 'x' in 'late.xlsx' has a value that is not a number at data row "
                                        r"1,501") as err:
        column_histogram(tmp_path / "late.xlsx", "x", 0, 4, 4, batch_rows=100)
    assert "clean the column" in str(err.value) and str(bad) not in str(err.value)


def test_xlsx_not_a_workbook(tmp_path):
    path = tmp_path / "fake.xlsx"
    path.write_text("x\n1\n2\n")
    with pytest.raises(DataError, match=r"'fake.xlsx' is not a readable Excel \(.xlsx\) file"):
        column_histogram(path, "x", 0, 1, 1)


def test_xlsx_header_only_and_blank_sheet(tmp_path):
    book = openpyxl.Workbook()
    book.active.append(["x"])
    book.save(tmp_path / "h.xlsx")
    with pytest.raises(DataError, match="no data rows"):
        column_histogram(tmp_path / "h.xlsx", "x", 0, 1, 1)
    openpyxl.Workbook().save(tmp_path / "blank.xlsx")
    with pytest.raises(DataError, match=r"'blank.xlsx' is empty"):
        list_columns(tmp_path / "blank.xlsx")


# ----------------------------------------------------------------- progress and cancel


@pytest.fixture(scope="module")
def million_csv(tmp_path_factory):
    """A 10**6-row CSV (~20 MB) written once for the module."""
    rng = np.random.default_rng(7)
    path = tmp_path_factory.mktemp("big") / "million.csv"
    table = pa.table({"id": np.arange(1_000_000), "x": np.round(rng.normal(1, 2.5, 1_000_000), 4)})
    pa_csv.write_csv(table, path)
    return path


def test_progress_csv_default_settings(million_csv):
    seen: list[float] = []
    h = column_histogram(million_csv, "x", LOWER, UPPER, BINS, progress=seen.append)
    assert h.n_rows == 1_000_000
    assert len(seen) >= 5
    assert seen == sorted(seen) and 0 < seen[0] < 1 and seen[-1] == 1.0
    assert all(0.0 <= f <= 1.0 for f in seen)


@pytest.mark.slow
@pytest.mark.parametrize("ext", [".parquet", ".xlsx", ".csv.gz"])
def test_progress_other_formats(tmp_path, values, ext):
    frame = _frame_with_missing(values[:3000])
    path = tmp_path / f"p{ext}"
    if ext == ".parquet":
        pq.write_table(pa.Table.from_pandas(frame), path, row_group_size=500)
    elif ext == ".xlsx":
        frame.to_excel(path, index=False)
    else:
        frame.to_csv(path, index=False)
    seen: list[float] = []
    column_histogram(path, "x", LOWER, UPPER, BINS, batch_rows=500, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0
    assert len(seen) >= (7 if ext != ".csv.gz" else 2)


def test_cancel_is_prompt(million_csv):
    asked: list[int] = []
    seen: list[float] = []

    def should_cancel() -> bool:
        asked.append(1)
        return len(asked) >= 3

    with pytest.raises(Cancelled, match="reading was cancelled"):
        column_histogram(million_csv, "x", LOWER, UPPER, BINS, progress=seen.append, should_cancel=should_cancel)
    assert len(asked) == 3 and len(seen) == 2 and seen[-1] < 0.5  # stopped at the third block of 16 or more


@pytest.mark.parametrize("kind", ["parquet", "xlsx"])
def test_cancel_other_formats(tmp_path, kind):
    frame = _frame_with_missing(np.arange(1000.0))
    path = tmp_path / f"c.{kind}"
    frame.to_parquet(path) if kind == "parquet" else frame.to_excel(path, index=False)
    with pytest.raises(Cancelled):
        column_histogram(path, "x", 0, 1, 1, should_cancel=lambda: True)


def test_callbacks_must_be_callable(ok_csv):
    with pytest.raises(ParameterError, match="progress"):
        column_histogram(ok_csv, "x", 0, 4, 4, progress=0.5)
    with pytest.raises(ParameterError, match="should_cancel"):
        column_histogram(ok_csv, "x", 0, 4, 4, should_cancel=True)


def test_reading_leaves_the_gil_to_other_threads(million_csv):
    """A GUI thread stays responsive while a worker thread reads because pyarrow parses each block
    without the GIL. Checked as a rule, not a time: with the interpreter's forced thread switches
    off (a switch interval of 1000 s), another thread can run in the middle of the read only when
    the reader lets go of the GIL itself; a reader that kept it would allow no turn between its
    first and last block."""
    turns = [0]  # times this thread got the GIL back while the worker was reading
    at_progress: list[int] = []  # turns so far, at each of the worker's progress reports
    worker = threading.Thread(target=column_histogram, args=(million_csv, "x", LOWER, UPPER, BINS),
                              kwargs={"progress": lambda fraction: at_progress.append(turns[0])})
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        worker.start()
        while worker.is_alive():
            time.sleep(0.0005)  # lets go of the GIL; returns when the worker lets go of it
            turns[0] += 1
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert len(at_progress) >= 16  # the file is read in at least 16 blocks
    assert at_progress[-2] > at_progress[0], at_progress  # this thread ran between the first and last block


def test_decimal_and_large_integer_values_become_their_nearest_double(tmp_path):
    """Decimals (Arrow's own cast is one ulp off on some) and int64 beyond 2**53 are binned as their
    nearest double — what a database's or Spark's CAST(x AS DOUBLE) gives — not refused or misrounded."""
    import decimal

    from dpgui.data.readers import float64_values

    codes = list(range(-5000, 5000)) + [123_456_789_012, -987_654_321_098]
    values = [decimal.Decimal(c).scaleb(-3) for c in codes]
    x, n_missing = float64_values(pa.array(values + [None], type=pa.decimal128(15, 3)))
    assert n_missing == 1
    assert x[:-1].tolist() == [float(v) for v in values]  # correctly rounded, every one
    big = [2**53 + 1, -(2**53) - 3, 2**63 - 1]
    x, _ = float64_values(pa.array(big, type=pa.int64()))
    assert x.tolist() == [float(v) for v in big]
    path = tmp_path / "dec.parquet"
    pq.write_table(pa.table({"d": pa.array(values, type=pa.decimal128(15, 3))}), path)
    h = column_histogram(path, "d", -0.5, 0.5, 1000)
    assert h.counts.tolist() == values_histogram([float(v) for v in values], -0.5, 0.5, 1000).tolist()
