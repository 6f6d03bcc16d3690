"""Spark (``--engine spark``, local[2]) counts exactly what the file path counts on the same rows.

10⁶ seeded rows with adversarial values — every bin edge of the tested bounds and its two float64
neighbours, values outside the bounds, NaN, ±inf, nulls, -0.0 — written as Parquet (and as CSV) are
counted by Spark SQL and by :func:`dpgui.data.histogram.column_histogram`; every field of the
histogram must agree, under both missing-value policies; the path counts of a 3-level hierarchy agree
with :func:`dpgui.data.hierarchy.count_paths`. Bad inputs give one-line errors before any job runs.

One Spark session serves the whole module (it takes seconds to start). Without PySpark (or Java)
the module is skipped locally, and fails in CI (``CI`` set): CI installs ``.[test,spark]`` and Java.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.compute
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from dpgui.data.csv_dialect import UnstatedDialect
from dpgui.data.hierarchy import count_paths
from dpgui.data.histogram import column_histogram
from dpgui.data.source import open_source
from dpgui.data.source_spec import SourceSpec, parse_source
from dpgui.errors import Cancelled, DataError, ParameterError

from system_pieces import require, spark_unavailable_reason

require(spark_unavailable_reason(), module_level=True)  # skipped without PySpark or Java; fails under CI

from dpgui.data import spark_source  # noqa: E402 - after the check above

N_ROWS = 1_000_000
SEED = 20261125
# (lower, upper, bins): a plain grid, bounds that are not binary fractions, a wide range with many
# bins (edges computed far from lower), one bin, and a tiny range around a large offset.
CONFIGS = [
    (-3.0, 5.0, 16),
    (0.1, 0.7, 3),
    (-1e-3, 1e9, 65_536),
    (2.5, 7.5, 1),
    (1e6 + 0.1, 1e6 + 0.3, 1_000),
]
REGIONS = 5
DISTRICTS = 4  # per region


def _adversarial() -> np.ndarray:
    """Every edge of every config, each with its two float64 neighbours, and values just outside."""
    parts = []
    for lower, upper, bins in CONFIGS:
        edges = np.linspace(lower, upper, bins + 1)
        parts += [edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf)]
        span = upper - lower
        parts.append(np.array([lower - span, upper + span, -1e308, 1e308, upper]))
    parts.append(np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 5e-324, -5e-324, 2.0**53 + 1]))
    return np.concatenate(parts)


@pytest.fixture(scope="module")
def data_files(tmp_path_factory):
    """The 10⁶-row Parquet file and a CSV copy of it."""
    rng = np.random.default_rng(SEED)
    special = _adversarial()
    n_random = N_ROWS - len(special)
    random_part = np.concatenate([
        rng.uniform(-4.0, 6.0, n_random // 4),
        rng.uniform(0.0, 0.8, n_random // 4),
        rng.normal(1e6 + 0.2, 0.1, n_random // 4),
        rng.lognormal(10.0, 5.0, n_random - 3 * (n_random // 4)) * rng.choice([-1.0, 1.0], n_random - 3 * (n_random // 4)),
    ])
    x = np.concatenate([special, random_part])
    rng.shuffle(x)
    nan_rows = rng.random(N_ROWS) < 0.001
    x[nan_rows] = np.nan
    null_rows = rng.random(N_ROWS) < 0.002  # stored as Parquet nulls, not NaN
    clean = rng.uniform(-4.0, 6.0, N_ROWS)  # no missing value: the "error" policy passes
    count = rng.integers(-100, 100, N_ROWS).astype(np.int64)
    region = rng.integers(0, REGIONS, N_ROWS)
    district = region * DISTRICTS + rng.integers(0, DISTRICTS, N_ROWS)
    code = district * 10 + rng.integers(0, 3, N_ROWS)
    with np.errstate(over="ignore"):  # ±1e308 become ±inf in float32
        f32 = x.astype(np.float32)
    table = pa.table({
        "x": pa.array(x, mask=null_rows),
        "clean": pa.array(clean),
        "count": pa.array(count, mask=rng.random(N_ROWS) < 0.01),
        "f32": pa.array(f32, mask=null_rows),
        "region": pa.array([f"region {r}" for r in region.tolist()]),
        "district": pa.array([f"d{d:02d}" for d in district.tolist()]),
        "code": pa.array(code),
    })
    folder = tmp_path_factory.mktemp("spark-data")
    parquet = folder / "data.parquet"
    pq.write_table(table, parquet, row_group_size=250_000)
    csv = folder / "data.csv"
    # pyarrow writes the shortest round-trip text of each double, 'nan', 'inf', '-inf', and '' for null.
    pa_csv.write_csv(table.select(["x", "clean", "count", "region", "district", "code"]), csv)
    return parquet, csv


@pytest.fixture(scope="module")
def spark():
    """One local[2] session for the module (sources opened inside reuse it)."""
    with spark_source.spark_session("local[2]") as session:
        yield session


def _spark(location, **kw) -> spark_source.SparkSource:
    source = open_source(parse_source(location, engine="spark", **kw))
    assert isinstance(source, spark_source.SparkSource)
    return source


@pytest.mark.parametrize("lower, upper, bins", CONFIGS)
def test_parquet_histogram_equals_the_file_path(spark, data_files, lower, upper, bins):
    parquet, _ = data_files
    with _spark(parquet) as source:
        assert source.engine == "Spark (local[2])"
        got = source.histogram("x", lower, upper, bins)
    expected = column_histogram(parquet, "x", lower, upper, bins)
    assert expected.n_missing > 0 and expected.n_clamped_low > 0 and expected.n_clamped_high > 0
    assert got == expected, _difference(got, expected)


def test_parquet_folder_is_one_dataset(spark, data_files, tmp_path):
    """A folder of Parquet files (as Spark writes them, with a _SUCCESS marker) counts as its rows together."""
    parquet, _ = data_files
    table = pq.read_table(parquet, columns=["x"])
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, start in enumerate(range(0, N_ROWS, 400_000)):
        pq.write_table(table.slice(start, 400_000), folder / f"part-{i:05d}.snappy.parquet")
    (folder / "_SUCCESS").write_bytes(b"")
    with _spark(folder) as source:
        assert source.histogram("x", 0.1, 0.7, 3) == column_histogram(parquet, "x", 0.1, 0.7, 3)


def test_parquet_other_columns_and_policies(spark, data_files):
    parquet, _ = data_files
    with _spark(parquet) as source:
        for column, lower, upper, bins in [("f32", -3.0, 5.0, 16), ("count", -50.0, 50.0, 10), ("clean", 0.1, 0.7, 3)]:
            for policy in ("drop", "error"):
                try:
                    expected = column_histogram(parquet, column, lower, upper, bins, policy)
                except DataError:
                    assert policy == "error" and column != "clean"
                    with pytest.raises(DataError, match="missing value"):
                        source.histogram(column, lower, upper, bins, policy)
                    continue
                got = source.histogram(column, lower, upper, bins, policy)
                assert got == expected, (column, policy, _difference(got, expected))
        # With missing values, "error" raises on both paths.
        with pytest.raises(DataError, match="missing value"):
            source.histogram("x", -3.0, 5.0, 16, "error")
        with pytest.raises(DataError):
            column_histogram(parquet, "x", -3.0, 5.0, 16, "error")


def test_csv_histogram_equals_the_file_path(spark, data_files):
    _, csv = data_files
    with _spark(csv) as source:
        kinds = {c.name: c.kind for c in source.columns()}
        assert kinds == {"x": "numeric", "clean": "numeric", "count": "numeric", "region": "text",
                         "district": "text", "code": "numeric"}
        for lower, upper, bins in (CONFIGS[2],):  # (each pass parses the CSV again: seconds)
            expected = column_histogram(csv, "x", lower, upper, bins)
            got = source.histogram("x", lower, upper, bins)
            assert got == expected, _difference(got, expected)
        assert source.histogram("clean", -3.0, 5.0, 16, "error") == column_histogram(csv, "clean", -3.0, 5.0, 16, "error")


def test_path_counts_equal_the_file_path(spark, data_files):
    parquet, csv = data_files
    levels = ["region", "district", "code"]
    expected = count_paths(parquet, levels)
    for path in (parquet, csv):
        with _spark(path) as source:
            got = source.path_counts(levels)
        assert got.level_names == expected.level_names
        assert got.paths == expected.paths
        assert np.array_equal(got.counts, expected.counts)
        assert got.rows == expected.rows == N_ROWS
        # a note from the Parquet file's own type; none from the types Spark infers from a CSV's cells
        assert expected.notes == ("column 'code' is numeric; its values are used as categories",)
        assert got.notes == (expected.notes if path == parquet else ())
    assert len(expected.paths) == REGIONS * DISTRICTS * 3


def test_distinct_counts_equal_the_file_path(spark, data_files):
    from dpgui.data.hierarchy import level_value_counts

    parquet, _ = data_files
    names = ["region", "district"]
    expected = level_value_counts(parquet, names)
    with _spark(parquet) as source:
        assert source.distinct_counts(names) == expected
        assert source.distinct_counts(names, limit=2) == {c: min(expected[c], 2) for c in names}
        with pytest.raises(DataError, match="column 'nope' not found"):
            source.distinct_counts(["nope"])


def test_the_window_hierarchy_mode_counts_in_spark_as_from_the_file(spark, data_files):
    """The hierarchy mode's two reads (dpgui.workspace.hierarchy, as the window runs them) over a Spark
    source: the chooser's distinct values and the tree's leaf counts equal the file path's."""
    from dpgui.workspace.hierarchy import level_choices, load_hierarchy
    from dpgui.workspace.hierarchy_planning import HierarchyChoice

    parquet, _ = data_files
    spec = parse_source(str(parquet), engine="spark", spark_master="local[2]")
    columns = ("region", "district", "code")
    assert level_choices(spec, columns) == level_choices(parquet, columns)
    choice = HierarchyChoice(levels=columns)
    from_spark, from_file = load_hierarchy(spec, choice), load_hierarchy(parquet, choice)
    assert from_spark.hierarchy.labels == from_file.hierarchy.labels and from_spark.rows == from_file.rows
    assert np.array_equal(from_spark.leaf_counts, from_file.leaf_counts)
    assert from_spark.source_record["kind"] == "spark" and from_spark.source_record["engine"] == "Spark (local[2])"
    assert from_file.source_record["engine"] == "this computer"


