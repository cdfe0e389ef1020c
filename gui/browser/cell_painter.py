"""Painting the sample table's cells in one Python call each.

Qt's own delegate asks the model for seven roles per cell (text, font, colours, alignment,
check state, icon, background) and lays the text out anew for wrapping: about 2,200 Python calls
for one repaint of a 40-row list, on every slider step, filter or sort. This delegate reads the
cell's text once from the table model and draws it from a small cache of laid-out texts
(``QStaticText``; the cells of a list repeat the same few hundred numbers), elided when it does
not fit: the same look (selection, the grey italic row outside the filter, numbers right-aligned).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette, QStaticText
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from masklens.gui.browser.sample_table import FIXED, SampleTableModel, _fmt

_PAD = 4
_GREY = QColor("#7a7a7a")  # the row outside the filter, as SampleTableModel.data says
_SELECTED, _ACTIVE = QStyle.StateFlag.State_Selected.value, QStyle.StateFlag.State_Active.value
_GROUPS = (QPalette.ColorGroup.Inactive, QPalette.ColorGroup.Active)
_HIGHLIGHT, _TEXT, _HTEXT = (QPalette.ColorRole.Highlight, QPalette.ColorRole.Text,
                             QPalette.ColorRole.HighlightedText)
_ELIDE = Qt.TextElideMode.ElideRight
_FIXED = len(FIXED)
#: laid-out texts kept (a list shows a few hundred distinct strings at a time)
CACHE_SIZE = 4096


class CellPainter(QStyledItemDelegate):
    """Draws a cell of ``model`` shown through ``proxy`` (a :class:`SampleFilterProxy`)."""

    def __init__(self, model: SampleTableModel, proxy: Any, parent: Any = None, covered: int = 0) -> None:
        """``covered``: the first columns another view draws over this one (the frozen id
        columns): not painted here."""
        super().__init__(parent)
        self.model, self.proxy, self.covered = model, proxy, covered
        self._texts: OrderedDict[tuple[str, bool], tuple[QStaticText, float, float]] = OrderedDict()
        self._font: QFont | None = None

    def _laid_out(self, text: str, italic: bool, painter: QPainter) -> tuple[QStaticText, float, float]:
        key = (text, italic)
        got = self._texts.get(key)
        if got is None:
            static = QStaticText(text)
            static.setTextFormat(Qt.TextFormat.PlainText)
            static.prepare(font=painter.font())
            size = static.size()
            got = self._texts[key] = (static, size.width(), size.height())
            if len(self._texts) > CACHE_SIZE:
                self._texts.popitem(last=False)
        return got

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        col = index.column()
        if col < self.covered:
            return
        rows = self.proxy.visible_rows()
        r = index.row()
        if not 0 <= r < len(rows):
            return
        row = rows[r]
        rect, state, palette = option.rect, option.state.value, option.palette
        selected = bool(state & _SELECTED)
        group = _GROUPS[bool(state & _ACTIVE)]
        if selected:
            painter.fillRect(rect, palette.brush(group, _HIGHLIGHT))
        outside = row == self.model.outside_row
        if painter.font() != self._font:  # another font (DPI, settings): lay out anew
            self._texts.clear()
            self._font = QFont(painter.font())
        if outside:
            painter.save()
            font = painter.font()
            font.setItalic(True)
            painter.setFont(font)
        painter.setPen(palette.color(group, _HTEXT if selected else _TEXT) if selected or not outside else _GREY)
        text = _fmt(self.model.value(row, col))
        left, top, w, h = rect.getRect()
        room = w - 2 * _PAD
        static, width, height = self._laid_out(text, outside, painter)
        if width > room:
            static, width, height = self._laid_out(QFontMetrics(painter.font()).elidedText(text, _ELIDE, room),
                                                   outside, painter)
        x = left + w - 1 - _PAD - width if col >= _FIXED else left + _PAD  # QRect.right() is left + w - 1
        painter.drawStaticText(QPointF(x, top + (h - height) / 2), static)
        if outside:
            painter.restore()
