"""The budget ledger in the window: the first release asks for the dataset's total budget, a
release that does not fit is refused before anything happens, every release is recorded under
the dataset name of step 1, and the exported signed bundle verifies and is pointed to."""

from __future__ import annotations

import pytest

from dpgui.core.noise import SecureRandom
from dpgui.report.bundle import verify_bundle
from dpgui.report.keystore import create_key, load_public_key
from dpgui.report.ledger import Ledger, NoCapSet

from gui_helpers import error_text, release_and_wait, sample_window_planned


@pytest.fixture
def sample_window(qtbot):
    window = sample_window_planned(qtbot)
    return window


def test_the_first_release_asks_for_the_budget_and_cancel_spends_nothing(qtbot, sample_window):
    window = sample_window
    assert window.data_page.dataset_name.text() == "flights"
    window.data_page.dataset_name.setText("flights-2013")
    asked = []
    window.ask_cap = lambda dataset, epsilon, delta=0.0: asked.append((dataset, epsilon)) or None  # the officer cancels
    window.release()
    assert asked == [("flights-2013", 1.0)]
    assert window.cdf.outcome is None and "no budget was set" in window.statusBar().currentMessage()
    with Ledger() as ledger, pytest.raises(NoCapSet):
        ledger.totals("flights-2013")

    window.ask_cap = lambda dataset, epsilon, delta=0.0: 1.5
    release_and_wait(qtbot, window)
    with Ledger() as ledger:
        totals = ledger.totals("flights-2013")
        assert totals.cap_epsilon == 1.5 and totals.epsilon_spent == pytest.approx(1.0) and totals.releases == 1
        entry = ledger.releases("flights-2013")[0]
        assert ledger.cap_history("flights-2013")[0].reason  # setting the first cap is logged with a reason
    assert entry.release_id == window.cdf.outcome.release_id

    # 0.5 left: a second release at ε = 1 is refused before the confirmation; nothing is spent
    before = window.cdf.outcome
    window.ask_cap = lambda dataset, epsilon, delta=0.0: pytest.fail("the cap exists: it must not be asked again")
    window.release()
    assert window.cdf.outcome is before
    assert "Not enough privacy budget left" in error_text(window) and "ε = 0.5 remains" in error_text(window)
    with Ledger() as ledger:
        assert ledger.totals("flights-2013").releases == 1


def test_confirmation_states_the_budget_before_and_after(sample_window):
    window = sample_window
    with Ledger() as ledger:
        ledger.set_cap("flights", 3.0, 0.0, "test")
    box = window.cdf.confirmation_box(window.cdf.release_inputs())
    assert "Budget of dataset 'flights'" in box.text()
    assert "ε = 0 of 3 spent so far" in box.text() and "after this release: ε = 1 of 3" in box.text()


def test_export_signed_bundle_from_the_window_verifies_and_is_recorded(qtbot, sample_window, tmp_path):
    window = sample_window
    window.noise_source = SecureRandom  # only a release with secure noise may be signed
    release_and_wait(qtbot, window)
    assert window.cdf.outcome.release.secure
    assert window.export_button.isEnabled() and window.export_bundle_action.isEnabled()
    key = create_key("officer", "window test passphrase")
    dialog = window.cdf.export_dialog()
    out = tmp_path / "out"
    out.mkdir()
    dialog.folder.setText(str(out))
    dialog.passphrase.setText("wrong passphrase")
    assert dialog.export() is None and "passphrase" in dialog.message.text().lower()
    assert list(out.iterdir()) == []  # nothing half-written
    dialog.passphrase.setText("window test passphrase")
    paths = dialog.export()
    assert paths is not None, dialog.message.text()
    window.after_bundle_export(dialog)
    result = verify_bundle(paths.manifest, load_public_key(key.public_path))
    assert result.ok, result.failure
    assert result.manifest["release_id"] == window.cdf.outcome.release_id
    assert result.manifest["dataset"] == "flights" and result.manifest["random_source"] == "os_csprng"
    with Ledger() as ledger:
        assert ledger.release(window.cdf.outcome.release_id).bundle == str(paths.manifest.resolve())
