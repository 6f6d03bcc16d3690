"""The page shown when no file is open: open a file, recent files, or the sample data."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton, QScrollArea, QVBoxLayout, QWidget

from dpgui.app import text
from dpgui.data.file_types import FILE_TYPE_NAMES


class StartPage(QWidget):
    openRequested = Signal()
    sampleRequested = Signal()
    recentRequested = Signal(str)
    hierarchySampleRequested = Signal()
    connectRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        title = QLabel(f"<h1>{text.APP_NAME}</h1><p style='font-size:large'>{text.TAGLINE}</p>")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title.setWordWrap(True)
        steps = QLabel(
            "<ol><li><b>Data</b>: open a table, pick a number column, state its public bounds.</li>"
            "<li><b>Privacy and plan</b>: set the budget ε; see the error you will get before spending it.</li>"
            "<li><b>Release</b>: publish a noisy CDF with error bars, quantiles and counts.</li></ol>"
            "<p>Or publish <b>counts over a hierarchy</b> of 2 to 4 nested categories (region → district → "
            "school), in the same steps.</p>")
        steps.setWordWrap(True)
        self.open_button = QPushButton("&Open a file…")
        self.open_button.setToolTip(f"{FILE_TYPE_NAMES}. You can also drop a file on this window.")
        self.open_button.clicked.connect(self.openRequested)
        self.connect_button = QPushButton("Connect to a &database…")
        self.connect_button.setToolTip("Read a table or a query of a database (PostgreSQL, SQLite, …): the database "
                                       "counts the rows itself and sends back only the bin counts.")
        self.connect_button.clicked.connect(self.connectRequested)
        self.sample_button = QPushButton("Try the &sample data (NYC flights, 2013)")
        self.sample_button.setToolTip("336,776 public flight records, bundled with the app.")
        self.sample_button.clicked.connect(self.sampleRequested)
        self.hierarchy_sample_button = QPushButton("Try counts over a &hierarchy (flights by time zone → airport → route)")
        self.hierarchy_sample_button.setToolTip("The same public flights, counted per destination time zone, airport "
                                                "and route: the “Counts over a hierarchy” mode.")
        self.hierarchy_sample_button.clicked.connect(self.hierarchySampleRequested)
        for button in (self.open_button, self.connect_button, self.sample_button, self.hierarchy_sample_button):
            button.setMinimumHeight(36)
        self.recent = QListWidget()
        self.recent.setAccessibleName("Recent files")
        self.recent.setMinimumHeight(self.recent.fontMetrics().lineSpacing() * 4 + 8)
        self.recent.itemActivated.connect(lambda item: self.recentRequested.emit(item.data(Qt.ItemDataRole.UserRole)))
        self.recent_label = QLabel("&Recent files (double-click or Enter to open):")
        self.recent_label.setBuddy(self.recent)
        self.drop_hint = QLabel(f"Or drop a {FILE_TYPE_NAMES} file, or a folder of Parquet files, anywhere on this "
                                "window.")
        self.drop_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.drop_hint.setWordWrap(True)  # the list of file types is longer than the column is wide

        column = QWidget()
        column.setMaximumWidth(640)
        layout = QVBoxLayout(column)
        layout.addWidget(title)
        layout.addWidget(steps)
        layout.addWidget(self.open_button)
        layout.addWidget(self.connect_button)
        layout.addWidget(self.sample_button)
        layout.addWidget(self.hierarchy_sample_button)
        layout.addWidget(self.drop_hint)
        layout.addSpacing(12)
        layout.addWidget(self.recent_label)
        layout.addWidget(self.recent, 4)
        layout.addStretch(1)  # without recent files, the page stays together at the top
        centred = QWidget()
        row = QHBoxLayout(centred)  # the column as wide as it may be (640), centred
        row.addStretch(1)
        row.addWidget(column, 1000)
        row.addStretch(1)
        scroll = QScrollArea()  # a short window (or large text, 200 % scaling) scrolls the page, never clips it
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(centred)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

    def set_recent(self, paths: list[str]) -> None:
        self.recent.clear()
        for path in paths:
            item = QListWidgetItem(f"{Path(path).name}    —    {Path(path).parent}")
            item.setData(Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
            self.recent.addItem(item)
        visible = bool(paths)
        self.recent.setVisible(visible)
        self.recent_label.setVisible(visible)
