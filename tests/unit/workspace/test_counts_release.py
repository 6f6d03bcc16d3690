"""The counts of one column through the release flow (dpgui.workspace.counts): what two neighbouring datasets
publish differs only where the noise is; the charge, the noise scale and the stated margin equal independent
closed forms; a database counts like a file (the data layer's one-level path counts); a value not in the public
list, or a missing value, is refused before anything is spent; the project section reads back what it wrote."""

from __future__ import annotations

import csv
import json
import math
import sqlite3
from contextlib import AbstractContextManager
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from dpgui.core.noise import SecureRandom
from dpgui.data.source import DataSource, open_source
from dpgui.data.source_spec import SourceSpec, parse_source
from dpgui.errors import DataError, ParameterError
from dpgui.pdf.counts import render_counts_pdf
from dpgui.report.counts.project import COUNTS_SECTION, CountsSettings, ProjectCountsRelease
from dpgui.report.keystore import create_key, load_public_key, load_secret_key
from dpgui.report.ledger import Ledger
from dpgui.report.project_sections import ProjectSection
from dpgui.vocabulary import Neighbours
from dpgui.workspace.counts import counts_plan, parse_categories, release_counts_through
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.statistics import verify
from dpgui.workspace.statistics.counts import COUNTS, CountsSpend

PASSPHRASE = "counts test passphrase"
STATES = ["OR"] * 6 + ["WA"] * 3 + ["ID"]
#: fields of a manifest that the noise or the moment decide (the released values' files and the ledger id)
NOISE_FIELDS = ("release_id", "created_utc")


def _csv(path: Path, states: list[str]) -> Path:
    path.write_text("state,age\n" + "".join(f"{s},{30 + i}\n" for i, s in enumerate(states)), encoding="utf-8")
    return path


def _opener(spec: SourceSpec):
    def open_data() -> AbstractContextManager[DataSource]:
        return open_source(spec)
    return open_data


def _release_and_sign(home: Path, monkeypatch, data: Path, neighbours: Neighbours, key_dir: Path) -> Path:
    """One counts release of ``data`` in a ledger of its own, signed; returns the manifest's path."""
    monkeypatch.setenv("DPGUI_HOME", str(home))
    (home / "out").mkdir(parents=True)
    plan = counts_plan(("OR", "WA", "ID", "CA"), 0.7, neighbours)
    spend = CountsSpend("state", plan)
    secret = load_secret_key(key_dir / "officer.key", PASSPHRASE)
    with Ledger() as ledger:
        ledger.set_cap("people", 5.0)
    with ReleaseFlow.open("people") as flow:
        done = release_counts_through(flow, _opener(SourceSpec("file", str(data))), spend, SecureRandom)
        pdf = render_counts_pdf(done.release, done.info, secret.public_key.key_id_hex)
        paths = flow.sign(COUNTS, home / "out", "bundle", done.release, done.info, pdf, secret)
    return paths.manifest


