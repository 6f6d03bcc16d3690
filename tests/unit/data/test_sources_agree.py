"""Every source counts exactly what the file path counts on the same rows.

One seeded adversarial dataset (:func:`_dataset`) is written into every format dpgui reads — CSV (comma;
semicolon with a decimal point, and with a decimal comma, both stated; tab), gzip and zstd CSV,
one Parquet file, a folder of Parquet files, Stata .dta, SPSS .sav, SAS transport .xpt, an SQLite table, a
PostgreSQL table and query (the ``pg_server`` cluster), Spark local[2] reading the Parquet file and the
semicolon CSV file (Spark cannot read a decimal comma: refused with the fix) — and each is opened through
the public interface only (``open_source(parse_source(...))``). Each source is one test id; it must give,
for every binning setting:

* ``histogram(x, …, missing="drop")``: every :class:`~dpgui.data.histogram.ColumnHistogram` field equal to
  :func:`~dpgui.data.histogram.column_histogram` on the reference Parquet file;
* ``missing="error"``: a DataError on ``x`` (nulls and NaN) and on ``z`` (NaN only, never null: a source
  must not take NaN for a number) as the reference raises one, and equal counts on ``y`` (no missing value);
* ``path_counts`` of 3 text levels and of 4 levels whose leaf is numeric (labels written from the numbers,
  with a note where the source's own types say it is numeric): same level names, paths, counts, rows and
  notes; a CSV's labels are its cells' text and it has no note (:func:`_as_read_from`);
* ``row_count()``; ``columns()``: the same names and kinds (a query's column order is its own).

The ``x`` column holds, for each (lower, upper, K) in :data:`SETTINGS`, every bin edge (both numpy.linspace's
and the binning rule's ``j*step + lower``) with its two float64 neighbours, values outside the bounds on both
sides, in-range random values, and specials: ±0, ±inf, ±DBL_MAX, subnormals, 1e±300, nulls and NaN.

**The reference is what each format holds.** CSV, Parquet, SQLite, PostgreSQL and Spark hold every float64
(SQLite stores NaN as NULL: both are missing). Three formats cannot hold some values, and the reference for
them is the Parquet file of the values the format stores (read back with pyreadstat, and checked to differ
from the written ones only as described here, so no other loss can hide):

* Stata .dta: no ±inf, nothing above 8.988e307 in magnitude (Stata's missing codes live there; the writer
  refuses them), so those rows are written as missing ('.');
* SPSS .sav: ±DBL_MAX is SYSMIS / LOWEST-HIGHEST, read back as missing;
* SAS .xpt: IBM hex floats: magnitudes under 5.4e-79 become 0, from ~1e75 up become ±inf (same sign).

The ``y``/``z`` columns and the levels are within every format's range, so their reference is the same
everywhere.

Cost (measured 2026-11-25 on 2 cores shared with other jobs, load average 3-5): 60-80 s wall, ~34 s CPU; Spark
(one local[2] session for the module, its start included) is about half of it, writing the files ~10 s.
"""

from __future__ import annotations

import dataclasses
import gzip
import itertools
import math
import pathlib
import sqlite3

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpgui.core.hierarchy import label_order_key
from dpgui.data.csv_dialect import UnstatedDialect
from dpgui.data.file_types import CsvDialect
from dpgui.data.hierarchy import PathCounts
from dpgui.data.histogram import ColumnHistogram, column_histogram
from dpgui.data.source import open_source
from dpgui.data.source_spec import parse_source
from dpgui.errors import DataError

SEED = 16_2026
# (lower, upper, K): non-representable bounds (0.1, 0.7, -0.3) with K = 1, 7 and 65,536; a plain grid;
# a narrow range far from 0 (edges computed with large rounding errors relative to the step).
SETTINGS = [
    (0.1, 0.7, 1),
    (0.1, 0.7, 7),
    (-0.3, 0.1, 65_536),
    (-3.0, 5.0, 16),
    (1e6 + 0.1, 1e6 + 0.3, 1000),
]
# The histograms each source computes: x (with missing values) under "drop" for every setting; y (no
# missing value) under "error" (counted as under "drop", with that policy recorded) for two of them; z
# (y with NaN, never null: NaN alone must count as missing) under "drop". x and z under "error": DataError.
HISTOGRAMS = ([("x", "drop", setting) for setting in SETTINGS] + [("y", "error", setting) for setting in SETTINGS[1:3]]
              + [("z", "drop", SETTINGS[3])])
