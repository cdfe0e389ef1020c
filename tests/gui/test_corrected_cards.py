"""The corrected ground truth's cards in the Readout dock: the original card above the corrected
one, both readable in the dock's width (no sideways scroll), and the switch leaves the dock's
width and the canvas alone."""

from __future__ import annotations

from PySide6.QtCore import Qt
from test_gui_defects import open_demo
from test_review_corrections import brush_and_accept


def test_the_switch_stacks_the_cards_and_keeps_the_dock_width(window, qtbot, no_internal_errors):
    w = window
    w.resize(1910, 1000)
    open_demo(w, qtbot, "cafe")
    w.review_panel.reviewer.setText("ana")
    brush_and_accept(w, qtbot)  # a correction of the first sample (real keys and mouse)
    qtbot.keyClick(w.sample_view.panels[0].canvas, Qt.Key.Key_H)  # Pan again
    dock_width, canvas_width = w.readout_dock.width(), w.tabs.width()
    button = w.view_toolbar.widgetForAction(w.corrected_view.action)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.corrected_view.on and w.readout_panel.deck.original_card is not None, timeout=10000)
    deck = w.readout_panel.deck
    original, corrected = deck.original_card, deck.main_card
    qtbot.waitUntil(lambda: original.isVisible() and corrected.isVisible(), timeout=3000)
    top_o = original.mapTo(deck.widget(), original.rect().topLeft())
    top_c = corrected.mapTo(deck.widget(), corrected.rect().topLeft())
    assert top_o.y() + original.height() <= top_c.y() and abs(top_o.x() - top_c.x()) <= 2  # above it
    assert deck.horizontalScrollBar().maximum() == 0  # no sideways scroll
    assert w.readout_dock.width() == dock_width and w.tabs.width() == canvas_width
