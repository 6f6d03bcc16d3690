"""`dpgui --version` and `dpgui --self-test` (the same commands the installers' CI runs on the frozen app)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from dpgui import __version__
from dpgui.cli import main
from dpgui.selftest import STEPS, run_self_test


def test_version_names_dpgui_qt_and_the_libraries(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"dpgui {__version__}"  # not frozen here
    for name in ("python", "numpy", "scipy", "cryptography", "PySide6", "(Qt 6."):
        assert name in out, name


def test_self_test_passes_every_step_and_leaves_the_users_files_alone(tmp_path):
    home = tmp_path / "real-home"
    home.mkdir()
    (home / "marker").write_text("the user's folder")
    env = {**os.environ, "DPGUI_HOME": str(home), "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "dpgui.cli", "--self-test"], env=env, capture_output=True,
                            text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    ok_lines = [line for line in result.stdout.splitlines() if "] ok " in line]
    assert len(ok_lines) == len(STEPS) == 10, result.stdout
    assert "self-test passed" in result.stdout
    assert sorted(p.name for p in home.iterdir()) == ["marker"]  # no ledger, keys or autosave written there
    assert not (tmp_path / ".config").exists()  # Qt settings went to the throw-away folder too


def test_self_test_stops_at_the_first_failure_and_says_which(monkeypatch):
    import dpgui.data.sample as sample

    monkeypatch.setattr(sample, "find_resource", lambda relative: None)  # as if the bundle lacked the sample
    out = io.StringIO()
    assert run_self_test(out) == 1
    text = out.getvalue()
    assert "[2/10] FAILED load the sample dataset: DataError: the sample dataset is missing" in text
    assert "[3/10]" not in text and text.rstrip().endswith("self-test FAILED")


def test_self_test_restores_dpgui_home(monkeypatch, tmp_path):
    import dpgui.data.sample as sample

    monkeypatch.setenv("DPGUI_HOME", str(tmp_path / "mine"))
    monkeypatch.setattr(sample, "find_resource", lambda relative: None)
    run_self_test(io.StringIO())
    assert os.environ["DPGUI_HOME"] == str(tmp_path / "mine")
    assert not Path(tmp_path / "mine").exists()
