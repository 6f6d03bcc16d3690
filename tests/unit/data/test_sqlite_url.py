"""``sqlite:///srv/data/x.db`` (three slashes) is a path relative to the current folder for SQLAlchemy,
while people mean the absolute ``/srv/data/x.db``. The rule (dpgui.data.source_spec.which_sqlite_url):
the relative file if it exists; else the absolute one if it exists, with a note saying so; both existing
(two different files) is refused, naming both URLs. No rule opens another file than meant in silence."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from dpgui.data import source_spec
from dpgui.data.source_spec import parse_source
from dpgui.errors import ParameterError
from cli_helpers import run_cli


def sqlite_url(path: Path) -> str:
    return source_spec.sqlite_url(path)


def which_sqlite_url(location: str, folder: Path) -> str:
    return source_spec.which_sqlite_url(location, folder)


def sqlite_url_note(typed: str, used: str) -> str | None:
    return source_spec.sqlite_url_note(typed, used)


def _database(path: Path, values: range) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (x REAL)")
        con.executemany("INSERT INTO t VALUES (?)", [(float(v),) for v in values])
    return path


def _three_slashes(path: Path) -> str:
    """The URL people write for an absolute path: sqlite:/// + the path without its leading '/'."""
    return "sqlite:///" + path.as_posix().lstrip("/")


def test_an_absolute_path_written_with_three_slashes_is_read_as_such_when_only_it_exists(tmp_path):
    db = _database(tmp_path / "srv" / "x.db", range(5))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    typed = _three_slashes(db)
    used = which_sqlite_url(typed, elsewhere)
    assert used == "sqlite:///" + db.as_posix() == sqlite_url(db)  # four slashes: sqlite:////tmp/…/x.db
    note = sqlite_url_note(typed, used)
    assert note is not None and str(db) in note and "four slashes" in note and used in note


def test_a_relative_file_that_exists_is_the_one_read(tmp_path):
    db = _database(tmp_path / "srv" / "x.db", range(5))
    relative = "sqlite:///srv/x.db"
    assert which_sqlite_url(relative, tmp_path) == relative  # SQLAlchemy's meaning, and nothing else exists
    assert sqlite_url_note(relative, relative) is None
    _database(tmp_path / "here" / db.relative_to("/"), range(3))  # the same path below another folder too
    with pytest.raises(ParameterError) as caught:
        which_sqlite_url(_three_slashes(db), tmp_path / "here")
    assert str(db) in caught.value.problem and "current folder" in caught.value.problem
    assert "sqlite:////" in caught.value.fix and "sqlite:///./" in caught.value.fix


@pytest.mark.parametrize("url", ["sqlite:///./srv/x.db", "sqlite:///~/x.db", "sqlite:///:memory:", "sqlite://",
                                 "postgresql://alice@db/census", "sqlite:///no/such/file.db"])
def test_other_urls_are_left_as_they_are(tmp_path, url):
    assert which_sqlite_url(url, tmp_path) == url


def test_sqlite_url_escapes_what_sqlalchemy_would_read_as_escapes_or_a_query(tmp_path):
    import sqlalchemy as sa

    path = tmp_path / "a%20b?c#d.db"
    assert sa.engine.make_url(sqlite_url(path)).database == str(path)
    example = source_spec.sqlite_url_example()
    assert example.startswith("sqlite:///") and example.endswith("survey.db")


def test_the_command_line_reads_the_absolute_file_says_so_and_records_four_slashes(tmp_path, capsys, monkeypatch):
    db = _database(tmp_path / "srv" / "x.db", range(100))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    typed = _three_slashes(db)
    code, out, err = run_cli(["columns", typed, "--table", "t"], capsys)
    assert code == 0, err
    assert "note:" in err and "four slashes" in err and "sqlite:///" + db.as_posix() in out
    assert run_cli(["ledger", "cap", "srv", "5", "--reason", "test"], capsys)[0] == 0
    code, out, err = run_cli(["release", typed, "--table", "t", "--column", "x", "--lower", "0", "--upper", "100",
                              "--bins", "4", "--epsilon", "1", "--dataset", "srv", "--out", str(work / "o.csv"),
                              "--json"], capsys)
    assert code == 0, err
    assert err.count("note:") == 1  # said once, though the neighbour model reads the source's options first
    assert json.loads(out)["n_released"] == 100  # the rows of /…/srv/x.db (N is public under change)
    assert parse_source(typed, table="t").location == "sqlite:///" + db.as_posix()  # what every later step opens


def test_a_missing_sqlite_file_says_how_an_absolute_path_is_written(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(["columns", "sqlite:///srv/none.db", "--table", "t"], capsys)
    assert code == 2 and str(tmp_path / "srv" / "none.db") in err and "sqlite:////path/to/file.db" in err
