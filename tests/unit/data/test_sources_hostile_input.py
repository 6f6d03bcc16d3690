"""The data sources against hostile input: read-only, credentials, counting."""

from __future__ import annotations

import pytest

from dpgui.data.source import open_source
from dpgui.data.source_spec import parse_source
from dpgui.data.sql_read_only import check_read_only_query
from dpgui.errors import DataError, ParameterError


@pytest.fixture
def pg_audit(pg_server, monkeypatch):
    pg_server.execute("DROP TABLE IF EXISTS audit_t CASCADE")
    pg_server.execute("CREATE TABLE audit_t (x float8)")
    pg_server.execute("INSERT INTO audit_t SELECT g FROM generate_series(1, 10) AS g")
    monkeypatch.setenv("DPGUI_DB_PASSWORD", pg_server.password)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    return pg_server


# A non-ASCII character is part of an identifier for PostgreSQL (its lexer: bytes 0x80-0xFF), so
# "a€$x$" is ONE name there; a tokenizer that ends the name at "€" sees "$x$" open a dollar-quoted
# string and misses everything up to the next "$x$": here a COMMIT that ends the read-only
# transaction, a SET that turns read-only off and a DELETE.
_SMUGGLERS = [
    "SELECT 1 AS a\u20ac$x$) AS s; COMMIT; SET default_transaction_read_only = off; DELETE FROM audit_t; "
    "SELECT * FROM (SELECT 1 AS b\u20ac$x$",
    "SELECT 1 AS a\u00a0$x$) AS s; COMMIT; SET default_transaction_read_only = off; DELETE FROM audit_t; "
    "SELECT * FROM (SELECT 1 AS b\u00a0$x$",
    "SELECT 1 AS caf\u00e9$x$) AS s; COMMIT; SET default_transaction_read_only = off; DELETE FROM audit_t; "
    "SELECT * FROM (SELECT 1 AS b\u00e9$x$",
]


@pytest.mark.parametrize("query", _SMUGGLERS)
def test_non_ascii_name_cannot_smuggle_statements(pg_audit, query):
    with pytest.raises(DataError), open_source(parse_source(pg_audit.url, query=query)) as src:
        src.row_count()
    assert pg_audit.execute("SELECT count(*) FROM audit_t") == [(10,)]


def test_several_statements_never_run_even_if_the_check_missed_them(pg_audit):
    """The backstop on its own: a string of statements handed to the source's executor is refused by
    the server (one statement per execution), so a COMMIT cannot end the read-only transaction."""
    with open_source(parse_source(pg_audit.url, table="audit_t")) as src:
        with pytest.raises(DataError):
            src._fetch("SELECT 1; COMMIT; BEGIN READ WRITE; DELETE FROM audit_t; COMMIT")
        assert src.row_count() == 10
    assert pg_audit.execute("SELECT count(*) FROM audit_t") == [(10,)]


def test_non_ascii_names_in_a_query_are_read(pg_audit):
    """Unquoted non-ASCII names are valid PostgreSQL (a German 'größe'): no crash, the right column."""
    assert check_read_only_query("SELECT x AS größe FROM audit_t") == "SELECT x AS größe FROM audit_t"
    with open_source(parse_source(pg_audit.url, query="SELECT x AS größe FROM audit_t")) as src:
        assert [c.name for c in src.columns()] == ["größe"]
        assert src.histogram("größe", 0.0, 10.0, 2).counts.tolist() == [4, 6]


