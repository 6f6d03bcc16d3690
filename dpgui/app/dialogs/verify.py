"""Check a signed release bundle: the signature of its manifest, the schema and the files' hashes.

For the privacy officer and for anyone who receives a bundle: choose ``NAME.manifest.json`` and
the signer's public key, press Verify, and read one line — verified, or not and why. The facts of
the release (dataset, column, ε, …) are shown only once the signature holds, since before that
nothing in the manifest can be trusted.

Testable without modal windows: ``verify_paths(manifest, public_key_file)``.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QFrame, QHBoxLayout, QLabel, QLineEdit, QPushButton,
    QScrollArea, QVBoxLayout, QWidget,
)

from dpgui.app.text import NEIGHBOURS_LABELS, friendly, plain_text, sentence
from dpgui.app.widgets.fields import inline_message, show_inline
from dpgui.app.widgets.style import is_dark
from dpgui.core.missing import MISSING_DROP, MISSING_ERROR
from dpgui.core.noise_mechanisms import noise_named
from dpgui.errors import DpguiError
from dpgui.formatting import format_delta, format_number, format_significant
from dpgui.report.bundle import MANIFEST_SUFFIX, TEST_NOISE_FAILURE, Verification
from dpgui.report.files import read_json_file
from dpgui.report.keystore import KeyEntry, list_keys, load_public_key
from dpgui.workspace.statistics import verify
from dpgui.vocabulary import Noise

VERIFY_HELP = (
    "Check a signed release: that its files are exactly what the owner of a key signed, and that nothing "
    "was changed since. Choose the release's manifest (NAME.manifest.json; the .csv, .pdf and .minisig "
    "files must be in the same folder) and the public key of whoever published it."
)
OTHER_FILE = "Other file…"
KEY_ID_ROLE = Qt.ItemDataRole.UserRole + 1
NOT_VERIFIED_ADVICE = ("Do not trust these files. Check that you chose the right public key, or get the release "
                       "again from its publisher.")
RANDOM_SOURCES = {"os_csprng": "Secure (the operating system's random source)",
                  "seeded_test_only": "TEST ONLY: a reproducible generator, not secure — do not publish"}


def ok_colour() -> str:
    return "#5FD38A" if is_dark() else "#1E7B34"


def bad_colour() -> str:
    return "#FF6B6B" if is_dark() else "#C0392B"


def _utc_text(text: str) -> str:
    """'2026-11-21T20:58:12Z' → '2026-11-21 20:58:12 UTC'."""
    return text.replace("T", " ").removesuffix("Z") + " UTC" if text.endswith("Z") else text


class VerifyDialog(QDialog):
    """Choose a manifest and a public key, press Verify, see each check and the verdict.

    ``verify_paths(manifest, public_key_file)`` does it all without file dialogs and returns the
    :class:`~dpgui.report.bundle.Verification`; ``verdict_text()``, ``check_rows()`` and
    ``facts()`` read what is shown.
    """

    def __init__(self, parent: QWidget | None = None, directory: Path | None = None) -> None:
        super().__init__(parent)
        self.directory = directory  # the key folder (None: the user's)
        self.verification: Verification | None = None
        self._previous_key_index = 0
        self.setWindowTitle("Verify a signed release")
        help_label = QLabel(VERIFY_HELP)
        help_label.setWordWrap(True)

        form = self._build_inputs_form()
        self.input_message = inline_message(self)

        self.verify_button = QPushButton("Verify")
        self.verify_button.setDefault(True)
        self.verify_button.setToolTip("Check the signature, the manifest and the fingerprint of every file.")
        self.verify_button.clicked.connect(self.verify)
        verify_row = QHBoxLayout()
        verify_row.addWidget(self.verify_button)
        verify_row.addStretch(1)

        self._build_result_widgets()
        self._check_rows: list[tuple[str, str, bool]] = []
        self._facts: dict[str, str] = {}

        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)

        layout = QVBoxLayout(self)
        layout.addWidget(help_label)
        layout.addLayout(form)
        layout.addWidget(self.input_message)
        layout.addLayout(verify_row)
        layout.addWidget(line)
        layout.addWidget(self.verdict)
        layout.addWidget(self.advice)
        layout.addWidget(self.results_area, 1)
        layout.addWidget(close)
        self.resize(720, 660)
        self.reload_keys()
        self._clear_result()

    def _build_inputs_form(self) -> QFormLayout:
        """The manifest's field and Choose… button, and the public key's list."""
        self.manifest_edit = QLineEdit()
        self.manifest_edit.setPlaceholderText("…/NAME.manifest.json")
        self.manifest_edit.setToolTip("The manifest lists the release's parameters and the fingerprints of its "
                                      "files; its signature is in NAME.manifest.json.minisig next to it.")
        self.manifest_edit.textChanged.connect(self._inputs_changed)
        self.manifest_button = QPushButton("Choose…")
        self.manifest_button.clicked.connect(self.choose_manifest)
        manifest_row = QHBoxLayout()
        manifest_row.addWidget(self.manifest_edit, 1)
        manifest_row.addWidget(self.manifest_button)

        self.key_combo = QComboBox()
        self.key_combo.setToolTip("The public key of whoever signed the release. Keys you created or imported are "
                                  "listed; choose “Other file…” for a .pub file elsewhere.")
        self.key_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.key_combo.setMinimumContentsLength(30)
        self.key_combo.activated.connect(self._key_activated)
        self.key_combo.currentIndexChanged.connect(self._inputs_changed)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key_combo, 1)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        form.addRow("Manifest:", manifest_row)
        form.addRow("Public key:", key_row)
        return form

    def _build_result_widgets(self) -> None:
        """The verdict (bold), the advice under it, and each check's row in a scrolled area."""
        self.verdict = plain_text(QLabel())  # a failure quotes file names literally
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = QFont(self.verdict.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.verdict.setFont(font)
        self.advice = plain_text(QLabel())
        self.advice.setWordWrap(True)
        self.results = QLabel()
        self.results.setTextFormat(Qt.TextFormat.RichText)
        self.results.setWordWrap(True)
        self.results.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.results.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.results_area = QScrollArea()
        self.results_area.setWidgetResizable(True)
        self.results_area.setFrameShape(QFrame.Shape.NoFrame)
        self.results_area.setWidget(self.results)

    def showEvent(self, event: QShowEvent) -> None:
        self.reload_keys()  # keys may have been created or imported since the dialog was built
        super().showEvent(event)

    # ------------------------------------------------------------------ keys
    def reload_keys(self) -> None:
        """Fill the key list from the key folder (plus "Other file…")."""
        current = self.key_file()
        self.key_combo.blockSignals(True)
        self.key_combo.clear()
        try:
            entries = list_keys(self.directory)
        except DpguiError as err:
            entries = []
            show_inline(self.input_message, friendly(err))
        for entry in entries:
            self.key_combo.addItem(self._key_label(entry), str(entry.public_path))
            self.key_combo.setItemData(self.key_combo.count() - 1, str(entry.public_path), Qt.ItemDataRole.ToolTipRole)
            self.key_combo.setItemData(self.key_combo.count() - 1, entry.key_id_hex, KEY_ID_ROLE)
        self.key_combo.addItem(OTHER_FILE, None)
        self.key_combo.blockSignals(False)
        if current is not None:
            self.key_combo.blockSignals(True)
            self._select_key_file(current)
            self.key_combo.blockSignals(False)
        self._previous_key_index = self.key_combo.currentIndex()
        self._update_verify_button()

    @staticmethod
    def _key_label(entry: KeyEntry) -> str:
        kind = "yours" if entry.secret_path is not None else "imported"
        return f"{entry.name} — key id {entry.key_id_hex} ({kind})"

    def key_file(self) -> Path | None:
        """The chosen public key file, or None."""
        data = self.key_combo.currentData()
        return Path(data) if data else None

    def _select_key_file(self, path: Path) -> None:
        for index in range(self.key_combo.count()):
            data = self.key_combo.itemData(index)
            if data and Path(data) == Path(path):
                self.key_combo.setCurrentIndex(index)
                return
        self.add_key_file(path)

    def add_key_file(self, path: str | Path) -> bool:
        """Add a public key file that is not in the key folder to the list and choose it."""
        path = Path(path)
        try:
            key = load_public_key(path)
        except DpguiError as err:
            show_inline(self.input_message, friendly(err))
            return False
        show_inline(self.input_message, "")
        index = self.key_combo.count() - 1  # before "Other file…"
        self.key_combo.insertItem(index, f"{path.name} — key id {key.key_id_hex}", str(path))
        self.key_combo.setItemData(index, str(path), Qt.ItemDataRole.ToolTipRole)
        self.key_combo.setItemData(index, key.key_id_hex, KEY_ID_ROLE)
        self.key_combo.setCurrentIndex(index)
        self._previous_key_index = index
        return True

    def _key_activated(self, index: int) -> None:
        if self.key_combo.itemData(index) is not None:
            self._previous_key_index = index
            return
        path, _ = QFileDialog.getOpenFileName(self, "Choose the signer's public key", str(Path.home()),
                                              "Public keys (*.pub);;All files (*)")
        if not path or not self.add_key_file(path):
            self.key_combo.setCurrentIndex(min(self._previous_key_index, self.key_combo.count() - 1))

    # ------------------------------------------------------------------ manifest
    def choose_manifest(self) -> None:
        start = self.manifest_edit.text().strip() or str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, "Choose the release's manifest", start,
                                              f"Release manifests (*{MANIFEST_SUFFIX});;All files (*)")
        if path:
            self.set_manifest(path)

    def set_manifest(self, path: str | Path) -> None:
        """Use this manifest; if the key folder has the key it names as signer, choose that key."""
        self.manifest_edit.setText(str(path))
        signer = _claimed_signer(Path(path))
        if signer is None:
            return
        for index in range(self.key_combo.count()):
            if self.key_combo.itemData(index, KEY_ID_ROLE) == signer:
                self.key_combo.setCurrentIndex(index)
                self._previous_key_index = index
                return

    def _update_verify_button(self) -> None:
        self.verify_button.setEnabled(bool(self.manifest_edit.text().strip()) and self.key_file() is not None)

    def _inputs_changed(self, *_: Any) -> None:
        self._update_verify_button()
        if self.verification is not None:  # the result shown no longer matches the inputs
            self._clear_result()

    # ------------------------------------------------------------------ verifying
    def verify(self) -> Verification | None:
        """Verify the chosen manifest with the chosen key and show the outcome."""
        manifest = self.manifest_edit.text().strip()
        key_path = self.key_file()
        if not manifest:
            show_inline(self.input_message, "Choose the release's manifest (NAME.manifest.json) first.")
            return None
        if key_path is None:
            show_inline(self.input_message, "Choose the public key of whoever signed the release.")
            return None
        show_inline(self.input_message, "")
        QGuiApplication.setOverrideCursor(Qt.CursorShape.BusyCursor)
        try:
            result = self._run(Path(manifest), key_path)
        finally:
            QGuiApplication.restoreOverrideCursor()
        self._show_result(result)
        return result

    def verify_paths(self, manifest: str | Path, public_key: str | Path) -> Verification:
        """Choose this manifest and public key file, verify, show and return the outcome."""
        self.manifest_edit.setText(str(manifest))
        self._select_key_file(Path(public_key))
        result = self._run(Path(manifest), Path(public_key))
        show_inline(self.input_message, "")
        self._show_result(result)
        return result

    @staticmethod
    def _run(manifest: Path, key_path: Path) -> Verification:
        try:
            key = load_public_key(key_path)
        except DpguiError as err:
            return Verification(False, ((f"the public key cannot be used: {friendly(err)}", False),), None, None, None)
        return verify(manifest, key)

    # ------------------------------------------------------------------ showing
    def _clear_result(self) -> None:
        self.verification = None
        self.verdict.setText("")
        self.verdict.hide()
        self.advice.hide()
        self._fill_checks([])
        self._fill_facts({})

    def _show_result(self, result: Verification) -> None:
        self.verification = result
        if result.ok:
            self.verdict.setText(f"Verified: this bundle is exactly what key {result.key_id} signed.")
            self.verdict.setStyleSheet(f"color: {ok_colour()};")
            self.advice.setText("The files have not been changed since they were signed. Make sure this key id "
                                "is the publisher's (ask them, or compare with a copy from their web site).")
        else:
            failure = _plain(result.failure or "a check failed")
            self.verdict.setText(f"NOT verified: {failure[0].lower() + failure[1:]}")
            self.verdict.setStyleSheet(f"color: {bad_colour()};")
            self.advice.setText(self._advice(result))
        self.verdict.show()
        self.advice.show()
        self._fill_checks(list(result.checks))
        self._fill_facts(_facts(result) if result.ok and result.manifest is not None else {})

    def _advice(self, result: Verification) -> str:
        """What to do after a failed check; names the right key when the manifest was signed with another."""
        manifest = self.manifest_edit.text().strip()
        signer = _claimed_signer(Path(manifest)) if manifest else None
        if (result.failure or "").startswith(TEST_NOISE_FAILURE):
            return ("The signature is genuine, but the signer's release used test noise, which protects no one: "
                    "it was never fit to publish. Do not use these numbers; ask the publisher for a real release.")
        if result.checks and result.checks[0][1]:  # the signature held: a file was changed afterwards
            return ("The signature is genuine, but the files no longer match what was signed: something was changed "
                    "or replaced after signing. Do not use these files; get the release again from its publisher.")
        if signer is None or signer == result.key_id or result.key_id is None:
            return NOT_VERIFIED_ADVICE
        for index in range(self.key_combo.count()):
            if self.key_combo.itemData(index, KEY_ID_ROLE) == signer:
                name = self.key_combo.itemText(index).split(" — ")[0]
                return (f"The release says it was signed with key {signer}, which is in your key list as “{name}”: "
                        "choose it above and verify again.")
        return (f"The release says it was signed with key {signer}. Get that public key from the publisher "
                "(import it in Keys), then verify again. Until then, do not trust these files.")

    def _fill_checks(self, checks: list[tuple[str, bool]]) -> None:
        self._check_rows = [("✓" if passed else "✗", _plain(text), passed) for text, passed in checks]
        self._render()

    def _fill_facts(self, facts: dict[str, str]) -> None:
        self._facts = dict(facts)
        self._render()

    def _render(self) -> None:
        parts = []
        if self._check_rows:
            checks = "".join(
                f"<tr><td style='color:{ok_colour() if passed else bad_colour()}; font-weight:bold'>{mark}</td>"
                f"<td>{html.escape(text)}</td></tr>" for mark, text, passed in self._check_rows)
            parts.append(f"<p style='margin-top:6px'><b>Checks</b></p><table cellspacing='0' cellpadding='3'>{checks}</table>")
        if self._facts:
            rows: list[str] = []
            for name, value in self._facts.items():
                style = ""
                if name in ("Release id", "Signed by key"):
                    style = " style='font-family: monospace'"
                if name == "Noise" and "TEST ONLY" in value:
                    style = f" style='color:{bad_colour()}; font-weight:bold'"
                rows.append(f"<tr><td style='padding-right:12px'>{html.escape(name)}:</td>"
                            f"<td{style}>{html.escape(value)}</td></tr>")
            parts.append("<p style='margin-top:10px'><b>What was released (as signed)</b></p>"
                         f"<table cellspacing='0' cellpadding='3'>{''.join(rows)}</table>")
        self.results.setText("".join(parts))
        self.results_area.setVisible(bool(parts))

    # ------------------------------------------------------------------ reading what is shown
    def verdict_text(self) -> str:
        return self.verdict.text()

    def check_rows(self) -> list[tuple[str, str, bool]]:
        """(✓ or ✗, sentence, passed) of every check shown."""
        return list(self._check_rows)

    def facts(self) -> dict[str, str]:
        """The release's facts shown (empty unless verified)."""
        return dict(self._facts)