LEVELS = ("region", "district", "unit")
# A 4-level hierarchy whose leaf level is numeric (labels from the numbers, with a note saying so).
NUMERIC_LEVELS = (*LEVELS, "code")
DBL_MAX = float(np.finfo(np.float64).max)
STATA_MAX = 8.988465674311579e307  # the largest double Stata stores (above: missing codes .a-.z)
IBM_TINY = 5.397605346934028e-79  # 16**-65: the smallest IBM double
IBM_HUGE = 9e74  # readstat's xpt writer stores larger magnitudes as ±inf (found by reading back)


# --------------------------------------------------------------------------- the data


def _adversarial_x(rng: np.random.Generator) -> np.ndarray:
    """Every edge of every setting and its two neighbours, out-of-bounds and special values, random ones."""
    parts = []
    for lower, upper, k in SETTINGS:
        step = (upper - lower) / k
        edges = np.unique(np.concatenate([np.linspace(lower, upper, k + 1),
                                          np.arange(k + 1, dtype=np.float64) * step + lower]))
        parts += [edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf)]
        span = upper - lower
        parts.append(np.array([lower - span, lower - 1e-9, upper + 1e-9, upper + span, upper, lower,
                               -1e12, 1e12]))
        parts.append(rng.uniform(lower, upper, 500))
    parts.append(np.array([0.0, -0.0, np.inf, -np.inf, DBL_MAX, -DBL_MAX, 5e-324, -5e-324,
                           2.2250738585072014e-308, 1e300, -1e300, 1e-300, 1e-80, -1e-80, 1e75, -1e75,
                           STATA_MAX, -STATA_MAX, 9e307, 2.0**53 + 2, 0.1, 0.7]))
    return np.concatenate(parts)


def _dataset() -> pd.DataFrame:
    """The rows, shuffled: x (with missing values: NaN here, null where ``x_null``), y (none missing), z (y
    with NaNs), 3 nested text levels and a numeric one."""
    rng = np.random.default_rng(SEED)
    adversarial = _adversarial_x(rng)
    n_missing = len(adversarial) // 50
    # 1% NaN and 1% null rows (NaN in the formats without a separate null), added, so every edge stays.
    x = np.concatenate([adversarial, np.full(n_missing, np.nan), rng.uniform(-5.0, 5.0, n_missing)])
    x_null = np.arange(len(x)) >= len(adversarial) + n_missing
    order = rng.permutation(len(x))
    x, x_null = x[order], x_null[order]
    n = len(x)
    # y: x's finite values that every format holds exactly (IBM range), else a random value; never missing.
    inside = np.isfinite(x) & (np.abs(x) < 1e70) & ((np.abs(x) > 1e-70) | (x == 0)) & ~x_null
    y = np.where(inside, x, rng.uniform(-5.0, 5.0, n))
    # Non-ASCII text, separators inside a label (quoted in the CSV files), a quote (tabs and line breaks in
    # a category are refused, by every source alike).
    regions = np.array(["Zürich; Stadt", "Île-de-France, Nord", 'west | "W"'])
    region = rng.integers(0, 3, n)
    district = region * 4 + rng.integers(0, 4, n)
    unit = district * 3 + rng.integers(0, 3, n)
    return pd.DataFrame({
        "x": x,
        "x_null": x_null,
        "y": y,
        "z": np.where(rng.random(n) < 0.005, np.nan, y),
        "region": regions[region],
        "district": np.array([f"D{d:02d} {regions[d // 4]}" for d in range(12)])[district],
        "unit": np.array([f"unit-{u}" for u in range(36)])[unit],
        "code": (unit * 3 + 1) / 10,  # 0.1, 0.4, 0.7, …: one number per unit
    })


def _arrow(frame: pd.DataFrame) -> pa.Table:
    """The columns x, y, z, levels as Arrow (x null where ``x_null``; z's NaN are NaN, not null)."""
    return pa.table({
        "x": pa.array(frame["x"].to_numpy(), mask=frame["x_null"].to_numpy()),
        "y": pa.array(frame["y"].to_numpy()),
        "z": pa.array(frame["z"].to_numpy()),
        **{name: pa.array(frame[name].tolist(), type=pa.string()) for name in LEVELS},
        "code": pa.array(frame["code"].to_numpy()),
    })


