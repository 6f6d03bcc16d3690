"""Nothing published depends on the confidential values except through the noise: two datasets that
differ in one record, released through the command line with the same public parameters, publish the same
bytes everywhere but in the noisy counts, the ids, the times and the hashes of files that hold noisy counts.

Two kinds of neighbours (:data:`NEIGHBOURS`), each released under its model: under ``change`` one record
moves from the category B > 3 to B > x (so the level column ``code`` holds only numbers in one, a text in
the other) and its wage changes from 1500 to 1500.5 (one salary with cents: written 1500,5 in a
decimal-comma file); under ``addremove`` the second dataset has one record more, in B > x, paid 1500.5.
Each is written into every source of :data:`SOURCES` and released with every statistic of
:data:`STATISTICS` (a CDF ``release``, one with everything the officer may state for it — whole numbers,
a focus, missing values imputed under change —, a ``hierarchy release`` with a public prior, and a
``counts release`` of one column with a public list of its categories), signed,
in its own dpgui home (ledger) and folder. Compared (:func:`compare`), after the folder's path is replaced
by a placeholder:

* the exit codes; when both released:
* every field of the two signed manifests, except the ids, times, the hashes of the CSV and PDF (they hold
  noisy counts) and the fields each statistic lists as noisy (:class:`Statistic`);
* the ``--json`` outputs (the same exceptions) and stderr, as they are;
* the PDFs' text (``pdftotext -raw``: in the order it is drawn, so that where a noisy number puts a label
  changes nothing): every word in order, digits masked (noisy counts and intervals, times and ids; tokens
  of numbers only — table cells, chart ticks — are noisy, and lines wrap where the numbers' widths put
  them);
* the CSVs: the header and every column but the noisy ones;
* the ledgers' public record (``ledger show --json``), except ids and times;
* when both were refused: that nothing was spent and nothing written, on both sides (a refusal reaches
  only the officer; its message may name what the data suggest).

To add a source, a statistic or a kind of neighbours, add a row to :data:`SOURCES`, :data:`STATISTICS` or
:data:`NEIGHBOURS`; every combination is a test. The query source is released under ``addremove`` (under
``change`` a query's row count would be published as the public N: docs/privacy-model.md "Neighbours and what is
public").
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
import subprocess
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dpgui.report.keystore import create_key
from dpgui.report.ledger import Ledger

from cli_helpers import run_cli

PASSPHRASE = "a long test passphrase"
DATASET = "people"
COLUMNS = ("region", "code", "wage", "note")
Row = tuple[str, str, float, str]


def _records() -> list[Row]:
    """60 records over the categories A > 1, A > 2, B > 3, with whole-number wages (record 2 paid 1500)."""
    paths = [("A", "1"), ("A", "2"), ("B", "3")]
    return [(*paths[i % 3], float(1000 + 37 * i) if i != 2 else 1500.0, f"n{i}") for i in range(60)]


def neighbours() -> tuple[list[Row], list[Row]]:
    """Under change: :func:`_records`, and the same with record 2 moved from B > 3 to B > x and paid 1500.5
    instead of 1500."""
    rows = _records()
    other = list(rows)
    other[2] = ("B", "x", 1500.5, "n2")
    return rows, other


def one_more() -> tuple[list[Row], list[Row]]:
    """Under add/remove: :func:`_records`, and the same with one record more, in B > x, paid 1500.5."""
    rows = _records()
    return rows, [*rows, ("B", "x", 1500.5, "n60")]


@dataclass(frozen=True)
class Neighbours:
    """Two datasets that differ in one record, and the options of the neighbour model they are released under."""

    pair: Callable[[], tuple[list[Row], list[Row]]]
    options: tuple[str, ...]
    model: str


NEIGHBOURS: dict[str, Neighbours] = {
    "one record changed": Neighbours(neighbours, (), "change"),
    "one record added": Neighbours(one_more, ("--neighbours", "addremove"), "addremove"),
}


#: A public prior over the categories of both neighbours; its counts are not the data's (a prior holding the data's
#: count on every path of the data is the data, and refused: dpgui.data.hierarchy.check_prior_is_not_the_data).
PRIOR = "region,code,count\nA,1,25\nA,2,15\nB,3,20\nB,x,20\n"


def _number(value: float, decimal: str = ".") -> str:
    """A wage as a person writes it: 1500 for a whole number, 1500.5 (or 1500,5) otherwise."""
    text = str(int(value)) if value == int(value) else repr(value)
    return text.replace(".", decimal)


def _write_csv(path: Path, rows: list[Row], delimiter: str = ",", decimal: str = ".") -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows((region, code, _number(wage, decimal), note) for region, code, wage, note in rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def _write_xlsx(path: Path, rows: list[Row]) -> Path:
    """Numbers as numbers (code 1, 2, 3 as integers; 'x' as text), as Excel stores them."""
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(COLUMNS)
    for region, code, wage, note in rows:
        sheet.append([region, int(code) if code.isdigit() else code, int(wage) if wage == int(wage) else wage, note])
    book.save(path)
    return path


def _typed_frame(rows: list[Row]) -> Any:
    """The records as a typed file holds them: text columns (``code`` included) and a float column."""
    import pandas as pd

    return pd.DataFrame({name: [row[j] for row in rows] for j, name in enumerate(COLUMNS)})


def _write_parquet(path: Path, rows: list[Row]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pandas(_typed_frame(rows), preserve_index=False), path)
    return path


def _write_hive_folder(path: Path, rows: list[Row]) -> Path:
    """A folder of Parquet files partitioned by region and code (``region=B/code=x/…``): the categories are
    the folders' names, and nothing declares their type."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    ds.write_dataset(pa.Table.from_pandas(_typed_frame(rows), preserve_index=False), path, format="parquet",
                     partitioning=["region", "code"], partitioning_flavor="hive")
    return path