def _plain(text: str) -> str:
    """A check's sentence for people: "signature: the file was …" → "The file was …"."""
    text = text.strip()
    if text.lower().startswith("signature: "):
        text = text[len("signature: "):]
        if text.startswith("the file was signed with key"):  # the signed file is the manifest
            text = "the manifest was" + text[len("the file was"):]
    return sentence(text)


def _claimed_signer(path: Path) -> str | None:
    """The signer key id a manifest claims (unverified; used only to preselect a key)."""
    try:  # read as verify reads it: a regular file only (a pipe would block the window), strict JSON
        value = read_json_file(path, "manifest")["signer"]["key_id"]
    except (DpguiError, KeyError, TypeError):
        return None
    return value if isinstance(value, str) and re.fullmatch(r"[0-9A-F]{1,16}", value) else None


def _missing_words(value: Any) -> str:
    """The manifest's missing-value rule in words (a manifest of schema version 1 holds the rule's name only,
    and no count of missing values: the words are dpgui's, and the parenthesis says so)."""
    if isinstance(value, dict):
        words = str(value.get("description", value.get("rule", "")))
        count = value.get("released_count")
        if isinstance(count, (int, float)):
            words += f"; released count about {format_number(round(count))}"
        return words
    named_only = " (the manifest names the rule only and states no count of missing values)"
    rule_words: dict[str, str] = {MISSING_DROP: "left out before counting",
                                  MISSING_ERROR: "the release would have stopped at a missing value"}
    return rule_words[str(value)] + named_only if str(value) in rule_words else str(value)


