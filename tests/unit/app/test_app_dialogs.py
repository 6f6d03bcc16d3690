"""The keys, ledger and verify dialogs, driven as the privacy officer would, without modal windows:
keys are created, imported and exported; the ledger shows each dataset's budget and refuses what it
must; a real signed bundle verifies, and a changed file or a wrong key does not."""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

import numpy as np
import pytest

from dpgui.app.dialogs.keys import KIND_PUBLIC, KIND_SIGN, KeyManagerDialog
from dpgui.app.dialogs.ledger import RAISE_REASON_NEEDED, LedgerDialog
from dpgui.app.dialogs.verify import VerifyDialog
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.formatting import format_significant
from dpgui.report.keystore import create_key, keys_dir, list_keys, load_public_key, load_secret_key
from dpgui.report.ledger import Ledger
from dpgui.report.cdf.publish import sign_release, spend_and_release
from dpgui.vocabulary import Charge

PASSPHRASE = "correct horse battery"


@pytest.fixture(autouse=True)
def _app():
    from dpgui.app.main import create_application

    create_application()


# ------------------------------------------------------------------------------------------ keys
@pytest.mark.slow
def test_create_key_through_the_dialog(qtbot):
    dialog = KeyManagerDialog()
    qtbot.addWidget(dialog)
    assert dialog.keys() == [] and dialog.empty_label.isVisibleTo(dialog)

    files = dialog.create_key_from("officer", PASSPHRASE, PASSPHRASE)

    assert files is not None
    assert files.secret_path.is_file() and files.public_path.is_file()
    assert files.secret_path.parent == keys_dir()
    if os.name == "posix":
        assert stat.S_IMODE(files.secret_path.stat().st_mode) == 0o600
    assert load_secret_key(files.secret_path, PASSPHRASE).public_key == load_public_key(files.public_path)
    assert dialog.row_texts() == [("officer", files.key_id_hex, KIND_SIGN)]
    assert dialog.selected_key().name == "officer"
    assert files.key_id_hex in dialog.last_message and dialog.last_error == ""
    assert dialog.create_messages == {}
    assert dialog.create_form.passphrase_edit.text() == ""  # not kept in the form after use


@pytest.mark.slow
def test_create_key_refusals_are_shown_next_to_the_field(qtbot):
    dialog = KeyManagerDialog()
    qtbot.addWidget(dialog)

    assert dialog.create_key_from("officer", PASSPHRASE, PASSPHRASE + "x") is None
    assert set(dialog.create_messages) == {"repeat"}
    assert "different" in dialog.create_messages["repeat"]

    assert dialog.create_key_from("officer", "short", "short") is None
    assert set(dialog.create_messages) == {"passphrase"}
    assert "at least 8" in dialog.create_messages["passphrase"]

    assert dialog.create_key_from("", PASSPHRASE, PASSPHRASE) is None
    assert "name" in dialog.create_messages["name"].lower()

    assert dialog.create_key_from("has space", PASSPHRASE, PASSPHRASE) is None
    assert "not a valid key name" in dialog.create_messages["name"]

    assert list(keys_dir().iterdir()) == [] and dialog.keys() == []

    assert dialog.create_key_from("officer", PASSPHRASE, PASSPHRASE) is not None
    assert dialog.create_key_from("officer", PASSPHRASE, PASSPHRASE) is None  # never overwrites
    assert "already exists" in dialog.create_messages["name"]
    assert len(dialog.keys()) == 1

    form = dialog.create_form  # typing in a field clears its message
    form.name_edit.textEdited.emit("officer2")
    assert "name" not in form.messages()


