"""The data layer's one counting primitive, ``DataSource.grouped_counts``, on every kind of source.

One seeded dataset (a group column ``g``, a level below it ``h``, a numeric ``x`` with missing values, values
outside the bounds and infinities) is read as a Parquet file, a CSV file, an SQLite table, a PostgreSQL
table and Spark (the Parquet file, the CSV file). For each source:

* one :class:`BinKey` gives exactly ``histogram`` (every field), and its groups are the bin keys an
  independent numpy computation gives (bins of width 2 on [0, 10): ``floor(x / 2)``, exact in float64);
* the level columns' :class:`ValueKey`\\ s give exactly ``path_counts``, and their groups are pandas' group sizes;
* ``(ValueKey(g), BinKey(x, …))`` gives, for each value of ``g``, the histogram of that group's rows alone
  (``histograms_by_group``), equal to ``column_histogram`` of a file holding only those rows.
"""

from __future__ import annotations

import math
import pathlib
import sqlite3

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpgui.data.grouped_counts import BinKey, GroupedCounts, ValueKey, count_file_groups
from dpgui.data.hierarchy import path_counts_of
from dpgui.data.histogram import column_histogram, histogram_of, histograms_by_group
from dpgui.data.source import open_source
from dpgui.data.source_spec import parse_source
from dpgui.errors import ParameterError

N = 3000
LOWER, UPPER, BINS = 0.0, 10.0, 5  # width 2: the bin of x is floor(x / 2), exactly
SOURCES = ["parquet", "csv", "sqlite", "postgresql-table", "spark-parquet", "spark-csv"]


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(29)
    g = rng.choice(["north", "south", "east"], N)
    h = np.array([f"{a}-{b}" for a, b in zip(g, rng.integers(0, 4, N))])
    x = rng.uniform(-3.0, 13.0, N)
    x[rng.random(N) < 0.05] = np.nan
    x[:4] = [-np.inf, np.inf, LOWER, UPPER]  # the bounds themselves: bin 0 and clamped high
    x[10:20] = np.arange(0.0, 10.0, 1.0)  # on and between the edges
    return pd.DataFrame({"g": g, "h": h, "x": x})


def _expected_keys(x: np.ndarray) -> dict[int, int]:
    """The bin key of every value, counted, computed here without the binning module."""
    keys = np.where(np.isnan(x), -1, np.where(x < LOWER, -2, np.where(x >= UPPER, -3, 0)))
    inside = ~np.isnan(x) & (x >= LOWER) & (x < UPPER)
    keys[inside] = np.floor(x[inside] / 2.0).astype(np.int64)
    values, counts = np.unique(keys, return_counts=True)
    return dict(zip(values.tolist(), counts.tolist()))


def _as_dict(counted: GroupedCounts) -> dict[tuple, int]:
    columns = [counted.key_values(i) for i in range(len(counted.keys))]
    return {tuple(values): int(n) for *values, n in zip(*columns, counted.counts.tolist())}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, pathlib.Path]:
    base = tmp_path_factory.mktemp("grouped")
    frame = _frame()
    out = {"parquet": base / "rows.parquet", "csv": base / "rows.csv", "sqlite": base / "rows.db"}
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), out["parquet"])
    text = frame.assign(x=[("" if math.isnan(v) else repr(float(v))) for v in frame["x"]])
    text.to_csv(out["csv"], index=False)
    with sqlite3.connect(out["sqlite"]) as conn:
        conn.execute("CREATE TABLE rows (g TEXT, h TEXT, x REAL)")
        conn.executemany("INSERT INTO rows VALUES (?, ?, ?)",
                         [(a, b, None if math.isnan(v) else float(v)) for a, b, v in frame.itertuples(index=False)])
    for name, rows in frame.groupby("g"):
        out[f"only-{name}"] = base / f"only-{name}.parquet"
        pq.write_table(pa.Table.from_pandas(rows, preserve_index=False), out[f"only-{name}"])
    return out


@pytest.fixture(scope="module")
def pg_rows(pg_server) -> str:
    frame = _frame()
    pg_server.execute("DROP TABLE IF EXISTS grouped_rows")
    pg_server.execute("CREATE TABLE grouped_rows (g text, h text, x float8)")
    x = [None if math.isnan(v) else float(v) for v in frame["x"]]
    pg_server.execute("INSERT INTO grouped_rows SELECT * FROM unnest(%s::text[], %s::text[], %s::float8[])",
                      [list(frame["g"]), list(frame["h"]), x])
    return "grouped_rows"