def _write_stat_file(path: Path, rows: list[Row]) -> Path:
    """A Stata (.dta) or SPSS (.sav) file, by the name's extension."""
    import pyreadstat

    write = pyreadstat.write_dta if path.suffix == ".dta" else pyreadstat.write_sav
    write(_typed_frame(rows), str(path))
    return path


def _write_sqlite(path: Path, rows: list[Row]) -> Path:
    """The table ``people``; ``code`` without a declared type (SQLite lets a column hold numbers and text),
    integers where the code is a number."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE people (region TEXT, code, wage REAL, note TEXT)")
        conn.executemany("INSERT INTO people VALUES (?, ?, ?, ?)",
                         [(r, int(c) if c.isdigit() else c, w, n) for r, c, w, n in rows])
    conn.close()
    return path


@dataclass(frozen=True)
class Source:
    """How one neighbour is written into ``folder`` and given to the command line (the source options)."""

    write: Callable[[Path, list[Row]], list[str]]
    #: "release": both neighbours must be released; "refuse": both must be refused, nothing spent
    expect: str = "release"


SOURCES: dict[str, Source] = {
    "csv": Source(lambda folder, rows: [str(_write_csv(folder / "data.csv", rows))]),
    "excel": Source(lambda folder, rows: [str(_write_xlsx(folder / "data.xlsx", rows))]),
    "semicolon decimal-comma csv": Source(lambda folder, rows: [
        str(_write_csv(folder / "semi.csv", rows, ";", ",")), "--delimiter", "semicolon", "--decimal", ","]),
    # Its dialect not stated: the head suggests ';' with a decimal point in one neighbour and a decimal
    # comma in the other (one salary with cents). Neither may be read as the data suggest: both refused.
    "semicolon csv, dialect not stated": Source(
        lambda folder, rows: [str(_write_csv(folder / "semi.csv", rows, ";", ","))], expect="refuse"),
    "parquet": Source(lambda folder, rows: [str(_write_parquet(folder / "data.parquet", rows))]),
    "parquet folder (hive partitions)": Source(lambda folder, rows: [str(_write_hive_folder(folder / "data", rows))]),
    "stata": Source(lambda folder, rows: [str(_write_stat_file(folder / "data.dta", rows))]),
    "spss": Source(lambda folder, rows: [str(_write_stat_file(folder / "data.sav", rows))]),
    "sqlite table": Source(lambda folder, rows: [
        "--source", f"sqlite:///{_write_sqlite(folder / 'data.db', rows)}", "--table", "people"]),
    "sqlite query": Source(lambda folder, rows: [
        "--source", f"sqlite:///{_write_sqlite(folder / 'data.db', rows)}",
        "--query", "SELECT region, code, wage FROM people", "--neighbours", "addremove"]),
}

@dataclass(frozen=True)
class Statistic:
    """The command, its options after the source's ("{prior}": the public prior file's path), the options
    it takes under change only, and what holds noise: JSON keys (anywhere in the manifest and the --json
    output) and CSV columns."""

    command: tuple[str, ...]
    options: tuple[str, ...]
    noisy_keys: frozenset[str]
    noisy_csv: frozenset[str]
    change_only: tuple[str, ...] = ()


_CDF_NOISY = (frozenset({"quantiles", "n_released", "released_count", "released_estimate"}),
              frozenset({"cumulative_count", "cdf", "ci95_low", "ci95_high", "unbiased_estimate"}))
STATISTICS: dict[str, Statistic] = {
    "cdf": Statistic(("release",), ("--column", "wage", "--lower", "0", "--upper", "4000", "--bins", "16",
                                    "--epsilon", "1"), *_CDF_NOISY),
    # Everything the officer may state: whole numbers (bins centred on them), a region (256 bins, so that
    # the plan made for it is taken), missing values counted as a public value (under change).
    "cdf with the officer's statements": Statistic(
        ("release",), ("--column", "wage", "--lower", "-0.5", "--upper", "4095.5", "--bins", "256", "--epsilon", "1",
                       "--whole-numbers", "--focus", "1000:1500"), *_CDF_NOISY, change_only=("--missing", "impute:0")),
    "hierarchy": Statistic(("hierarchy", "release"), ("--levels", "region,code", "--prior", "{prior}", "--epsilon",
                                                      "1", "--allocation", "uniform"),
                           frozenset({"n_released", "released_estimate"}),
                           frozenset({"released_count", "ci95_low", "ci95_high"})),
    # the counts of one column: its public list of categories holds both neighbours' codes
    "counts of one column": Statistic(("counts", "release"), ("--column", "code", "--categories", "1,2,3,x",
                                                              "--epsilon", "1"),
                                      frozenset({"released_count"}), frozenset({"released_count"})),
    # the CDF of the wage for each code: under change the record moves from the group 3 to 'other'
    "cdf for each group": Statistic(("grouped", "release"), ("--column", "wage", "--group-column", "code", "--groups",
                                                             "1,2,3", "--other", "other", "--lower", "0", "--upper",
                                                             "4000", "--bins", "16", "--epsilon", "1"),
                                    frozenset({"released_group_sizes"}), frozenset({"cumulative_count", "group_size"})),
}
#: Never the same twice: the ledger's ids, the times, and the hashes of the CSV and PDF (noisy counts).
IDS_AND_TIMES = {"release_id", "created_utc", "changed_utc", "sha256", "output_sha256"}


@pytest.fixture(scope="module")
def key_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("keys")
    create_key("officer", PASSPHRASE, folder)
    (folder / "pass.txt").write_text(PASSPHRASE + "\n", encoding="utf-8")
    return folder


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    folder: Path
    ledger: dict[str, Any]  # ``ledger show --json``
    files: list[str]

    @property
    def released(self) -> list[dict[str, Any]]:
        return list(self.ledger["releases"])


def release(folder: Path, rows: list[Row], source: Source, statistic: Statistic, model: Neighbours, keys: Path,
            capsys, monkeypatch) -> Outcome:
    """Write ``rows`` into ``folder`` as ``source`` and release them with ``statistic`` under ``model``,
    signed, in a dpgui home of their own (a ledger with the dataset's cap and nothing spent)."""
    folder.mkdir()
    monkeypatch.setenv("DPGUI_HOME", str(folder / "home"))
    with Ledger() as ledger:
        ledger.set_cap(DATASET, 10)
    (folder / "prior.csv").write_text(PRIOR, encoding="utf-8")
    data = source.write(folder, rows)
    options = [option.replace("{prior}", str(folder / "prior.csv")) for option in statistic.options]
    under_change = model.model == "change" and "--neighbours" not in data  # a query's source says addremove
    options += [*model.options, *(statistic.change_only if under_change else ())]
    bundle = folder / "bundle"
    bundle.mkdir()
    code, out, err = run_cli([*statistic.command, *data, *options, "--dataset", DATASET, "--json", "--bundle", str(bundle),
                              "--key", str(keys / "officer.key"), "--passphrase-file", str(keys / "pass.txt"),
                              "--name", "release"], capsys)
    code_ledger, ledger_out, _ = run_cli(["ledger", "show", "--json"], capsys)
    assert code_ledger == 0
    return Outcome(code, out, err, folder, json.loads(ledger_out), sorted(p.name for p in bundle.iterdir()))


def _masked(value: Any, noisy: set[str]) -> Any:
    """``value`` with the ids, times and hashes, and the ``noisy`` keys' values, replaced by a placeholder."""
    if isinstance(value, dict):
        return {k: "<noisy>" if k in noisy or k in IDS_AND_TIMES else _masked(v, noisy) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, noisy) for v in value]
    return value


