"""No signed bundle without a ledgered secure release.

A release may be signed only if the budget ledger holds its id for the same dataset, with the
output record written right after its noise was drawn (SHA-256 of the released levels, its public
parameters, secure noise), and the release to be signed matches that record. Test noise is never
signed, and `dpgui verify` fails on any bundle that says it used test noise.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import uuid
from datetime import datetime, timezone

import numpy as np
import pytest

from dpgui.cli import main
from dpgui.core.mechanism import release as engine_release
from dpgui.core.noise import SecureRandom, SeededRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.errors import DataError, ParameterError
from dpgui.report import ledger as ledger_module
from dpgui.report.ledger import schema as ledger_schema
from dpgui.report.bundle import BundlePaths, manifest_bytes, verify_bundle
from dpgui.report.cdf.bundle import ReleaseInfo, build_manifest, write_bundle
from dpgui.report.cdf.csv_export import release_csv_text
from dpgui.report.keystore import create_key, load_public_key, load_secret_key
from dpgui.report.ledger import Ledger
from dpgui.report.project_file import ProjectRelease
from dpgui.report.publish import BundleNotRecorded, levels_sha256
from dpgui.report.cdf.publish import authenticate_release, sign_release, spend_and_release

PASSPHRASE = "a signing rule passphrase"
COUNTS = np.random.default_rng(12).integers(0, 300, 64)
PDF = b"%PDF-1.4 stand-in report\n"


@pytest.fixture
def key(tmp_path):
    files = create_key("officer", PASSPHRASE, tmp_path / "keys")
    return load_secret_key(files.secret_path, PASSPHRASE), load_public_key(files.public_path), files.public_path


def _secure_release(ledger: Ledger, dataset: str = "payroll"):
    ledger.set_cap(dataset, 10.0)
    return spend_and_release(ledger, dataset, "salary", "drop", COUNTS, auto_plan(64, PrivacySpec(1.0)),
                             SecureRandom(), 0.0, 640.0, "l2", n_missing=0)


def _restored(result, info):
    """The release as a project file gives it back (saved and read: no secure flag)."""
    record = ProjectRelease.from_release(result, info.release_id, info.created_utc, info.column, info.missing)
    return record.to_release()


def _hand_signed(folder, result, info, secret) -> BundlePaths:
    """A bundle written file by file with the signing helpers, bypassing write_bundle's refusal."""
    paths = BundlePaths.of(folder, "hand")
    csv_bytes = release_csv_text(result).encode()
    manifest = build_manifest(result, info, "hand", csv_bytes, PDF, secret.public_key.key_id_hex)
    body = manifest_bytes(manifest)
    paths.csv.write_bytes(csv_bytes)
    paths.pdf.write_bytes(PDF)
    paths.manifest.write_bytes(body)
    paths.signature.write_text(secret.sign(body, "hand-signed"))
    return paths


# ------------------------------------------------------------ test noise is never signed
def test_write_bundle_refuses_a_seeded_release_and_writes_nothing(tmp_path, key):
    secret, _, _ = key
    with Ledger() as ledger:
        ledger.set_cap("payroll", 10.0)
        result, info = spend_and_release(ledger, "payroll", "salary", "drop", COUNTS, auto_plan(64, PrivacySpec(1.0)),
                                         SeededRandom(3), 0.0, 640.0, "l2", n_missing=0)
        assert not result.secure
        out = tmp_path / "out"
        out.mkdir()
        with pytest.raises(DataError, match="test noise"):
            write_bundle(out, "seeded", result, info, PDF, secret)
        with pytest.raises(DataError, match="test noise"):  # the one signing path says the same
            sign_release(ledger, out, "seeded", result, info, PDF, secret)
        # a seeded release marked secure by hand is refused by the ledger's record of its noise
        forged = dataclasses.replace(result, secure=True)
        with pytest.raises(DataError, match="test noise"):
            sign_release(ledger, out, "seeded", forged, info, PDF, secret)
        assert ledger.release(info.release_id).bundle is None
    assert list(out.iterdir()) == []


