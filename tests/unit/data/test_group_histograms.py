"""The histogram of a numeric column for each public group, from a Parquet file, a CSV file and an SQLite
table: equal to an independent pandas groupby of the same rows, put on the public list — a listed group
absent from the data gets zeros, a value not in the list (and a missing group value) is dropped or counted
in "other" — under both policies; and two tables that differ in one record give the same released groups
and the same plan (only the noisy values may differ).
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

from dpgui.core.grouped_cdf import OTHER_LABEL, GroupList, plan_grouped, release_grouped
from dpgui.vocabulary import Neighbours, OtherGroups
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.data.group_histograms import group_histograms
from dpgui.data.source import open_source
from dpgui.data.source_spec import parse_source
from dpgui.errors import DataError

N = 2000
LOWER, UPPER, BINS = 0.0, 10.0, 5  # width 2: the bin of x is floor(x / 2), exactly
LISTED = ("north", "south", "absent")  # "absent" is in no row; "east" and "west" are not listed
SOURCES = ["parquet", "csv", "sqlite"]


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(30)
    g = rng.choice(np.array(["north", "south", "east", "west", None], dtype=object), N, p=[0.4, 0.3, 0.15, 0.1, 0.05])
    x = rng.uniform(-3.0, 13.0, N)
    x[rng.random(N) < 0.05] = np.nan
    x[:4] = [-np.inf, np.inf, LOWER, UPPER]
    return pd.DataFrame({"g": g, "x": x})


def _write(frame: pd.DataFrame, base: pathlib.Path) -> dict[str, pathlib.Path]:
    base.mkdir(parents=True, exist_ok=True)
    out = {"parquet": base / "rows.parquet", "csv": base / "rows.csv", "sqlite": base / "rows.db"}
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), out["parquet"])
    frame.assign(x=[("" if math.isnan(v) else repr(float(v))) for v in frame["x"]]).to_csv(out["csv"], index=False)
    with sqlite3.connect(out["sqlite"]) as conn:
        conn.execute("CREATE TABLE rows (g TEXT, x REAL)")
        conn.executemany("INSERT INTO rows VALUES (?, ?)",
                         [(a, None if math.isnan(v) else float(v)) for a, v in frame.itertuples(index=False)])
    return out


def _open(source_id: str, files: dict[str, pathlib.Path]):
    if source_id == "sqlite":
        return open_source(parse_source(f"sqlite:///{files['sqlite']}", table="rows"))
    return open_source(parse_source(files[source_id]))


def _expected(frame: pd.DataFrame, groups: GroupList) -> dict[str, tuple[list[int], int]]:
    """Per released label, (bin counts, missing values), by pandas without the data layer: bins by
    floor(x / 2) with values outside the bounds clamped into the end bins."""
    listed = frame["g"].isin(groups.labels)
    label = frame["g"].where(listed, OTHER_LABEL if groups.other is OtherGroups.OTHER else None)
    x = frame["x"]
    binned = np.floor(np.clip(x, LOWER, UPPER - 1e-9) / 2.0)
    table = frame.assign(label=label, bin=binned, missing=x.isna())
    out = {}
    for name in groups.released:
        rows = table[table["label"] == name]
        counts = rows.dropna(subset=["x"]).groupby("bin").size().reindex(range(BINS), fill_value=0)
        out[name] = (counts.astype(int).tolist(), int(rows["missing"].sum()))
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, pathlib.Path]:
    return _write(_frame(), tmp_path_factory.mktemp("group-histograms"))


@pytest.mark.parametrize("policy", list(OtherGroups))
@pytest.mark.parametrize("source_id", SOURCES)
def test_each_public_groups_histogram_is_the_groupby_of_its_rows(source_id, policy, files):
    groups = GroupList(LISTED, policy)
    with _open(source_id, files) as source:
        got = group_histograms(source, "g", "x", LOWER, UPPER, BINS, groups)
    expected = _expected(_frame(), groups)
    assert got.labels == groups.released == tuple(expected)
    assert ("absent" in got.labels) and ("east" not in got.labels) and ("west" not in got.labels)
    for name, histogram in zip(got.labels, got.histograms):
        assert (histogram.counts.tolist(), histogram.n_missing) == expected[name], name
        assert histogram.n_rows == histogram.total + histogram.n_missing
    assert got.of("absent").n_rows == 0 and not got.of("absent").counts.any()
    assert got.counts.shape == (len(got.labels), BINS) and got.n_missing == [expected[n][1] for n in got.labels]
    frame = _frame()
    if policy is OtherGroups.OTHER:  # east, west and the missing group values: every row is somewhere
        assert sum(h.n_rows for h in got.histograms) == N
        assert got.of(OTHER_LABEL).n_rows == int((~frame["g"].isin(LISTED)).sum())
    else:
        assert sum(h.n_rows for h in got.histograms) == int(frame["g"].isin(LISTED).sum())
    assert got.table_rows == N  # the table's rows, whichever groups are released (the data's identity)


def test_the_file_sources_and_sqlite_agree(files):
    groups = GroupList(LISTED, OtherGroups.OTHER)
    results = []
    for source_id in SOURCES:
        with _open(source_id, files) as source:
            results.append(group_histograms(source, "g", "x", LOWER, UPPER, BINS, groups))
    for other in results[1:]:
        assert other.labels == results[0].labels
        assert all(a == b for a, b in zip(other.histograms, results[0].histograms))


@pytest.mark.parametrize("neighbours", list(Neighbours))
def test_neighbouring_tables_give_the_same_groups_and_plan(neighbours, tmp_path):
    """Table B differs from A in one record: under change, A's only "south" row moves to a value seen
    nowhere else; under add/remove, that row is removed. The released groups and the plan are the same."""
    frame = pd.DataFrame({"g": ["north", "north", "south", "east"], "x": [1.0, 3.0, 5.0, 7.0]})
    neighbour = frame.copy()
    if neighbours is Neighbours.CHANGE:
        neighbour.loc[2, "g"] = "a value seen nowhere else"
    else:
        neighbour = neighbour.drop(index=2)
    privacy = PrivacySpec(1.0, neighbours)
    for policy in OtherGroups:
        groups = GroupList(("north", "south"), policy)
        released = []
        for name, table in (("a", frame), ("b", neighbour)):
            paths = _write(table, tmp_path / f"{name}-{policy}")
            with _open("parquet", paths) as source:
                histograms = group_histograms(source, "g", "x", LOWER, UPPER, BINS, groups)
            plan = plan_grouped(groups, BINS, privacy)  # public parameters only
            out = release_grouped(histograms.counts, plan, SeededRandom(1), LOWER, UPPER,
                                  missing=histograms.n_missing)
            released.append((histograms.labels, out.labels, plan, out.plan))
        assert released[0] == released[1]
        assert released[0][0] == groups.released


def test_a_table_without_rows_is_refused(tmp_path):
    paths = _write(pd.DataFrame({"g": pd.Series([], dtype=object), "x": pd.Series([], dtype=float)}), tmp_path)
    with _open("parquet", paths) as source, pytest.raises(DataError, match="no data rows"):
        group_histograms(source, "g", "x", LOWER, UPPER, BINS, GroupList(LISTED))


def test_a_whole_number_group_column_matches_the_listed_text_in_every_source(tmp_path):
    """A group column of whole numbers (Parquet int64, CSV text, SQLite INTEGER) is matched by its text."""
    paths = _write(pd.DataFrame({"g": [1, 2, 2, 30, 30, 30], "x": [1.0, 3.0, 5.0, 7.0, 9.0, 2.0]}), tmp_path)
    groups = GroupList(("1", "2", "4"), OtherGroups.OTHER)
    for source_id in SOURCES:
        with _open(source_id, paths) as source:
            got = group_histograms(source, "g", "x", LOWER, UPPER, BINS, groups)
        assert [h.n_rows for h in got.histograms] == [1, 2, 0, 3], source_id
