"""Tests of dpgui.data.public_bounds: bounds from schemas, public reference files, types."""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpgui.data.public_bounds import (
    WHY_NOT_CONFIDENTIAL, BoundsSuggestion, find_schema_for, suggest_from_reference, suggest_from_schema,
    suggest_from_type,
)
from dpgui.data.table import ColumnInfo
from dpgui.errors import Cancelled, DataError, ParameterError

TABLE_SCHEMA = {
    "fields": [
        {"name": "age", "type": "integer", "constraints": {"minimum": 0, "maximum": 120}},
        {"name": "income", "type": "number", "constraints": {"minimum": 0}},
        {"name": "score", "type": "number", "constraints": {"maximum": "99.5"}},
        {"name": "grade", "type": "integer", "constraints": {"enum": [3, 1, 2]}},
        {"name": "city", "type": "string"},
    ]
}


def _json(path, doc: object):
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc, encoding="utf-8")
    return path


def _bounds(s: BoundsSuggestion | None) -> tuple[float | None, float | None] | None:
    return None if s is None else (s.lower, s.upper)


# ----------------------------------------------------------------- schema


def test_table_schema(tmp_path):
    path = _json(tmp_path / "data.schema.json", TABLE_SCHEMA)
    age = suggest_from_schema(path, "age")
    assert age == BoundsSuggestion(0.0, 120.0, "schema", age.explanation)
    assert "data.schema.json" in age.explanation and "'age'" in age.explanation and "0 and 120" in age.explanation
    assert _bounds(suggest_from_schema(path, "income")) == (0.0, None)
    assert _bounds(suggest_from_schema(path, "score")) == (None, 99.5)  # a number in a string
    assert _bounds(suggest_from_schema(path, "grade")) == (1.0, 3.0)  # from the enum
    assert suggest_from_schema(path, "city") is None  # no constraints
    assert suggest_from_schema(path, "nope") is None  # not described


def test_simple_columns_form(tmp_path):
    path = _json(tmp_path / "s.json", {"columns": {"age": {"minimum": 18, "maximum": 99}}})
    s = suggest_from_schema(path, "age")
    assert _bounds(s) == (18.0, 99.0) and s.source == "schema"


def test_data_package(tmp_path):
    _json(tmp_path / "other.schema.json", {"fields": [{"name": "h", "constraints": {"minimum": 1, "maximum": 2}}]})
    package = _json(tmp_path / "datapackage.json", {"resources": [
        {"path": "a.csv", "schema": {"fields": [{"name": "age", "constraints": {"minimum": 0, "maximum": 110}}]}},
        {"path": "b.csv", "schema": "other.schema.json"},
        {"path": "c.csv", "schema": "https://example.invalid/schema.json"},  # not fetched
    ]})
    assert _bounds(suggest_from_schema(package, "age")) == (0.0, 110.0)
    assert _bounds(suggest_from_schema(package, "h")) == (1.0, 2.0)


@pytest.mark.parametrize(
    "doc,message",
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "not a table schema: the top level is not a JSON object"),
        ({"title": "x"}, 'not a table schema: it has no "fields"'),
        ({"fields": {"age": {}}}, '"fields" is not a list'),
        ({"fields": [{"name": "age", "constraints": {"minimum": "zero"}}]}, "minimum of column 'age'.*not a finite number"),
        ({"fields": [{"name": "age", "constraints": {"maximum": True}}]}, "maximum.*not a finite number"),
        ({"fields": [{"name": "age", "constraints": {"minimum": 5, "maximum": 1}}]},
         "minimum 5 of column 'age'.*above its maximum 1"),
        ({"fields": [{"name": "age", "constraints": [0, 1]}]}, "constraints"),
    ],
)
def test_bad_schema(tmp_path, doc, message):
    path = _json(tmp_path / "bad.schema.json", doc)
    with pytest.raises(DataError, match=message) as err:
        suggest_from_schema(path, "age")
    assert "bad.schema.json" in str(err.value) and err.value.fix and "\n" not in str(err.value)


def test_schema_file_not_found(tmp_path):
    with pytest.raises(DataError, match="schema file not found"):
        suggest_from_schema(tmp_path / "none.json", "age")


def test_find_schema_for(tmp_path):
    data = tmp_path / "survey.csv.gz"
    assert find_schema_for(data) is None
    package = _json(tmp_path / "datapackage.json", {"resources": []})
    assert find_schema_for(data) == package
    stem = _json(tmp_path / "survey.schema.json", {"fields": []})
    assert find_schema_for(data) == stem
    full = _json(tmp_path / "survey.csv.gz.schema.json", {"fields": []})
    assert find_schema_for(data) == full
    assert find_schema_for(tmp_path / "survey.parquet") == stem


# ----------------------------------------------------------------- reference


def test_reference_csv_and_parquet(tmp_path):
    csv = tmp_path / "public.csv"
    csv.write_text("age,name\n34,a\n,b\n-2.5,c\ninf,d\n101,e\n")
    s = suggest_from_reference(csv, "age")
    assert (s.lower, s.upper, s.source) == (-2.5, 101.0, "reference")  # missing and inf skipped
    assert "public.csv" in s.explanation and "-2.5 to 101" in s.explanation
    parquet = tmp_path / "public.parquet"
    pq.write_table(pa.table({"age": pa.array([3, None, 70], pa.int16())}), parquet)
    seen: list[float] = []
    s = suggest_from_reference(parquet, "age", progress=seen.append)
    assert (s.lower, s.upper) == (3.0, 70.0) and seen[-1] == 1.0


