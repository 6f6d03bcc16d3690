"""The window stays responsive (tests/app/responsiveness_case.py), measured in a fresh process as
the app runs, not in this one, which holds what every earlier test left behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CASE = Path(__file__).with_name("responsiveness_case.py")


def test_event_loop_stays_responsive_while_loading_and_releasing(tmp_path):
    # pytest collects a file named on its command line whatever its name; the suite's run skips it
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                             "--basetemp", str(tmp_path / "case"), str(CASE)],
                            cwd=CASE.parents[2], capture_output=True, text=True, timeout=600)
    print(result.stdout[-3000:])
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout
