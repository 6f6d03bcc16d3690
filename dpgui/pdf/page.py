"""The page furniture of the PDF reports, painted with QtGui (no widgets): the application Qt needs for
fonts, the A4 writer at :data:`RESOLUTION`, the :class:`Canvas` (page size, fonts, wrapped text), the
colours, simple HTML laid out to fit, the red test-noise strip and the footer.

A report is a :class:`PdfDrawing` (its title, the footer of a report of its own, the function that draws its
pages) before it is written: :meth:`PdfDrawing.write` makes the report's PDF, and a release plan's PDF
(:mod:`dpgui.pdf.plan`) draws several in one PDF, each with the plan's footer."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor, QFont, QGuiApplication, QPageLayout, QPageSize, QPainter, QPdfWriter, QPen, QTextDocument, QTextOption,
)

from dpgui import __version__
from dpgui.pdf.markup import TEST_BANNER

__all__ = [
    "ALERT", "GREY", "GRID", "INK", "RESOLUTION", "Canvas", "DrawPages", "Footer", "PdfDrawing", "draw_footer",
    "draw_footer_line", "draw_html", "draw_test_banner", "ensure_gui_application", "footer_top", "release_footer",
    "test_banner_height", "write_pdf",
]

RESOLUTION = 300  # dots per inch of the PDF's drawing coordinates
MARGIN_MM = 16.0  # the A4 page's margin on every side
PDF_CREATOR = f"dpgui {__version__}"

# Colours that print well and stay distinguishable (the charts' own are in dpgui.pdf.cdf_charts).
INK = QColor("#1A1A1A")
GREY = QColor("#666666")
GRID = QColor("#DDDDDD")
ALERT = QColor("#B00020")


_APP: QGuiApplication | None = None  # keeps a QGuiApplication we created alive


def ensure_gui_application() -> QGuiApplication:
    """The running QGuiApplication (a QApplication is one), or a new bare QGuiApplication.

    Fonts and the PDF writer need a QGuiApplication, not the widgets. With no display (no DISPLAY or
    WAYLAND_DISPLAY on Linux and other X11/Wayland systems) and no QT_QPA_PLATFORM chosen, Qt's
    "offscreen" platform is used, so the CLI renders on a headless server. Windows and macOS always
    have their own platform and are left alone.

    A process holds one application: one that shows widgets (the window, the self-test, the test
    suite) makes its QApplication before its first PDF, since widgets cannot run under the bare
    QGuiApplication made here. Call it from the main thread when no application exists yet.
    """
    global _APP
    app = QGuiApplication.instance()
    if app is not None:
        if not isinstance(app, QGuiApplication):
            raise RuntimeError("a QCoreApplication is running; drawing a PDF needs a QGuiApplication")
        return app
    if (sys.platform not in ("win32", "darwin") and not os.environ.get("QT_QPA_PLATFORM")
            and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    _APP = QGuiApplication([sys.argv[0] if sys.argv and sys.argv[0] else "dpgui"])
    return _APP


class Canvas:
    """Page geometry and fonts at the writer's resolution."""

    def __init__(self, painter: QPainter, width: float, height: float) -> None:
        self.p = painter
        self.width = width
        self.height = height
        self.base = QFont(QGuiApplication.font())

    def font(self, points: float, bold: bool = False) -> QFont:
        f = QFont(self.base)
        f.setPointSizeF(points)
        f.setBold(bold)
        return f

    def text_width(self, font: QFont, text: str) -> float:
        self.p.setFont(font)
        return self.p.fontMetrics().horizontalAdvance(text)

    def line_height(self, font: QFont) -> float:
        self.p.setFont(font)
        return float(self.p.fontMetrics().height())

    def elide(self, font: QFont, text: str, width: float) -> str:
        self.p.setFont(font)
        return self.p.fontMetrics().elidedText(text, Qt.TextElideMode.ElideMiddle, int(width))

    def wrapped(self, font: QFont, rect: QRectF, text: str, colour: QColor = INK) -> float:
        """Draw word-wrapped text at the top of ``rect``; returns the height used."""
        self.p.setFont(font)
        self.p.setPen(colour)
        flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop) | int(Qt.TextFlag.TextWordWrap)
        bound = self.p.boundingRect(rect, flags, text)
        self.p.drawText(rect, flags, text)
        return bound.height()

    def wrapped_height(self, font: QFont, width: float, text: str) -> float:
        self.p.setFont(font)
        flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop) | int(Qt.TextFlag.TextWordWrap)
        return self.p.boundingRect(QRectF(0, 0, width, 1e6), flags, text).height()


def write_pdf(title: str, draw_pages: Callable[[Canvas, QPdfWriter], None]) -> bytes:
    """An A4 portrait PDF (bytes) at :data:`RESOLUTION` with ``MARGIN_MM`` margins, titled ``title``,
    whose pages ``draw_pages(canvas, writer)`` draws (``writer.newPage()`` between pages). The one
    PDF writer of the CDF and hierarchy reports; no QApplication needed."""
    ensure_gui_application()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(RESOLUTION)
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                     QMarginsF(MARGIN_MM, MARGIN_MM, MARGIN_MM, MARGIN_MM),
                                     QPageLayout.Unit.Millimeter))
    writer.setTitle(title)
    writer.setCreator(PDF_CREATOR)
    painter = QPainter()
    if not painter.begin(writer):
        raise RuntimeError("could not start drawing the PDF")
    try:
        draw_pages(Canvas(painter, float(writer.width()), float(writer.height())), writer)
    finally:
        painter.end()
    buffer.close()
    return bytes(data.data())