def _placeheld(text: str, outcome: Outcome) -> str:
    return text.replace(str(outcome.folder.resolve()), "<folder>").replace(str(outcome.folder), "<folder>")


def _json(text: str, outcome: Outcome, noisy: set[str]) -> Any:
    return _masked(json.loads(_placeheld(text, outcome)), noisy)


#: A group's mean as the grouped CDF's PDF writes it (dpgui.pdf.grouped_cdf: "2,406 (95 %: 1,736 to 4,000; noise
#: ± 1,469, binning ± 125)"), or its absence (dpgui.core.cdf_moments.NO_MEAN).
MEAN_WORDS = re.compile(r"no\s+mean:\s+the\s+released\s+total\s+is\s+not\s+positive|-?[\d,.]+\s+\(95\s+%:\s+-?[\d,.]+"
                        r"\s+to\s+-?[\d,.]+;\s+noise\s+±\s+[\d,.]+,\s+binning\s+±\s+[\d,.]+\)")


def _pdf_words(path: Path) -> list[str]:
    """The PDF's words in the order they are drawn: its text (ids masked), digits masked, and only the
    tokens that hold a letter (numbers alone are noisy counts, intervals, chart ticks; lines wrap where the
    numbers' widths put them, so words are compared, not lines; and in reading order an axis title moves
    with the width of the noisy ticks beside it, so the drawing order is read: ``pdftotext -raw``)."""
    text = subprocess.run(["pdftotext", "-raw", str(path), "-"], capture_output=True, text=True, check=True).stdout
    text = re.sub(r"\b[0-9a-f]{32}\b", "<id>", unicodedata.normalize("NFKC", text))
    # a mean is post-processing of the noisy total: its interval, or "no mean" when that total is not positive,
    # which one the noise decides
    text = re.sub(MEAN_WORDS, "<mean>", text)
    return [token for token in re.sub(r"\d+", "#", text).split() if re.search(r"[A-Za-z]", token)]