def _number_text(v: float | None, decimal: str) -> str:
    """The shortest text that reads back as ``v`` ('' for null; 'nan', 'inf', '-inf')."""
    if v is None:
        return ""
    return repr(float(v)).replace(".", decimal)


def _quoted(text: str) -> str:
    """A CSV field: in double quotes (doubled inside) when it holds a separator or a quote."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',;\t"') else text


def _csv_text(frame: pd.DataFrame, sep: str, decimal: str) -> str:
    lines = [sep.join(("x", "y", "z", *LEVELS, "code"))]
    for x, null, y, z, *levels, code in zip(frame["x"].tolist(), frame["x_null"].tolist(), frame["y"].tolist(),
                                            frame["z"].tolist(), *(frame[name].tolist() for name in NUMERIC_LEVELS),
                                            strict=True):
        lines.append(sep.join((_number_text(None if null else x, decimal), _number_text(y, decimal),
                               _number_text(z, decimal), *map(_quoted, levels), _number_text(code, decimal))))
    return "\n".join(lines) + "\n"


def _stat_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """x (nulls as NaN: the formats have one system missing value), y, z, levels."""
    x = frame["x"].to_numpy().copy()
    x[frame["x_null"].to_numpy()] = np.nan
    return pd.DataFrame({"x": x, "y": frame["y"].to_numpy(), "z": frame["z"].to_numpy(),
                         **{name: frame[name] for name in NUMERIC_LEVELS}})


def _held_by_stata(x: np.ndarray) -> np.ndarray:
    """What a .dta can hold: no ±inf, nothing beyond ±STATA_MAX (written as missing)."""
    return np.where(np.isfinite(x) & (np.abs(x) <= STATA_MAX), x, np.nan)


def _check_loss(fmt: str, written: np.ndarray, held: np.ndarray) -> None:
    """The values a stat file holds differ from those written only as the module docstring says."""
    same = (written == held) | (np.isnan(written) & np.isnan(held))
    w, h = written[~same], held[~same]
    if fmt == "sav":
        ok = (np.abs(w) == DBL_MAX) & np.isnan(h)
    elif fmt == "xpt":
        ok = (((np.abs(w) < IBM_TINY) & (h == 0))
              | ((np.abs(w) >= IBM_HUGE) & np.isinf(h) & (np.sign(w) == np.sign(h))))
    else:
        ok = np.zeros(len(w), dtype=bool)
    assert ok.all(), f"{fmt} holds {[(float(a), float(b)) for a, b in zip(w[~ok][:5], h[~ok][:5])]} (written, read)"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, pathlib.Path]:
    """Every file (and the reference Parquet file of what each holds): name -> path."""
    import pyreadstat

    base = tmp_path_factory.mktemp("agree")
    frame = _dataset()
    table = _arrow(frame)
    out: dict[str, pathlib.Path] = {}
    out["parquet"] = base / "data.parquet"
    pq.write_table(table, out["parquet"], row_group_size=50_000)
    folder = base / "folder"
    folder.mkdir()
    cuts = [0, 1, 70_001, 150_000, table.num_rows]  # uneven parts, one of a single row
    for i, (a, b) in enumerate(itertools.pairwise(cuts)):
        pq.write_table(table.slice(a, b - a), folder / f"part-{i}.parquet")
    out["parquet-folder"] = folder

    comma = _csv_text(frame, ",", ".")
    out["csv-comma"] = base / "comma.csv"
    out["csv-comma"].write_text(comma, encoding="utf-8")
    out["csv-semicolon-decimal-comma"] = base / "semicolon.csv"
    out["csv-semicolon-decimal-comma"].write_text(_csv_text(frame, ";", ","), encoding="utf-8")
    out["csv-semicolon"] = base / "semicolon-point.csv"
    out["csv-semicolon"].write_text(_csv_text(frame, ";", "."), encoding="utf-8")
    out["csv-tab"] = base / "tab.tsv"
    out["csv-tab"].write_text(_csv_text(frame, "\t", "."), encoding="utf-8")
    out["csv-gzip"] = base / "data.csv.gz"
    out["csv-gzip"].write_bytes(gzip.compress(comma.encode(), compresslevel=1))
    out["csv-zstd"] = base / "data.csv.zst"
    with pa.CompressedOutputStream(str(out["csv-zstd"]), "zstd") as stream:  # pyarrow's zstd: no extra package
        stream.write(comma.encode())

    stat = _stat_frame(frame)
    written = {"dta": stat.assign(x=_held_by_stata(stat["x"].to_numpy())), "sav": stat, "xpt": stat}
    writers = {"dta": pyreadstat.write_dta, "sav": pyreadstat.write_sav,
               "xpt": lambda df, path: pyreadstat.write_xport(df, path, file_format_version=5)}
    readers = {"dta": pyreadstat.read_dta, "sav": pyreadstat.read_sav, "xpt": pyreadstat.read_xport}
    for fmt, data in written.items():
        path = base / f"data.{fmt}"
        writers[fmt](data, path)
        back, _ = readers[fmt](path)
        _check_loss(fmt, data["x"].to_numpy(), back["x"].to_numpy())
        np.testing.assert_array_equal(back["y"].to_numpy(), data["y"].to_numpy())
        np.testing.assert_array_equal(back["z"].to_numpy(), data["z"].to_numpy())  # NaN where NaN
        for name in NUMERIC_LEVELS:
            assert back[name].tolist() == data[name].tolist(), (fmt, name)
        out[fmt] = path
        out[f"{fmt}-reference"] = base / f"held-{fmt}.parquet"
        pq.write_table(table.set_column(0, "x", pa.array(back["x"].to_numpy())), out[f"{fmt}-reference"])

    out["sqlite"] = base / "data.sqlite"
    with sqlite3.connect(out["sqlite"]) as conn:
        conn.execute("CREATE TABLE agree_rows (x REAL, y REAL, z REAL, region TEXT, district TEXT, unit TEXT, code REAL)")
        conn.executemany("INSERT INTO agree_rows VALUES (?, ?, ?, ?, ?, ?, ?)", zip(*(table[c].to_pylist() for c in
                                                                                 table.column_names)))
    conn.close()
    return out


@pytest.fixture(scope="module")
def pg_table(pg_server, files) -> str:
    """The rows in the session's PostgreSQL cluster, table ``agree_rows``."""
    table = pq.read_table(files["parquet"])
    pg_server.execute("DROP TABLE IF EXISTS agree_rows")
    pg_server.execute("CREATE TABLE agree_rows (x float8, y float8, z float8, region text, district text, unit text, "
                      "code float8)")
    pg_server.execute("INSERT INTO agree_rows SELECT * FROM unnest(%s::float8[], %s::float8[], %s::float8[], %s::text[], "
                      "%s::text[], %s::text[], %s::float8[])", [table[c].to_pylist() for c in table.column_names])
    return "agree_rows"