@pytest.mark.parametrize("neighbours", list(Neighbours))
def test_neighbouring_datasets_publish_the_same_fields_but_the_noisy_counts(tmp_path: Path, monkeypatch,
                                                                             neighbours: Neighbours) -> None:
    """D and D' differ in one record (changed from OR to WA under change; removed under add/remove): every
    published field but the noisy counts (and the ids and times of the release) is the same, so nothing
    published was decided by the data."""
    keys = create_key("officer", PASSPHRASE, tmp_path / "keys")
    first = _csv(tmp_path / "d.csv", STATES)
    neighbour = STATES[1:] + (["WA"] if neighbours == Neighbours.CHANGE else [])
    second = _csv(tmp_path / "d2.csv", neighbour)
    manifests = [_release_and_sign(tmp_path / name, monkeypatch, data, neighbours, tmp_path / "keys")
                 for name, data in (("home1", first), ("home2", second))]
    documents = []
    for manifest in manifests:
        result = verify(manifest, load_public_key(keys.public_path))
        assert result.ok, result.failure
        document = json.loads(manifest.read_text(encoding="utf-8"))
        for name in NOISE_FIELDS:
            document.pop(name)
        for entry in document["files"].values():
            entry.pop("sha256")  # the files hold the noisy counts
        with open(manifest.with_name("bundle.csv"), newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        documents.append((document, [(r["category"], r["std_error"]) for r in rows], list(rows[0])))
    assert documents[0] == documents[1]
    document = documents[0][0]
    assert document["categories"] == ["OR", "WA", "ID", "CA"] and "n" not in document and "rows" not in document


@pytest.mark.parametrize(("epsilon", "neighbours", "records"), [(0.7, Neighbours.CHANGE, 1), (1.0, Neighbours.ADDREMOVE, 1),
                                                                 (0.25, Neighbours.CHANGE, 3), (2.0, Neighbours.ADDREMOVE, 2)])
def test_charge_scale_and_margin_equal_closed_forms(epsilon: float, neighbours: Neighbours, records: int) -> None:
    plan = counts_plan(("a", "b", "c"), epsilon, neighbours, records)
    l1 = (2 if neighbours == Neighbours.CHANGE else 1) * records  # one person's records moved or removed
    assert plan.sensitivity == l1
    # the scale is Δ₁/ε rounded up (to a dyadic rational), so the release costs at most ε (exp(Δ₁/t) ≤ exp(ε))
    assert Fraction(l1) / plan.scale <= Fraction(epsilon) and float(plan.scale) == pytest.approx(l1 / epsilon, rel=1e-4)
    # the ledger's charge: ε, δ = 0 and ρ = ε²/2 (pure ε-DP as zCDP)
    assert plan.ledger_charge() == (epsilon, 0.0, pytest.approx(epsilon ** 2 / 2))
    assert COUNTS.charge(plan).epsilon == epsilon and COUNTS.charge(plan).delta == 0.0
    # the margin and the standard error by direct sums of the discrete Laplace pmf ∝ q^|k|, q = exp(−1/t)
    q = math.exp(-1.0 / float(plan.scale))
    pmf = lambda k: (1 - q) / (1 + q) * q ** abs(k)  # noqa: E731
    covered, margin = pmf(0), 0
    while covered < 0.95:
        margin += 1
        covered += 2 * pmf(margin)
    assert plan.margin == margin
    variance = sum(k * k * pmf(k) for k in range(-4000, 4001))
    assert plan.std_error == pytest.approx(math.sqrt(variance), rel=1e-6)


def test_a_database_counts_as_a_file_does(tmp_path: Path) -> None:
    """The counting is the data layer's one-level path counts: a SQLite table gives the file's counts."""
    database = tmp_path / "people.db"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE people (state TEXT, age INTEGER)")
        connection.executemany("INSERT INTO people VALUES (?, ?)", [(s, 30) for s in STATES])
    spend = CountsSpend("state", counts_plan(("ID", "OR", "WA", "CA"), 1.0, Neighbours.CHANGE))
    with open_source(parse_source(f"sqlite:///{database}", table="people")) as source:
        from_database = COUNTS.count(source, spend)
    with open_source(SourceSpec("file", str(_csv(tmp_path / "people.csv", STATES)))) as source:
        from_file = COUNTS.count(source, spend)
    assert from_database.tolist() == from_file.tolist() == [1, 6, 3, 0]


@pytest.fixture(scope="module")
def spark():
    """A local[2] Spark session for the module (a Spark source opened inside reuses it)."""
    from dpgui.data import spark_source

    with spark_source.spark_session("local[2]") as session:
        yield session


def test_spark_counts_as_a_file_does(spark, tmp_path: Path) -> None:
    """Spark counts the column with one groupBy (the data layer's one-level path counts): the file's counts."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = tmp_path / "people.parquet"
    pq.write_table(pa.table({"state": STATES, "age": list(range(len(STATES)))}), data)
    spend = CountsSpend("state", counts_plan(("WA", "ID", "OR", "CA"), 1.0, Neighbours.CHANGE))
    with open_source(parse_source(str(data), engine="spark")) as source:
        from_spark = COUNTS.count(source, spend)
    with open_source(SourceSpec("file", str(data))) as source:
        from_file = COUNTS.count(source, spend)
    assert from_spark.tolist() == from_file.tolist() == [3, 1, 6, 0]


@pytest.mark.parametrize(("states", "words"), [(STATES + ["NV"], "not among the stated categories"),
                                               (STATES + [""], "missing or empty value")])
def test_a_value_not_stated_or_missing_is_refused_before_the_spend(tmp_path: Path, states: list[str],
                                                                    words: str) -> None:
    data = _csv(tmp_path / "people.csv", states)
    spend = CountsSpend("state", counts_plan(("OR", "WA", "ID"), 1.0, Neighbours.CHANGE))
    with Ledger() as ledger:
        ledger.set_cap("people", 5.0)
    with ReleaseFlow.open("people") as flow, pytest.raises(DataError, match=words) as err:
        release_counts_through(flow, _opener(SourceSpec("file", str(data))), spend, SecureRandom)
    assert "NV" not in str(err.value)  # a value of the data is never quoted
    with Ledger() as ledger:
        assert ledger.releases() == [] and ledger.totals("people").epsilon_spent == 0


def test_the_typed_list_is_parsed_and_checked() -> None:
    assert parse_categories(" North \n\nSouth\n") == ("North", "South")
    assert parse_categories("North, South ,East") == ("North", "South", "East")
    with pytest.raises(ParameterError, match="'North' is listed twice"):
        parse_categories("North\nSouth\nNorth")
    with pytest.raises(ParameterError, match="no category"):
        counts_plan(parse_categories("  "), 1.0, Neighbours.CHANGE)


def test_the_project_section_reads_back_what_it_wrote(tmp_path: Path) -> None:
    plan = counts_plan(("OR", "WA"), 0.5, Neighbours.ADDREMOVE, 2)
    from dpgui.core.counts import CountsRelease
    from dpgui.report.counts.bundle import CountsReleaseInfo
    from datetime import datetime, timezone

    release = CountsRelease(plan, np.array([7, -1], dtype=np.int64), True)
    info = CountsReleaseInfo("people", "state", "a" * 32, datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc), True,
                             {"kind": "file", "format": "csv", "engine": "local"})
    record = ProjectCountsRelease.from_release(release, info)
    settings = CountsSettings("state", ("OR", "WA"), "/lists/states.txt", 0.5, Neighbours.ADDREMOVE, 2)
    document = json.loads(json.dumps(COUNTS_SECTION.to_json(ProjectSection(settings, (record,)), list)))
    part = COUNTS_SECTION.read(document, "p")
    assert (part.settings, part.releases) == (settings, (record,))
    restored, restored_info = COUNTS.from_record(record, "people")
    assert restored.counts.tolist() == [7, -1] and restored.plan == plan and not restored.secure
    assert restored_info.release_id == info.release_id and restored_info.created_utc == info.created_utc
    empty = COUNTS_SECTION.read({}, "p")  # a project without the section
    assert (empty.settings, empty.releases) == (None, ())
    document["counts_releases"][0]["counts"] = [7]
    with pytest.raises(DataError, match="counts"):
        COUNTS_SECTION.read(document, "p")


def test_one_stated_category_is_a_release_whose_bundle_verifies(tmp_path: Path, monkeypatch) -> None:
    """The manifest's schema takes what a plan takes (checked at signing, after the spend: a plan it refused
    would spend for nothing)."""
    keys = create_key("officer", PASSPHRASE, tmp_path / "keys")
    data = _csv(tmp_path / "d.csv", ["OR"] * 4)
    home = tmp_path / "home"
    monkeypatch.setenv("DPGUI_HOME", str(home))
    (home / "out").mkdir(parents=True)
    spend = CountsSpend("state", counts_plan(("OR",), 1.0, Neighbours.ADDREMOVE))
    with Ledger() as ledger:
        ledger.set_cap("people", 5.0)
    secret = load_secret_key(keys.secret_path, PASSPHRASE)
    with ReleaseFlow.open("people") as flow:
        done = release_counts_through(flow, _opener(SourceSpec("file", str(data))), spend, SecureRandom)
        paths = flow.sign(COUNTS, home / "out", "one", done.release, done.info,
                          render_counts_pdf(done.release, done.info, secret.public_key.key_id_hex), secret)
    assert verify(paths.manifest, load_public_key(keys.public_path)).ok
