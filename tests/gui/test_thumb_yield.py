"""After an input the gallery's thumbnail thread lets the GUI thread answer first: it starts no
thumbnail for ``YIELD_MS`` (the GIL shared a switch interval at a time with it doubled the
window's stall at 100,000 samples), and inputs that keep coming hold one back at most
``HELD_MAX_MS`` (the tiles still fill in during a long scroll)."""

from __future__ import annotations

import time

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QImage, QWheelEvent
from PySide6.QtWidgets import QApplication

from masklens.gui.gallery import thumbnails
from masklens.gui.gallery.thumbnails import ThumbLoader


def _job(started: list[float]):
    def draw() -> QImage:
        started.append(time.monotonic())
        return QImage(4, 4, QImage.Format.Format_RGB32)
    return draw


def test_a_thumbnail_waits_for_the_gui_after_an_input_and_at_most_held_max(qtbot):
    loader = ThumbLoader()
    try:
        started: list[float] = []
        loader.want({("a", 0): _job(started)})  # no input: drawn at once
        qtbot.waitUntil(lambda: loader.made == 1, timeout=5000)
        t0 = time.monotonic()
        loader.yield_to_gui(60_000)  # an input asking for a minute: held back, but not that long
        loader.want({("b", 0): _job(started)})
        qtbot.wait(thumbnails.HELD_MAX_MS // 3)
        assert loader.made == 1  # not yet: the GUI thread's turn
        qtbot.waitUntil(lambda: loader.made == 2, timeout=5000)
        assert started[1] - t0 >= thumbnails.HELD_MAX_MS / 1000 * 0.9
    finally:
        loader.stop()


def _wheel(grid) -> QWheelEvent:
    at = QPointF(grid.viewport().rect().center())
    return QWheelEvent(at, QPointF(grid.viewport().mapToGlobal(at.toPoint())), QPoint(0, 0), QPoint(0, -120),
                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)


def test_gallery_keys_and_scrolls_hold_the_thumbnails_back(toy_window, qtbot, no_internal_errors):
    w = toy_window
    w.tabs.setCurrentWidget(w.gallery)
    grid = w.gallery.grid
    grid.setFocus()
    qtbot.waitUntil(lambda: not w.gallery.loader.pending(), timeout=10000)
    loader = w.gallery.loader
    for i, act in enumerate((lambda: qtbot.keyClick(grid, Qt.Key.Key_Right),
                lambda: QApplication.sendEvent(grid.viewport(), _wheel(grid)),
                lambda: w.browser.table.selectRow(2))):  # a sample switch from the list
        loader._resume_at = 0.0
        act()
        assert loader._resume_at > time.monotonic(), i  # the thread waits for the window's answer
