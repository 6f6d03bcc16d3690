"""One order of category labels everywhere — the hierarchy's tree (the window draws it in this order),
the released CSV and the PDF: numbers by value (1, 2, 10, 100, 101, not 1, 10, 100, 101, 2 as text),
then the other labels in natural order (R2 before R10). Labels stay text."""

from __future__ import annotations

import csv
import random
import subprocess
import unicodedata
from pathlib import Path

from dpgui.core.hierarchy import Hierarchy
from dpgui.data.hierarchy import count_paths
from dpgui.report.keystore import create_key
from dpgui.report.ledger import Ledger

from cli_helpers import run_cli

NUMBERS = ["-3", "0.5", "1", "2", "10", "100", "101", "1e3"]
NATURAL = ["apple", "Banana", "R2", "R10", "R10a", "R100", "x"]


def test_the_key_orders_numbers_by_value_then_text_naturally():
    from dpgui.core.hierarchy import label_order_key

    expected = NUMBERS + NATURAL
    shuffled = list(expected)
    random.Random(5).shuffle(shuffled)
    assert sorted(shuffled, key=label_order_key) == expected
    # exact ties of value or of text keep a fixed order (by the text itself), so the order is total
    assert sorted(["01", "1", "+1"], key=label_order_key) == ["+1", "01", "1"]
    assert sorted(["a", "A"], key=label_order_key) == ["A", "a"]


def test_the_tree_and_the_path_counts_use_it(tmp_path):
    rows = [(top, f"{top}-{child}") for top in ("10", "2", "1", "100") for child in ("R10", "R2")]
    tree = Hierarchy.from_paths(("a", "b"), rows)
    assert tree.labels[0] == ("1", "2", "10", "100")
    assert tree.labels[1][:2] == ("1-R2", "1-R10")
    data = tmp_path / "d.csv"
    data.write_text("a,b\n" + "".join(f"{a},{b}\n" for a, b in rows))
    counts = count_paths(data, ["a", "b"])
    assert [p[0] for p in counts.paths] == ["1", "1", "2", "2", "10", "10", "100", "100"]
    assert counts.hierarchy.labels == tree.labels


def test_the_released_csv_and_the_pdf_list_categories_in_that_order(tmp_path, capsys):
    tops = ["101", "2", "10", "1", "100"]
    rows = [(top, f"s{top}-{n}") for top in tops for n in (10, 9)] * 3
    data = tmp_path / "data.csv"
    data.write_text("code,school\n" + "".join(f"{a},{b}\n" for a, b in rows))
    create_key("officer", "a long test passphrase", tmp_path)
    (tmp_path / "pass.txt").write_text("a long test passphrase\n")
    with Ledger() as ledger:
        ledger.set_cap("codes", 10)
    code, _, err = run_cli(["hierarchy", "release", str(data), "--levels", "code,school", "--epsilon", "1",
                            "--categories-public", "--dataset", "codes", "--bundle", str(tmp_path), "--key",
                            str(tmp_path / "officer.key"), "--passphrase-file", str(tmp_path / "pass.txt"),
                            "--name", "codes"], capsys)
    assert code == 0, err
    with open(tmp_path / "codes.csv", newline="", encoding="utf-8") as handle:
        paths = [row["path"] for row in csv.DictReader(handle)]
    expected_tops = ["1", "2", "10", "100", "101"]
    assert paths[1:6] == expected_tops
    assert paths[6:8] == ["1 > s1-9", "1 > s1-10"]  # a parent's children in natural order too
    text = subprocess.run(["pdftotext", "-layout", str(Path(tmp_path / "codes.pdf")), "-"], capture_output=True,
                          text=True, check=True).stdout
    table = unicodedata.normalize("NFKC", text).split("All records", 1)[1]  # the table starts at the root's row
    rows = [line.split() for line in table.splitlines()]
    listed = [(row[0], row[1]) for row in rows if len(row) > 2 and row[1] in ("code", "school")]
    assert [label for label, level in listed if level == "code"] == expected_tops, listed
    assert [label for label, _ in listed][:3] == ["1", "s1-9", "s1-10"], listed  # each parent, then its children
