"""At 1000×650 the Readout card is seen whole on a first start: the tabbed Typed prompts /
Review docks below it get only what a few of their lines need (they scroll)."""

from __future__ import annotations

from test_gui_defects import open_demo

from masklens.gui.settings import Settings
from masklens.gui.window.main_window import MainWindow


def test_a_short_window_gives_the_readout_card_its_height(qtbot, no_internal_errors):
    w = MainWindow(Settings(), persist=False)
    qtbot.addWidget(w)
    w.resize(1000, 650)
    w.show()
    qtbot.waitUntil(lambda: w._docks_sized and w.browser_dock.width() > 200, timeout=5000)
    open_demo(w, qtbot, "cafe")
    deck = w.readout_panel.deck
    qtbot.waitUntil(lambda: deck.main_card is not None and deck.main_card.isVisible(), timeout=5000)
    lower = max(w.live_dock.height(), w.review_dock.height())
    assert lower * 2 < w.readout_dock.height(), (lower, w.readout_dock.height())
    assert deck.viewport().height() >= deck.main_card.height()  # every line of the card in view
