"""The hierarchy data layer against hostile prior and data files."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpgui.data.hierarchy import count_paths, read_prior
from dpgui.errors import DataError


def test_a_prior_whose_counts_add_up_past_int64_is_refused(tmp_path):
    """Each count is ≤ 2^53 (checked per row), but 1,100 of them add up to more than 2^63: int64 sums
    would wrap around silently (to a negative or a wrong positive total), and the optimiser would plan
    on garbage. Refused with the fix instead."""
    big = 2**53
    rows = "\n".join(f"A,a{i % 3},{big}" for i in range(1100))
    path = tmp_path / "prior.csv"
    path.write_text("region,district,count\n" + rows + "\n")
    with pytest.raises(DataError, match="add up to more than"):
        read_prior(path, ["region", "district"])


def test_a_prior_with_large_but_summable_counts_is_exact(tmp_path):
    path = tmp_path / "prior.csv"
    path.write_text("region,district,count\nA,a1,4503599627370496\nA,a2,4503599627370495\nB,b1,1\n")
    prior = read_prior(path, ["region", "district"])
    assert prior.rows == 2**53
    levels = prior.hierarchy.aggregate(np.asarray(prior.counts))
    assert int(levels[0][0]) == 2**53 and levels[1].tolist() == [2**53 - 1, 1]


def test_a_parquet_dictionary_column_counts_like_a_plain_one(tmp_path):
    """A Parquet file written from pandas categoricals (dictionary-encoded columns, possibly with
    unused dictionary entries) gives the same paths and counts as plain strings; unused categories do
    not become nodes."""
    region = pa.DictionaryArray.from_arrays(pa.array([0, 0, 1, 1, 1], type=pa.int32()),
                                            pa.array(["OR", "WA", "UNUSED"]))
    city = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 2, 2], type=pa.int8()),
                                          pa.array(["Portland", "Salem", "Seattle", "Ghost"]))
    pq.write_table(pa.table({"region": region, "city": city}), tmp_path / "d.parquet")
    counts = count_paths(tmp_path / "d.parquet", ["region", "city"])
    assert counts.paths == (("OR", "Portland"), ("OR", "Salem"), ("WA", "Seattle"))
    assert counts.counts.tolist() == [1, 1, 3]


@pytest.mark.parametrize("cell", ['""', "  "])
def test_an_empty_label_and_a_missing_one_are_both_refused(tmp_path, cell):
    path = tmp_path / "d.csv"
    path.write_text(f"region,city\nOR,Portland\nOR,{cell}\n")
    with pytest.raises(DataError, match=r"missing|empty"):
        count_paths(path, ["region", "city"])


def test_a_prior_with_the_datas_path_counts_is_refused_whatever_its_bytes(tmp_path):
    """The data file itself, a copy, the data plus a blank line, its rows in another order, its paths
    with their counts (and a zero-count path), or the data with rows or paths added for categories it
    does not hold: each has the data's count on every path of the data and is refused; a prior with one
    count changed is a prior."""
    from dpgui.data.hierarchy import check_prior_is_not_the_data

    rows = "OR,Portland\nWA,Seattle\nWA,Seattle\n"
    data = tmp_path / "d.csv"
    data.write_text("region,city\n" + rows)
    variants = {
        "itself": data,
        "blank line": "region,city\n" + rows + "\n",
        "reordered": "region,city\nWA,Seattle\nOR,Portland\nWA,Seattle\n",
        "counted": "region,city,count\nOR,Portland,1\nWA,Seattle,2\nWA,Tacoma,0\n",
        "with a row for another category": "region,city\n" + rows + "WA,Tacoma\n",
        "counted, with another category": "region,city,count\nOR,Portland,1\nWA,Seattle,2\nCA,Fresno,40\n",
    }
    counts = count_paths(data, ["region", "city"])
    for name, text in variants.items():
        prior = text if isinstance(text, Path) else tmp_path / f"{re.sub(r'[ ,]+', '_', name)}.csv"
        if not isinstance(text, Path):
            prior.write_text(text)
        with pytest.raises(DataError, match="has the data's own counts on every path"):
            check_prior_is_not_the_data(read_prior(prior, ["region", "city"]), counts, prior.name)
    other = tmp_path / "prior.csv"
    other.write_text("region,city,count\nOR,Portland,1\nWA,Seattle,3\n")
    check_prior_is_not_the_data(read_prior(other, ["region", "city"]), counts, other.name)
