"""The sample list painted in one Python call per paint, not one per cell.

For every visible cell Qt's ``QTableView`` asks the (Python) proxy for an index and its flags and
calls the (Python) cell painter with a copied style option: ~240 cells and ~25 ms of GUI-thread
time when the list scrolls to a new place (the gallery's End, Home and PgDn move the list too),
most of it crossing between C++ and Python. :func:`paint_cells` draws the same thing from one
call: each row's background (alternating, selected), the cells' texts through the same
:class:`~masklens.gui.browser.cell_painter.CellPainter`, and the grid, following
``QTableView::paintEvent`` step by step — the same pixels (a test compares the two paints).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem, QTableView

from masklens.gui.browser.cell_painter import CellPainter

_SELECTED, _ACTIVE = QStyle.StateFlag.State_Selected.value, QStyle.StateFlag.State_Active.value
_ENABLED = QStyle.StateFlag.State_Enabled.value
Group, Role = QPalette.ColorGroup, QPalette.ColorRole


def selected_rows(view: QTableView, first: int, last: int) -> set[int]:
    """The selected rows among ``first``..``last`` (read from the selection's ranges)."""
    model = view.selectionModel()
    out: set[int] = set()
    if model is None:
        return out
    for rng in model.selection():  # type: ignore[attr-defined]  # the stubs omit QItemSelection.__iter__ (a list of ranges)
        out.update(range(max(rng.top(), first), min(rng.bottom(), last) + 1))
    return out


def paint_cells(view: QTableView, delegate: CellPainter, event: QPaintEvent) -> None:
    """Paint ``view``'s viewport for ``event`` as ``QTableView::paintEvent`` would with
    ``delegate`` drawing each cell (rows never hidden: the list hides none)."""
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    state = option.state.value
    group = (Group.Disabled if not state & _ENABLED else Group.Active if state & _ACTIVE else Group.Inactive)
    vh, hh = view.verticalHeader(), view.horizontalHeader()
    grid = 1 if view.showGrid() else 0
    painter = QPainter(view.viewport())
    drawn: set[tuple[int, int]] = set()  # a cell in two of the region's rectangles is drawn once
    try:
        delegate.begin(painter)
        for area in event.region():  # type: ignore[attr-defined]  # the stubs omit QRegion.__iter__ (its rectangles)
            _paint_area(view, delegate, painter, option, group, grid, area, vh, hh, drawn)
    finally:
        painter.end()


def _paint_area(view: QTableView, delegate: CellPainter, painter: QPainter, option: QStyleOptionViewItem,
                group: QPalette.ColorGroup, grid: int, area: QRect, vh: Any, hh: Any, drawn: set[tuple[int, int]]) -> None:
    """One rectangle of the paint region (as Qt: the part with rows and columns in it)."""
    area = QRect(area)
    area.setBottom(min(area.bottom(), vh.length() - vh.offset() - 1))
    area.setRight(min(area.right(), hh.length() - hh.offset() - 1))
    if not area.isValid():
        return
    left, right = hh.visualIndexAt(area.left()), hh.visualIndexAt(area.right())
    left, right = (0 if left < 0 else left), (hh.count() - 1 if right < 0 else right)
    top, bottom = vh.visualIndexAt(area.top()), vh.visualIndexAt(area.bottom())
    bottom = vh.count() - 1 if bottom < 0 else bottom
    if top < 0 or top > bottom:
        return
    columns = [(c, view.columnViewportPosition(c), view.columnWidth(c))
               for c in (hh.logicalIndex(v) for v in range(left, right + 1)) if not hh.isSectionHidden(c)]
    rows = delegate.proxy.visible_rows()
    picked = selected_rows(view, top, bottom)
    alternate = view.alternatingRowColors()
    palette = option.palette
    active = option.state.value & _ACTIVE
    # a selected cell: the cell painter's highlight (its colour group ignores "disabled")
    highlight = palette.brush(Group.Active if active else Group.Inactive, Role.Highlight)
    base_alt = palette.brush(group, Role.AlternateBase)
    lines: list[int] = []  # each row's grid line
    for r in range(top, bottom + 1):
        y, h = view.rowViewportPosition(r), view.rowHeight(r) - grid
        lines.append(y + h)
        selected = r in picked
        fill = highlight if selected else base_alt if alternate and r & 1 else None
        if not 0 <= r < len(rows):
            continue
        src = int(rows[r])
        pen = delegate._pen(option, active | (_SELECTED if selected else 0), src == delegate.model.outside_row)
        texts = []
        for c, x, w in columns:
            if (r, c) in drawn:
                continue
            drawn.add((r, c))
            if fill is not None:
                painter.fillRect(x, y, w - grid, h, fill)
            if c >= delegate.covered:
                texts.append((c, x, w - grid))
        if texts:
            delegate.draw_row(painter, src, y, h, texts, pen)
    if grid:
        style_hint = view.style().styleHint(QStyle.StyleHint.SH_Table_GridLineColor, option, view)
        painter.setPen(QPen(QColor.fromRgba(style_hint & 0xFFFFFFFF), 1, view.gridStyle()))
        for y in lines:
            painter.drawLine(area.left(), y, area.right(), y)
        for _c, x, w in columns:
            painter.drawLine(x + w - grid, area.top(), x + w - grid, area.bottom())


class OneCallPaint:
    """Mixin for a ``QTableView`` whose delegate is a :class:`CellPainter`: paints with
    :func:`paint_cells`; ``one_call_paint = False`` falls back to Qt's per-cell paint."""

    one_call_paint = True

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        delegate = self.itemDelegate()  # type: ignore[attr-defined]
        if self.one_call_paint and isinstance(delegate, CellPainter):
            paint_cells(self, delegate, event)  # type: ignore[arg-type]
        else:
            super().paintEvent(event)  # type: ignore[misc]
