"""The confidential count of each stated category of one column of a table file (the counts
statistic's counting, :mod:`dpgui.core.counts`). One streamed pass, O(rows) time, O(batch) memory;
the values are compared as text (a CSV's cells as written). Reads confidential data: the counts go to
the release only. Files only: a database or Spark source is refused (DataError) until the data layer's
grouped counting covers one column.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dpgui.data.readers import CancelCallback, ProgressCallback, check_table_file, record_batches, watched
from dpgui.data.source import DataSource
from dpgui.errors import DataError

__all__ = ["category_counts"]

_BATCH_ROWS = 1 << 16


def category_counts(source: DataSource, column: str, categories: Sequence[str],
                    progress: ProgressCallback | None = None, should_cancel: CancelCallback | None = None
                    ) -> np.ndarray:
    """The number of rows of ``column`` equal to each of ``categories``, then of every other or missing
    value (one more count), int64. CONFIDENTIAL."""
    spec = getattr(source, "spec", None)
    if spec is None or spec.kind != "file":
        raise DataError("the counts of a column are counted in table files only", "export the table to a file")
    path, fmt = check_table_file(spec.location)
    index = {label: i for i, label in enumerate(categories)}
    counts = np.zeros(len(categories) + 1, dtype=np.int64)
    stream = record_batches(path, fmt, [column], _BATCH_ROWS, dialect=getattr(source, "csv_dialect", None),
                            encoding=spec.encoding)
    for batch in watched(stream, progress, should_cancel):
        for entry in pc.value_counts(pc.cast(batch.column(0), pa.string())).to_pylist():
            value = entry["values"]
            counts[len(categories) if value is None else index.get(value, len(categories))] += entry["counts"]
    return counts
