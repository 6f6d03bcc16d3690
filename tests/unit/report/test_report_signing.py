"""minisign-compatible signatures (checked against the real minisign both ways) and key files."""

from __future__ import annotations

import base64
import json
import os
import random
import re
import shutil
import subprocess

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from dpgui.errors import DataError, ParameterError
from dpgui.report import keystore, signing
from dpgui.report.signing import PublicKey, SignatureError, WrongPassphrase

PASSPHRASE = "correct horse battery"
DATA = b"bin_lower,bin_upper,cumulative_count\n0.0,1.0,17\n1.0,2.0,42\n" * 20
POSIX = os.name == "posix"


@pytest.fixture(scope="module")
def key() -> signing.SecretKey:
    return signing.generate_key()


@pytest.fixture
def minisign():
    """Run /usr/bin/minisign without a terminal; a missing minisign fails the test (CI must have it)."""
    path = shutil.which("minisign")
    if path is None:
        pytest.fail("minisign is not installed: run `make system-deps`")

    def run(*args, cwd) -> subprocess.CompletedProcess:
        return subprocess.run([path, *args], cwd=cwd, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=60)
    return run


def test_sign_verify_round_trip_returns_the_trusted_comment(key):
    text = key.sign(DATA, "release 7\tε=1.0", untrusted_comment="from the test")
    lines = text.split("\n")
    assert lines[0] == "untrusted comment: from the test" and lines[2] == "trusted comment: release 7\tε=1.0"
    assert base64.b64decode(lines[1])[:10] == b"ED" + key.key_id and lines[4:] == [""]  # prehashed
    assert key.public_key.verify(DATA, text) == "release 7\tε=1.0"
    assert key.sign(DATA, "c").split("\n")[0] == "untrusted comment: " + signing.DEFAULT_UNTRUSTED_COMMENT


@pytest.mark.parametrize("comments", [("two\nlines", None), ("ok", "two\rlines"), ("x" * 8001, None)])
def test_comments_must_be_one_short_line(key, comments):
    with pytest.raises(ParameterError):
        key.sign(DATA, *comments)


def test_public_key_text_round_trip_and_rejects_garbage(key):
    public = key.public_key
    assert PublicKey.from_text(public.to_text()) == public
    assert public.to_text().startswith(f"untrusted comment: minisign public key {public.key_id_hex}\n")
    for bad in ("", "hello", public.to_text().replace("RW", "RX", 1), public.to_text()[:-10],
                "untrusted comment: x\n" + signing._b64(b"Xy" + bytes(40)) + "\n"):
        with pytest.raises(DataError):
            PublicKey.from_text(bad)


