"""The real window on a real X server (Xvfb): every screen opens and is captured from the screen.

CI installs Xvfb with `make system-deps` (called by .ci/run). Screenshots go to
$DPGUI_SCREENSHOT_DIR (default build/screenshots in the checkout) so they can be looked at.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from xvfb import virtual_display  # noqa: E402  (scripts/ is not a package)

SCREENS = ("01-start", "02-data", "03-plan", "03b-plan-delta", "03c-plan-gaussian", "03d-plan-focus",
           "04-accuracy-first", "05-bin-tree", "06-confirm-release",
           "07-results", "08-results-confidential-toggle", "09-data-bad-input", "10-plan-bad-epsilon",
           "11-export-bundle", "12-ledger", "13-verify", "14-keys",
           "15-hierarchy-levels", "16-hierarchy-plan", "17-hierarchy-tree", "18-hierarchy-result",
           "20-database-password-in-url", "21-database-dialog", "22-data-database", "23-data-csv-dialect",
           "24-dialect-dialog")


@pytest.fixture
def xvfb():
    with virtual_display(2800, 1800) as display:
        yield display


def _run_screens(display: str, outdir: Path, home: Path, *extra: str, env_extra: dict[str, str] | None = None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("QT_")}
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               DPGUI_HOME=str(home / "dpgui"), XDG_RUNTIME_DIR=str(home / "runtime"))
    (home / "runtime").mkdir(parents=True, exist_ok=True, mode=0o700)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "screenshots.py"), str(outdir), *extra],
                          env=env, capture_output=True, text=True, timeout=300)


def _check_images(outdir: Path, min_width: int) -> None:
    from PySide6.QtGui import QImage

    for name in SCREENS:
        path = outdir / f"{name}.png"
        assert path.is_file(), f"missing screenshot {path}"
        image = QImage(str(path))
        assert not image.isNull()
        dialog = name == "06-confirm-release" or name[:2] in ("11", "12", "13", "14", "20", "21", "24")
        assert image.width() >= (300 if dialog else min_width), (name, image.width())
        small = image.scaled(64, 40)
        colours = {small.pixel(x, y) for x in range(small.width()) for y in range(small.height())}
        assert len(colours) > 20, f"{name} looks blank ({len(colours)} colours)"


@pytest.mark.xvfb
def test_every_screen_on_a_real_x_display(xvfb, tmp_path):
    outdir = Path(os.environ.get("DPGUI_SCREENSHOT_DIR", ROOT / "build" / "screenshots"))
    result = _run_screens(xvfb, outdir, tmp_path / "home")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "Traceback" not in result.stderr, result.stderr[-4000:]
    _check_images(outdir, 1000)


@pytest.mark.xvfb
def test_screens_at_200_percent_scaling_in_dark_mode(xvfb, tmp_path):
    outdir = Path(os.environ.get("DPGUI_SCREENSHOT_DIR", ROOT / "build" / "screenshots")) / "dark-200"
    result = _run_screens(xvfb, outdir, tmp_path / "home", "--appearance", "dark",
                          env_extra={"QT_SCALE_FACTOR": "2"})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    _check_images(outdir, 2000)