@pytest.mark.slow
def test_import_and_export_a_public_key(qtbot, tmp_path):
    dialog = KeyManagerDialog()
    qtbot.addWidget(dialog)
    own = dialog.create_key_from("officer", PASSPHRASE, PASSPHRASE)
    theirs = create_key("colleague", "their own passphrase", tmp_path / "elsewhere")

    entry = dialog.import_from(theirs.public_path)

    assert entry is not None and entry.secret_path is None
    assert (keys_dir() / "colleague.pub").is_file() and not (keys_dir() / "colleague.key").exists()
    assert dialog.row_texts() == [("colleague", theirs.key_id_hex, KIND_PUBLIC), ("officer", own.key_id_hex, KIND_SIGN)]
    assert theirs.key_id_hex in dialog.last_message

    out = tmp_path / "share"
    out.mkdir()
    written = dialog.export_to("officer", out)  # a folder: NAME.pub inside it
    assert written == out / "officer.pub"
    assert load_public_key(written) == load_public_key(own.public_path)
    assert own.key_id_hex in dialog.last_message and str(written) in dialog.last_message
    assert dialog.export_to("officer", tmp_path / "for-the-website.pub") == tmp_path / "for-the-website.pub"
    assert not list(out.glob("*.key"))  # the secret key is never exported

    # errors in plain words, nothing imported
    garbage = tmp_path / "garbage.pub"
    garbage.write_text("hello\n")
    assert dialog.import_from(garbage) is None
    assert "not a minisign public key" in dialog.last_error and dialog.last_error.endswith(".")
    assert dialog.import_from(tmp_path / "missing.pub") is None
    assert "There is no file" in dialog.last_error
    another = create_key("colleague", "yet another passphrase", tmp_path / "third")
    assert dialog.import_from(another.public_path) is None  # another key under a taken name
    assert "already exists" in dialog.last_error and dialog._import_name_problem
    assert dialog.import_from(another.public_path, "colleague-2") is not None
    assert [k.name for k in list_keys()] == ["colleague", "colleague-2", "officer"]
    assert dialog.export_to("nobody", tmp_path / "x.pub") is None and "does not exist" in dialog.last_error


# ------------------------------------------------------------------------------------------ ledger
def _spend(ledger: Ledger, dataset: str, epsilon: float) -> str:
    release_id = uuid.uuid4().hex
    ledger.spend(dataset, release_id, Charge(epsilon), mechanism="discrete_laplace_tree", description={"bins": 64})
    return release_id


def test_ledger_shows_budget_bar_and_releases(qtbot):
    dialog = LedgerDialog()
    qtbot.addWidget(dialog)
    assert dialog.dataset_rows() == [] and dialog.empty_label.isVisibleTo(dialog)

    with Ledger() as ledger:
        ledger.set_cap("payroll", 2.0, reason="approved by the board")
        first = _spend(ledger, "payroll", 0.5)
        second = _spend(ledger, "payroll", 0.25)
        ledger.record_bundle(second, "/releases/payroll.manifest.json")
        ledger.set_cap("flights", 1.0, 1e-6)
        _spend(ledger, "flights", 1.0)
    dialog.refresh()

    rows = {row.dataset: row for row in dialog.dataset_rows()}
    assert rows["payroll"].budget_text == "ε 0.75 of 2 spent, 1.25 left"
    assert rows["payroll"].releases == 2 and rows["payroll"].delta_text == "—" and not rows["payroll"].full
    assert rows["flights"].budget_text == "ε 1 of 1 spent, none left" and rows["flights"].full
    assert rows["flights"].delta_text == "δ 0 of 1e-6 spent, 1e-6 left"
    assert rows["payroll"].accounting_text == "sum of ε" and rows["flights"].accounting_text == "sum of ε and δ"
    assert dialog.datasets_table.item(0, 2).text() == "δ 0 of 1e-6 spent, 1e-6 left"  # flights sorts first
    bar = dialog.bar_for("payroll")
    assert bar.text() == "ε 0.75 of 2 spent, 1.25 left" and bar.value() == 375
    full_bar = dialog.bar_for("flights")
    assert full_bar.value() == full_bar.maximum()
    assert full_bar.palette().highlight().color().name() != bar.palette().highlight().color().name()  # red

    assert dialog.select_dataset("payroll")
    releases = dialog.release_rows()
    assert [r[5] for r in releases] == [second, first]  # newest first
    assert releases[0][1:5] == ("0.25", "0", "—", "Laplace") and releases[0][6] == "/releases/payroll.manifest.json"
    assert releases[1][6] == "(no bundle written)"
    assert len(releases[0][0]) == len("2026-01-01 00:00:00")
    assert dialog.cap_history_rows()[0][1:] == ("set to ε 2", "approved by the board")
    assert "(2)" in dialog.details.tabText(0)


