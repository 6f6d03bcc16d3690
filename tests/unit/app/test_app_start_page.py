"""The start page shows every line whole — the drop hint above all — at 100 % and at 200 % scaling."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gui_helpers import make_window
from gui_helpers import clipped_labels

pytestmark = pytest.mark.slow

CHECK = """
import sys
from PySide6.QtWidgets import QApplication
from dpgui.app.main import create_application
from dpgui.app.shell.main_window import MainWindow
sys.path.insert(0, {support!r})
from gui_helpers import clipped_labels
app = create_application()
window = MainWindow()
window.resize({width}, {height})
window.show()
for _ in range(30):
    app.processEvents()
print(window.devicePixelRatioF())
print("\\n".join(clipped_labels(window.start_page)) or "none clipped")
window.close()
"""


@pytest.mark.parametrize("size", [(1280, 820), (960, 540)])  # 960 × 540: a 1920 × 1080 screen at 200 %
def test_no_line_of_the_start_page_is_clipped(qtbot, size):
    window = make_window(qtbot)
    window.resize(*size)
    window.start_page.set_recent([str(Path.home() / "data" / "people-2024.csv")])
    qtbot.wait(50)
    from PySide6.QtWidgets import QLabel

    assert any(label.text().startswith("Or drop a ") and label.isVisible()
               for label in window.start_page.findChildren(QLabel))
    assert clipped_labels(window.start_page) == []


def test_no_line_of_the_start_page_is_clipped_at_200_percent(tmp_path):
    support = str(Path(__file__).resolve().parents[2] / "support")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_SCALE_FACTOR="2", DPGUI_HOME=str(tmp_path / "home"))
    done = subprocess.run([sys.executable, "-c", CHECK.format(support=support, width=960, height=540)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    ratio, *rest = done.stdout.strip().splitlines()
    assert float(ratio) == 2.0 and rest == ["none clipped"]
