"""Tests of dpgui.data.hierarchy: streamed path counts of 2–4 level columns, priors, value counts."""

from __future__ import annotations

import collections
import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from dpgui.core.hierarchy import MAX_NODES_PER_LEVEL, Hierarchy
from dpgui.data.hierarchy import (
    HIERARCHY_SAMPLE_LEVELS, PathCounts, count_paths, hierarchy_sample_path, level_value_counts, read_prior,
)
from dpgui.data.sample import sample_dataset_path
from dpgui.errors import Cancelled, DataError, ParameterError

LEVELS = ["state", "county", "city"]


def _rows(n: int, seed: int = 1) -> list[tuple[str, str, str]]:
    """n records on a strictly nested 3-level tree with globally unique labels."""
    rng = np.random.default_rng(seed)
    tree = [("OR", "Multnomah, OR", "Portland, OR"), ("OR", "Multnomah, OR", "Gresham, OR"),
            ("OR", "Marion, OR", "Salem, OR"), ("WA", "King, WA", "Seattle, WA"),
            ("WA", "King, WA", "Bellevue, WA"), ("WA", "Pierce, WA", "Tacoma, WA"), ("ID", "Ada, ID", "Boise, ID")]
    picks = rng.integers(0, len(tree), size=n)
    return [tree[i] for i in picks]


def _table(rows: list[tuple[str, ...]], names: list[str] = LEVELS, **extra: list[object]) -> pa.Table:
    columns = {name: [r[i] for r in rows] for i, name in enumerate(names)}
    columns.update(extra)
    return pa.table(columns)


def _write(table: pa.Table, path, fmt: str) -> None:
    if fmt == "parquet":
        pq.write_table(table, path)
    elif fmt == "xlsx":
        import openpyxl

        book = openpyxl.Workbook()
        sheet = book.active
        sheet.append(table.column_names)
        for row in zip(*(table.column(i).to_pylist() for i in range(table.num_columns))):
            sheet.append(list(row))
        book.save(path)
    else:
        pa_csv.write_csv(table, path, write_options=pa_csv.WriteOptions(delimiter="\t" if fmt == "tsv" else ","))


def _expected(rows: list[tuple[str, ...]]) -> tuple[tuple[tuple[str, ...], ...], list[int]]:
    c = collections.Counter(rows)
    paths = tuple(sorted(c))
    return paths, [c[p] for p in paths]


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet", "xlsx"])
def test_counts_every_path_in_every_format(tmp_path, fmt):
    rows = _rows(500)
    path = tmp_path / f"data.{fmt}"
    _write(_table(rows), path, fmt)
    result = count_paths(path, LEVELS)
    assert isinstance(result, PathCounts)
    paths, counts = _expected(rows)
    assert result.level_names == tuple(LEVELS)
    assert result.paths == paths
    assert result.counts.tolist() == counts and result.counts.dtype == np.int64
    assert result.rows == 500 == int(result.counts.sum())
    assert result.notes == ()
    assert not result.counts.flags.writeable
    tree = result.hierarchy
    assert isinstance(tree, Hierarchy) and tree.level_sizes == (1, 3, 5, 7)
    # leaf i of the tree is paths[i]: counts are its leaf counts as they are
    assert tree.leaf_index(result.paths).tolist() == list(range(7))
    assert tree.aggregate(result.counts)[0].tolist() == [500]


def test_two_levels_of_a_wider_file_and_order_of_children(tmp_path):
    rows = _rows(300, seed=2)
    path = tmp_path / "data.parquet"
    _write(_table(rows, other=list(range(300))), path, "parquet")
    result = count_paths(path, ["state", "county"])
    paths, counts = _expected([r[:2] for r in rows])
    assert result.paths == paths and result.counts.tolist() == counts
    # children of a parent are contiguous and in label order
    assert list(result.paths) == sorted(result.paths)


def test_batches_are_merged(tmp_path):
    """Many small batches give the same counts as one (paths meeting again in later batches)."""
    rows = _rows(5000, seed=3)
    path = tmp_path / "data.parquet"
    pq.write_table(_table(rows), path, row_group_size=300)
    one = count_paths(path, LEVELS)
    many = count_paths(path, LEVELS, batch_rows=97)
    assert one.paths == many.paths and one.counts.tolist() == many.counts.tolist() == _expected(rows)[1]


