"""Reading files that someone else handed us (bundles, keys) without hanging or running out of memory.

A path may name a pipe (``open`` waits for a writer for ever), a device such as ``/dev/zero`` (a
read never ends), or a file far larger than the thing it claims to be. Every reader here opens
without blocking, refuses anything that is not a regular file, and reads in blocks with a limit.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from dpgui.errors import DataError

BLOCK = 1 << 20  # bytes read per step when hashing
SMALL_FILE_LIMIT = 16 << 20  # manifests, signatures, keys: far below this


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
