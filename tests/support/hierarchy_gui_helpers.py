"""Shared steps of the hierarchy mode's GUI tests."""

from __future__ import annotations

from gui_helpers import TIMEOUT, click_release_in_confirmation


def release_and_wait(qtbot, window) -> None:
    page = mode(window)
    before = page.state_ws.state.outcome
    click_release_in_confirmation("Release")
    window.release()
    qtbot.waitUntil(lambda: page.state_ws.state.outcome is not before and page.release_step.release_worker is None,
                    timeout=TIMEOUT)


def mode(window):
    return window.hierarchy