def test_verify_fails_on_a_signed_seeded_manifest(tmp_path, key, capsys):
    secret, public, public_path = key
    result = engine_release(COUNTS, auto_plan(64, PrivacySpec(1.0)), SeededRandom(4), 0.0, 640.0, "l2")
    info = ReleaseInfo("payroll", "salary", uuid.uuid4().hex, datetime.now(timezone.utc), "drop")
    paths = _hand_signed(tmp_path, result, info, secret)
    assert json.loads(paths.manifest.read_text())["random_source"] == "seeded_test_only"

    verdict = verify_bundle(paths.manifest, public)
    assert not verdict.ok
    assert verdict.failure.startswith("the release used test noise") and "seeded_test_only" in verdict.failure
    assert "\n" not in verdict.failure
    code = main(["verify", str(paths.manifest), "--pubkey", str(public_path)])
    out, err = capsys.readouterr()
    assert code == 1 and "VERIFIED" not in out
    assert err.startswith("FAILED: the release used test noise") and err.count("\n") == 1

    # the same hand-signing of a secure release verifies: the refusal is about the noise only
    (tmp_path / "good").mkdir()
    good = _hand_signed(tmp_path / "good", dataclasses.replace(result, secure=True), info, secret)
    assert verify_bundle(good.manifest, public).ok


# ----------------------------------------------------- only a ledgered release is signed
def test_a_secure_release_signs_and_the_ledger_points_to_it(tmp_path, key):
    secret, public, _ = key
    with Ledger() as ledger:
        result, info = _secure_release(ledger)
        output = ledger.release_output(info.release_id)
        assert output is not None and output.secure and output.levels_sha256 == levels_sha256(result.levels)
        paths = sign_release(ledger, tmp_path, "good", result, info, PDF, secret)
        assert ledger.release(info.release_id).bundle == str(paths.manifest.resolve())
    verdict = verify_bundle(paths.manifest, public)
    assert verdict.ok, verdict.failure
    assert verdict.manifest["random_source"] == "os_csprng"


def test_a_release_restored_from_a_project_is_confirmed_by_the_ledger_not_the_file():
    with Ledger() as ledger:
        result, info = _secure_release(ledger)
        restored = _restored(result, info)
        assert not restored.secure  # the file says nothing about the noise
        confirmed = authenticate_release(ledger, restored, info)
        assert confirmed.secure
        np.testing.assert_array_equal(confirmed.cumulative, result.cumulative)


def test_an_invented_release_is_refused(tmp_path, key):
    """A forged release: exact counts, an invented id, "secure": true. Nothing is written."""
    secret, _, _ = key
    plan = auto_plan(64, PrivacySpec(1.0))
    exact = [None if lvl is None else np.asarray(lvl) for lvl in plan.shape.level_counts(COUNTS.astype(np.int64))]
    from dpgui.core.mechanism import release_from_levels

    forged = release_from_levels(plan, exact, 0.0, 640.0, "l2", True)
    info = ReleaseInfo("payroll", "salary", uuid.uuid4().hex, datetime.now(timezone.utc), "drop")
    with Ledger() as ledger:
        _secure_release(ledger)  # the dataset exists and has a genuine release: the forged id is still unknown
        before = ledger.releases()
        with pytest.raises(DataError, match="is not in the budget ledger"):
            sign_release(ledger, tmp_path, "forged", forged, info, PDF, secret)
        assert ledger.releases() == before
    assert list(tmp_path.glob("forged*")) == []


