"""Signing keys, for the privacy officer: list, create, import and export them.

Every step that needs a file dialog has a twin that takes the path directly (``create_key_from``,
``import_from``, ``export_to``), so tests and scripts never open a modal window. Errors are shown
in plain words in the dialog (``last_error``), never as a traceback.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QFont, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QHeaderView, QInputDialog,
    QLabel, QLineEdit, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from dpgui.app.widgets.fields import StatusLine, StatusMessages, grow_to_fit, inline_message, show_inline
from dpgui.app.text import friendly, plain_text
from dpgui.errors import DpguiError, ParameterError
from dpgui.report.keystore import (PUBLIC_SUFFIX, SECRET_SUFFIX, KeyEntry, KeyFiles, create_key, export_public_key,
                                   import_public_key, import_secret_key, keys_dir, list_keys)
from dpgui.report.signing import MIN_PASSPHRASE_CHARS

KEYS_HELP = (
    "A key signs your releases, so that anyone can check a release came from you and was not changed. "
    "Keys that can sign are yours; keys marked “public only” were imported to check other people's releases. "
    "A key made on the command line ('dpgui key create') is added with “Import signing key…”."
)
CREATE_HELP = (
    "The secret key never leaves this computer and is locked with the passphrase. "
    "The passphrase cannot be recovered: if you forget it, the key can no longer sign."
)
KIND_SIGN = "Can sign (yours)"
KIND_PUBLIC = "Public only (imported)"
KIND_TOOLTIPS = {
    KIND_SIGN: "This computer has the secret key (locked with your passphrase): you can sign releases with it.",
    KIND_PUBLIC: "Only the public key is here: you can check releases signed with it, not sign.",
}
KEY_ID_TOOLTIP = "The key id names the key. A signed release says which key id signed it; compare it with this one."
NAME_TOOLTIP = "Letters, digits, '-', '_' or '.'; for example officer-2026. The files are NAME.key and NAME.pub."
COLUMNS = ("Name", "Key id", "Kind")


def _mono_font() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def _field(edit: QLineEdit) -> tuple[QWidget, QLabel]:
    """A line edit with a hidden red message under it, as one widget for a form row."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    layout.addWidget(edit)
    message = inline_message(box)
    layout.addWidget(message)
    return box, message