def test_csv_numeric_levels_are_labelled_from_their_text(spark, tmp_path):
    """As in count_paths: a label is the cell's text as written — 02134 stays 02134 (Spark alone would
    infer the integer 2134), 2.50 and 2.5 are two labels, 3.0 stays "3.0" — and no note comes from the
    types Spark infers from the cells."""
    path = tmp_path / "zips.csv"
    rows = ["north,02134,2.50", "north,02134,2.5", "north,02139,3.0", "south,10001,4", "south,10001,0.1"] * 7
    path.write_text("region,zip,share\n" + "\n".join(rows) + "\n", encoding="utf-8")
    levels = ["region", "zip", "share"]
    expected = count_paths(path, levels)
    assert {("north", "02134", "2.5"), ("north", "02134", "2.50"), ("north", "02139", "3.0")} <= set(expected.paths)
    assert expected.notes == ()
    with _spark(path) as source:
        got = source.path_counts(levels)
    assert (got.paths, got.counts.tolist(), got.notes) == (expected.paths, expected.counts.tolist(), expected.notes)


def test_hive_partitions_are_labelled_from_the_folder_names(spark, tmp_path):
    """As a file source reads them: a partition's value is its folder's name (code=01 stays 01), whatever
    the other folders hold — Spark alone would infer an integer from code=01, code=02, code=3 and a text
    once one folder is code=x, so one record would decide the other labels and the note "column 'code'
    is numeric" (published with a hierarchy release). The session's setting is left as it was."""
    import pyarrow.dataset as ds

    codes = [("A", "01"), ("A", "02"), ("B", "3")]
    results = []
    for name, paths in (("numbers", codes), ("text", [*codes, ("B", "x")])):
        folder = tmp_path / f"{name}.parquet"
        table = pa.table({"region": [r for r, _ in paths], "code": [c for _, c in paths],
                          "wage": [1000.0 + i for i in range(len(paths))]})
        ds.write_dataset(table, folder, format="parquet", partitioning=["region", "code"], partitioning_flavor="hive")
        expected = count_paths(folder, ["region", "code"])
        with _spark(folder) as source:
            got = source.path_counts(["region", "code"])
            kinds = {c.name: c.kind for c in source.columns()}
        assert (got.paths, got.counts.tolist(), got.notes) == (expected.paths, expected.counts.tolist(), expected.notes)
        assert kinds["code"] == "text"
        results.append(got)
    assert results[0].paths == (("A", "01"), ("A", "02"), ("B", "3")) and results[0].notes == results[1].notes == ()
    assert spark.conf.get("spark.sql.sources.partitionColumnTypeInference.enabled", None) is None


