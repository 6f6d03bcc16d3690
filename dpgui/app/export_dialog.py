"""Export a release as a signed bundle: CSV + PDF + manifest + minisign signature.

The dialog asks for a folder, a bundle name, the signing key and its passphrase. Exporting
spends no budget (the release is already recorded in the ledger) and can be repeated; it never
overwrites an existing bundle. The bundle is written by :func:`dpgui.report.publish.sign_release`:
only a release the budget ledger confirms is signed, and the ledger points to the bundle (if it
cannot, the files are removed and the dialog says so).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel,
                               QLineEdit, QPushButton, QVBoxLayout, QWidget)

from dpgui.app.fields import inline_message, show_inline
from dpgui.app.pdf_report import render_release_pdf
from dpgui.app.text import friendly
from dpgui.core.mechanism import Release
from dpgui.errors import DpguiError
from dpgui.report.bundle import BundlePaths, ReleaseInfo, check_bundle_name, check_bundle_target, default_bundle_name
from dpgui.report.files import check_outside_input_folders
from dpgui.report.keystore import KeyEntry, list_keys, load_secret_key
from dpgui.report.ledger import Ledger
from dpgui.report.publish import BundleNotRecorded, sign_release
from dpgui.report.signing import SecretKey

EXPORT_HELP = (
    "Writes four files: the released numbers (.csv), a readable report (.pdf), a manifest of the "
    "parameters (.manifest.json) and its signature (.minisig). Anyone with your public key can check "
    "that the files are exactly what you released. Exporting spends no budget."
)


class BundleExportDialog(QDialog):
    """Choose folder, name and key; ``export()`` writes the bundle with :meth:`sign_bundle` and returns
    its paths (or None). The one Export dialog: :class:`ExportDialog` signs a CDF release,
    :class:`~dpgui.app.hierarchy_export.HierarchyExportDialog` a hierarchy release."""

    def __init__(self, folder: str, default_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export signed bundle")
        self.paths: BundlePaths | None = None
        #: folders the data is read from (a Parquet folder, a local Spark dataset): no bundle goes inside them
        self.input_folders: list[str] = []
        intro = QLabel(EXPORT_HELP)
        intro.setWordWrap(True)

        self.folder = QLineEdit(folder)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._choose_folder)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(browse)
        self.name = QLineEdit(default_name)
        self.name.setToolTip("The four files are called NAME.csv, NAME.pdf, NAME.manifest.json and "
                             "NAME.manifest.json.minisig.")
        self.key = QComboBox()
        self.key.setToolTip("The key that signs the bundle. Create one in Tools → Signing keys.")
        self.passphrase = QLineEdit()
        self.passphrase.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase.setToolTip("The passphrase you chose when you created the key.")
        self.message = inline_message(self)

        form = QFormLayout()
        form.addRow("Folder:", folder_row)
        form.addRow("Bundle name:", self.name)
        form.addRow("Signing key:", self.key)
        form.addRow("Passphrase:", self.passphrase)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self._on_export)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.setMinimumWidth(560)
        self.refresh_keys()

    def refresh_keys(self) -> None:
        self.key.clear()
        self._keys: list[KeyEntry] = [k for k in list_keys() if k.secret_path is not None]
        for entry in self._keys:
            self.key.addItem(f"{entry.name}  (key id {entry.key_id_hex})")
        if not self._keys:
            self.key.addItem("No signing key yet — create one in Tools → Signing keys")
        self.key.setEnabled(bool(self._keys))
        self.export_button.setEnabled(bool(self._keys))

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Folder for the bundle", self.folder.text())
        if folder:
            self.folder.setText(folder)

    def _on_export(self) -> None:
        if self.export() is not None:
            self.accept()

    def export(self) -> BundlePaths | None:
        """Decrypt the key, render the PDF and write the bundle; on failure say why inline."""
        show_inline(self.message, "")
        if not self._keys:
            show_inline(self.message, "There is no signing key yet. Create one in Tools → Signing keys.")
            return None
        entry = self._keys[self.key.currentIndex()]
        assert entry.secret_path is not None
        from PySide6.QtWidgets import QApplication

        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            name = check_bundle_name(self.name.text().strip())
            check_outside_input_folders(self.folder.text().strip(), self.input_folders)
            check_bundle_target(self.folder.text().strip(), name)
            key = load_secret_key(entry.secret_path, self.passphrase.text())
            with Ledger() as ledger:
                self.paths = self.sign_bundle(ledger, self.folder.text().strip(), name, key)
        except (DpguiError, OSError) as err:
            written = "" if isinstance(err, BundleNotRecorded) else " Nothing was written."  # it says what was removed
            show_inline(self.message, friendly(err) + written)
            return None
        finally:
            QApplication.restoreOverrideCursor()
        self.passphrase.clear()
        return self.paths

    def sign_bundle(self, ledger: Ledger, folder: str, name: str, key: SecretKey) -> BundlePaths:
        """Render the PDF with ``key``'s id and sign the bundle (the release kind's own publish call)."""
        raise NotImplementedError

    def bundle_folder(self) -> Path:
        return Path(self.folder.text().strip())


class ExportDialog(BundleExportDialog):
    """The Export dialog of a CDF release (:func:`dpgui.report.publish.sign_release`)."""

    def __init__(self, release: Release, info: ReleaseInfo, folder: str, parent: QWidget | None = None) -> None:
        super().__init__(folder, default_bundle_name(info), parent)
        self._release = release
        self._info = info

    def sign_bundle(self, ledger: Ledger, folder: str, name: str, key: SecretKey) -> BundlePaths:
        pdf = render_release_pdf(self._release, self._info, key.public_key.key_id_hex)
        return sign_release(ledger, folder, name, self._release, self._info, pdf, key)
