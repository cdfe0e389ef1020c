"""The gallery at scale, driven with real keys: Ctrl+A is one selection range whose
handlers never walk the rows one by one (the list's column headers used to ask every row of
every visible column whether it was selected, at each paint), and a batch verdict on all of
them; only the exposed tiles are drawn; the thumbnails of the tiles shown are made and kept in
a bounded cache while PageDown pages through thousands of samples."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

pytest.importorskip("masklens.core.kinds.demo")

N = 3000


def calls_to(filename: str, name: str, action) -> int:
    """How often Python functions ``name`` of ``filename`` run during ``action()`` (also those
    Qt calls from C++: the proxy's ``index()`` asked by a header paint)."""
    count = 0

    def prof(frame, event, _arg):
        nonlocal count
        if event == "call" and frame.f_code.co_name == name and frame.f_code.co_filename.endswith(filename):
            count += 1

    sys.setprofile(prof)
    try:
        action()
    finally:
        sys.setprofile(None)
    return count


@pytest.fixture
def big(window, toy, qtbot, no_internal_errors):
    import toykind

    files = toykind.write_toy(toy["ann"].parent / "big", n=N, images=False)
    w = window
    w.resize(1400, 900)
    assert w.commands.open_benchmark("toy", ["--ann", str(files["ann"]), "--pred", str(files["pred"])])
    qtbot.waitUntil(lambda: bool(w.state.readouts) and not w.jobs.busy, timeout=30000)
    bar = w.tabs.tabBar()
    i = next(i for i in range(w.tabs.count()) if w.tabs.tabText(i) == "Gallery")
    w.message_bar.hide()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(i).center())
    grid = w.gallery.grid
    qtbot.waitUntil(lambda: bool(grid.painted), timeout=5000)
    qtbot.mouseClick(grid.viewport(), Qt.MouseButton.LeftButton, pos=grid.tile_rect(0).center())
    return w


def test_ctrl_a_selects_every_sample_as_one_range_without_a_per_row_walk(big, qtbot):
    w = big
    grid, sel = w.gallery.grid, w.browser.table.selectionModel()

    def select_all():
        qtbot.keyClick(grid.viewport(), Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        w.repaint()  # the list beside it and the grid, painted with every row selected

    asked = calls_to("row_proxy.py", "index", select_all)
    assert sel.isRowSelected(0) and sel.isRowSelected(N - 1) and sel.isRowSelected(N // 2)
    assert len(sel.selection()) == 1  # one range, not 3,000
    assert grid.selected_count() == N and grid.selected_spans() == [(0, N)]
    assert w.gallery.summary.text().endswith(f"{N} selected")
    # a paint asks for the cells it draws: a few hundred, not rows × visible columns (18,000+)
    assert asked < N // 3, asked
    assert not w.browser.table.horizontalHeader().selectionModel().hasSelection()
    assert w.browser.proxy.sortColumn() == -1  # the header still sorts: a click on "sample"
    header = w.browser.table.horizontalHeader()
    col = w.browser.model.columns.index("sample") if "sample" in w.browser.model.columns else 1
    x = header.sectionViewportPosition(col) + header.sectionSize(col) // 2
    from PySide6.QtCore import QPoint

    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))
    assert w.browser.proxy.sortColumn() == col

    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Escape)  # only the current one again
    assert grid.selected_count() == 1


def test_one_verdict_key_for_all_selected_samples_and_one_undo(big, qtbot):
    w = big
    if w.review_panel is None:
        pytest.skip("no review panel")
    from masklens.core.review.locations import benchmark_key

    grid = w.gallery.grid
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_K)  # Fine, for all 3,000
    store, key = w.state.review_store, benchmark_key(w.state.benchmark)
    current = store.current(key)
    assert len(current) == N and {v.verdict for v in current} == {"fine"}
    assert len({v.sample_id for v in current}) == N
    assert w.gallery.tiles.glyphs(N - 1) == [("✓", "#009E73")]
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert store.current(key) == []
    assert w.gallery.tiles.glyphs(N - 1) == []


def in_view(grid) -> int:
    """Tiles (partly) inside the viewport."""
    return sum(grid.tile_rect(i).intersects(grid.viewport().rect()) for i in grid.visible_range())


def pictures_of(w, rows) -> list:
    variant = w.gallery.tiles.variant()
    return [w.gallery.cache.get(w.browser.model.samples[r].id, variant) for r in rows]


