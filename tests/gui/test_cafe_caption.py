"""The CAFE panel caption never reads two instances' figures as one's: when the max IoU is
another instance's than the max s, it says that instance's score, as the card does."""

from __future__ import annotations

from PySide6.QtCore import Qt
from test_gui_defects import focus, open_demo


def test_the_negative_caption_names_the_score_of_the_max_iou_instance(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    table = w.browser.table
    focus(w, qtbot, table)
    for _ in range(5):  # sample 6: the negative prompt's best-IoU instance scores 0.43 (not drawn)
        qtbot.keyClick(table, Qt.Key.Key_Down)
    qtbot.waitUntil(lambda: w.state.index == 5, timeout=3000)
    neg = w.sample_view.panels[1]
    qtbot.waitUntil(lambda: neg.caption.text().startswith("UA-FP"), timeout=5000)
    assert neg.caption.text().startswith("UA-FP · max s 0.99 · max IoU 0.993 (its s 0.43 < t, not drawn)"), neg.caption.text()
    pos = w.sample_view.panels[0]
    assert "(its s" not in pos.caption.text()  # one instance gives both figures there
