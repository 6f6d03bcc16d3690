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


def test_the_reports_name_a_spark_dataset_not_a_query_none(tmp_path):
    """The PDF's "Data source" line for ``--engine spark --source flights.parquet`` (no table, no query)."""
    from dpgui.report.bundle import source_text

    record = {**parse_source(str(tmp_path / "flights.csv"), engine="spark").public_record(),
              "dialect": {"delimiter": ";", "decimal": "."}, "engine": "Spark (local[2])"}
    words = source_text(record)
    assert "None" not in words and "query" not in words
    assert words == "the dataset flights.csv (semicolon-separated, decimal point); counted by Spark (local[2])"
    assert source_text({"kind": "spark", "location": "", "table": "t", "engine": "Spark (yarn)"}) == (
        "table t in the Spark catalogue; counted by Spark (yarn)")
