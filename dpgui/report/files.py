"""Reading and writing files safely: the one place that opens files for the report layer and the window.

Reading files that someone else handed us (bundles, keys) without hanging or running out of memory:
a path may name a pipe (``open`` waits for a writer for ever), a device such as ``/dev/zero`` (a
read never ends), or a file far larger than the thing it claims to be. Every reader here opens
without blocking, refuses anything that is not a regular file, and reads in blocks with a limit.

Writing never leaves a half-written file: :func:`create_file` creates a new file (never an existing
one) with its mode set before any byte is written, writes and fsyncs it; :func:`write_text_atomic`
writes a temporary file beside the target that way and renames it into place
(:func:`write_temporary`, :func:`remove_stale_temporaries` for the leftovers of a killed writer).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import secrets
import stat
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from dpgui.errors import DataError

BLOCK = 1 << 20  # bytes read per step when hashing
SMALL_FILE_LIMIT = 16 << 20  # manifests, signatures, keys: far below this
#: JSON nested deeper than this is refused (:func:`parse_json`): dpgui's own files nest at most 6 deep.
MAX_JSON_DEPTH = 32
TEMPORARY_SUFFIX = ".tmp"
#: A temporary file is named after its target's first bytes only, so that the hidden name (its pid, 12
#: random hex digits and the suffix added) fits the 255 bytes of a file name for any target that does.
TEMPORARY_STEM_BYTES = 100
_TEMPORARY = re.compile(r"^\..+\.(\d+)-[0-9a-f]{12}\.tmp$")
#: The mode of a new file meant to be shared (minus the umask), as ``open()`` makes it.
SHARED_FILE_MODE = 0o666
#: The mode of a new secret file: readable and writable by its owner only.
PRIVATE_FILE_MODE = 0o600


def _open_regular(path: Path, what: str) -> tuple[int, int]:
    """An fd of the regular file ``path`` (opened without blocking) and its size; DataError otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise DataError(f"the {what} {path} cannot be read: it does not exist", "check the path") from None
    except IsADirectoryError:
        raise DataError(f"the {what} {path} cannot be read: it is a folder", "choose the file inside it") from None
    except OSError as err:
        raise DataError(f"cannot read the {what} {path} ({err.strerror or err})", "check the file's permissions") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = "folder" if stat.S_ISDIR(info.st_mode) else "pipe, socket or device"
        raise DataError(f"the {what} {path} cannot be read: it is not a regular file (it is a {kind})",
                        "choose the file itself")
    return fd, info.st_size


def open_regular_text(path: str | os.PathLike[str], what: str) -> io.TextIOWrapper:
    """The regular file ``path`` opened for reading as UTF-8 text (newlines untranslated, for ``csv``),
    without blocking on a pipe; DataError for anything that is not a regular file. Close it."""
    fd, _ = _open_regular(Path(path), what)
    return io.TextIOWrapper(os.fdopen(fd, "rb"), encoding="utf-8", newline="")


