"""Export a release as a signed bundle: CSV + PDF + manifest + minisign signature.

The dialog asks for a folder, a bundle name, the signing key and its passphrase (and offers to create
a key when there is none). The folder proposed is where the dataset's last export went, else a
"dpgui releases" folder in the user's documents — never the confidential data's own folder
(:func:`export_folder`). Exporting
spends no budget (the release is already recorded in the ledger) and can be repeated; it never
overwrites an existing bundle. The bundle is written by the release flow's last step
(:meth:`dpgui.workspace.flow.ReleaseFlow.sign`, the statistic's own signing): only a release the budget
ledger confirms is signed, and the ledger points to the bundle (if it cannot, the files are removed and
the dialog says so).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from PySide6.QtCore import QSettings, QStandardPaths, Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QMessageBox,
    QPushButton, QVBoxLayout, QWidget,
)

from dpgui.app.dialogs.keys import CreateKeyDialog
from dpgui.app.text import friendly, plain_text
from dpgui.app.widgets.fields import inline_message, show_inline
from dpgui.core.mechanism import Release
from dpgui.errors import DpguiError
from dpgui.pdf.sections import report_pdf
from dpgui.report.bundle import BundlePaths, check_bundle_name, check_bundle_target
from dpgui.report.cdf.bundle import ReleaseInfo, default_bundle_name
from dpgui.report.files import check_outside_input_folders
from dpgui.report.keystore import KeyEntry, list_keys, load_secret_key
from dpgui.report.publish import BundleNotRecorded
from dpgui.report.signing import SecretKey
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.statistics.cdf import CDF

EXPORT_HELP = (
    "Writes four files: the released numbers (.csv), a readable report (.pdf), a manifest of the "
    "parameters (.manifest.json) and its signature (.minisig). Anyone with your public key can check "
    "that the files are exactly what you released. Exporting spends no budget."
)
RELEASES_FOLDER_NAME = "dpgui releases"
EXPORT_FOLDERS_GROUP = "export_folders"  # QSettings group: the last export folder of each dataset
NO_KEY_MESSAGE = ("A bundle is signed with your own signing key, and you have none yet: press “Create a Signing "
                  "Key…” (it stays on this computer, protected by a passphrase you choose).")


def default_releases_folder() -> Path:
    """``<the user's documents>/dpgui releases`` (the home folder's if the system names no documents folder)."""
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return Path(documents or Path.home()) / RELEASES_FOLDER_NAME


def _folder_key(dataset: str) -> str:
    return f"{EXPORT_FOLDERS_GROUP}/{quote(dataset, safe='')}"  # a "/" in a name would open a settings group


def export_folder(dataset: str) -> Path:
    """The folder to propose for an export of a release of ``dataset``: where its last export went (if that
    folder still exists), else :func:`default_releases_folder` (made when the export writes into it)."""
    remembered = QSettings().value(_folder_key(dataset))
    if remembered and Path(str(remembered)).is_dir():
        return Path(str(remembered))
    return default_releases_folder()


def remember_export_folder(dataset: str, folder: Path) -> None:
    """The next export of a release of ``dataset`` proposes ``folder``."""
    QSettings().setValue(_folder_key(dataset), str(folder))


def make_releases_folder(folder: Path) -> None:
    """Create ``folder`` if it is the default releases folder and missing (any other folder must exist:
    a mistyped folder is said, not made). Raises OSError."""
    if folder == default_releases_folder() and not folder.exists():
        folder.mkdir(parents=True, exist_ok=True)


def csv_export_default(dataset: str, name: str) -> Path:
    """The file name to propose for a CSV export of a release of ``dataset``: ``name`` in
    :func:`export_folder` (the default releases folder is made, so that the file dialog opens in it)."""
    folder = export_folder(dataset)
    try:
        make_releases_folder(folder)
    except OSError:
        pass  # the file dialog then starts elsewhere; the officer chooses
    return folder / name


class ExportedBox(QMessageBox):
    """The box of :func:`exported_box`, with its Open Folder button."""

    open_button: QPushButton


def exported_box(parent: QWidget, title: str, message: str, folder: Path) -> ExportedBox:
    """"Exported …" with Open Folder (the system's file manager at ``folder``) and OK."""
    box = ExportedBox(QMessageBox.Icon.Information, title, message, parent=parent)
    plain_text(box)  # the message quotes paths literally
    box.open_button = box.addButton("&Open Folder", QMessageBox.ButtonRole.ActionRole)
    box.open_button.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))))
    box.addButton(QMessageBox.StandardButton.Ok)
    box.setDefaultButton(QMessageBox.StandardButton.Ok)
    box.setEscapeButton(QMessageBox.StandardButton.Ok)  # else Escape and the title bar's close do nothing
    return box


