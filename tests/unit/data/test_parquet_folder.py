"""A folder of Parquet files read as one table: the same counts, rows and preview as the one file
holding the files' rows one after the other; hive partitions; folders that cannot be read."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpgui.data.file_source import FileSource
from dpgui.data.hierarchy import count_paths
from dpgui.data.histogram import column_histogram
from dpgui.data.parquet_files import parquet_row_group_sizes
from dpgui.data.readers import check_table_file, list_columns
from dpgui.data.source_spec import SourceSpec
from dpgui.data.table import TableReader, count_rows, inspect_table
from dpgui.errors import DataError


def _table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    x = rng.normal(5.0, 4.0, size=n)
    x[::17] = np.nan
    edges = np.linspace(0.0, 10.0, 8)
    x[1:8] = edges[:7]  # values on the edges and their ulp neighbours
    x[8:15] = np.nextafter(edges[:7], -np.inf)
    x[15] = np.inf
    x[16] = -np.inf
    mask = np.zeros(n, dtype=bool)
    mask[::23] = True  # nulls too
    region = np.where(rng.random(n) < 0.4, "north", "south")
    city = np.array([f"{r}-{k}" for r, k in zip(region, rng.integers(0, 5, size=n))])
    return pa.table({"x": pa.array(x, mask=mask), "region": region, "city": city})


@pytest.fixture(scope="module")
def parts():
    return [_table(1000, 1), _table(2500, 2), _table(700, 3)]


@pytest.fixture(scope="module")
def folder(tmp_path_factory, parts):
    root = tmp_path_factory.mktemp("folder")
    data = root / "data"
    data.mkdir()
    for i, part in enumerate(parts):
        pq.write_table(part, data / f"part-{i}.parquet", row_group_size=400)
    # What Spark writes beside its parts: skipped.
    (data / "_SUCCESS").write_bytes(b"")
    (data / ".part-0.parquet.crc").write_bytes(b"crc")
    whole = root / "whole.parquet"
    pq.write_table(pa.concat_tables(parts), whole, row_group_size=400)
    return data, whole


def test_folder_counts_equal_the_concatenated_file(folder):
    data, whole = folder
    for lower, upper, bins in [(0.0, 10.0, 7), (-3.0, 12.0, 64)]:
        expected = column_histogram(whole, "x", lower, upper, bins)
        got = column_histogram(data, "x", lower, upper, bins)
        assert got == expected
        assert got.counts.tolist() == expected.counts.tolist()
        assert (got.n_rows, got.n_missing, got.n_clamped_low, got.n_clamped_high) == (
            expected.n_rows, expected.n_missing, expected.n_clamped_low, expected.n_clamped_high)
    assert expected.n_rows == 4200 and expected.n_missing > 0 and expected.n_clamped_high > 0
    with pytest.raises(DataError, match="missing value at data row 1") as from_folder:
        column_histogram(data, "x", 0, 10, 7, missing="error")
    with pytest.raises(DataError) as from_file:
        column_histogram(whole, "x", 0, 10, 7, missing="error")
    assert from_folder.value.problem.split("data row")[1] == from_file.value.problem.split("data row")[1]


def test_folder_path_counts_equal(folder):
    data, whole = folder
    got = count_paths(data, ["region", "city"])
    expected = count_paths(whole, ["region", "city"])
    assert got.paths == expected.paths and got.counts.tolist() == expected.counts.tolist()
    assert got.rows == expected.rows == 4200


def test_folder_metadata_rows_and_progress(folder, parts):
    data, _ = folder
    assert check_table_file(data) == (data, "parquet")
    info = inspect_table(data)
    assert info.format == "parquet" and info.n_rows == 4200 and info.names == ["x", "region", "city"]
    assert info.size_bytes == sum(f.stat().st_size for f in data.glob("part-*.parquet"))
    assert info.dialect is None and info.dialect_detection is None
    assert count_rows(data) == 4200
    assert parquet_row_group_sizes(data) == [400, 400, 200] + [400] * 6 + [100] + [400, 300]
    seen: list[float] = []
    column_histogram(data, "x", 0, 10, 7, batch_rows=256, progress=seen.append)
    assert len(seen) > 10 and seen == sorted(seen) and seen[-1] == 1.0
    assert seen[0] == pytest.approx(256 / 4200)
    assert list_columns(data) == [("x", "numeric"), ("region", "text"), ("city", "text")]


def test_folder_preview_matches_the_file(folder):
    data, whole = folder
    expected = pq.read_table(whole).to_pandas()
    with TableReader(data) as reader:
        first = reader.read_rows(0, 50)
        middle = reader.read_rows(2000, 30)  # inside the second file: a jump to its row group
        back = reader.read_rows(990, 20)  # across the first two files
    for frame, start in ((first, 0), (middle, 2000), (back, 990)):
        want = expected.iloc[start : start + len(frame)]
        assert len(frame) == (50 if start == 0 else 30 if start == 2000 else 20)
        assert frame["city"].tolist() == want["city"].tolist()
        np.testing.assert_array_equal(frame["x"].to_numpy(), want["x"].to_numpy())
        assert list(frame.index) == list(range(start, start + len(frame)))


def test_file_source_on_a_folder(folder):
    data, whole = folder
    with FileSource(SourceSpec(kind="file", location=str(data))) as source:
        assert source.row_count() == 4200
        assert source.histogram("x", 0, 10, 7) == column_histogram(whole, "x", 0, 10, 7)
        assert len(source.preview(10)) == 10


def test_hive_partitions(tmp_path, parts):
    whole = pa.concat_tables(parts)
    root = tmp_path / "hive"
    for region in ("north", "south"):
        rows = whole.filter(pa.compute.equal(whole["region"], region)).drop_columns(["region"])
        (root / f"region={region}").mkdir(parents=True)
        half = rows.num_rows // 2
        pq.write_table(rows.slice(0, half), root / f"region={region}" / "a.parquet")
        pq.write_table(rows.slice(half), root / f"region={region}" / "b.pq")
    flat = tmp_path / "flat.parquet"
    pq.write_table(whole, flat)
    info = inspect_table(root)
    assert info.names == ["x", "city", "region"] and info.n_rows == 4200
    assert count_paths(root, ["region", "city"]).counts.tolist() == count_paths(flat, ["region", "city"]).counts.tolist()
    assert count_paths(root, ["region", "city"]).paths == count_paths(flat, ["region", "city"]).paths
    assert column_histogram(root, "x", 0, 10, 7) == column_histogram(flat, "x", 0, 10, 7)
    with TableReader(root) as reader:
        frame = reader.read_rows(0, 5)
    assert set(frame["region"]) == {"north"}


def test_empty_folder_and_folder_without_parquet(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.csv").write_text("x\n1\n")
    (other / "_hidden.parquet").write_bytes(b"PAR1")
    for folder in (empty, other):
        with pytest.raises(DataError) as caught:
            column_histogram(folder, "x", 0, 1, 2)
        assert "is a directory without Parquet files" in caught.value.problem
        assert "folder that holds Parquet files" in caught.value.fix


def test_file_with_other_columns_is_named(tmp_path, parts):
    data = tmp_path / "mixed"
    data.mkdir()
    pq.write_table(parts[0], data / "a.parquet")
    pq.write_table(parts[1].set_column(0, "x", parts[1]["x"].cast(pa.float32())), data / "b.parquet")
    with pytest.raises(DataError) as caught:
        inspect_table(data)
    assert "'b.parquet' in the Parquet folder 'mixed' has other columns than 'a.parquet'" in caught.value.problem
    assert "column 'x' is float, not double" in caught.value.problem
    assert "same columns" in caught.value.fix
    pq.write_table(parts[1].drop_columns(["city"]), data / "b.parquet")
    with pytest.raises(DataError, match="it has no column 'city'"):
        count_rows(data)


def test_corrupt_file_in_folder_is_named(tmp_path, parts):
    data = tmp_path / "broken"
    data.mkdir()
    pq.write_table(parts[0], data / "a.parquet")
    (data / "b.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(DataError) as caught:
        column_histogram(data, "x", 0, 10, 7)
    assert "b.parquet" in caught.value.problem and "broken" in caught.value.problem


def test_preview_notices_a_file_added_to_the_folder(tmp_path, parts):
    data = tmp_path / "growing"
    data.mkdir()
    pq.write_table(parts[0], data / "a.parquet")
    with TableReader(data) as reader:
        assert len(reader.read_rows(0, 10)) == 10
        pq.write_table(parts[1], data / "b.parquet")
        with pytest.raises(DataError, match="changed since it was opened"):
            reader.read_rows(0, 10)


def _hive_folder(root, codes: list[str]):
    """One Parquet file per category ``region=R/code=C`` (a folder's name per value), 4 rows each."""
    for region, code in codes:
        folder = root / f"region={region}" / f"code={code}"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"wage": [1000.0, 1500.0, 2000.0, 2500.0]}), folder / "part-0.parquet")
    return root


def test_hive_partition_values_are_the_text_of_the_folder_names_whatever_the_other_folders_hold(tmp_path):
    """Nothing declares a partition's type: read as text, one record's folder (code=x) decides neither the
    other categories' labels (01 stays 01) nor whether the column is said to be numeric
    (published in a hierarchy release's notes), nor that it holds whole numbers."""
    from dpgui.data.public_bounds import whole_number_reason

    codes = [("A", "01"), ("A", "2"), ("B", "3")]
    numbers = count_paths(_hive_folder(tmp_path / "numbers", codes), ["region", "code"])
    with_text = count_paths(_hive_folder(tmp_path / "text", [*codes, ("B", "x")]), ["region", "code"])
    assert numbers.paths == (("A", "01"), ("A", "2"), ("B", "3"))
    assert with_text.paths == (*numbers.paths, ("B", "x"))
    assert numbers.notes == with_text.notes == ()
    for root in (tmp_path / "numbers", tmp_path / "text"):
        code = next(c for c in inspect_table(root).columns if c.name == "code")
        assert (code.kind, code.dtype) == ("text", "string")
        assert whole_number_reason(code, "parquet", None) is None
