"""The window's Verify dialog on hostile signed manifests (the same checks as ``dpgui verify``): nested
100,000 deep, a key given twice, ε = NaN. Choosing such a manifest does not crash the window
(it used to end in a RecursionError while preselecting the signer's key); verifying it fails with one
sentence naming the field, and no fact of the manifest is shown."""

from __future__ import annotations

import json

import pytest

from dpgui.app.dialogs.verify import VerifyDialog
from dpgui.report.keystore import create_key, load_secret_key

pytestmark = pytest.mark.slow

PASSPHRASE = "correct horse battery"
DEEP = 100_000


def _manifest_text(key_id: str) -> str:
    manifest = {"schema_version": 2, "kind": "cdf", "dataset": "payroll", "privacy": {"epsilon": 1.0, "delta": 0.0,
                                                                                     "rho": None},
                "signer": {"key_id": key_id}}
    return json.dumps(manifest, indent=1)


HOSTILE = [
    ("nested-100k-deep", lambda t: t.rstrip()[:-1] + ', "x": ' + "[" * DEEP + "]" * DEEP + "}", "nested"),
    ("key-twice", lambda t: t.replace('"epsilon": 1.0,', '"epsilon": 1.0, "epsilon": 1e-9,'), "'epsilon' twice"),
    ("epsilon-nan", lambda t: t.replace('"epsilon": 1.0', '"epsilon": NaN'), "privacy/epsilon"),
]


@pytest.mark.parametrize("case", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_a_hostile_signed_manifest_fails_in_one_sentence(qtbot, tmp_path, case):
    _, edit, words = case
    files = create_key("officer", PASSPHRASE)
    secret = load_secret_key(files.secret_path, PASSPHRASE)
    body = edit(_manifest_text(files.key_id_hex)).encode("utf-8")
    manifest = tmp_path / "hostile.manifest.json"
    manifest.write_bytes(body)
    (tmp_path / "hostile.manifest.json.minisig").write_text(secret.sign(body, "hostile"), encoding="utf-8")
    dialog = VerifyDialog()
    qtbot.addWidget(dialog)
    dialog.set_manifest(manifest)  # preselects the signer's key from the (unverified) manifest

    result = dialog.verify_paths(manifest, files.public_path)

    assert not result.ok
    assert dialog.check_rows()[0][2]  # the signature holds: only the content is wrong
    assert words in dialog.verdict_text() and "\n" not in dialog.verdict_text()
    assert len(dialog.verdict_text()) < 300
    assert dialog.facts() == {}
