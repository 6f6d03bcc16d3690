"""What the command line says to a privacy officer: an error never quotes a confidential cell (two
files differing in that one cell get the same message, byte for byte); a wrong ``--delimiter`` is
named as such; a plan whose 95 % margin exceeds N, or whose δ is not far below 1/N, is warned about
before anything is spent — with N only where it is public or typed, never the row count of data
whose N is private; and no text a user reads cites a paper by its file number."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]
DATASET = "people"


def _cap(capsys, dataset: str = DATASET) -> None:
    assert run_cli(["ledger", "cap", dataset, "10", "--delta", "0.01", "--reason", "test"], capsys)[0] == 0


def _release(path: Path, capsys, *extra: str, column: str = "x", bins: str = "4", epsilon: str = "1"):
    return run_cli(["release", str(path), "--column", column, "--lower", "0", "--upper", "100", "--bins", bins,
                    "--epsilon", epsilon, "--dataset", DATASET, "--out", str(path.with_name("out.csv")), *extra], capsys)


def _spent(capsys) -> float:
    code, out, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert code == 0
    datasets = json.loads(out)["datasets"]
    return sum(d["epsilon_spent"] for d in datasets)


# ------------------------------------------------------------------ no confidential cell in an error

def _xlsx(path: Path, cell: object) -> None:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    for row in (["x"], [1], [2], [cell], [4]):
        sheet.append(row)
    book.save(path)


NEIGHBOURS = [  # (id, file name, writer(path, cell), the two cells, command builder)
    ("csv-text-cell", "d.csv", lambda p, c: p.write_text(f"x,y\n1,a\n2,b\n{c},c\n", encoding="utf-8"),
     ("Alice Smith", "Bob Jones"), "release"),
    ("csv-number-with-thousands-separator", "d.csv",
     lambda p, c: p.write_text(f'x\n1\n2\n"{c}"\n4\n', encoding="utf-8"), ("98,765.5", "43,210.5"), "release"),
    ("csv-decimal-comma", "d.csv", lambda p, c: p.write_text(f'x,y\n1,a\n2,b\n"{c}",c\n', encoding="utf-8"),
     ("98765,5", "43210,5"), "release"),
    ("excel-text-cell", "d.xlsx", _xlsx, ("Alice Smith", "Bob Jones"), "release"),
    ("prior-count-not-whole", "prior.csv",
     lambda p, c: p.write_text(f"r,d,count\nA,a1,2\nB,b1,{c}\n", encoding="utf-8"), ("12.25", "17.75"), "prior"),
    ("data-path-not-in-the-prior", "h.csv",
     lambda p, c: p.write_text(f"r,d\nA,a1\nA,a1\nB,{c}\n", encoding="utf-8"), ("Alice Smith", "Bob Jones"),
     "hierarchy"),
    ("level-labels-that-look-alike", "h.csv",
     lambda p, c: p.write_text(f"r,d\nA,a1\nA,{c}\nB,{c} \n", encoding="utf-8"), ("Café", "Zoë"), "hierarchy"),
    ("level-label-with-path-separator", "h.csv",
     lambda p, c: p.write_text(f"r,d\nA,a1\nB,{c}\n", encoding="utf-8"), ("Alice > Smith", "Bob > Jones"),
     "hierarchy"),
]


def _neighbour_command(case_id: str, kind: str, path: Path) -> list[str]:
    if kind == "release":
        return ["release", str(path), "--column", "x", "--lower", "0", "--upper", "100", "--bins", "4", "--epsilon",
                "1", "--dataset", DATASET, "--out", str(path.with_name("out.csv"))]
    if kind == "prior":
        return ["hierarchy", "plan", "--levels", "r,d", "--prior", str(path), "--epsilon", "1", "--allocation",
                "optimal"]
    prior = path.with_name("prior.csv")
    prior.write_text("r,d,count\nA,a1,2\nB,b1,1\n", encoding="utf-8")
    nodes = ["--categories-public"] if "label" in case_id else ["--prior", str(prior)]
    return ["hierarchy", "release", str(path), "--levels", "r,d", "--epsilon", "1", "--dataset", DATASET, *nodes,
            "--out", str(path.with_name("out.csv"))]


@pytest.mark.slow
@pytest.mark.parametrize("case", NEIGHBOURS, ids=[c[0] for c in NEIGHBOURS])
def test_an_error_about_a_cell_is_the_same_for_neighbouring_files_and_quotes_neither(case, tmp_path, capsys):
    case_id, name, write, cells, kind = case
    _cap(capsys)
    messages = []
    for i, cell in enumerate(cells):
        folder = tmp_path / f"f{i}"
        folder.mkdir()
        path = folder / name
        write(path, cell)
        code, _, err = run_cli(_neighbour_command(case_id, kind, path), capsys)
        assert code == 2, err
        messages.append(err.replace(str(folder), "FOLDER"))
        for quoted in cells:  # neither cell, nor any longer piece of it
            assert all(piece not in err for piece in [quoted, *quoted.replace(",", " ").split()] if len(piece) >= 4), err
    assert messages[0] == messages[1]  # the refusal does not depend on the cell
    assert _spent(capsys) == 0


def test_a_database_data_exception_is_reported_without_the_driver_message_that_quotes_the_value():
    from dpgui.data.sql_source import _query_error

    class InvalidText(Exception):
        sqlstate = "22P02"

    err = _query_error(InvalidText('invalid input syntax for type double precision: "Alice Smith"'), None)
    assert "Alice" not in str(err) and "22P02" in err.problem and "CAST" in err.fix


def test_a_reader_message_that_quotes_a_row_is_cut_before_the_row():
    from dpgui.data.streams import short_error_text

    text = short_error_text(ValueError("CSV parse error: Expected 2 columns, got 3: Alice,Smith,40000"))
    assert text == "CSV parse error: Expected 2 columns, got 3"
    text = short_error_text(ValueError("In CSV column #1: CSV conversion error to double: invalid value 'Alice'"))
    assert text == "In CSV column #1: CSV conversion error to double: invalid value"


# ------------------------------------------------------------------ a wrong field separator

@pytest.mark.parametrize("content,given,right", [
    ("x;y\n1;2\n3;4\n", "comma", "semicolon"),
    ("x,y\n1,2\n3,4\n", "semicolon", "comma"),
    ("x\ty\n1\t2\n3\t4\n", "comma", "tab"),
])
def test_a_wrong_delimiter_says_the_field_separator_is_probably_wrong(tmp_path, capsys, content, given, right):
    _cap(capsys)
    path = tmp_path / "d.csv"
    path.write_text(content, encoding="utf-8")
    code, _, err = _release(path, capsys, "--delimiter", given)
    assert code == 2 and "field separator is probably wrong" in err and f"--delimiter {right}" in err


def test_rows_wider_than_a_one_column_header_say_the_separator_is_probably_wrong(tmp_path, capsys):
    _cap(capsys)
    path = tmp_path / "d.csv"
    path.write_text("x;y\n1,5;2\n3;4\n", encoding="utf-8")
    code, _, err = _release(path, capsys, "--delimiter", "comma")
    assert code == 2 and "field separator is probably wrong" in err and "--delimiter" in err
    assert "1,5" not in err  # the row itself is not quoted


# ------------------------------------------------------------------ warnings before the spend

def _values(path: Path, n: int) -> Path:
    path.write_text("x\n" + "".join(f"{(i * 37) % 100}\n" for i in range(n)), encoding="utf-8")
    return path


def _margin_warning(err: str) -> bool:
    return "95 % margin" in err and "larger than N" in err


@pytest.mark.slow
def test_plan_warns_when_the_95_margin_exceeds_a_typed_n(capsys):
    from dpgui.core.planner import auto_plan, margin95
    from dpgui.core.plan import PrivacySpec

    margin = margin95(auto_plan(1024, PrivacySpec(0.1)), "every")  # ≈ 480 records
    below, above = int(margin * 0.9), int(margin * 1.1)
    code, _, err = run_cli(["plan", "--bins", "1024", "--epsilon", "0.1", "--n", str(below)], capsys)
    assert code == 0 and _margin_warning(err) and f"N = {below:,}" in err and f"± {margin:,.4g}" in err
    code, _, err = run_cli(["plan", "--bins", "1024", "--epsilon", "0.1", "--n", str(above)], capsys)
    assert code == 0 and not _margin_warning(err)


def test_release_warns_before_the_spend_when_the_margin_exceeds_the_public_n(tmp_path, capsys):
    _cap(capsys)
    code, _, err = _release(_values(tmp_path / "d.csv", 8), capsys, bins="64", epsilon="0.5")
    assert code == 0 and _margin_warning(err) and "N = 8" in err


@pytest.mark.slow
def test_under_addremove_no_warning_depends_on_the_row_count(tmp_path, capsys):
    """N is private under add/remove: the file's row count must not decide any output (here stderr)."""
    _cap(capsys)
    errors = []
    for n in (8, 9):  # neighbouring datasets: one record more
        folder = tmp_path / f"n{n}"
        folder.mkdir()
        code, _, err = _release(_values(folder / "d.csv", n), capsys, "--neighbours", "addremove", bins="64",
                                epsilon="0.5")
        assert code == 0, err
        errors.append(err.replace(str(folder), "FOLDER"))
    assert errors[0] == errors[1] and not _margin_warning(errors[0])


