"""Writing a released CDF as CSV: public values only, written atomically."""

from __future__ import annotations

import csv
import io
import os
import re
import secrets
from pathlib import Path
from collections.abc import Sequence

from dpgui.core.mechanism import Release
from dpgui.core.quantiles import cumulative_interval95
from dpgui.errors import DataError

TEMPORARY_SUFFIX = ".tmp"
_TEMPORARY = re.compile(r"^\..+\.(\d+)-[0-9a-f]{12}\.tmp$")
CDF_COLUMNS = ("bin_lower", "bin_upper", "cumulative_count", "cdf", "std_error", "ci95_low", "ci95_high",
               "unbiased_estimate")
#: The columns of CSVs written before ``unbiased_estimate`` was added (still read by ``dpgui quantiles``).
CDF_COLUMNS_V1 = CDF_COLUMNS[:7]


def release_csv_text(release: Release) -> str:
    """CSV text with columns ``bin_lower,bin_upper,cumulative_count,cdf,std_error,ci95_low,ci95_high,
    unbiased_estimate``.

    One row per bin; ``cumulative_count`` counts records below ``bin_upper``. ``std_error`` is the
    exact standard error of the unbiased cumulative count before consistency; ``ci95_low..ci95_high``
    holds the true count with probability ≥ 95 % per row (:func:`cumulative_interval95`: the unbiased
    count ± 2.2·std_error + 1, widened to hold ``cumulative_count``, clipped to [0, N] when N is
    public; docs/design.md "## Count intervals"). ``unbiased_estimate`` is that unbiased cumulative
count (post-processing of the released noisy counts, so public), from which the quantile intervals
are computed: with it, ``dpgui quantiles`` gives from the CSV the intervals of the release itself.
Public values only.
    """
    lower, upper = release.bin_edges()
    ci_low, ci_high = cumulative_interval95(release)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CDF_COLUMNS)
    integral = release.cumulative.dtype.kind in "iu"
    for lo, hi, count, cdf, se, ci_lo, ci_hi, est in zip(lower, upper, release.cumulative, release.cdf,
                                                         release.std_error, ci_low, ci_high, release.estimate):
        writer.writerow([repr(float(lo)), repr(float(hi)), int(count) if integral else repr(float(count)),
                         repr(float(cdf)), repr(float(se)), repr(float(ci_lo)), repr(float(ci_hi)), repr(float(est))])
    return buffer.getvalue()


def check_writable(path: str | os.PathLike[str], *, protect: Sequence[str | os.PathLike[str]] = (),
                   overwrite: bool = True) -> Path:
    """Fail early (before any budget is spent) if ``path`` cannot be written as a new version of a file.

    Refused: a folder; a missing folder or one where no file can be created (tried: a temporary file
    is made and removed); one of the ``protect`` files (the input: compared by identity, so another
    path, a symbolic or a hard link to it is caught); an existing file when ``overwrite`` is False;
    anything existing that is not a regular file (a pipe, a device). Returns the path.
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


def same_file(a: Path, b: Path) -> bool:
    """True if ``a`` and ``b`` name the same existing file (links followed), or resolve to the same path."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def write_temporary(target: Path, data: bytes) -> str:
    """Write ``data`` to a new hidden file beside ``target`` (fsynced) and return its path.

    Created like any new file (mode 0666 minus the umask; ``tempfile`` would make it 0600, which
    is wrong for files meant to be shared). The caller renames it into place or deletes it.
    """
    folder = target.parent if str(target.parent) else Path(".")
    for _ in range(100):
        tmp = folder / f".{target.name}.{os.getpid()}-{secrets.token_hex(6)}{TEMPORARY_SUFFIX}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        except BaseException:
            os.unlink(tmp)
            raise
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
    target = check_writable(path)
    tmp = write_temporary(target, text.encode("utf-8"))
    try:
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise
    return target


def write_release_csv(release: Release, path: str | os.PathLike[str]) -> Path:
    return write_text_atomic(path, release_csv_text(release))
