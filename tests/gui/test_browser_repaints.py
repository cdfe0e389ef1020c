"""A slider step repaints the list's cells whose values moved, not the whole list (a t
step ≤ 50 ms; a repaint of a 40-row list costs ~15 ms): what the screen shows afterwards is
what a full repaint draws."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication
from test_cards_in_place import key_step

from masklens.gui.browser.bulk import sort_key
from masklens.gui.browser.filters import flatten
from masklens.gui.browser.sample_table import FIXED, SORT_ROLE


def on_screen(w):
    """The table's viewport as the screen shows it (the window's backing store, not a new paint)."""
    vp = w.browser.table.viewport()
    top_left = vp.mapTo(w, QPoint(0, 0))
    shot = QGuiApplication.primaryScreen().grabWindow(w.winId())
    return shot.copy(top_left.x(), top_left.y(), vp.width(), vp.height()).toImage()


def shown_cells(w):
    """(proxy row, column) → text, for the rows on screen."""
    t, proxy = w.browser.table, w.browser.proxy
    top, bottom = t.rowAt(0), t.rowAt(t.viewport().height() - 1)
    bottom = proxy.rowCount() - 1 if bottom < 0 else bottom
    return {(r, c): proxy.data(proxy.index(r, c)) for r in range(max(top, 0), bottom + 1)
            for c in range(proxy.columnCount())}


def test_a_step_announces_exactly_the_moved_cells_and_the_screen_is_right(window, qtbot, no_internal_errors):
    w = window
    assert w.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: bool(w.state.readouts), timeout=20000)
    qtbot.waitExposed(w)
    announced = []
    w.browser.proxy.dataChanged.connect(
        lambda a, b, *_: announced.append((a.row(), b.row(), a.column(), b.column())))
    # only the columns that t moves, beside the ids: the cells that change are on screen
    st, model, table = w.state, w.browser.model, w.browser.table
    low, high = (st.scorers[st.active].readouts({**st.params, "score_threshold": t}) for t in (0.2, 0.8))
    moving = {len(FIXED) + k for k, key in enumerate(model.columns)
              if any(flatten(a).get(key) != flatten(b).get(key) for a, b in zip(low, high, strict=True))}
    for c in range(2, model.columnCount()):
        table.setColumnHidden(c, c not in moving)
    key_step(w, qtbot, "score_threshold", Qt.Key.Key_PageDown)  # the slider has the focus from now on
    qtbot.wait(50)
    seen = 0
    moved_any = False
    for key in (Qt.Key.Key_PageUp, Qt.Key.Key_PageUp, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
        before = shown_cells(w)
        announced.clear()
        key_step(w, qtbot, "score_threshold", key)
        QApplication.processEvents()
        after = shown_cells(w)
        moved = {cell for cell in before if before[cell] != after[cell]}
        covered = {(r, c) for r0, r1, c0, c1 in announced for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)}
        assert moved <= covered  # every cell that reads otherwise is repainted …
        assert all(r0 == r1 for r0, r1, _c0, _c1 in announced)  # … row by row, not the whole list
        assert {r for r, _c in covered} == {r for r, _c in moved}  # no row that did not move
        moved_any |= bool(moved)
        seen += sum(table.viewport().rect().intersects(table.visualRect(w.browser.proxy.index(r, c)))
                    for r, c in moved)
        qtbot.wait(50)  # the repaint reaches the backing store
        # what a full repaint draws (right of the frozen id columns, drawn over the table)
        cut = w.browser.frozen.width()
        screen, full = on_screen(w), w.browser.table.viewport().grab().toImage()
        assert screen.copy(cut, 0, screen.width() - cut, screen.height()) == full.copy(
            cut, 0, full.width() - cut, full.height())
    assert moved_any and seen, "no step changed a value on screen: the test proves nothing"


def _colours(image, rect) -> int:
    return len({image.pixel(x, y) for x in range(rect.left(), rect.right() + 1)
                for y in range(rect.top(), rect.bottom() + 1, 2)})


def test_the_id_columns_are_painted_by_the_frozen_view_only(window, qtbot, no_internal_errors):
    """The list's "#" and id columns lie under the frozen columns: the table behind does not
    paint their texts (a fifth of a repaint's cells), and the screen shows the frozen view's."""
    w = window
    assert w.commands.open_demo("pcs", sync=True)
    qtbot.waitUntil(lambda: bool(w.state.readouts), timeout=20000)
    qtbot.waitExposed(w)
    qtbot.wait(50)
    table, frozen = w.browser.table, w.browser.frozen
    rows = min(8, w.browser.proxy.rowCount())
    covered = table.visualRect(w.browser.proxy.index(0, 0)).united(
        table.visualRect(w.browser.proxy.index(rows - 1, 1)))
    behind = table.viewport().grab().toImage()
    assert _colours(behind, covered) <= 6  # backgrounds, grid, focus: no text drawn there
    kept = frozen.viewport().grab().toImage()
    assert _colours(kept, covered) > 10  # the ids, in anti-aliased text
    vp = frozen.viewport()
    top_left = vp.mapTo(w, QPoint(0, 0))
    shot = QGuiApplication.primaryScreen().grabWindow(w.winId()).toImage()
    covered.setLeft(covered.left() + 4)  # the table's focus ring is drawn over its left edge
    seen = shot.copy(top_left.x() + covered.x(), top_left.y() + covered.y(), covered.width(), covered.height())
    assert seen == kept.copy(covered)  # what the user sees there: the frozen view's ids


def test_a_sort_is_planned_once_and_again_after_a_change(window, qtbot, monkeypatch, no_internal_errors):
    """QTableView.sortByColumn asks the proxy to sort twice: the rows are planned once (a sort
    of 20,000 rows: ~20 ms); after the values change, the same sort is planned anew."""
    from masklens.gui.browser import row_proxy

    w = window
    assert w.commands.open_demo("pcs", sync=True)
    qtbot.waitUntil(lambda: bool(w.state.readouts), timeout=20000)
    planned = []
    real = row_proxy.plan_rows
    monkeypatch.setattr(row_proxy, "plan_rows", lambda *a, **k: planned.append(1) or real(*a, **k))
    table, proxy, model = w.browser.table, w.browser.proxy, w.browser.model
    col = model.column_named("local_F1")

    def keys():
        return [proxy.data(proxy.index(r, col), SORT_ROLE) for r in range(proxy.rowCount())]

    table.sortByColumn(col, Qt.SortOrder.DescendingOrder)
    assert len(planned) == 1
    assert keys() == sorted(keys(), key=sort_key, reverse=True)
    planned.clear()
    w.readout_panel.sliders.set_value("score_threshold", 0.9)  # new values: the list re-sorts itself
    assert keys() == sorted(keys(), key=sort_key, reverse=True)
    planned.clear()
    table.sortByColumn(col, Qt.SortOrder.AscendingOrder)
    assert len(planned) == 1 and keys() == sorted(keys(), key=sort_key)


def test_the_id_columns_reach_the_last_row_shown_after_the_window_grows(window, qtbot, no_internal_errors):
    """Seen under Xvfb on the SA-Co/Gold demo: after the window was made taller, the last rows of
    the list had no "#" and no id (the frozen view kept the old height; the table behind no longer
    paints those columns). The kept columns are as tall as the table's viewport at every size."""
    w = window
    assert w.commands.open_demo("pcs", sync=True)
    qtbot.waitUntil(lambda: bool(w.state.readouts), timeout=20000)
    qtbot.waitExposed(w)
    table, frozen = w.browser.table, w.browser.frozen
    for size in ((1400, 800), (1500, 1000), (1400, 700), (1600, 1050)):
        w.resize(*size)
        qtbot.waitUntil(lambda s=size: w.size().width() == s[0] and w.size().height() == s[1], timeout=3000)
        qtbot.wait(30)
        bottom = frozen.mapTo(table, frozen.viewport().geometry().bottomLeft()).y()
        assert bottom >= table.viewport().geometry().bottom(), (size, bottom, table.viewport().geometry())
        last = table.rowAt(table.viewport().height() - 1)
        assert last > 0 and frozen.visualRect(w.browser.proxy.index(last, 1)).top() < frozen.viewport().height()