def test_path_counts_refuse_missing_and_too_many(spark, data_files):
    parquet, _ = data_files
    with _spark(parquet) as source:
        with pytest.raises(DataError, match=r"level column 'count'.*missing"):
            source.path_counts(["region", "count"])
        with pytest.raises(DataError, match="more than 10"):
            source.path_counts(["region", "district"], max_nodes_per_level=10)
        with pytest.raises(DataError, match=r"a value of level 'region' appears under two parents of level 'district'"):
            source.path_counts(["district", "region"])


def test_columns_preview_row_count_table_and_query(spark, data_files):
    parquet, _ = data_files
    with _spark(parquet) as source:
        columns = source.columns()
        assert [(c.name, c.kind, c.dtype) for c in columns][:3] == [
            ("x", "numeric", "double"), ("clean", "numeric", "double"), ("count", "numeric", "bigint")]
        assert {c.name: c.kind for c in columns}["region"] == "text"
        head = source.preview(7)
        assert list(head.columns) == [c.name for c in columns] and len(head) == 7
        expected_head = pq.read_table(parquet).slice(0, 7).to_pandas()
        assert head["region"].tolist() == expected_head["region"].tolist()
        progress: list[float] = []
        assert source.row_count(progress=progress.append) == N_ROWS
        assert progress[0] == 0.0 and progress[-1] == 1.0 and progress == sorted(progress)
    # A catalogue table (a temporary view here) and a query over the dataset (the view `data`).
    spark.read.parquet(str(parquet)).createOrReplaceTempView("dpgui_test_flights")
    expected = column_histogram(parquet, "x", -3.0, 5.0, 16)
    with open_source(SourceSpec("spark", "", table="dpgui_test_flights")) as source:
        assert source.histogram("x", -3.0, 5.0, 16) == expected
    with _spark(parquet, query="SELECT x AS value FROM data") as source:
        assert source.histogram("value", -3.0, 5.0, 16) == expected
    # Spark SQL orders NaN above every number: `x >= 0` keeps the NaN rows (counted as missing).
    query = f"SELECT x FROM parquet.`{parquet}` WHERE x >= 0"
    with open_source(SourceSpec("spark", "", query=query)) as source:
        got = source.histogram("x", -3.0, 5.0, 16)
    n_nan = int(pa.compute.sum(pa.compute.is_nan(pq.read_table(parquet, columns=["x"]).column("x"))).as_py())
    assert n_nan > 0
    assert got.n_clamped_low == 0 and got.n_missing == n_nan and got.total == int(expected.counts[6:].sum())


