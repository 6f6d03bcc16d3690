"""Exporting a release (docs/privacy-model.md, "Signing and the ledger"): the folder proposed is a releases folder in
the user's documents, then the dataset's last export folder — never the confidential data's folder; the
dialog offers to create a signing key when there is none; a finished export says so with Open Folder, and
step 4's banner stops asking to export."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QTimer, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication

from dpgui.core.noise import SecureRandom

from gui_helpers import make_window, open_and_wait, release_and_wait, set_column

PASSPHRASE = "correct horse battery staple"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A home folder of its own (the documents folder is ``home/Documents``)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder / ".config"))
    return folder


@pytest.fixture
def released(qtbot, tmp_path, home):
    data = tmp_path / "confidential" / "people.csv"
    data.parent.mkdir()
    ages = np.random.default_rng(2).integers(0, 100, 300)
    data.write_text("age\n" + "\n".join(str(a) for a in ages) + "\n")
    window = make_window(qtbot)
    window.noise_source = SecureRandom  # only a secure release can be signed
    open_and_wait(qtbot, window, data)
    set_column(qtbot, window, "age", "0", "100", "20")
    release_and_wait(qtbot, window)
    return window


def create_key_in_the_form(dialog) -> None:
    """Press "Create a Signing Key…" and fill the form that opens, as the officer would."""
    def fill() -> None:
        form = dialog.key_form
        if form is None or not form.isVisible():
            QTimer.singleShot(20, fill)
            return
        if form.create_from("officer-2026", PASSPHRASE, PASSPHRASE) is not None:
            form.accept()

    QTimer.singleShot(20, fill)
    dialog.create_key_button.click()


def test_export_folder_key_offer_done_box_and_banner(qtbot, released, home, tmp_path, monkeypatch):
    window = released
    releases = home / "Documents" / "dpgui releases"
    dialog = window.cdf.export_dialog()
    assert dialog is not None and Path(dialog.folder.text()) == releases  # not the confidential data's folder
    assert not releases.exists()  # made when the bundle is written into it
    # no key yet: the dialog offers to make one, and chooses it
    assert not dialog.create_key_button.isHidden() and not dialog.export_button.isEnabled()
    assert "Create a Signing Key" in dialog.message.text()
    create_key_in_the_form(dialog)
    assert dialog.key.currentText().startswith("officer-2026") and dialog.export_button.isEnabled()
    assert dialog.create_key_button.isHidden() and dialog.message.text() == ""
    dialog.passphrase.setText(PASSPHRASE)
    paths = dialog.export()
    assert paths is not None and paths.manifest.parent == releases and paths.manifest.exists()
    opened: list[QUrl] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
    window.after_bundle_export(dialog)
    box = window.exported_box
    assert box.isVisible() and str(releases) in box.text()
    box.open_button.click()
    assert [u.toLocalFile() for u in opened] == [str(releases)]
    # the banner says where it went and no longer asks to export; so does the session's list
    status = window.release_status.text()
    assert "Exported as a signed bundle" in status and str(paths.manifest) in status
    assert "Export it as a signed bundle to share it" not in status
    assert window.session.releases.releases[0].signed_bundles == (paths.manifest,)
    # the dataset's next export proposes the folder of its last one; another dataset the releases folder
    elsewhere = tmp_path / "published"
    elsewhere.mkdir()
    again = window.cdf.export_dialog()
    assert Path(again.folder.text()) == releases
    again.folder.setText(str(elsewhere))
    again.name.setText("second")
    again.passphrase.setText(PASSPHRASE)
    assert again.export() is not None
    window.after_bundle_export(again)
    assert Path(window.cdf.export_dialog().folder.text()) == elsewhere
    from dpgui.app.dialogs.export import export_folder

    assert export_folder("another dataset") == releases


def test_csv_export_proposes_the_releases_folder_and_says_it_is_done(qtbot, released, home, monkeypatch):
    window = released
    from PySide6.QtWidgets import QFileDialog

    proposed: list[str] = []

    def choose(parent, caption, default, filters):
        proposed.append(default)
        return default, filters

    monkeypatch.setattr(QFileDialog, "getSaveFileName", choose)
    window.export_release()
    target = home / "Documents" / "dpgui releases" / "people-age-cdf.csv"
    assert proposed == [str(target)] and target.exists()
    assert window.exported_box.isVisible() and str(target) in window.exported_box.text()
    assert "Exported as a CSV file (not signed)" in window.release_status.text()
    QApplication.processEvents()


def test_a_hierarchy_export_proposes_the_releases_folder_and_the_banner_says_where_it_went(qtbot, home):
    from dpgui.report.keystore import create_key
    from gui_helpers import hierarchy_sample_released

    window = make_window(qtbot)
    window.noise_source = SecureRandom
    page = hierarchy_sample_released(qtbot, window)
    assert "Export it as a signed bundle to share it" in page.release_step.release_status.text()
    create_key("officer", PASSPHRASE)
    dialog = page.release_step.export_dialog()
    releases = home / "Documents" / "dpgui releases"
    assert Path(dialog.folder.text()) == releases and dialog.create_key_button.isHidden()
    dialog.passphrase.setText(PASSPHRASE)
    paths = dialog.export()
    assert paths is not None and paths.manifest.parent == releases
    window.after_bundle_export(dialog)
    assert window.exported_box.isVisible()
    status = page.release_step.release_status.text()
    assert "Exported as a signed bundle" in status and "Export it as a signed bundle to share it" not in status
