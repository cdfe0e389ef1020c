"""The Gallery tab, driven with real keys and clicks: the list's rows
in the list's order (one proxy, two views), one selection, keyboard navigation, thumbnails made
off the GUI thread into a bounded cache, only visible tiles drawn, batch verdicts undone at once."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QPoint, Qt

pytest.importorskip("masklens.core.kinds.demo")

from test_gui_defects import open_demo  # noqa: E402 - File › Open demo, then scored


def show_gallery(w, qtbot):
    bar = w.tabs.tabBar()
    i = next(i for i in range(w.tabs.count()) if w.tabs.tabText(i) == "Gallery")
    w.message_bar.hide()  # it floats over the tab bar
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(i).center())
    assert w.tabs.currentWidget() is w.gallery
    grid = w.gallery.grid
    qtbot.waitUntil(lambda: bool(grid.painted), timeout=5000)
    return grid


def click_tile(qtbot, grid, i, mods=Qt.KeyboardModifier.NoModifier):
    qtbot.mouseClick(grid.viewport(), Qt.MouseButton.LeftButton, mods, grid.tile_rect(i).center())


def list_order(w):
    return [w.browser.model.samples[r].id for r in w.browser.proxy.visible_rows()]


def painted_ids(w):
    return [w.browser.model.samples[r].id for r in w.gallery.grid.painted]


@pytest.fixture
def cafe(window, qtbot, no_internal_errors):
    open_demo(window, qtbot, "cafe")
    return window


def test_gallery_shows_the_lists_rows_in_its_order(cafe, qtbot):
    w = cafe
    grid = show_gallery(w, qtbot)
    shown = grid.visible_range()  # the tiles that fit the centre at this window size
    assert 0 < len(grid.painted) == len(shown) <= 18
    assert painted_ids(w) == list_order(w)[: len(grid.painted)]
    w.browser.presets.setCurrentIndex(w.browser.presets.findText("negative prompt is TA-FP"))
    qtbot.waitUntil(lambda: grid.count() == w.browser.proxy.rowCount() < 18, timeout=3000)
    grid.viewport().repaint()
    assert len(grid.painted) == len(grid.visible_range()) and painted_ids(w) == list_order(w)[: len(grid.painted)]
    header = w.browser.table.horizontalHeader()  # sort by a column of the list: the tiles follow
    col = w.browser.model.columns.index("neg_max_score") + w.browser.model.FIXED_COLUMNS
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(header.sectionViewportPosition(col) + 5, header.height() // 2))
    grid.viewport().repaint()
    assert w.browser.proxy.sortColumn() == col
    assert len(grid.painted) == len(grid.visible_range()) and painted_ids(w) == list_order(w)[: len(grid.painted)]
    said = w.gallery.summary.text()  # what the grid shows, in words
    assert said.startswith(f"{grid.count()} of 18 samples · filter: negative prompt is TA-FP"), said
    assert "sorted by neg_max_score, ascending" in said  # in words (the list's ▼ means ascending)
    assert w.browser.proxy.sortOrder() == Qt.SortOrder.AscendingOrder


def test_at_1440_px_the_gallery_header_shows_every_label_whole(cafe, qtbot):
    w = cafe
    w.resize(1440, 900)
    show_gallery(w, qtbot)
    qtbot.waitUntil(lambda: w.width() == 1440 and w.gallery.isVisible(), timeout=3000)
    g = w.gallery
    for b in [*g.batch_buttons.values()]:
        assert b.isVisible() and b.width() >= b.sizeHint().width(), (b.text(), b.width(), b.sizeHint().width())
    for label in (g.legend, g.summary, g.batch_label):
        # a wrapped label is as tall as its text at its width (nothing cut on the right)
        assert label.width() >= label.minimumSizeHint().width()
        assert label.height() >= label.heightForWidth(label.width()) if label.wordWrap() else \
            label.width() >= label.sizeHint().width()


def test_selection_is_shared_with_the_list_and_keys_move_in_the_grid(cafe, qtbot):
    w = cafe
    grid = show_gallery(w, qtbot)
    click_tile(qtbot, grid, 7)
    assert w.state.index == 7 and w.browser.table.currentIndex().row() == 7
    assert grid.hasFocus()
    cols = grid.columns()
    assert cols >= 2
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Right)
    assert w.state.index == 8
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Down)
    assert w.state.index == 8 + cols
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_End)
    assert w.state.index == 17
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Home)
    assert w.state.index == 0
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    assert grid.selected_rows() == [0, 1, 2] and w.state.index == 2
    sel = w.browser.table.selectionModel()  # the list shows the same three rows selected
    assert [r for r in range(18) if sel.isRowSelected(r)] == [0, 1, 2]
    w.browser.step(1)  # a move in the list moves the grid's current tile
    assert grid.current() == 3 and w.state.index == 3
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Tab)  # Tab leaves the grid (it is not trapped there)
    assert not grid.hasFocus() and w.state.index == 3
    grid.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Return)  # Enter opens the sample
    assert w.tabs.currentWidget() is w.sample_view and w.state.index == 3


def test_batch_verdict_for_the_selected_samples_is_one_undo(cafe, qtbot):
    w = cafe
    if w.review_panel is None:
        pytest.skip("no review panel")
    from masklens.core.review.locations import benchmark_key

    grid = show_gallery(w, qtbot)
    click_tile(qtbot, grid, 2)
    click_tile(qtbot, grid, 5, Qt.KeyboardModifier.ShiftModifier)  # 2 … 5
    click_tile(qtbot, grid, 9, Qt.KeyboardModifier.ControlModifier)  # and 9
    click_tile(qtbot, grid, 4, Qt.KeyboardModifier.ControlModifier)  # but not 4
    assert grid.selected_rows() == [2, 3, 5, 9]
    assert "4 selected" in w.gallery.summary.text()
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_W)  # Ground truth wrong, for all four
    store, key = w.state.review_store, benchmark_key(w.state.benchmark)
    ids = [w.browser.model.samples[r].id for r in (2, 3, 5, 9)]
    current = {v.sample_id: v.verdict for v in store.current(key)}
    assert current == dict.fromkeys(ids, "gt_wrong")
    assert len(store.history(key)) == 4  # one row per sample, as one by one
    assert all(w.gallery.tiles.glyphs(r) == [("G", "#CC79A7")] for r in (2, 3, 5, 9))
    assert w.gallery.tiles.glyphs(4) == []
    assert w.browser.model.value(3, 4) == "Ground truth wrong"  # the list's verdict column
    assert "recorded for 4 samples" in w.message_bar.history[-1][1]
    b = w.gallery.batch_buttons["fine"]  # the buttons do the same
    qtbot.mouseClick(b, Qt.MouseButton.LeftButton)
    assert {v.sample_id: v.verdict for v in store.current(key)} == dict.fromkeys(ids, "fine")
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # one undo: all four
    assert {v.sample_id: v.verdict for v in store.current(key)} == dict.fromkeys(ids, "gt_wrong")
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert store.current(key) == []
    assert w.gallery.tiles.glyphs(2) == []
    click_tile(qtbot, grid, 6)  # one sample selected: the key is the usual one-sample verdict
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_M)
    assert [(v.sample_id, v.verdict) for v in store.current(key)] == [(w.state.sample.id, "model_wrong")]


def test_thumbnails_are_drawn_off_the_gui_thread_and_only_for_visible_tiles(window, toy, qtbot, monkeypatch,
                                                                           no_internal_errors):
    import toykind

    from masklens.gui.gallery import tab

    threads = []
    real = tab.make_thumbnail
    monkeypatch.setattr(tab, "make_thumbnail",
                        lambda *a, **k: threads.append(threading.current_thread()) or real(*a, **k))
    files = toykind.write_toy(toy["ann"].parent / "big", n=3000, images=False)
    w = window
    assert w.commands.open_benchmark("toy", ["--ann", str(files["ann"]), "--pred", str(files["pred"])])
    qtbot.waitUntil(lambda: bool(w.state.readouts) and not w.jobs.busy, timeout=20000)
    grid = show_gallery(w, qtbot)
    on_screen = len(grid.visible_range())
    assert 0 < len(grid.painted) == on_screen < 100  # 3,000 samples, a few dozen tiles painted
    qtbot.waitUntil(lambda: w.gallery.loader.pending() == 0 and len(w.gallery.cache) >= on_screen, timeout=10000)
    assert threads and all(t is not threading.main_thread() for t in threads)
    assert len(threads) <= 3 * on_screen  # the visible tiles and the next page (a first paint before
    # the layout settled may have asked for a few others), not the 3,000
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_End)  # to the end: its tiles, not the 2,900 between
    assert w.state.index == 2999
    qtbot.waitUntil(lambda: grid.painted[-1] == 2999 and 2998 in grid.painted, timeout=3000)
    qtbot.waitUntil(lambda: w.gallery.loader.pending() == 0, timeout=10000)
    assert len(threads) <= 5 * on_screen  # plus the last page and its neighbours: not the 2,900 between


def test_thumbnail_colours_follow_t_and_the_cache_is_bounded(toy_window, qtbot):
    from PySide6.QtGui import QColor, QImage

    from masklens.gui.gallery import tab
    from masklens.gui.gallery.thumbnails import ThumbCache

    w = toy_window
    sample = w.state.benchmark.samples[0]  # its positive box scored 0.95, on the target

    def pixels(t, preds):
        img = tab.draw_tile("toy", sample, preds, t)
        return [QColor(img.pixel(x, y)).getRgb()[:3] for y in range(img.height()) for x in range(img.width())]

    def greenish(px):  # "both" (TP) is bluish green; the toy's image is red and blue
        return sum(1 for r, g, b in px if g > r + 20 and g > b + 10)

    kept, dropped, none = (pixels(0.5, w.state.predictions()), pixels(0.99, w.state.predictions()),
                           pixels(0.5, None))
    assert greenish(kept) > 50  # the 0.95 box on its target: "both"
    assert greenish(dropped) == 0 and dropped == none  # below t: drawn as no prediction at all
    assert kept != dropped
    cache = ThumbCache(budget=3 * 160 * 120 * 3)
    for i in range(10):
        img = QImage(160, 120, QImage.Format.Format_RGB888)
        cache.put(f"s{i}", "v", img)
        assert cache.bytes <= cache.budget
    assert len(cache) == 3 and cache.get("s9", "v") is not None and cache.get("s0", "v") is None


def test_another_benchmark_gets_its_own_tiles_and_pages_move_by_a_screen(cafe, qtbot):
    w = cafe
    grid = show_gallery(w, qtbot)
    click_tile(qtbot, grid, 0)
    cols = grid.columns()
    page = cols * max(1, grid.viewport().height() // grid.tile_rect(0).height())
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_PageDown)  # the grid's page, not the window's next sample
    assert w.state.index == min(page, 17)
    open_demo(w, qtbot, "r2sm")
    w.tabs.setCurrentWidget(w.gallery)
    variant = w.gallery.tiles.variant()
    qtbot.waitUntil(lambda: grid.painted and all(
        w.gallery.cache.get(w.browser.model.samples[r].id, variant) is not None for r in grid.painted),
        timeout=10000)
    bench = id(w.state.benchmark)
    assert variant[0] == bench
    assert painted_ids(w) == list_order(w)[: len(grid.painted)]
    assert all(v[0] == bench for _, v in w.gallery.cache._items)  # nothing of CAFE's stays


def test_a_sample_switch_does_not_read_the_whole_review_store(cafe, qtbot, monkeypatch):
    """After a batch verdict the store holds one row per sample: moving on reads that sample's
    rows, and the agreement line is computed again only when something was recorded."""
    w = cafe
    if w.review_panel is None:
        pytest.skip("no review panel")
    from masklens.core.review.store import ReviewStore

    grid = show_gallery(w, qtbot)
    click_tile(qtbot, grid, 0)
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_K)  # Fine for all 18
    reads = []
    real = ReviewStore.current
    monkeypatch.setattr(ReviewStore, "current", lambda self, *a, **k: reads.append(1) or real(self, *a, **k))
    click_tile(qtbot, grid, 5)
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Right)
    assert w.state.index == 6 and reads == []
    shown = [w.review_panel.current.item(i).text() for i in range(w.review_panel.current.count())]
    assert shown == [f"{w.review_panel.who()}: Fine"]  # this sample's own verdict, read from its rows
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_M)  # a new verdict: the agreement line is read again
    assert reads and "18 item(s) reviewed" in w.review_panel.agreement.text()


def test_a_verdict_badge_does_not_paint_over_the_gallery(cafe, qtbot):
    """Seen under Xvfb: after Ctrl+A and W the whole gallery was one pink rectangle — the focus
    frame was drawn with the last badge's brush still set, filling the viewport with it."""
    from PySide6.QtGui import QColor

    w = cafe
    grid = show_gallery(w, qtbot)
    click_tile(qtbot, grid, 0)
    qtbot.keyClick(grid, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(grid, Qt.Key.Key_W)
    qtbot.waitUntil(lambda: all(w.gallery.tiles.glyphs(r) for r in grid.painted), timeout=5000)
    assert grid.hasFocus()
    badge = QColor(w.gallery.tiles.glyphs(grid.painted[0])[0][1]).rgb()
    image = grid.viewport().grab().toImage()
    step = 4
    pixels = [image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)]
    share = sum(p == badge for p in pixels) / len(pixels)
    assert share < 0.05, f"{share:.0%} of the gallery has the badge colour"
