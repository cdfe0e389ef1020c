"""Help › Filter language on HalluSegBench: every column has a meaning, the per-sample ΔIoU
columns are described per sample, and after a click puts a name into the filter field the
typing goes on there."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from test_gui_defects import filter_meanings, open_demo


def test_every_column_has_a_meaning_and_typing_goes_on_in_the_filter_field(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "hallusegbench")
    meaning = filter_meanings(w, qtbot)  # Help › Filter language…
    ref = w.help.filter_reference
    for name in ("ann_id", "factual_label", "counterfactual_label", "size", "area_factual",
                 "area_counterfactual", "CCMS_item"):
        assert meaning.get(name), name
    assert "this item" in meaning["dIoU_textual"] and "this item" in meaning["dIoU_visual"]
    row = [r[0] for r in ref.rows].index("area_factual")
    table = ref.table
    table.scrollToItem(table.item(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualItemRect(table.item(row, 0)).center())
    edit = w.browser.expression
    qtbot.waitUntil(lambda: QApplication.focusWidget() is edit and QApplication.activeWindow() is w, timeout=3000)
    qtbot.keyClicks(QApplication.focusWidget(), "> 0")
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
    assert edit.text().strip() == "area_factual > 0"