@pytest.fixture(scope="module")
def spark():
    """One local[2] Spark session for the module (skipped without PySpark or Java; fails under CI)."""
    from system_pieces import require, spark_unavailable_reason

    require(spark_unavailable_reason())
    from dpgui.data import spark_source

    with spark_source.spark_session("local[2]") as session:
        yield session


# --------------------------------------------------------------------------- the sources

# source id -> the name of its reference file (what that format holds, as Parquet)
SOURCES = {
    "parquet": "parquet",
    "parquet-folder": "parquet",
    "csv-comma": "parquet",
    "csv-semicolon-decimal-comma": "parquet",  # its dialect stated (--delimiter ';' --decimal ','), as a release needs
    "csv-semicolon": "parquet",
    "csv-tab": "parquet",
    "csv-gzip": "parquet",
    "csv-zstd": "parquet",
    "stata-dta": "dta-reference",
    "spss-sav": "sav-reference",
    "sas-xpt": "xpt-reference",
    "sqlite": "parquet",
    "postgresql-table": "parquet",
    "postgresql-query": "parquet",
    "spark-parquet": "parquet",
    # CSV through Spark: the dialect stated, quotes doubled inside quoted labels, 'nan'/'inf' text (one
    # file: each Spark source costs ~10 s on a loaded machine; the comma file reads the same way).
    "spark-csv-semicolon": "parquet",
}


