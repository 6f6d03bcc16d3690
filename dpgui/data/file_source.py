"""The :class:`~dpgui.data.source.DataSource` of a file (or a folder of Parquet files) on this computer.

A CSV/TSV file is read with the dialect the officer stated (``spec.dialect``) or its name's default,
never one detected in its cells; a file whose first lines suggest another dialect than the default is
refused when opened until one is stated (:class:`dpgui.data.csv_dialect.UnstatedDialect`).

A thin layer over the file readers: :func:`dpgui.data.table.inspect_table` (columns),
:class:`dpgui.data.table.TableReader` (preview), :func:`dpgui.data.table.count_rows` and
:func:`dpgui.data.grouped_counts.count_file_groups` (the counting primitive, on which the histogram and
the path counts are built); the counting runs here, in a streamed pass (memory independent of the number
of rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dpgui.core.missing import MISSING_DROP
from dpgui.data.source import DataSource, PasswordPrompt
from dpgui.data.source_spec import SourceSpec

if TYPE_CHECKING:
    import pandas as pd

    from dpgui.data.bounding import Bounding
    from dpgui.data.file_types import CsvDialect
    from dpgui.data.grouped_counts import GroupedCounts, Key
    from dpgui.data.hierarchy import PathCounts
    from dpgui.data.histogram import ColumnHistogram
    from dpgui.data.streams import CancelCallback, ProgressCallback
    from dpgui.data.table import ColumnInfo, TableInfo

__all__ = ["FileSource", "open_spec"]


class FileSource(DataSource):
    """A table file (CSV/TSV and dialects, compressed CSV, Parquet file or folder, Excel, Stata,
    SAS, SPSS) read on this computer."""

    def __init__(self, spec: SourceSpec) -> None:
        from dpgui.data.table import inspect_table

        self.spec = spec
        dialect = self._stated_or_default(spec)
        self.info: TableInfo = inspect_table(spec.location, dialect, encoding=spec.encoding)
        self.csv_dialect = self.info.dialect  # every read uses it

    def _stated_or_default(self, spec: SourceSpec) -> CsvDialect | None:
        """The dialect of a CSV/TSV file (None for other formats): the one stated in ``spec``, else the
        file name's default when the file's first lines suggest no other (:class:`UnstatedDialect`
        otherwise, before anything is counted). Sets :attr:`csv_dialect_origin`."""
        from dpgui.data.csv_dialect import DialectOrigin, check_unstated_dialect, default_dialect
        from dpgui.data.readers import check_table_file, csv_dialect

        p, fmt = check_table_file(spec.location)
        if fmt not in ("csv", "tsv"):
            return None
        if spec.dialect is not None:
            self.csv_dialect_origin = DialectOrigin.STATED
            return spec.dialect
        suggestion = csv_dialect(p, fmt)[1]
        assert suggestion is not None  # detected: no dialect was given
        check_unstated_dialect(p.name, suggestion)
        self.csv_dialect_origin = DialectOrigin.DEFAULT
        return default_dialect(p.name)

    @property
    def engine(self) -> str:
        return "this computer"

    def columns(self) -> tuple[ColumnInfo, ...]:
        return self.info.columns

    def preview(self, n_rows: int = 100) -> pd.DataFrame:
        from dpgui.data.table import TableReader

        with TableReader(self.spec.location, self.csv_dialect, encoding=self.spec.encoding) as reader:
            return reader.read_rows(0, n_rows)

    def row_count(
        self, *, progress: ProgressCallback | None = None, should_cancel: CancelCallback | None = None
    ) -> int:
        from dpgui.data.table import count_rows

        if self.info.n_rows is not None:
            return self.info.n_rows
        return count_rows(self.spec.location, progress=progress, should_cancel=should_cancel, dialect=self.csv_dialect,
                          encoding=self.spec.encoding)

    def grouped_counts(
        self,
        keys: Sequence[Key],
        *,
        max_groups: int | None = None,
        bounding: Bounding | None = None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
    ) -> GroupedCounts:
        from dpgui.data.grouped_counts import count_file_groups

        if bounding is not None:
            from dpgui.data.bounding import count_bounded_file_groups

            return count_bounded_file_groups(self.spec.location, keys, bounding, max_groups=max_groups,
                                             progress=progress, should_cancel=should_cancel, dialect=self.csv_dialect,
                                             encoding=self.spec.encoding)
        return count_file_groups(self.spec.location, keys, max_groups=max_groups, progress=progress,
                                 should_cancel=should_cancel, dialect=self.csv_dialect, encoding=self.spec.encoding)

    def histogram(
        self,
        column: str,
        lower: float,
        upper: float,
        bins: int,
        missing: str = MISSING_DROP,
        *,
        bounding: Bounding | None = None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
    ) -> ColumnHistogram:
        """:func:`dpgui.data.histogram.column_histogram`: the file's entry to the same primitive (one BinKey); with
        ``bounding``, the primitive's bounded pass."""
        from dpgui.data import histogram

        if bounding is not None:
            return super().histogram(column, lower, upper, bins, missing, bounding=bounding, progress=progress,
                                     should_cancel=should_cancel)

        return histogram.column_histogram(self.spec.location, column, lower, upper, bins, missing, progress=progress,
                                          should_cancel=should_cancel, dialect=self.csv_dialect,
                                          encoding=self.spec.encoding)

    def path_counts(
        self,
        level_columns: Sequence[str],
        *,
        max_nodes_per_level: int | None = None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
        min_levels: int = 2,
        bounding: Bounding | None = None,
    ) -> PathCounts:
        """:func:`dpgui.data.hierarchy.count_paths`: the file's entry to the same primitive (the levels' ValueKeys);
        with ``bounding``, the primitive's bounded pass."""
        from dpgui.core.hierarchy import MAX_NODES_PER_LEVEL
        from dpgui.data import hierarchy

        if bounding is not None:
            return super().path_counts(level_columns, max_nodes_per_level=max_nodes_per_level, progress=progress,
                                       should_cancel=should_cancel, min_levels=min_levels, bounding=bounding)

        limit = MAX_NODES_PER_LEVEL if max_nodes_per_level is None else max_nodes_per_level  # 0 is refused there
        return hierarchy.count_paths(self.spec.location, level_columns, progress=progress, should_cancel=should_cancel,
                                     max_nodes_per_level=limit, dialect=self.csv_dialect, encoding=self.spec.encoding,
                                     min_levels=min_levels)

    def distinct_counts(
        self,
        columns: Sequence[str],
        limit: int = 100_000,
        *,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
    ) -> dict[str, int]:
        from dpgui.data.hierarchy import level_value_counts

        return level_value_counts(self.spec.location, columns, limit=limit, progress=progress,
                                  should_cancel=should_cancel, dialect=self.csv_dialect, encoding=self.spec.encoding)


def open_spec(spec: SourceSpec, *, password_prompt: PasswordPrompt | None = None) -> FileSource:
    """Open a file spec (the prompt is unused: files have no password)."""
    del password_prompt
    return FileSource(spec)
