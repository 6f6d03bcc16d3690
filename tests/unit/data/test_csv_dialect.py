"""CSV dialects: the separator and decimal mark detected from the head, chosen explicitly, and the
counts of every dialect (and of gzip/zstd files) identical to those of the same values in Parquet."""

from __future__ import annotations

import csv
import gzip
import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpgui.data.csv_dialect import DetectedDialect, UnstatedDialect, detect_dialect, detect_dialect_text
from dpgui.data.file_source import FileSource
from dpgui.data.file_types import CsvDialect
from dpgui.data.hierarchy import count_paths, level_value_counts
from dpgui.data.histogram import column_histogram
from dpgui.data.readers import list_columns
from dpgui.data.source_spec import SourceSpec
from dpgui.data.table import TableReader, count_rows, inspect_table
from dpgui.errors import DataError

COMMA = CsvDialect(",", ".")
SEMI_DECIMAL_COMMA = CsvDialect(";", ",")
TAB = CsvDialect("\t", ".")
PIPE = CsvDialect("|", ".")

# (lower, upper, bins) settings the adversarial values are built around and binned with.
SETTINGS = [(0.0, 10.0, 7), (-1.0, 1.0, 3), (0.1, 0.7, 6)]


def adversarial_values() -> list[float | None]:
    """Bin edges and their ulp neighbours (np.nextafter) of every setting, the bounds, values out of
    bounds (far and near), ±inf, NaN and missing (None)."""
    values: list[float | None] = []
    for lower, upper, bins in SETTINGS:
        for edge in np.linspace(lower, upper, bins + 1):
            values += [float(edge), float(np.nextafter(edge, -np.inf)), float(np.nextafter(edge, np.inf))]
        values += [lower - 1e-300, upper + 1.0, (lower + upper) / 2]
    values += [-1e300, 1e300, -5.0, 15.0, 5e-324, -0.0, 1.5e-05, 123456789.125,
               float("inf"), float("-inf"), float("nan"), None, None, float("nan")]
    return values


def _names(n: int) -> list[str]:
    # Text with every separator and a quote in it: the writer quotes it, the reader must not split it.
    pool = ["plain", "a,b", "c;d", "e\tf", "g|h", 'say "hi"', "x, y; z"]
    return [pool[i % len(pool)] for i in range(n)]


def _regions(values) -> list[str]:
    # A function of x, so that (region, x) is a hierarchy (no x value under two regions).
    return ["low" if v is None or v != v or v < 1 else "high" for v in values]


def _text(x: float | None, decimal: str) -> str:
    if x is None:
        return ""
    if x != x:
        return "NaN"
    return repr(x).replace(".", decimal)