def test_bad_inputs_are_refused_with_the_fix(spark, data_files, tmp_path):
    parquet, _ = data_files
    with _spark(parquet) as source:
        with pytest.raises(DataError, match=r"column 'nope' not found.*choose among its columns: 'x'"):
            source.histogram("nope", 0.0, 1.0, 4)
        with pytest.raises(DataError, match=r"column 'region' .* is not numeric .*string.*choose a numeric column"):
            source.histogram("region", 0.0, 1.0, 4)
        with pytest.raises(ParameterError, match="bounds inverted"):
            source.histogram("x", 1.0, 0.0, 4)
        with pytest.raises(ParameterError, match="policy"):
            source.histogram("x", 0.0, 1.0, 4, "ignore")
    with pytest.raises(DataError, match="file not found"):
        _spark(tmp_path / "absent.parquet")
    with pytest.raises(ParameterError, match=r"both a dataset .* and a table"):
        _spark(parquet, table="flights")
    with pytest.raises(DataError, match=r"already running on local\[2\].*not on local\[3\]"):
        _spark(parquet, spark_master="local[3]")
    with pytest.raises(DataError, match="table 'no_such_table'"):
        open_source(SourceSpec("spark", "", table="no_such_table"))
    for query in ("CREATE TEMPORARY VIEW dpgui_written AS SELECT 1 AS x", "DROP VIEW dpgui_test_flights",
                  "INSERT INTO dpgui_test_flights SELECT 1", "SELECT 1; DROP VIEW dpgui_test_flights"):
        with pytest.raises(ParameterError, match=r"not one read-only SELECT.*dpgui never changes data"):
            open_source(SourceSpec("spark", "", query=query))
    assert not spark.catalog.tableExists("dpgui_written")
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(DataError, match="Parquet and CSV"):
        _spark(text)
    with pytest.raises(DataError, match="decimal comma"):
        _spark(data_files[1], dialect=spark_source_dialect(";", ","))
    empty = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"x": pa.array([], type=pa.float64())}), empty)
    with _spark(empty) as source, pytest.raises(DataError, match="no data rows"):
        source.histogram("x", 0.0, 1.0, 4)