class BundleExportDialog(QDialog):
    """Choose folder, name and key; ``export()`` writes the bundle with :meth:`sign_bundle` and returns
    its paths (or None). The one Export dialog: :class:`ExportDialog` signs a CDF release,
    :class:`~dpgui.app.hierarchy.export_dialog.HierarchyExportDialog` a hierarchy release."""

    def __init__(self, folder: str, default_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export signed bundle")
        self.paths: BundlePaths | None = None
        self.release_id = ""  # the budget ledger's id of the release exported, and the dataset that paid
        self.dataset = ""  # for it (both set by the kind's dialog)
        self.key_form: CreateKeyDialog | None = None
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
        self.create_key_button = QPushButton("&Create a Signing Key…")
        self.create_key_button.setToolTip("Make your signing key now: a name and a passphrase; it stays on this "
                                          "computer.")
        self.create_key_button.clicked.connect(self.create_key)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key, 1)
        key_row.addWidget(self.create_key_button)
        self.passphrase = QLineEdit()
        self.passphrase.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase.setToolTip("The passphrase you chose when you created the key.")
        self.message = inline_message(self)

        form = QFormLayout()
        form.addRow("Folder:", folder_row)
        form.addRow("Bundle name:", self.name)
        form.addRow("Signing key:", key_row)
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
            self.key.addItem("No signing key yet")
        self.key.setEnabled(bool(self._keys))
        self.export_button.setEnabled(bool(self._keys))
        self.create_key_button.setVisible(not self._keys)
        if not self._keys:
            show_inline(self.message, NO_KEY_MESSAGE)
        elif self.message.text() == NO_KEY_MESSAGE:
            show_inline(self.message, "")

    def create_key(self) -> None:
        """"Create a Signing Key…": the key form (Tools → Signing keys' own); the new key is then chosen."""
        form = CreateKeyDialog(self)
        self.key_form = form
        if form.exec() != QDialog.DialogCode.Accepted or form.created is None:
            return
        name = form.created.name
        self.refresh_keys()
        self.key.setCurrentIndex(next((i for i, k in enumerate(self._keys) if k.name == name), 0))
        self.passphrase.setFocus()

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
            show_inline(self.message, NO_KEY_MESSAGE)
            return None
        entry = self._keys[self.key.currentIndex()]
        assert entry.secret_path is not None
        from PySide6.QtWidgets import QApplication

        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            make_releases_folder(Path(self.folder.text().strip()))
            name = check_bundle_name(self.name.text().strip())
            check_outside_input_folders(self.folder.text().strip(), self.input_folders)
            check_bundle_target(self.folder.text().strip(), name)
            key = load_secret_key(entry.secret_path, self.passphrase.text())
            with ReleaseFlow.open(self.dataset) as flow:
                self.paths = self.sign_bundle(flow, self.folder.text().strip(), name, key)
        except (DpguiError, OSError) as err:
            written = "" if isinstance(err, BundleNotRecorded) else " Nothing was written."  # it says what was removed
            show_inline(self.message, friendly(err) + written)
            return None
        finally:
            QApplication.restoreOverrideCursor()
        self.passphrase.clear()
        return self.paths

    def sign_bundle(self, flow: ReleaseFlow, folder: str, name: str, key: SecretKey) -> BundlePaths:
        """Render the PDF with ``key``'s id and sign the bundle through ``flow`` (:meth:`ReleaseFlow.sign`
        with the release's statistic)."""
        raise NotImplementedError

    def bundle_folder(self) -> Path:
        return Path(self.folder.text().strip())


class ExportDialog(BundleExportDialog):
    """The Export dialog of a CDF release (:meth:`ReleaseFlow.sign` with :data:`~dpgui.workspace.statistics.cdf.CDF`)."""

    def __init__(self, release: Release, info: ReleaseInfo, folder: str, parent: QWidget | None = None) -> None:
        super().__init__(folder, default_bundle_name(info), parent)
        self._release = release
        self._info = info
        self.release_id, self.dataset = info.release_id, info.dataset

    def sign_bundle(self, flow: ReleaseFlow, folder: str, name: str, key: SecretKey) -> BundlePaths:
        pdf = report_pdf(CDF.kind, self._release, self._info, key.public_key.key_id_hex)
        return flow.sign(CDF, folder, name, self._release, self._info, pdf, key)