def write_csv(path, values, dialect: CsvDialect) -> None:
    """The columns x (values written with repr(), in the dialect's decimal mark), name, region,
    (compressed if the name ends in .gz or .zst)."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=dialect.delimiter, quotechar='"', doublequote=True, lineterminator="\n")
    writer.writerow(["x", "name", "region"])
    for x, name, region in zip(values, _names(len(values)), _regions(values)):
        writer.writerow([_text(x, dialect.decimal), name, region])
    data = buf.getvalue().encode()
    name = str(path)
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(data))
    elif name.endswith(".zst"):
        with pa.CompressedOutputStream(name, "zstd") as out:
            out.write(data)
    else:
        path.write_bytes(data)


def write_parquet(path, values) -> None:
    x = pa.array([np.nan if v is not None and v != v else v for v in values], type=pa.float64())
    pq.write_table(pa.table({"x": x, "name": _names(len(values)), "region": _regions(values)}), path)


VARIANTS = [
    ("comma.csv", COMMA),
    ("semicolon_decimal_comma.csv", SEMI_DECIMAL_COMMA),
    ("tab.tsv", TAB),
    ("pipe.csv", PIPE),
    ("comma.csv.gz", COMMA),
    ("comma.csv.zst", COMMA),
    ("semicolon_decimal_comma.csv.zst", SEMI_DECIMAL_COMMA),
    ("tab_decimal_comma.tsv.gz", CsvDialect("\t", ",")),
    ("tab.tsv.zst", TAB),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("dialects")
    values = adversarial_values()
    out = {"parquet": root / "values.parquet"}
    write_parquet(out["parquet"], values)
    for name, dialect in VARIANTS:
        write_csv(root / name, values, dialect)
        out[name] = root / name
    complete = [v for v in values if v is not None and v == v]
    out["complete.parquet"] = root / "complete.parquet"
    write_parquet(out["complete.parquet"], complete)
    for name, dialect in VARIANTS:
        write_csv(root / ("complete_" + name), complete, dialect)
        out["complete_" + name] = root / ("complete_" + name)
    return out


# --------------------------------------------------------------------------- detection


@pytest.mark.parametrize("name, dialect", VARIANTS)
def test_each_variant_is_detected(files, name, dialect):
    found = detect_dialect(files[name])
    assert found == DetectedDialect(found.dialect, True, found.reason)
    assert found.dialect == dialect
    info = inspect_table(files[name])
    assert info.dialect == dialect and info.dialect_detection == found
    assert info.names == ["x", "name", "region"]
    assert [c.kind for c in info.columns] == ["numeric", "text", "text"]


def test_detected_dialect_in_words(files):
    info = inspect_table(files["semicolon_decimal_comma.csv"])
    assert info.dialect_detection is not None
    assert info.dialect_detection.describe() == "detected: semicolon-separated, decimal comma"
    assert "decimal comma" in info.dialect_detection.reason and "3 semicolon-separated fields" in info.dialect_detection.reason


@pytest.mark.parametrize("text, name, dialect, detected", [
    ("a,b\n1.5,2\n", "f.csv", COMMA, True),
    ("a;b\n1,5;2\n-0,25;3\n", "f.csv", SEMI_DECIMAL_COMMA, True),
    ("a;b\n1;2\n3;4\n", "f.csv", CsvDialect(";", "."), True),  # no decimals: point
    ("a\tb\n1,5\t2\n", "f.csv", CsvDialect("\t", ","), True),
    ("a|b|c\n1|2|3\n", "f.txt.csv", PIPE, True),
    # quoted fields holding the other separators, and a doubled quote
    ('id,comment\n1,"x; y; z"\n2,"a|b; ""c"""\n', "f.csv", COMMA, True),
    ('id;comment\n1;"x, y, z"\n2;"a,b"\n', "f.csv", CsvDialect(";", "."), True),
    # a newline inside quotes does not start a record
    ('a;b\n1,5;"two\nlines; here"\n2,5;c\n', "f.csv", SEMI_DECIMAL_COMMA, True),
    ("a;b;c\n", "f.csv", CsvDialect(";", "."), True),  # header only
    ("a,b;c\n1,2;3\n", "f.csv", COMMA, False),  # ambiguous: the name's default, assumed
    ("a,b;c\n1,2;3\n", "f.tsv", TAB, False),
    ("a;b\n1,5;2.5\n", "f.csv", CsvDialect(";", "."), False),  # both decimal marks: point, assumed
    ("a;b\n1.234;2,5\n", "f.csv", SEMI_DECIMAL_COMMA, True),  # 1.234 alone is ambiguous: not counted
    ("x\n1.5\n2\n", "f.tsv", TAB, True),  # one column
    ("x\n1,5\n2,25\n", "f.csv", SEMI_DECIMAL_COMMA, True),  # one column of decimal commas
    ("a,b,c\n1,2\n3,4,5,6\n", "f.csv", COMMA, False),  # ragged: nothing consistent
    ("", "f.csv", COMMA, False),
])
def test_detection_rule(text, name, dialect, detected):
    found = detect_dialect_text(text, name)
    assert (found.dialect, found.detected) == (dialect, detected), found.reason
    assert found.describe().startswith("detected: " if detected else "assumed: ")
    if not detected and text:
        assert "assumed" in found.reason


def test_detection_reads_only_the_head(tmp_path):
    # A semicolon file whose tail (after 1 MiB) would look like commas: the head decides.
    path = tmp_path / "big.csv"
    head = "a;b\n" + "1,5;2\n" * 200_000
    path.write_text(head + "x,y,z\n" * 10)
    assert detect_dialect(path).dialect == SEMI_DECIMAL_COMMA


