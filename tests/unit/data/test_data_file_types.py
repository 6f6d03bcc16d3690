"""The one list of file types and what is derived from it; the one bin-count rule; the missing-value names."""

from __future__ import annotations

import pytest

from dpgui.core.missing import MISSING_POLICIES, MISSING_RULE_TEXT, MISSING_RULES, missing_rule_for
from dpgui.core.tree import MAX_BINS, MIN_BINS, check_bins
from dpgui.data.file_types import (
    FILE_FILTER,
    FILE_TYPE_NAMES,
    FILE_TYPES,
    SUPPORTED_EXTENSIONS,
    TABLE_FILTER,
    USE_A_SUPPORTED_FILE,
    format_of_name,
    is_supported_file_name,
)
from dpgui.data.readers import check_table_file
from dpgui.errors import DataError, ParameterError


def test_extensions_words_and_filters_come_from_one_table():
    assert SUPPORTED_EXTENSIONS == (".csv", ".csv.gz", ".csv.zst", ".tsv", ".tab", ".tsv.gz", ".tab.gz", ".tsv.zst",
                                    ".tab.zst", ".parquet", ".pq", ".xlsx", ".dta", ".sas7bdat", ".xpt", ".sav",
                                    ".zsav")
    names = ("CSV, TSV, Parquet, Excel (.xlsx), Stata (.dta), SAS (.sas7bdat), SAS transport (.xpt) "
             "or SPSS (.sav)")
    assert names == FILE_TYPE_NAMES
    assert f"Use a {names} file." == USE_A_SUPPORTED_FILE
    assert FILE_FILTER == TABLE_FILTER + ";;All files (*)"
    assert TABLE_FILTER.split("(")[1].rstrip(")").split() == ["*" + ext for ext in SUPPORTED_EXTENSIONS]
    assert [t.format for t in FILE_TYPES] == ["csv", "tsv", "parquet", "xlsx", "dta", "sas7bdat", "xpt", "sav"]


@pytest.mark.parametrize("name, fmt", [("a.CSV", "csv"), ("a.csv.gz", "csv"), ("b.Tab", "tsv"), ("b.tsv.gz", "tsv"),
                                       ("a.csv.ZST", "csv"), ("b.tab.zst", "tsv"), ("g.zst", None),
                                       ("c.pq", "parquet"), ("d.XLSX", "xlsx"), ("e.xls", None), ("f.gz", None),
                                       ("g.DTA", "dta"), ("h.sas7bdat", "sas7bdat"), ("i.xpt", "xpt"),
                                       ("j.zsav", "sav"), ("k.sas7bcat", None), ("l.dta.zst", None)])
def test_format_of_name(name, fmt):
    assert format_of_name(name) == fmt
    assert is_supported_file_name(name) == (fmt is not None)


def test_readers_refuse_other_types_naming_them(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("a\n1\n")
    with pytest.raises(DataError) as caught:
        check_table_file(path)
    assert FILE_TYPE_NAMES in caught.value.fix and ".tab.gz" in caught.value.fix


@pytest.mark.parametrize("bins, minimum, words", [
    (1, MIN_BINS, "at least 2"), (0, 1, "at least 1"), (2.5, MIN_BINS, "whole number"), (True, 1, "whole number"),
    ("8", MIN_BINS, "whole number"), (MAX_BINS + 1, 1, "too many bins"),
])
def test_one_bin_count_rule(bins, minimum, words):
    with pytest.raises(ParameterError) as caught:
        check_bins(bins, minimum)
    assert "bins" in caught.value.problem and words in caught.value.problem


def test_bin_count_limits_are_allowed():
    assert check_bins(MIN_BINS) == MIN_BINS and check_bins(MAX_BINS) == MAX_BINS and check_bins(1, minimum=1) == 1


def test_missing_value_names():
    assert MISSING_RULES == ("bucket", "drop", "impute") and MISSING_POLICIES == ("drop", "error")
    assert set(MISSING_RULE_TEXT) == {"bucket", "drop", "impute", "error"}
    assert (missing_rule_for("change"), missing_rule_for("addremove")) == ("bucket", "drop")
