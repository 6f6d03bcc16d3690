"""Ed25519 signatures in minisign's format, and the passphrase-encrypted secret key.

Algorithm: Ed25519 over the BLAKE2b-512 hash of the file (minisign's "prehashed" ``ED``
signatures, the default since minisign 0.8), so the stock tool verifies what dpgui signs::

    minisign -Vm release.csv -p officer.pub

Verification also accepts minisign's legacy ``Ed`` signatures (Ed25519 over the raw file).
A signature file carries a *trusted comment* (signed together with the signature, so it
cannot be altered) and an *untrusted comment* (not signed; anyone can change it).

What is secret: only the 32-byte Ed25519 private key (the seed). On disk it is encrypted with
AES-256-GCM under a key derived from the passphrase by scrypt. Public: the key id (8 random
bytes that name a key pair, not secret and not a security property), the public key, the
signatures and both comments.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import secrets
import unicodedata
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from dpgui.errors import DataError, ParameterError
from dpgui.report.files import parse_json

PUBLIC_KEY_ALGORITHM = b"Ed"
PREHASHED_ALGORITHM = b"ED"  # Ed25519 over BLAKE2b-512(file): what we write
LEGACY_ALGORITHM = b"Ed"  # Ed25519 over the raw file: accepted when verifying
UNTRUSTED_PREFIX = "untrusted comment: "
TRUSTED_PREFIX = "trusted comment: "
DEFAULT_UNTRUSTED_COMMENT = "signature from dpgui secret key"
# minisign reads each comment line into a fixed buffer (1024 and 8192 bytes with the prefix).
MAX_UNTRUSTED_COMMENT_BYTES = 1000
MAX_TRUSTED_COMMENT_BYTES = 8000

SECRET_KEY_FORMAT = "dpgui-secret-key"
SECRET_KEY_VERSION = 1
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**16, 8, 1  # 128·N·r bytes = 64 MiB of memory per derivation
MIN_PASSPHRASE_CHARS = 8


class SignatureError(DataError):
    """A signature does not verify; the message says which check failed."""


class WrongPassphrase(DataError):
    """The passphrase does not decrypt the secret key."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str, what: str, length: int | None = None) -> bytes:
    """Strict base64: canonical encoding only (so no two texts decode to the same bytes)."""
    try:
        data = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise DataError(f"{what} is not valid base64") from None
    if _b64(data) != text:
        raise DataError(f"{what} is not canonical base64")
    if length is not None and len(data) != length:
        raise DataError(f"{what} has {len(data)} bytes instead of {length}")
    return data


def _check_comment(comment: str, what: str, max_bytes: int) -> bytes:
    if "\n" in comment or "\r" in comment:
        raise ParameterError(f"the {what} contains a line break", "write it on one line")
    encoded = comment.encode("utf-8")
    if len(encoded) > max_bytes:
        raise ParameterError(f"the {what} is {len(encoded)} bytes long (at most {max_bytes})", "shorten it")
    return encoded


def key_id_display(key_id: bytes) -> str:
    """minisign's display of a key id: the 8 bytes as a little-endian uint64 in upper-case hex.

    Like minisign (``%" PRIX64``), without leading zeros: 1 to 16 hex digits.
    """
    return f"{int.from_bytes(key_id, 'little'):X}"