def read_regular_file(path: str | os.PathLike[str], what: str, limit: int = SMALL_FILE_LIMIT) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (DataError beyond: "too large").
    ``what`` names the file in messages ("manifest", "public key file"). O(size)."""
    path = Path(path)
    fd, size = _open_regular(path, what)
    with os.fdopen(fd, "rb") as handle:
        if size > limit:
            raise DataError(f"the {what} {path} is too large ({size:,} bytes) to be a dpgui {what}",
                            "choose the right file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise DataError(f"the {what} {path} grew while it was read", "read it again when it is complete")
    return data


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _short_key(key: str) -> str:
    """A JSON key for a one-line message: control characters escaped, at most 40 characters."""
    text = key.encode("unicode_escape").decode("ascii")
    return text if len(text) <= 40 else text[:39] + "…"


def _non_finite_path(document: Any) -> str | None:
    """The path (``privacy/epsilon``) of the first number that is not finite, or None; :class:`_TooDeep`
    for nesting deeper than :data:`MAX_JSON_DEPTH`. Iterative (no recursion), O(size)."""
    stack: list[tuple[Any, str, int]] = [(document, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise _TooDeep()
        if isinstance(value, float) and not math.isfinite(value):
            return where or "the document"
        if isinstance(value, dict):
            stack.extend((v, f"{where}/{_short_key(k)}" if where else _short_key(k), depth + 1)
                         for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((v, f"{where}/{i}" if where else str(i), depth + 1) for i, v in reversed(list(enumerate(value))))
    return None


class _TooDeep(ValueError):
    pass


def parse_json(data: bytes | str, what: str) -> Any:
    """The JSON document ``data`` (UTF-8 bytes or text) of a file someone handed over (a manifest, a
    key, a plan), read strictly: :class:`DataError` naming the problem in one line if it is not UTF-8
    or not JSON, if one object has a key twice (JSON leaves which one counts to the reader: a signed
    file must not be read two ways), if a number is NaN, Infinity or beyond a double (named by its
    path, e.g. ``privacy/epsilon``), or if it nests deeper than :data:`MAX_JSON_DEPTH`. ``what`` names
    the file in messages ("the manifest x.manifest.json"). O(size), no recursion of its own."""
    fix = "give the file dpgui wrote"
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        document = json.loads(text, object_pairs_hook=_unique_keys)
        where = _non_finite_path(document)
    except UnicodeDecodeError:
        raise DataError(f"{what} is not UTF-8 text", fix) from None
    except _DuplicateKey as err:
        raise DataError(f"{what} has the key '{_short_key(err.key)}' twice in one object (a reader could take "
                        "either value)", fix) from None
    except (RecursionError, _TooDeep):
        raise DataError(f"{what} is nested more than {MAX_JSON_DEPTH} levels deep, which no dpgui file is", fix) from None
    except ValueError as err:
        detail = f" (line {err.lineno}: {err.msg})" if isinstance(err, json.JSONDecodeError) else ""
        raise DataError(f"{what} is not valid JSON{detail}", fix) from None
    if where is not None:
        raise DataError(f"{what} gives {where} as NaN or an infinite number, not a number a dpgui file holds", fix)
    return document


def read_json_file(path: str | os.PathLike[str], what: str) -> Any:
    """:func:`read_regular_file` (limits, no pipes or devices) and :func:`parse_json` of ``path``."""
    return parse_json(read_regular_file(path, what), f"the {what} {Path(path).name}")


def sha256_regular_file(path: str | os.PathLike[str], what: str) -> str:
    """SHA-256 (hex) of the regular file ``path``, read in blocks of 1 MiB (memory O(1)); a file that
    grows while it is read (more bytes than its size when opened) is refused. O(size)."""
    path = Path(path)
    fd, size = _open_regular(path, what)
    digest = hashlib.sha256()
    read = 0
    with os.fdopen(fd, "rb") as handle:
        while block := handle.read(BLOCK):
            read += len(block)
            if read > size:
                raise DataError(f"the {what} {path} changed while it was read", "check it again when it is complete")
            digest.update(block)
    return digest.hexdigest()


# ------------------------------------------------------------------ writing
def check_writable(path: str | os.PathLike[str], *, protect: Sequence[str | os.PathLike[str]] = (),
                   overwrite: bool = True) -> Path:
    """Fail early (before any budget is spent) if ``path`` cannot be written as a new version of a file.

    Refused: a folder; a missing folder or one where no file can be created (tried: a temporary file
    is made and removed); one of the ``protect`` files (the input: compared by identity, so another
    path, a symbolic or a hard link to it is caught); an existing file when ``overwrite`` is False;
    anything existing that is not a regular file (a pipe, a device); a path inside a ``protect``
    folder (a folder of Parquet files read as one dataset). Returns the path.
    """
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    try:
        if not parent.is_dir():
            raise DataError(f"output folder {parent} does not exist", "create it or choose another --out path")
        _check_name_length(target, parent)
        if target.is_dir():
            raise DataError(f"output {target} is a directory", "give a file name such as release.csv")
    except OSError as err:  # e.g. a path longer than the system allows
        raise DataError(f"cannot use the output path {_shortened(str(target))} ({err.strerror or err})",
                        "choose a shorter path") from None
    for other in protect:
        if same_file(target, Path(other)):
            raise DataError(f"output {target} is the input file {other}",
                            "choose another output file name; dpgui never overwrites its input")
        check_outside_input_folders(target, [other])
    if target.exists() or target.is_symlink():
        if not overwrite:
            raise DataError(f"output {target} already exists", "choose another file name, or give --force to replace it")
        if not target.is_file():
            raise DataError(f"output {target} exists and is not a regular file", "choose another file name")
    try:
        os.unlink(write_temporary(target, b""))  # proves that a file can be created there
    except OSError as err:
        raise DataError(f"cannot write in the output folder {parent} ({err.strerror or err})",
                        "choose another folder or fix its permissions") from None
    return target


def _shortened(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters for a one-line message (a path can be thousands long)."""
    return text if len(text) <= limit else text[: limit // 2] + "…" + text[-(limit // 2):]


def _check_name_length(target: Path, folder: Path) -> None:
    """DataError if ``target``'s name is longer than the file system of ``folder`` allows (255 bytes
    on most), which no temporary name beside it could then be either."""
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (AttributeError, OSError, ValueError):  # no pathconf (Windows), or the system does not say
        limit = 255
    size = len(os.fsencode(target.name))
    if size > limit:
        raise DataError(f"the output file name {_shortened(target.name)} is {size} bytes long, longer than the "
                        f"{limit} the file system allows", "choose a shorter file name")


def check_outside_input_folders(target: str | os.PathLike[str], protect: Sequence[str | os.PathLike[str]]) -> None:
    """DataError if ``target`` (an output file or the bundle's folder) is one of the ``protect`` folders
    (a folder of Parquet files read as one dataset) or lies below one: dpgui never writes into the
    folder it reads."""
    for other in protect:
        if Path(other).is_dir() and _inside(Path(target), Path(other)):
            raise DataError(f"output {target} is inside the input folder {other}",
                            "write the output elsewhere; dpgui never writes into the folder it reads")


def _inside(path: Path, folder: Path) -> bool:
    """True if ``path`` (links resolved) lies in ``folder`` or below it."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def same_file(a: Path, b: Path) -> bool:
    """True if ``a`` and ``b`` name the same existing file (links followed), or resolve to the same path."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def create_file(path: Path, data: bytes | Iterable[bytes | memoryview], mode: int = SHARED_FILE_MODE) -> None:
    """Create the new file ``path`` with ``mode`` (minus the umask) before any byte is written, write
    ``data`` (bytes, or blocks of bytes written one after the other, so that a large file need not be
    held in memory at once) and fsync it. O_EXCL: an existing file (or link) is never opened
    (FileExistsError); on any other failure the new file is removed again and the OSError raised.
    O(len(data))."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
    try:
        with os.fdopen(fd, "wb") as handle, ThreadPoolExecutor(1) as syncer:
            pending: Future[None] | None = None
            unsynced = 0
            for block in [data] if isinstance(data, (bytes, bytearray, memoryview)) else data:
                handle.write(block)
                unsynced += len(block)
                if unsynced >= SYNC_EVERY and (pending is None or pending.done()):
                    if pending is not None:
                        pending.result()  # (raises its error, if any)
                    handle.flush()
                    pending = syncer.submit(_sync_data, handle.fileno())
                    unsynced = 0
            if pending is not None:
                pending.result()
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.unlink(path)
        raise


#: Bytes written to a new file between early syncs (:func:`create_file`). One sync of a whole 2 GB file at
#: the end waits for all of it to reach the disk (3.7–7.4 s for 2.2 GB here); syncing on a second thread
#: every 256 MB while the next blocks are written lets the disk work alongside (1.1–1.2 s, the same
#: bytes as durable when the final fsync returns).
SYNC_EVERY = 256 << 20


def _sync_data(fd: int) -> None:
    """Push the file's written data to the disk (fdatasync where there is one, else fsync)."""
    getattr(os, "fdatasync", os.fsync)(fd)


def write_temporary(target: Path, data: bytes | Iterable[bytes | memoryview]) -> str:
    """Write ``data`` (bytes or blocks of bytes) to a new hidden file beside ``target`` (:func:`create_file`)
    and return its path.

    Created like any new file (mode 0666 minus the umask; ``tempfile`` would make it 0600, which
    is wrong for files meant to be shared). The caller renames it into place or deletes it.
    """
    folder = target.parent if str(target.parent) else Path(".")
    stem = target.name
    while len(os.fsencode(stem)) > TEMPORARY_STEM_BYTES:  # a long name: the temporary must still fit (255 bytes)
        stem = stem[:-1]
    for _ in range(100):
        tmp = folder / f".{stem}.{os.getpid()}-{secrets.token_hex(6)}{TEMPORARY_SUFFIX}"
        try:
            create_file(tmp, data)
        except FileExistsError:
            continue
        return str(tmp)
    raise DataError(f"cannot create a temporary file in {folder}", "check the folder")  # pragma: no cover


def remove_stale_temporaries(folder: Path) -> int:
    """Delete temporary files left in ``folder`` by dpgui processes that died while writing.

    POSIX only (a file whose writer's PID is no longer running); returns how many were removed.
    """
    if os.name != "posix":
        return 0
    removed = 0
    for path in folder.glob(f".*{TEMPORARY_SUFFIX}"):
        match = _TEMPORARY.match(path.name)
        if match is None:
            continue
        try:
            os.kill(int(match.group(1)), 0)
            continue  # the writer is alive (or the PID was reused): leave it
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        try:
            path.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write to a temporary file in the same folder, fsync, then rename: never a half-written file."""
    return write_blocks_atomic(path, [text.encode("utf-8")])


def write_blocks_atomic(path: str | os.PathLike[str], blocks: Iterable[bytes | memoryview]) -> Path:
    """:func:`write_text_atomic` for bytes made block by block (a file larger than the memory one
    would spend on it at once): each block is written as it comes."""
    target = check_writable(path)
    tmp = write_temporary(target, blocks)
    try:
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise
    return target


def fsync_directory(folder: Path) -> None:
    """Make the renames in ``folder`` durable (POSIX; a no-op elsewhere)."""
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
