"""Light and dark palettes (Fusion style), or the system's own."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

from dpgui.app.widgets.style import configure_pyqtgraph

APPEARANCES = {"system": "&System", "light": "&Light", "dark": "&Dark"}


def dark_palette() -> QPalette:
    palette = QPalette()
    roles = QPalette.ColorRole
    for role, colour in (
        (roles.Window, "#2b2b2b"), (roles.WindowText, "#e6e6e6"), (roles.Base, "#1e1e1e"),
        (roles.AlternateBase, "#2f2f2f"), (roles.ToolTipBase, "#3a3a3a"), (roles.ToolTipText, "#f0f0f0"),
        (roles.Text, "#e6e6e6"), (roles.Button, "#353535"), (roles.ButtonText, "#e6e6e6"),
        (roles.BrightText, "#ff6b6b"), (roles.Link, "#6cb6ff"), (roles.Highlight, "#2d6cdf"),
        (roles.HighlightedText, "#ffffff"), (roles.PlaceholderText, "#9a9a9a"), (roles.Mid, "#555555"),
    ):
        palette.setColor(role, QColor(colour))
    disabled = QPalette.ColorGroup.Disabled
    for role in (roles.Text, roles.ButtonText, roles.WindowText):
        palette.setColor(disabled, role, QColor("#7a7a7a"))
    return palette


def apply_appearance(key: str) -> None:
    """'system' keeps the platform palette; 'light'/'dark' use Fusion with a fixed palette."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):  # None (no application yet), or a QCoreApplication: no palette
        return
    if key == "system":
        app.setPalette(app.style().standardPalette())
    else:
        app.setStyle(QStyleFactory.create("Fusion"))
        app.setPalette(dark_palette() if key == "dark" else app.style().standardPalette())
    configure_pyqtgraph()