class CreateKeyDialog(QDialog):
    """The small form behind "Create key…": a name and the passphrase typed twice.

    ``create_from(name, passphrase, repeat)`` fills the fields and tries; problems appear in red
    under the field they concern (``messages()``), and the dialog stays open.
    """

    def __init__(self, parent: QWidget | None = None, directory: Path | None = None) -> None:
        super().__init__(parent)
        self.directory = directory
        self.created: KeyFiles | None = None
        self.setWindowTitle("Create a signing key")
        help_label = QLabel(CREATE_HELP)
        help_label.setWordWrap(True)
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("e.g. officer-2026")
        self.name_edit.setToolTip(NAME_TOOLTIP)
        self.passphrase_edit = QLineEdit()
        self.repeat_edit = QLineEdit()
        for edit in (self.passphrase_edit, self.repeat_edit):
            edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase_edit.setPlaceholderText(f"at least {MIN_PASSPHRASE_CHARS} characters")
        self.passphrase_edit.setToolTip("Several unrelated words make a strong passphrase that is easy to remember.")
        self.repeat_edit.setPlaceholderText("the same passphrase again")
        self.repeat_edit.setToolTip("Type the passphrase again, to be sure there is no typing mistake.")
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self._messages: dict[str, QLabel] = {}
        for key, label, edit in (("name", "Key name:", self.name_edit), ("passphrase", "Passphrase:", self.passphrase_edit),
                                 ("repeat", "Repeat passphrase:", self.repeat_edit)):
            box, message = _field(edit)
            self._messages[key] = message
            form.addRow(label, box)
            edit.textEdited.connect(lambda _text, k=key: self._clear(k))
        self.general_message = inline_message(self)
        self._messages["general"] = self.general_message
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.create_button = self.buttons.addButton("Create key", QDialogButtonBox.ButtonRole.AcceptRole)
        self.create_button.setDefault(True)
        self.buttons.accepted.connect(self._on_create)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(help_label)
        layout.addLayout(form)
        layout.addWidget(self.general_message)
        layout.addWidget(self.buttons)
        self.resize(520, 10)
        grow_to_fit(self)

    # ------------------------------------------------------------------ messages
    def messages(self) -> dict[str, str]:
        """The red messages now shown, by field: "name", "passphrase", "repeat", "general"."""
        return {key: label.text() for key, label in self._messages.items() if label.text()}

    def _show(self, key: str, message: str) -> None:
        show_inline(self._messages[key], message)
        edit = {"name": self.name_edit, "passphrase": self.passphrase_edit, "repeat": self.repeat_edit}.get(key)
        if edit is not None:
            edit.setStyleSheet("border: 1px solid #C0392B;" if message else "")
            edit.setAccessibleDescription(message)

    def _clear(self, key: str) -> None:
        self._show(key, "")
        self._show("general", "")

    # ------------------------------------------------------------------ creating
    def reset(self) -> None:
        """Empty fields, no messages (before the form is shown again)."""
        for edit in (self.name_edit, self.passphrase_edit, self.repeat_edit):
            edit.clear()
        for key in self._messages:
            self._show(key, "")
        self.created = None

    def _on_create(self) -> None:
        if self.create_from_fields() is not None:
            self.accept()

    def create_from(self, name: str, passphrase: str, repeat: str) -> KeyFiles | None:
        """Fill the form and create the key; None (with the messages shown) if anything is wrong."""
        self.name_edit.setText(name)
        self.passphrase_edit.setText(passphrase)
        self.repeat_edit.setText(repeat)
        return self.create_from_fields()

    def create_from_fields(self) -> KeyFiles | None:
        """Create the key from the fields; None (messages shown under the fields) if refused."""
        files = self._create()
        if files is None:
            grow_to_fit(self)
        return files

    def _create(self) -> KeyFiles | None:
        for key in self._messages:
            self._show(key, "")
        name = self.name_edit.text().strip()
        passphrase, repeat = self.passphrase_edit.text(), self.repeat_edit.text()
        ok = True
        if not name:
            self._show("name", "Enter a name for the key, e.g. officer-2026.")
            ok = False
        else:
            folder = keys_dir() if self.directory is None else Path(self.directory)
            if (folder / (name + SECRET_SUFFIX)).exists() or (folder / (name + PUBLIC_SUFFIX)).exists():
                self._show("name", f"A key named “{name}” already exists. Choose another name.")
                ok = False
        if len(passphrase) < MIN_PASSPHRASE_CHARS:
            self._show("passphrase", f"The passphrase has {len(passphrase)} characters; at least "
                                     f"{MIN_PASSPHRASE_CHARS} are needed. Several unrelated words work well.")
            ok = False
        elif repeat != passphrase:
            self._show("repeat", "The two passphrases are different. Type the same passphrase twice.")
            ok = False
        if not ok:
            return None
        QGuiApplication.setOverrideCursor(Qt.CursorShape.BusyCursor)  # scrypt takes a fraction of a second
        try:
            files = create_key(name, passphrase, self.directory)
        except ParameterError as err:  # the name (the passphrase was checked above)
            self._show("name", friendly(err))
            return None
        except (DpguiError, OSError) as err:
            self._show("general", friendly(err))
            return None
        finally:
            QGuiApplication.restoreOverrideCursor()
        self.created = files
        self.passphrase_edit.clear()
        self.repeat_edit.clear()
        return files


