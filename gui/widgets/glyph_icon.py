"""Toolbar icons drawn from one character each (a pencil, a brush dot, an undo arrow …), in the
palette's text colour so that they read on light and dark palettes alike; where the font lacks
the character, the fallback letters are drawn instead (never an empty box)."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont, QFontMetrics, QGuiApplication, QIcon, QPainter, QPalette, QPixmap

SIZE = 32  # drawn at 32 px: sharp on a scale factor of 2 at the toolbar's usual 16–24 px


def glyph_icon(glyph: str, fallback: str) -> QIcon:
    """An icon showing ``glyph`` (``fallback``, one to three letters, when the font lacks it)."""
    font = QFont(QGuiApplication.font())
    text = glyph if all(QFontMetrics(font).inFont(ch) for ch in glyph) else fallback
    font.setPixelSize(int(SIZE * (0.78 if len(text) == 1 else 0.5)))
    pix = QPixmap(SIZE, SIZE)
    pix.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pix)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    painter.setFont(font)
    painter.setPen(QGuiApplication.palette().color(QPalette.ColorRole.ButtonText))
    painter.drawText(QRectF(0, 0, SIZE, SIZE), Qt.AlignmentFlag.AlignCenter, text)
    painter.end()
    return QIcon(pix)
