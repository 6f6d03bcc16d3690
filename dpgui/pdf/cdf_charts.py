"""The two charts of the release PDF's second page, drawn on a QPainter at the PDF's resolution.

:func:`plot_cdf`: the released CDF with its 95 % band; :func:`plot_bars`: the released records per
bin (or per group of bins, :func:`release_bars`). Both draw public values of the
:class:`~dpgui.core.mechanism.Release` only, with round ticks and a legend, and thin long curves
per column (:mod:`dpgui.core.thinning`) so that any K draws a few thousand points and the band is
never drawn narrower than it is. The :class:`~dpgui.pdf.page.Canvas` (page size, fonts, wrapped
text) and the ink colours are the page's (:mod:`dpgui.pdf.page`); the page that holds the charts is
laid out in :mod:`dpgui.pdf.cdf`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen, QPolygonF

from dpgui.core.mechanism import Release
from dpgui.core.projection import interval_variance
from dpgui.core.quantiles import cumulative_interval95, noise_margin
from dpgui.core.thinning import band_envelope, polyline_envelope
from dpgui.formatting import format_fixed, format_linear_tick
from dpgui.pdf.page import GRID, INK, RESOLUTION, Canvas

__all__ = ["CURVE_COLUMNS", "MAX_BARS", "plot_bars", "plot_cdf", "release_bars"]

MAX_BARS = 200  # the per-bin plot shows at most this many bars; more bins are summed into groups
CURVE_COLUMNS = 1200  # long curves are thinned to per-column min/max over this many columns

# The charts' colours: they print well and stay distinguishable (Okabe–Ito blue, as in the app's plots).
CURVE = QColor("#0072B2")
BAND = QColor(0, 114, 178, 70)
BAR = QColor("#56B4E9")
BAR_EDGE = QColor("#2C7FB8")


def _nice_step(span: float, target: int) -> float:
    raw = span / max(1, target)
    if not (raw > 0 and math.isfinite(raw)):
        return 1.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if m * magnitude >= raw * (1 - 1e-12):
            return m * magnitude
    return 10.0 * magnitude


def _nice_ticks(lo: float, hi: float, target: int) -> tuple[list[float], int]:
    """Round tick values in [lo, hi] about ``target`` apart, and the decimals their labels need."""
    step = _nice_step(hi - lo, target)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    ticks = [i * step for i in range(first, last + 1)]
    decimals = 0
    while decimals < 10 and abs(round(step, decimals) - step) > 1e-9 * step:
        decimals += 1
    return ticks, decimals


def _polygon(px: np.ndarray, py: np.ndarray) -> QPolygonF:
    return QPolygonF([QPointF(float(a), float(b)) for a, b in zip(px, py)])


@dataclass
class _Axes:
    """A data rectangle on the page and the linear map from data to page coordinates."""

    rect: QRectF
    x0: float
    x1: float
    y0: float
    y1: float

    def px(self, x: np.ndarray | float) -> np.ndarray:
        return self.rect.left() + (np.asarray(x, dtype=float) - self.x0) / (self.x1 - self.x0) * self.rect.width()

    def py(self, y: np.ndarray | float) -> np.ndarray:
        return self.rect.bottom() - (np.asarray(y, dtype=float) - self.y0) / (self.y1 - self.y0) * self.rect.height()


def _x_ticks(c: Canvas, font: QFont, lo: float, hi: float, width: float) -> tuple[list[float], int]:
    """As many round ticks as fit without their labels touching."""
    gap = c.text_width(font, "  ")
    for target in (8, 6, 5, 4, 3, 2, 1):
        ticks, decimals = _nice_ticks(lo, hi, target)
        if len(ticks) < 2:
            continue
        spacing = width * (ticks[1] - ticks[0]) / (hi - lo)
        widest = max(c.text_width(font, format_linear_tick(t, decimals)) for t in ticks)
        if widest + gap <= spacing:
            return ticks, decimals
    return _nice_ticks(lo, hi, 1)


def _y_ticks(lo: float, hi: float, height: float, spacing: float, target: int = 6) -> tuple[list[float], int]:
    """Round ticks at least ``spacing`` apart on an axis ``height`` long (fewer when it is short)."""
    for t in range(target, 0, -1):
        ticks, decimals = _nice_ticks(lo, hi, t)
        if len(ticks) < 2 or height * (ticks[1] - ticks[0]) / (hi - lo) >= spacing:
            return ticks, decimals
    return _nice_ticks(lo, hi, 1)


def _draw_axes_frame(c: Canvas, outer: QRectF, x_range: tuple[float, float], y_range: tuple[float, float],
                     x_label: str, y_label: str, right: tuple[str, float] | None = None) -> _Axes:
    """Axes with gridlines, round ticks with thousands separators and labels; returns the data map.

    ``right`` = (label, scale) adds a percentage axis on the right: 100 % at y = scale (ticks 0–100 %).
    """
    p = c.p
    tick_font = c.font(8.5)
    label_font = c.font(9.5)
    tick_len = 0.012 * RESOLUTION
    pad = 0.03 * RESOLUTION
    label_h = c.line_height(label_font)
    tick_h = c.line_height(tick_font)
    bottom = tick_len + pad + tick_h + pad + label_h
    height = outer.height() - bottom - 0.5 * tick_h
    y_ticks, y_dec = _y_ticks(y_range[0], y_range[1], height, 2.2 * tick_h)
    y_labels = [format_linear_tick(t, y_dec) for t in y_ticks]
    left = label_h + pad + max(c.text_width(tick_font, s) for s in y_labels) + tick_len + pad
    right_w = 0.15 * RESOLUTION
    right_ticks: list[tuple[float, str]] = []
    if right is not None:
        scale = right[1]
        lo_pct = max(0.0, 100 * y_range[0] / scale)
        hi_pct = min(100.0, 100 * y_range[1] / scale)
        pct_height = height * (hi_pct - lo_pct) * scale / 100 / (y_range[1] - y_range[0])
        pct, pct_dec = _y_ticks(lo_pct, hi_pct, pct_height, 2.2 * tick_h, 5)
        right_ticks = [(v * scale / 100, f"{format_fixed(v, pct_dec)} %") for v in pct]
        right_w = tick_len + pad + max([c.text_width(tick_font, s) for _, s in right_ticks] + [0.0]) + pad + label_h
    rect = QRectF(outer.left() + left, outer.top() + 0.5 * tick_h, outer.width() - left - right_w, height)
    axes = _Axes(rect, x_range[0], x_range[1], y_range[0], y_range[1])
    x_ticks, x_dec = _x_ticks(c, tick_font, x_range[0], x_range[1], rect.width())

    p.setPen(QPen(GRID, 0.004 * RESOLUTION))
    for t in y_ticks:
        y = float(axes.py(t))
        p.drawLine(QPointF(rect.left(), y), QPointF(rect.right(), y))
    for t in x_ticks:
        x = float(axes.px(t))
        p.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()))

    p.setPen(QPen(INK, 0.006 * RESOLUTION))
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawRect(rect)
    p.setFont(tick_font)
    fm = p.fontMetrics()
    for t, s in zip(y_ticks, y_labels):
        y = float(axes.py(t))
        p.drawLine(QPointF(rect.left() - tick_len, y), QPointF(rect.left(), y))
        w = fm.horizontalAdvance(s)
        p.drawText(QPointF(rect.left() - tick_len - pad - w, y + (fm.ascent() - fm.descent()) / 2), s)
    for t in x_ticks:
        x = float(axes.px(t))
        s = format_linear_tick(t, x_dec)
        p.drawLine(QPointF(x, rect.bottom()), QPointF(x, rect.bottom() + tick_len))
        w = fm.horizontalAdvance(s)
        x_text = min(max(x - w / 2, outer.left()), outer.right() - w)
        p.drawText(QPointF(x_text, rect.bottom() + tick_len + pad + fm.ascent()), s)
    if right is not None:
        for value, s in right_ticks:
            y = float(axes.py(value))
            p.drawLine(QPointF(rect.right(), y), QPointF(rect.right() + tick_len, y))
            p.drawText(QPointF(rect.right() + tick_len + pad, y + (fm.ascent() - fm.descent()) / 2), s)

    _draw_axis_labels(c, outer, rect, label_font, x_label, y_label, right[0] if right is not None else None)
    return axes


def _draw_axis_labels(c: Canvas, outer: QRectF, rect: QRectF, font: QFont, x_label: str, y_label: str,
                      right_label: str | None) -> None:
    """The axes' titles: ``x_label`` centred under the data rectangle ``rect``, ``y_label`` turned up
    along the left edge of ``outer``, ``right_label`` (if any) turned down along its right edge."""
    p = c.p
    p.setFont(font)
    fm = p.fontMetrics()
    text = fm.elidedText(x_label, Qt.TextElideMode.ElideMiddle, int(rect.width()))
    p.drawText(QPointF(rect.center().x() - fm.horizontalAdvance(text) / 2, outer.bottom() - fm.descent()), text)
    for side, label in (("left", y_label), ("right", right_label)):
        if label is None:
            continue
        text = fm.elidedText(label, Qt.TextElideMode.ElideMiddle, int(rect.height()))
        p.save()
        if side == "left":
            p.translate(outer.left() + fm.ascent(), rect.center().y() + fm.horizontalAdvance(text) / 2)
            p.rotate(-90)
        else:
            p.translate(outer.right() - fm.ascent(), rect.center().y() - fm.horizontalAdvance(text) / 2)
            p.rotate(90)
        p.drawText(QPointF(0, 0), text)
        p.restore()


def _legend(c: Canvas, x: float, y: float, width: float, entries: list[tuple[str, str]]) -> float:
    """A row of legend entries (kind: 'line', 'band' or 'bar'); returns its height."""
    p = c.p
    font = c.font(8.5)
    p.setFont(font)
    fm = p.fontMetrics()
    swatch = 0.25 * RESOLUTION
    gap = 0.06 * RESOLUTION
    h = fm.height()
    cx, cy = x, y
    for kind, text in entries:
        need = swatch + gap + fm.horizontalAdvance(text) + 2 * gap
        if cx > x and cx + need > x + width:
            cx, cy = x, cy + h * 1.2
        mid = cy + h / 2
        if kind == "line":
            p.setPen(QPen(CURVE, 0.008 * RESOLUTION))
            p.drawLine(QPointF(cx, mid), QPointF(cx + swatch, mid))
        elif kind == "band":
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(BAND)
            p.drawRect(QRectF(cx, mid - h * 0.3, swatch, h * 0.6))
        elif kind == "bar":
            p.setPen(QPen(BAR_EDGE, 0.003 * RESOLUTION))
            p.setBrush(BAR)
            p.drawRect(QRectF(cx + swatch * 0.25, mid - h * 0.35, swatch * 0.5, h * 0.7))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(INK)
        p.drawText(QPointF(cx + swatch + gap, cy + fm.ascent()), text)
        cx += need
    return cy + h - y


def _plot_heading(c: Canvas, outer: QRectF, title: str, legend: list[tuple[str, str]]) -> float:
    """Draw a plot's title and legend at the top of ``outer``; return the y where the axes start."""
    p = c.p
    title_font = c.font(11, bold=True)
    p.setFont(title_font)
    p.setPen(INK)
    p.drawText(QPointF(outer.left(), outer.top() + p.fontMetrics().ascent()), c.elide(title_font, title, outer.width()))
    y = outer.top() + c.line_height(title_font) * 1.15
    return y + _legend(c, outer.left(), y, outer.width(), legend) + 0.04 * RESOLUTION


