"""Tests of dpgui.data.table: inspect_table, TableReader (preview rows), count_rows."""

from __future__ import annotations

import gzip
import re
import shutil
import zipfile

import numpy as np
import openpyxl
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

import dpgui.data.readers as R  # noqa: N812 (the modules, as the tests name them)
import dpgui.data.table as T  # noqa: N812
from dpgui.data.table import ColumnInfo, TableInfo, TableReader, count_rows, inspect_table
from dpgui.errors import Cancelled, DataError, ParameterError

N = 3000  # rows of the small tables


def _frame(n: int = N) -> pd.DataFrame:
    """ids, exactly representable floats, text: the same text whatever the format."""
    i = np.arange(n)
    return pd.DataFrame({"id": i, "x": (i % 97) / 8 - 3, "name": [f"n{k}" for k in i]})


def _write(path, frame: pd.DataFrame):
    name = path.name
    if name.endswith(".parquet"):
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=700)
    elif name.endswith(".xlsx"):
        frame.to_excel(path, index=False)
    else:
        text = frame.to_csv(index=False, sep="\t" if ".tsv" in name else ",")
        path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    return path


def _as_text(frame: pd.DataFrame) -> list[list[str]]:
    return frame.astype(str).values.tolist()


FORMATS = ["t.csv", "t.tsv", "t.csv.gz", "t.parquet", "t.xlsx"]


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tables")
    return {name: _write(folder / name, _frame()) for name in FORMATS}


@pytest.fixture(scope="module")
def million_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "million.csv"
    i = np.arange(1_000_000)
    pa_csv.write_csv(pa.table({"id": i, "x": i * 0.5, "name": pa.array(i.astype(str))}), path)
    return path


# ----------------------------------------------------------------- inspect_table


@pytest.mark.parametrize("name", FORMATS)
def test_inspect_table(tables, name):
    info = inspect_table(tables[name])
    assert isinstance(info, TableInfo)
    assert info.format == {"t.csv.gz": "csv"}.get(name, name.split(".")[1])
    assert info.columns == (
        ColumnInfo("id", "numeric", "int64"),
        ColumnInfo("x", "numeric", "float64"),
        ColumnInfo("name", "text", "string"),
    )
    assert info.names == ["id", "x", "name"]
    assert info.size_bytes == tables[name].stat().st_size
    # Exact where cheap: Parquet/Excel always, CSV when the file fits the 1 MiB head.
    assert info.n_rows == (None if name.endswith(".gz") else N)


def test_inspect_agrees_with_list_columns(tables):
    for path in tables.values():
        assert [(c.name, c.kind) for c in inspect_table(path).columns] == R.list_columns(path)


def test_inspect_large_csv_reads_only_its_head(million_csv, monkeypatch):
    """O(1) in the file size: the types come from the first block, and the rows of a CSV larger
    than it are not read (they are counted later, in the background)."""
    streamed: list[object] = []
    monkeypatch.setattr(T, "record_batches", lambda *args, **kwargs: streamed.append(args) or iter(()))
    monkeypatch.setattr(T, "_count_streamed", lambda *args, **kwargs: streamed.append(args) or 0)
    info = inspect_table(million_csv)
    assert streamed == []
    assert info.n_rows is None and info.names == ["id", "x", "name"]


def test_inspect_dtypes_parquet(tmp_path):
    table = pa.table({
        "u": pa.array([1], pa.uint8()), "i": pa.array([1], pa.int8()), "f": pa.array([1], pa.float32()),
        "b": [True], "t": pa.array([0], pa.timestamp("ms")), "e": pa.array([None], pa.null()),
    })
    pq.write_table(table, tmp_path / "d.parquet")
    info = inspect_table(tmp_path / "d.parquet")
    assert [(c.kind, c.dtype) for c in info.columns] == [
        ("numeric", "uint8"), ("numeric", "int8"), ("numeric", "float32"),
        ("boolean", "bool"), ("datetime", "timestamp[ms]"), ("empty", "null"),
    ]


# ----------------------------------------------------------------- TableReader


@pytest.mark.parametrize("name", FORMATS)
def test_read_rows_at_offsets(tables, name, monkeypatch):
    # Small batches and cache, so that reads cross batches and re-open the file.
    monkeypatch.setattr(T, "_PREVIEW_ROWS", 256)
    monkeypatch.setattr(T, "_CACHE_BATCHES", 2)
    monkeypatch.setattr(T, "_PREVIEW_CSV_BLOCK", 1 << 12)
    monkeypatch.setattr(R, "_CSV_PROGRESS_MIN_BLOCK", 1 << 12)
    monkeypatch.setattr(R, "_CSV_MIN_BLOCK", 1 << 12)
    expected = _frame()
    with TableReader(tables[name]) as reader:
        for start, count in [(0, 5), (5, 3), (250, 20), (1000, 700), (2, 2), (N - 3, 10),
                             (1400, 1), (N, 4), (N + 50, 2), (0, 0), (700, 0), (10, N + 5)]:
            got = reader.read_rows(start, count)
            want = expected.iloc[start:start + count]
            assert list(got.columns) == ["id", "x", "name"]
            assert list(got.index) == list(range(start, start + len(want)))
            assert _as_text(got) == _as_text(want), (start, count)
        assert reader.info.n_rows == N  # known once the end was reached (CSV .gz too)


def test_csv_cells_are_the_text_in_the_file(tmp_path):
    path = tmp_path / "raw.csv"
    path.write_text("a,b\n007,x\n,1.50\n3,\n")
    with TableReader(path) as reader:
        got = reader.read_rows(0, 10)
    assert got.values.tolist() == [["007", "x"], ["", "1.50"], ["3", ""]]


