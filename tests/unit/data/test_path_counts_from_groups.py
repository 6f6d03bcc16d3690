"""path_counts_from_groups (the path counts of a GROUP BY run in a database or Spark) equals count_paths on a file."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpgui.data.hierarchy import count_paths, path_counts_from_groups
from dpgui.errors import DataError


def _groups(table: pa.Table, names: list[str]) -> tuple[pa.Table, np.ndarray]:
    """What `SELECT levels, COUNT(*) … GROUP BY levels` returns, in a shuffled order."""
    g = table.group_by(names, use_threads=False).aggregate([([], "count_all")])
    order = np.random.default_rng(1).permutation(g.num_rows)
    g = g.take(pa.array(order))
    return g.select(names), g.column("count_all").to_numpy()


def test_equals_count_paths_with_numeric_and_text_levels(tmp_path):
    rng = np.random.default_rng(7)
    n = 5000
    r = rng.integers(0, 3, n)
    d = rng.integers(0, 4, n)
    c = rng.integers(0, 3, n)
    region = np.array(["North", "South", "East"])[r]
    district = np.array([f"{a}-{b}" for a, b in zip(region, d)])
    code = (r * 100 + d * 10 + c) * 0.5  # numeric, nested under district
    table = pa.table({"region": region, "district": district, "code": code})
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    for names in (["region", "district"], ["region", "district", "code"]):
        groups, counts = _groups(table, names)
        expected = count_paths(path, names)
        declared = {"region": "text", "district": "text", "code": "numeric"}  # as the table's schema types them
        got = path_counts_from_groups(names, groups, counts, kinds=declared, source_name="table t")
        assert got.paths == expected.paths and got.level_names == expected.level_names
        assert np.array_equal(got.counts, expected.counts) and got.rows == expected.rows == n
        assert got.notes == expected.notes


def test_numeric_level_labels_and_note(tmp_path):
    table = pa.table({"a": [1.0, 1.0, 2.5, 2.5], "b": ["x", "y", "z", "z"]})
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    groups, counts = _groups(table, ["a", "b"])
    got = path_counts_from_groups(["a", "b"], groups, counts, kinds={"a": "numeric", "b": "text"})
    expected = count_paths(path, ["a", "b"])
    assert got.paths == expected.paths == (("1", "x"), ("1", "y"), ("2.5", "z"))
    assert got.notes == expected.notes == ("column 'a' is numeric; its values are used as categories",)
    # A kind that is not declared (e.g. read from a query's first rows) gives no note.
    assert path_counts_from_groups(["a", "b"], groups, counts).notes == ()


def test_refusals():
    with pytest.raises(DataError, match="level column 'b' in table t: 2 rows have a missing or empty value"):
        path_counts_from_groups(["a", "b"], pa.table({"a": ["x", "x"], "b": ["y", None]}), [3, 2],
                                source_name="table t")
    with pytest.raises(DataError, match="a value of level 'b' appears under two parents of level 'a'"):
        path_counts_from_groups(["a", "b"], pa.table({"a": ["x", "z"], "b": ["y", "y"]}), [1, 1])
    with pytest.raises(DataError, match="more than 2 distinct values"):
        path_counts_from_groups(["a", "b"], pa.table({"a": ["x", "z", "w"], "b": ["1", "2", "3"]}), [1, 1, 1],
                                max_nodes_per_level=2)
    with pytest.raises(DataError, match="no data rows"):
        path_counts_from_groups(["a", "b"], pa.table({"a": pa.array([], pa.string()), "b": pa.array([], pa.string())}),
                                [], source_name="table t")
