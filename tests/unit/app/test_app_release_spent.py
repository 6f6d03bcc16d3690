"""The window says "Nothing was spent" only when the ledger holds no entry for the release."""

from __future__ import annotations

import numpy as np
import pytest

from dpgui.report.ledger import Ledger

from gui_helpers import error_text, make_window, release_and_wait_for_error, sample_window_planned, wait_plan


class BrokenSampler:
    """A random source that fails when the noise is drawn, i.e. after the spend was recorded."""

    secure = True

    def uint64(self, n: int) -> np.ndarray:
        raise RuntimeError("the random source failed")


@pytest.fixture
def sample_window(qtbot):
    window = sample_window_planned(qtbot)
    with Ledger() as ledger:
        ledger.set_cap("flights", 5.0, 0.0, "test")
    return window


def test_a_release_that_fails_after_the_spend_says_it_was_spent(qtbot, sample_window):
    window = sample_window
    window.noise_source = BrokenSampler
    release_and_wait_for_error(qtbot, window)
    with Ledger() as ledger:
        entries = ledger.releases("flights")
    assert len(entries) == 1  # the spend was recorded before the noise failed
    message = error_text(window)
    assert "Nothing was spent" not in message, message
    assert entries[0].release_id in message and "stays spent" in message


def test_a_release_that_fails_before_the_spend_says_nothing_was_spent(qtbot, sample_window):
    window = sample_window

    def no_source():
        raise RuntimeError("no random source")  # called before the spend is recorded

    window.noise_source = no_source
    release_and_wait_for_error(qtbot, window)
    with Ledger() as ledger:
        assert ledger.releases("flights") == []
    assert error_text(window).endswith("Nothing was spent.")


def test_export_never_overwrites_the_open_data_file(qtbot, tmp_path):
    """An output never replaces the input: exporting the released CSV onto the confidential input is refused."""
    import shutil

    from dpgui.data.sample import sample_dataset_path
    from gui_helpers import release_and_wait

    sample = sample_dataset_path()
    data = tmp_path / sample.name
    for extra in sample.parent.glob(sample.name.split(".")[0] + ".*"):
        shutil.copy(extra, tmp_path / extra.name)
    window = make_window(qtbot, seed=3)
    window.open_file(str(data), column="distance")
    qtbot.waitUntil(lambda: window.table is not None, timeout=30_000)
    qtbot.waitUntil(lambda: window.data_page.current_column() is not None, timeout=10_000)
    wait_plan(qtbot, window, 1000)
    release_and_wait(qtbot, window)
    before = data.read_bytes()
    assert not window.cdf.export_to(str(data))
    assert "input" in error_text(window) and data.read_bytes() == before
    assert window.cdf.export_to(str(tmp_path / "cdf.csv"))