#: The dialect stated for the CSV files that are not written in their name's default (a confidential file
#: is read only as stated, or with the default: a file whose head suggests another is refused).
STATED = {"csv-semicolon-decimal-comma": CsvDialect(";", ","), "csv-semicolon": CsvDialect(";", ".")}


def _spec(source_id: str, files: dict[str, pathlib.Path], request: pytest.FixtureRequest):
    if source_id.startswith(("parquet", "csv")):
        return parse_source(files[source_id], dialect=STATED.get(source_id))
    if source_id in ("stata-dta", "spss-sav", "sas-xpt"):
        return parse_source(files[source_id.split("-")[1]])
    if source_id == "sqlite":
        return parse_source(f"sqlite:///{files['sqlite']}", table="agree_rows")
    if source_id.startswith("postgresql"):
        pg = request.getfixturevalue("pg_server")
        table = request.getfixturevalue("pg_table")
        request.getfixturevalue("monkeypatch").setenv("DPGUI_DB_PASSWORD", pg.password)
        if source_id == "postgresql-table":
            return parse_source(pg.url, table=table)
        return parse_source(pg.url, query=f"SELECT region, x, code, z, unit, y, district FROM {table} WHERE true")
    request.getfixturevalue("spark")
    if source_id.startswith("spark-csv"):
        csv_id = source_id.removeprefix("spark-")
        return parse_source(files[csv_id], engine="spark", dialect=STATED.get(csv_id))
    assert source_id == "spark-parquet"
    return parse_source(files["parquet"], engine="spark")


def _as_read_from(source_id: str, counts: PathCounts) -> PathCounts:
    """The reference's path counts as a CSV file (read locally or by Spark) gives them: a label is the cell's
    text as written, not the number it holds (10.0 stays "10.0", "0,7" with a decimal comma), and no note says
    that a column is numeric (a CSV's column types would be read from its cells)."""
    csv_id = source_id.removeprefix("spark-")
    if not csv_id.startswith("csv"):
        return counts
    decimal = STATED.get(csv_id, CsvDialect(",", ".")).decimal
    paths = [(*path[:-1], _number_text(float(path[-1]), decimal)) if path[-1][:1].isdigit() else path
             for path in counts.paths]
    order = sorted(range(len(paths)), key=lambda i: tuple(label_order_key(label) for label in paths[i]))
    return PathCounts(counts.level_names, tuple(paths[i] for i in order), counts.counts[order], counts.rows, ())


def _hist_difference(got: ColumnHistogram, expected: ColumnHistogram) -> str | None:
    """None when equal; else the differing fields (and the first differing bins) in words."""
    diffs = []
    for field in dataclasses.fields(ColumnHistogram):
        a, b = getattr(got, field.name), getattr(expected, field.name)
        if field.name == "counts":
            if not np.array_equal(a, b):
                bad = np.flatnonzero(np.asarray(a) != np.asarray(b))[:4] if len(a) == len(b) else []
                diffs.append(f"counts differ (bin: got/expected {[(int(j), int(a[j]), int(b[j])) for j in bad]})")
        elif a != b and not (isinstance(a, float) and math.isnan(a) and math.isnan(b)):
            diffs.append(f"{field.name} {a!r} != {b!r}")
    return "; ".join(diffs) or None


def _outcome(compute):
    """The histogram, or the DataError raised (its type only: messages name the file, the table, …)."""
    try:
        return compute()
    except DataError:
        return DataError


