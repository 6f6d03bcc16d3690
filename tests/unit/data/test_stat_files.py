"""Tests of the Stata/SAS/SPSS readers (dpgui.data.stat_files, through the readers' one dispatch point).

Counts are compared with those of the same values written as Parquet (the reference path): every
ColumnHistogram field, both missing policies. Files are written by pyreadstat's writers; the SAS7BDAT
file is a real one shipped by the R package haven (tests/unit/data/fixtures/README.md).
"""

from __future__ import annotations

import pathlib
import shutil

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pyreadstat
import pytest

from dpgui.data.file_source import FileSource
from dpgui.data.file_types import FILE_TYPE_NAMES, TABLE_FILTER, format_of_name
from dpgui.data.hierarchy import count_paths
from dpgui.data.histogram import column_histogram, values_histogram
from dpgui.data.readers import list_columns, record_batches, table_schema
from dpgui.data.source_spec import SourceSpec
from dpgui.data.table import TableReader, count_rows, inspect_table
from dpgui.errors import DataError

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
IRIS = FIXTURES / "iris.sas7bdat"

# (lower, upper, bins) of the comparisons: a coarse grid whose edges include 0, and a fine one.
GRIDS = [(-1.5, 2.0, 7), (-3.0, 1000.0, 65_536), (0.1, 0.30000000000000004, 3)]
IBM_TINY = 5.4e-79  # smallest normal IBM (SAS transport) float: below it the format stores 0


