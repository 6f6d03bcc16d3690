"""Signing keys on disk: ``NAME.key`` (encrypted secret key, mode 0600) and ``NAME.pub``.

Keys live in ``keys_dir()`` (``<dpgui home>/keys``, user-only) unless a folder is given. A
``.pub`` file is minisign's public key format; a ``.key`` file is dpgui's passphrase-encrypted
JSON (see :mod:`dpgui.report.signing`). Public keys imported from others have no ``.key``.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from dpgui.errors import DataError, ParameterError
from dpgui.report.files import PRIVATE_FILE_MODE, create_file, read_regular_file, write_text_atomic
from dpgui.report.home import ensure_private_dir, user_home
from dpgui.report.signing import (
    PublicKey, SecretKey, WrongPassphrase, decrypt_secret_key, encrypt_secret_key, generate_key,
)

SECRET_SUFFIX = ".key"
PUBLIC_SUFFIX = ".pub"
_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}")


@dataclass(frozen=True)
class KeyFiles:
    """The two files of a newly created key pair."""

    name: str
    key_id_hex: str
    secret_path: Path
    public_path: Path


@dataclass(frozen=True)
class KeyEntry:
    """A key in a key folder; ``secret_path`` is None for a public key imported from someone else."""

    name: str
    key_id_hex: str
    public_path: Path
    secret_path: Path | None


def keys_dir() -> Path:
    """``<dpgui home>/keys``, created user-only (0700 on POSIX)."""
    return ensure_private_dir(user_home() / "keys")


def _check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ParameterError(f"{name!r} is not a valid key name",
                             "use 1 to 64 letters, digits, '-', '_' or '.', not starting with '.'")
    return name


def _folder(directory: Path | None) -> Path:
    return keys_dir() if directory is None else ensure_private_dir(Path(directory))


def create_key(name: str, passphrase: str, directory: Path | None = None) -> KeyFiles:
    """Generate a key pair and write ``NAME.key`` (0600, encrypted) and ``NAME.pub``; never overwrites."""
    folder = _folder(directory)
    secret_path, public_path = folder / (_check_name(name) + SECRET_SUFFIX), folder / (name + PUBLIC_SUFFIX)
    if secret_path.exists() or public_path.exists():
        raise DataError(f"a key named {name!r} already exists in {folder}",
                        "choose another name, or delete its .key and .pub files first")
    sk = generate_key()
    blob = encrypt_secret_key(sk, passphrase)
    _write_key_files(secret_path, public_path, blob, sk.public_key,
                     f"a key named {name!r} already exists in {folder}",
                     "choose another name, or delete its .key and .pub files first")
    return KeyFiles(name, sk.public_key.key_id_hex, secret_path, public_path)


def _read(path: Path, what: str) -> bytes:
    """A key file's bytes: a regular file of at most 16 MiB (a pipe or a device would hang or never end)."""
    return read_regular_file(path, what)


def _read_passphrase_bytes(path: Path, limit: int = 1 << 16) -> bytes:
    """At most ``limit`` bytes of a passphrase file; a pipe is fine (``--passphrase-file <(pass show x)``),
    an endless device is refused once past the limit."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise DataError(f"the passphrase file {path} does not exist", "check the path") from None
    except IsADirectoryError:
        raise DataError(f"the passphrase file {path} is a folder", "choose the file inside it") from None
    except OSError as err:
        raise DataError(f"cannot read the passphrase file {path} ({err.strerror or err})",
                        "check the file's permissions") from None
    if len(data) > limit:
        raise DataError(f"the passphrase file {path} is longer than {limit:,} bytes", "write the passphrase on its first line")
    return data


def load_public_key(path: Path) -> PublicKey:
    """Read a minisign ``.pub`` file."""
    data = _read(path, "public key file")
    try:
        return PublicKey.from_text(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise DataError(f"{path} is not a minisign public key (not text)", "choose a .pub file") from None
    except DataError as err:
        raise DataError(f"{path}: {err.problem}", err.fix) from None


def load_secret_key(path: Path, passphrase: str) -> SecretKey:
    """Decrypt a ``.key`` file; refuses one that other users can read or write (like ssh)."""
    return _read_secret_key(Path(path), passphrase)[1]


def _read_secret_key(path: Path, passphrase: str) -> tuple[bytes, SecretKey]:
    """The ``.key`` file's bytes, read once, and the key they decrypt to (see :func:`load_secret_key`)."""
    blob = _read(path, "secret key file")
    mode = stat.S_IMODE(path.stat().st_mode)
    if os.name == "posix" and mode & 0o077:
        raise DataError(f"secret key file {path} can be accessed by other users (mode {mode:04o})",
                        f"run `chmod 600 {path}` and check no one else copied it")
    try:
        return blob, decrypt_secret_key(blob, passphrase)
    except WrongPassphrase:
        raise
    except DataError as err:
        raise DataError(f"{path}: {err.problem}", err.fix) from None