def _csv_public(path: Path, noisy: set[str]) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    keep = [j for j, name in enumerate(rows[0]) if name not in noisy]
    return [rows[0]] + [[row[j] for j in keep] for row in rows[1:]]


def compare(a: Outcome, b: Outcome, statistic: Statistic, expect: str) -> None:
    """Assert that the two neighbours' published outputs agree but for the noise (module docstring)."""
    assert a.code == b.code, f"one neighbour released, the other not:\n{a.err}\n{b.err}"
    if expect == "refuse":
        assert a.code == 2 and a.released == b.released == [] and a.files == b.files == [], (a.err, b.err)
        return
    assert a.code == 0, a.err
    keys = set(statistic.noisy_keys)
    assert _placeheld(a.err, a) == _placeheld(b.err, b)
    assert _json(a.out, a, keys) == _json(b.out, b, keys)
    manifests = [_json((o.folder / "bundle" / "release.manifest.json").read_text(encoding="utf-8"), o, keys)
                 for o in (a, b)]
    assert manifests[0] == manifests[1]
    assert _pdf_words(a.folder / "bundle" / "release.pdf") == _pdf_words(b.folder / "bundle" / "release.pdf")
    assert (_csv_public(a.folder / "bundle" / "release.csv", set(statistic.noisy_csv))
            == _csv_public(b.folder / "bundle" / "release.csv", set(statistic.noisy_csv)))
    assert _masked(json.loads(_placeheld(json.dumps(a.ledger), a)), set()) == _masked(
        json.loads(_placeheld(json.dumps(b.ledger), b)), set())
    assert a.files == b.files == ["release.csv", "release.manifest.json", "release.manifest.json.minisig",
                                  "release.pdf"]


@pytest.mark.parametrize("kind", list(NEIGHBOURS))
@pytest.mark.parametrize("statistic", list(STATISTICS))
@pytest.mark.parametrize("source_name", list(SOURCES))
def test_neighbours_publish_the_same_but_for_the_noise(tmp_path, key_folder, capsys, monkeypatch, source_name,
                                                       statistic, kind):
    source, model = SOURCES[source_name], NEIGHBOURS[kind]
    first, second = model.pair()
    outcomes = [release(tmp_path / name, rows, source, STATISTICS[statistic], model, key_folder, capsys, monkeypatch)
                for name, rows in (("first", first), ("second", second))]
    compare(*outcomes, STATISTICS[statistic], source.expect)