def tiles_drawn(monkeypatch, grid) -> list[bool]:
    """Each tile the grid draws from now on: whether it had its picture (GalleryGrid._paint_tile,
    spied; clear the list before a repaint to see that paint's tiles)."""
    drawn: list[bool] = []
    paint_tile = type(grid)._paint_tile

    def spied(self, p, rect, src, *args):
        drawn.append(self.tiles.thumbnail(src) is not None)
        return paint_tile(self, p, rect, src, *args)

    monkeypatch.setattr(type(grid), "_paint_tile", spied)
    return drawn


def test_page_down_through_thousands_draws_the_tiles_shown_into_a_bounded_cache(big, qtbot, monkeypatch):
    from masklens.gui.gallery.grid import THUMB_H, THUMB_W

    w = big
    grid, cache, loader = w.gallery.grid, w.gallery.cache, w.gallery.loader
    cache.budget = 60 * THUMB_W * THUMB_H * 4  # room for ~60 tiles: the pages walked past are dropped
    drawn: list[str] = []
    loader.ready.connect(lambda sid, *_: drawn.append(sid))
    for _ in range(12):
        qtbot.keyClick(grid.viewport(), Qt.Key.Key_PageDown)
        grid.viewport().repaint()
        shown = list(grid.painted)
        qtbot.waitUntil(lambda rows=shown: loader.pending() == 0 and None not in pictures_of(w, rows),
                        timeout=10000)
        assert cache.bytes <= cache.budget
    assert w.state.index == grid.current() >= 12 * grid.columns()
    assert cache.bytes <= cache.budget and len(cache) < len(drawn)  # more were drawn than are kept
    tiles = tiles_drawn(monkeypatch, grid)
    grid.viewport().repaint()  # every tile on screen has its picture (none grey)
    assert len(tiles) == in_view(grid) and all(tiles)


def test_only_exposed_tiles_are_drawn_and_a_thumbnail_repaints_its_own_tile(big, qtbot, monkeypatch):
    from PySide6.QtCore import QEvent, QObject

    w = big
    grid, loader = w.gallery.grid, w.gallery.loader
    tiles = tiles_drawn(monkeypatch, grid)
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_End)  # a page whose thumbnails are not made yet
    tiles.clear()
    grid.viewport().repaint()
    assert len(tiles) == in_view(grid) > 1 and not all(tiles)

    class Regions(QObject):
        def __init__(self):
            super().__init__()
            self.seen = []

        def eventFilter(self, obj, event):  # noqa: N802 - Qt override
            if event.type() == QEvent.Type.Paint:
                self.seen.append(event.region())
            return False

    regions = Regions()
    grid.viewport().installEventFilter(regions)
    qtbot.waitUntil(lambda: loader.pending() == 0 and None not in pictures_of(w, grid.painted), timeout=10000)
    grid.viewport().removeEventFilter(regions)
    full = grid.viewport().rect()
    assert regions.seen  # the arrivals were painted, each as its tiles' rectangles, not the page
    assert all(r.boundingRect() != full or r.rectCount() > 1 for r in regions.seen)
    last = grid.count() - 1
    QApplication.processEvents()  # the last arrival's own update painted first (not merged into the next)
    tiles.clear()
    grid.viewport().repaint(grid.tile_rect(last))  # one tile exposed: one tile drawn
    assert len(tiles) == 1 and grid.painted[-1] == w.browser.proxy.visible_rows()[last]


def held(grid, key, *, repeat=True, release=False):
    """A key event as the keyboard sends it while a key is held down (auto-repeat), or its release."""
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtWidgets import QApplication

    kind = QKeyEvent.Type.KeyRelease if release else QKeyEvent.Type.KeyPress
    for event_kind in ((QKeyEvent.Type.ShortcutOverride, kind) if not release else (kind,)):
        QApplication.sendEvent(grid.viewport(), QKeyEvent(event_kind, key, Qt.KeyboardModifier.NoModifier, "",
                                                          repeat))


def test_a_held_page_down_moves_the_frame_at_once_and_the_window_when_let_go(big, qtbot):
    w = big
    grid = w.gallery.grid
    switches = []
    w.state.sampleChanged.connect(lambda *_: switches.append(w.state.index))
    page = grid.columns() * max(1, grid.viewport().height() // grid.tile_rect(0).height())
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_PageDown)  # one press: a sample switch, as before
    assert w.state.index == page and switches == [page]
    for _ in range(6):  # held down: six repeats
        held(grid, Qt.Key.Key_PageDown)
        grid.viewport().repaint()
        assert grid.current() in grid.visible_range()  # the frame is on screen at each repeat
    assert grid.current() == 7 * page
    assert w.state.index == page and switches == [page]  # the window has not switched six times
    assert w.browser.table.currentIndex().row() == page
    held(grid, Qt.Key.Key_PageDown, repeat=False, release=True)  # let go
    assert w.state.index == 7 * page and switches == [page, 7 * page]
    assert grid.selected_rows() == [7 * page] and w.browser.table.currentIndex().row() == 7 * page

    for _ in range(3):  # held again, then the repeats pause: the window follows by itself
        held(grid, Qt.Key.Key_Down)
    target = 7 * page + 3 * grid.columns()
    assert w.state.index == 7 * page
    qtbot.waitUntil(lambda: w.state.index == target, timeout=3000)
    assert switches[-1] == target