@dataclass(frozen=True)
class PublicKey:
    """A minisign public key: an 8-byte key id and a 32-byte Ed25519 public key."""

    key_id: bytes
    key: bytes

    def __post_init__(self) -> None:
        if len(self.key_id) != 8 or len(self.key) != 32:
            raise ValueError("a public key needs an 8-byte key id and 32 key bytes")

    @property
    def key_id_hex(self) -> str:
        """The key id as minisign prints it (upper-case hex, no leading zeros)."""
        return key_id_display(self.key_id)

    def to_text(self) -> str:
        """The ``.pub`` file text, as written by ``minisign -G``."""
        return (f"{UNTRUSTED_PREFIX}minisign public key {self.key_id_hex}\n"
                f"{_b64(PUBLIC_KEY_ALGORITHM + self.key_id + self.key)}\n")

    @classmethod
    def from_text(cls, text: str) -> PublicKey:
        """Parse a ``.pub`` file (an untrusted comment line, then the base64 key line)."""
        lines = text.replace("\r\n", "\n").split("\n")
        fix = "use the .pub file made by dpgui or by `minisign -G`"
        if len(lines) < 2 or not lines[0].startswith(UNTRUSTED_PREFIX) or any(lines[2:]):
            raise DataError("not a minisign public key (expected a comment line and a key line)", fix)
        try:
            raw = _unb64(lines[1], "the public key line", 42)
        except DataError as err:
            raise DataError(f"not a minisign public key: {err.problem}", fix) from None
        if raw[:2] != PUBLIC_KEY_ALGORITHM:
            raise DataError(f"not an Ed25519 minisign public key (algorithm {raw[:2]!r})", fix)
        return cls(raw[2:10], raw[10:])

    def verify(self, data: bytes, signature_text: str) -> str:
        """Check a ``.minisig`` text against ``data``; return its trusted comment.

        Raises :class:`SignatureError` naming the failed check: malformed signature file, key id
        mismatch, signature does not match the file, or trusted comment altered.
        """
        algorithm, key_id, signature, trusted_comment, global_signature = _parse_signature(signature_text)
        if key_id != self.key_id:
            raise SignatureError(f"the file was signed with key {key_id_display(key_id)}, not with key {self.key_id_hex}",
                                 f"verify with the public key {key_id_display(key_id)} of whoever signed it")
        verifier = Ed25519PublicKey.from_public_bytes(self.key)
        message = hashlib.blake2b(data, digest_size=64).digest() if algorithm == PREHASHED_ALGORITHM else data
        try:
            verifier.verify(signature, message)
        except InvalidSignature:
            raise SignatureError("the signature does not match the file: the file or its signature was changed after signing",
                                 "get the original file and its .minisig file from the publisher again") from None
        try:
            verifier.verify(global_signature, signature + trusted_comment.encode("utf-8"))
        except InvalidSignature:
            raise SignatureError("the trusted comment of the signature was altered after signing",
                                 "get the original .minisig file from the publisher again") from None
        return trusted_comment


def _parse_signature(text: str) -> tuple[bytes, bytes, bytes, str, bytes]:
    """(algorithm, key id, signature, trusted comment, global signature) of a ``.minisig`` text."""
    fix = "get the .minisig file from the publisher again"
    lines = text.replace("\r\n", "\n").split("\n")
    if len(lines) < 4 or any(lines[4:]):
        raise SignatureError("the signature file is malformed: it must have exactly 4 lines", fix)
    if not lines[0].startswith(UNTRUSTED_PREFIX) or not lines[2].startswith(TRUSTED_PREFIX):
        raise SignatureError("the signature file is malformed: the comment lines are missing", fix)
    try:
        raw = _unb64(lines[1], "the signature line", 74)
        global_signature = _unb64(lines[3], "the trusted comment signature line", 64)
    except DataError as err:
        raise SignatureError(f"the signature file is malformed: {err.problem}", fix) from None
    if raw[:2] not in (PREHASHED_ALGORITHM, LEGACY_ALGORITHM):
        raise SignatureError(f"the signature file is malformed: unknown algorithm {raw[:2]!r}", fix)
    return raw[:2], raw[2:10], raw[10:], lines[2][len(TRUSTED_PREFIX):], global_signature


@dataclass(frozen=True, eq=False)
class SecretKey:
    """A key id and an Ed25519 private key (the only secret). Compared by identity."""

    key_id: bytes
    private_key: Ed25519PrivateKey = field(repr=False)

    @property
    def public_key(self) -> PublicKey:
        return PublicKey(self.key_id, self.private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))

    def sign(self, data: bytes, trusted_comment: str, untrusted_comment: str | None = None) -> str:
        """The ``.minisig`` text for ``data``: a prehashed (``ED``) minisign signature.

        Both comments must be one line; the trusted comment is signed, the untrusted one is not.
        """
        trusted = _check_comment(trusted_comment, "trusted comment", MAX_TRUSTED_COMMENT_BYTES)
        untrusted = DEFAULT_UNTRUSTED_COMMENT if untrusted_comment is None else untrusted_comment
        _check_comment(untrusted, "untrusted comment", MAX_UNTRUSTED_COMMENT_BYTES)
        signature = self.private_key.sign(hashlib.blake2b(data, digest_size=64).digest())
        global_signature = self.private_key.sign(signature + trusted)
        return (f"{UNTRUSTED_PREFIX}{untrusted}\n{_b64(PREHASHED_ALGORITHM + self.key_id + signature)}\n"
                f"{TRUSTED_PREFIX}{trusted_comment}\n{_b64(global_signature)}\n")


