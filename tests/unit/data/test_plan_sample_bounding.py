"""The acceptance of the privacy unit on the bundled sample (resources/sample/flights_plan.parquet, all 336,776
flights), with ``tailnum`` as the person-ID column and L = 20:

* the counts of ``dest_tzone → dest`` and the histogram of ``distance`` after bounding are identical from the
  Parquet file, a CSV, SQLite, PostgreSQL and Spark ``local[2]`` (one fixed salt: "the same seed for the test
  source"), and equal to an independent computation of the rule (tests/support/bounding_reference.py);
* a person with 10,000 rows changes every level of every released count by at most the stated sensitivity: the
  L1 difference of the counts with and without that person (same salt) is exactly L = 20 per level, the
  add/remove level sensitivity of the plan's :class:`~dpgui.core.plan.PrivacySpec`.

The categories are the public lists the statistics pass (the hierarchy's node labels of each level).
"""

from __future__ import annotations

import collections
import pathlib
import sqlite3

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from bounding_reference import bin_key, kept_by_the_rule

from dpgui.core.hierarchy import Hierarchy
from dpgui.core.plan import PrivacySpec
from dpgui.data.bounding import Bounding
from dpgui.data.sample import sample_dataset_path
from dpgui.data.source import open_source
from dpgui.data.source_spec import parse_source

pytestmark = pytest.mark.slow

SALT = "same-seed-for-the-test-source"
L = 20
LOWER, UPPER, BINS = 0.0, 5000.0, 50  # bins of 100 miles; the distances are whole miles
LEVELS = ("dest_tzone", "dest")
COLUMNS = ["tailnum", "dest_tzone", "dest", "distance"]
SOURCES = ["parquet", "csv", "sqlite", "postgresql-table", "spark-parquet"]
HEAVY = "N-HEAVY-10000"


def _sample() -> pa.Table:
    return pq.read_table(sample_dataset_path().parent / "flights_plan.parquet", columns=COLUMNS)


def _hierarchy(table: pa.Table) -> Hierarchy:
    """The node list (public here: the whole file is), as a hierarchy release would have it."""
    return Hierarchy.from_paths(LEVELS, sorted(set(zip(*(table[c].to_pylist() for c in LEVELS), strict=True))))


def _bounding(hierarchy: Hierarchy) -> Bounding:
    return Bounding("tailnum", L, SALT, dict(zip(hierarchy.level_names, hierarchy.labels, strict=True)))


def _counted(spec, bounding: Bounding) -> tuple[dict[tuple[str, ...], int], list[int]]:
    """(the kept rows of each (dest_tzone, dest) path, the histogram of distance of the kept rows)."""
    with open_source(spec) as source:
        paths = source.path_counts(list(LEVELS), bounding=bounding)
        histogram = source.histogram("distance", LOWER, UPPER, BINS, bounding=bounding)
    assert histogram.n_missing == 0
    return dict(zip(paths.paths, paths.counts.tolist(), strict=True)), histogram.counts.tolist()


def _reference(table: pa.Table, hierarchy: Hierarchy) -> tuple[dict[tuple[str, ...], int], list[int]]:
    """The same counts by the rule's words, independently of dpgui.data.bounding."""
    tz_index = {label: i for i, label in enumerate(hierarchy.labels[0])}
    dest_index = {label: i for i, label in enumerate(hierarchy.labels[1])}
    people, tzs, dests = (table[c].to_pylist() for c in ("tailnum", "dest_tzone", "dest"))
    distances = table["distance"].to_pylist()
    paths = kept_by_the_rule(((p, (tz_index[t], dest_index[d]), (t, d)) for p, t, d in zip(people, tzs, dests)),
                             SALT, L)
    keys = [bin_key(x, LOWER, UPPER, (UPPER - LOWER) / BINS) for x in distances]
    bins = kept_by_the_rule(((p, (k,), k) for p, k in zip(people, keys)), SALT, L)
    assert not any(k < 0 for k in bins)  # every distance lies in [0, 5000)
    return dict(paths), [bins.get(j, 0) for j in range(BINS)]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, pathlib.Path]:
    base = tmp_path_factory.mktemp("plan-sample")
    table = _sample()
    out = {"parquet": base / "flights.parquet", "csv": base / "flights.csv", "sqlite": base / "flights.sqlite"}
    pq.write_table(table, out["parquet"], row_group_size=50_000)
    pa_csv.write_csv(table, out["csv"])
    with sqlite3.connect(out["sqlite"]) as conn:
        conn.execute("CREATE TABLE flights (tailnum TEXT, dest_tzone TEXT, dest TEXT, distance REAL)")
        conn.executemany("INSERT INTO flights VALUES (?, ?, ?, ?)", zip(*(table[c].to_pylist() for c in COLUMNS)))
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
        return parse_source(f"sqlite:///{files['sqlite']}", table="flights")
    if source_id == "postgresql-table":
        pg = request.getfixturevalue("pg_server")
        table = _sample()
        pg.execute("DROP TABLE IF EXISTS flights")
        pg.execute("CREATE TABLE flights (tailnum text, dest_tzone text, dest text, distance float8)")
        pg.execute("INSERT INTO flights SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::float8[])",
                   [table[c].to_pylist() for c in COLUMNS])
        request.getfixturevalue("monkeypatch").setenv("DPGUI_DB_PASSWORD", pg.password)
        return parse_source(pg.url, table="flights")
    request.getfixturevalue("spark")
    return parse_source(files[source_id.removeprefix("spark-")], engine="spark")


