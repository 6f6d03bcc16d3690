"""``--source URL|FILE [--table T | --query Q] [--delimiter --decimal]``: the command line reads the data
only through :mod:`dpgui.data.source`. The same rows as a CSV file, a semicolon CSV with decimal
commas, an SQLite table and an SQLite query give identical counts (seeded simulations print the
same figures); the signed manifest records the source (URL, table or query, who counted) and never
a password; every bad input is one line on stderr, exit 2, nothing spent and nothing written.
A full PostgreSQL release (password from DPGUI_DB_PASSWORD) leaves the password in no file."""

from __future__ import annotations

import csv
import json
import math
import os
import sqlite3
from pathlib import Path

import pytest

from dpgui.report.keystore import create_key
from dpgui.report.ledger import LEDGER_FILENAME, Ledger

from cli_helpers import run_cli

PASSPHRASE = "a long test passphrase"
SQLITE_ENGINE = f"the database (SQLite {sqlite3.sqlite_version})"
# x on [0, 10) in 8 bins (edges 0, 1.25, …, 8.75): edge values, out-of-range values into the end bins,
# missing values; a text column, two level columns.
X_VALUES = [-5.0, 0.0, 1.25, 1.2499999999999998, 2.5, 3.0, 3.75, 5.0, 6.25, 7.5, 8.75, 9.999999, 10.0, 15.0, 1e300,
            -1e300, None, None, 4.4, 4.4, 0.1, 9.1, 2.2, 6.6, 3.3]
ROWS = [(x, f"name{i % 3}", f"R{i % 2}", f"R{i % 2}-D{i % 3}") for i, x in enumerate(X_VALUES)]
COLUMNS = ("x", "name", "region", "district")


def _number_text(x: float | None, decimal: str) -> str:
    return "" if x is None else repr(x).replace(".", decimal)


@pytest.fixture
def world(tmp_path) -> Path:
    """The same rows as ``data.csv``, ``semi.csv`` (';'-separated, decimal comma), ``data.parquet`` and the
    SQLite table ``people`` in ``data.db`` (plus an empty table ``nobody``); a signing key; datasets
    ``db`` and ``file`` with ε = 10."""
    folder = tmp_path / "work"
    folder.mkdir()
    with open(folder / "data.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows([_number_text(x, "."), *rest] for x, *rest in ROWS)
    with open(folder / "semi.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=";")
        writer.writerow(COLUMNS)
        writer.writerows([_number_text(x, ","), *rest] for x, *rest in ROWS)
    conn = sqlite3.connect(folder / "data.db")
    conn.execute("CREATE TABLE people (x REAL, name TEXT, region TEXT, district TEXT)")
    conn.executemany("INSERT INTO people VALUES (?, ?, ?, ?)", ROWS)
    conn.execute("CREATE TABLE nobody (x REAL, name TEXT)")
    conn.commit()
    conn.close()
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [x for x, *_ in ROWS], "name": [r[1] for r in ROWS]}), folder / "data.parquet")
    (folder / "pass.txt").write_text(PASSPHRASE + "\n", encoding="utf-8")
    create_key("officer", PASSPHRASE, folder)
    with Ledger() as ledger:
        ledger.set_cap("db", 10)
        ledger.set_cap("file", 10)
    return folder


def _url(world: Path) -> str:
    return f"sqlite:///{world / 'data.db'}"


#: What a manifest records of that SQLite file: its name only (a local path may name a person or a project).
PUBLIC_URL = "sqlite:///data.db"


def _bundle(world: Path, name: str) -> list[str]:
    return ["--bundle", str(world), "--key", str(world / "officer.key"), "--passphrase-file", str(world / "pass.txt"),
            "--name", name]


RELEASE = ["--column", "x", "--lower", "0", "--upper", "10", "--bins", "8", "--epsilon", "1"]


def _ledger(capsys) -> dict:
    code, out, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert code == 0
    return json.loads(out)


def _verify(world: Path, manifest: Path, capsys) -> None:
    code, out, err = run_cli(["verify", str(manifest), "--pubkey", str(world / "officer.pub")], capsys)
    assert code == 0, err
    assert "schema version 4" in out and "VERIFIED" in out


