"""The privacy unit's bounding in a file (:mod:`dpgui.data.bounding`): at most L rows a person, by the rule.

Every count is checked against an independent computation written from the rule's words (the
rows of each person sorted by the integer ORDER of the keys, ``hashlib.md5`` of ``salt:p:r``, the L
smallest ranks kept; tests/support/bounding_reference.py), never through dpgui's own helpers:

* the counts equal that reference, in memory and through the spill files (the limit lowered), and the
  temporary folder is gone afterwards — also after an error and a cancel;
* each person keeps exactly min(n_p, L) rows;
* a person with 10,000 rows moves the counts by at most L in L1 against the table without that person
  (addremove) and by at most 2L when that person's values change (change): the stated sensitivity;
* over many salts each of a person's rows is kept with frequency L / n_p (binomial tolerance);
* bad inputs are refused with the problem and the fix, without a cell's value.
"""

from __future__ import annotations

import collections
import math
import pathlib
import tempfile

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from bounding_reference import kept_of_frame

from dpgui.data import bounding as bounding_module
from dpgui.data.bounding import Bounding, count_bounded_file_groups
from dpgui.data.grouped_counts import BinKey, ValueKey
from dpgui.data.source import open_source
from dpgui.data.source_spec import parse_source
from dpgui.errors import Cancelled, DataError, DpguiError, ParameterError

SALT = "fixed-test-salt"
LOWER, UPPER, BINS = 0.0, 10.0, 5  # width 2: the bin of x is floor(x / 2) exactly, for 0 <= x < 10
REGIONS = ("north", "south", "east")


def _frame(seed: int = 30, n: int = 4000) -> pd.DataFrame:
    """Persons 0..199 with a few rows each, person 7 with 900 rows and person 11 with 40; x in [0, 10) with some
    values outside it and missing; region from a public list plus one value outside it."""
    rng = np.random.default_rng(seed)
    person = rng.integers(0, 200, n)
    person[:900] = 7
    person[900:940] = 11
    x = np.round(rng.uniform(-1.0, 11.0, n), 2)
    x[rng.random(n) < 0.02] = np.nan
    region = rng.choice([*REGIONS, "elsewhere"], n, p=[0.4, 0.3, 0.25, 0.05])
    order = rng.permutation(n)
    return pd.DataFrame({"person": person[order], "x": x[order], "region": region[order]})


def _reference(frame: pd.DataFrame, limit: int, salt: str = SALT, keys: tuple[str, ...] = ("region", "x")
               ) -> collections.Counter:
    """(region, bin key) -> kept rows (or only the ``keys`` counted), by the rule's words: order by the counted
    keys (region's index in the public list, the not-listed after; the bin key), rank 1..n_p, keep the L ranks
    with the smallest (md5 hex of salt:p:r, r)."""
    return kept_of_frame(frame, "person", keys, REGIONS, (LOWER, UPPER, 2.0), salt, limit)


def _bounding(limit: int, salt: str = SALT) -> Bounding:
    return Bounding("person", limit, salt, {"region": REGIONS + ("unused",)})


def _counted(path: pathlib.Path, bounding: Bounding, **kwargs) -> dict[tuple[str, int], int]:
    got = count_bounded_file_groups(path, [ValueKey("region"), BinKey("x", LOWER, UPPER, BINS)], bounding, **kwargs)
    assert (got.counts > 0).all()
    return dict(zip(zip(got.key_values(0), got.key_values(1)), got.counts.tolist()))


@pytest.fixture
def parquet(tmp_path) -> pathlib.Path:
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pandas(_frame(), preserve_index=False), path, row_group_size=1000)
    return path


