"""After an input the gallery's thumbnail thread lets the GUI thread answer first: it starts no
thumbnail for ``YIELD_MS`` (the GIL shared a switch interval at a time with it doubled the
window's stall at 100,000 samples), and inputs that keep coming hold one back at most
``HELD_MAX_MS`` (the tiles still fill in during a long scroll)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QImage, QWheelEvent
from PySide6.QtWidgets import QApplication

from masklens.gui.gallery import thumbnails
from masklens.gui.gallery.thumbnails import ThumbLoader


def _job(started: list[str], name: str):
    def draw() -> QImage:
        started.append(name)
        return QImage(4, 4, QImage.Format.Format_RGB32)
    return draw


def test_a_thumbnail_waits_for_the_gui_after_an_input_and_at_most_held_max(qtbot, monkeypatch):
    monkeypatch.setattr(thumbnails, "HELD_MAX_MS", 600_000)
    loader = ThumbLoader()
    try:
        started: list[str] = []
        loader.want({("a", 0): _job(started, "a")})  # no input: drawn at once
        qtbot.waitUntil(lambda: started == ["a"], timeout=10000)
        loader.yield_to_gui(60_000)  # an input asking for a minute: the GUI thread's turn
        loader.want({("b", 0): _job(started, "b")})
        qtbot.wait(50)
        assert started == ["a"]  # not yet: held back
        monkeypatch.setattr(thumbnails, "HELD_MAX_MS", 20)  # held longer than at most: drawn, the
        loader.want({("b", 0): _job(started, "b")})  # input's minute notwithstanding
        qtbot.waitUntil(lambda: started == ["a", "b"], timeout=10000)
    finally:
        loader.stop()


def _wheel(grid) -> QWheelEvent:
    at = QPointF(grid.viewport().rect().center())
    return QWheelEvent(at, QPointF(grid.viewport().mapToGlobal(at.toPoint())), QPoint(0, 0), QPoint(0, -120),
                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)


def test_gallery_keys_and_scrolls_hold_the_thumbnails_back(toy_window, qtbot, no_internal_errors, monkeypatch):
    w = toy_window
    w.tabs.setCurrentWidget(w.gallery)
    grid = w.gallery.grid
    grid.setFocus()
    qtbot.waitUntil(lambda: not w.gallery.loader.pending(), timeout=10000)
    loader = w.gallery.loader
    yielded: list[float] = []
    yield_to_gui = loader.yield_to_gui
    monkeypatch.setattr(loader, "yield_to_gui", lambda *a: yielded.append(1) or yield_to_gui(*a))
    for i, act in enumerate((lambda: qtbot.keyClick(grid, Qt.Key.Key_Right),
                lambda: QApplication.sendEvent(grid.viewport(), _wheel(grid)),
                lambda: w.browser.table.selectRow(2))):  # a sample switch from the list
        yielded.clear()
        act()
        assert yielded, i  # the thread waits for the window's answer