def plot_cdf(c: Canvas, outer: QRectF, release: Release, column: str) -> None:
    p = c.p
    n = float(release.total)
    lower_edges, upper_edges = release.bin_edges()
    edges = np.append(lower_edges, upper_edges[-1])
    cum = np.concatenate(([0.0], np.asarray(release.cumulative, dtype=float)))
    ci_low, ci_high = cumulative_interval95(release)
    low, high = np.concatenate(([0.0], ci_low)), np.concatenate(([0.0], ci_high))
    top = max(n, 1.0)
    y_min = min(0.0, float(cum.min()))
    y_max = max(top, float(cum.max())) * 1.03
    y = _plot_heading(c, outer, f"Released cumulative distribution (CDF) of {column}",
                      [("line", "Released cumulative count"),
                       ("band", "95 % band: holds the true count with at least 95 % confidence")])
    right = None
    if n > 0:
        right = ("Fraction of all records", n)
    frame = QRectF(outer.left(), y, outer.width(), outer.bottom() - y)
    axes = _draw_axes_frame(c, frame, (release.lower, release.upper),
                            (y_min, y_max), column, "Records at or below the value", right)
    columns = max(100, min(CURVE_COLUMNS, int(axes.rect.width())))
    xb, lows, highs = band_envelope(edges, low, high, 2 * columns)
    xc, yc = polyline_envelope(edges, cum, columns)
    p.save()
    p.setClipRect(axes.rect.adjusted(-2, -2, 2, 2))
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    band = np.concatenate([axes.px(xb), axes.px(xb)[::-1]]), np.concatenate([axes.py(highs), axes.py(lows)[::-1]])
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(BAND)
    p.drawPolygon(_polygon(*band))
    p.setBrush(Qt.BrushStyle.NoBrush)
    pen = QPen(CURVE, 0.008 * RESOLUTION)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    p.setPen(pen)
    p.drawPolyline(_polygon(axes.px(xc), axes.py(yc)))
    p.restore()