@pytest.fixture
def private_temp(tmp_path, monkeypatch) -> pathlib.Path:
    """The temporary folder the bounding uses, watched: empty before, to be checked after."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.mark.parametrize("limit", [1, 3, 20, 1000])
def test_counts_are_the_rule_s(parquet, private_temp, limit):
    assert _counted(parquet, _bounding(limit)) == dict(_reference(_frame(), limit))
    assert list(private_temp.iterdir()) == []


def test_spilled_counts_are_the_same(parquet, private_temp, monkeypatch):
    """With the memory limit lowered to 50 triples the pass spills (and splits the files again); same counts."""
    writes = []
    original = bounding_module._Spill.write

    def write(self, table):
        writes.append((self.depth, table.num_rows))
        original(self, table)

    monkeypatch.setattr(bounding_module, "HOLD_TRIPLES", 50)
    monkeypatch.setattr(bounding_module._Spill, "write", write)
    got = _counted(parquet, _bounding(3), batch_rows=500)
    assert {depth for depth, _ in writes} >= {0, 1}, "the pass did not spill and split"
    assert got == dict(_reference(_frame(), 3))
    assert list(private_temp.iterdir()) == []


def test_the_temporary_folder_goes_on_a_cancel_and_an_error(tmp_path, private_temp, monkeypatch):
    monkeypatch.setattr(bounding_module, "HOLD_TRIPLES", 50)
    frame = _frame()
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    calls = iter(range(10**6))
    with pytest.raises(Cancelled):
        _counted(path, _bounding(3), batch_rows=500, should_cancel=lambda: next(calls) > 5)
    assert list(private_temp.iterdir()) == []
    broken = frame.astype({"person": "object"})
    broken.loc[3500, "person"] = None  # a row without an ID late in the file, after spilling
    broken_path = tmp_path / "broken.parquet"
    pq.write_table(pa.Table.from_pandas(broken.astype({"person": "Int64"}), preserve_index=False), broken_path)
    with pytest.raises(DataError, match="no ID at data row 3,501"):
        _counted(broken_path, _bounding(3), batch_rows=500)
    assert list(private_temp.iterdir()) == []


def test_each_person_keeps_min_of_its_rows_and_l(tmp_path):
    """The person column copied into a counted column: its counts are the rows each person keeps."""
    frame = _frame()
    frame["who"] = frame["person"].astype(str)
    path = tmp_path / "who.csv"
    frame.to_csv(path, index=False)
    rows = frame["person"].astype(str).value_counts().to_dict()
    for limit in (1, 5, 40):
        bounding = Bounding("person", limit, SALT, {"who": tuple(sorted(rows))})
        got = count_bounded_file_groups(path, [ValueKey("who")], bounding)
        kept = dict(zip(got.key_values(0), got.counts.tolist()))
        assert kept == {p: min(n, limit) for p, n in rows.items()}
        assert max(kept.values()) <= limit


@pytest.mark.parametrize("limit", [1, 20])
def test_one_person_with_10000_rows_moves_counts_by_at_most_l(tmp_path, limit):
    """addremove: the table with and without person 'heavy' (10,000 rows) differ by exactly L kept rows, all
    counts of the other persons unchanged; change: that person's values changed moves the counts by <= 2L."""
    rng = np.random.default_rng(41)
    base = _frame()
    heavy = pd.DataFrame({"person": 10**9, "x": np.round(rng.uniform(0, 10, 10_000), 2),
                          "region": rng.choice(REGIONS, 10_000)})
    changed = heavy.assign(x=np.round(rng.uniform(0, 10, 10_000), 2), region=rng.choice(REGIONS, 10_000))
    counts = {}
    for name, frame in (("without", base), ("with", pd.concat([base, heavy])), ("changed", pd.concat([base, changed]))):
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.Table.from_pandas(frame.sample(frac=1.0, random_state=5), preserve_index=False), path)
        counts[name] = collections.Counter(_counted(path, _bounding(limit)))
    keys = set().union(*counts.values())
    added = {k: counts["with"][k] - counts["without"][k] for k in keys}
    assert min(added.values()) >= 0 and sum(added.values()) == limit
    assert sum(abs(counts["changed"][k] - counts["with"][k]) for k in keys) <= 2 * limit
    # The independent reference agrees on all three tables' counts of the other persons.
    assert counts["without"] == _reference(base, limit)