def test_numeric_levels_become_labels_with_a_note(tmp_path):
    table = pa.table({
        "year": pa.array([2020, 2020, 2021, 2021, 2021], pa.int64()),
        "grade": pa.array([3.0, 0.1, 4.0, 2.5, 4.0], pa.float64()),
        "small": pa.array([1.5, 0.1, 1.25, 0.2, 1.25], pa.float32()),
    })
    path = tmp_path / "n.parquet"
    pq.write_table(table, path)
    result = count_paths(path, ["year", "grade"])
    assert result.paths == (("2020", "0.1"), ("2020", "3"), ("2021", "2.5"), ("2021", "4"))
    assert result.counts.tolist() == [1, 1, 1, 2]
    assert result.notes == ("column 'year' is numeric; its values are used as categories",
                            "column 'grade' is numeric; its values are used as categories")
    f32 = count_paths(path, ["year", "small"])
    assert {p[1] for p in f32.paths} == {"1.5", "0.1", "1.25", "0.2"}  # no float32 noise (0.10000000149…)


def test_a_csv_cell_is_its_text_as_written_and_no_note_says_numeric(tmp_path):
    """A CSV's column "types" would be inferred from its cells: a label is the cell's text, and nothing
    (no note) is said from such a type (3.0 and 3 are two categories, as written)."""
    path = tmp_path / "n.csv"
    path.write_text("zip,score\n02134,3.0\n02134,3\n10001,2.50\n10001,2.5\n")
    result = count_paths(path, ["zip", "score"])
    assert result.paths == (("02134", "3"), ("02134", "3.0"), ("10001", "2.5"), ("10001", "2.50"))
    assert result.counts.tolist() == [1, 1, 1, 1]
    assert result.notes == ()


def test_dictionary_columns_are_read(tmp_path):
    rows = _rows(200, seed=4)
    table = _table(rows)
    table = pa.table({n: table.column(n).dictionary_encode() for n in LEVELS})
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    result = count_paths(path, LEVELS)
    assert result.paths == _expected(rows)[0] and result.counts.tolist() == _expected(rows)[1]


@pytest.mark.parametrize(
    ("levels", "words"),
    [
        (["state"], "at least 2 level columns; 1 given"),
        ([], "at least 2 level columns; 0 given"),
        (["state", "county", "city", "a", "b"], "at most 4 levels; 5 columns"),
        (["state", "county", "state"], "'state' is listed twice"),
        ("state,county", "not a list of column names"),
        (["state", ""], "not a non-empty string"),
    ],
)
def test_bad_level_lists_are_refused_before_reading(tmp_path, levels, words):
    missing_file = tmp_path / "absent.csv"  # never opened: the parameters are checked first
    with pytest.raises(ParameterError, match=words) as err:
        count_paths(missing_file, levels)
    assert "\n" not in str(err.value) and err.value.fix


def test_unknown_column_lists_the_columns(tmp_path):
    path = tmp_path / "data.csv"
    _write(_table(_rows(10)), path, "csv")
    with pytest.raises(DataError, match=r"column 'town' not found in 'data.csv'.*'state', 'county', 'city'"):
        count_paths(path, ["state", "town"])


@pytest.mark.parametrize("fmt", ["csv", "parquet", "xlsx"])
def test_missing_and_empty_values_are_refused_with_count_and_first_row(tmp_path, fmt):
    rows = [list(r) for r in _rows(50, seed=5)]
    rows[6][1] = None
    rows[20][1] = ""
    rows[30][1] = "   "
    path = tmp_path / f"m.{fmt}"
    _write(pa.table({n: [r[i] for r in rows] for i, n in enumerate(LEVELS)}), path, fmt)
    with pytest.raises(DataError) as err:
        count_paths(path, LEVELS)
    message = str(err.value)
    assert "level column 'county'" in message and "3 rows have a missing or empty value" in message
    assert "first at data row 7" in message and '"(missing)"' in message and "drop" in message
    assert "\n" not in message


def test_empty_file_and_header_only(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="is empty"):
        count_paths(empty, ["a", "b"])
    header = tmp_path / "header.csv"
    header.write_text("a,b\n")
    with pytest.raises(DataError, match="has no data rows"):
        count_paths(header, ["a", "b"])
    pq.write_table(pa.table({"a": pa.array([], pa.string()), "b": pa.array([], pa.string())}), tmp_path / "e.parquet")
    with pytest.raises(DataError, match="has no data rows"):
        count_paths(tmp_path / "e.parquet", ["a", "b"])


def test_progress_and_cancel(tmp_path):
    rows = _rows(4000, seed=6)
    path = tmp_path / "data.parquet"
    pq.write_table(_table(rows), path, row_group_size=500)
    seen: list[float] = []
    count_paths(path, LEVELS, progress=seen.append, batch_rows=500)
    assert len(seen) >= 8 and seen == sorted(seen) and seen[-1] == 1.0 and seen[0] < 0.5
    asked = []

    def cancel_after_three() -> bool:
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(Cancelled):
        count_paths(path, LEVELS, should_cancel=cancel_after_three, batch_rows=500)
    assert len(asked) == 4
    with pytest.raises(ParameterError, match="progress"):
        count_paths(path, LEVELS, progress=3)