class KeyManagerDialog(StatusMessages, QDialog):
    """The keys in the key folder, and the buttons to create, import and export keys.

    Testable without modal windows: ``create_key_from``, ``import_from``, ``export_to``,
    ``refresh``, ``keys()``, ``selected_key()``; the last message is in ``last_message`` or
    ``last_error`` (plain words).
    """

    def __init__(self, parent: QWidget | None = None, directory: Path | None = None) -> None:
        super().__init__(parent)
        self.directory = directory
        self._entries: list[KeyEntry] = []
        self.create_form: CreateKeyDialog | None = None
        self._import_name_problem = False
        self.setWindowTitle("Signing keys")
        help_label = QLabel(KEYS_HELP)
        help_label.setWordWrap(True)
        self.folder_label = plain_text(QLabel())  # a path, shown literally
        self.folder_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.folder_label.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        for column, tip in enumerate((NAME_TOOLTIP, KEY_ID_TOOLTIP, "Whether this computer can sign with the key.")):
            header_item = self.table.horizontalHeaderItem(column)
            assert header_item is not None, "setHorizontalHeaderLabels made one for each column"
            header_item.setToolTip(tip)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.empty_label = QLabel("No keys yet. Create a key to sign your releases, or import someone's public key "
                                  "to check theirs.")
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)

        self.create_button = QPushButton("Create key…")
        self.create_button.setToolTip("Make a new key pair to sign your releases.")
        self.import_button = QPushButton("Import public key…")
        self.import_button.setToolTip("Add someone's public key (.pub file) to check releases they signed.")
        self.import_signing_button = QPushButton("Import signing key…")
        self.import_signing_button.setToolTip("Add your own secret key (.key file, e.g. made with 'dpgui key create') "
                                              "so that the app can sign your releases with it.")
        self.export_button = QPushButton("Export public key…")
        self.export_button.setToolTip("Save the selected key's public key (.pub) to share with whoever checks your "
                                      "releases. The secret key is never exported.")
        self.folder_button = QPushButton("Show folder")
        self.folder_button.setToolTip("Open the key folder in your file manager.")
        self.create_button.clicked.connect(self.create_key)
        self.import_button.clicked.connect(self.import_key)
        self.import_signing_button.clicked.connect(self.import_signing_key)
        self.export_button.clicked.connect(self.export_key)
        self.folder_button.clicked.connect(self.show_folder)
        buttons = QHBoxLayout()
        for button in (self.create_button, self.import_signing_button, self.import_button, self.export_button,
                       self.folder_button):
            buttons.addWidget(button)
        buttons.addStretch(1)

        self.message = StatusLine()
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(help_label)
        layout.addWidget(self.folder_label)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.empty_label, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addWidget(close)
        self.resize(640, 400)
        self.refresh()

    # ------------------------------------------------------------------ state
    def folder(self) -> Path:
        return keys_dir() if self.directory is None else Path(self.directory)

    def keys(self) -> list[KeyEntry]:
        """The keys shown, in table order."""
        return list(self._entries)

    def row_texts(self) -> list[tuple[str, str, str]]:
        """(name, key id, kind) of every row, as shown."""
        def cell(row: int, column: int) -> str:
            item = self.table.item(row, column)
            assert item is not None, "refresh() fills every cell of the rows it makes"
            return item.text()

        return [(cell(row, 0), cell(row, 1), cell(row, 2)) for row in range(self.table.rowCount())]

    def selected_key(self) -> KeyEntry | None:
        rows = self.table.selectionModel().selectedRows()
        return self._entries[rows[0].row()] if rows else None

    def select_key(self, name: str) -> None:
        for row, entry in enumerate(self._entries):
            if entry.name == name:
                self.table.selectRow(row)
                return

    def refresh(self) -> None:
        """Read the key folder again."""
        selected = self.selected_key()
        try:
            folder = self.folder()
            self._entries = list_keys(self.directory)
        except DpguiError as err:
            self._entries = []
            self._error(friendly(err))
            folder = None
        self.folder_label.setText(f"Key folder: {folder}" if folder is not None else "")
        self.table.setRowCount(len(self._entries))
        mono = _mono_font()
        for row, entry in enumerate(self._entries):
            kind = KIND_SIGN if entry.secret_path is not None else KIND_PUBLIC
            for column, value in enumerate((entry.name, entry.key_id_hex, kind)):
                item = QTableWidgetItem(value)
                item.setToolTip({0: str(entry.public_path), 1: KEY_ID_TOOLTIP, 2: KIND_TOOLTIPS[kind]}[column])
                if column == 1:
                    item.setFont(mono)
                self.table.setItem(row, column, item)
        self.table.setVisible(bool(self._entries))
        self.empty_label.setVisible(not self._entries)
        if selected is not None:
            self.select_key(selected.name)
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.export_button.setEnabled(self.selected_key() is not None)

    # ------------------------------------------------------------------ create
    def _form(self) -> CreateKeyDialog:
        if self.create_form is None:
            self.create_form = CreateKeyDialog(self, self.directory)
        return self.create_form

    @property
    def create_messages(self) -> dict[str, str]:
        """The inline messages of the create form, by field ("name", "passphrase", "repeat", "general")."""
        return self._form().messages()

    def create_key(self) -> None:
        """"Create key…": the form, modal; the new key is listed and selected."""
        form = self._form()
        form.reset()
        if form.exec() == QDialog.DialogCode.Accepted and form.created is not None:
            self._created(form.created)

    def create_key_from(self, name: str, passphrase: str, repeat: str) -> KeyFiles | None:
        """Create a key without showing the form; None when refused (see ``create_messages``)."""
        files = self._form().create_from(name, passphrase, repeat)
        if files is not None:
            self._created(files)
        return files

    def _created(self, files: KeyFiles) -> None:
        self.refresh()
        self.select_key(files.name)
        self._info(f"Created key “{files.name}” (key id {files.key_id_hex}). Keep the passphrase safe; "
                   "export the public key to give it to whoever checks your releases.")

    # ------------------------------------------------------------------ import
    def import_key(self) -> None:
        """"Import public key…": a file dialog, then the key is copied into the key folder."""
        path, _ = QFileDialog.getOpenFileName(self, "Import a public key", str(Path.home()),
                                              "Public keys (*.pub);;All files (*)")
        if not path:
            return
        name: str | None = None
        while self.import_from(path, name) is None and self._import_name_problem:
            name, ok = QInputDialog.getText(self, "Name for the imported key",
                                            self.last_error + "\n\nName to use for this key:",
                                            QLineEdit.EchoMode.Normal, name or Path(path).stem)
            if not ok or not name.strip():
                return
            name = name.strip()

    def import_from(self, path: str | Path, name: str | None = None) -> KeyEntry | None:
        """Import the public key file ``path`` (as ``name``, default: the file name); None on error."""
        self._import_name_problem = False
        if not Path(path).is_file():
            self._error(f"There is no file {path}. Choose the public key file (.pub) you received.")
            return None
        try:
            entry = import_public_key(Path(path), name, self.directory)
        except ParameterError as err:  # the name is not usable as a file name
            self._import_name_problem = True
            self._error(friendly(err))
            return None
        except DpguiError as err:
            self._import_name_problem = "already exists" in err.problem
            self._error(friendly(err))
            return None
        except OSError as err:
            self._cannot_import(path, err)
            return None
        kind = "your own key" if entry.secret_path is not None else "public only"
        return self._imported(entry, f"Imported key “{entry.name}” (key id {entry.key_id_hex}, {kind}). Check "
                                     "with its owner that this key id is theirs before trusting releases signed with it.")

    def _imported(self, entry: KeyEntry, message: str) -> KeyEntry:
        """After an import: the list shows the new key, selected, and ``message`` says what it is."""
        self.refresh()
        self.select_key(entry.name)
        self._info(message)
        return entry

    def _cannot_import(self, path: str | Path, err: OSError) -> None:
        self._error(f"Cannot import {path}: {err.strerror or err}.")

    def import_signing_key(self) -> None:
        """"Import signing key…": choose a .key file, type its passphrase; it is copied (still locked)
        into the key folder and can then sign in File → Export Signed Bundle."""
        path, _ = QFileDialog.getOpenFileName(self, "Import a signing key", str(Path.home()),
                                              "Secret keys (*.key);;All files (*)")
        if not path:
            return
        passphrase, ok = QInputDialog.getText(self, "Passphrase of the key",
                                              f"The passphrase of {Path(path).name} (to check that the key works):",
                                              QLineEdit.EchoMode.Password)
        if ok:
            self.import_signing_key_from(path, passphrase)

    def import_signing_key_from(self, path: str | Path, passphrase: str, name: str | None = None) -> KeyEntry | None:
        """Import the secret key file ``path`` (as ``name``, default: the file name); None on error."""
        if not Path(path).is_file():
            self._error(f"There is no file {path}. Choose your secret key file (.key).")
            return None
        try:
            entry = import_secret_key(Path(path), passphrase, name, self.directory)
        except DpguiError as err:
            self._error(friendly(err))
            return None
        except OSError as err:
            self._cannot_import(path, err)
            return None
        return self._imported(entry, f"Imported the signing key “{entry.name}” (key id {entry.key_id_hex}). It can "
                                     "now sign your releases (File → Export Signed Bundle), with the same passphrase.")

    # ------------------------------------------------------------------ export
    def export_key(self) -> None:
        """"Export public key…": save the selected key's .pub file where the user chooses."""
        entry = self.selected_key()
        if entry is None:
            self._error("Select a key in the list first, then export it.")
            return
        default = str(Path.home() / (entry.name + PUBLIC_SUFFIX))
        path, _ = QFileDialog.getSaveFileName(self, f"Export the public key {entry.name} ({entry.key_id_hex})",
                                              default, "Public keys (*.pub);;All files (*)")
        if path:
            self.export_to(entry.name, path)

    def export_to(self, name: str, path: str | Path) -> Path | None:
        """Write key ``name``'s public key to ``path`` (a file, or a folder to get NAME.pub); None on error."""
        entry = next((e for e in self._entries if e.name == name), None)
        try:
            written = export_public_key(entry if entry is not None else name, Path(path), self.directory)
        except DpguiError as err:
            self._error(friendly(err))
            return None
        except OSError as err:
            self._error(f"Cannot write {path}: {err.strerror or err}. Choose another place.")
            return None
        key_id = f" (key id {entry.key_id_hex})" if entry is not None else ""
        self._info(f"Saved the public key of “{name}”{key_id} to {written}. Share this file with whoever checks your "
                   "releases; the secret key stays on this computer.")
        return Path(written)

    # ------------------------------------------------------------------ folder
    def show_folder(self) -> None:
        try:
            folder = self.folder()
        except DpguiError as err:
            self._error(friendly(err))
            return
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
            self._info(f"The key folder is {folder}.")