def test_ledger_shows_delta_spent_and_left_and_how_releases_add_up(qtbot):
    from dpgui.core.accounting import zcdp_rho

    rho = zcdp_rho(1.0, 1e-9)  # a Gaussian release at ε = 1, δ = 1e-9, as the release path charges it
    with Ledger() as ledger:
        ledger.set_cap("gauss", 3.0, 1e-6)
        gaussian = uuid.uuid4().hex
        ledger.spend("gauss", gaussian, Charge(1.0, 1e-9, rho), mechanism="discrete_gaussian_tree")
        ledger.set_cap("older", 3.0, 1e-6)
        ledger.spend("older", uuid.uuid4().hex, Charge(0.5, 4e-7, None))  # an earlier dpgui's release: no ρ
        ledger.set_cap("pure", 3.0)
    dialog = LedgerDialog()
    qtbot.addWidget(dialog)
    rows = {row.dataset: row for row in dialog.dataset_rows()}
    assert rows["older"].delta_text == "δ 4e-7 of 1e-6 spent, 6e-7 left"
    assert rows["older"].accounting_text == "sum of ε and δ"
    assert rows["pure"].delta_text == "—" and rows["pure"].accounting_text == "sum of ε"
    # one Gaussian release: its ρ at the cap's δ is ε ≈ 0.92 < Σε = 1, so zCDP counts it
    assert rows["gauss"].accounting_text == "zCDP (sum of ε: 1)"
    left = zcdp_rho(3.0, 1e-6) - rho
    assert rows["gauss"].delta_text == (f"at δ 1e-6 (zCDP): ρ {format_significant(rho)} spent, "
                                        f"{format_significant(left)} left")
    # the ε shown is ρ converted at the cap's δ: CKS 2020 Cor. 13 minimised over α on a grid, here
    alphas = 1.0 + np.logspace(-6, 6, 400_001)
    expected = float((alphas * rho + (np.log(1e6) + (alphas - 1) * np.log1p(-1 / alphas) - np.log(alphas))
                      / (alphas - 1)).min())
    shown = rows["gauss"].budget_text
    assert " of 3 spent, " in shown and float(shown.split()[1]) == pytest.approx(expected, rel=1e-5)
    assert expected < 1.0  # cheaper than the plain sum of ε
    assert "Counted with zCDP composition at δ = 1e-6" in dialog.bar_for("gauss").toolTip()
    index = [r.dataset for r in dialog.dataset_rows()].index("gauss")
    assert dialog.datasets_table.item(index, 3).text() == "zCDP (sum of ε: 1)"
    assert dialog.select_dataset("gauss")
    assert dialog.release_rows()[0][1:6] == ("1", "1e-9", format_significant(rho), "Gaussian", gaussian)


@pytest.mark.slow
def test_raising_a_budget_needs_a_reason_and_is_logged(qtbot):
    with Ledger() as ledger:
        ledger.set_cap("payroll", 1.0)
        _spend(ledger, "payroll", 0.75)
    dialog = LedgerDialog()
    qtbot.addWidget(dialog)

    assert not dialog.set_cap_for("payroll", 3.0, None, "")
    assert dialog.last_error == RAISE_REASON_NEEDED
    dialog.confirm_raise = lambda *args: False  # the officer says no
    assert not dialog.set_cap_for("payroll", 3.0, None, "board decision", confirm=True)
    with Ledger() as ledger:
        assert ledger.totals("payroll").cap_epsilon == 1.0

    asked = []
    dialog.confirm_raise = lambda *args: asked.append(args) or True
    assert dialog.set_cap_for("payroll", 3.0, None, "board decision 2026-11-20", confirm=True)
    assert asked and asked[0][0] == "payroll" and asked[0][2] == 3.0
    with Ledger() as ledger:
        assert ledger.totals("payroll").cap_epsilon == 3.0
        assert ledger.cap_history("payroll")[-1].reason == "board decision 2026-11-20"
    assert dialog.dataset_rows()[0].budget_text == "ε 0.75 of 3 spent, 2.25 left"
    assert dialog.cap_history_rows()[-1][1:] == ("ε 1 → 3 (raised)", "board decision 2026-11-20")
    assert "Raised" in dialog.last_message