@pytest.mark.parametrize(("url", "secret"), [
    # SQLAlchemy reads the password up to the next '@': '/', '?' and '#' are part of it (urllib misses it)
    ("postgresql://alice:pa/ss@db.example.org/census", "pa/ss"),
    ("postgresql://alice:pa?ss@db.example.org/census", "pa?ss"),
    ("postgresql://alice:pa#ss@db.example.org/census", "pa#ss"),
    ("postgresql://alice:p@ss@db.example.org/census", "p@ss"),
    # libpq takes its password from the query string too
    ("postgresql://alice@db.example.org/census?password=hunter2", "hunter2"),
    ("postgresql://alice@db.example.org/census?sslpassword=hunter2", "hunter2"),
    ("postgresql://db.example.org/census?user=alice&pass%77ord=hunter2", "hunter2"),
    ("postgresql://alice@db.example.org/census?options=-c%20password%3Dhunter2", "hunter2"),
    ("mssql+pyodbc:///?odbc_connect=DRIVER%3DX%3BUID%3Dalice%3BPWD%3Dhunter2", "hunter2"),
])
def test_password_anywhere_in_a_url_is_refused_and_not_echoed(url, secret):
    with pytest.raises(ParameterError, match="holds") as err:
        parse_source(url, table="t")
    assert secret not in str(err.value)
    assert "DPGUI_DB_PASSWORD" in str(err.value)


def test_credentials_in_a_spark_url_are_refused():
    with pytest.raises(ParameterError, match="holds a password") as err:
        parse_source("s3a://AKIAEXAMPLE:wJalrXUtnFEMI@bucket/census.parquet", engine="spark")
    assert "wJalrXUtnFEMI" not in str(err.value)
    assert parse_source("s3a://bucket/census.parquet", engine="spark").location == "s3a://bucket/census.parquet"
    with pytest.raises(ParameterError, match="master URL holds") as err:
        parse_source("s3a://bucket/x", engine="spark", spark_master="k8s://https://admin:s3cr3t@k8s.example.org:6443")
    assert "s3cr3t" not in str(err.value)
    assert parse_source("x.parquet", engine="spark", spark_master="spark://head:7077").spark_master == "spark://head:7077"


def test_urls_without_a_secret_are_still_accepted():
    for url in ("postgresql://dpgui_test@/dpgui?host=/tmp/x&sslmode=require",
                "postgresql://alice@db.example.org:5432/census?application_name=x",
                "postgresql://alice@db.example.org/census@2024", "sqlite:///data/census.db"):
        assert parse_source(url, table="t").location == url


def test_a_server_that_dies_during_the_count_spends_nothing(tmp_path, monkeypatch, capsys):
    """The database stops (pg_ctl -m immediate) while the histogram query runs: exit 2, one line,
    nothing spent, no output file."""
    import json
    import threading

    from cli_helpers import run_cli
    from pg_server import PgServer, require_postgresql

    from dpgui.report.ledger import Ledger

    require_postgresql()
    with PgServer.start() as pg:
        pg.execute("CREATE TABLE slow_t (x float8)")
        pg.execute("INSERT INTO slow_t SELECT g FROM generate_series(1, 20) AS g")
        monkeypatch.setenv("DPGUI_DB_PASSWORD", pg.password)
        with Ledger() as ledger:
            ledger.set_cap("db", 10)
        # pg_sleep correlated with the row: 20 × 0.5 s (an uncorrelated one would run once)
        query = "SELECT x FROM slow_t CROSS JOIN LATERAL pg_sleep(0.5 + 0 * slow_t.x) AS w"

        def kill() -> None:
            pg._run("pg_ctl", "-D", str(pg.base / "data"), "-m", "immediate", "-w", "stop")

        timer = threading.Timer(1.5, kill)
        timer.start()
        try:
            code, out, err = run_cli(["release", "--source", pg.url, "--query", query, "--column", "x",
                                      "--lower", "0", "--upper", "20", "--bins", "4", "--epsilon", "1",
                                      "--dataset", "db", "--out", str(tmp_path / "out.csv")], capsys)
        finally:
            timer.join()
    assert code == 2 and err.count("\n") == 1, err
    assert pg.password not in err + out
    assert not (tmp_path / "out.csv").exists()
    code, out, _ = run_cli(["ledger", "show", "--json"], capsys)
    shown = json.loads(out)
    assert shown["releases"] == [] and shown["datasets"][0]["epsilon_spent"] == 0.0


