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
import os
import re
import secrets
import stat
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from dpgui.errors import DataError

BLOCK = 1 << 20  # bytes read per step when hashing
SMALL_FILE_LIMIT = 16 << 20  # manifests, signatures, keys: far below this
TEMPORARY_SUFFIX = ".tmp"
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
    if target.is_dir():
        raise DataError(f"output {target} is a directory", "give a file name such as release.csv")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise DataError(f"output folder {parent} does not exist", "create it or choose another --out path")
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
    for _ in range(100):
        tmp = folder / f".{target.name}.{os.getpid()}-{secrets.token_hex(6)}{TEMPORARY_SUFFIX}"
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