@pytest.mark.slow  # 1,000 passes: ~8 s
def test_each_row_is_kept_with_frequency_l_over_n(tmp_path):
    """Over 1,000 salts, each row of the persons with n_p = 10 rows is kept with frequency L / n_p = 0.3
    within 4.5 binomial standard errors (0.065: a factor of 2 either way, 0.15 or 0.6, is far outside)."""
    n_persons, n_rows, limit, salts = 40, 10, 3, 1000
    cells = [f"p{p}-r{r}" for p in range(n_persons) for r in range(n_rows)]
    frame = pd.DataFrame({"person": np.repeat(np.arange(n_persons), n_rows), "cell": cells})
    path = tmp_path / "cells.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    listed = tuple(np.random.default_rng(3).permutation(cells).tolist())  # a public order unrelated to the rows
    kept = collections.Counter()
    for s in range(salts):
        got = count_bounded_file_groups(path, [ValueKey("cell")], Bounding("person", limit, f"salt-{s}",
                                                                             {"cell": listed}))
        assert got.rows == n_persons * limit
        kept.update(got.key_values(0))
    p = limit / n_rows
    tolerance = 4.5 * math.sqrt(p * (1 - p) / salts)
    frequencies = np.array([kept[c] / salts for c in cells])
    assert np.abs(frequencies - p).max() <= tolerance, frequencies
    assert abs(frequencies.mean() - p) < 1e-12  # exactly L of n_p rows every time


def test_bad_inputs_are_refused_without_a_cell(tmp_path):
    secret = "SECRET-CELL-42"
    frame = pd.DataFrame({"person": [1, 2, 3], "pid_float": [1.5, 2.0, 3.0], "region": ["north", secret, "east"],
                          "x": [1.0, 2.0, 3.0], "when": pd.to_datetime(["2020-01-01"] * 3)})
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    keys = [BinKey("x", LOWER, UPPER, BINS)]
    cases = {
        "no such column": (lambda: count_bounded_file_groups(path, keys, Bounding("nobody", 2, SALT)), DataError,
                           "nobody"),
        "float ID": (lambda: count_bounded_file_groups(path, keys, Bounding("pid_float", 2, SALT)), DataError,
                     "floating-point"),
        "date ID": (lambda: count_bounded_file_groups(path, keys, Bounding("when", 2, SALT)), DataError,
                    "person-ID column 'when'"),
        "L = 0": (lambda: Bounding("person", 0, SALT), ParameterError, "records per person 0"),
        "L = -3": (lambda: Bounding("person", -3, SALT), ParameterError, "records per person -3"),
        "L = True": (lambda: Bounding("person", True, SALT), ParameterError, "records per person"),
        "no public list": (lambda: count_bounded_file_groups(path, [ValueKey("region")], Bounding("person", 2, SALT)),
                           ParameterError, "public list of categories"),
        "person counted": (lambda: count_bounded_file_groups(path, [ValueKey("person")],
                                                             Bounding("person", 2, SALT, {"person": ("1",)})),
                           ParameterError, "also counted"),
        "bad salt": (lambda: Bounding("person", 2, "a'; DROP TABLE t; --"), ParameterError, "secret"),
        "reserved name": (lambda: count_bounded_file_groups(path, [BinKey("dpgui_rank", LOWER, UPPER, BINS)],
                                                            Bounding("person", 2, SALT)), ParameterError, "dpgui_"),
    }
    for name, (call, error, words) in cases.items():
        with pytest.raises(error) as caught:
            call()
        assert isinstance(caught.value, DpguiError) and caught.value.fix, name
        assert words in caught.value.problem, (name, caught.value.problem)
        assert secret not in str(caught.value) and "1.5" not in str(caught.value), name
    missing = tmp_path / "missing.csv"
    missing.write_text(f"person,region\n1,north\n,{secret}\n", encoding="utf-8")
    with pytest.raises(DataError, match="no ID at data row 2") as caught:
        count_bounded_file_groups(missing, [ValueKey("region")], Bounding("person", 2, SALT, {"region": REGIONS}))
    assert secret not in str(caught.value)


def test_the_secret_is_drawn_and_never_shown():
    first, second = Bounding.drawn("person", 5), Bounding.drawn("person", 5)
    assert first.salt != second.salt and len(first.salt) == 32
    assert first.salt not in repr(first) and "salt" not in first.public_record()
    assert first.public_record() == {"person_column": "person", "records_per_person": 5}


