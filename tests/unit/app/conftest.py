"""GUI tests run headless: Qt's offscreen platform unless a test starts Xvfb itself."""

import gc
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_SCALE_FACTOR_ROUNDING_POLICY", "PassThrough")

import pytest


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    """QSettings and user files of the app go to a temporary folder, never the real profile."""
    monkeypatch.setenv("DPGUI_HOME", str(tmp_path / "dpgui-home"))
    from PySide6.QtCore import QSettings

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))


@pytest.fixture(autouse=True)
def _automatic_gc_after_each_test():
    """The app turns Python's automatic garbage collection off (its GuiThreadCollector collects on
    the GUI thread) and freezes the objects alive after its start-up; in this one long process that
    would last into the next tests and keep every earlier test's garbage for good. The test's workers finish
    first."""
    yield
    from PySide6.QtCore import QThreadPool

    # a test's workers (a plan's projection started when its data opened) end with it: a collection in the next
    # test must never destroy a window whose worker still runs
    QThreadPool.globalInstance().waitForDone(120_000)
    gc.unfreeze()
    gc.enable()
