"""A hierarchy's labels and notes are published: each label is decided by its record's value alone, and a
note that a column is numeric comes only from the file's or the database's own type information, never
from what the cells hold. With a public prior A > 1, A > 2, B > 3, B > x, moving one record from B > 3 to
B > x must change nothing but the counts (before: the note "column 'code' is numeric" went away, ε = ∞ for
"some record is in a non-numeric category"; SQLite refused the neighbour with "mixes values")."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpgui.data.hierarchy import count_paths
from dpgui.data.source import open_source
from dpgui.data.source_spec import parse_source

NOTE = "column 'code' is numeric; its values are used as categories"


def _rows(moved: bool) -> list[tuple[str, object]]:
    rows: list[tuple[str, object]] = [("A", 1), ("A", 2), ("B", 3)] * 5
    if moved:
        rows[2] = ("B", "x")
    return rows


def _csv(path: Path, rows) -> str:
    path.write_text("region,code\n" + "".join(f"{r},{c}\n" for r, c in rows))
    return str(path)


def _xlsx(path: Path, rows) -> str:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["region", "code"])
    for row in rows:
        book.active.append(list(row))
    book.save(path)
    return str(path)


def _sqlite(path: Path, rows, declared: str = "") -> str:
    with sqlite3.connect(path) as conn:
        conn.execute(f"CREATE TABLE t (region TEXT, code {declared})")
        conn.executemany("INSERT INTO t VALUES (?, ?)", rows)
    conn.close()
    return f"sqlite:///{path}"


SOURCES = {
    "csv": (lambda folder, rows: parse_source(_csv(folder / "d.csv", rows)), ()),
    "excel": (lambda folder, rows: parse_source(_xlsx(folder / "d.xlsx", rows)), ()),
    "sqlite, no declared type": (lambda folder, rows: parse_source(_sqlite(folder / "d.db", rows), table="t"), ()),
    "sqlite query": (lambda folder, rows: parse_source(_sqlite(folder / "d.db", rows), query="SELECT * FROM t"), ()),
    # a declared type is the database's own information: the note, on both neighbours
    "sqlite, declared INTEGER": (lambda folder, rows: parse_source(_sqlite(folder / "d.db", rows, "INTEGER"),
                                                                   table="t"), (NOTE,)),
}


@pytest.mark.parametrize("name", list(SOURCES))
def test_moving_one_record_to_a_text_category_changes_only_the_counts(tmp_path, name):
    make, notes = SOURCES[name]
    found = []
    for moved in (False, True):
        folder = tmp_path / str(moved)
        folder.mkdir()
        with open_source(make(folder, _rows(moved))) as source:
            found.append(source.path_counts(["region", "code"]))
    before, after = found
    assert before.notes == after.notes == notes
    assert before.paths == (("A", "1"), ("A", "2"), ("B", "3"))
    assert after.paths == (("A", "1"), ("A", "2"), ("B", "3"), ("B", "x"))
    assert after.counts.tolist() == [5, 5, 4, 1]


def test_a_typed_files_numeric_column_is_noted_on_both_neighbours(tmp_path):
    for moved in (False, True):
        rows = [(r, float(c) if c != "x" else 9.5) for r, c in _rows(moved)]
        path = tmp_path / f"{moved}.parquet"
        pq.write_table(pa.table({"region": [r for r, _ in rows], "code": [c for _, c in rows]}), path)
        counts = count_paths(path, ["region", "code"])
        assert counts.notes == (NOTE,)
        assert {p[1] for p in counts.paths} <= {"1", "2", "3", "9.5"}  # 3.0 is "3", without float noise


def test_an_excel_cells_label_does_not_depend_on_the_other_cells_of_its_batch(tmp_path):
    """The float 1e-07 beside numbers only in one batch of rows, and beside a text in the next: one label,
    "0.0000001", in both (a mixed batch's text was str(1e-07) = "1e-07", so the label — and the published
    node list — depended on the neighbouring records' types)."""
    rows = [("A", 1e-07), ("A", 2.5), ("A", 1e-07), ("A", "x")]
    counts = count_paths(_xlsx(tmp_path / "mixed.xlsx", rows), ["region", "code"], batch_rows=2)
    assert dict(zip(counts.paths, counts.counts.tolist())) == {("A", "0.0000001"): 2, ("A", "2.5"): 1, ("A", "x"): 1}
