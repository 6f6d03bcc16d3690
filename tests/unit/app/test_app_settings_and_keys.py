"""Settings and keys in the window: recent files are absolute paths; with DPGUI_HOME set, Qt's
settings (recent confidential file paths) live under it, never in the real profile; a key made with
`dpgui key create` can be imported into the window and signs; the quit dialog never speaks of
"0 releases"."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dpgui
from dpgui.cli import main as cli_main
from dpgui.core.noise import SecureRandom
from dpgui.report.bundle import verify_bundle
from dpgui.report.keystore import keys_dir, list_keys, load_public_key

from gui_helpers import make_window, open_and_wait, release_and_wait, set_column

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]


def _csv(folder: Path) -> Path:
    path = folder / "wages.csv"
    path.write_text("wage\n" + "".join(f"{(i * 13) % 100}\n" for i in range(300)), encoding="utf-8")
    return path


def test_recent_files_are_stored_as_absolute_paths(qtbot, tmp_path, monkeypatch):
    _csv(tmp_path)
    monkeypatch.chdir(tmp_path)
    window = make_window(qtbot)
    open_and_wait(qtbot, window, "wages.csv")
    expected = str((tmp_path / "wages.csv").resolve())
    assert window.recent_files()[0] == expected
    assert window.settings.value("recent_files")[0] == expected  # what is stored, not only what is shown
    monkeypatch.chdir(ROOT)  # started elsewhere: the entry still names the file
    assert Path(window.recent_files()[0]).is_file()


def test_dpgui_home_holds_the_windows_settings_and_the_real_profile_gets_nothing(tmp_path):
    real_home, dpgui_home = tmp_path / "real-home", tmp_path / "dpgui-home"
    real_home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "QT_"))}
    env.update(HOME=str(real_home), XDG_CONFIG_HOME=str(real_home / ".config"), DPGUI_HOME=str(dpgui_home),
               QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(Path(dpgui.__file__).resolve().parents[1]))
    script = textwrap.dedent("""
        from dpgui.app.main import create_application
        from dpgui.app.shell.main_window import MainWindow
        app = create_application()
        window = MainWindow()
        window._add_recent("/srv/confidential/secret-payroll.csv")
        window.settings.sync()
        print(window.settings.fileName())
    """)
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    settings_file = Path(result.stdout.strip().splitlines()[-1])
    assert dpgui_home in settings_file.parents
    assert "secret-payroll.csv" in settings_file.read_text(encoding="utf-8")
    leaked = [p for p in real_home.rglob("*") if p.is_file() and b"secret-payroll" in p.read_bytes()]
    assert leaked == []


def test_a_key_made_with_dpgui_key_create_can_be_imported_and_signs(qtbot, tmp_path):
    from dpgui.app.dialogs.keys import KeyManagerDialog

    passfile = tmp_path / "pass"
    passfile.write_text("a command line passphrase\n")
    cli_dir = tmp_path / "cli-keys"
    assert cli_main(["key", "create", "officer", "--passphrase-file", str(passfile), "--dir", str(cli_dir)]) == 0
    window = make_window(qtbot)
    dialog = KeyManagerDialog(window)
    qtbot.addWidget(dialog)
    assert dialog.import_signing_key_from(cli_dir / "officer.key", "the wrong passphrase") is None
    assert "passphrase" in dialog.last_error.lower() and list_keys() == []  # nothing copied
    entry = dialog.import_signing_key_from(cli_dir / "officer.key", "a command line passphrase")
    assert entry is not None, dialog.last_error
    assert entry.secret_path == keys_dir() / "officer.key" and ("officer", entry.key_id_hex, "Can sign (yours)") in \
        dialog.row_texts()
    assert entry.secret_path.stat().st_mode & 0o077 == 0
    assert load_public_key(cli_dir / "officer.pub") == load_public_key(entry.public_path)

    window.noise_source = SecureRandom  # a signed bundle is of a secure release
    open_and_wait(qtbot, window, _csv(tmp_path))
    set_column(qtbot, window, "wage", "0", "100", "10")
    release_and_wait(qtbot, window)
    export = window.cdf.export_dialog()
    out = tmp_path / "out"
    out.mkdir()
    export.folder.setText(str(out))
    export.passphrase.setText("a command line passphrase")
    paths = export.export()
    assert paths is not None, export.message.text()
    result = verify_bundle(paths.manifest, load_public_key(cli_dir / "officer.pub"))
    assert result.ok, result.failure
    assert result.key_id == entry.key_id_hex


def test_the_quit_dialog_does_not_speak_of_zero_releases(qtbot):
    from dpgui.app.shell.project_questions import save_changes_prompt

    window = make_window(qtbot)
    for closing in (True, False):
        box = save_changes_prompt(window, None, 0, closing)
        assert "0 release" not in box.text() and "Save the project?" in box.text()
    assert "The 2 releases of this session are not saved" in save_changes_prompt(window, None, 2, True).text()