def test_utf16_file_with_bom_is_detected(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes("a;b\n1,5;2\n".encode("utf-16"))
    assert detect_dialect(path).dialect == SEMI_DECIMAL_COMMA
    h = column_histogram(path, "a", 0, 2, 2)
    assert h.counts.tolist() == [0, 1]


# --------------------------------------------------------------------------- counts identical to Parquet


@pytest.mark.parametrize("name, dialect", VARIANTS)
@pytest.mark.parametrize("lower, upper, bins", SETTINGS)
def test_counts_identical_to_parquet(files, name, dialect, lower, upper, bins):
    expected = column_histogram(files["parquet"], "x", lower, upper, bins)
    for given in (None, dialect):  # detected, and given explicitly
        got = column_histogram(files[name], "x", lower, upper, bins, dialect=given)
        for field in ("lower", "upper", "bins", "n_rows", "n_missing", "n_clamped_low", "n_clamped_high",
                      "missing_policy"):
            assert getattr(got, field) == getattr(expected, field), field
        assert got.counts.tolist() == expected.counts.tolist()
        assert got == expected
    # Adversarial values are there: both clamp counters and several missing values (NaN, empty).
    assert expected.n_missing == 4 and expected.n_clamped_low >= 3 and expected.n_clamped_high >= 3
    assert expected.n_rows == len(adversarial_values())


@pytest.mark.parametrize("name, dialect", VARIANTS)
def test_missing_policy_error_identical_to_parquet(files, name, dialect):
    lower, upper, bins = SETTINGS[0]
    with pytest.raises(DataError) as from_parquet:
        column_histogram(files["parquet"], "x", lower, upper, bins, missing="error")
    with pytest.raises(DataError) as from_csv:
        column_histogram(files[name], "x", lower, upper, bins, missing="error")
    row = from_parquet.value.problem.split("data row ")[1]
    assert from_csv.value.problem.split("data row ")[1] == row
    expected = column_histogram(files["complete.parquet"], "x", lower, upper, bins, missing="error")
    got = column_histogram(files["complete_" + name], "x", lower, upper, bins, missing="error")
    assert got == expected and got.n_missing == 0 and got.missing_policy == "error"


@pytest.mark.parametrize("name, dialect", VARIANTS)
def test_path_counts_and_rows_identical_to_parquet(files, name, dialect):
    expected = count_paths(files["complete.parquet"], ["region", "x"])
    got = count_paths(files["complete_" + name], ["region", "x"], dialect=dialect)
    # A CSV cell's label is its text as written (decided by the cell alone, not by its column's
    # inferred type); the Parquet float's is its shortest text. The same paths and counts, one to one.
    as_written = {(region, _text(float(x), dialect.decimal)): n
                  for (region, x), n in zip(expected.paths, expected.counts.tolist())}
    assert dict(zip(got.paths, got.counts.tolist())) == as_written
    assert got.rows == expected.rows
    # Only the Parquet file's own type says that x is numeric; a CSV's cells say nothing published.
    assert expected.notes == ("column 'x' is numeric; its values are used as categories",) and got.notes == ()
    assert count_rows(files[name]) == len(adversarial_values())
    assert level_value_counts(files[name], ["region", "name"]) == {"region": 2, "name": 7}


def test_compressed_progress_is_monotone_and_ends_at_one(tmp_path):
    rng = np.random.default_rng(7)
    values = rng.normal(size=300_000).tolist()
    path = tmp_path / "big.csv.zst"
    write_csv(path, values, SEMI_DECIMAL_COMMA)
    seen: list[float] = []
    h = column_histogram(path, "x", -3, 3, 12, batch_rows=1 << 16, progress=seen.append)
    assert h.n_rows == len(values)
    assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] == 1.0 and 0 < seen[0] < 1


def test_preview_reads_the_dialect(files):
    with TableReader(files["semicolon_decimal_comma.csv.zst"]) as reader:
        frame = reader.read_rows(0, 3)
        assert reader.info.dialect == SEMI_DECIMAL_COMMA
    assert list(frame.columns) == ["x", "name", "region"]
    assert frame["name"].tolist() == _names(3)  # quoted separators kept inside their field
    assert frame["x"].tolist()[0] == repr(adversarial_values()[0]).replace(".", ",")  # as written


