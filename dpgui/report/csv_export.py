"""Writing a released CDF as CSV: public values only, written atomically."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from dpgui.core.mechanism import Release
from dpgui.core.quantiles import cumulative_interval95
from dpgui.report.files import write_text_atomic

__all__ = ["CDF_COLUMNS", "CDF_COLUMNS_V1", "release_csv_text", "write_release_csv"]
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


def write_release_csv(release: Release, path: str | os.PathLike[str]) -> Path:
    """Write :func:`release_csv_text` to ``path`` atomically (:func:`~dpgui.report.files.write_text_atomic`)."""
    return write_text_atomic(path, release_csv_text(release))