@pytest.mark.slow
def test_lowering_below_spent_is_refused_and_the_cap_is_unchanged(qtbot):
    with Ledger() as ledger:
        ledger.set_cap("payroll", 2.0)
        _spend(ledger, "payroll", 0.75)
    dialog = LedgerDialog()
    qtbot.addWidget(dialog)

    assert not dialog.set_cap_for("payroll", 0.5, None, "")
    assert "already spent ε = 0.75" in dialog.last_error and "not changed" in dialog.last_error
    with Ledger() as ledger:
        assert ledger.totals("payroll").cap_epsilon == 2.0
        assert len(ledger.cap_history("payroll")) == 1
    assert dialog.dataset_rows()[0].budget_text == "ε 0.75 of 2 spent, 1.25 left"

    assert dialog.set_cap_for("payroll", 1.0, None, "")  # lowering above what is spent: no reason needed
    with Ledger() as ledger:
        assert ledger.totals("payroll").cap_epsilon == 1.0


@pytest.mark.slow
def test_budget_forms_show_problems_inline(qtbot):
    dialog = LedgerDialog()
    qtbot.addWidget(dialog)

    add = dialog.budget_form()
    qtbot.addWidget(add)
    add.name_field.set_text("visits")
    add.epsilon_field.set_text("0")
    assert not dialog._submit_form(add)
    assert "more than 0" in add.epsilon_field.error_text()
    add.epsilon_field.set_text("1,5")
    assert "comma" in add.epsilon_field.error_text()
    add.epsilon_field.set_text("1.5")
    add.reason_edit.setText("new survey")
    assert dialog._submit_form(add)
    assert [r.dataset for r in dialog.dataset_rows()] == ["visits"]
    assert not dialog.add_dataset("visits", 2.0)
    assert "already in the ledger" in dialog.last_error

    form = dialog.budget_form("visits")
    qtbot.addWidget(form)
    assert form.epsilon_field.text() == "1.5"
    form.epsilon_field.set_text("4")
    assert not dialog._submit_form(form)  # raising without a reason
    assert form.reason_message.text() == RAISE_REASON_NEEDED
    with Ledger() as ledger:
        assert ledger.totals("visits").cap_epsilon == 1.5


def test_ledger_dialog_cannot_delete(qtbot):
    from PySide6.QtWidgets import QDialog, QPushButton

    dialog = LedgerDialog()
    qtbot.addWidget(dialog)
    names = {name.lower() for name in set(dir(dialog)) - set(dir(QDialog))}  # the dialog's own methods
    assert not any(word in name for name in names for word in ("delete", "remove", "undo", "clear"))

    labels = [button.text().lower() for button in dialog.findChildren(QPushButton)]
    assert not any("delete" in label or "remove" in label for label in labels)


# ------------------------------------------------------------------------------------------ verify
@pytest.fixture
def bundle(tmp_path):
    """A real signed bundle (secure noise, spent in the ledger: only such releases are signed), its
    public key, and another key."""
    files = create_key("officer", PASSPHRASE)
    other = create_key("colleague", "another passphrase")
    secret = load_secret_key(files.secret_path, PASSPHRASE)
    counts = np.random.default_rng(3).integers(0, 50, 64)
    plan = auto_plan(64, PrivacySpec(1.0))
    from dpgui.pdf.cdf import render_release_pdf

    folder = tmp_path / "bundle"
    folder.mkdir()
    with Ledger() as ledger:
        ledger.set_cap("payroll", 1.0)
        result, info = spend_and_release(ledger, "payroll", "salary", "drop", counts, plan, SecureRandom(),
                                         0.0, 640.0, "l2", n_missing=0)
        pdf = render_release_pdf(result, info, files.key_id_hex)
        paths = sign_release(ledger, folder, "payroll-2026", result, info, pdf, secret)
    return paths, files, other, info