def test_sequential_reads_of_a_large_csv(million_csv, monkeypatch):
    opened = []  # each start of a read from the top of the file
    record_batches = T.record_batches
    monkeypatch.setattr(T, "record_batches", lambda *args, **kwargs: (opened.append(args), record_batches(*args, **kwargs))[1])
    with TableReader(million_csv) as reader:
        for start in range(0, 200_000, 1000):  # scrolling down, a page at a time: one pass, never re-read
            page = reader.read_rows(start, 1000)
            assert page["id"].iloc[0] == str(start)
            assert len(reader._cache) <= T._CACHE_BATCHES + 1  # only the last few blocks are kept
        assert reader.read_rows(999_998, 5)["id"].tolist() == ["999998", "999999"]
        assert len(opened) == 1
        assert reader.info.n_rows == 1_000_000
        assert reader.read_rows(3, 1)["name"].tolist() == ["3"]  # backward: re-opened


def test_deleted_file(tmp_path, tables):
    path = shutil.copy(tables["t.csv"], tmp_path / "gone.csv")
    reader = TableReader(path)
    assert len(reader.read_rows(0, 2)) == 2
    path.unlink()
    with pytest.raises(DataError, match=r"the file 'gone.csv' is no longer there.*open it again"):
        reader.read_rows(0, 2)
    reader.close()


@pytest.mark.parametrize("name", ["t.csv", "t.parquet"])
def test_changed_file(tmp_path, tables, name):
    path = shutil.copy(tables[name], tmp_path / name)
    with TableReader(path) as reader:
        reader.read_rows(0, 2)
        _write(path, _frame(10))
        with pytest.raises(DataError, match=rf"the file '{name}' changed since it was opened; open it again"):
            reader.read_rows(0, 2)


def test_closed_reader_and_bad_arguments(tables):
    reader = TableReader(tables["t.parquet"])
    for start, count in [(-1, 2), (0, -2), (1.5, 2), (True, 2), (0, "2")]:
        with pytest.raises(ParameterError):
            reader.read_rows(start, count)
    reader.close()
    reader.close()
    with pytest.raises(DataError, match="closed"):
        reader.read_rows(0, 1)


def test_malformed_csv(tmp_path):
    small = tmp_path / "ragged.csv"
    small.write_text("a,b\n1,2\n3\n")
    with pytest.raises(DataError, match=r"malformed file 'ragged.csv'.*Expected 2 columns"):
        inspect_table(small)  # the whole file is in the head
    # Beyond the 1 MiB head: inspecting works, the row is reported when read.
    large = tmp_path / "late.csv"
    large.write_text("a,b\n" + "1,2\n" * 300_000 + "3\n")
    info = inspect_table(large)
    assert info.names == ["a", "b"] and info.n_rows is None
    with TableReader(large) as reader:
        assert len(reader.read_rows(0, 5)) == 5
        with pytest.raises(DataError, match=r"malformed file 'late.csv' \(after data row [\d,]+\).*Expected 2 columns"):
            reader.read_rows(299_990, 20)
        with pytest.raises(DataError, match="malformed"):  # again, not a short table
            reader.read_rows(299_995, 20)
        assert reader.info.n_rows is None


# ----------------------------------------------------------------- 0 and 1 rows


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("n", [0, 1])
def test_zero_and_one_row_files(tmp_path, name, n):
    path = _write(tmp_path / name, _frame(n))
    info = inspect_table(path)
    assert info.names == ["id", "x", "name"]
    assert info.n_rows == (None if name.endswith(".gz") else n)
    assert count_rows(path) == n
    with TableReader(path) as reader:
        got = reader.read_rows(0, 10)
        assert list(got.columns) == ["id", "x", "name"] and len(got) == n
        assert reader.read_rows(1, 10).empty


@pytest.mark.slow
def test_xlsx_without_size_record(tmp_path, tables):
    # Some writers leave out <dimension>: the rows are then counted.
    source, path = tables["t.xlsx"], tmp_path / "nodim.xlsx"
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(path, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.startswith("xl/worksheets/"):
                data = re.sub(rb"<dimension [^>]*>", b"", data)
            zout.writestr(item, data)
    assert openpyxl.load_workbook(path, read_only=True).worksheets[0].max_row is None
    assert inspect_table(path).n_rows == N
    with TableReader(path) as reader:
        assert _as_text(reader.read_rows(N - 2, 5)) == _as_text(_frame().iloc[N - 2:])


# ----------------------------------------------------------------- count_rows


def test_count_rows_csv_progress_and_cancel(million_csv):
    seen: list[float] = []
    assert count_rows(million_csv, progress=seen.append) == 1_000_000
    assert len(seen) >= 5 and seen == sorted(seen) and seen[-1] == 1.0
    with pytest.raises(Cancelled):
        count_rows(million_csv, should_cancel=lambda: True)


def test_count_rows_blank_lines(tmp_path):
    """One column: a blank line is an empty cell, a row; wider: no fields, not a row."""
    path = tmp_path / "b.csv"
    path.write_text("x\n1\n\n2\n\n")
    assert count_rows(path) == 4
    wide = tmp_path / "w.csv"
    wide.write_text("x,y\n1,1\n\n2,2\n\n")
    assert count_rows(wide) == 2


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "name,content,message",
    [
        ("nope.csv", None, "file not found"),
        ("a.json", b"{}", "unsupported file type"),
        ("e.csv", b"", "is empty"),
        ("p.parquet", b"not parquet", "not a readable Parquet file"),
        ("w.xlsx", b"not a zip", r"not a readable Excel \(.xlsx\) file"),
    ],
)
def test_file_errors(tmp_path, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    for call in (inspect_table, TableReader, count_rows):
        with pytest.raises(DataError, match=message) as err:
            call(path)
        assert "\n" not in str(err.value) and err.value.fix
