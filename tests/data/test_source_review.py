"""Review of issue 16: what a source records must be what it used."""

from __future__ import annotations

import pytest

from dpgui.data.source import parse_source
from dpgui.errors import ParameterError


@pytest.mark.parametrize("location, kwargs", [
    ("sqlite:///census.db", {"table": "people"}),
    ("postgresql://alice@db.example.org/census", {"query": "SELECT 1 AS x"}),
    ("people.csv", {}),
    ("people.csv.gz", {}),
    ("people.parquet", {}),
    ("people.xlsx", {}),
])
def test_an_encoding_that_would_be_ignored_is_refused_not_recorded(location, kwargs):
    # Only pyreadstat (SAS/Stata/SPSS) and Spark's CSV reader use an encoding; anywhere else the
    # manifest would say "encoding: latin-1" about data read as UTF-8.
    with pytest.raises(ParameterError) as err:
        parse_source(location, encoding="latin-1", **kwargs)
    assert "--encoding" in err.value.fix


@pytest.mark.parametrize("location", ["people.dta", "people.sas7bdat", "people.xpt", "people.sav"])
def test_an_encoding_for_a_statistics_file_is_kept(location):
    assert parse_source(location, encoding="latin-1").public_record()["encoding"] == "latin-1"
