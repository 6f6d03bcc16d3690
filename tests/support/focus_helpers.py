"""Shared steps of the tests of the plan step's region ("Where do you need accuracy?")."""

from __future__ import annotations

from gui_helpers import TIMEOUT


def settled(qtbot, page) -> None:
    qtbot.waitUntil(lambda: page.plan is not None and not page.is_planning(), timeout=TIMEOUT)


def choose(qtbot, page, key: str) -> None:
    before = page.plan
    page.focus.setCurrentIndex(page.focus.findData(key))
    qtbot.waitUntil(lambda: page.plan is not before, timeout=TIMEOUT)
    settled(qtbot, page)