def release_bars(release: Release) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Released records per bin (or per group of bins): x from, x to, count, half-width of the 95 % interval
    of the true count (noise_margin of the range's standard error); group size."""
    k = release.plan.shape.bins
    per_bin = np.diff(np.concatenate(([0.0], np.asarray(release.cumulative, dtype=float))))
    group = max(1, math.ceil(k / MAX_BARS))
    starts = np.arange(0, k, group)
    stops = np.minimum(starts + group, k)
    counts = np.add.reduceat(per_bin, starts)
    margins = noise_margin(np.array([math.sqrt(max(0.0, interval_variance(release.plan, int(a), int(b), release.padding_known)))
                                     for a, b in zip(starts, stops)]))
    lower_edges, upper_edges = release.bin_edges()
    return lower_edges[starts], upper_edges[stops - 1], counts, margins, group


def plot_bars(c: Canvas, outer: QRectF, release: Release, column: str,
               bars: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]) -> None:
    p = c.p
    x0, x1, counts, _margins, group = bars
    y_min = min(0.0, float(counts.min()))
    y_max = max(float(counts.max()), 1.0) * 1.05
    if y_min < 0:
        y_min *= 1.05
    what = "bin" if group == 1 else f"group of {group:,} bins"
    y = _plot_heading(c, outer, f"Released records per {what}", [("bar", f"Released records per {what} (noisy)")])
    y_label = "Records per bin" if group == 1 else "Records per group"
    frame = QRectF(outer.left(), y, outer.width(), outer.bottom() - y)
    axes = _draw_axes_frame(c, frame, (release.lower, release.upper),
                            (y_min, y_max), column, y_label, None)
    p.save()
    p.setClipRect(axes.rect)
    left, right = axes.px(x0), axes.px(x1)
    top, base = axes.py(np.maximum(counts, 0.0)), axes.py(np.minimum(counts, 0.0))
    thin = float(np.min(right - left)) < 0.02 * RESOLUTION
    p.setPen(Qt.PenStyle.NoPen if thin else QPen(BAR_EDGE, 0.003 * RESOLUTION))
    p.setBrush(BAR)
    for a, b, t, u in zip(left, right, top, base):
        p.drawRect(QRectF(float(a), float(t), float(b - a), float(u - t)))
    if y_min < 0:
        p.setPen(QPen(INK, 0.004 * RESOLUTION))
        z = float(axes.py(0.0))
        p.drawLine(QPointF(axes.rect.left(), z), QPointF(axes.rect.right(), z))
    p.restore()