# ------------------------------------------------------------------ releases from a database
@pytest.mark.slow
def test_release_from_an_sqlite_table_records_the_source_in_manifest_and_ledger(world, capsys):
    code, out, err = run_cli(["release", "--source", _url(world), "--table", "people", *RELEASE, "--dataset", "db",
                              "--json", *_bundle(world, "table")], capsys)
    assert code == 0, err
    summary = json.loads(out)
    expected = {"kind": "database", "location": PUBLIC_URL, "table": "people", "engine": SQLITE_ENGINE}
    assert summary["source"] == expected
    assert summary["n_released"] == len(ROWS)  # change neighbours: N = all rows (missing ones too), exact
    manifest = json.loads((world / "table.manifest.json").read_text(encoding="utf-8"))
    assert manifest["schema_version"] == 4 and manifest["source"] == expected
    assert manifest["total_records"]["value"] == len(ROWS)
    _verify(world, world / "table.manifest.json", capsys)
    entry = _ledger(capsys)["releases"][0]
    assert entry["description"]["source"] == expected
    with Ledger() as ledger:
        assert ledger.release_output(entry["release_id"]).params["source"] == expected


@pytest.mark.slow
def test_the_schema_ties_the_source_to_version_4_and_refuses_a_password_in_it(world, capsys):
    from dpgui.report.bundle import schema_problems, source_text

    code, _, err = run_cli(["release", "--source", _url(world), "--table", "people", *RELEASE, "--dataset", "db",
                            *_bundle(world, "schema")], capsys)
    assert code == 0, err
    manifest = json.loads((world / "schema.manifest.json").read_text(encoding="utf-8"))
    assert schema_problems(manifest) == []
    without = {k: v for k, v in manifest.items() if k != "source"}
    assert schema_problems(without)  # version 4 without its source
    assert schema_problems({**manifest, "schema_version": 2})  # a source in a version 2 manifest
    assert schema_problems(without | {"schema_version": 2}) == []  # what the window writes without a source
    leaked = {**manifest, "source": {**manifest["source"], "location": "postgresql://alice:pw@db/census"}}
    assert any("location" in p for p in schema_problems(leaked))
    assert source_text(manifest["source"]) == f"table people in {PUBLIC_URL}; counted by {SQLITE_ENGINE}"
    assert source_text({"kind": "file", "format": "csv", "dialect": {"delimiter": ";", "decimal": ","},
                        "engine": "this computer"}) == ("a CSV file (semicolon-separated, decimal comma); counted by "
                                                        "this computer")


@pytest.mark.slow
def test_release_from_a_query_records_the_query(world, capsys):
    query = "SELECT x, name FROM people WHERE region = 'R0' OR region = 'R1'"
    code, out, err = run_cli([
        "release", _url(world), "--query", query, *RELEASE, "--dataset", "db", "--json", *_bundle(world, "query"),
    ], capsys)
    assert code == 0, err
    manifest = json.loads((world / "query.manifest.json").read_text(encoding="utf-8"))
    assert manifest["source"] == {"kind": "database", "location": PUBLIC_URL, "query": query, "engine": SQLITE_ENGINE,
                                  "row_count_public": False}
    assert manifest["neighbours"] == json.loads(out)["neighbours"] == "addremove"  # a query's default: N private
    _verify(world, world / "query.manifest.json", capsys)