def test_thousands_looking_numbers_do_not_claim_a_detected_decimal_point(tmp_path):
    """';'-separated incomes written 1.234 (German grouping: 1234) and nothing else: the decimal mark
    cannot be told from the head, so it is 'assumed', with the reason, not 'detected'."""
    from dpgui.data.csv_dialect import detect_dialect

    path = tmp_path / "incomes.csv"
    path.write_text("region;income\nA;1.234\nB;2.500\nC;12.750\nD;3.000\n", encoding="utf-8")
    found = detect_dialect(path)
    assert found.dialect.delimiter == ";" and found.dialect.decimal == "."
    assert not found.detected and "1.234" in found.reason and "thousands" in found.reason
    assert found.describe().startswith("assumed")
    # A leading zero is no thousands group: 0.125 is a decimal point.
    path.write_text("region;share\nA;0.125\nB;0.250\n", encoding="utf-8")
    assert detect_dialect(path).detected


@pytest.mark.parametrize("location", [
    "postgresql://alice:pa/ss@db/census", "postgresql://alice:p?ss@db/census",
    "postgresql://alice@db/census?password=x", "postgresql://alice@db/census?sslpassword=x",
    "postgresql://db/census?user=a&pass%77ord=x", "postgresql://alice@db/census?options=-c%20password%3Dx",
    "mssql+pyodbc:///?odbc_connect=DRIVER%3DX%3BPWD%3Dsecret",
])
def test_the_manifest_schema_refuses_every_password_parse_source_refuses(location):
    """The schema (what a verifier checks) is as strict as the program about passwords in a source URL."""
    import json

    import jsonschema

    from dpgui.report.bundle import SCHEMA_PATH

    with pytest.raises(ParameterError):
        parse_source(location, table="t")
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema["$defs"]["source"]["properties"]["location"])
    assert not validator.is_valid(location)
    for fine in ("postgresql://alice@db/census", "postgresql://dpgui_test@/dpgui?host=/tmp/x&sslmode=require",
                 "sqlite:///data/census@2024.db", "postgresql://alice@db/census?application_name=x",
                 "postgresql://alice@db/census?passfile=/home/alice/.pgpass"):
        assert validator.is_valid(fine), fine
        assert parse_source(fine, table="t").location == fine