def test_minisign_verifies_our_signatures(minisign, tmp_path):
    made = keystore.create_key("officer", PASSPHRASE)
    sk = keystore.load_secret_key(made.secret_path, PASSPHRASE)
    release = tmp_path / "release.csv"
    release.write_bytes(DATA)
    (tmp_path / "release.csv.minisig").write_text(sk.sign(DATA, "dpgui release 1"), encoding="utf-8")
    ok = minisign("-Vm", "release.csv", "-p", str(made.public_path), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "Trusted comment: dpgui release 1" in ok.stdout
    ok_hashed = minisign("-V", "-H", "-m", "release.csv", "-p", str(made.public_path), cwd=tmp_path)
    assert ok_hashed.returncode == 0, ok_hashed.stderr  # -H: minisign insists on a prehashed signature

    release.write_bytes(DATA.replace(b"42", b"43"))
    tampered = minisign("-Vm", "release.csv", "-p", str(made.public_path), cwd=tmp_path)
    assert tampered.returncode != 0

    # minisign names our key id in its key-mismatch message exactly as we display it
    other = tmp_path / "other.pub"
    other.write_text(signing.generate_key().public_key.to_text(), encoding="utf-8")
    mismatch = minisign("-Vm", "release.csv", "-p", str(other), cwd=tmp_path)
    assert mismatch.returncode != 0 and f"is {made.key_id_hex}\n" in mismatch.stderr + mismatch.stdout


@pytest.mark.parametrize("key_id, shown", [(bytes.fromhex("2200000000000001"), "100000000000022"),
                                            (bytes.fromhex("0700000000000000"), "7"),
                                            (bytes.fromhex("0123456789ABCDEF"), "EFCDAB8967452301")])
def test_key_id_is_shown_as_minisign_shows_it(minisign, tmp_path, key_id, shown):
    sk = signing.SecretKey(key_id, Ed25519PrivateKey.generate())
    assert sk.public_key.key_id_hex == shown  # little-endian, upper case, no leading zeros
    (tmp_path / "f").write_bytes(DATA)
    (tmp_path / "f.minisig").write_text(sk.sign(DATA, "c"), encoding="utf-8")
    (tmp_path / "other.pub").write_text(signing.generate_key().public_key.to_text(), encoding="utf-8")
    mismatch = minisign("-Vm", "f", "-p", "other.pub", cwd=tmp_path)
    assert mismatch.returncode != 0 and f"Signature key id in f.minisig is {shown}\n" in mismatch.stderr


def test_we_verify_minisign_signatures(minisign, tmp_path):
    generated = minisign("-G", "-W", "-p", "mini.pub", "-s", "mini.key", cwd=tmp_path)
    assert generated.returncode == 0, generated.stderr
    pub_text = (tmp_path / "mini.pub").read_text(encoding="utf-8")
    public = keystore.load_public_key(tmp_path / "mini.pub")
    assert public.to_text() == pub_text  # byte-identical .pub files
    assert re.fullmatch(r"untrusted comment: minisign public key ([0-9A-F]{1,16})", pub_text.split("\n")[0])[1] \
        == public.key_id_hex

    (tmp_path / "data.csv").write_bytes(DATA)
    for extra, sig in (([], "data.csv.minisig"), (["-l"], "legacy.minisig")):  # prehashed (default) and legacy
        signed = minisign("-S", *extra, "-s", "mini.key", "-t", "signed by minisign", "-x", sig, "-m", "data.csv",
                          cwd=tmp_path)
        assert signed.returncode == 0, signed.stderr
        text = (tmp_path / sig).read_text(encoding="utf-8")
        assert base64.b64decode(text.split("\n")[1])[:2] == (b"Ed" if extra else b"ED")
        assert public.verify(DATA, text) == "signed by minisign"
        with pytest.raises(SignatureError, match="does not match the file"):
            public.verify(DATA + b"\n", text)


def _mutations(text: str, positions: list[int], rng: random.Random):
    pool = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= \n\r\té-"
    for i in positions:
        replacement = rng.choice(pool.replace(text[i], ""))
        yield text[:i] + replacement + text[i + 1:]


def test_every_single_change_of_signature_or_data_is_detected(key):
    text = key.sign(DATA, "trusted: release 3")
    rng = random.Random(20240611)
    start = text.index("\n") + 1  # the untrusted comment line is, by design, not protected
    positions = [i for i in range(start, len(text) - 1) if text[i] != "\n"]
    assert len(positions) > 190
    for changed in _mutations(text, positions, rng):  # every position of both base64 lines and the trusted comment
        with pytest.raises(SignatureError):
            key.public_key.verify(DATA, changed)
    for i in rng.sample(range(len(DATA)), 300):
        changed = bytearray(DATA)
        changed[i] ^= rng.randrange(1, 256)
        with pytest.raises(SignatureError, match="does not match the file"):
            key.public_key.verify(bytes(changed), text)
    assert key.public_key.verify(DATA, text.rstrip("\n")) == "trusted: release 3"  # the final newline is optional


def test_truncated_signature_files_are_refused(key):
    text = key.sign(DATA, "comment")
    for cut in range(len(text) - 1):
        with pytest.raises(SignatureError):
            key.public_key.verify(DATA, text[:cut])
    with pytest.raises(SignatureError, match="malformed"):
        key.public_key.verify(DATA, "not a signature")


def test_each_failure_names_what_failed(key):
    text = key.sign(DATA, "the real comment")
    other = signing.generate_key()
    with pytest.raises(SignatureError) as err:
        other.public_key.verify(DATA, text)
    assert f"signed with key {key.public_key.key_id_hex}, not with key {other.public_key.key_id_hex}" in str(err.value)
    impostor = PublicKey(key.key_id, other.public_key.key)  # same key id, different key bytes
    with pytest.raises(SignatureError, match="does not match the file"):
        impostor.verify(DATA, text)
    with pytest.raises(SignatureError, match=r"trusted comment .* altered"):
        key.public_key.verify(DATA, text.replace("the real comment", "the fake comment"))


def test_secret_key_encryption(key):
    blob = signing.encrypt_secret_key(key, PASSPHRASE)
    assert signing.decrypt_secret_key(blob, PASSPHRASE).public_key == key.public_key
    assert PASSPHRASE.encode() not in blob
    with pytest.raises(WrongPassphrase) as err:
        signing.decrypt_secret_key(blob, PASSPHRASE + "!")
    assert err.value.problem == f"the passphrase for key {key.public_key.key_id_hex} is wrong"
    assert "cannot be recovered" in err.value.fix
    with pytest.raises(ParameterError, match="at least 8"):
        signing.encrypt_secret_key(key, "short12")
    for cut in (0, 10, len(blob) // 2, len(blob) - 3):
        with pytest.raises(DataError, match="damaged") as damaged:
            signing.decrypt_secret_key(blob[:cut], PASSPHRASE)
        assert not isinstance(damaged.value, WrongPassphrase)
    # another key's public key cannot be swapped in: it is authenticated data
    document = json.loads(blob)
    document["public_key"] = signing._b64(signing.generate_key().public_key.key)
    with pytest.raises(DataError):
        signing.decrypt_secret_key(json.dumps(document).encode(), PASSPHRASE)
    document = json.loads(blob)
    document["kdf"]["n"] = 2**30
    with pytest.raises(DataError, match="unsafe"):
        signing.decrypt_secret_key(json.dumps(document).encode(), PASSPHRASE)


def test_create_key_writes_private_files_and_loads_them():
    made = keystore.create_key("officer", PASSPHRASE)
    assert made.secret_path == keystore.keys_dir() / "officer.key"
    assert keystore.load_public_key(made.public_path).key_id_hex == made.key_id_hex
    sk = keystore.load_secret_key(made.secret_path, PASSPHRASE)
    assert sk.public_key == keystore.load_public_key(made.public_path)
    if POSIX:
        assert made.secret_path.stat().st_mode & 0o777 == 0o600
        assert keystore.keys_dir().stat().st_mode & 0o777 == 0o700
    with pytest.raises(WrongPassphrase, match="is wrong"):
        keystore.load_secret_key(made.secret_path, "not the passphrase")
    with pytest.raises(ParameterError, match="at least 8"):
        keystore.create_key("other", "short")
    assert not (keystore.keys_dir() / "other.key").exists()


def test_create_key_never_overwrites():
    made = keystore.create_key("officer", PASSPHRASE)
    before = made.secret_path.read_bytes(), made.public_path.read_bytes()
    with pytest.raises(DataError, match="already exists"):
        keystore.create_key("officer", PASSPHRASE)
    assert (made.secret_path.read_bytes(), made.public_path.read_bytes()) == before
    made.secret_path.unlink()  # a lone .pub of the same name still blocks the name
    with pytest.raises(DataError, match="already exists"):
        keystore.create_key("officer", PASSPHRASE)


@pytest.mark.parametrize("name", ["", "a/b", "../x", ".hidden", "a b", "ключ", "x" * 65, "a\\b"])
def test_bad_key_names_are_refused(name, tmp_path):
    with pytest.raises(ParameterError, match="not a valid key name"):
        keystore.create_key(name, PASSPHRASE, tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not POSIX, reason="file modes are POSIX")
def test_secret_key_readable_by_others_is_refused():
    made = keystore.create_key("officer", PASSPHRASE)
    made.secret_path.chmod(0o640)
    with pytest.raises(DataError, match="chmod 600"):
        keystore.load_secret_key(made.secret_path, PASSPHRASE)


def test_loading_missing_or_wrong_files(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        keystore.load_public_key(tmp_path / "nope.pub")
    with pytest.raises(DataError, match="does not exist"):
        keystore.load_secret_key(tmp_path / "nope.key", PASSPHRASE)
    made = keystore.create_key("officer", PASSPHRASE)
    with pytest.raises(DataError, match="not a minisign public key"):
        keystore.load_public_key(made.secret_path)
    fake = tmp_path / "fake.key"
    fake.write_bytes(made.public_path.read_bytes())
    fake.chmod(0o600)
    with pytest.raises(DataError, match="damaged") as err:
        keystore.load_secret_key(fake, PASSPHRASE)
    assert str(fake) in str(err.value)


def test_import_export_list(tmp_path):
    keystore.create_key("officer", PASSPHRASE)
    elsewhere = tmp_path / "elsewhere"
    bob = keystore.create_key("bob", PASSPHRASE, elsewhere)
    (keystore.keys_dir() / "zz-broken.pub").write_text("garbage", encoding="utf-8")

    imported = keystore.import_public_key(bob.public_path)
    assert (imported.name, imported.key_id_hex, imported.secret_path) == ("bob", bob.key_id_hex, None)
    assert keystore.import_public_key(bob.public_path) == imported  # importing again is a no-op
    with pytest.raises(DataError, match="different key named 'officer'"):
        keystore.import_public_key(bob.public_path, name="officer")
    with pytest.raises(DataError, match="not a minisign public key"):
        keystore.import_public_key(bob.secret_path, name="x")

    entries = keystore.list_keys()
    assert [(e.name, e.secret_path is not None) for e in entries] == [("bob", False), ("officer", True)]

    exported = keystore.export_public_key("officer", tmp_path)
    assert exported == tmp_path / "officer.pub"
    assert exported.read_text(encoding="utf-8") == entries[1].public_path.read_text(encoding="utf-8")
    assert keystore.export_public_key(entries[0], tmp_path / "b.pub").read_text(encoding="utf-8") \
        == bob.public_path.read_text(encoding="utf-8")


def test_read_passphrase_file(tmp_path):
    path = tmp_path / "pass.txt"
    path.write_bytes("my long passphrase é\r\nsecond line\n".encode())
    assert keystore.read_passphrase_file(path) == "my long passphrase é"
    path.write_bytes(b"\nsecond line\n")
    with pytest.raises(DataError, match="is empty"):
        keystore.read_passphrase_file(path)
    with pytest.raises(DataError, match="does not exist"):
        keystore.read_passphrase_file(tmp_path / "missing.txt")