@pytest.mark.slow
def test_verify_a_real_bundle(qtbot, bundle):
    paths, files, _, info = bundle
    dialog = VerifyDialog()
    qtbot.addWidget(dialog)
    assert not dialog.verify_button.isEnabled()  # nothing chosen yet

    result = dialog.verify_paths(paths.manifest, files.public_path)

    assert result.ok
    assert dialog.verdict_text() == f"Verified: this bundle is exactly what key {files.key_id_hex} signed."
    rows = dialog.check_rows()
    assert len(rows) == 5 and all(mark == "✓" and passed for mark, _, passed in rows)
    assert rows[0][1] == f"The manifest is signed by key {files.key_id_hex}."
    facts = dialog.facts()
    assert facts["Dataset"] == "payroll" and facts["Column"] == "salary"
    assert facts["Privacy budget"] == "ε = 1 (δ = 0: pure ε-differential privacy)"
    assert facts["Release id"] == info.release_id and facts["Signed by key"] == files.key_id_hex
    assert facts["Released (UTC)"] == info.created_utc.strftime("%Y-%m-%d %H:%M:%S UTC")
    assert facts["Noise"].startswith("Secure")
    assert dialog.key_file() == files.public_path  # the key list shows the key used
    assert dialog.verify_button.isEnabled()


def test_verify_states_the_guarantee_of_each_noise():
    from dpgui.app.dialogs.verify import _budget_words

    gaussian = {"epsilon": 1.0, "delta": 1e-9, "rho": 0.014973057673588277}
    assert _budget_words("discrete_gaussian", gaussian) == "ε = 1, δ = 1e-9 (Gaussian noise; zCDP ρ = 0.01497)"
    assert _budget_words("discrete_laplace", {"epsilon": 0.5, "delta": 1e-6, "rho": None}) == (
        "ε = 0.5 (δ = 0: pure ε-differential privacy; the δ = 1e-6 allowed was not used)")
    assert _budget_words("discrete_laplace", {"epsilon": 0.5, "delta": 0.0, "rho": None}) == (
        "ε = 0.5 (δ = 0: pure ε-differential privacy)")  # as in a manifest of schema version 1


def test_verify_says_what_a_manifest_that_names_the_missing_rule_only_states():
    """A manifest of schema version 1 holds the missing-value rule's name only ("drop", "error"): the words
    say the rule and that the manifest states no count of missing values; a rule's object gives its own words."""
    import json

    from dpgui.app.dialogs.verify import _missing_words

    golden = Path(__file__).resolve().parents[1] / "report" / "golden" / "bundles" / "5910ebe"
    named = {json.loads((golden / f"cdf-v1-{name}.manifest.json").read_text(encoding="utf-8"))["missing_values"]
             for name in ("missing-word", "missing-error")}
    assert named == {"drop", "error"}
    only = " (the manifest names the rule only and states no count of missing values)"
    assert _missing_words("drop") == "left out before counting" + only
    assert _missing_words("error") == "the release would have stopped at a missing value" + only
    assert _missing_words("bucket") == "bucket"  # a name dpgui does not know: said as it is
    assert _missing_words({"rule": "bucket", "description": "counted in a bucket", "released_count": 12.4}) == (
        "counted in a bucket; released count about 12")