@pytest.mark.slow
@pytest.mark.parametrize("change, words", [
    ("levels", "released counts"), ("lower", "lower bound"), ("plan", "plan"), ("column", "column"),
    ("dataset", "for dataset 'payroll', not 'other'"), ("created", "release time"), ("missing", "missing-value"),
])
def test_a_changed_restored_release_is_refused(tmp_path, key, change, words):
    secret, _, _ = key
    out = tmp_path / "out"
    out.mkdir()
    with Ledger() as ledger:
        result, info = _secure_release(ledger)
        restored = _restored(result, info)
        if change == "levels":  # one released count edited in the project file
            levels = [None if lvl is None else lvl.copy() for lvl in restored.levels]
            levels[-1][5] += 1
            restored = dataclasses.replace(restored, levels=tuple(levels))
        elif change == "lower":
            restored = dataclasses.replace(restored, lower=1.0)
        elif change == "plan":
            restored = dataclasses.replace(restored, plan=auto_plan(64, PrivacySpec(2.0)))
        elif change == "column":
            info = dataclasses.replace(info, column="bonus")
        elif change == "dataset":
            info = dataclasses.replace(info, dataset="other")
        elif change == "created":
            info = dataclasses.replace(info, created_utc=datetime(2020, 1, 1, tzinfo=timezone.utc))
        elif change == "missing":
            info = dataclasses.replace(info, missing="error")
        with pytest.raises(DataError) as refused:
            sign_release(ledger, out, "changed", restored, info, PDF, secret)
        assert words in refused.value.problem and "cannot be signed" in refused.value.problem
        assert ledger.release(info.release_id).bundle is None
    assert list(out.iterdir()) == []


def test_recording_the_bundle_fails_after_writing_the_files_are_removed(tmp_path, key, monkeypatch):
    secret, _, _ = key
    out = tmp_path / "out"
    out.mkdir()
    with Ledger() as ledger:
        result, info = _secure_release(ledger)

        def broken(self, release_id, bundle_path):
            raise DataError("the budget ledger cannot be used: disk I/O error", "check the disk and try again")

        with pytest.MonkeyPatch.context() as patch:  # not the test's monkeypatch: that one also holds DPGUI_HOME
            patch.setattr(Ledger, "record_bundle", broken)
            with pytest.raises(BundleNotRecorded) as failed:
                sign_release(ledger, out, "unrecorded", result, info, PDF, secret)
        assert "could not record it" in failed.value.problem and "files were removed" in failed.value.problem
        assert list(out.iterdir()) == []
        assert ledger.release(info.release_id).bundle is None
        # a ledger that cannot accept the pointer is found before anything is written
        monkeypatch.setattr(Ledger, "check_bundle_pointer",
                            lambda self, rid, path: (_ for _ in ()).throw(DataError("the budget ledger is busy", "wait")))
        monkeypatch.setattr(ledger_module.Ledger, "record_bundle", lambda *a: pytest.fail("must not be reached"))
        with pytest.raises(DataError, match="busy"):
            sign_release(ledger, out, "unrecorded", result, info, PDF, secret)
        assert list(out.iterdir()) == []


def test_check_bundle_pointer_changes_nothing():
    with Ledger() as ledger:
        _result, info = _secure_release(ledger)
        ledger.record_bundle(info.release_id, "/somewhere/a.manifest.json")
        ledger.check_bundle_pointer(info.release_id, "/elsewhere/b.manifest.json")
        assert ledger.release(info.release_id).bundle == "/somewhere/a.manifest.json"
        with pytest.raises(DataError, match="not in the budget ledger"):
            ledger.check_bundle_pointer("nope", "/elsewhere/b.manifest.json")
        with pytest.raises(ParameterError, match="bundle path"):
            ledger.check_bundle_pointer(info.release_id, "/x" * 2001)


def test_the_output_record_is_written_once_and_never_changed():
    with Ledger() as ledger:
        _result, info = _secure_release(ledger)
        with pytest.raises(DataError, match="already recorded"):
            ledger.record_output(info.release_id, "0" * 64, {}, True)
        with pytest.raises(DataError, match="not in the budget ledger"):
            ledger.record_output("unknown", "0" * 64, {}, True)
        path = ledger.path
    raw = sqlite3.connect(path)
    try:
        for statement in ("UPDATE release_outputs SET levels_sha256 = ?", "DELETE FROM release_outputs WHERE 1 = ?"):
            with pytest.raises(sqlite3.DatabaseError, match="never"):
                raw.execute(statement, ("0" * 64,) if "UPDATE" in statement else (1,))
    finally:
        raw.close()