def test_file_source_passes_the_dialect(files):
    spec = SourceSpec(kind="file", location=str(files["semicolon_decimal_comma.csv"]), dialect=SEMI_DECIMAL_COMMA)
    with FileSource(spec) as source:
        assert source.info.dialect == SEMI_DECIMAL_COMMA and source.info.dialect_detection is None
        assert source.histogram("x", 0, 10, 7) == column_histogram(files["parquet"], "x", 0, 10, 7)
        assert source.row_count() == len(adversarial_values())
    assert source.public_record()["dialect"] == {"delimiter": ";", "decimal": ",", "origin": "stated"}
    # Not stated: the head only suggests a dialect, and the file is refused until one is stated.
    spec = SourceSpec(kind="file", location=str(files["semicolon_decimal_comma.csv"]))
    with pytest.raises(UnstatedDialect) as refused:
        FileSource(spec)
    assert refused.value.suggestion.dialect == SEMI_DECIMAL_COMMA and refused.value.suggestion.detected
    # A file in its name's default is read with the default, recorded as such.
    with FileSource(SourceSpec(kind="file", location=str(files["comma.csv"]))) as source:
        assert source.csv_dialect == COMMA
        assert source.public_record()["dialect"] == {"delimiter": ",", "decimal": ".", "origin": "default"}


# --------------------------------------------------------------------------- a wrong dialect, what the user sees


def test_wrong_decimal_mark_names_the_row_and_the_fix(files):
    path = files["semicolon_decimal_comma.csv"]
    wrong = CsvDialect(";", ".")
    assert dict(list_columns(path, wrong))["x"] == "text"  # visibly not numeric
    with pytest.raises(DataError) as caught:
        column_histogram(path, "x", 0, 10, 7, dialect=wrong)
    assert "data row 1 holds a value that is not a number" in caught.value.problem
    assert "not numeric" in caught.value.problem
    assert "0,0" not in str(caught.value)  # the cell itself is never quoted (it is confidential)
    assert "decimal comma" in caught.value.fix and "--decimal" in caught.value.fix


def test_wrong_separator_shows_one_wide_column(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("x,y\n1.5,2\n2.5,3\n")
    info = inspect_table(path, SEMI_DECIMAL_COMMA)
    assert info.names == ["x,y"] and info.n_rows == 2
    assert info.dialect == SEMI_DECIMAL_COMMA and info.dialect_detection is None
    with pytest.raises(DataError) as caught:
        column_histogram(path, "x", 0, 10, 7, dialect=SEMI_DECIMAL_COMMA)
    assert "column 'x' not found" in caught.value.problem and "'x,y'" in caught.value.problem
    assert "field separator is probably wrong" in caught.value.problem and "comma-separated" in caught.value.fix
    # The same file version read with the detected dialect: the schema cache is per dialect.
    assert inspect_table(path).names == ["x", "y"]
    assert column_histogram(path, "x", 0, 10, 2).counts.tolist() == [2, 0]


def test_wrong_separator_on_ragged_rows_is_a_clear_error(files):
    # Quoted names hold ';': read with ';' the rows have more fields than the header.
    with pytest.raises(DataError) as caught:
        inspect_table(files["comma.csv"], SEMI_DECIMAL_COMMA)
    assert "malformed file 'comma.csv'" in caught.value.problem
    assert "field separator" in caught.value.fix


def test_point_decimals_read_with_a_decimal_comma_are_refused(files):
    with pytest.raises(DataError) as caught:
        column_histogram(files["tab.tsv"], "x", 0, 10, 7, dialect=CsvDialect("\t", ","))
    assert "not numeric" in caught.value.problem
    assert "decimal point" in caught.value.fix


def test_separator_equal_to_decimal_mark_is_refused(files):
    from dpgui.errors import ParameterError

    with pytest.raises(ParameterError, match="both ','"):
        column_histogram(files["comma.csv"], "x", 0, 10, 7, dialect=CsvDialect(",", ","))


def test_thousands_separators_are_not_numbers(tmp_path):
    # Not supported (pyarrow reads no thousands separators): "1.234,5" is refused with its row named.
    path = tmp_path / "grouped.csv"
    path.write_text("x;y\n1,5;a\n7.654.321,5;b\n2,5;c\n")
    assert detect_dialect(path).dialect == SEMI_DECIMAL_COMMA
    with pytest.raises(DataError) as caught:
        column_histogram(path, "x", 0, 10, 2)
    assert "data row 2 holds a value that is not a number" in caught.value.problem
    assert "thousands separator" in caught.value.fix and "1234,5 rather than 1.234,5" in caught.value.fix
    assert "7.654" not in str(caught.value) and "321" not in str(caught.value)  # never the confidential cell