def test_histogram_and_path_counts_of_a_source_honour_the_bounding(parquet):
    """A histogram orders a person's rows by the bin alone, path counts by the levels alone."""
    bounding = _bounding(2)
    with open_source(parse_source(parquet)) as source:
        histogram = source.histogram("x", LOWER, UPPER, BINS, bounding=bounding)
        paths = source.path_counts(["region"], min_levels=1, bounding=bounding)
        unbounded = source.histogram("x", LOWER, UPPER, BINS)
    by_key = {key: n for (key,), n in _reference(_frame(), 2, keys=("x",)).items()}
    clamped = [by_key.get(j, 0) for j in range(BINS)]
    clamped[0] += by_key.get(-2, 0)
    clamped[-1] += by_key.get(-3, 0)
    assert histogram.counts.tolist() == clamped
    assert histogram.n_missing == by_key.get(-1, 0)
    assert unbounded.counts.sum() > histogram.counts.sum()
    by_region = {region: n for (region,), n in _reference(_frame(), 2, keys=("region",)).items()}
    assert dict(zip((p[0] for p in paths.paths), paths.counts.tolist())) == by_region


def test_an_empty_table_keeps_nothing_and_a_list_with_a_value_twice_is_refused(tmp_path):
    path = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"person": pa.array([], pa.int64()), "region": pa.array([], pa.string())}), path)
    got = count_bounded_file_groups(path, [ValueKey("region")], Bounding("person", 2, SALT, {"region": REGIONS}))
    assert got.rows == 0 and len(got.counts) == 0 and got.groups.num_rows == 0
    with pytest.raises(ParameterError, match="list a value twice"):
        Bounding("person", 2, SALT, {"region": ("north", "north")})


def test_a_database_refuses_a_float_id_and_a_missing_id_without_a_cell(tmp_path):
    import sqlite3

    secret = "SECRET-CELL-43"
    path = tmp_path / "bad.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (person INTEGER, pid_float REAL, region TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?, ?)", [(1, 1.5, "north"), (None, 2.5, secret)])
    conn.close()
    keys = [ValueKey("region")]
    with open_source(parse_source(f"sqlite:///{path}", table="t")) as source:
        with pytest.raises(DataError, match="floating-point") as caught:
            source.grouped_counts(keys, bounding=Bounding("pid_float", 2, SALT, {"region": REGIONS}))
        assert "1.5" not in str(caught.value)
        with pytest.raises(DataError, match="rows without an ID") as caught:
            source.grouped_counts(keys, bounding=Bounding("person", 2, SALT, {"region": REGIONS}))
        assert secret not in str(caught.value)
        with pytest.raises(DataError, match="'nobody'"):
            source.grouped_counts(keys, bounding=Bounding("nobody", 2, SALT, {"region": REGIONS}))


def test_a_grouped_cdf_s_histograms_keep_l_rows_per_person_in_the_whole_table(parquet, tmp_path):
    """group_histograms with a bounding: the group column's public list is the groups' own, and each listed group's
    histogram holds the rows the rule keeps (ordered by group, then bin), from a file and from SQLite alike."""
    import sqlite3

    from dpgui.core.grouped_cdf import GroupList
    from dpgui.vocabulary import OtherGroups
    from dpgui.data.group_histograms import group_histograms

    frame = _frame()
    path = tmp_path / "rows.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (person INTEGER, x REAL, region TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?, ?)", [(int(p), None if math.isnan(x) else x, r) for p, x, r in
                                                            zip(frame["person"], frame["x"], frame["region"])])
    conn.close()
    groups = GroupList(REGIONS, OtherGroups.DROP)
    reference = _reference(frame, 3)
    for spec in (parse_source(parquet), parse_source(f"sqlite:///{path}", table="t")):
        with open_source(spec) as source:
            got = group_histograms(source, "region", "x", LOWER, UPPER, BINS, groups,
                                   bounding=Bounding("person", 3, SALT))
        for region in REGIONS:
            expected = [reference.get((region, j), 0) for j in range(BINS)]
            expected[0] += reference.get((region, -2), 0)
            expected[-1] += reference.get((region, -3), 0)
            assert got.of(region).counts.tolist() == expected, (spec.kind, region)
            assert got.of(region).n_missing == reference.get((region, -1), 0)
