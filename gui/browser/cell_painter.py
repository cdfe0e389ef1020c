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

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, QRect, Qt
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
_BITS = _SELECTED | _ACTIVE  # the state bits a cell's look depends on
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
        #: (text, italic) or (text, italic, room) -> laid-out (elided to room) text, width, height
        self._texts: OrderedDict[tuple[Any, ...], tuple[QStaticText, float, float]] = OrderedDict()
        self._font: QFont | None = None
        self._pens: dict[tuple[int, bool], QColor] = {}  # (state bits, outside) -> text colour, this palette
        self._palette_key = -1

    def _laid_out(self, text: str, italic: bool, painter: QPainter,
                  room: int | None = None) -> tuple[QStaticText, float, float]:
        """``text`` laid out in the painter's font; with ``room``, elided to that width first
        (the elision kept too: the cells of a column share a few widths)."""
        key = (text, italic) if room is None else (text, italic, room)
        got = self._texts.get(key)
        if got is None:
            shown = text if room is None else QFontMetrics(painter.font()).elidedText(text, _ELIDE, room)
            static = QStaticText(shown)
            static.setTextFormat(Qt.TextFormat.PlainText)
            static.prepare(font=painter.font())
            size = static.size()
            got = self._texts[key] = (static, size.width(), size.height())
            if len(self._texts) > CACHE_SIZE:
                self._texts.popitem(last=False)
        return got

    def _pen(self, option: QStyleOptionViewItem, bits: int, outside: bool) -> QColor:
        """The text colour of a cell (selected / active / outside the filter), read from the
        palette once per palette, not per cell."""
        palette = option.palette
        key = palette.cacheKey()
        if key != self._palette_key:
            self._pens.clear()
            self._palette_key = key
        got = self._pens.get((bits, outside))
        if got is None:
            group = _GROUPS[bool(bits & _ACTIVE)]
            selected = bool(bits & _SELECTED)
            got = palette.color(group, _HTEXT) if selected else _GREY if outside else palette.color(group, _TEXT)
            self._pens[(bits, outside)] = got
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
        src = int(rows[r])
        bits = option.state.value & _BITS
        if bits & _SELECTED:
            painter.fillRect(option.rect, option.palette.brush(_GROUPS[bool(bits & _ACTIVE)], _HIGHLIGHT))
        self.draw_text(painter, option.rect, src, col, self._pen(option, bits, src == self.model.outside_row))

    def begin(self, painter: QPainter) -> None:
        """Before drawing texts with ``painter``: another font (DPI, settings) lays them out anew."""
        font = painter.font()
        if font != self._font:
            self._texts.clear()
            self._font = QFont(font)

    def draw_text(self, painter: QPainter, rect: QRect, row: int, col: int, pen: QColor) -> None:
        """Source row ``row``'s text in column ``col``, in ``rect`` (numbers right-aligned, ids
        left), elided to fit; italic on the row outside the filter."""
        self.begin(painter)
        self.draw_row(painter, row, rect.y(), rect.height(), [(col, rect.x(), rect.width())], pen)

    def draw_row(self, painter: QPainter, row: int, y: int, h: int, cells: list[tuple[int, int, int]],
                 pen: QColor) -> None:
        """Source row ``row``'s texts in ``cells`` (column, x, width) of a row at ``y``, ``h``
        high (after :meth:`begin`): numbers right-aligned, ids left, each elided to fit; italic
        on the row outside the filter. One call a row: the list's paint loop stays in here."""
        outside = row == self.model.outside_row
        if outside:
            font = painter.font()
            painter.save()
            font.setItalic(True)
            painter.setFont(font)
        painter.setPen(pen)
        value, texts, laid_out, draw = self.model.value, self._texts, self._laid_out, painter.drawStaticText
        for col, left, w in cells:
            text = _fmt(value(row, col))
            got = texts.get((text, outside))
            static, width, height = got if got is not None else laid_out(text, outside, painter)
            room = w - 2 * _PAD
            if width > room:
                static, width, height = laid_out(text, outside, painter, room)
            x = left + w - 1 - _PAD - width if col >= _FIXED else left + _PAD  # QRect.right() is left + w - 1
            draw(QPointF(x, y + (h - height) / 2), static)
        if outside:
            painter.restore()