@pytest.mark.slow
def test_verify_refuses_a_changed_csv(qtbot, bundle):
    paths, files, _, _ = bundle
    text = paths.csv.read_text()
    paths.csv.write_text(text.replace(",", ";", 1))
    dialog = VerifyDialog()
    qtbot.addWidget(dialog)

    result = dialog.verify_paths(paths.manifest, files.public_path)

    assert not result.ok
    rows = dialog.check_rows()
    assert [mark for mark, _, _ in rows] == ["✓", "✓", "✓", "✗"]
    assert "payroll-2026.csv does not match the SHA-256" in rows[-1][1]
    assert dialog.verdict_text().startswith("NOT verified: the CSV file payroll-2026.csv does not match")
    assert dialog.facts() == {}  # nothing from an unverified bundle is shown as fact
    assert "changed or replaced after signing" in dialog.advice.text()


@pytest.mark.slow
def test_verify_refuses_a_bundle_of_test_noise_signed_by_hand(qtbot, bundle):
    """Test noise never verifies: a manifest that says seeded_test_only does not verify, even with a good signature."""
    import json

    paths, files, _, _ = bundle
    manifest = json.loads(paths.manifest.read_text())
    manifest["random_source"] = "seeded_test_only"
    body = (json.dumps(manifest, indent=2) + "\n").encode()
    paths.manifest.write_bytes(body)
    paths.signature.write_text(load_secret_key(files.secret_path, PASSPHRASE).sign(body, "hand-signed test noise"))
    dialog = VerifyDialog()
    qtbot.addWidget(dialog)

    result = dialog.verify_paths(paths.manifest, files.public_path)

    assert not result.ok
    assert [mark for mark, _, _ in dialog.check_rows()] == ["✓", "✓", "✗"]  # signature and schema hold
    assert dialog.verdict_text().startswith("NOT verified: the release used test noise")
    assert "test noise" in dialog.advice.text() and "changed or replaced" not in dialog.advice.text()
    assert dialog.facts() == {}


@pytest.mark.slow
def test_verify_refuses_the_wrong_key(qtbot, bundle):
    paths, files, other, _ = bundle
    dialog = VerifyDialog()
    qtbot.addWidget(dialog)

    result = dialog.verify_paths(paths.manifest, other.public_path)

    assert not result.ok
    assert dialog.check_rows() == [("✗", f"The manifest was signed with key {files.key_id_hex}, not with key "
                                         f"{other.key_id_hex}.", False)]
    assert dialog.verdict_text().startswith("NOT verified:") and files.key_id_hex in dialog.verdict_text()
    assert "“officer”" in dialog.advice.text()  # points at the right key in the list
    assert dialog.facts() == {}


@pytest.mark.slow
def test_verify_with_a_key_file_from_elsewhere_and_bad_inputs(qtbot, bundle, tmp_path):
    paths, files, _, _ = bundle
    outside = tmp_path / "publisher.pub"
    outside.write_bytes(files.public_path.read_bytes())
    dialog = VerifyDialog()
    qtbot.addWidget(dialog)

    assert dialog.verify_paths(paths.manifest, outside).ok
    assert dialog.key_file() == outside and "publisher.pub" in dialog.key_combo.currentText()

    garbage = tmp_path / "garbage.pub"
    garbage.write_text("not a key\n")
    result = dialog.verify_paths(paths.manifest, garbage)
    assert not result.ok and "public key" in dialog.verdict_text()

    result = dialog.verify_paths(tmp_path / "missing.manifest.json", files.public_path)
    assert not result.ok and "cannot be read" in dialog.verdict_text()

    dialog.manifest_edit.setText("")
    assert dialog.verify() is None and "Choose the release's manifest" in dialog.input_message.text()

    dialog.set_manifest(paths.manifest)  # the key it names is chosen from the list
    assert dialog.key_file() == files.public_path
    assert dialog.verify().ok


