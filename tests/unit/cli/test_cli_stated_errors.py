"""The CLI states the product's one error, the 95 % margin, as the window and the PDF do:

* ``dpgui plan``/``simulate``: the margin at the worst point of the CDF and on average (margin95's), worded
  like the window (``± 27.4 records … at the worst point of the CDF, ± 22.7 records … on average``), in the
  text and in ``--json`` (``projected.margin95``) — no 1-SE "rms ±" figure.
* ``dpgui hierarchy plan``: per level the margin of one count, the median count, margin ÷ count, the share
  of categories below the margin, and a warning when most of a level is noise; projected at N spread evenly
  under change (N is public), and under add/remove only at a typed ``--n`` — two files that differ in one
  record give the same plan output, byte for byte.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from dpgui.core.margins import cdf_margins
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.formatting import cdf_margin_words, format_level_margin

from cli_helpers import run_cli

LEVELS = "region,district,school"


def test_plan_states_the_windows_95_percent_margins(capsys):
    code, out, err = run_cli(["plan", "--bins", "100", "--epsilon", "1", "--n", "10000"], capsys)
    assert code == 0, err
    margins = cdf_margins(auto_plan(100, PrivacySpec(1.0)))
    assert cdf_margin_words(margins.worst, margins.average, 10_000) in out
    assert "95 % margin" in out and "rms" not in out and "standard error" not in out
    code, out, err = run_cli(["plan", "--bins", "100", "--epsilon", "1", "--json"], capsys)
    assert code == 0, err
    projected = json.loads(out)["projected"]
    assert projected["margin95"] == {"worst": margins.worst, "average": margins.average}
    assert "rms_error" not in projected


def test_simulate_states_the_same_margins(capsys):
    code, out, err = run_cli(["simulate", "--synthetic", "uniform", "--n", "1000", "--bins", "50", "--epsilon", "1",
                              "--trials", "5", "--seed", "1"], capsys)
    assert code == 0, err
    plan = auto_plan(50, PrivacySpec(1.0))
    margins = cdf_margins(plan)
    assert cdf_margin_words(margins.worst, margins.average, 1000) in out and "rms" not in out


def _write(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(LEVELS.split(","))
        writer.writerows(rows)
    return path


@pytest.fixture
def neighbours(tmp_path) -> tuple[Path, Path, Path]:
    """A file of small schools (2–9 records), the same file with one record changed to another school, and
    with one record removed."""
    rows = [(f"R{r}", f"R{r}-D{d}", f"R{r}-D{d}-S{s}") for r in range(3) for d in range(3) for s in range(5)
            for _ in range(2 + (r + d + s) % 8)]
    changed = rows[:-1] + [rows[0]]
    return _write(tmp_path / "a.csv", rows), _write(tmp_path / "changed.csv", changed), \
        _write(tmp_path / "removed.csv", rows[1:])


def _plan(data: Path, *extra: str) -> list[str]:
    return ["hierarchy", "plan", "--input", str(data), "--levels", LEVELS, "--epsilon", "1", *extra]


def test_hierarchy_plan_states_margins_usefulness_and_warns(neighbours, capsys):
    data, _, _ = neighbours
    code, out, err = run_cli(_plan(data, "--json"), capsys)
    assert code == 0, err
    report = json.loads(out)
    n = report["plan"]["assumed_records"]
    levels = report["projected"]["levels"]
    assert [r["level"] for r in levels] == [0, 1, 2, 3] and levels[0]["margin95"] == 0  # N is exact under change
    school = levels[3]
    assert school["median_count"] == pytest.approx(n / 45, abs=1)  # N spread evenly over 45 schools
    assert school["margin95"] > school["median_count"] and school["share_below_margin"] == 1.0
    assert school["relative_margin"] == pytest.approx(school["margin95"] / school["median_count"])
    assert any("'school' (100 %)" in w for w in report["warnings"])
    code, out, err = run_cli(_plan(data), capsys)  # the text says the same
    assert code == 0, err
    assert format_level_margin(school["margin95"]) in out and "warning: Most categories of 'school'" in out


def test_the_plan_is_the_same_for_neighbouring_files(neighbours, capsys):
    """Under change N is public (the same in both files): the projection at N spread evenly is the same when
    one record moves. Under add/remove N is private: the file's count is never used — one record removed
    changes nothing in the plan's output, without --n and with it."""
    data, changed, removed = neighbours

    def output(path: Path, *extra: str) -> str:
        code, out, err = run_cli(_plan(path, "--json", *extra), capsys)
        assert code == 0, err
        return out.replace(str(path), "DATA")

    assert output(data) == output(changed)
    assert output(data, "--neighbours", "addremove") == output(removed, "--neighbours", "addremove")
    both = output(data, "--neighbours", "addremove", "--n", "250"), output(removed, "--neighbours", "addremove",
                                                                           "--n", "250")
    assert both[0] == both[1] and json.loads(both[0])["plan"]["assumed_records"] == 250
