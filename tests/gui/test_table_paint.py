"""The sample list painted in one Python call (``table_paint``) draws the same pixels as Qt's own
per-cell paint through the same cell painter: selected row, alternating rows, the grey italic row
outside the filter, elided ids, the frozen id columns, a paint region of several rectangles; and
it calls the cell painter once per row, not once per cell (a scroll of the list at
100,000 samples cost ~30 ms, most of it crossing from C++ to Python per cell)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QImage, QRegion

from masklens.gui.browser.cell_painter import CellPainter
from masklens.gui.browser.frozen import FrozenColumns
from masklens.gui.browser.table_view import SampleTableView


def _render(view, region: QRegion) -> QImage:
    vp = view.viewport()
    img = QImage(vp.size(), QImage.Format.Format_ARGB32)
    img.fill(0)
    vp.render(img, QPoint(0, 0), region)
    return img


def _both(view, region: QRegion) -> tuple[QImage, QImage]:
    """(one-call paint, Qt's per-cell paint) of ``view``'s viewport over ``region``."""
    cls = type(view)
    try:
        cls.one_call_paint = True
        ours = _render(view, region)
        cls.one_call_paint = False
        qts = _render(view, region)
    finally:
        cls.one_call_paint = True
    return ours, qts


@pytest.fixture
def long_list(window, qtbot, no_internal_errors):
    w = window
    assert w.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: bool(w.state.readouts), timeout=20000)
    qtbot.waitExposed(w)
    return w


def test_one_call_paint_draws_what_qts_per_cell_paint_draws(long_list, qtbot):
    w = long_list
    table, frozen, proxy, model = w.browser.table, w.browser.frozen, w.browser.proxy, w.browser.model
    assert isinstance(table, SampleTableView) and isinstance(frozen, FrozenColumns)
    assert proxy.rowCount() >= 6
    table.selectRow(3)
    model.outside_row = int(proxy.visible_rows()[1])  # the grey italic row (kept outside the filter)
    table.setColumnWidth(1, 60)  # ids elided
    qtbot.wait(20)
    full = QRegion(table.viewport().rect())
    for view in (table, frozen):
        ours, qts = _both(view, full)
        assert ours == qts, type(view).__name__
        assert len({ours.pixel(x, y) for x in range(0, ours.width(), 3) for y in range(0, 120, 2)}) > 8
    # a region of two rectangles through the same cells (a gap between them): each cell drawn
    # once, as Qt does (text drawn twice would be darker at its anti-aliased edges)
    for view, col in ((table, table.model().columnCount() - 1), (frozen, 1)):
        cell = view.visualRect(proxy.index(0, col)).united(view.visualRect(proxy.index(2, col)))
        third = cell.width() // 3
        region = QRegion(cell.adjusted(0, 0, -2 * third, 0)).united(QRegion(cell.adjusted(2 * third - 6, 0, 0, 0)))
        assert region.rectCount() == 2
        ours, qts = _both(view, region)
        assert ours == qts, type(view).__name__
    # the list without the keyboard focus (the selection drawn as Qt draws it then)
    w.browser.search.setFocus()
    qtbot.wait(10)
    ours, qts = _both(table, full)
    assert ours == qts


def test_a_scroll_calls_the_cell_painter_once_per_row(long_list, qtbot, monkeypatch):
    w = long_list
    table, proxy = w.browser.table, w.browser.proxy
    rows_drawn, cells_drawn = [], []
    real_row, real_cell = CellPainter.draw_row, CellPainter.paint
    monkeypatch.setattr(CellPainter, "draw_row", lambda self, *a: rows_drawn.append(a[1]) or real_row(self, *a))
    monkeypatch.setattr(CellPainter, "paint", lambda self, *a: cells_drawn.append(1) or real_cell(self, *a))
    table.viewport().repaint()
    shown = table.rowAt(table.viewport().height() - 1)
    shown = (proxy.rowCount() if shown < 0 else shown + 1) - max(table.rowAt(0), 0)
    assert not cells_drawn  # Qt's per-cell path is not taken
    assert len(rows_drawn) == shown  # one call for each row shown, its cells in it
