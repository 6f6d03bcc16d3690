"""The release bar of a statistic's page: Release…, Export Signed Bundle… and the line that says what was
released (or why nothing was), one row. GUI thread."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton

__all__ = ["ReleaseBar"]


class ReleaseBar(QHBoxLayout):
    """``release_button`` (tooltip ``release_tip``; clicked → ``release``), ``export_button`` (disabled until a
    release is shown; clicked → ``export``) and ``status`` (rich text: user text in it must be escaped),
    starting with ``idle_words``."""

    def __init__(self, release_tip: str, release: Callable[[], None], export: Callable[[], None],
                 idle_words: str) -> None:
        super().__init__()
        self.release_button = QPushButton("&Release…")
        self.release_button.setToolTip(release_tip)
        self.release_button.clicked.connect(release)
        self.export_button = QPushButton("&Export Signed Bundle…")
        self.export_button.setToolTip("Write the release as CSV + PDF + manifest, signed with your key")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(export)
        self.status = QLabel(idle_words)
        self.status.setTextFormat(Qt.TextFormat.RichText)  # user text in it is escaped
        self.status.setWordWrap(True)
        self.addWidget(self.release_button)
        self.addWidget(self.export_button)
        self.addWidget(self.status, 1)
