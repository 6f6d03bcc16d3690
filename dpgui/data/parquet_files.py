"""Parquet files, and folders of them read as one table (hive partitions as the text of the folders' names).

The Parquet reader behind :func:`dpgui.data.readers.record_batches` and
:func:`dpgui.data.readers.table_schema`: a file is read one record batch at a time (only the asked
column chunks are decoded, each streamed through a buffer); a folder's files are checked to share the
first one's schema and streamed file by file, row group by row group. Every problem is a
:class:`~dpgui.errors.DataError` naming the file with its fix. No Qt.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from dpgui.data.file_types import FILE_TYPE_NAMES
from dpgui.data.streams import Stream, short_error_text
from dpgui.errors import DataError

__all__ = ["ParquetFolder", "parquet_file", "parquet_folder_files", "parquet_record_batches",
           "parquet_row_group_sizes"]


def parquet_file(p: pathlib.Path) -> pq.ParquetFile:
    try:
        # buffer_size > 0: stream each column chunk through a buffer instead of reading it
        # whole (bounds memory on files with huge row groups).
        return pq.ParquetFile(p, buffer_size=1 << 22, pre_buffer=False)
    except (pa.ArrowInvalid, OSError) as err:
        raise DataError(
            f"'{p.name}' is not a readable Parquet file: {short_error_text(err)}",
            "export the table to Parquet again, or use CSV",
        ) from err


def parquet_record_batches(
    p: pathlib.Path, columns: list[str], batch_rows: int, first_row_group: int
) -> Stream[pa.RecordBatch]:
    pf = parquet_file(p)
    try:
        meta = pf.metadata
        total = meta.num_rows
        done = sum(meta.row_group(g).num_rows for g in range(first_row_group))
        groups = range(first_row_group, meta.num_row_groups)
        for batch in pf.iter_batches(
            batch_size=batch_rows, row_groups=groups, columns=columns, use_threads=False
        ):
            done += batch.num_rows
            yield batch, done / total if total else 1.0
    except (pa.ArrowInvalid, OSError) as err:
        raise DataError(
            f"cannot read Parquet file '{p.name}': {short_error_text(err)}",
            "export the table to Parquet again, or use CSV",
        ) from err
    finally:
        pf.close()


_PARQUET_EXTENSIONS = (".parquet", ".pq")


def parquet_folder_files(p: pathlib.Path) -> list[pathlib.Path]:
    """The Parquet files (``.parquet``, ``.pq``) of folder ``p`` and its subfolders (hive partitions
    such as ``year=2024/``), sorted by path. Names starting with '.' or '_' (Spark's ``_SUCCESS``,
    ``.crc`` files, ``_temporary/``) are skipped, and so are other files. DataError if there are
    none. O(entries of the tree)."""
    try:
        found = sorted(
            f for f in p.rglob("*")
            if f.name.lower().endswith(_PARQUET_EXTENSIONS)
            and not any(part.startswith((".", "_")) for part in f.relative_to(p).parts)
            and f.is_file()
        )
        # A file reached twice (a link to another file of the folder) would count its rows twice: each
        # person's records twice, more than the release's sensitivity allows.
        seen: dict[tuple[int, int], pathlib.Path] = {}
        for f in found:
            st = f.stat()
            first = seen.setdefault((st.st_dev, st.st_ino), f)
            if first is not f:
                raise DataError(f"'{f.relative_to(p)}' in the folder '{p.name}' is the same file as "
                                f"'{first.relative_to(p)}' (a link): its rows would be counted twice",
                                "remove the link (or the copy) so that each Parquet file is in the folder once")
    except OSError as err:
        raise DataError(f"cannot list the folder '{p}': {err.strerror or err}", "check its permissions") from None
    if not found:
        raise DataError(
            f"'{p}' is a directory without Parquet files (.parquet, .pq)",
            f"choose a {FILE_TYPE_NAMES} file, or a folder that holds Parquet files (all with the same columns)",
        )
    return found


def _schema_difference(a: pa.Schema, b: pa.Schema) -> str:
    """How schema ``b`` differs from ``a``, in words (the first difference)."""
    for field in a:
        if field.name not in b.names:
            return f"it has no column '{field.name}'"
        other = b.field(field.name)
        if not other.type.equals(field.type):
            return f"its column '{field.name}' is {other.type}, not {field.type}"
    extra = [n for n in b.names if n not in a.names]
    if extra:
        return f"it has a column '{extra[0]}' that the first file lacks"
    return "its columns are in another order"


class ParquetFolder:
    """A folder of Parquet files read as one table (pyarrow.dataset, hive partitions discovered, their
    values read as the text of the folders' names): every file must have the first file's schema
    (DataError naming the one that differs). The rows are streamed file by file and row group by row
    group, in the files' sorted order; ``n_rows`` is from the footers. O(files) to open."""

    def __init__(self, p: pathlib.Path) -> None:
        from urllib.parse import unquote

        import pyarrow.dataset as ds

        self.path = p
        files = parquet_folder_files(p)
        paths = [os.fspath(f) for f in files]
        try:
            # A partition's value is a folder's name, and nothing declares its type: Arrow would infer one
            # from the names of all the folders (code=1, code=2 an integer; one code=x makes them all text),
            # so one record's folder would decide the others' labels and whether the column "is numeric".
            # Read as the text of the names, as a CSV's cells are.
            folders = [part for f in files for part in f.relative_to(p).parts[:-1]]
            keys = dict.fromkeys(unquote(part.split("=", 1)[0]) for part in folders if "=" in part)
            text = pa.schema([(key, pa.string()) for key in keys])
            as_text = ds.partitioning(text, flavor="hive") if keys else None
            self.dataset = ds.dataset(paths, format="parquet", partitioning=as_text, partition_base_dir=os.fspath(p))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as err:
            raise DataError(f"the Parquet folder '{p.name}' cannot be read: {short_error_text(err)}",
                            "make every file in it a Parquet file with the same columns") from err
        self.fragments = list(self.dataset.get_fragments())
        first: pa.Schema | None = None
        self.n_rows = 0
        for fragment in self.fragments:
            name = self._name(fragment)
            try:
                schema = fragment.physical_schema
                self.n_rows += fragment.metadata.num_rows
            except (pa.ArrowInvalid, OSError) as err:
                raise DataError(f"'{name}' in the Parquet folder '{p.name}' is not a readable Parquet file: "
                                f"{short_error_text(err)}", "remove it from the folder, or export it again") from err
            if first is None:
                first, first_name = schema, name
            elif not schema.equals(first, check_metadata=False):
                raise DataError(
                    f"'{name}' in the Parquet folder '{p.name}' has other columns than '{first_name}': "
                    f"{_schema_difference(first, schema)}",
                    "put only files with the same columns (names and types) in the folder",
                )
        self.schema: pa.Schema = self.dataset.schema

    def _name(self, fragment: Any) -> str:
        return str(pathlib.Path(fragment.path).relative_to(self.path))

    def _row_groups(self) -> Iterator[Any]:
        for fragment in self.fragments:
            try:
                yield from fragment.split_by_row_group()
            except (pa.ArrowInvalid, OSError) as err:
                raise DataError(f"cannot read '{self._name(fragment)}' in the Parquet folder '{self.path.name}': "
                                f"{short_error_text(err)}", "remove it from the folder, or export it again") from err

    def row_group_sizes(self) -> list[int]:
        """Rows of every row group of every file, in order."""
        return [fragment.metadata.row_group(g).num_rows for fragment in self.fragments
                for g in range(fragment.metadata.num_row_groups)]

    def record_batches(self, columns: list[str], batch_rows: int, first_row_group: int) -> Stream[pa.RecordBatch]:
        """``columns`` streamed with the fraction of rows read (rows / rows in the folder)."""
        total = self.n_rows
        done = 0
        for index, row_group in enumerate(self._row_groups()):
            if index < first_row_group:
                done += row_group.row_groups[0].num_rows
                continue
            try:
                batches = row_group.to_batches(schema=self.schema, columns=columns, batch_size=batch_rows,
                                               use_threads=False)
                for batch in batches:
                    done += batch.num_rows
                    yield batch, done / total if total else 1.0
            except (pa.ArrowInvalid, OSError) as err:
                raise DataError(f"cannot read '{self._name(row_group)}' in the Parquet folder '{self.path.name}': "
                                f"{short_error_text(err)}", "remove it from the folder, or export it again") from err


def parquet_row_group_sizes(p: pathlib.Path) -> list[int]:
    """Rows of each row group of a Parquet file, in order (from the footer: O(row groups)); of a
    folder, of every file's row groups in the files' order (O(files + row groups))."""
    if p.is_dir():
        return ParquetFolder(p).row_group_sizes()
    pf = parquet_file(p)
    try:
        return [pf.metadata.row_group(g).num_rows for g in range(pf.num_row_groups)]
    finally:
        pf.close()
