"""File → Connect to a database…: a database URL, a table or one read-only query, the password
(kept in memory for this session only), a connection test and a preview of the first rows.

The password never goes into a project, an autosave, a manifest or the URL: the URL field refuses
a URL with a password in it (with the fix), and :class:`SessionPasswords` keeps what the officer
typed in memory until the window closes (optionally in the system keyring, if one works on this
computer). The database counts the rows itself (one aggregate query): only the K counts come back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QThread, Signal
from PySide6.QtWidgets import (
    QButtonGroup, QCheckBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QInputDialog, QLabel,
    QLineEdit, QPlainTextEdit, QPushButton, QRadioButton, QSizePolicy, QTableView, QVBoxLayout, QWidget,
)

from dpgui.app import text
from dpgui.app.widgets.fields import StatusLine, inline_message, show_inline
from dpgui.app.widgets.preview import FrameRows, PreviewModel
from dpgui.app.workers import Worker, WorkerPool
from dpgui.data.source import PasswordPrompt, open_source
from dpgui.data.source_spec import (
    SourceSpec, is_database_url, parse_source, sqlite_url, sqlite_url_example, sqlite_url_note,
)
from dpgui.data.table import ColumnInfo, TableInfo
from dpgui.errors import DpguiError
from dpgui.vocabulary import SourceKind

if TYPE_CHECKING:
    import pandas as pd

URL_PLACEHOLDER = "postgresql://user@host:5432/database"
URL_HELP = ("The database's address, without the password: postgresql://user@host:5432/database, "
            f"or {sqlite_url_example()} for an SQLite file on this computer (Browse… writes it for you; "
            "a path right after sqlite:/// without a leading / or drive is read from the current folder). "
            "Other databases work through SQLAlchemy (mysql://…, mssql+pyodbc://…) if their driver is installed.")
#: The grey line under the URL: the form of an SQLite file's URL on this system.
URL_HINT = f"Without the password. An SQLite file: {sqlite_url_example()}, or Browse…"
SQLITE_FILTER = "SQLite databases (*.db *.sqlite *.sqlite3 *.db3);;All files (*)"
QUERY_HELP = ("One read-only SELECT (for example: SELECT age, region FROM survey WHERE year = 2024). "
              "Queries that change the database are refused before they run.")
PASSWORD_HELP = ("Kept in memory until dpgui closes; never written to the project, the autosave, the "
                 "report or any file. Leave empty if the database needs none, or if DPGUI_DB_PASSWORD "
                 "or the system keyring has it.")
PREVIEW_ROWS = 100
PASSWORD_WAIT_S = 600.0  # a worker asking for a password gives up after this long (the window was closed)


# --------------------------------------------------------------------------------------------- passwords

def keyring_works() -> bool:
    """Does the ``keyring`` package have a usable backend here (not the "fail" or "null" one)?"""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return False
    try:
        backend = keyring.get_keyring()
    except Exception:  # noqa: BLE001 - a broken keyring configuration is the same as none
        return False
    name = type(backend).__module__ + "." + type(backend).__name__
    if isinstance(backend, fail.Keyring) or "null" in name.lower() or "fail" in name.lower():
        return False
    priority = getattr(backend, "priority", 1)
    return isinstance(priority, (int, float)) and priority > 0


def remember_in_keyring(url: str, password: str) -> str:
    """Store ``password`` for ``url`` in the system keyring (:func:`dpgui.data.credentials.remember_password`:
    service "dpgui", user name = the URL without password); returns "" or the one-line problem."""
    from dpgui.data.credentials import remember_password

    if not remember_password(url, password):
        return "The password was not stored in the system keyring; it is kept for this session only."
    return ""


def ask_password_dialog(parent: QWidget | None, display_url: str) -> str | None:
    """The window's question: the password of ``display_url`` (None: cancelled)."""
    password, ok = QInputDialog.getText(
        parent, "Database password", f"Password for {display_url}\n(kept in memory for this session only)",
        QLineEdit.EchoMode.Password)
    return password if ok else None


