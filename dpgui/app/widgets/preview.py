"""The preview grid's table model: the first rows of a file, a database table or a query, for the officer's
checking (only they see them; nothing here is counted or released).

Rows come from a :class:`RowReader` in chunks as the view scrolls (a file's
:class:`~dpgui.data.table.TableReader` never reads the whole file), or from the few hundred rows a source
gave (:class:`FrameRows`). Missing values read "(missing)" in grey; numbers are right-aligned. Qt, GUI
thread only (a reader's first chunk may be read on a worker beforehand, see ``dpgui.app.shell.main_window``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor

from dpgui.app import text
from dpgui.errors import DpguiError

if TYPE_CHECKING:
    import pandas as pd

    from dpgui.data.table import TableInfo

#: A column's kind (:attr:`~dpgui.data.table.ColumnInfo.kind`) in the officer's words.
KIND_LABELS = {"numeric": "number", "text": "text", "datetime": "date/time", "boolean": "yes/no", "other": "other"}
MISSING_TEXT = "(missing)"


class RowReader(Protocol):
    """What the preview reads rows from: a file's :class:`~dpgui.data.table.TableReader`, or the
    first rows of a database or Spark source (:class:`FrameRows`)."""

    @property
    def info(self) -> TableInfo: ...

    def read_rows(self, start: int, count: int) -> pd.DataFrame: ...

    def close(self) -> None: ...


class FrameRows:
    """The rows a source gave for its preview (at most a few hundred), read like a file."""

    def __init__(self, info: TableInfo, frame: pd.DataFrame) -> None:
        self._info, self._frame = info, frame

    @property
    def info(self) -> TableInfo:
        return self._info

    def read_rows(self, start: int, count: int) -> pd.DataFrame:
        return self._frame.iloc[start:start + count]

    def close(self) -> None:
        """Nothing to release (the source was closed after its preview was read)."""


class PreviewModel(QAbstractTableModel):
    """The first rows of ``reader``, fetched in chunks of :attr:`CHUNK` as the user scrolls (at most
    :attr:`MAX_ROWS`). A header is the column's name, with its kind under it when ``kinds_in_header``.
    ``readError`` carries the words of a chunk that could not be read (the rows stop there)."""

    CHUNK = 200
    MAX_ROWS = 100_000
    readError = Signal(str)

    def __init__(self, reader: RowReader, parent: QObject | None = None, *, kinds_in_header: bool = True) -> None:
        super().__init__(parent)
        self._reader = reader
        self._columns = [c.name for c in reader.info.columns]
        self._kinds = [c.kind for c in reader.info.columns]
        self._kinds_in_header = kinds_in_header
        self._rows: list[tuple[Any, ...]] = []
        self._exhausted = False

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        value = self._rows[index.row()][index.column()]
        missing = value is None or (isinstance(value, float) and math.isnan(value))
        if role == Qt.ItemDataRole.DisplayRole:
            return MISSING_TEXT if missing else str(value)
        if role == Qt.ItemDataRole.ForegroundRole and missing:
            return QBrush(QColor("#888888"))
        if role == Qt.ItemDataRole.TextAlignmentRole and self._kinds[index.column()] == "numeric":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            name = self._columns[section]
            return f"{name}\n({KIND_LABELS.get(self._kinds[section], 'other')})" if self._kinds_in_header else name
        return f"{section + 1:,}"

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> bool:
        return not parent.isValid() and not self._exhausted and len(self._rows) < self.MAX_ROWS

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> None:
        start = len(self._rows)
        try:
            frame = self._reader.read_rows(start, self.CHUNK)
        except DpguiError as err:
            self._exhausted = True
            self.readError.emit(text.friendly(err))
            return
        rows = list(frame.itertuples(index=False, name=None))
        if len(rows) < self.CHUNK:
            self._exhausted = True
        if rows:
            self.beginInsertRows(QModelIndex(), start, start + len(rows) - 1)
            self._rows.extend(rows)
            self.endInsertRows()