def _adversarial(fmt: str) -> np.ndarray:
    """Values on and next to the bin edges of every grid (``np.nextafter`` both ways), out of the
    bounds both sides, large integers, NaN; ±inf where the format stores it (SPSS, SAS transport)."""
    parts = []
    for lo, hi, k in GRIDS:
        e = np.linspace(lo, hi, k + 1)[:: max(1, k // 64)]  # ≤ ~65 edges of each grid
        parts += [e, np.nextafter(e, -np.inf), np.nextafter(e, np.inf)]
    big = 1.0e74 if fmt == "xpt" else 8.0e307  # large magnitudes the formats (and their writers) hold
    parts.append(np.array([0.1, 1 / 3, -1e30, 1e30, 2.0**53, -(2.0**53) + 1, 2.0**31 - 1, -(2.0**31), big, -big,
                           np.nan, 5.0, np.nan]))
    if fmt in ("sav", "zsav", "xpt"):
        parts.append(np.array([np.inf, -np.inf]))
    rng = np.random.default_rng(16)
    parts.append(rng.normal(0.5, 2.0, 500))
    v = np.concatenate(parts)
    v[rng.choice(len(v), 20, replace=False)] = np.nan
    return v


def _write_stat(path: pathlib.Path, frame: pd.DataFrame, **kwargs) -> None:
    fmt = path.suffix[1:]
    if fmt == "dta":
        pyreadstat.write_dta(frame, path, **kwargs)
    elif fmt in ("sav", "zsav"):
        pyreadstat.write_sav(frame, path, compress=fmt == "zsav", **kwargs)
    else:
        pyreadstat.write_xport(frame, path, file_format_version=5, **kwargs)


def _stored(fmt: str, v: np.ndarray) -> np.ndarray:
    """The values as the format stores them: IBM floats (SAS transport) hold no subnormal (→ 0)."""
    if fmt == "xpt":
        return np.where(np.abs(v) < IBM_TINY, 0.0, v)
    return v


@pytest.fixture(params=["dta", "sav", "zsav", "xpt"])
def twins(request, tmp_path):
    """A statistical file and a Parquet file holding the same values; columns x (with missing values)
    and y (without)."""
    fmt = request.param
    x = _adversarial(fmt)
    y = np.where(np.isnan(x), 0.25, x)
    stat = tmp_path / f"data.{fmt}"
    _write_stat(stat, pd.DataFrame({"x": x, "y": y}))
    stored = pd.DataFrame({"x": _stored(fmt, x), "y": _stored(fmt, y)})
    read = {"dta": pyreadstat.read_dta, "sav": pyreadstat.read_sav, "zsav": pyreadstat.read_sav,
            "xpt": pyreadstat.read_xport}[fmt]
    frame, _ = read(str(stat))
    # The writer kept the values (the format's own rounding aside): the comparison is on the same data.
    np.testing.assert_array_equal(frame["x"].to_numpy(), stored["x"].to_numpy())
    parquet = tmp_path / "data.parquet"
    pq.write_table(pa.Table.from_pandas(stored, preserve_index=False), parquet, row_group_size=97)
    return stat, parquet


@pytest.mark.slow
@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("batch_rows", [13, 1_000_000])
def test_histogram_equals_parquet_drop(twins, grid, batch_rows):
    stat, parquet = twins
    lo, hi, k = grid
    for column in ("x", "y"):
        got = column_histogram(stat, column, lo, hi, k, "drop", batch_rows=batch_rows)
        want = column_histogram(parquet, column, lo, hi, k, "drop")
        assert got == want, column
        assert got.n_rows > 500
    assert column_histogram(stat, "x", lo, hi, k).n_missing >= 20


def test_histogram_missing_error_policy(twins):
    stat, parquet = twins
    lo, hi, k = GRIDS[0]
    with pytest.raises(DataError) as got:
        column_histogram(stat, "x", lo, hi, k, "error", batch_rows=50)
    with pytest.raises(DataError) as want:
        column_histogram(parquet, "x", lo, hi, k, "error")
    assert str(got.value).replace(stat.name, "F") == str(want.value).replace(parquet.name, "F")
    assert "missing value at data row" in str(got.value)
    # A column without missing values: the same counts under "error".
    assert column_histogram(stat, "y", lo, hi, k, "error") == column_histogram(parquet, "y", lo, hi, k, "error")


def test_user_and_extended_missing_values_are_missing(tmp_path):
    # Stata extended missing .a/.z, SPSS user-missing values (a discrete value and a range).
    dta = tmp_path / "m.dta"
    pyreadstat.write_dta(pd.DataFrame({"x": [1.0, np.nan, "a", 3.0, "z"]}, dtype=object), dta,
                         missing_user_values={"x": ["a", "z"]})
    h = column_histogram(dta, "x", 0, 4, 4)
    assert (h.n_rows, h.n_missing, h.counts.tolist()) == (5, 3, [0, 1, 0, 1])
    sav = tmp_path / "m.sav"
    pyreadstat.write_sav(pd.DataFrame({"x": [1.0, np.nan, 99.0, 3.0, -9.0]}), sav,
                         missing_ranges={"x": [99.0, {"lo": -10.0, "hi": -5.0}]})
    h = column_histogram(sav, "x", 0, 4, 4)
    assert (h.n_rows, h.n_missing, h.counts.tolist()) == (5, 3, [0, 1, 0, 1])
    with pytest.raises(DataError, match="missing value at data row 2"):
        column_histogram(sav, "x", 0, 4, 4, "error")


def test_sas7bdat_fixture():
    info = inspect_table(IRIS)
    assert info.format == "sas7bdat" and info.n_rows == 150
    assert [(c.name, c.kind, c.dtype) for c in info.columns] == [
        ("Sepal_Length", "numeric", "float64"), ("Sepal_Width", "numeric", "float64"),
        ("Petal_Length", "numeric", "float64"), ("Petal_Width", "numeric", "float64"),
        ("Species", "text", "string")]
    assert count_rows(IRIS) == 150
    reference = pd.read_sas(IRIS, format="sas7bdat", encoding="infer")  # pandas' own SAS7BDAT reader
    for column, (lo, hi, k) in [("Sepal_Length", (4.0, 8.0, 16)), ("Petal_Width", (0.0, 2.5, 5)),
                                ("Petal_Length", (1.0, 6.0, 1000))]:
        h = column_histogram(IRIS, column, lo, hi, k, batch_rows=40)
        assert (h.n_rows, h.n_missing) == (150, 0)
        np.testing.assert_array_equal(h.counts, values_histogram(reference[column].to_numpy(), lo, hi, k))
    with TableReader(IRIS) as reader:
        rows = reader.read_rows(48, 4)
    assert rows["Species"].tolist() == ["setosa", "setosa", "versic", "versic"]  # 6 characters in this file
    assert rows["Sepal_Length"].tolist() == reference["Sepal_Length"][48:52].tolist()
    with pytest.raises(DataError, match=r"a value of level 'Petal_Width' appears under two parents of level 'Species'"):
        count_paths(IRIS, ["Species", "Petal_Width"])  # iris is no tree: the whole file was read and checked
    with pytest.raises(DataError, match=r"'Species'.*not numeric"):
        column_histogram(IRIS, "Species", 0, 1, 2)


@pytest.mark.parametrize("fmt", ["dta", "sav"])
def test_value_labels_in_preview_codes_in_counts(tmp_path, fmt):
    path = tmp_path / f"labels.{fmt}"
    frame = pd.DataFrame({"sex": [1.0, 2.0, 1.0, 3.0, np.nan, 2.0], "region": ["n", "s", "n", "s", "n", "s"],
                          "w": [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]})
    _write_stat(path, frame, variable_value_labels={"sex": {1: "Male", 2: "Female"}})
    info = inspect_table(path)
    assert info.columns[0].value_labels == {1.0: "Male", 2.0: "Female"}
    assert info.columns[2].value_labels is None
    expected = ["1 (Male)", "2 (Female)", "1 (Male)", "3", None, "2 (Female)"]
    with TableReader(path) as reader:
        assert reader.read_rows(0, 10)["sex"].tolist() == expected
        assert reader.read_rows(3, 2)["sex"].tolist() == expected[3:5]
    assert FileSource(SourceSpec("file", str(path))).preview(10)["sex"].tolist() == expected
    h = column_histogram(path, "sex", 1, 4, 3)  # the codes are counted
    assert (h.counts.tolist(), h.n_missing) == ([2, 2, 1], 1)
    # A labelled level column: its codes are the labels.
    frame2 = frame.fillna(1.0)
    path2 = tmp_path / f"labels2.{fmt}"
    _write_stat(path2, frame2.assign(sub=frame2["sex"] * 10), variable_value_labels={"sex": {1: "Male", 2: "Female"}})
    counted = count_paths(path2, ["sex", "sub"])
    assert dict(zip(counted.paths, counted.counts.tolist())) == {("1", "10"): 3, ("2", "20"): 2, ("3", "30"): 1}


def test_file_source_and_encoding(tmp_path):
    path = tmp_path / "l.xpt"
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0] * 10, "s": ["café", "b", "c"] * 10})
    pyreadstat.write_xport(frame, path, file_format_version=5)
    raw = path.read_bytes()
    assert raw.count("café".encode()) == 10
    path.write_bytes(raw.replace("café".encode(), "caf\xe9 ".encode("latin-1")))  # Latin-1 text, same width
    for read in (lambda: inspect_table(path), lambda: FileSource(SourceSpec("file", str(path))),
                 lambda: list_columns(path)):
        with pytest.raises(DataError) as err:
            read()
        message = str(err.value)
        assert "\n" not in message and "'l.xpt'" in message and "--encoding latin1" in message
    source = FileSource(SourceSpec("file", str(path), encoding="latin1"))
    assert source.preview(3)["s"].tolist() == ["café", "b", "c"]
    assert source.row_count() == 30
    assert source.histogram("x", 0, 4, 4).counts.tolist() == [0, 10, 10, 10]
    with pytest.raises(DataError, match="encoding 'no-such-code' is not known"):
        inspect_table(path, encoding="no-such-code")
    # What ReadStat does with an explicit wrong encoding: the invalid byte is dropped, silently (the
    # module's docstring says the preview is where this shows).
    assert FileSource(SourceSpec("file", str(path), encoding="utf-8")).preview(1)["s"].tolist() == ["caf"]
    # A real SAS7BDAT file (WINDOWS-1252) read with an encoding pyreadstat does not know, or one its
    # text is not valid in (UTF-32: every 4 bytes one character).
    with pytest.raises(DataError, match="is not known"):
        FileSource(SourceSpec("file", str(IRIS), encoding="no-such-code"))
    with pytest.raises(DataError) as err:
        FileSource(SourceSpec("file", str(IRIS), encoding="UTF-32"))
    assert str(err.value).startswith("'iris.sas7bdat' holds text that is not valid in the encoding 'UTF-32'")
    assert "give its encoding, e.g. --encoding latin1" in str(err.value)
    assert FileSource(SourceSpec("file", str(IRIS), encoding="cp1252")).preview(1)["Species"].tolist() == ["setosa"]