def list_keys(directory: Path | None = None) -> list[KeyEntry]:
    """The keys in a folder (one per readable ``.pub`` file), sorted by name; unreadable files are skipped."""
    folder = _folder(directory)
    entries = []
    for public_path in folder.glob("*" + PUBLIC_SUFFIX):
        try:
            key = load_public_key(public_path)
        except DataError:
            continue
        secret_path = public_path.with_suffix(SECRET_SUFFIX)
        entries.append(KeyEntry(public_path.stem, key.key_id_hex, public_path,
                                secret_path if secret_path.is_file() else None))
    return sorted(entries, key=lambda entry: entry.name)


def _write_key_files(secret_path: Path, public_path: Path, blob: bytes, public: PublicKey, taken: str,
                     taken_fix: str) -> None:
    """Write the encrypted secret key ``blob`` to ``secret_path`` and the public key beside it (unless
    that file exists already). O_EXCL (:func:`~dpgui.report.files.create_file`): the secret file is
    created 0600 before any byte is written and never replaces a file (``taken``/``taken_fix``: the
    DataError if it exists); on any failure the secret file is removed again."""
    try:
        create_file(secret_path, blob, PRIVATE_FILE_MODE)
    except FileExistsError:
        raise DataError(taken, taken_fix) from None
    except OSError as err:
        raise DataError(f"cannot create {secret_path}: {err.strerror or err}", "check the folder's permissions") from None
    try:
        if not public_path.exists():
            write_text_atomic(public_path, public.to_text())
    except BaseException:
        secret_path.unlink(missing_ok=True)
        raise


def _refuse_another_key(name: str, folder: Path, public_path: Path, key: PublicKey) -> None:
    """A key named ``name`` is already in ``folder``: it must be ``key`` itself (importing the same key
    again is a no-op), else :class:`DataError`."""
    try:
        same = load_public_key(public_path) == key
    except DataError:
        same = False
    if not same:
        raise DataError(f"a different key named {name!r} already exists in {folder}", "import it under another name")


def import_public_key(path: Path, name: str | None = None, directory: Path | None = None) -> KeyEntry:
    """Copy a validated public key into the key folder as ``NAME.pub`` (default name: the file's stem).

    Importing the same key again under the same name is a no-op; another key under that name is refused.
    """
    key = load_public_key(path)
    name = _check_name(Path(path).stem if name is None else name)
    folder = _folder(directory)
    target, secret_path = folder / (name + PUBLIC_SUFFIX), folder / (name + SECRET_SUFFIX)
    if target.exists() or secret_path.exists():
        _refuse_another_key(name, folder, target, key)
    else:
        write_text_atomic(target, key.to_text())
    return KeyEntry(name, key.key_id_hex, target, secret_path if secret_path.is_file() else None)


def import_secret_key(path: Path, passphrase: str, name: str | None = None,
                      directory: Path | None = None) -> KeyEntry:
    """Copy a signing key made elsewhere (``dpgui key create NAME --dir D`` writes ``D/NAME.key``)
    into the key folder as ``NAME.key`` (0600, still encrypted) and ``NAME.pub`` (derived from it),
    so that the window can sign with it. The passphrase is checked by decrypting the key once; the
    key is never written in clear. Default name: the file's stem. The same key again is a no-op; a
    different key under that name is refused (:class:`DataError`); so is a key file that other
    users can read (as :func:`load_secret_key`)."""
    path = Path(path)
    blob, sk = _read_secret_key(path, passphrase)  # the bytes copied are the bytes checked
    public = sk.public_key
    name = _check_name(path.stem if name is None else name)
    folder = _folder(directory)
    secret_path, public_path = folder / (name + SECRET_SUFFIX), folder / (name + PUBLIC_SUFFIX)
    if secret_path.exists() or public_path.exists():
        _refuse_another_key(name, folder, public_path, public)
        if secret_path.is_file():
            return KeyEntry(name, public.key_id_hex, public_path, secret_path)
    _write_key_files(secret_path, public_path, blob, public, f"a key named {name!r} already exists in {folder}",
                     "import it under another name")
    return KeyEntry(name, public.key_id_hex, public_path, secret_path)


def export_public_key(entry_or_name: KeyEntry | str, dest: Path, directory: Path | None = None) -> Path:
    """Write a key's ``.pub`` text to ``dest`` (a file, or a folder to get ``NAME.pub`` in it)."""
    if isinstance(entry_or_name, KeyEntry):
        name, source = entry_or_name.name, entry_or_name.public_path
    else:
        name = _check_name(entry_or_name)
        source = _folder(directory) / (name + PUBLIC_SUFFIX)
    key = load_public_key(source)
    dest = Path(dest)
    return write_text_atomic(dest / (name + PUBLIC_SUFFIX) if dest.is_dir() else dest, key.to_text())


def read_passphrase_file(path: Path) -> str:
    """The first line of a passphrase file, without its line ending."""
    try:
        text = _read_passphrase_bytes(Path(path)).decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(f"passphrase file {path} is not UTF-8 text", "save it as UTF-8") from None
    passphrase = text.split("\n", 1)[0].removesuffix("\r")
    if not passphrase:
        raise DataError(f"passphrase file {path} is empty", "write the passphrase on its first line")
    return passphrase