def spark_source_dialect(delimiter: str, decimal: str):
    from dpgui.data.file_types import CsvDialect

    return CsvDialect.checked(delimiter, decimal)


def test_decimal_and_large_integer_columns(spark, tmp_path):
    """Both paths bin a decimal or an int64 beyond 2**53 as its nearest double (CAST … AS DOUBLE)."""
    import decimal

    codes = list(range(-5000, 5000)) + list(np.random.default_rng(SEED).integers(-10**9, 10**9, 20_000))
    values = [decimal.Decimal(int(c)).scaleb(-3) for c in codes]
    big = [2**53 + i for i in range(-5, 6)] * 1000 + [2**63 - 1, -(2**63)]
    path = tmp_path / "typed.parquet"
    pq.write_table(pa.table({"d": pa.array(values, type=pa.decimal128(12, 3)),
                             "big": pa.array((big * 3)[: len(values)], type=pa.int64())}), path)
    with _spark(path) as source:
        for column, lower, upper, bins in [("d", -0.5, 0.5, 1000), ("d", 0.1, 0.7, 3),
                                           ("big", 2.0**53 - 4, 2.0**53 + 4, 8)]:
            expected = column_histogram(path, column, lower, upper, bins)
            got = source.histogram(column, lower, upper, bins)
            assert got == expected, (column, _difference(got, expected))


def test_cancel_stops_the_job(spark, data_files):
    parquet, _ = data_files
    asked = []

    def should_cancel() -> bool:
        asked.append(1)
        return len(asked) > 1  # the check before the job passes; the first poll while it runs cancels

    with _spark(parquet) as source:
        with pytest.raises(Cancelled):
            source.histogram("x", -3.0, 5.0, 65_536, should_cancel=should_cancel)
        # The session is still usable afterwards.
        assert source.histogram("clean", -3.0, 5.0, 4).n_rows == N_ROWS


def test_missing_pyspark_or_java_is_a_data_error_with_the_fix(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "pyspark.sql", None)
    with pytest.raises(DataError, match=r"Spark support is not installed; pip install 'dpgui\[spark\]'"):
        spark_source._pyspark()
    monkeypatch.undo()
    monkeypatch.setenv("JAVA_HOME", "/nonexistent/java-home")
    with pytest.raises(DataError, match="openjdk-17-jre-headless"):
        spark_source._check_java()
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(DataError, match=r"Java is not installed.*JAVA_HOME"):
        spark_source._check_java()


def test_shuffle_partitions_follow_the_local_cores():
    assert spark_source._shuffle_partitions("local[2]") == 4
    assert spark_source._shuffle_partitions("local") == 2
    assert spark_source._shuffle_partitions("local[*]") == 2 * (os.cpu_count() or 1)
    assert spark_source._shuffle_partitions("spark://host:7077") is None
    assert spark_source._shuffle_partitions("yarn") is None


def _difference(got, expected) -> str:
    fields = ("n_rows", "n_missing", "n_clamped_low", "n_clamped_high", "missing_policy")
    diff = {f: (getattr(got, f), getattr(expected, f)) for f in fields if getattr(got, f) != getattr(expected, f)}
    bins = np.flatnonzero(got.counts != expected.counts)[:5]
    return f"fields {diff}, first differing bins {bins.tolist()}"



def test_the_manifest_records_the_csv_dialect_spark_read_with(spark, tmp_path):
    """As for a file on this computer: the dialect stated, or the name's default, is in the source record
    with its origin; a file whose head suggests another dialect is refused until one is stated."""
    path = tmp_path / "semi.csv"
    path.write_text("x;y\n1.5;a\n2.5;b\n")
    with pytest.raises(UnstatedDialect, match=r"--delimiter semicolon --decimal '\.'"):
        _spark(path)  # suggested by its head only
    with _spark(path, dialect=spark_source_dialect(";", ".")) as source:  # stated
        assert source.public_record()["dialect"] == {"delimiter": ";", "decimal": ".", "origin": "stated"}
        assert source.histogram("x", 0.0, 4.0, 4).counts.tolist() == [0, 1, 1, 0]
    parquet = tmp_path / "p.parquet"
    pq.write_table(pa.table({"x": [1.0]}), parquet)
    with _spark(parquet) as source:
        assert "dialect" not in source.public_record()
