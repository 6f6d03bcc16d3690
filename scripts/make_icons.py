"""Draw the application icon and write it in every format the installers need.

    .venv/bin/python scripts/make_icons.py

Writes ``resources/icons/dpgui.png`` (512 px, window icon and Linux), ``dpgui-256.png`` (the
freedesktop hicolor icon), ``dpgui.ico`` (Windows: 16–256 px) and ``dpgui.icns`` (macOS). The
outputs are committed, so building the installers does not need this script; rerun it only to
change the design. Qt draws the picture (anti-aliased vector shapes); Pillow writes .ico and .icns,
which Qt's bundled image plugins cannot write.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PIL import Image
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPainterPath, QPen

OUT = Path(__file__).resolve().parents[1] / "resources" / "icons"


def draw(size: int = 1024) -> QImage:
    """A rounded blue tile with a cumulative staircase and its confidence band (the app's one plot)."""
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    s = size / 100.0
    tile = QPainterPath()
    tile.addRoundedRect(QRectF(6 * s, 6 * s, 88 * s, 88 * s), 18 * s, 18 * s)
    p.fillPath(tile, QColor("#1f4e8c"))
    steps = [(18, 80), (30, 74), (42, 62), (54, 44), (66, 32), (78, 24), (84, 22)]
    band = QPainterPath(QPointF(18 * s, 86 * s))
    for x, y in steps:
        band.lineTo(x * s, (y - 6) * s)
    for x, y in reversed(steps):
        band.lineTo(x * s, (y + 6) * s)
    band.closeSubpath()
    p.fillPath(band, QColor(255, 255, 255, 70))
    pen = QPen(QColor("white"), 5 * s)
    pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
    pen.setCapStyle(Qt.PenCapStyle.FlatCap)
    p.setPen(pen)
    stair = QPainterPath(QPointF(steps[0][0] * s, steps[0][1] * s))
    for (_, y0), (x1, y1) in itertools.pairwise(steps):
        stair.lineTo(x1 * s, y0 * s)
        stair.lineTo(x1 * s, y1 * s)
    p.drawPath(stair)
    p.end()
    return image


def main() -> int:
    QGuiApplication(sys.argv[:1])
    OUT.mkdir(parents=True, exist_ok=True)
    big = draw(1024)
    big.scaled(512, 512, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation).save(
        str(OUT / "dpgui.png"))
    big.scaled(256, 256, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation).save(
        str(OUT / "dpgui-256.png"))
    big.save(str(OUT / "dpgui-1024.png"))
    master = Image.open(OUT / "dpgui-1024.png").convert("RGBA")
    master.save(OUT / "dpgui.ico", sizes=[(n, n) for n in (16, 24, 32, 48, 64, 128, 256)])
    master.save(OUT / "dpgui.icns")
    (OUT / "dpgui-1024.png").unlink()
    for name in ("dpgui.png", "dpgui-256.png", "dpgui.ico", "dpgui.icns"):
        print(f"wrote {OUT / name} ({(OUT / name).stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
