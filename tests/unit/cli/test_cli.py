"""The CLI contract: JSON fields, CSV columns, and one-line exit-2 errors for bad input."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpgui.cli import main

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "resources" / "sample" / "flights.parquet"


@pytest.fixture(autouse=True)
def _budget_caps():
    """Releases in these tests draw on generous ledger caps (the ledger itself is tested below)."""
    from dpgui.report.ledger import Ledger

    with Ledger() as ledger:
        ledger.set_cap("flights", 50)
        ledger.set_cap("cli-test", 50)


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as exc:  # argparse errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_plan_json_has_the_contract_fields(capsys):
    code, out, _ = run_cli(["plan", "--bins", "4096", "--epsilon", "1", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert isinstance(data["branching"], list) and np.prod(data["branching"]) >= 4096
    assert abs(sum(data["level_epsilons"]) - 1.0) < 1e-12
    assert data["estimator"] == "gls"
    assert data["projected"]["total_sq_error"] > 0 and data["projected"]["max_variance"] > 0
    for name in ("ind", "hist", "binary", "paper_best"):
        assert data["baselines"][name]["total_sq_error"] > 0
    assert data["projected"]["total_sq_error"] <= 0.36 * data["baselines"]["paper_best"]["total_sq_error"]


def test_plan_paper_figure_within_one_percent(capsys):
    # K = 4095 value bins + the leaf for missing values = the paper's 4096 leaves, 16x16x16 (docs/research.md).
    code, out, _ = run_cli(["plan", "--bins", "4095", "--epsilon", "1", "--branching", "16", "--budgets", "equal",
                            "--estimator", "covering", "--json"], capsys)
    assert code == 0
    total = json.loads(out)["projected"]["total_sq_error"]
    assert abs(total / 6_635_520 - 1) < 0.01


def test_plan_explicit_budgets_and_addremove(capsys):
    code, out, _ = run_cli(["plan", "--bins", "256", "--epsilon", "1", "--branching", "16x16", "--budgets",
                            "0.2,0.3,0.5", "--neighbours", "addremove", "--records-per-person", "2", "--json"], capsys)
    assert code == 0, out
    data = json.loads(out)
    assert data["level_epsilons"] == [0.2, 0.3, 0.5]
    assert data["levels"] == [0, 1, 2]
    assert data["sensitivity_per_level"] == 2


def test_release_writes_csv_with_public_columns(tmp_path, capsys):
    out_csv = tmp_path / "rel.csv"
    code, out, err = run_cli(["release", str(SAMPLE), "--column", "distance", "--lower", "0", "--upper", "5000",
                              "--bins", "500", "--epsilon", "1", "--out", str(out_csv), "--dataset", "flights", "--json"],
                             capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["secure_noise"] is True
    with open(out_csv, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0].keys()) == ["bin_lower", "bin_upper", "cumulative_count", "cdf", "std_error", "ci95_low",
                                    "ci95_high", "unbiased_estimate"]
    assert len(rows) == 500
    counts = np.array([int(r["cumulative_count"]) for r in rows])
    assert np.all(np.diff(counts) >= 0) and counts[0] >= 0
    # change model: N = all rows is public; C_K (values ≤ the last edge) is noised, since the missing
    # values are a noised leaf of their own (the file has none)
    assert summary["n_released"] == 336_776 and summary["missing_values"]["rule"] == "bucket"
    assert counts[-1] <= 336_776 and counts[-1] + summary["missing_values"]["released_count"] == 336_776
    assert float(rows[-1]["cdf"]) == 1.0  # the CDF of the values: C_j / C_K
    # the release is close to the truth (noise is small at ε=1 with 336k records)
    values = pq.read_table(SAMPLE, columns=["distance"]).column(0).to_numpy()
    truth = np.cumsum(np.bincount(np.clip((values / 10).astype(int), 0, 499), minlength=500))
    assert np.abs(counts - truth).max() < 200


@pytest.mark.slow
def test_simulate_reports_errors_and_projection(capsys):
    code, out, err = run_cli(["simulate", "--bins", "64", "--epsilon", "1", "--consistency", "none", "--trials", "400",
                              "--seed", "5", "--synthetic", "uniform", "--n", "1000", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    for key in ("mean_sq_l2", "mean_l1", "mean_l2", "mean_linf"):
        assert data["counts"][key] > 0 and data["cdf"][key] > 0
    projected = data["projected"]["total_sq_error"]
    # without consistency the estimator is unbiased: the simulated mean matches the exact projection
    assert abs(data["counts"]["mean_sq_l2"] - projected) < 4 * data["counts"]["se_sq_l2"]
    assert data["insecure_seeded_noise"] is True


@pytest.fixture
def bad_files(tmp_path):
    files = {}
    files["text"] = tmp_path / "text.csv"
    files["text"].write_text("name,value\nalice,1\nbob,2\n")
    files["empty"] = tmp_path / "empty.csv"
    files["empty"].write_text("")
    files["header_only"] = tmp_path / "header.csv"
    files["header_only"].write_text("value\n")
    files["ragged"] = tmp_path / "ragged.csv"
    files["ragged"].write_text("a,b\n1,2\n3,4,5\n")
    files["all_missing"] = tmp_path / "missing.csv"
    files["all_missing"].write_text("value\n\n\nNA\n")
    files["unknown_ext"] = tmp_path / "data.xyz"
    files["unknown_ext"].write_text("value\n1\n")
    files["nan"] = tmp_path / "nan.csv"
    files["nan"].write_text("value\n1\nNaN\n3\n")
    files["binary"] = tmp_path / "bad.parquet"
    files["binary"].write_bytes(b"\x00\x01not a parquet file at all")
    files["good"] = tmp_path / "good.parquet"
    pq.write_table(pa.table({"value": np.arange(100, dtype=float)}), files["good"])
    return files


def _release(path, column="value", lower="0", upper="100", bins="10", epsilon="1", out=None, extra=()):
    return ["release", str(path), "--column", column, "--lower", lower, "--upper", upper, "--bins", bins,
            "--epsilon", epsilon, "--out", str(out), "--dataset", "cli-test", *extra]


BAD_CASES = [
    # (id, builder(files, out) -> argv, words the message must contain)
    ("epsilon zero", lambda f, o: _release(f["good"], epsilon="0", out=o), ["epsilon", "> 0"]),
    ("epsilon negative", lambda f, o: _release(f["good"], epsilon="-1", out=o), ["epsilon"]),
    ("epsilon text", lambda f, o: _release(f["good"], epsilon="abc", out=o), ["epsilon", "abc"]),
    ("epsilon nan", lambda f, o: _release(f["good"], epsilon="nan", out=o), ["epsilon"]),
    ("epsilon huge", lambda f, o: _release(f["good"], epsilon="1e6", out=o), ["ε"]),
    ("bins zero", lambda f, o: _release(f["good"], bins="0", out=o), ["--bins"]),
    ("bins text", lambda f, o: _release(f["good"], bins="ten", out=o), ["--bins"]),
    ("bins too many", lambda f, o: _release(f["good"], bins=str(2**27), out=o), ["bins"]),
    ("bounds inverted", lambda f, o: _release(f["good"], lower="100", upper="0", out=o), ["lower", "upper"]),
    ("bounds equal", lambda f, o: _release(f["good"], lower="5", upper="5", out=o), ["lower"]),
    ("bound infinite", lambda f, o: _release(f["good"], upper="inf", out=o), ["--upper"]),
    ("missing file", lambda f, o: _release(Path("/nonexistent/file.csv"), out=o), ["not", "file"]),
    ("unknown extension", lambda f, o: _release(f["unknown_ext"], out=o), ["xyz"]),
    ("text column", lambda f, o: _release(f["text"], column="name", out=o), ["name", "numeric"]),
    ("unknown column", lambda f, o: _release(f["good"], column="nope", out=o), ["nope"]),
    ("empty file", lambda f, o: _release(f["empty"], out=o), ["empty"]),
    ("header only", lambda f, o: _release(f["header_only"], out=o), ["no data rows"]),
    ("ragged csv", lambda f, o: _release(f["ragged"], column="a", out=o), ["ragged"]),
    ("missing policy error", lambda f, o: _release(f["nan"], out=o, extra=("--missing", "error")),
     ["--missing error", "not a rule of the change model", "noised 'missing' bucket"]),
    ("missing drop under change", lambda f, o: _release(f["nan"], out=o, extra=("--missing", "drop")),
     ["--missing drop", "bucket"]),
    ("not parquet", lambda f, o: _release(f["binary"], out=o), ["parquet"]),
    ("out is a directory", lambda f, o: _release(f["good"], out=o.parent), ["directory"]),
    ("out folder missing", lambda f, o: _release(f["good"], out=o.parent / "nope" / "x.csv"), ["does not exist"]),
    ("branching 1", lambda f, o: _release(f["good"], out=o, extra=("--branching", "1")), ["branching"]),
    ("branching text", lambda f, o: _release(f["good"], out=o, extra=("--branching", "wide")), ["branching"]),
    ("branching too small", lambda f, o: _release(f["good"], out=o, extra=("--branching", "2x2")), ["covers only"]),
    # K = 9 bins + the leaf for missing values (change model) = 10 leaves
    ("budgets wrong sum", lambda f, o: _release(f["good"], bins="9", out=o,
                                                extra=("--branching", "10", "--budgets", "0.1")), ["sum"]),
    ("budgets wrong count", lambda f, o: _release(f["good"], bins="9", out=o,
                                                  extra=("--branching", "2x5", "--budgets", "1")), ["budgets"]),
    ("branching without the missing leaf", lambda f, o: _release(f["good"], out=o, extra=("--branching", "2x5")),
     ["K + 1 = 11", "missing values"]),
    ("budgets without branching", lambda f, o: _release(f["good"], out=o, extra=("--budgets", "0.5,0.5")),
     ["--branching"]),
    ("budgets text", lambda f, o: _release(f["good"], out=o, extra=("--budgets", "lots")), ["--budgets"]),
    ("records per person 0", lambda f, o: _release(f["good"], out=o, extra=("--records-per-person", "0")),
     ["--records-per-person"]),
    ("neighbours unknown", lambda f, o: _release(f["good"], out=o, extra=("--neighbours", "swap")), ["--neighbours"]),
    ("missing --out", lambda f, o: [a for a in _release(f["good"], out=o) if a not in ("--out", str(o))], ["--out"]),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_bad_input_exits_2_with_one_line_and_no_output(case, bad_files, tmp_path, capsys):
    _, build, words = case
    out = tmp_path / "out" / "result.csv"
    out.parent.mkdir()
    code, stdout, stderr = run_cli(build(bad_files, out), capsys)
    assert code == 2, (stdout, stderr)
    message = stderr.strip()
    assert "Traceback" not in stderr
    assert len(message.splitlines()) == 1, message
    for word in words:
        assert word.lower() in message.lower(), message
    assert not out.exists()
    assert list(out.parent.iterdir()) == []  # no temp files either


def test_bad_input_count_meets_acceptance():
    assert len(BAD_CASES) >= 15


def test_console_script_runs_in_a_subprocess(tmp_path):
    """The installed entry point: exit code 2 and no traceback for a bad ε."""
    env = dict(os.environ)
    result = subprocess.run([sys.executable, "-m", "dpgui.cli", "plan", "--bins", "16", "--epsilon", "abc"],
                            capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "--epsilon" in result.stderr


def test_release_without_a_cap_is_refused_before_reading(tmp_path, capsys):
    out_csv = tmp_path / "rel.csv"
    code, _, err = run_cli(["release", str(SAMPLE), "--column", "distance", "--lower", "0", "--upper", "5000",
                            "--bins", "50", "--epsilon", "1", "--out", str(out_csv), "--dataset", "uncapped"], capsys)
    assert code == 2
    assert "uncapped" in err and "dpgui ledger cap" in err and err.count("\n") == 1
    assert not out_csv.exists()


@pytest.mark.slow
def test_ledger_cap_refuses_the_release_that_would_overspend(tmp_path, capsys):
    assert run_cli(["ledger", "cap", "small", "1"], capsys)[0] == 0
    args = ["release", str(SAMPLE), "--column", "distance", "--lower", "0", "--upper", "5000", "--bins", "50",
            "--dataset", "small"]
    for i in range(3):  # three releases of ε/3 fit a cap of ε exactly
        code, _, err = run_cli([*args, "--epsilon", str(1 / 3), "--out", str(tmp_path / f"r{i}.csv")], capsys)
        assert code == 0, err
    code, _, err = run_cli([*args, "--epsilon", "0.01", "--out", str(tmp_path / "r4.csv")], capsys)
    assert code == 2 and "small" in err and not (tmp_path / "r4.csv").exists()
    code, out, _ = run_cli(["ledger", "show", "--dataset", "small", "--json"], capsys)
    data = json.loads(out)
    assert len(data["releases"]) == 3
    assert abs(data["datasets"][0]["epsilon_spent"] - 1.0) < 1e-9
    code, out, _ = run_cli(["ledger", "show"], capsys)
    assert code == 0 and "small: spent ε = 1 of 1" in out


@pytest.mark.slow
def test_key_create_then_release_bundle_then_verify(tmp_path, capsys):
    passfile = tmp_path / "pass"
    passfile.write_text("a long passphrase\n")
    code, out, err = run_cli(["key", "create", "officer", "--passphrase-file", str(passfile), "--dir", str(tmp_path)],
                             capsys)
    assert code == 0, err
    assert (tmp_path / "officer.key").stat().st_mode & 0o077 == 0
    (tmp_path / "bundles").mkdir()
    code, out, err = run_cli(["release", str(SAMPLE), "--column", "distance", "--lower", "0", "--upper", "5000",
                              "--bins", "64", "--epsilon", "0.5", "--dataset", "flights", "--bundle", str(tmp_path / "bundles"),
                              "--key", str(tmp_path / "officer.key"), "--passphrase-file", str(passfile), "--json"], capsys)
    assert code == 0, err
    manifest = json.loads(out)["outputs"]["bundle"]
    code, out, err = run_cli(["verify", manifest, "--pubkey", str(tmp_path / "officer.pub")], capsys)
    assert code == 0 and "VERIFIED" in out, err
    passfile.write_text("the wrong passphrase\n")
    code, _, err = run_cli(["release", str(SAMPLE), "--column", "distance", "--lower", "0", "--upper", "5000",
                            "--bins", "64", "--epsilon", "0.5", "--dataset", "flights", "--bundle", str(tmp_path / "bundles"),
                            "--key", str(tmp_path / "officer.key"), "--passphrase-file", str(passfile)], capsys)
    assert code == 2 and "passphrase" in err
    code, out, _ = run_cli(["ledger", "show", "--dataset", "flights", "--json"], capsys)
    assert len(json.loads(out)["releases"]) == 1  # the refused release spent nothing


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="Windows and macOS always have a desktop")
def test_the_window_without_a_desktop_exits_2_with_a_clear_message(tmp_path):
    """On a server (no DISPLAY, no WAYLAND_DISPLAY) Qt would abort with advice to reinstall."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([sys.executable, "-m", "dpgui.cli"], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2, result.stderr
    assert "needs a graphical desktop" in result.stderr and "dpgui --help" in result.stderr
    assert "Aborted" not in result.stderr and "platform plugin" not in result.stderr
    # The commands still work there.
    result = subprocess.run([sys.executable, "-m", "dpgui.cli", "plan", "--bins", "16", "--epsilon", "1"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_a_forced_qt_platform_counts_as_a_desktop(monkeypatch):
    import dpgui.cli as cli

    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cli.sys, "platform", "linux")
    assert cli._no_desktop()
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert not cli._no_desktop()
    monkeypatch.delenv("WAYLAND_DISPLAY")
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert not cli._no_desktop()
    monkeypatch.setattr(cli.sys, "platform", "darwin")
    monkeypatch.delenv("QT_QPA_PLATFORM")
    assert not cli._no_desktop()