def test_a_level_with_too_many_values_stops_the_read_with_bounded_memory(tmp_path):
    """10⁶ distinct values on the leaf level, refused at a limit of 10,000: the read stops within
    the first batches, and the memory used stays far below the file's 10⁶ labels."""
    n = 1_000_000
    path = tmp_path / "ids.parquet"
    ids = pa.array(np.arange(n).astype(str))
    pq.write_table(pa.table({"region": pa.array(np.arange(n) % 5), "person": ids}), path, row_group_size=50_000)
    seen: list[float] = []
    tracemalloc.start()
    try:
        with pytest.raises(DataError) as err:
            count_paths(path, ["region", "person"], max_nodes_per_level=10_000, batch_rows=4096, progress=seen.append)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(err.value)
    assert "level column 'person' has more than 10,000 distinct values" in message
    assert "probably an identifier; choose a coarser column or group values" in message
    assert seen and seen[-1] < 0.01  # stopped early
    assert peak < 20_000_000  # Python objects: ~10,000 labels, not 10⁶ (≈ 60 MB as str)


@pytest.mark.slow
def test_the_real_limit_on_a_million_distinct_values(tmp_path):
    n = 1_000_000
    path = tmp_path / "ids.parquet"
    pq.write_table(pa.table({"region": pa.array(np.arange(n) % 5), "person": pa.array(np.arange(n))}), path,
                   row_group_size=100_000)
    seen: list[float] = []
    with pytest.raises(DataError, match=f"'person' has more than {MAX_NODES_PER_LEVEL:,} distinct values"):
        count_paths(path, ["region", "person"], progress=seen.append)
    assert MAX_NODES_PER_LEVEL == 500_000
    assert seen[-1] < 1.0  # the rest of the file was not read


def test_read_prior_with_a_count_column(tmp_path):
    path = tmp_path / "prior.csv"
    path.write_text("state,county,count\nOR,\"Multnomah, OR\",10\nOR,\"Marion, OR\",0\nWA,\"King, WA\",7\n"
                    "OR,\"Multnomah, OR\",2\n")
    prior = read_prior(path, ["state", "county"])
    assert prior.paths == (("OR", "Marion, OR"), ("OR", "Multnomah, OR"), ("WA", "King, WA"))
    assert prior.counts.tolist() == [0, 12, 7] and prior.rows == 19


def test_read_prior_of_raw_rows_counts_them(tmp_path):
    rows = _rows(100, seed=7)
    path = tmp_path / "raw.parquet"
    _write(_table(rows), path, "parquet")
    prior = read_prior(path, LEVELS)
    assert prior.paths == _expected(rows)[0] and prior.counts.tolist() == _expected(rows)[1]
    assert any("no 'count' column" in n for n in prior.notes)


@pytest.mark.parametrize(
    ("cell", "words"),
    [("", "has no count at data row 2"), ("-3", "has a negative count at data row 2"),
     ("2.5", "not a whole number at data row 2"), ("many", "not numeric")],
)
def test_read_prior_refuses_bad_counts(tmp_path, cell, words):
    path = tmp_path / "prior.csv"
    path.write_text(f"state,county,n\nOR,a,1\nOR,b,{cell}\nWA,c,3\n")
    with pytest.raises(DataError, match=words) as err:
        read_prior(path, ["state", "county"], count_column="n")
    assert err.value.fix and "\n" not in str(err.value)


def test_read_prior_parquet_counts_and_bad_parameters(tmp_path):
    path = tmp_path / "prior.parquet"
    pq.write_table(pa.table({"a": ["x", "x", "y"], "b": ["x1", "x2", "y1"], "count": pa.array([4, 0, 2], pa.int32())}), path)
    prior = read_prior(path, ["a", "b"])
    assert prior.counts.tolist() == [4, 0, 2] and prior.rows == 6
    with pytest.raises(ParameterError, match="both a level column and the count column"):
        read_prior(path, ["a", "count"])
    pq.write_table(pa.table({"a": ["x"], "b": ["x1"], "count": pa.array([-1], pa.int64())}), path)
    with pytest.raises(DataError, match="negative count at data row 1"):
        read_prior(path, ["a", "b"])


def test_level_value_counts(tmp_path):
    rows = _rows(400, seed=8)
    path = tmp_path / "data.csv"
    _write(_table(rows, score=[float(i % 3) for i in range(400)]), path, "csv")
    counts = level_value_counts(path, [*LEVELS, "score"])
    assert counts == {"state": 3, "county": 5, "city": 7, "score": 3}
    assert level_value_counts(path, LEVELS, limit=4) == {"state": 3, "county": 4, "city": 4}
    with pytest.raises(DataError, match="'nope' not found"):
        level_value_counts(path, ["nope"])