def test_a_verdict_key_after_a_held_move_goes_to_the_sample_with_the_frame(big, qtbot):
    w = big
    if w.review_panel is None:
        pytest.skip("no review panel")
    from masklens.core.review.locations import benchmark_key

    grid = w.gallery.grid
    for _ in range(4):
        held(grid, Qt.Key.Key_Right)
    assert grid.current() == 4 and w.state.index == 0
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_M)  # Model wrong: on tile 4, not on sample 0
    store, key = w.state.review_store, benchmark_key(w.state.benchmark)
    assert [(v.sample_id, v.verdict) for v in store.current(key)] == [(w.browser.model.samples[4].id,
                                                                       "model_wrong")]
    assert w.state.index == 4


def shows_row(browser, row: int) -> bool:
    """Whether the list's viewport shows ``row`` whole (and its frozen id columns the same rows)."""
    table = browser.table
    y = table.rowViewportPosition(row)
    same = browser.frozen.verticalScrollBar().value() == table.verticalScrollBar().value()
    return y >= 0 and y + table.rowHeight(row) <= table.viewport().height() and same


def test_end_and_home_in_the_gallery_scroll_the_list_a_turn_later_once(big, qtbot):
    """End / Home in the gallery: in the key's own event-loop turn the frame, the list's current
    row and the window's sample move to the first/last sample, but the list does not scroll
    (a scroll repaints all its visible cells: ~15 ms more in the same stall); it scrolls once
    the keys are handled, once for several keys, and shows the current row."""
    w = big
    grid, table = w.gallery.grid, w.browser.table
    bar = table.verticalScrollBar()
    assert table.isVisible() and not table.hasFocus() and grid.hasFocus()
    qtbot.waitUntil(lambda: shows_row(w.browser, 0), timeout=5000)
    moves: list[int] = []
    bar.valueChanged.connect(moves.append)
    last = N - 1
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_End)
    assert grid.current() == last and table.currentIndex().row() == last
    assert w.state.sample.id == w.browser.model.samples[w.browser.proxy.visible_rows()[last]].id
    assert moves == []  # not in the key's turn
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Home)
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_End)
    assert grid.current() == last and table.currentIndex().row() == last and moves == []
    qtbot.waitUntil(lambda: shows_row(w.browser, last), timeout=5000)
    assert len(moves) == 1 and moves[0] == bar.maximum()  # one scroll for the three keys
    assert w.state.sample.id == w.browser.model.samples[w.browser.proxy.visible_rows()[last]].id
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Home)
    assert grid.current() == 0 and table.currentIndex().row() == 0 and len(moves) == 1
    qtbot.waitUntil(lambda: shows_row(w.browser, 0), timeout=5000)
    assert moves[1:] == [0] and w.state.sample.id == w.browser.model.samples[w.browser.proxy.visible_rows()[0]].id
    assert grid.hasFocus()  # the keys stayed in the gallery


def test_keys_in_the_list_itself_scroll_it_at_once(big, qtbot):
    """The deferral is for moves from elsewhere: End and an arrow in the list (it has the focus)
    scroll it in the key's own turn, as Qt's view does."""
    w = big
    table = w.browser.table
    table.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.waitUntil(table.hasFocus, timeout=5000)
    qtbot.keyClick(table, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    assert table.currentIndex().row() == N - 1 and shows_row(w.browser, N - 1)
    qtbot.keyClick(table, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    assert table.currentIndex().row() == 0 and shows_row(w.browser, 0)


def test_the_current_tile_stays_in_view_when_the_window_is_resized(big, qtbot):
    w = big
    grid = w.gallery.grid
    w.resize(1440, 900)
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_End)  # the last sample
    last = N - 1
    qtbot.waitUntil(lambda: grid.viewport().rect().contains(grid.tile_rect(last)), timeout=5000)
    w.resize(1000, 650)
    qtbot.waitUntil(lambda: w.width() == 1000 and grid.current() == last, timeout=5000)
    qtbot.waitUntil(lambda: grid.viewport().rect().intersects(grid.tile_rect(last)), timeout=3000)
    assert grid.viewport().rect().contains(grid.tile_rect(last))