class SessionPasswords(QObject):
    """Database passwords typed in this session, in memory only, by database URL.

    :meth:`prompt_for` gives a :data:`~dpgui.data.source.PasswordPrompt` for one spec: it answers
    with the password typed for that URL, or asks the officer (``ask(display_url)``, on the GUI
    thread; from a worker thread the worker waits for the answer). ``ask`` may be replaced (tests)."""

    _asked = Signal(str, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._passwords: dict[str, str] = {}
        self._lock = threading.Lock()
        self._parent = parent
        self.ask: Callable[[str], str | None] = lambda url: ask_password_dialog(self._parent, url)
        self._asked.connect(self._answer, Qt.ConnectionType.QueuedConnection)

    def set(self, url: str, password: str) -> None:
        with self._lock:
            self._passwords[url] = password

    def get(self, url: str) -> str | None:
        with self._lock:
            return self._passwords.get(url)

    def forget(self, url: str) -> None:
        with self._lock:
            self._passwords.pop(url, None)

    def prompt_for(self, spec: SourceSpec) -> PasswordPrompt:
        """The password prompt for ``spec``'s database (kept: what the officer types)."""
        def prompt(display_url: str) -> str | None:
            known = self.get(spec.location)
            if known is not None:
                return known
            answer = self._ask_on_gui_thread(display_url)
            if answer is not None:
                self.set(spec.location, answer)
            return answer
        return prompt

    def _ask_on_gui_thread(self, display_url: str) -> str | None:
        if QThread.currentThread() is self.thread():
            return self.ask(display_url)
        box: dict[str, Any] = {"event": threading.Event(), "answer": None}
        self._asked.emit(display_url, box)
        box["event"].wait(PASSWORD_WAIT_S)
        answer: str | None = box["answer"]
        return answer

    def _answer(self, display_url: str, box: dict[str, Any]) -> None:
        try:
            box["answer"] = self.ask(display_url)
        finally:
            box["event"].set()


# --------------------------------------------------------------------------------------------- opening

class OpenedSource:
    """What opening a source found: its spec, columns, first rows, row count and engine words."""

    def __init__(self, spec: SourceSpec, columns: tuple[ColumnInfo, ...], preview: pd.DataFrame,
                 n_rows: int | None, engine: str) -> None:
        self.spec, self.columns, self.preview, self.n_rows, self.engine = spec, columns, preview, n_rows, engine

    def table_info(self) -> TableInfo:
        """A :class:`~dpgui.data.table.TableInfo` for the source: its ``path`` is only a name for messages and
        the dataset's default name (the table's name, or "query"), never a file (size 0)."""
        return TableInfo(Path(self.spec.table or "query"), "csv", tuple(self.columns), self.n_rows, 0)


def open_and_look(spec: SourceSpec, password_prompt: PasswordPrompt | None, progress: Callable[[float, str], None],
                  should_cancel: Callable[[], bool], count_rows: bool = True) -> OpenedSource:
    """Open ``spec`` (worker thread): its columns, the first :data:`PREVIEW_ROWS` rows, the row count
    (one COUNT(*) in a database; skipped with ``count_rows=False``) and who counts. Closes it again."""
    progress(0.0, f"Connecting to {spec.display_name()}…")
    with open_source(spec, password_prompt=password_prompt) as source:
        columns = source.columns()
        progress(0.3, f"Reading the first rows of {spec.display_name()}…")
        preview = source.preview(PREVIEW_ROWS)
        n_rows = None
        if count_rows:
            progress(0.6, f"Counting the rows of {spec.display_name()}…")
            n_rows = source.row_count(should_cancel=should_cancel)
        engine = source.engine
    progress(1.0, "Connected.")
    return OpenedSource(spec, columns, preview, n_rows, engine)


# --------------------------------------------------------------------------------------------- the dialog

def _hint(words: str, tooltip: str) -> QLabel:
    """A short grey line under a field; the longer explanation in its tooltip."""
    label = QLabel(words)
    label.setStyleSheet("color: #5f5f5f;")
    label.setToolTip(tooltip)
    return label


class DatabaseDialog(QDialog):
    """Connect to a database: URL, table or query, password; Test connection; preview; OK.

    After OK: :attr:`spec` (no secret in it) and :attr:`password` (in memory; the caller keeps it in
    the session's :class:`SessionPasswords`). :attr:`opened` is what the last successful test found."""

    def __init__(self, parent: QWidget | None = None, spec: SourceSpec | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect to a database")
        self.pool = WorkerPool()
        self.opened: OpenedSource | None = None
        self.spec: SourceSpec | None = None
        self.password = ""
        self._tested: tuple[SourceSpec, str] | None = None  # what self.opened was found for
        self._worker: Worker | None = None
        self._accept_after_test = False

        intro = QLabel("Read the data where it lives: the database counts the rows itself and sends back only "
                       "the bin counts, never the rows.")
        intro.setWordWrap(True)
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText(URL_PLACEHOLDER)
        self.url_edit.setToolTip(URL_HELP)
        self.url_edit.setAccessibleName("Database URL")
        self.url_help = _hint(URL_HINT, URL_HELP)
        self.url_message = inline_message(self)
        self.url_edit.textChanged.connect(self._check_url)
        self.browse_button = QPushButton("&Browse…")
        self.browse_button.setToolTip("Choose an SQLite database file on this computer; its URL is written for you.")
        self.browse_button.clicked.connect(self.browse_sqlite)

        self._build_table_or_query()

        self.password_edit = QLineEdit()
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.password_edit.setAccessibleName("Password")
        self.password_edit.setToolTip(PASSWORD_HELP)
        self.password_edit.setPlaceholderText("only if the database asks for one")
        self.remember = QCheckBox("Remember in the system &keyring")
        self.remember.setToolTip("Store the password in this computer's keyring (protected by your login), so "
                                 "that dpgui finds it next time. Without it, dpgui asks again after a restart.")
        self.remember.setVisible(keyring_works())
        password_help = _hint("Kept in memory until dpgui closes; never written to any file.", PASSWORD_HELP)

        self.test_button = QPushButton("Test &connection")
        self.test_button.setToolTip("Connect, list the columns and show the first rows (reads nothing else).")
        self.test_button.clicked.connect(lambda: self.test_connection())
        self.test_button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.status = StatusLine(self)
        self.preview = QTableView()
        self.preview.setAccessibleName("First rows of the table or query")
        self.preview.setToolTip(f"The first {PREVIEW_ROWS} rows, for your checking (only you see them).")
        self.preview.setAlternatingRowColors(True)
        self.preview.verticalHeader().setDefaultSectionSize(22)

        form = self._build_form(password_help)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.status, 1)
        test_row.addStretch(0)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Use this data")
        buttons.accepted.connect(self._on_ok)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addLayout(test_row)
        layout.addWidget(self.preview, 1)
        layout.addWidget(buttons)
        if spec is not None and spec.kind == SourceKind.DATABASE:
            self.url_edit.setText(spec.location)
            (self.table_radio if spec.table else self.query_radio).setChecked(True)
            self.table_edit.setText(spec.table or "")
            self.query_edit.setPlainText(spec.query or "")
            self.rows_public.setChecked(spec.row_count_public)
        self._on_kind(self.table_radio.isChecked())
        self.resize(760, 640)

    def _build_table_or_query(self) -> None:
        """What to read: a table, or one read-only SELECT query (with whether its row count may be published)."""
        self.table_radio = QRadioButton("&Table")
        self.query_radio = QRadioButton("&Query")
        self.table_radio.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.table_radio)
        group.addButton(self.query_radio)
        self.table_edit = QLineEdit()
        self.table_edit.setPlaceholderText("e.g. survey or public.survey")
        self.table_edit.setToolTip("The table (or view) to read; schema.table if it is not in the default schema.")
        self.table_edit.setAccessibleName("Table name")
        self.query_edit = QPlainTextEdit()
        self.query_edit.setPlaceholderText("SELECT age, region FROM survey WHERE year = 2024")
        self.query_edit.setToolTip(QUERY_HELP)
        self.query_edit.setAccessibleName("Query")
        self.query_edit.setFixedHeight(70)
        self.query_help = _hint("One read-only SELECT; queries that change the database are refused.", QUERY_HELP)
        self.rows_public = QCheckBox(text.QUERY_ROWS_PUBLIC_LABEL)
        self.rows_public.setToolTip(text.QUERY_ROWS_PUBLIC_HELP)
        self.rows_public_help = _hint("Tick it only if that number may be published; unticked, dpgui keeps it private.",
                                      text.QUERY_ROWS_PUBLIC_HELP)
        self.table_radio.toggled.connect(self._on_kind)

    def _build_form(self, password_help: QLabel) -> QFormLayout:
        """The URL, the table or query, and the password, as one form."""
        form = QFormLayout()
        url_row = QHBoxLayout()
        url_row.addWidget(self.url_edit, 1)
        url_row.addWidget(self.browse_button)
        url_label = QLabel("Database &URL:")
        url_label.setBuddy(self.url_edit)
        form.addRow(url_label, url_row)
        form.addRow("", self.url_help)
        form.addRow("", self.url_message)
        choice = QHBoxLayout()
        choice.addWidget(QLabel("Read:"))
        choice.addWidget(self.table_radio)
        choice.addWidget(self.query_radio)
        choice.addStretch(1)
        form.addRow(choice)
        self.table_label = QLabel("Table &name:")
        self.table_label.setBuddy(self.table_edit)
        form.addRow(self.table_label, self.table_edit)
        self.query_label = QLabel("&SELECT query:")
        self.query_label.setBuddy(self.query_edit)
        form.addRow(self.query_label, self.query_edit)
        form.addRow("", self.query_help)
        form.addRow("", self.rows_public)
        form.addRow("", self.rows_public_help)
        form.addRow("&Password:", self.password_edit)
        form.addRow("", self.remember)
        form.addRow("", password_help)
        return form

    # ------------------------------------------------------------------ fields
    def _on_kind(self, table: bool) -> None:
        widgets: tuple[QWidget, ...] = (self.table_label, self.table_edit)
        for widget in widgets:
            widget.setVisible(table)
        widgets = (self.query_label, self.query_edit, self.query_help, self.rows_public, self.rows_public_help)
        for widget in widgets:
            widget.setVisible(not table)

    def browse_sqlite(self) -> None:
        """Browse…: choose an SQLite file; the URL field gets its URL in this system's form (:func:`sqlite_url`)."""
        path, _ = QFileDialog.getOpenFileName(self, "Choose an SQLite database file", "", SQLITE_FILTER)
        if path:
            self.url_edit.setText(sqlite_url(path))

    def _check_url(self) -> None:
        """Inline, as typed: a URL with a password in it is refused with the fix; under the field, the
        SQLite URL form of this system, or how a three-slash URL of an absolute path is read."""
        url = self.url_edit.text().strip()
        problem, note = "", None
        if url and is_database_url(url):
            try:
                note = sqlite_url_note(url, parse_source(url, table="t").location)
            except DpguiError as err:  # a password in the URL; an SQLite path that names two files
                problem = text.friendly(err)
        show_inline(self.url_message, problem)
        self.url_help.setWordWrap(bool(note))  # a note on how a long path is read takes lines; the hint one
        self.url_help.setText(f"R{note[1:]}." if note else URL_HINT)  # "Reading /srv/x.db: …"

    def current_spec(self) -> SourceSpec | None:
        """The spec the fields describe, or None with the problem shown inline."""
        url = self.url_edit.text().strip()
        if not url:
            show_inline(self.url_message, "Type the database's URL, for example " + URL_PLACEHOLDER + ".")
            return None
        if not is_database_url(url):
            show_inline(self.url_message, "This is not a database URL: it needs a scheme such as postgresql:// or "
                                          "sqlite:///. To read a file, use File → Open.")
            return None
        table = self.table_edit.text().strip() if self.table_radio.isChecked() else None
        query = self.query_edit.toPlainText().strip() if self.query_radio.isChecked() else None
        if table == "":
            self.status.error("Type the table's name (or choose Query and type a SELECT).")
            return None
        if query == "":
            self.status.error("Type a SELECT query (or choose Table and type a table's name).")
            return None
        try:
            spec = parse_source(url, table=table, query=query,
                                row_count_public=query is not None and self.rows_public.isChecked())
        except DpguiError as err:
            message = text.friendly(err)
            if "password" in err.problem or "URL" in err.problem or "url" in err.problem:
                show_inline(self.url_message, message)
            else:
                self.status.error(message)
            return None
        show_inline(self.url_message, "")
        return spec

    # ------------------------------------------------------------------ test and OK
    def test_connection(self) -> bool:
        """Open the source on a worker; the result (columns and first rows, or the one-line error)
        shows when it arrives. False if the fields are not valid (nothing started)."""
        spec = self.current_spec()
        if spec is None:
            return False
        if self._worker is not None:
            return False
        password = self.password_edit.text()
        self.status.info(f"Connecting to {spec.display_name()}…")
        self.test_button.setEnabled(False)
        self.ok_button.setEnabled(False)
        prompt: PasswordPrompt = lambda _url: password  # noqa: E731 - the typed password ("" = none)
        worker = Worker(open_and_look, spec, prompt, count_rows=False)
        self._worker = worker
        worker.connect_to(self, finished=lambda opened: self._on_tested(opened, spec, password),
                          failed=self._on_test_failed, cancelled=lambda: self._on_test_failed("Cancelled."))
        self.pool.start(worker)
        return True

    def _done(self) -> None:
        self._worker = None
        self.test_button.setEnabled(True)
        self.ok_button.setEnabled(True)

    def _on_tested(self, opened: OpenedSource, spec: SourceSpec, password: str) -> None:
        self._done()
        self.opened, self._tested = opened, (spec, password)
        self.preview.setModel(PreviewModel(FrameRows(opened.table_info(), opened.preview), self.preview,
                                           kinds_in_header=False))
        numbers = sum(1 for c in opened.columns if c.kind == "numeric")
        self.status.info(f"Connected: {len(opened.columns)} column{'s' if len(opened.columns) != 1 else ''} "
                         f"({numbers} with numbers). Counted by {opened.engine}. The first rows are below.")
        if self._accept_after_test:
            self._accept_after_test = False
            self._finish(spec, password)

    def _on_test_failed(self, message: str) -> None:
        self._done()
        self._accept_after_test = False
        self.opened, self._tested = None, None
        self.preview.setModel(None)
        self.status.error(message)

    def _on_ok(self) -> None:
        """OK: accept what the last test found for the same fields, or test first and accept on success."""
        spec = self.current_spec()
        if spec is None:
            return
        password = self.password_edit.text()
        if self._tested == (spec, password) and self.opened is not None:
            self._finish(spec, password)
            return
        self._accept_after_test = self.test_connection()

    def _finish(self, spec: SourceSpec, password: str) -> None:
        self.spec, self.password = spec, password
        if password and self.remember.isVisible() and self.remember.isChecked():
            problem = remember_in_keyring(spec.location, password)
            if problem:
                self.status.info(problem)
        self.password_edit.clear()  # the caller keeps it in memory for the session
        self.accept()

    def done(self, result: int) -> None:
        if self._worker is not None:
            self._worker.cancel()
        super().done(result)