def draw_html(c: Canvas, writer: QPdfWriter, top: float, bottom: float, source: str) -> None:
    """Lay out simple HTML at the writer's resolution, shrinking the font until it fits."""
    height = bottom - top
    doc = QTextDocument()
    doc.documentLayout().setPaintDevice(writer)
    doc.setDocumentMargin(0)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    doc.setDefaultTextOption(option)
    points = 10.0
    while True:
        doc.setDefaultFont(c.font(points))
        doc.setHtml(_scale_points(source, points / 10.0))
        doc.setTextWidth(c.width)
        if doc.size().height() <= height or points <= 6.0:
            break
        points -= 0.25
    c.p.save()
    c.p.translate(0, top)
    doc.drawContents(c.p, QRectF(0, 0, c.width, height))
    c.p.restore()


def _scale_points(source: str, factor: float) -> str:
    """Scale every 'N pt' size in the HTML's styles (headings shrink with the body)."""
    return re.sub(r"(\d+(?:\.\d+)?)pt", lambda m: f"{float(m.group(1)) * factor:.2f}pt", source)


def test_banner_height(c: Canvas) -> float:
    """The height of the strip that :func:`draw_test_banner` draws."""
    return c.line_height(c.font(10, bold=True)) * 1.6


def draw_test_banner(c: Canvas, height: float) -> None:
    """The red "test release" strip at the top of every page of a release drawn with test noise,
    ``height`` high (:func:`test_banner_height`)."""
    c.p.save()
    c.p.setPen(Qt.PenStyle.NoPen)
    c.p.setBrush(ALERT)
    c.p.drawRect(QRectF(0, 0, c.width, height))
    c.p.setFont(c.font(10, bold=True))
    c.p.setPen(QColor("white"))
    c.p.drawText(QRectF(0, 0, c.width, height), int(Qt.AlignmentFlag.AlignCenter), TEST_BANNER)
    c.p.restore()


FOOTER_POINTS = 7.5


def footer_top(c: Canvas) -> float:
    """The top of the footer :func:`draw_footer` draws: the page's content ends above it."""
    return c.height - c.line_height(c.font(FOOTER_POINTS)) - 0.1 * RESOLUTION


def draw_footer(c: Canvas, release_id: str, dataset: str, page: int, page_count: int) -> float:
    """Release id, dataset and page number at the foot of the page; returns the top of the footer
    (:func:`footer_top`)."""
    return draw_footer_line(c, f"Release {release_id} · {dataset} · made with dpgui {__version__}",
                            f"Page {page} of {page_count}")


def draw_footer_line(c: Canvas, left: str, right: str) -> float:
    """The footer's rule and its one line of small grey text, ``left`` (elided to 80 % of the width) and
    ``right``; returns the top of the footer (:func:`footer_top`)."""
    font = c.font(FOOTER_POINTS)
    h = c.line_height(font)
    y = c.height - h
    c.p.setFont(font)
    c.p.setPen(QPen(GRID, 0.004 * RESOLUTION))
    c.p.drawLine(QPointF(0, y - 0.03 * RESOLUTION), QPointF(c.width, y - 0.03 * RESOLUTION))
    c.p.setPen(GREY)
    shown = c.elide(font, left, c.width * 0.8)
    c.p.drawText(QRectF(0, y, c.width, h), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), shown)
    c.p.drawText(QRectF(0, y, c.width, h), int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), right)
    return y - 0.1 * RESOLUTION


#: Draws the foot of page ``page`` (1-based) of ``page_count`` of one report — (canvas, page, page_count) — and
#: returns the top of the footer: the page's content ends above it.
Footer = Callable[[Canvas, int, int], float]
#: Draws a report's pages: (canvas, writer, footer), ``writer.newPage()`` between its pages (never before its
#: first), ``footer`` at the foot of each.
DrawPages = Callable[[Canvas, QPdfWriter, Footer], None]


def release_footer(release_id: str, dataset: str) -> Footer:
    """The footer of a report of its own (:func:`draw_footer`: the release id, dataset and page number)."""

    def footer(c: Canvas, page: int, page_count: int) -> float:
        return draw_footer(c, release_id, dataset, page, page_count)

    return footer


@dataclass(frozen=True)
class PdfDrawing:
    """One report's pages before they are written: ``title`` (the PDF's title), ``footer`` (that of the report
    of its own, :func:`release_footer`) and ``draw_pages``. :meth:`write` makes the report's PDF; a release
    plan's PDF (:func:`dpgui.pdf.plan.plan_pdf`) calls ``draw_pages`` with its own footer instead."""

    title: str
    footer: Footer
    draw_pages: DrawPages

    def write(self) -> bytes:
        """The report as an A4 PDF (bytes), :func:`write_pdf`; no QApplication needed."""
        return write_pdf(self.title, lambda c, writer: self.draw_pages(c, writer, self.footer))
