"""A query's row count is not public because its table's is.

``--query "SELECT wage FROM wages WHERE region = 'south'"`` selects a group; under the neighbour model
``change`` a release publishes N exactly, the size of that group. For a query the default model is
``addremove`` (N private); ``change`` needs the statement ``--n-public``, which the manifest and the
ledger record. Checked for the CDF (release, simulate) and the hierarchy (plan, release), and the last
check before any spend (:func:`dpgui.report.publish.check_row_count_public`).
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import run_cli
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.errors import ParameterError
from dpgui.report.keystore import create_key
from dpgui.report.ledger import Ledger
from dpgui.report.cdf.publish import spend_and_release

PASSPHRASE = "query rows passphrase"
SOUTH = 8_761  # the group's size: the confidential number a default release must not publish
QUERY = "SELECT wage, region, district FROM wages WHERE region = 'south'"
RELEASE = ["--column", "wage", "--lower", "0", "--upper", "5000", "--bins", "50", "--epsilon", "1"]


@pytest.fixture
def world(tmp_path) -> Path:
    """``wages.db``: 8,761 wages in the south and 5,000 in the north (a district each); a signing key; a
    dataset ``wages`` with a budget."""
    folder = tmp_path / "work"
    folder.mkdir()
    rng = np.random.default_rng(28)
    with sqlite3.connect(folder / "wages.db") as conn:
        conn.execute("CREATE TABLE wages (wage REAL, region TEXT, district TEXT)")
        conn.executemany("INSERT INTO wages VALUES (?, ?, ?)",
                         [(float(w), region, f"{region}-{i % 7}")
                          for region, n in (("south", SOUTH), ("north", 5_000))
                          for i, w in enumerate(rng.uniform(0, 5000, n))])
    conn.close()
    (folder / "pass.txt").write_text(PASSPHRASE + "\n", encoding="utf-8")
    create_key("officer", PASSPHRASE, folder)
    with Ledger() as ledger:
        ledger.set_cap("wages", 100.0)
    return folder


@pytest.fixture
def fixed_noise(monkeypatch):
    """The operating system's noise replaced by a fixed seed (still marked secure, so that the release signs):
    the published values are then known, and the check below cannot pass or fail by chance."""
    stream = np.random.default_rng(2028)
    monkeypatch.setattr(SecureRandom, "uint64", lambda self, n: stream.integers(0, 2**64, int(n), dtype=np.uint64))


def _url(world: Path) -> str:
    return f"sqlite:///{world / 'wages.db'}"


def _bundle(world: Path, name: str) -> list[str]:
    return ["--bundle", str(world), "--key", str(world / "officer.key"), "--passphrase-file", str(world / "pass.txt"),
            "--name", name]


def _pdf_text(path: Path) -> str:
    tool = shutil.which("pdftotext")
    if tool is None:
        pytest.fail("pdftotext (poppler-utils) is not installed: run make system-deps")
    return " ".join(subprocess.run([tool, "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True,
                                   check=True).stdout.split())


def _integers(text: str) -> set[int]:
    """Every whole number written in ``text`` (thousands separators and spaces inside numbers removed)."""
    return {int(re.sub(r"[,\u202f\u00a0 ]", "", token)) for token in re.findall(r"\d{1,3}(?:[,\u202f\u00a0]\d{3})+|\d+", text)}


def _ledger_texts(capsys) -> str:
    code, out, err = run_cli(["ledger", "show", "--json"], capsys)
    assert code == 0, err
    params = []
    with Ledger() as ledger:
        for entry in ledger.releases():
            output = ledger.release_output(entry.release_id)
            params.append(output.params if output is not None else None)
    return out + json.dumps(params)


@pytest.mark.slow
def test_a_query_release_under_the_default_publishes_no_exact_row_count(world, capsys, fixed_noise):
    code, out, err = run_cli(["release", _url(world), "--query", QUERY, *RELEASE, "--dataset", "wages", "--json",
                              *_bundle(world, "south")], capsys)
    assert code == 0, err
    assert "note: the data is a query" in err and "--n-public" in err  # the window of the CLI: said, not silent
    summary = json.loads(out)
    manifest_text = (world / "south.manifest.json").read_text(encoding="utf-8")
    manifest = json.loads(manifest_text)
    assert manifest["neighbours"] == summary["neighbours"] == "addremove"
    assert manifest["total_records"]["public"] is False and manifest["total_records"]["value"] is None
    assert manifest["source"]["row_count_public"] is False and summary["n_public"] is False
    pdf = _pdf_text(world / "south.pdf")
    assert "kept private" in pdf
    for where, text in (("manifest", manifest_text), ("--json", out), ("PDF", pdf), ("ledger", _ledger_texts(capsys)),
                        ("CSV", (world / "south.csv").read_text(encoding="utf-8"))):
        assert SOUTH not in _integers(text), f"the {where} publishes the query's exact row count {SOUTH}"
    assert run_cli(["verify", str(world / "south.manifest.json"), "--pubkey", str(world / "officer.pub")],
                   capsys)[0] == 0


@pytest.mark.slow
def test_change_on_a_query_without_the_statement_is_refused_before_anything_is_read(world, capsys):
    missing = f"sqlite:///{world / 'no-such.db'}"  # not even opened: the refusal comes first
    for command in (["release", missing, "--query", QUERY, *RELEASE, "--dataset", "wages", "--out",
                     str(world / "out.csv")],
                    ["simulate", "--source", missing, "--query", QUERY, *RELEASE, "--trials", "3"],
                    ["hierarchy", "plan", "--source", missing, "--query", QUERY, "--levels", "region,district",
                     "--epsilon", "1"],
                    ["hierarchy", "release", "--source", missing, "--query", QUERY, "--levels", "region,district",
                     "--epsilon", "1", "--categories-public", "--dataset", "wages", "--out", str(world / "h.csv")]):
        code, _, err = run_cli([*command, "--neighbours", "change"], capsys)
        assert code == 2 and err.count("\n") == 1, (command, err)
        assert "exact number of rows the query returns" in err and "--n-public" in err and "no-such" not in err
    assert not (world / "out.csv").exists() and not (world / "h.csv").exists()
    with Ledger() as ledger:
        assert ledger.releases() == [] and ledger.totals("wages").epsilon_spent == 0


@pytest.mark.slow
def test_the_statement_allows_change_and_is_recorded_in_manifest_pdf_and_ledger(world, capsys):
    code, out, err = run_cli(["release", _url(world), "--query", QUERY, *RELEASE, "--dataset", "wages", "--json",
                              "--neighbours", "change", "--n-public", *_bundle(world, "stated")], capsys)
    assert code == 0, err
    assert "note:" not in err
    manifest = json.loads((world / "stated.manifest.json").read_text(encoding="utf-8"))
    assert manifest["neighbours"] == "change" and manifest["total_records"]["value"] == SOUTH
    assert manifest["source"]["row_count_public"] is True
    assert "stated public by the publisher" in _pdf_text(world / "stated.pdf")
    with Ledger() as ledger:
        (entry,) = ledger.releases()
        assert entry.description["source"]["row_count_public"] is True
        assert ledger.release_output(entry.release_id).params["source"]["row_count_public"] is True
    # --n-public alone makes change the default again (the statement is what the default depends on)
    code, out, err = run_cli(["release", _url(world), "--query", QUERY, *RELEASE, "--dataset", "wages", "--json",
                              "--n-public", "--out", str(world / "alone.csv")], capsys)
    assert code == 0 and json.loads(out)["neighbours"] == "change", err


def test_a_table_keeps_change_as_its_default(world, capsys):
    code, out, err = run_cli(["release", _url(world), "--table", "wages", *RELEASE, "--dataset", "wages", "--json",
                              "--out", str(world / "table.csv")], capsys)
    assert code == 0, err
    assert json.loads(out)["neighbours"] == "change" and json.loads(out)["n_released"] == SOUTH + 5_000
    assert "note:" not in err


@pytest.mark.slow
@pytest.mark.parametrize(("extra", "words"), [
    (["--table", "wages", "--n-public"], "no query was given"),
    (["--query", QUERY, "--n-public", "--neighbours", "addremove"], "keeps it private"),
])
def test_a_statement_that_says_nothing_is_refused_in_one_line(world, capsys, extra, words):
    code, _, err = run_cli(["release", _url(world), *extra, *RELEASE, "--dataset", "wages", "--out",
                            str(world / "x.csv")], capsys)
    assert code == 2 and err.count("\n") == 1 and words in err, err


def test_n_public_without_a_source_is_refused(world, capsys):
    code, _, err = run_cli(["simulate", "--synthetic", "uniform", "--n", "100", "--bins", "16", "--epsilon", "1",
                            "--trials", "2", "--n-public"], capsys)
    assert code == 2 and "--n-public" in err and err.count("\n") == 1, err


@pytest.mark.slow
def test_simulate_and_the_hierarchy_take_addremove_for_a_query(world, capsys):
    code, out, err = run_cli(["simulate", "--source", _url(world), "--query", QUERY, *RELEASE, "--trials", "3",
                              "--seed", "1", "--json"], capsys)
    assert code == 0, err
    simulated = json.loads(out)
    assert simulated["plan"]["neighbours"] == "addremove" and simulated["n"] == "N is private (addremove): not shown"
    code, out, err = run_cli(["hierarchy", "release", "--source", _url(world), "--query", QUERY, "--levels",
                              "region,district", "--epsilon", "1", "--categories-public", "--dataset", "wages",
                              "--json", *_bundle(world, "tree")], capsys)
    assert code == 0, err
    manifest = json.loads((world / "tree.manifest.json").read_text(encoding="utf-8"))
    assert manifest["neighbours"] == "addremove" and manifest["total_records"]["value"] is None
    assert manifest["source"]["row_count_public"] is False


def test_the_last_check_refuses_publishing_a_private_row_count_before_the_spend():
    record = {"kind": "database", "location": "sqlite:///wages.db", "query": QUERY, "row_count_public": False,
              "engine": "the database (SQLite)"}
    with Ledger() as ledger:
        ledger.set_cap("wages", 10.0)
        with pytest.raises(ParameterError, match="not stated public"):
            spend_and_release(ledger, "wages", "wage", "auto", np.ones(16, dtype=np.int64),
                              auto_plan(16, PrivacySpec(1.0)), SecureRandom(), 0.0, 1.0, "l2", n_missing=0,
                              source_record=record)
        assert ledger.releases() == []
        spend_and_release(ledger, "wages", "wage", "auto", np.ones(16, dtype=np.int64),
                          auto_plan(16, PrivacySpec(1.0, "addremove")), SecureRandom(), 0.0, 1.0, "l2", n_missing=0,
                          source_record=record)
        assert len(ledger.releases()) == 1