def _version_1_ledger(path) -> str:
    """A ledger as dpgui 0.1 wrote it (schema version 1: no output records), with one release."""
    old = ledger_schema._SCHEMA.replace(ledger_schema._OUTPUTS_SCHEMA, "").replace(
        f"user_version = {ledger_module.SCHEMA_VERSION}", "user_version = 1")
    assert "release_outputs" not in old and "user_version = 1" in old
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in ledger_schema._split_sql(old):
            conn.execute(statement)
        conn.execute("INSERT INTO datasets VALUES ('payroll', 5.0, 0.0, '2026-01-01T00:00:00.000000Z')")
        conn.execute("INSERT INTO releases (release_id, dataset_id, created_utc, epsilon, delta, mechanism, description) "
                     "VALUES ('old-1', 'payroll', '2026-01-02T00:00:00.000000Z', 1.0, 0.0, 'discrete_laplace_tree', '{}')")
    finally:
        conn.close()
    return "old-1"


def test_a_version_1_ledger_is_upgraded_and_its_releases_cannot_be_signed_from_a_file(tmp_path, key):
    secret, _, _ = key
    path = tmp_path / "old.sqlite3"
    old_id = _version_1_ledger(path)
    with Ledger(path) as ledger:
        assert [e.release_id for e in ledger.releases()] == [old_id]  # still readable
        assert ledger.totals("payroll").epsilon_spent == 1.0
        assert ledger.release_output(old_id) is None
        restored = engine_release(COUNTS, auto_plan(64, PrivacySpec(1.0)), SecureRandom(), 0.0, 640.0, "l2")
        info = ReleaseInfo("payroll", "salary", old_id, datetime.now(timezone.utc), "drop")
        with pytest.raises(DataError) as refused:
            sign_release(ledger, tmp_path, "old", restored, info, PDF, secret)
        assert "earlier dpgui" in refused.value.problem and "release it again" in refused.value.fix
        # new releases in the upgraded ledger get their output record and sign
        result, new_info = spend_and_release(ledger, "payroll", "salary", "drop", COUNTS,
                                             auto_plan(64, PrivacySpec(1.0)), SecureRandom(), 0.0, 640.0, "l2", n_missing=0)
        sign_release(ledger, tmp_path, "new", result, new_info, PDF, secret)
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == ledger_module.SCHEMA_VERSION == 3
    finally:
        raw.close()


def test_the_cli_release_signs_through_the_ledger_check(tmp_path, monkeypatch, capsys):
    """`dpgui release --bundle` uses the same signing path: a failing ledger pointer leaves no bundle."""
    data = tmp_path / "pay.csv"
    data.write_text("salary\n" + "\n".join(str(v) for v in range(0, 640, 3)) + "\n")
    (tmp_path / "pass").write_text(PASSPHRASE + "\n")
    files = create_key("cli", PASSPHRASE, tmp_path / "keys")
    out = tmp_path / "out"
    out.mkdir()
    assert main(["ledger", "cap", "pay", "5"]) == 0
    monkeypatch.setattr(Ledger, "record_bundle",
                        lambda self, rid, p: (_ for _ in ()).throw(DataError("the budget ledger is full", "free space")))
    code = main(["release", str(data), "--column", "salary", "--lower", "0", "--upper", "640", "--bins", "64",
                 "--epsilon", "1", "--bundle", str(out), "--key", str(files.secret_path), "--passphrase-file",
                 str(tmp_path / "pass"), "--name", "pay", "--dataset", "pay"])
    err = capsys.readouterr().err
    assert code == 2 and "could not record it" in err and "files were removed" in err
    assert list(out.iterdir()) == []