@pytest.fixture(scope="module")
def spark():
    """One local[2] Spark session for the module (skipped without PySpark or Java; fails under CI)."""
    from system_pieces import require, spark_unavailable_reason

    require(spark_unavailable_reason())
    from dpgui.data import spark_source

    with spark_source.spark_session("local[2]") as session:
        yield session


def _open(source_id: str, files: dict[str, pathlib.Path], request: pytest.FixtureRequest):
    if source_id in ("parquet", "csv"):
        return open_source(parse_source(files[source_id]))
    if source_id == "sqlite":
        return open_source(parse_source(f"sqlite:///{files['sqlite']}", table="rows"))
    if source_id == "postgresql-table":
        pg = request.getfixturevalue("pg_server")
        table = request.getfixturevalue("pg_rows")
        request.getfixturevalue("monkeypatch").setenv("DPGUI_DB_PASSWORD", pg.password)
        return open_source(parse_source(pg.url, table=table))
    request.getfixturevalue("spark")
    return open_source(parse_source(files[source_id.removeprefix("spark-")], engine="spark"))


@pytest.mark.parametrize("source_id", SOURCES)
def test_the_primitive_gives_the_histogram_the_path_counts_and_a_histogram_per_group(source_id, files, request):
    frame = _frame()
    with _open(source_id, files, request) as source:
        binned = source.grouped_counts([BinKey("x", LOWER, UPPER, BINS)])
        assert {k[0]: n for k, n in _as_dict(binned).items()} == _expected_keys(frame["x"].to_numpy())
        assert binned.rows == N and binned.complete
        assert histogram_of(binned) == source.histogram("x", LOWER, UPPER, BINS)
        assert histogram_of(binned) == column_histogram(files["parquet"], "x", LOWER, UPPER, BINS)

        levels = source.grouped_counts([ValueKey("g"), ValueKey("h")])
        assert _as_dict(levels) == {k: int(n) for k, n in frame.groupby(["g", "h"]).size().items()}
        by_primitive, by_method = path_counts_of(levels), source.path_counts(["g", "h"])
        assert (by_primitive.paths, by_primitive.rows, by_primitive.notes) == (by_method.paths, by_method.rows,
                                                                              by_method.notes)
        assert np.array_equal(by_primitive.counts, by_method.counts)

        per_group = histograms_by_group(source.grouped_counts([ValueKey("g"), BinKey("x", LOWER, UPPER, BINS)]))
    assert sorted(per_group) == ["east", "north", "south"]
    for name, histogram in per_group.items():
        assert histogram == column_histogram(files[f"only-{name}"], "x", LOWER, UPPER, BINS)
        rows = frame[frame["g"] == name]["x"].to_numpy()
        expected = _expected_keys(rows)
        assert histogram.n_rows == len(rows) and histogram.n_missing == expected.get(-1, 0)
        assert histogram.n_clamped_low == expected.get(-2, 0) and histogram.n_clamped_high == expected.get(-3, 0)


def test_a_file_stops_at_more_groups_than_asked_and_refuses_bad_keys(files):
    counted = count_file_groups(files["parquet"], [ValueKey("h")], max_groups=5, batch_rows=100)
    assert not counted.complete and counted.over_limit == "h"
    counted = count_file_groups(files["parquet"], [ValueKey("g"), BinKey("x", LOWER, UPPER, BINS)], max_groups=8,
                                batch_rows=100)
    assert not counted.complete and counted.over_limit is None and counted.groups.num_rows > 8
    complete = count_file_groups(files["parquet"], [ValueKey("g"), ValueKey("h")], max_groups=12)
    assert complete.complete and complete.groups.num_rows == 12
    for keys in ([], [ValueKey("g"), ValueKey("g")], ["g"], [BinKey("x", 0, 1, 2), BinKey("h", 0, 1, 2)]):
        with pytest.raises(ParameterError):
            count_file_groups(files["parquet"], keys)
    with pytest.raises(ParameterError, match="bounds inverted"):
        BinKey("x", 1.0, 0.0, 3)
