"""The privacy unit keeps the same rows in every engine: Parquet, CSV, SQLite, PostgreSQL and Spark ``local[2]``.

One seeded table (a text person ID with persons of 1..3,000 rows, an integer copy of it, a numeric ``x`` with
values outside the bounds and missing ones, a region from a public list and a value outside it) is opened
through the public interface only (``open_source(parse_source(...))``) in each engine, and bounded with one
fixed salt ("the same seed for the test source"). Each engine must give exactly the counts of an independent
computation of the rule (tests/support/bounding_reference.py, from the rule's words): the (region, bin) groups,
the histogram of ``x`` and the counts of region, for L = 1 and 20, with the text ID and with the integer ID; and
each refuses a row without an ID and a floating-point ID column (where it types the column).
"""

from __future__ import annotations

import collections
import math
import pathlib
import sqlite3

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from bounding_reference import kept_of_frame

from dpgui.data.bounding import Bounding
from dpgui.data.grouped_counts import BinKey, ValueKey
from dpgui.data.source import open_source
from dpgui.data.source_spec import parse_source
from dpgui.errors import DataError

pytestmark = pytest.mark.slow

SALT = "same-seed-for-the-test-source"
LOWER, UPPER, BINS = 0.0, 10.0, 5  # the bin of x is floor(x / 2) for 0 <= x < 10
REGIONS = ("north", "south", "O'Hare", "Zürich; Stadt")
SOURCES = ["parquet", "csv", "sqlite", "postgresql-table", "spark-parquet", "spark-csv"]
N = 12_000


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(3030)
    person = rng.integers(0, 1500, N)
    person[:3000] = 77  # one person with 3,000 rows, a few with hundreds
    person[3000:3400] = 5
    person[3400:3600] = 1234
    x = np.round(rng.uniform(-1.0, 11.0, N), 3)
    x[rng.random(N) < 0.02] = np.nan
    region = rng.choice([*REGIONS, "elsewhere"], N, p=[0.3, 0.3, 0.2, 0.15, 0.05])
    order = rng.permutation(N)
    person = person[order]
    return pd.DataFrame({"pid": [f"P-{p:05d}" for p in person], "num_id": person.astype(np.int64),
                         "x": x[order], "region": region[order], "float_id": person + 0.5,
                         "gappy_id": [None if i == 7000 else f"G{p}" for i, p in enumerate(person)]})