@pytest.mark.slow
@pytest.mark.parametrize("source_id", list(SOURCES))
def test_source_counts_equal_the_file_path(source_id, files, request):
    reference = files[SOURCES[source_id]]
    problems: list[str] = []
    with open_source(_spec(source_id, files, request)) as source:
        with open_source(parse_source(files["parquet"])) as parquet:
            ref_columns = {c.name: c.kind for c in parquet.columns()}
        columns = {c.name: c.kind for c in source.columns()}
        if columns != ref_columns or (source_id != "postgresql-query" and list(columns) != list(ref_columns)):
            problems.append(f"columns (name: kind) {columns} != {ref_columns}")
        n_rows = pq.ParquetFile(reference).metadata.num_rows
        if source.row_count() != n_rows:
            problems.append(f"row_count {source.row_count()} != {n_rows}")

        for column, missing, (lower, upper, k) in HISTOGRAMS:
            expected = column_histogram(reference, column, lower, upper, k, missing)
            got = _outcome(lambda: source.histogram(column, lower, upper, k, missing))
            if not isinstance(got, ColumnHistogram):
                problems.append(f"histogram({column}, {lower}, {upper}, {k}, {missing}) raised {got}")
            elif (diff := _hist_difference(got, expected)) is not None:
                problems.append(f"histogram({column}, {lower}, {upper}, {k}, {missing}): {diff}")
        # x and z hold missing values: under "error" the file path refuses them, and so must every source.
        lower, upper, k = SETTINGS[1]
        for column in ("x", "z"):
            expected_error = _outcome(lambda: column_histogram(reference, column, lower, upper, k, "error"))
            assert expected_error is DataError
            got_error = _outcome(lambda: source.histogram(column, lower, upper, k, "error"))
            if got_error is not DataError:
                problems.append(f"histogram({column}, error) gave {got_error!r}, not a DataError")

        from dpgui.data.hierarchy import count_paths

        for levels in (LEVELS, NUMERIC_LEVELS):
            expected_paths = _as_read_from(source_id, count_paths(reference, levels))
            got_paths = source.path_counts(levels)
            for name in ("level_names", "paths", "rows", "notes"):
                if getattr(got_paths, name) != getattr(expected_paths, name):
                    problems.append(f"path_counts({len(levels)} levels) {name}: {getattr(got_paths, name)!r:.300} "
                                    f"!= {getattr(expected_paths, name)!r:.300}")
            if not np.array_equal(got_paths.counts, expected_paths.counts):
                problems.append(f"path_counts({len(levels)} levels) counts differ")
    assert not problems, f"{source_id} ({source.engine}) disagrees with the file path:\n  " + "\n  ".join(problems)


def test_the_dataset_is_adversarial(files):
    """The reference data holds what the module docstring promises (so a pass means something)."""
    table = pq.read_table(files["parquet"])
    x = table["x"].to_numpy(zero_copy_only=False)
    assert table["x"].null_count > 0 and np.isnan(x).sum() > table["x"].null_count  # nulls and NaN
    assert {np.inf, -np.inf, DBL_MAX, -DBL_MAX, 5e-324} <= set(x[~np.isnan(x)].tolist())
    for lower, upper, k in SETTINGS:
        edges = np.arange(k + 1, dtype=np.float64) * ((upper - lower) / k) + lower
        assert np.isin(edges, x).all() and np.isin(np.nextafter(edges, -np.inf), x).all()
        assert (x < lower).any() and (x > upper).any()
    for fmt in ("dta", "sav", "xpt"):  # each of these formats lost something, checked in the fixture
        held = pq.read_table(files[f"{fmt}-reference"])["x"].to_numpy(zero_copy_only=False)
        assert np.count_nonzero(np.isnan(held)) >= np.count_nonzero(np.isnan(x))
        assert not np.array_equal(held, x, equal_nan=True)


def test_spark_refuses_a_decimal_comma_csv_with_the_fix(files, spark):
    """Spark reads numbers with a decimal point only: a decimal comma is refused before any job, in one
    line with the fix; without a stated dialect the file's head only suggests one, and the file is refused
    until it is stated (as a file source does)."""
    with pytest.raises(DataError, match=r"decimal comma.*convert the file to Parquet, or use --engine local"):
        open_source(parse_source(files["csv-semicolon-decimal-comma"], engine="spark", dialect=CsvDialect(";", ",")))
    with pytest.raises(UnstatedDialect, match=r"--delimiter semicolon --decimal ','"):
        open_source(parse_source(files["csv-semicolon-decimal-comma"], engine="spark"))


@pytest.mark.parametrize("source_id", list(STATED))
def test_a_csv_not_in_its_names_default_is_refused_until_its_dialect_is_stated(files, source_id):
    """The head of a semicolon file suggests its dialect, and that is all: opened without a stated dialect
    it is refused (before anything is counted) with the options that state it."""
    with pytest.raises(UnstatedDialect) as refused:
        open_source(parse_source(files[source_id]))
    assert refused.value.suggestion.dialect == STATED[source_id]
    dialect = STATED[source_id]
    assert f"--delimiter semicolon --decimal '{dialect.decimal}'" in str(refused.value)
