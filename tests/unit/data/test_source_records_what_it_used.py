"""What a source records must be what it used."""

from __future__ import annotations

import pytest

from dpgui.data.source_spec import parse_source
from dpgui.errors import ParameterError


@pytest.mark.parametrize("location, kwargs", [
    ("sqlite:///census.db", {"table": "people"}),
    ("postgresql://alice@db.example.org/census", {"query": "SELECT 1 AS x"}),
    ("people.csv", {}),
    ("people.csv.gz", {}),
    ("people.parquet", {}),
    ("people.xlsx", {}),
])
def test_an_encoding_that_would_be_ignored_is_refused_not_recorded(location, kwargs):
    # Only pyreadstat (SAS/Stata/SPSS) and Spark's CSV reader use an encoding; anywhere else the
    # manifest would say "encoding: latin-1" about data read as UTF-8.
    with pytest.raises(ParameterError) as err:
        parse_source(location, encoding="latin-1", **kwargs)
    assert "--encoding" in err.value.fix


@pytest.mark.parametrize("location", ["people.dta", "people.sas7bdat", "people.xpt", "people.sav"])
def test_an_encoding_for_a_statistics_file_is_kept(location):
    assert parse_source(location, encoding="latin-1").public_record()["encoding"] == "latin-1"


def test_the_reports_name_a_spark_dataset_not_a_query_none(tmp_path):
    """The PDF's "Data source" line for ``--engine spark --source flights.parquet`` (no table, no query)."""
    from dpgui.report.bundle import source_text

    record = {**parse_source(str(tmp_path / "flights.csv"), engine="spark").public_record(),
              "dialect": {"delimiter": ";", "decimal": "."}, "engine": "Spark (local[2])"}
    words = source_text(record)
    assert "None" not in words and "query" not in words
    assert words == "the dataset flights.csv (semicolon-separated, decimal point); counted by Spark (local[2])"
    assert source_text({"kind": "spark", "location": "", "table": "t", "engine": "Spark (yarn)"}) == (
        "table t in the Spark catalogue; counted by Spark (yarn)")


def test_a_database_refuses_too_many_paths_without_sending_them_all(tmp_path):
    """A level with more leaves than the limit (an identifier) is refused after at most limit + 1
    groups have come back, as Spark does; and a limit that is not a positive integer is refused."""
    import sqlite3

    from dpgui.data.source import open_source
    from dpgui.errors import DataError

    db = tmp_path / "ids.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (region TEXT, person INTEGER)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [(f"r{i % 3}", i) for i in range(50)])
    with open_source(parse_source(f"sqlite:///{db}", table="t")) as source:
        sent: list[str] = []
        fetch = source._fetch

        def counting_fetch(sql, should_cancel=None):
            names, rows = fetch(sql, should_cancel)
            sent.append(f"{len(rows)}")
            return names, rows

        source._fetch = counting_fetch
        with pytest.raises(DataError, match=r"level column 'person' has more than 10 nodes"):
            source.path_counts(["region", "person"], max_nodes_per_level=10)
        assert sent == ["11"]
        with pytest.raises(ParameterError, match="max_nodes_per_level 0 is not a positive integer"):
            source.path_counts(["region", "person"], max_nodes_per_level=0)
        assert source.path_counts(["region", "person"], max_nodes_per_level=50).hierarchy is not None


def test_a_spec_built_around_parse_source_cannot_carry_a_password_into_messages(pg_server, monkeypatch):
    """SourceSpec(...) made directly (not by parse_source) with "user:pass/word@": SQLAlchemy reads the
    password up to the '@', urllib does not see it; the source refuses it before connecting, without
    echoing it (it would otherwise appear in the 'refused the password … at URL' message)."""
    from dpgui.data.source import open_source
    from dpgui.data.source_spec import SourceSpec

    monkeypatch.delenv("DPGUI_DB_PASSWORD", raising=False)
    url = pg_server.url.replace("dpgui_test@", "dpgui_test:wr/ong-secret@")
    assert url != pg_server.url
    with pytest.raises(ParameterError) as err:
        open_source(SourceSpec("database", url, table="t"))
    assert "wr/ong" not in str(err.value) and "ong-secret" not in str(err.value)


def test_a_bundle_is_never_written_into_the_parquet_folder_it_reads(tmp_path, capsys):
    """--bundle inside the folder read (with or without --name): refused (exit 2), nothing spent, nothing
    written there (a .csv/.pdf/.json among the parts would change what the folder is)."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq
    from cli_helpers import run_cli

    folder = tmp_path / "ds"
    (folder / "sub").mkdir(parents=True)
    pq.write_table(pa.table({"x": [float(j) for j in range(50)]}), folder / "part-0.parquet")
    before = sorted(p.name for p in folder.rglob("*"))
    assert run_cli(["ledger", "cap", "d", "10"], capsys)[0] == 0
    for bundle, name in ((folder, ["--name", "r1"]), (folder / "sub", [])):
        code, _, err = run_cli(["release", "--source", str(folder), "--column", "x", "--lower", "0", "--upper",
                                "50", "--bins", "4", "--epsilon", "1", "--dataset", "d", "--bundle", str(bundle),
                                "--key", str(tmp_path / "no.key"), *name], capsys)
        assert code == 2 and "inside the input folder" in err, err
    assert sorted(p.name for p in folder.rglob("*")) == before
    code, out, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert json.loads(out)["releases"] == []


@pytest.mark.parametrize("location, kwargs", [("flights.parquet", {}), ("", {"table": "flights"})])
def test_spark_refuses_an_encoding_it_would_not_use(location, kwargs):
    with pytest.raises(ParameterError) as err:
        parse_source(location, engine="spark", encoding="latin-1", **kwargs)
    assert "--encoding" in err.value.fix
    assert parse_source("flights.csv", engine="spark", encoding="latin-1").public_record()["encoding"] == "latin-1"


def test_every_source_reads_none_as_the_default_node_limit_and_refuses_zero(tmp_path) -> None:
    """DataSource.path_counts: None is the default limit; 0 is a ParameterError for files as for SQL."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dpgui.data.source import open_source
    from dpgui.data.source_spec import parse_source
    from dpgui.errors import ParameterError

    path = tmp_path / "levels.parquet"
    pq.write_table(pa.table({"a": ["x", "x", "y"], "b": ["p", "q", "r"]}), path)
    with open_source(parse_source(str(path))) as source:
        assert source.path_counts(["a", "b"]).rows == 3
        with pytest.raises(ParameterError, match="max_nodes_per_level"):
            source.path_counts(["a", "b"], max_nodes_per_level=0)
