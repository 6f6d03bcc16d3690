"""Every test gets its own dpgui home (keys, ledger, autosaves): the real one is never touched."""

import pytest


@pytest.fixture(autouse=True)
def _isolated_dpgui_home(tmp_path, monkeypatch):
    monkeypatch.setenv("DPGUI_HOME", str(tmp_path / "dpgui-home"))