def test_truncated_dta(tmp_path):
    path = tmp_path / "t.dta"
    pyreadstat.write_dta(pd.DataFrame({"x": np.arange(3000.0), "s": ["abc"] * 3000}), path)
    whole = path.read_bytes()
    cut = tmp_path / "cut.dta"
    # Cut in the header, the variable descriptions, the rows, and just before the (empty) value labels.
    for size in (10, 100, len(whole) // 2, int(len(whole) * 0.9), len(whole) - 40):
        cut.write_bytes(whole[:size])
        for read in (lambda: column_histogram(cut, "x", 0, 3000, 10), lambda: count_rows(cut),
                     lambda: TableReader(cut).read_rows(0, 5000), lambda: FileSource(SourceSpec("file", str(cut)))):
            with pytest.raises(DataError) as err:
                read()
            message = str(err.value)
            assert "\n" not in message and "'cut.dta'" in message, size
            assert "the file is damaged or truncated" in message and "export it again from Stata" in message


@pytest.mark.parametrize("fmt", ["dta", "sav", "xpt"])
def test_no_data_rows(tmp_path, fmt):
    path = tmp_path / f"empty.{fmt}"
    _write_stat(path, pd.DataFrame({"x": np.array([], dtype=float)}))
    with pytest.raises(DataError, match="has no data rows"):
        column_histogram(path, "x", 0, 1, 2)
    assert count_rows(path) == 0


def test_asks_pyreadstat_for_chunks(tmp_path, monkeypatch):
    """The rule behind "memory independent of rows": every read of data rows is one pyreadstat call
    with a row limit ≤ batch_rows and only the asked columns."""
    path = tmp_path / "wide.dta"
    pyreadstat.write_dta(pd.DataFrame({"x": np.arange(1000.0), "y": np.arange(1000.0) * 2, "s": ["t"] * 1000}), path)
    calls = []
    real = pyreadstat.read_dta

    def watched(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(pyreadstat, "read_dta", watched)
    fractions: list[float] = []
    h = column_histogram(path, "y", 0, 2000, 8, batch_rows=100, progress=fractions.append)
    assert h.counts.tolist() == [125] * 8
    data_calls = [c for c in calls if not c.get("metadataonly") and c.get("row_limit", 0) > 1]
    assert len(data_calls) == 10
    assert all(c["row_limit"] <= 100 and c["usecols"] == ["y"] for c in data_calls)
    assert [c["row_offset"] for c in data_calls] == list(range(0, 1000, 100))
    assert all(c.get("row_limit") for c in calls if not c.get("metadataonly"))  # never the whole file
    assert fractions == sorted(fractions) and fractions[0] == pytest.approx(0.1) and fractions[-1] == 1.0


def test_xpt_progress_without_row_count(tmp_path):
    path = tmp_path / "p.xpt"
    pyreadstat.write_xport(pd.DataFrame({"x": np.arange(500.0)}), path, file_format_version=8)
    assert table_schema(path, "xpt")[1] is None  # transport files do not record it
    fractions = [f for _, f in record_batches(path, "xpt", ["x"], 50)]
    assert len(fractions) == 10 and fractions == sorted(fractions) and fractions[0] > 0 and fractions[-1] <= 1.0
    assert count_rows(path) == 500


def test_file_types_list_the_formats(tmp_path):
    assert [format_of_name(n) for n in ("a.DTA", "b.sas7bdat", "c.XPT", "d.sav", "e.zsav")] == [
        "dta", "sas7bdat", "xpt", "sav", "sav"]
    for words in ("Stata (.dta)", "SAS (.sas7bdat)", "SAS transport (.xpt)", "SPSS (.sav)"):
        assert words in FILE_TYPE_NAMES
    assert "*.zsav" in TABLE_FILTER
    copy = tmp_path / "IRIS.SAS7BDAT"
    shutil.copy(IRIS, copy)
    assert inspect_table(copy).format == "sas7bdat"


def test_preview_jumps_to_the_chunk_holding_a_row(tmp_path, monkeypatch):
    path = tmp_path / "long.dta"
    n = 20_000
    pyreadstat.write_dta(pd.DataFrame({"i": np.arange(n, dtype=float), "s": [f"r{k}" for k in range(n)]}), path)
    offsets = []
    real = pyreadstat.read_dta

    def watched(*args, **kwargs):
        if not kwargs.get("metadataonly") and kwargs.get("row_limit", 0) > 1:
            offsets.append(kwargs["row_offset"])
        return real(*args, **kwargs)

    monkeypatch.setattr(pyreadstat, "read_dta", watched)
    with TableReader(path) as reader:
        assert reader.read_rows(17_000, 3)["s"].tolist() == ["r17000", "r17001", "r17002"]
        assert reader.read_rows(5, 2)["i"].tolist() == [5.0, 6.0]
        assert reader.read_rows(19_998, 5)["s"].tolist() == ["r19998", "r19999"]
    assert offsets == [16_384, 0, 16_384]  # the chunk of 8,192 rows holding the row, never the rows before it
    assert hash(inspect_table(path).columns[0]) is not None


def test_stata_integer_storage_is_public_whole_number_information(tmp_path):
    from dpgui.data.public_bounds import suggest_from_type, whole_number_reason

    path = tmp_path / "ints.dta"
    pyreadstat.write_dta(pd.DataFrame({"age": np.array([30, 41, 99], dtype=np.int32),
                                       "small": np.array([1, -5, 100], dtype=np.int8),
                                       "w": [1.5, 2.0, 3.0]}), path)
    columns = {c.name: c for c in inspect_table(path).columns}
    assert columns["age"].dtype.startswith("int") and columns["w"].dtype == "float64"
    assert "whole numbers" in (whole_number_reason(columns["age"], "dta", None) or "")
    assert whole_number_reason(columns["w"], "dta", None) is None
    assert column_histogram(path, "age", 0, 100, 4).counts.tolist() == [0, 2, 0, 1]
    assert suggest_from_type(columns["w"]) is None