# ------------------------------------------------------------------------------------------ the buttons
@pytest.mark.slow
def test_buttons_with_file_dialogs_answered(qtbot, bundle, tmp_path, monkeypatch):
    """The button paths (file dialogs, the create form, the raise confirmation) with their modal
    windows answered by the test."""
    from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox

    from dpgui.app.dialogs.keys import CreateKeyDialog

    paths, files, other, _ = bundle
    keys = KeyManagerDialog()
    qtbot.addWidget(keys)

    def fill_and_accept(form):
        form.name_edit.setText("second")
        form.passphrase_edit.setText(PASSPHRASE)
        form.repeat_edit.setText(PASSPHRASE)
        form._on_create()
        return form.result()

    monkeypatch.setattr(CreateKeyDialog, "exec", fill_and_accept)
    keys.create_key()
    assert keys.selected_key().name == "second" and (keys_dir() / "second.key").is_file()
    assert keys.create_form.result() == QDialog.DialogCode.Accepted

    target = tmp_path / "second-shared.pub"
    asked = {}

    def save_name(parent, title, default, filters):
        asked["default"] = default
        return str(target), filters
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_name))
    keys.export_key()
    assert asked["default"].endswith("second.pub") and target.is_file()

    elsewhere = tmp_path / "publisher.pub"
    elsewhere.write_bytes(create_key("pub", "a long passphrase", tmp_path / "x").public_path.read_bytes())
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(elsewhere), "")))
    keys.import_key()
    assert "publisher" in [k.name for k in keys.keys()]  # noqa: SIM118 (the dialog's keys(), not a dict's)

    verify = VerifyDialog()
    qtbot.addWidget(verify)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(paths.manifest), "")))
    verify.choose_manifest()
    assert verify.manifest_edit.text() == str(paths.manifest) and verify.key_file() == files.public_path
    outside = tmp_path / "outside.pub"
    outside.write_bytes(other.public_path.read_bytes())
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(outside), "")))
    verify.key_combo.setCurrentIndex(verify.key_combo.count() - 1)
    verify._key_activated(verify.key_combo.count() - 1)  # "Other file…"
    assert verify.key_file() == outside
    assert not verify.verify().ok
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: ("", "")))
    before = verify.key_combo.currentIndex()
    verify.key_combo.setCurrentIndex(verify.key_combo.count() - 1)
    verify._key_activated(verify.key_combo.count() - 1)  # cancelled: the previous key stays chosen
    assert verify.key_combo.currentIndex() == before

    with Ledger() as ledger:
        ledger.set_cap("payroll", 1.0)
    ledger_dialog = LedgerDialog()
    qtbot.addWidget(ledger_dialog)
    monkeypatch.setattr(QMessageBox, "exec", lambda box: box.button(QMessageBox.StandardButton.Cancel).click())
    form = ledger_dialog.budget_form("payroll")
    qtbot.addWidget(form)
    form.epsilon_field.set_text("2")
    form.reason_edit.setText("more releases approved")
    assert not ledger_dialog._submit_form(form)  # the confirmation was cancelled
    with Ledger() as ledger:
        assert ledger.totals("payroll").cap_epsilon == 1.0

    def click_raise(box):
        next(b for b in box.buttons() if b.text() == "Raise budget").click()
    monkeypatch.setattr(QMessageBox, "exec", click_raise)
    assert ledger_dialog._submit_form(form)
    with Ledger() as ledger:
        assert ledger.totals("payroll").cap_epsilon == 2.0


@pytest.mark.slow
def test_the_raise_question_and_the_ledger_path_show_user_text_literally(qtbot, monkeypatch):
    """User text is shown literally: a dataset name or a reason with markup can neither format nor hide the rest
    of the question that asks to raise a budget; the ledger's path shows as it is."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    name, reason = "<b>pay</b><!--", "board <i>ok</i><!-- hidden"
    with Ledger() as ledger:
        ledger.set_cap(name, 1.0)
    dialog = LedgerDialog()
    qtbot.addWidget(dialog)
    asked = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: asked.append((box.textFormat(), box.text())) or 0)
    dialog.confirm_raise(name, dialog.totals_for(name), 3.0, 0.0, reason)
    fmt, shown = asked[0]
    assert fmt == Qt.TextFormat.PlainText
    assert name in shown and reason in shown and shown.rstrip().endswith("for good.")
    assert dialog.path_label.textFormat() == Qt.TextFormat.PlainText
