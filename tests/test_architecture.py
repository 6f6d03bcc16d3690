"""The layers hold (pyproject.toml's import-linter contracts); the window starts without SciPy and pandas.

The contracts (run by `make lint` in CI, and here so that `make test` alone sees them too): core imports
nothing of ours but errors; data and report import core; workspace never imports app; only dpgui.app
imports Qt (PySide6, shiboken6, pyqtgraph); the CLI imports the app only to start the window and to draw
the PDF. They read every import statement, also those inside functions.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    """import-linter on the dpgui package found in ``cwd`` (it puts cwd first on sys.path)."""
    command = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(command), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_import_contracts_hold():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken." in result.stdout


def test_a_qt_import_in_core_breaks_the_contracts(tmp_path):
    """Not vacuous: a lazy Qt import in a copy of dpgui/core is caught, and the message names it."""
    shutil.copytree(ROOT / "dpgui", tmp_path / "dpgui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    tree = tmp_path / "dpgui" / "core" / "tree.py"
    tree.write_text(tree.read_text(encoding="utf-8") + "\n\ndef _window() -> None:\n    import PySide6.QtWidgets\n",
                    encoding="utf-8")
    result = _lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Only dpgui.app imports Qt (PySide6, shiboken6, pyqtgraph) BROKEN" in result.stdout
    assert "dpgui.core.tree -> PySide6" in result.stdout


def test_the_window_starts_without_loading_scipy_or_pandas():
    """SciPy and pandas load when first used (planning, the table preview), not with the window:
    together they added ~0.9 s to the time before the first window appeared."""
    code = ("import sys\nfrom dpgui.app.main_window import MainWindow\nimport dpgui.cli\n"
            "print(','.join(m for m in sys.modules if m.split('.')[0] in ('scipy', 'pandas')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"loaded at start-up: {result.stdout.strip()[:300]}"
