"""Which sources' row counts may be published: a file's, a table's or a Spark dataset's
under ``change``; a query's (database or Spark) only with the officer's statement, which the spec, its
project record and its public record keep."""

from __future__ import annotations

import pytest

from dpgui.vocabulary import Neighbours
from dpgui.data.source import neighbours_for
from dpgui.data.source_spec import SourceSpec, parse_source
from dpgui.errors import ParameterError

QUERY = "SELECT wage FROM wages WHERE region = 'south'"
SPARK_QUERY = "SELECT wage FROM data WHERE region = 'south'"  # a Spark dataset built from a query
PUBLIC = {
    "a CSV file": parse_source("/data/wages.csv"),
    "a database table": parse_source("sqlite:///wages.db", table="wages"),
    "a Spark dataset": parse_source("/data/wages.parquet", engine="spark"),
    "a Spark table": parse_source("", table="wages", engine="spark"),
    "a database query stated public": parse_source("sqlite:///wages.db", query=QUERY, row_count_public=True),
    "a Spark query stated public": parse_source("/data/wages.parquet", query=SPARK_QUERY, engine="spark",
                                                row_count_public=True),
}
PRIVATE = {
    "a database query": parse_source("postgresql://officer@db/payroll", query=QUERY),
    "a Spark query": parse_source("/data/wages.parquet", query=SPARK_QUERY, engine="spark"),  # the dataset as view
}


@pytest.mark.parametrize("name", PUBLIC)
def test_a_source_whose_row_count_may_be_public_takes_change_by_default(name):
    spec = PUBLIC[name]
    assert spec.row_count_may_be_public
    assert neighbours_for(spec, None) is Neighbours.CHANGE
    assert neighbours_for(spec, "addremove") is Neighbours.ADDREMOVE


@pytest.mark.parametrize("name", PRIVATE)
def test_a_query_takes_addremove_and_refuses_change_without_the_statement(name):
    spec = PRIVATE[name]
    assert not spec.row_count_may_be_public
    assert neighbours_for(spec, None) is Neighbours.ADDREMOVE
    with pytest.raises(ParameterError) as refused:
        neighbours_for(spec, "change")
    assert "exact number of rows the query returns" in refused.value.problem and "--n-public" in refused.value.fix


def test_the_statement_is_kept_by_project_records_and_stated_in_public_records():
    stated = PUBLIC["a database query stated public"]
    assert SourceSpec.from_json(stated.to_json()) == stated
    assert stated.public_record()["row_count_public"] is True
    private = PRIVATE["a database query"]
    assert private.public_record()["row_count_public"] is False and PRIVATE["a Spark query"].public_record()[
        "row_count_public"] is False
    older = {k: v for k, v in private.to_json().items() if k != "row_count_public"}  # a project saved before it
    assert SourceSpec.from_json(older) == private
    assert "row_count_public" not in PUBLIC["a database table"].public_record()  # a table's count is the dataset's


def test_the_statement_without_a_query_is_refused():
    for location, options in (("sqlite:///wages.db", {"table": "wages"}), ("/data/wages.csv", {}),
                              ("/data/wages.parquet", {"engine": "spark"})):
        with pytest.raises(ParameterError, match="no query"):
            parse_source(location, row_count_public=True, **options)