@pytest.mark.slow
def test_a_delta_not_far_below_one_over_n_is_warned_about_under_change_only(tmp_path, capsys):
    _cap(capsys)
    path = _values(tmp_path / "d.csv", 2000)
    code, _, err = _release(path, capsys, "--delta", "1e-3", "--noise", "gaussian", bins="16", epsilon="1")
    assert code == 0 and "δ = 0.001 is not below 1/N = 0.0005" in err
    code, _, err = _release(path, capsys, "--delta", "1e-3", "--noise", "gaussian", "--neighbours", "addremove",
                            "--force", bins="16", epsilon="1")
    assert code == 0 and "1/N" not in err
    code, _, err = run_cli(["plan", "--bins", "16", "--epsilon", "1", "--delta", "1e-3", "--noise", "gaussian",
                            "--n", "1000"], capsys)
    assert code == 0 and "δ = 0.001 is not below 1/N = 0.001" in err


def test_a_delta_above_one_in_a_thousand_is_refused_before_anything_is_read(tmp_path, capsys):
    _cap(capsys)
    code, _, err = _release(_values(tmp_path / "d.csv", 20), capsys, "--delta", "0.5")
    assert code == 2 and "far too large" in err and "0.001" in err
    assert _spent(capsys) == 0


# ------------------------------------------------------------------ methods named by their authors

def _user_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings (what users can read: help, messages,
    labels, PDF text), with their line numbers."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


@pytest.mark.slow
def test_no_user_text_cites_a_paper_by_its_file_number():
    found = [f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}" for path in sorted((ROOT / "dpgui").rglob("*.py"))
             for line, text in _user_strings(path) if "paper 0" in text.lower()]
    assert found == []


@pytest.mark.parametrize("command", [[], ["plan"], ["release"], ["quantiles"], ["simulate"], ["hierarchy", "plan"],
                                     ["hierarchy", "release"], ["hierarchy", "simulate"], ["columns"]])
def test_no_help_text_cites_a_paper_by_its_file_number(command, capsys):
    code, out, _ = run_cli([*command, "--help"] if command else ["--help"], capsys)
    assert code == 0 and "usage" in out and "paper 0" not in out.lower()
