"""A score label on the canvas: bold text on its instance's colour, laid out without HTML.

A ``QGraphicsTextItem`` with ``setHtml`` cost ~0.4 ms per label (a rich-text document each), so a
new 100-mask result's labels took ~40 ms per panel on the GUI thread; this item is ~6× cheaper."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsSimpleTextItem,
    QStyleOptionGraphicsItem,
    QWidget,
)


class ScoreLabel(QGraphicsSimpleTextItem):
    """Text drawn at a constant size (ignores the view's zoom) on a filled box of ``colour``."""

    def __init__(self) -> None:
        super().__init__()
        font = QFont()
        font.setBold(True)
        self.setFont(font)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
        self.setZValue(100)
        self.background = QColor()

    def show_text(self, text: str, colour: str) -> None:
        """Show ``text`` on ``colour``, in black or white ink, whichever reads on it."""
        self.background = QColor(colour)
        self.setBrush(QColor("black" if self.background.lightnessF() > 0.45 else "white"))
        self.setText(f" {text} ")
        self.update()

    def ink(self) -> str:
        return self.brush().color().name()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        painter.fillRect(self.boundingRect(), self.background)
        super().paint(painter, option, widget)