def generate_key() -> SecretKey:
    """A new key pair with a random 8-byte key id."""
    return SecretKey(secrets.token_bytes(8), Ed25519PrivateKey.generate())


def _derive(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    normalized = unicodedata.normalize("NFC", passphrase).encode("utf-8")
    return Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(normalized)


def _associated_data(key_id: bytes, public_key: bytes) -> bytes:
    return f"{SECRET_KEY_FORMAT} v{SECRET_KEY_VERSION}".encode() + key_id + public_key


def encrypt_secret_key(sk: SecretKey, passphrase: str) -> bytes:
    """The secret key file (UTF-8 JSON), the seed encrypted with scrypt + AES-256-GCM.

    Format: ``{"format": "dpgui-secret-key", "version": 1, "key_id": <minisign display>,
    "public_key": b64, "kdf": {"name": "scrypt", "salt": b64, "n", "r", "p"},
    "cipher": "AES-256-GCM", "nonce": b64, "ciphertext": b64}``. The key id and public key are
    authenticated as associated data, so they cannot be swapped for another key's.
    """
    if len(passphrase) < MIN_PASSPHRASE_CHARS:
        raise ParameterError(f"the passphrase has {len(passphrase)} characters; at least {MIN_PASSPHRASE_CHARS} are needed",
                             "choose a longer passphrase, e.g. several unrelated words")
    public = sk.public_key
    salt, nonce = secrets.token_bytes(16), secrets.token_bytes(12)
    seed = sk.private_key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    ciphertext = AESGCM(_derive(passphrase, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)).encrypt(
        nonce, seed, _associated_data(public.key_id, public.key))
    document = {"format": SECRET_KEY_FORMAT, "version": SECRET_KEY_VERSION, "key_id": public.key_id_hex,
                "public_key": _b64(public.key),
                "kdf": {"name": "scrypt", "salt": _b64(salt), "n": SCRYPT_N, "r": SCRYPT_R, "p": SCRYPT_P},
                "cipher": "AES-256-GCM", "nonce": _b64(nonce), "ciphertext": _b64(ciphertext)}
    return (json.dumps(document, indent=2) + "\n").encode("utf-8")


def decrypt_secret_key(blob: bytes, passphrase: str) -> SecretKey:
    """Decrypt a secret key file; :class:`WrongPassphrase` if the passphrase is wrong."""
    fix = "restore the key file from your backup; a damaged secret key cannot be repaired"
    try:
        document = parse_json(blob, "the key file")  # strictly: no key twice, no deep nesting
        if not isinstance(document, dict) or document.get("format") != SECRET_KEY_FORMAT:
            raise DataError("not a dpgui secret key file", "choose the .key file made by dpgui")
        if document.get("version") != SECRET_KEY_VERSION:
            raise DataError(f"secret key file version {document.get('version')!r} is not supported",
                            "use the dpgui version that made the key")
        kdf = document["kdf"]
        n, r, p = kdf["n"], kdf["r"], kdf["p"]
        if (kdf["name"] != "scrypt" or document["cipher"] != "AES-256-GCM"
                or not all(type(v) is int for v in (n, r, p))
                or not (2 <= n <= 2**20 and n & (n - 1) == 0 and 1 <= r <= 32 and 1 <= p <= 16)):
            raise DataError("the secret key file names an unsupported or unsafe scrypt/cipher setting", fix)
        key_id = int(document["key_id"], 16).to_bytes(8, "little")
        public_key = _unb64(document["public_key"], "the public key", 32)
        salt = _unb64(kdf["salt"], "the salt")
        nonce = _unb64(document["nonce"], "the nonce", 12)
        ciphertext = _unb64(document["ciphertext"], "the ciphertext", 48)
    except DataError as err:
        raise DataError(f"the secret key file is damaged: {err.problem}", err.fix or fix) from None
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError, OverflowError):
        raise DataError("the secret key file is damaged or truncated (not the expected JSON)", fix) from None
    try:
        seed = AESGCM(_derive(passphrase, salt, n, r, p)).decrypt(nonce, ciphertext,
                                                                  _associated_data(key_id, public_key))
    except InvalidTag:
        raise WrongPassphrase(f"the passphrase for key {key_id_display(key_id)} is wrong",
                              "type it again; the passphrase cannot be recovered") from None
    sk = SecretKey(key_id, Ed25519PrivateKey.from_private_bytes(seed))
    if sk.public_key.key != public_key:
        raise DataError("the secret key file is damaged: its public key does not match the secret key", fix)
    return sk