def _reference(frame: pd.DataFrame, id_column: str, limit: int, keys: tuple[str, ...]) -> collections.Counter:
    """The kept rows of each group of ``keys``, by the rule's words (:func:`kept_by_the_rule`)."""
    return kept_of_frame(frame, id_column, keys, REGIONS, (LOWER, UPPER, 2.0), SALT, limit)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, pathlib.Path]:
    base = tmp_path_factory.mktemp("bounding-agree")
    frame = _frame()
    gappy = [v if isinstance(v, str) else None for v in frame["gappy_id"]]  # pandas may hold the gap as NaN
    table = pa.table({"pid": pa.array(frame["pid"].tolist(), type=pa.string()),
                      "num_id": pa.array(frame["num_id"].to_numpy()),
                      "x": pa.array(frame["x"].to_numpy(), mask=np.isnan(frame["x"].to_numpy())),
                      "region": pa.array(frame["region"].tolist(), type=pa.string()),
                      "float_id": pa.array(frame["float_id"].to_numpy()),
                      "gappy_id": pa.array(gappy, type=pa.string())})
    out = {"parquet": base / "rows.parquet", "csv": base / "rows.csv", "sqlite": base / "rows.sqlite"}
    pq.write_table(table, out["parquet"], row_group_size=2500)
    lines = ["pid,num_id,x,region,float_id,gappy_id"] + [
        f"{p},{i},{'' if math.isnan(x) else repr(x)},\"{r}\",{f!r},{g or ''}" for p, i, x, r, f, g in
        zip(frame["pid"], frame["num_id"], frame["x"], frame["region"], frame["float_id"], gappy, strict=True)]
    out["csv"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    with sqlite3.connect(out["sqlite"]) as conn:
        conn.execute("CREATE TABLE rows_t (pid TEXT, num_id INTEGER, x REAL, region TEXT, float_id REAL, gappy_id TEXT)")
        conn.executemany("INSERT INTO rows_t VALUES (?, ?, ?, ?, ?, ?)",
                         zip(*(table[c].to_pylist() for c in table.column_names)))
    conn.close()
    return out


@pytest.fixture(scope="module")
def spark():
    """One local[2] Spark session for the module (skipped without PySpark or Java; fails under CI)."""
    from system_pieces import require, spark_unavailable_reason

    require(spark_unavailable_reason())
    from dpgui.data import spark_source

    with spark_source.spark_session("local[2]") as session:
        yield session


def _spec(source_id: str, files: dict[str, pathlib.Path], request: pytest.FixtureRequest):
    if source_id in ("parquet", "csv"):
        return parse_source(files[source_id])
    if source_id == "sqlite":
        return parse_source(f"sqlite:///{files['sqlite']}", table="rows_t")
    if source_id == "postgresql-table":
        pg = request.getfixturevalue("pg_server")
        table = pq.read_table(files["parquet"])
        pg.execute("DROP TABLE IF EXISTS rows_t")
        pg.execute("CREATE TABLE rows_t (pid text, num_id bigint, x float8, region text, float_id float8, gappy_id text)")
        pg.execute("INSERT INTO rows_t SELECT * FROM unnest(%s::text[], %s::bigint[], %s::float8[], %s::text[], "
                   "%s::float8[], %s::text[])", [table[c].to_pylist() for c in table.column_names])
        request.getfixturevalue("monkeypatch").setenv("DPGUI_DB_PASSWORD", pg.password)
        return parse_source(pg.url, table="rows_t")
    request.getfixturevalue("spark")
    return parse_source(files[source_id.removeprefix("spark-")], engine="spark")


@pytest.mark.parametrize("source_id", SOURCES)
def test_every_engine_keeps_the_rule_s_rows(source_id, files, request):
    frame = _frame()
    problems = []
    with open_source(_spec(source_id, files, request)) as source:
        for id_column in ("pid", "num_id"):
            for limit in (1, 20):
                bounding = Bounding(id_column, limit, SALT, {"region": REGIONS})
                got = source.grouped_counts([ValueKey("region"), BinKey("x", LOWER, UPPER, BINS)], bounding=bounding)
                groups = dict(zip(zip(got.key_values(0), (int(v) for v in got.key_values(1))), got.counts.tolist()))
                if groups != dict(_reference(frame, id_column, limit, ("region", "x"))):
                    problems.append(f"(region, x) groups with {id_column}, L={limit}")
                histogram = source.histogram("x", LOWER, UPPER, BINS, bounding=bounding)
                by_key = {k: n for (k,), n in _reference(frame, id_column, limit, ("x",)).items()}
                expected = [by_key.get(j, 0) for j in range(BINS)]
                expected[0] += by_key.get(-2, 0)
                expected[-1] += by_key.get(-3, 0)
                if histogram.counts.tolist() != expected or histogram.n_missing != by_key.get(-1, 0):
                    problems.append(f"histogram with {id_column}, L={limit}")
                paths = source.path_counts(["region"], min_levels=1, bounding=bounding)
                regions = {r: n for (r,), n in _reference(frame, id_column, limit, ("region",)).items()}
                if dict(zip((p[0] for p in paths.paths), paths.counts.tolist())) != regions:
                    problems.append(f"counts of region with {id_column}, L={limit}")
    assert not problems, f"{source_id} keeps other rows than the rule: " + "; ".join(problems)


@pytest.mark.parametrize("source_id", SOURCES)
def test_every_engine_refuses_a_row_without_an_id_and_a_float_id(source_id, files, request):
    """A missing ID (one null among 12,000) is refused by every engine, naming the column and not a cell; a float
    ID column too, where the engine types it (a CSV's column is its cells' text, the same in every engine)."""
    keys = [BinKey("x", LOWER, UPPER, BINS)]
    with open_source(_spec(source_id, files, request)) as source:
        with pytest.raises(DataError, match="'gappy_id'") as caught:
            source.grouped_counts(keys, bounding=Bounding("gappy_id", 20, SALT))
        assert "G" not in caught.value.problem.replace("'gappy_id'", "")
        if not source_id.endswith("csv"):
            with pytest.raises(DataError, match="floating-point"):
                source.grouped_counts(keys, bounding=Bounding("float_id", 20, SALT))
