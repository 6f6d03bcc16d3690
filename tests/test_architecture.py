"""dpgui/core, dpgui/data and dpgui/report never import Qt (docs/design.md, "Who may import whom"); the window starts without SciPy and pandas."""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import dpgui

QT_MODULES = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "pyqtgraph")


def test_core_data_report_import_no_qt():
    packages = ("dpgui.core", "dpgui.data", "dpgui.report")
    modules = [name for pkg in packages
               for _, name, _ in pkgutil.walk_packages([str(Path(dpgui.__file__).parent / pkg.split(".")[1])], pkg + ".")]
    assert len(modules) >= 8, modules
    code = ("import sys\n" + "".join(f"import {m}\n" for m in modules)
            + f"bad = [m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r}]\n"
            + "print(','.join(bad)); sys.exit(1 if bad else 0)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, f"Qt imported: {result.stdout} {result.stderr}"


def test_the_window_starts_without_loading_scipy_or_pandas():
    """SciPy and pandas load when first used (planning, the table preview), not with the window:
    together they added ~0.9 s to the time before the first window appeared."""
    code = ("import sys\nfrom dpgui.app.main_window import MainWindow\nimport dpgui.cli\n"
            "print(','.join(m for m in sys.modules if m.split('.')[0] in ('scipy', 'pandas')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"loaded at start-up: {result.stdout.strip()[:300]}"