@pytest.mark.slow
def test_a_file_release_records_its_stated_dialect_but_not_its_path(world, capsys):
    """The dialect a release reads a CSV with is the one stated (or the name's default), never one read from
    the cells: semi.csv's head suggests ';' and ',' and that is all — without --delimiter/--decimal the
    release is refused before anything is spent, naming the suggestion and the options that state it."""
    code, out, err = run_cli(["release", "--source", str(world / "semi.csv"), *RELEASE, "--dataset", "file", "--json",
                              *_bundle(world, "semirel")], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "semicolon-separated, decimal comma (suggested by its first lines)" in err
    assert "--delimiter semicolon --decimal ','" in err
    assert _ledger(capsys)["releases"] == [] and not list(world.glob("semirel*"))
    code, out, err = run_cli(["release", "--source", str(world / "semi.csv"), "--delimiter", "semicolon", "--decimal",
                              ",", *RELEASE, "--dataset", "file", "--json", *_bundle(world, "semirel")], capsys)
    assert code == 0, err
    manifest_text = (world / "semirel.manifest.json").read_text(encoding="utf-8")
    recorded = {"kind": "file", "format": "csv", "engine": "this computer",
                "dialect": {"delimiter": ";", "decimal": ",", "origin": "stated"}}
    assert json.loads(manifest_text)["source"] == recorded == json.loads(out)["source"]
    assert _ledger(capsys)["releases"][0]["description"]["source"] == recorded
    assert str(world) not in manifest_text and "semi.csv" not in manifest_text
    assert json.loads(out)["n_released"] == len(ROWS)
    import subprocess
    import unicodedata

    text = subprocess.run(["pdftotext", str(world / "semirel.pdf"), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert "semicolon-separated, decimal comma, as stated by the officer" in " ".join(
        unicodedata.normalize("NFKC", text).split())


def test_columns_lists_kinds_and_who_counts(world, capsys):
    code, out, err = run_cli(["columns", "--source", _url(world), "--table", "people", "--json"], capsys)
    assert code == 0, err
    listed = json.loads(out)
    assert listed["source"] == {"kind": "database", "location": PUBLIC_URL, "table": "people", "engine": SQLITE_ENGINE}
    assert [(c["name"], c["kind"]) for c in listed["columns"]] == [
        ("x", "numeric"), ("name", "text"), ("region", "text"), ("district", "text")]
    code, out, err = run_cli(["columns", str(world / "semi.csv")], capsys)
    assert code == 0, err
    assert "4 column(s), counted by this computer" in out and "x " in out and "numeric" in out
    # the dialect: suggested by the head, not stated; the options that state it
    assert ("read as semicolon-separated, decimal comma: suggested by its first lines, not stated; a release "
            "refuses the file until you state its dialect: --delimiter semicolon --decimal ','") in out
    code, out, err = run_cli(["columns", str(world / "semi.csv"), "--decimal", ",", "--json"], capsys)
    assert code == 0, err
    listed = json.loads(out)
    assert listed["source"]["dialect"] == {"delimiter": ";", "decimal": ",", "origin": "stated"}
    assert listed["dialect"]["origin"] == "stated"
    assert (listed["dialect"]["suggestion"]["delimiter"], listed["dialect"]["suggestion"]["decimal"]) == (";", ",")
    code, out, err = run_cli(["columns", str(world / "data.csv")], capsys)
    assert code == 0, err
    assert ("read as comma-separated, decimal point (the default for its name); its first lines suggest "
            "comma-separated, decimal point") in out
    code, _, err = run_cli(["columns", "--source", _url(world), "--query", "DROP TABLE people"], capsys)
    assert code == 2 and err.count("\n") == 1


# ------------------------------------------------------------------ identical counts from every source
def _simulate(capsys, *source: str) -> dict:
    code, out, err = run_cli(["simulate", *source, *RELEASE, "--trials", "20", "--seed", "7", "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.slow
def test_every_source_gives_the_files_counts(world, capsys):
    """A seeded simulation is a function of the histogram (K counts and the missing count): equal JSON
    means equal counts."""
    reference = _simulate(capsys, "--input", str(world / "data.csv"))
    assert reference["n"] == len(ROWS)
    for source in (
        ["--source", str(world / "semi.csv"), "--delimiter", "semicolon", "--decimal", ","],
        ["--source", str(world / "semi.csv"), "--decimal", "comma"],  # ';' implied
        ["--source", str(world / "data.csv"), "--delimiter", ","],
        ["--source", str(world / "data.parquet")],
        ["--source", _url(world), "--table", "people"],
        ["--source", _url(world), "--table", "PEOPLE"],  # unquoted names ignore case, as in SQL
        # a query's row count is private unless stated public: this one selects the whole table, so it is
        ["--source", _url(world), "--query", "SELECT * FROM people", "--n-public"],
    ):
        assert _simulate(capsys, *source) == reference, source


def test_hierarchy_counts_from_a_database_equal_the_files(world, capsys):
    def run(*source: str) -> dict:
        code, out, err = run_cli(["hierarchy", "simulate", "--levels", "region,district", *source, "--epsilon", "1",
                                  "--trials", "5", "--seed", "3", "--json"], capsys)
        assert code == 0, err
        return json.loads(out)

    reference = run("--input", str(world / "data.csv"))
    assert run("--source", _url(world), "--table", "people") == reference
    assert run("--source", str(world / "semi.csv"), "--delimiter", "semicolon", "--decimal", "comma") == reference


@pytest.mark.slow
def test_hierarchy_release_from_a_database_records_the_source(world, capsys):
    code, out, err = run_cli(["hierarchy", "release", "--source", _url(world), "--table", "people", "--levels",
                              "region,district", "--categories-public", "--epsilon", "1", "--dataset", "db", "--json",
                              *_bundle(world, "tree")], capsys)
    assert code == 0, err
    assert json.loads(out)["source"]["table"] == "people"
    manifest = json.loads((world / "tree.manifest.json").read_text(encoding="utf-8"))
    assert manifest["schema_version"] == 4 and manifest["kind"] == "hierarchy"
    assert manifest["source"] == {"kind": "database", "location": PUBLIC_URL, "table": "people",
                                  "engine": SQLITE_ENGINE}
    assert manifest["total_records"]["value"] == len(ROWS)
    _verify(world, world / "tree.manifest.json", capsys)


def test_the_same_data_from_a_database_is_recognised_as_the_files_dataset(world, capsys):
    """The ledger's fingerprint (column names + row count) is the source's, whatever the source."""
    code, _, err = run_cli(["release", str(world / "data.csv"), *RELEASE, "--dataset", "file",
                            "--out", str(world / "a.csv")], capsys)
    assert code == 0, err
    code, _, err = run_cli(["release", "--source", _url(world), "--table", "people", *RELEASE, "--dataset", "db",
                            "--out", str(world / "b.csv")], capsys)
    assert code == 2 and "file" in err and "--new-dataset" in err and err.count("\n") == 1
    assert not (world / "b.csv").exists()
    code, _, err = run_cli(["release", "--source", _url(world), "--table", "people", *RELEASE, "--dataset", "db",
                            "--new-dataset", "--out", str(world / "b.csv")], capsys)
    assert code == 0, err


# ------------------------------------------------------------------ bad input: one line, exit 2, nothing spent
BAD = {
    "password in the URL": (lambda w: ["--source", "postgresql://alice:s3cret-pw@localhost/census", "--table", "t"],
                            "holds a password"),
    "table with a file": (lambda w: ["--source", str(w / "data.csv"), "--table", "people"], "--table/--query"),
    "table and query": (lambda w: ["--source", _url(w), "--table", "people", "--query", "SELECT x FROM people"],
                        "both a table and a query"),
    "unknown engine": (lambda w: ["--source", _url(w), "--table", "people", "--engine", "duckdb"],
                       "engine 'duckdb' is not known"),
    "database without table": (lambda w: ["--source", _url(w)], "needs a table or a query"),
    "a query that deletes": (lambda w: ["--source", _url(w), "--query", "DELETE FROM people"], "starts with DELETE"),
    "a query that drops after a select": (lambda w: ["--source", _url(w), "--query",
                                                     "SELECT x FROM people; DROP TABLE people"],
                                          "more than one statement"),
    "no such table": (lambda w: ["--source", _url(w), "--table", "nonesuch"], "nonesuch"),
    "no such column": (lambda w: ["--source", _url(w), "--table", "people", "--column", "y"], "column 'y' not found"),
    "non-numeric column": (lambda w: ["--source", _url(w), "--table", "people", "--column", "name"], "not numeric"),
    "empty table": (lambda w: ["--source", _url(w), "--table", "nobody"], "has no data rows"),
    "no such SQLite file": (lambda w: ["--source", f"sqlite:///{w / 'missing.db'}", "--table", "people"], "missing.db"),
    "dialect for a Parquet file": (lambda w: ["--source", str(w / "data.parquet"), "--delimiter", "tab"],
                                   "not a CSV or TSV file"),
    "dialect for a database": (lambda w: ["--source", _url(w), "--table", "people", "--decimal", ","], "dialect"),
    "same separator and decimal mark": (lambda w: ["--source", str(w / "semi.csv"), "--delimiter", "comma",
                                                   "--decimal", "comma"], "both ','"),
    "an unknown separator": (lambda w: ["--source", str(w / "semi.csv"), "--delimiter", "colon"],
                             "is not a field separator"),
    "data given twice": (lambda w: [str(w / "data.csv"), "--source", _url(w), "--table", "people"], "given twice"),
    "no data": (lambda w: [], "no data was given"),
    "spark master without spark": (lambda w: ["--source", str(w / "data.csv"), "--spark-master", "local[1]"],
                                   "--spark-master"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(BAD))
def test_bad_sources_are_refused_in_one_line_with_nothing_spent(world, capsys, case):
    source, words = BAD[case]
    args = source(world)
    options = list(RELEASE)
    if "--column" in args:  # the case names its own column
        options = options[2:]
    code, out, err = run_cli(["release", *args, *options, "--dataset", "db", "--out", str(world / "out.csv"),
                              *_bundle(world, "bad")], capsys)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and words in err, err
    assert "s3cret-pw" not in err + out
    assert not (world / "out.csv").exists() and not list(world.glob("bad.*"))
    ledger = _ledger(capsys)
    assert ledger["releases"] == [] and all(d["epsilon_spent"] == 0 for d in ledger["datasets"])
    conn = sqlite3.connect(world / "data.db")  # a refused query changed nothing
    assert conn.execute("SELECT COUNT(*) FROM people").fetchone()[0] == len(ROWS)
    conn.close()


def test_hierarchy_and_simulate_refuse_bad_sources_too(world, capsys):
    for command in (["simulate", *RELEASE, "--trials", "5"],
                    ["hierarchy", "plan", "--levels", "region,district", "--epsilon", "1"],
                    ["hierarchy", "simulate", "--levels", "region,district", "--epsilon", "1", "--trials", "5"],
                    ["hierarchy", "release", "--levels", "region,district", "--epsilon", "1", "--categories-public",
                     "--dataset", "db", "--out", str(world / "out.csv")]):
        code, _, err = run_cli([*command, "--source", _url(world), "--query", "UPDATE people SET x = 0"], capsys)
        assert code == 2 and err.count("\n") == 1, (command, err)
        code, _, err = run_cli([*command, "--source", _url(world), "--table", "people", "--encoding", ""], capsys)
        assert code == 2 and err.count("\n") == 1, (command, err)
    code, _, err = run_cli(["hierarchy", "plan", "--levels", "region,nope", "--source", _url(world), "--table",
                            "people", "--epsilon", "1"], capsys)
    assert code == 2 and "column 'nope' not found" in err
    code, _, err = run_cli(["simulate", "--synthetic", "uniform", "--n", "100", "--bins", "8", "--epsilon", "1",
                            "--trials", "5", "--table", "people"], capsys)
    assert code == 2 and "--table describes a data source" in err
    assert not (world / "out.csv").exists() and _ledger(capsys)["releases"] == []


# ------------------------------------------------------------------ PostgreSQL: the password is in no file
def _pg_table(pg_server) -> str:
    pg_server.execute("DROP TABLE IF EXISTS cli_people")
    pg_server.execute("CREATE TABLE cli_people (x float8, name text, region text, district text)")
    with pg_server.connect() as conn:
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO cli_people VALUES (%s, %s, %s, %s)", ROWS)
        conn.commit()
    return "cli_people"


def test_a_full_postgresql_release_leaves_the_password_in_no_file(world, capsys, monkeypatch, pg_server):
    table = _pg_table(pg_server)
    monkeypatch.setenv("DPGUI_DB_PASSWORD", pg_server.password)
    reference = _simulate(capsys, "--input", str(world / "data.csv"))
    assert _simulate(capsys, "--source", pg_server.url, "--table", table) == reference  # counted in the database
    code, out, err = run_cli(["release", "--source", pg_server.url, "--table", table, *RELEASE, "--dataset", "db",
                              "--json", *_bundle(world, "pg")], capsys)
    assert code == 0, err
    code, out2, err2 = run_cli(["hierarchy", "release", "--source", pg_server.url, "--query",
                                f"SELECT region, district FROM {table}", "--levels", "region,district",
                                "--categories-public", "--epsilon", "1", "--dataset", "db", "--json",
                                *_bundle(world, "pgtree")], capsys)
    assert code == 0, err2
    manifest = json.loads((world / "pg.manifest.json").read_text(encoding="utf-8"))
    assert manifest["source"]["location"] == pg_server.url and manifest["source"]["table"] == table
    assert manifest["source"]["engine"].startswith("the database (PostgreSQL ")
    _verify(world, world / "pg.manifest.json", capsys)
    secret = pg_server.password.encode("utf-8")
    assert len(secret) >= 8 and secret not in (out + err + out2 + err2).encode("utf-8")
    home = Path(os.environ["DPGUI_HOME"])
    scanned = 0
    for folder in (world, home):
        for path in folder.rglob("*"):
            if path.is_file():
                scanned += 1
                assert secret not in path.read_bytes(), path
    assert scanned >= 10 and any(p.name == LEDGER_FILENAME for p in home.rglob("*"))  # the ledger was scanned


def test_a_wrong_postgresql_password_is_refused_in_one_line_with_nothing_spent(world, capsys, monkeypatch,
                                                                               pg_server):
    table = _pg_table(pg_server)
    monkeypatch.setenv("DPGUI_DB_PASSWORD", "not-the-password")
    code, out, err = run_cli(["release", "--source", pg_server.url, "--table", table, *RELEASE, "--dataset", "db",
                              "--out", str(world / "out.csv")], capsys)
    assert code == 2 and err.count("\n") == 1 and "refused the password" in err, err
    assert "not-the-password" not in err + out and not (world / "out.csv").exists()
    assert _ledger(capsys)["releases"] == []
    monkeypatch.delenv("DPGUI_DB_PASSWORD")
    monkeypatch.setenv("PGPASSFILE", str(world / "no-pgpass"))  # no ~/.pgpass of the machine's user either
    code, _, err = run_cli(["release", "--source", pg_server.url, "--table", table, *RELEASE, "--dataset", "db",
                            "--out", str(world / "out.csv")], capsys)
    assert code == 2 and err.count("\n") == 1 and "DPGUI_DB_PASSWORD" in err, err
    assert math.isclose(_ledger(capsys)["datasets"][0]["epsilon_spent"], 0.0)


# ------------------------------------------------------------------ Spark (optional extra dpgui[spark], Java)
def test_spark_counts_what_the_file_path_counts_and_the_manifest_says_so(world, capsys):
    from system_pieces import require, spark_unavailable_reason

    require(spark_unavailable_reason())
    reference = _simulate(capsys, "--input", str(world / "data.parquet"))
    spark = ["--engine", "spark", "--source", str(world / "data.parquet")]
    assert _simulate(capsys, *spark) == reference
    code, out, err = run_cli(["release", *spark, *RELEASE, "--dataset", "file", "--json", *_bundle(world, "spark")],
                             capsys)
    assert code == 0, err
    manifest = json.loads((world / "spark.manifest.json").read_text(encoding="utf-8"))
    assert manifest["source"] == {"kind": "spark", "location": "data.parquet", "spark_master": "local[2]",
                                  "engine": "Spark (local[2])"}
    assert json.loads(out)["n_released"] == len(ROWS)
    code, _, err = run_cli(["release", *spark, "--table", "people", *RELEASE, "--dataset", "file", "--out",
                            str(world / "x.csv")], capsys)
    assert code == 2 and err.count("\n") == 1 and not (world / "x.csv").exists()