def test_level_value_counts_stops_early_once_every_column_is_capped(tmp_path):
    n = 200_000
    path = tmp_path / "ids.parquet"
    pq.write_table(pa.table({"id": pa.array(np.arange(n)), "x": pa.array(np.arange(n) * 2)}), path, row_group_size=10_000)
    seen: list[float] = []
    assert level_value_counts(path, ["id", "x"], limit=1000, batch_rows=5000, progress=seen.append) == {"id": 1000, "x": 1000}
    assert len(seen) == 2 and seen[0] < 0.1 and seen[1] == 1.0  # one batch read, then done


def test_bundled_hierarchy_sample_has_the_documented_levels_and_counts():
    """resources/sample/flight_routes.parquet (see resources/sample/README.md): 336,776 flights,
    dest_tzone → dest → route with 9, 105 and 224 nodes, strictly nested."""
    sample = hierarchy_sample_path()
    assert sample.parent == sample_dataset_path().parent and sample.name == "flight_routes.parquet"
    assert sample.stat().st_size < 2_000_000
    assert (sample.parent / "flight_routes.LICENSE").is_file()
    assert "flight_routes.parquet" in (sample.parent / "README.md").read_text(encoding="utf-8")
    assert HIERARCHY_SAMPLE_LEVELS == ("dest_tzone", "dest", "route")
    result = count_paths(sample, HIERARCHY_SAMPLE_LEVELS)
    assert result.rows == 336_776 and result.notes == ()
    assert result.hierarchy.level_sizes == (1, 9, 105, 224)
    # strictly nested with globally unique labels: every label has one parent path
    for level in (2, 3):
        labels = [p[level - 1] for p in {p[:level] for p in result.paths}]
        assert len(labels) == len(set(labels))
    by_level = [collections.Counter() for _ in range(3)]
    for path, n in zip(result.paths, result.counts.tolist()):
        for level in range(3):
            by_level[level][path[: level + 1]] += n
    assert by_level[0][("America/New_York",)] == 192_377 and by_level[0][("America/Anchorage",)] == 8
    assert by_level[1][("America/Chicago", "ORD")] == 17_283
    assert by_level[2][("America/Los_Angeles", "LAX", "JFK-LAX")] == 11_262
    assert min(result.counts.tolist()) == 1
    assert level_value_counts(sample, ["dest_tzone", "dest", "route", "origin", "carrier"]) == {
        "dest_tzone": 9, "dest": 105, "route": 224, "origin": 3, "carrier": 16}


def test_hierarchy_sample_missing_is_a_data_error(monkeypatch):
    import dpgui.data.hierarchy as module

    monkeypatch.setattr(module, "find_resource", lambda relative: None)
    with pytest.raises(DataError, match=r"hierarchy sample is missing.*make_hierarchy_sample\.py"):
        module.hierarchy_sample_path()


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_value_under_two_parents_is_refused_end_to_end(tmp_path, fmt):
    rows = [("OR", "Portland"), ("OR", "Salem"), ("ME", "Portland"), ("ME", "Bangor")]
    path = tmp_path / f"two.{fmt}"
    _write(_table(rows, ["state", "city"]), path, fmt)
    with pytest.raises(DataError) as err:
        count_paths(path, ["state", "city"])
    message = str(err.value)
    assert "a value of level 'city' appears under two parents of level 'state'" in message
    assert not any(label in message for label in ("Portland", "ME", "OR"))  # data is never quoted
    assert "make the values of 'city' unique, e.g. prefix each with its parent" in message and "\n" not in message
    with pytest.raises(DataError, match="two parents"):
        read_prior(path, ["state", "city"])


def test_a_value_under_many_parents_stops_the_read_and_is_named(tmp_path):
    """Paths overflow the limit while the values do not: the read stops early and the message is
    the core's 'two parents' one, not 'too many values'."""
    n = 200_000
    path = tmp_path / "cross.parquet"
    pq.write_table(pa.table({"a": pa.array((np.arange(n) % 7).astype(str)), "b": pa.array((np.arange(n) % 900).astype(str))}),
                   path, row_group_size=10_000)
    seen: list[float] = []
    with pytest.raises(DataError, match="appears under two parents") as err:
        count_paths(path, ["a", "b"], max_nodes_per_level=1000, batch_rows=500, progress=seen.append)
    assert "more than" not in str(err.value)
    assert seen and seen[-1] < 0.1


def test_the_sample_with_levels_that_are_not_nested_names_the_levels():
    with pytest.raises(DataError, match=r"a value of level 'origin' appears under two parents of level 'dest'"):
        count_paths(hierarchy_sample_path(), ["dest", "origin"])
