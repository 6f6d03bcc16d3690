"""Whole-number columns: a column known from public information to hold whole numbers
(the officer's statement — ``--whole-numbers``, the data step's checkbox — or the file's declared type,
never the cells) released on bins centred on whole numbers gets whole-number quantiles, derived from the
released CDF, whose intervals still hold; the statement is recorded in the JSON, the ledger and the
manifest. Flight delays are whole minutes stored as float: their median is −2, not −1.02.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import run_cli
from dpgui.core.mechanism import release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.quantiles import WholeNumbers, quantiles, whole_number_step
from dpgui.data.histogram import values_histogram
from dpgui.data.public_bounds import whole_number_bins
from dpgui.report.ledger import Ledger

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample" / "flights.parquet"
PROBABILITIES = (0.1, 0.25, 0.5, 0.75, 0.9)


def test_whole_number_step_knows_centred_bins():
    assert whole_number_step(-100.5, 500.5, 601) == 1
    assert whole_number_step(-0.5, 23.5, 8) == 3
    assert whole_number_step(*whole_number_bins(0, 100, 20)[:3]) == 5  # the width chosen, kept
    assert whole_number_step(*whole_number_bins(0, 100, 40)[:3]) == 3  # 2.5 is not whole: K ≤ 40
    for lower, upper, bins in ((-100, 500, 600), (0.0, 10.0, 20), (-0.5, 10.0, 7), (0.25, 10.25, 10)):
        assert whole_number_step(lower, upper, bins) is None, (lower, upper, bins)


def _independent_whole_quantile(cumulative: np.ndarray, lower: float, step: int, p: float) -> int:
    """The smallest whole number x whose released cumulative count, with each bin's records spread evenly
    over its ``step`` whole numbers, reaches p·C_K: by walking every whole number (no dpgui code)."""
    total = float(cumulative[-1])
    previous = 0.0
    first = round(lower + 0.5)
    for j, c in enumerate(cumulative):
        for i in range(step):
            if previous + (i + 1) / step * (c - previous) >= p * total - 1e-9 and c > previous:
                return first + j * step + i
        previous = float(c)
    return first + len(cumulative) * step - 1


@pytest.mark.parametrize("step", [1, 3])
def test_whole_estimates_come_from_the_released_cdf_and_their_intervals_hold(step):
    """Coverage of the true whole-number quantile over 150 releases per step at ε = 0.5, N = 2,000 ties-heavy
    whole numbers; the estimate checked against an independent walk over the released CDF."""
    rng = np.random.default_rng(11 + step)
    values = np.clip(np.round(rng.gamma(2.0, 6.0, 2000)) - 3, 0, 59)  # whole numbers with ties, some clamped
    lower, upper, bins, got = whole_number_bins(0, 59, 60 // step)
    assert got == step
    counts = values_histogram(values, lower, upper, bins)
    ordered = np.sort(values)
    plan = auto_plan(bins, PrivacySpec(0.5))
    held = trials = 0
    for seed in range(150):
        result = release(counts, plan, SeededRandom(seed), lower, upper)
        for q in quantiles(result, PROBABILITIES, whole_numbers=True):
            assert q.whole and q.value == round(q.value) and q.low == round(q.low) and q.high == round(q.high)
            assert q.low <= q.value <= q.high
            assert q.value == _independent_whole_quantile(result.cumulative, lower, step, q.probability)
            truth = ordered[math.ceil(q.probability * ordered.size) - 1]  # smallest x with #≤x ≥ p·N
            held += q.low <= truth <= q.high
            trials += 1
        plain = quantiles(result, PROBABILITIES)  # without the statement: interpolated, as before
        assert not plain[0].whole
    coverage = held / trials
    assert coverage >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / trials), coverage


def test_flight_delays_have_a_median_of_minus_two(tmp_path, capsys):
    """dep_delay is stored as float; stated whole, on centred bins its released median is −2 (the true
    median); on bins with edges on whole numbers the interpolated median is not a whole number."""
    with Ledger() as ledger:
        ledger.set_cap("flights", 10)
    common = ["release", str(SAMPLE), "--column", "dep_delay", "--epsilon", "1", "--dataset", "flights",
              "--probabilities", "0.5", "--json"]
    code, out, err = run_cli([*common, "--lower", "-100.5", "--upper", "500.5", "--bins", "601", "--whole-numbers",
                              "--out", str(tmp_path / "centred.csv")], capsys)
    assert code == 0, err
    summary = json.loads(out)
    median = summary["quantiles"][0]
    assert median["whole"] and median["value"] == -2.0 and median["low"] <= -2 <= median["high"]
    assert summary["whole_numbers"] == "stated"
    with Ledger() as ledger:
        recorded = ledger.release_output(summary["release_id"])
        assert recorded is not None and recorded.params["whole_numbers"] == "stated"
    # not centred: the statement is recorded, the median interpolated, and a note names the centred bins
    code, out, err = run_cli([*common, "--lower", "-100", "--upper", "500", "--bins", "1000", "--whole-numbers",
                              "--out", str(tmp_path / "edges.csv")], capsys)
    assert code == 0
    assert "--lower -100.5 --upper 500.5 --bins 601" in err and err.count("\n") == 1
    median = json.loads(out)["quantiles"][0]
    assert not median["whole"] and median["value"] != round(median["value"])
    # the file's declared type (hour is int8) says so without a statement
    code, out, err = run_cli([*common, "--column", "hour", "--lower", "-0.5", "--upper", "24.5", "--bins", "25",
                              "--out", str(tmp_path / "hour.csv")], capsys)
    assert code == 0, err
    assert json.loads(out)["whole_numbers"] == "type" and json.loads(out)["quantiles"][0]["whole"]
    # the quantiles command reads the statement back from the release's JSON
    (tmp_path / "centred.json").write_text(json.dumps(summary))
    code, out, err = run_cli(["quantiles", str(tmp_path / "centred.csv"), "--plan", str(tmp_path / "centred.json"),
                              "--probabilities", "0.5", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["quantiles"][0]["value"] == -2.0


def test_the_manifest_and_the_project_record_the_statement():
    from dpgui.report.bundle import schema_problems
    from dpgui.report.cdf.bundle import ReleaseInfo, build_manifest
    from dpgui.report.project_file import Project, ProjectRelease, project_from_json, project_to_json

    lower, upper, bins, _ = whole_number_bins(0, 99, 100)
    result = release(np.ones(bins, np.int64), auto_plan(bins, PrivacySpec(1.0)), SeededRandom(1), lower, upper)
    info = ReleaseInfo("d", "x", "0" * 32, datetime(2030, 1, 1, tzinfo=timezone.utc), result.missing_rule,
                       whole_numbers=WholeNumbers.STATED)
    manifest = build_manifest(result, info, "n", b"csv", b"pdf", "ABCD")
    assert manifest["schema_version"] == 5 and schema_problems(manifest) == []
    assert manifest["whole_numbers"]["source"] == "stated" and manifest["whole_numbers"]["bins_centred"] is True
    plain = build_manifest(result, ReleaseInfo("d", "x", "0" * 32, info.created_utc, result.missing_rule), "n",
                           b"csv", b"pdf", "ABCD")
    assert "whole_numbers" not in plain and plain["schema_version"] == 2  # nothing stated: as before
    entry = ProjectRelease.from_release(result, "0" * 32, info.created_utc, "x", "bucket", None, WholeNumbers.TYPE)
    project = Project("/data.parquet", column="x", lower=lower, upper=upper, bins=bins,
                      whole_numbers=WholeNumbers.STATED, releases=(entry,))
    back = project_from_json(project_to_json(project), "p.dpgui")
    assert back.whole_numbers == "stated" and back.releases[0].whole_numbers == "type"