@pytest.fixture(scope="module")
def reference() -> tuple[dict[tuple[str, ...], int], list[int]]:
    table = _sample()
    return _reference(table, _hierarchy(table))


@pytest.mark.parametrize("source_id", SOURCES)
def test_the_sample_s_bounded_counts_are_the_same_in_every_engine(source_id, files, request, reference) -> None:
    table = _sample()
    paths, histogram = _counted(_spec(source_id, files, request), _bounding(_hierarchy(table)))
    expected_paths, expected_histogram = reference
    assert paths == expected_paths, f"{source_id}: other (dest_tzone, dest) counts than the rule's"
    assert histogram == expected_histogram, f"{source_id}: another histogram of distance than the rule's"
    # every aircraft counted at most L times: the total is the sum over aircraft of min(flights, L)
    flights = collections.Counter(table["tailnum"].to_pylist())
    assert sum(paths.values()) == sum(histogram) == sum(min(n, L) for n in flights.values()) == 69_347


def test_a_person_with_10000_rows_changes_each_level_by_at_most_the_stated_sensitivity(tmp_path: pathlib.Path) -> None:
    sample = _sample()
    rng = np.random.default_rng(30)
    rows = rng.integers(0, sample.num_rows, 10_000)
    heavy = sample.take(pa.array(rows)).set_column(0, "tailnum", pa.array([HEAVY] * 10_000, pa.string()))
    with_heavy = pa.concat_tables([sample, heavy])
    permuted = with_heavy.take(pa.array(rng.permutation(with_heavy.num_rows)))  # the person's rows spread out
    hierarchy = _hierarchy(sample)  # the same public node list: the heavy rows are flights of the sample
    assert _hierarchy(permuted).labels == hierarchy.labels
    counted = []
    for name, table in (("without", sample), ("with", permuted)):
        path = tmp_path / f"{name}.parquet"
        pq.write_table(table, path, row_group_size=40_000)
        counted.append(_counted(parse_source(path), _bounding(hierarchy)))
    (paths_without, hist_without), (paths_with, hist_with) = counted
    sensitivity = PrivacySpec(1.0, "addremove", L).level_sensitivity  # the stated L1 sensitivity of each level
    assert sensitivity == L

    def level(paths: dict[tuple[str, ...], int], depth: int) -> collections.Counter:
        out: collections.Counter = collections.Counter()
        for p, n in paths.items():
            out[p[:depth]] += n
        return out

    for depth in (0, 1, 2):  # the root (the total), dest_tzone, dest
        before, after = level(paths_without, depth), level(paths_with, depth)
        l1 = sum(abs(after[k] - before[k]) for k in set(before) | set(after))
        assert l1 == sensitivity, f"level {depth}: L1 change {l1}, stated sensitivity {sensitivity}"
        assert all(after[k] >= before[k] for k in before)  # only the person's own kept rows were added
    width = 1
    while width <= BINS:  # the histogram's leaves and every level of a tree over them (dyadic aggregates)
        coarse = [(sum(hist_with[i:i + width]) - sum(hist_without[i:i + width])) for i in range(0, BINS, width)]
        assert sum(abs(d) for d in coarse) == sensitivity and min(coarse) >= 0
        width *= 2