def test_out_never_replaces_a_file_of_the_parquet_folder_it_reads(tmp_path, capsys):
    """--out part-1.parquet --force inside the folder read: refused (exit 2), nothing spent, the data intact."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq
    from cli_helpers import run_cli

    folder = tmp_path / "ds"
    folder.mkdir()
    for i in range(2):
        pq.write_table(pa.table({"x": [float(j) for j in range(50)]}), folder / f"part-{i}.parquet")
    before = (folder / "part-1.parquet").read_bytes()
    assert run_cli(["ledger", "cap", "d", "10"], capsys)[0] == 0
    code, _, err = run_cli(["release", "--source", str(folder), "--column", "x", "--lower", "0", "--upper", "50",
                            "--bins", "4", "--epsilon", "1", "--dataset", "d", "--out",
                            str(folder / "part-1.parquet"), "--force"], capsys)
    assert code == 2 and "inside the input folder" in err, err
    assert (folder / "part-1.parquet").read_bytes() == before
    code, out, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert json.loads(out)["releases"] == []


def test_a_local_spark_dataset_is_protected_too(tmp_path):
    from dpgui.cli.sources import _protected_paths
    from dpgui.report.files import check_writable

    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "part-0.parquet").write_bytes(b"PAR1")
    for location in (str(folder), f"file://{folder}"):
        protect = _protected_paths(parse_source(location, engine="spark"))
        with pytest.raises(DataError, match="inside the input folder"):
            check_writable(folder / "part-0.parquet", protect=protect, overwrite=True)
    assert _protected_paths(parse_source("hdfs://namenode/census", engine="spark")) == []


def test_sqlite_numbers_after_1000_nulls_are_counted_not_called_empty(tmp_path):
    """A column without declared type whose first 1,000 values are NULL: counted (the file path would
    count it too), not refused as "empty (null)"; a text value after them is refused with its count."""
    import sqlite3

    path = tmp_path / "late.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.executemany("INSERT INTO t VALUES (?)", [(None,)] * 1000 + [(float(i),) for i in range(10)])
    conn.execute("CREATE TABLE u (x)")
    conn.executemany("INSERT INTO u VALUES (?)", [(None,)] * 1000 + [("ten",)])
    conn.commit()
    conn.close()
    for kw in ({"table": "t"}, {"query": "SELECT x FROM t"}):
        with open_source(parse_source(f"sqlite:///{path}", **kw)) as src:
            hist = src.histogram("x", 0.0, 10.0, 2)
            assert hist.counts.tolist() == [5, 5] and hist.n_missing == 1000 and hist.n_rows == 1010
    with open_source(parse_source(f"sqlite:///{path}", table="u")) as src, \
            pytest.raises(DataError, match="not numbers"):
        src.histogram("x", 0.0, 10.0, 2)


def test_the_users_options_in_the_url_are_kept(pg_audit):
    """``?options=-csearch_path=census`` picks the schema: dpgui's own read-only option must not
    silently replace it (which counted public.people instead of census.people)."""
    pg_audit.execute("DROP SCHEMA IF EXISTS census CASCADE")
    pg_audit.execute("CREATE SCHEMA census")
    pg_audit.execute("DROP TABLE IF EXISTS public.people")
    pg_audit.execute("CREATE TABLE public.people (x float8)")
    pg_audit.execute("INSERT INTO public.people SELECT g FROM generate_series(1, 5) AS g")
    pg_audit.execute("CREATE TABLE census.people (x float8)")
    pg_audit.execute("INSERT INTO census.people VALUES (1), (2)")
    url = f"{pg_audit.url}&options=-csearch_path%3Dcensus"
    try:
        with open_source(parse_source(url, table="people")) as src:
            assert src.row_count() == 2
            with pytest.raises(DataError, match="read-only"):
                src._fetch("SELECT x FROM people FOR UPDATE")
        off = f"{pg_audit.url}&options=-cdefault_transaction_read_only%3Doff"
        with open_source(parse_source(off, table="audit_t")) as src:
            assert src._fetch("SHOW default_transaction_read_only")[1] == [("on",)]  # dpgui's comes last
    finally:
        pg_audit.execute("DROP TABLE public.people")
        pg_audit.execute("DROP SCHEMA census CASCADE")


def test_a_materialized_view_is_found_not_called_missing(pg_audit):
    pg_audit.execute("DROP MATERIALIZED VIEW IF EXISTS audit_mv")
    pg_audit.execute("CREATE MATERIALIZED VIEW audit_mv AS SELECT x FROM audit_t WHERE x <= 4")
    try:
        with open_source(parse_source(pg_audit.url, table="audit_mv")) as src:
            assert src.row_count() == 4
            assert src.histogram("x", 0.0, 8.0, 2).counts.tolist() == [3, 1]
    finally:
        pg_audit.execute("DROP MATERIALIZED VIEW audit_mv")


def test_dblink_cannot_write_through_a_second_connection(pg_audit):
    """dblink opens its own connection, outside dpgui's read-only transaction (dblink_connect +
    dblink_send_query deleted every row): every dblink function is refused by the check, also
    quoted, schema-qualified or inside SQL text run by query_to_xml."""
    pg_audit.execute("CREATE EXTENSION IF NOT EXISTS dblink")
    conninfo = f"host={pg_audit.socket_dir} dbname=dpgui user=dpgui_test password={pg_audit.password}"
    delete = (f"WITH c AS (SELECT dblink_connect('w', '{conninfo}') AS a), "
              "s AS (SELECT dblink_send_query('w', 'DELETE FROM audit_t') AS b FROM c) "
              "SELECT * FROM s, LATERAL dblink_get_result('w') AS g(status text)")
    queries = [delete, delete.replace("dblink_send_query(", '"dblink_send_query"('),
               delete.replace("dblink_send_query(", "public.dblink_send_query("),
               "SELECT query_to_xml('SELECT 1', true, true, '') AS x",
               'SELECT U&"\\0064blink_exec"(\'x\', \'DELETE FROM audit_t\') AS x']
    try:
        for query in queries:
            with pytest.raises(DataError, match="the query calls"), \
                    open_source(parse_source(pg_audit.url, query=query)) as src:
                src.preview(5)
            assert pg_audit.execute("SELECT count(*) FROM audit_t") == [(10,)], query
        for name in ("dblink_open", "dblink_fetch", "dblink_connect_u", "pg_try_advisory_lock",
                     "pg_advisory_lock_shared", "ts_stat"):
            with pytest.raises(DataError, match="the query calls"):
                check_read_only_query(f"SELECT {name}(1) AS v")
        # a column or a quoted name that merely looks like one is fine
        assert check_read_only_query('SELECT "dblink_connect", "update" FROM t')
    finally:
        pg_audit.execute("DROP EXTENSION IF EXISTS dblink")


def test_a_parquet_file_linked_twice_into_the_folder_is_refused_not_counted_twice(tmp_path):
    import os

    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "ds"
    (folder / "sub").mkdir(parents=True)
    pq.write_table(pa.table({"x": [1.0, 2.0]}), folder / "a.parquet")
    pq.write_table(pa.table({"x": [3.0]}), folder / "sub" / "b.parquet")
    os.symlink(folder, folder / "sub" / "back")  # a loop: not followed
    with open_source(parse_source(str(folder))) as src:
        assert src.row_count() == 3
    os.symlink(folder / "a.parquet", folder / "dup.parquet")
    with pytest.raises(DataError, match=r"same file as 'a\.parquet'.*counted twice"):
        open_source(parse_source(str(folder)))


@pytest.mark.parametrize("query", [
    "SELECT x FROM audit_t -- the incomes",
    "SELECT x FROM audit_t; -- the incomes",
    "SELECT x FROM audit_t; /* the incomes */",
])
def test_a_query_ending_in_a_comment_is_read(pg_audit, query):
    with open_source(parse_source(pg_audit.url, query=query)) as src:
        assert src.row_count() == 10
        assert src.histogram("x", 0.0, 10.0, 2).counts.tolist() == [4, 6]


def test_a_column_named_like_a_command_gets_the_quoting_fix():
    with pytest.raises(DataError) as err:
        check_read_only_query("SELECT cluster, income FROM survey")
    assert 'double quotes: "cluster"' in err.value.fix
    assert check_read_only_query('SELECT "cluster", income FROM survey')


def test_out_never_replaces_the_sqlite_file_named_with_a_tilde_or_escapes(tmp_path, monkeypatch, capsys):
    import sqlite3

    from cli_helpers import run_cli

    monkeypatch.setenv("HOME", str(tmp_path))
    for name, url in (("home.db", "sqlite:///~/home.db"), ("my data.db", f"sqlite:///{tmp_path}/my%20data.db")):
        path = tmp_path / name
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE t (x REAL)")
        conn.executemany("INSERT INTO t VALUES (?)", [(float(i),) for i in range(20)])
        conn.commit()
        conn.close()
        before = path.read_bytes()
        assert run_cli(["ledger", "cap", "d", "10"], capsys)[0] == 0
        code, _, err = run_cli(["release", "--source", url, "--table", "t", "--column", "x", "--lower", "0",
                                "--upper", "20", "--bins", "4", "--epsilon", "1", "--dataset", "d",
                                "--out", str(path), "--force"], capsys)
        assert code == 2 and "is the input file" in err, err
        assert path.read_bytes() == before