def _budget_words(noise: Any, privacy: dict[str, Any]) -> str:
    """The manifest's privacy guarantee in plain words: Gaussian (ε, δ) with its ρ, or pure ε (a δ set
    for a Laplace release is said to be unused). Manifests of schema version 1 are pure ε."""
    budget = f"ε = {format_number(privacy.get('epsilon', 0))}"
    delta = privacy.get("delta") or 0.0
    if noise_named(noise) is Noise.GAUSSIAN:
        budget += f", δ = {format_delta(float(delta))} (Gaussian noise"
        if isinstance(privacy.get("rho"), (int, float)):
            budget += f"; zCDP ρ = {format_significant(float(privacy['rho']), 4)}"
        return budget + ")"
    budget += " (δ = 0: pure ε-differential privacy"
    if delta:
        budget += f"; the δ = {format_delta(float(delta))} allowed was not used"
    return budget + ")"


def _facts(result: Verification) -> dict[str, str]:
    """The main facts of a verified manifest, in plain words."""
    m = result.manifest or {}
    privacy = m.get("privacy", {})
    budget = _budget_words(m.get("noise"), privacy)
    bounds = m.get("bounds", {})
    total = m.get("total_records", {})
    if total.get("public"):
        records = f"{format_number(total.get('value') or 0)} (published exactly)"
    else:
        records = f"about {format_number(round(total.get('released_estimate', 0)))} (released with noise)"
    facts = {
        "Dataset": str(m.get("dataset", "")),
        "Column": str(m.get("column", "")),
        "Privacy budget": budget,
        "Released (UTC)": _utc_text(str(m.get("created_utc", ""))),
        "Release id": str(m.get("release_id", "")),
        "Signed by key": str(result.key_id or m.get("signer", {}).get("key_id", "")),
        "Bounds and bins": (f"from {format_number(bounds.get('lower', 0))} to {format_number(bounds.get('upper', 0))}, "
                            f"{format_number(m.get('bins', 0))} bins"),
        "Records (N)": records,
        "Missing values": _missing_words(m.get("missing_values")),
        "Protects": NEIGHBOURS_LABELS.get(str(m.get("neighbours")), str(m.get("neighbours", ""))),
        "Noise": RANDOM_SOURCES.get(str(m.get("random_source")), str(m.get("random_source", ""))),
        "Files": ", ".join(str(m.get("files", {}).get(kind, {}).get("name", "")) for kind in ("csv", "pdf")),
    }
    focus, whole = m.get("focus"), m.get("whole_numbers")  # schema version 5: what the officer stated
    if isinstance(focus, dict):
        facts["Plan made for"] = str(focus.get("description", ""))
    if isinstance(whole, dict):
        facts["Whole numbers"] = f"{whole.get('description', '')}; quantiles: {whole.get('quantiles', '')}"
    signed = re.search(r"signed:(\S+)", result.trusted_comment or "")
    if signed:
        facts["Signed (UTC)"] = _utc_text(signed.group(1))
    return facts