def test_reference_streams_many_batches(tmp_path):
    path = tmp_path / "big.parquet"
    pq.write_table(pa.table({"v": np.arange(300_000, dtype=np.float64) - 7}), path, row_group_size=50_000)
    s = suggest_from_reference(path, "v")
    assert (s.lower, s.upper) == (-7.0, 299_992.0)
    with pytest.raises(Cancelled):
        suggest_from_reference(path, "v", should_cancel=lambda: True)


def test_reference_errors(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("age,name,empty\n1,a,\n2,b,\n")
    with pytest.raises(DataError, match=r"column 'name' in 'p.csv' is not numeric"):
        suggest_from_reference(path, "name")
    with pytest.raises(DataError, match="column 'zzz' not found"):
        suggest_from_reference(path, "zzz")
    with pytest.raises(DataError, match="no finite values"):
        suggest_from_reference(path, "empty")
    with pytest.raises(DataError, match="file not found"):
        suggest_from_reference(tmp_path / "none.csv", "age")
    with pytest.raises(ParameterError):
        suggest_from_reference(path, "")


# ----------------------------------------------------------------- type


@pytest.mark.parametrize(
    "info,bounds",
    [
        (ColumnInfo("flag", "boolean", "bool"), (0.0, 1.0)),
        (ColumnInfo("b", "numeric", "uint8"), (0.0, 255.0)),
        (ColumnInfo("c", "numeric", "int8"), (-128.0, 127.0)),
        (ColumnInfo("d", "numeric", "int64"), None),
        (ColumnInfo("e", "numeric", "float64"), None),
        (ColumnInfo("f", "text", "string"), None),
    ],
)
def test_suggest_from_type(info, bounds):
    s = suggest_from_type(info)
    if bounds is None:
        assert s is None
    else:
        assert (s.lower, s.upper, s.source) == (*bounds, "type")
        assert f"'{info.name}'" in s.explanation


def test_why_not_confidential_is_plain_and_short():
    sentences = [x for x in re.split(r"(?<=\.)\s+", WHY_NOT_CONFIDENTIAL) if x]
    assert 2 <= len(sentences) <= 3
    assert "public" in WHY_NOT_CONFIDENTIAL and "first or last bin" in WHY_NOT_CONFIDENTIAL


def test_the_confidential_file_is_never_a_public_reference(tmp_path):
    """The confidential file is never its own public reference: marking it (by another
    path, a link or a byte-identical copy) as the public reference would suggest its own extremes."""
    import shutil

    data = tmp_path / "pay.csv"
    data.write_text("salary\n" + "\n".join(str(v) for v in (1234, 56789, 4321)) + "\n")
    link = tmp_path / "public-looking.csv"
    link.symlink_to(data)
    copy = tmp_path / "copy" / "pay.csv"
    copy.parent.mkdir()
    shutil.copy(data, copy)
    for reference in (data, tmp_path / "." / "pay.csv", link, copy):
        with pytest.raises(DataError, match="confidential data file itself"):
            suggest_from_reference(reference, "salary", confidential=data)
    other = tmp_path / "other.csv"
    other.write_text("salary\n0\n100000\n")
    assert (suggest_from_reference(other, "salary", confidential=data).lower,
            suggest_from_reference(other, "salary", confidential=data).upper) == (0, 100000)


def test_a_copy_of_the_confidential_column_in_another_form_is_never_a_public_reference(tmp_path):
    """The item-5 hole of priors, for bounds: the confidential data compressed, with a blank line, re-sorted
    or exported to Parquet holds the same values (compared as values, not bytes) and would suggest its own
    extremes as the published bounds; it is refused, with progress through both reads. A public file with
    the same smallest and largest values but other values in between (a 1–5 scale, say) is a reference."""
    import gzip

    values = [3.0, 1.0, 5.0, 2.0, 5.0, 4.0, -0.0]
    data = tmp_path / "pay.csv"
    data.write_text("salary\n" + "\n".join(str(v) for v in values) + "\n")
    compressed = tmp_path / "pay-public.csv.gz"
    compressed.write_bytes(gzip.compress(data.read_bytes()))
    blank = tmp_path / "blank.csv"
    blank.write_text(data.read_text() + "\n")
    resorted = tmp_path / "sorted.csv"
    resorted.write_text("salary,other\n" + "\n".join(f"{v},x" for v in sorted(values, reverse=True)) + "\n")
    exported = tmp_path / "export.parquet"
    pq.write_table(pa.table({"salary": pa.array([0.0 if v == 0 else v for v in values])}), exported)
    for reference in (compressed, blank, resorted, exported):
        seen: list[float] = []
        with pytest.raises(DataError, match="holds the same values of 'salary' as the confidential data") as refused:
            suggest_from_reference(reference, "salary", confidential=data, progress=seen.append)
        assert refused.value.fix and "3" not in refused.value.problem.replace(reference.name, "")  # no value quoted
        assert seen == sorted(seen) and seen[-1] == 1.0
    scale = tmp_path / "scale.csv"
    scale.write_text("salary\n1\n2\n3\n4\n5\n5\n0\n1\n")
    suggestion = suggest_from_reference(scale, "salary", confidential=data)
    assert (suggestion.lower, suggestion.upper) == (0.0, 5.0)
