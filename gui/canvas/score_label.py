"""Score labels on the canvas: bold text on its instance's colour, laid out without HTML.

A ``QGraphicsTextItem`` with ``setHtml`` cost ~0.4 ms per label (a rich-text document each), so a
new 100-mask result's labels took ~40 ms per panel on the GUI thread; a filled rectangle holding
a simple text item is ~6× cheaper. Both are plain Qt items, not Python subclasses: painting them
never waits for the GIL (a Python override of ``paint`` would, once per label and repaint, while
a model job runs Python code)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QGraphicsSimpleTextItem


def new_label() -> QGraphicsRectItem:
    """A label drawn at a constant size whatever the view's zoom, above the overlays."""
    box = QGraphicsRectItem()
    box.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
    box.setZValue(100)
    box.setPen(Qt.PenStyle.NoPen)
    text = QGraphicsSimpleTextItem(box)
    font = QFont(text.font())  # the application's font (a QFont made before the application exists
    font.setBold(True)         # has no size: a module-level one drew the labels as dots)
    text.setFont(font)
    return box


def _text_item(label: QGraphicsRectItem) -> QGraphicsSimpleTextItem:
    return label.childItems()[0]  # type: ignore[return-value]


def show_text(label: QGraphicsRectItem, text: str, colour: str) -> None:
    """Show ``text`` on ``colour``, in black or white ink, whichever reads on it."""
    background = QColor(colour)
    item = _text_item(label)
    item.setBrush(QColor("black" if background.lightnessF() > 0.45 else "white"))
    item.setText(f" {text} ")
    label.setBrush(background)
    label.setRect(item.boundingRect())


def label_text(label: QGraphicsRectItem) -> str:
    return _text_item(label).text().strip()


def label_colours(label: QGraphicsRectItem) -> tuple[str, str]:
    """(ink, background) as ``#rrggbb``."""
    return _text_item(label).brush().color().name(), label.brush().color().name()
