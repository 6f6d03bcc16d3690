"""Writing a released CDF as CSV: public values only, written atomically."""

from __future__ import annotations

import csv
import io
import os
import tempfile
from pathlib import Path

from dpgui.core.mechanism import Release
from dpgui.errors import DataError

CDF_COLUMNS = ("bin_lower", "bin_upper", "cumulative_count", "cdf", "std_error")


def release_csv_text(release: Release) -> str:
    """CSV text with columns ``bin_lower,bin_upper,cumulative_count,cdf,std_error`` (one row per bin).

    ``std_error`` is the exact standard error of the unbiased cumulative count before consistency.
    """
    lower, upper = release.bin_edges()
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CDF_COLUMNS)
    integral = release.cumulative.dtype.kind in "iu"
    for lo, hi, count, cdf, se in zip(lower, upper, release.cumulative, release.cdf, release.std_error):
        writer.writerow([repr(float(lo)), repr(float(hi)), int(count) if integral else repr(float(count)),
                         repr(float(cdf)), repr(float(se))])
    return buffer.getvalue()


def check_writable(path: str | os.PathLike[str]) -> Path:
    """Fail early (before any budget is spent) if ``path`` cannot be written."""
    target = Path(path)
    if target.exists() and target.is_dir():
        raise DataError(f"output {target} is a directory", "give a file name such as release.csv")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise DataError(f"output folder {parent} does not exist", "create it or choose another --out path")
    if not os.access(parent, os.W_OK):
        raise DataError(f"output folder {parent} is not writable", "choose another --out path")
    return target


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write to a temporary file in the same folder, fsync, then rename: never a half-written file."""
    target = check_writable(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent if str(target.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target


def write_release_csv(release: Release, path: str | os.PathLike[str]) -> Path:
    return write_text_atomic(path, release_csv_text(release))
