"""The sample browser, driven as a user would (real clicks and keys on the demo
window): sort then open another kind, Tab out of the list, search and typed filter per
benchmark, preset AND expression, natural id order, placeholders and column names per kind."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from masklens.gui.browser.sample_table import FIXED

pytest.importorskip("masklens.core.kinds.demo")

from test_gui_defects import focus, open_demo, type_filter  # noqa: E402


def click_header(w, qtbot, name: str) -> int:
    """Click the browser's header section called ``name`` (scrolled into view first)."""
    table, header = w.browser.table, w.browser.table.horizontalHeader()
    col = next(c for c in range(header.count())
               if w.browser.proxy.headerData(c, Qt.Orientation.Horizontal) == name)
    table.scrollTo(w.browser.proxy.index(0, col))
    x = header.sectionViewportPosition(col) + header.sectionSize(col) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))
    return col


def shown_ids(w) -> list[str]:
    b = w.browser
    return [b.proxy.index(r, 1).data() for r in range(b.proxy.rowCount())]


def test_sort_by_a_metric_then_open_another_kind(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    col = click_header(w, qtbot, "pos_image_id")
    assert w.browser.proxy.sortColumn() == col
    assert w.browser.table.horizontalHeader().sortIndicatorSection() == col
    open_demo(w, qtbot, "hallusegbench")  # File › Open demo › another kind
    QApplication.processEvents()
    # no column of that name here: the list is back in benchmark order, the arrow gone
    assert w.browser.proxy.sortColumn() == -1
    assert w.browser.table.horizontalHeader().sortIndicatorSection() in (-1, w.browser.table.model().columnCount())
    assert shown_ids(w) == [s.id for s in w.state.benchmark.samples]
    # a sort by a column every kind has (the sample id) stays, and reads naturally (2 before 10)
    click_header(w, qtbot, "sample")
    open_demo(w, qtbot, "pcs")
    QApplication.processEvents()
    assert w.browser.proxy.sort_name() == "sample" and w.browser.proxy.sortColumn() == FIXED.index("sample")
    ids = shown_ids(w)
    assert ids == sorted(ids, key=int) and ids[:3] == ["1", "2", "3"] and ids.index("10") == 9


def test_sort_follows_its_column_when_columns_change(window, qtbot, no_internal_errors):
    """New columns in front (Compare sets does that): the sort stays on the same-named column."""
    w = window
    open_demo(w, qtbot, "cafe")
    b = w.browser
    click_header(w, qtbot, "pos_max_score")
    before = shown_ids(w)
    rows = [{"extra": i % 2, **r} for i, r in enumerate(w.state.readouts[w.state.active])]
    b.set_readouts(rows)
    col = b.model.column_named("pos_max_score")
    assert b.proxy.sortColumn() == col and b.table.horizontalHeader().sortIndicatorSection() == col
    assert shown_ids(w) == before


def test_tab_leaves_the_sample_list_and_arrows_move_in_it(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    table = w.browser.table
    focus(w, qtbot, table)
    start = w.state.index
    qtbot.keyClick(table, Qt.Key.Key_Down)
    assert w.state.index == start + 1
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    assert not table.hasFocus() and w.state.index == start + 1  # out of the list, same sample
    focus(w, qtbot, table)
    qtbot.keyClick(table, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert not table.hasFocus() and w.state.index == start + 1


def test_search_text_does_not_carry_over_to_the_next_benchmark(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    focus(w, qtbot, w.browser.search)
    qtbot.keyClicks(w.browser.search, "zzz-nothing")
    assert w.browser.count.text() == "0 / 18"
    type_filter(w, qtbot, "pos_max_score > 2")
    open_demo(w, qtbot, "hallusegbench")
    n = len(w.state.benchmark.samples)
    assert w.browser.search.text() == "" and w.browser.expression.text() == ""
    assert w.browser.count.text() == f"{n} / {n}" and not w.browser.current_outside()
    assert "outside the filter" not in w.status.sample.text()


def test_typed_filter_is_anded_with_the_chosen_preset(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    b = w.browser
    readouts = w.state.readouts[w.state.active]
    combo = b.presets
    focus(w, qtbot, combo)
    target = combo.findText("positive prompt not TA-TP")
    while combo.currentIndex() < target:  # chosen with the keyboard, as a user does
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    preset = [r for r in readouts if r["pos_class"] != "TA-TP"]
    typed = [r for r in readouts if r["pos_max_score"] >= 0.5]
    both = [r for r in preset if r["pos_max_score"] >= 0.5]
    assert len(both) not in (len(preset), len(typed))  # the demo tells the three apart
    assert b.count.text() == f"{len(preset)} / 18"
    type_filter(w, qtbot, "pos_max_score >= 0.5")
    assert combo.currentText() == "positive prompt not TA-TP"  # the box still says what applies …
    assert b.count.text() == f"{len(both)} / 18"  # … and it does, together with the expression
    assert "positive prompt not TA-TP AND pos_max_score >= 0.5" in b.count.toolTip()
    # another preset keeps the typed expression
    qtbot.keyClick(combo, Qt.Key.Key_Up)
    assert combo.currentText() == "negative prompt is UA-FP"
    ua_fp = [r for r in readouts if r["neg_class"] == "UA-FP" and r["pos_max_score"] >= 0.5]
    assert b.count.text() == f"{len(ua_fp)} / 18"
    # clearing the expression leaves the preset alone
    focus(w, qtbot, combo)
    while combo.currentIndex() < target:
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    focus(w, qtbot, b.expression)
    b.expression.selectAll()
    qtbot.keyClick(b.expression, Qt.Key.Key_Delete)
    assert b.count.text() == f"{len(preset)} / 18"


def test_placeholder_and_column_names_come_from_the_open_kind(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    b = w.browser
    hint = b.expression.placeholderText()
    assert "IoU_fact" not in hint
    suggested = hint.split("e.g. ")[1].split(" (Enter)")[0]
    assert suggested.split()[0] in b.model.columns
    type_filter(w, qtbot, suggested)
    assert b.expression.styleSheet() == ""  # applied: a real column of this kind
    # CAFE's TA_FN (official script: every positive not TA-TP, UA-P included) is named apart
    # from the paper's TA-FN (TA_FN_paper, what the card and the report call TA-FN)
    headers = [b.proxy.headerData(c, Qt.Orientation.Horizontal) for c in range(b.proxy.columnCount())]
    assert "TA_FN" not in headers and "not_TA_TP" in headers and "TA_FN_paper" in headers
    readouts = w.state.readouts[w.state.active]
    type_filter(w, qtbot, "not_TA_TP == 1")
    assert b.expression.styleSheet() == ""
    assert b.count.text() == f"{sum(r['pos_class'] != 'TA-TP' for r in readouts)} / 18"
    open_demo(w, qtbot, "hallusegbench")
    hint = b.expression.placeholderText().split("e.g. ")[1].split()[0]
    assert hint in b.model.columns


def test_id_columns_stay_in_view_when_the_metrics_scroll(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "pcs")
    b, table = w.browser, w.browser.table
    frozen = b.frozen
    table.horizontalScrollBar().setValue(table.horizontalScrollBar().maximum())  # far right
    QApplication.processEvents()
    assert table.horizontalScrollBar().value() > 0
    # the id column is still painted at the left: the kept columns lie over the table there
    assert frozen.isVisible() and frozen.geometry().left() <= table.viewport().geometry().left()
    assert frozen.width() == table.columnWidth(0) + table.columnWidth(1)
    # its rows lie exactly on the table's (same top, same height)
    top = frozen.mapTo(table, frozen.viewport().geometry().topLeft()).y()
    assert top == table.viewport().geometry().top() and frozen.rowHeight(0) == table.rowHeight(0)
    assert all(frozen.isColumnHidden(c) for c in range(2, b.proxy.columnCount()))
    # a click on a row's id there selects that sample
    focus(w, qtbot, b.search)
    idx = frozen.model().index(4, 1)
    qtbot.mouseClick(frozen.viewport(), Qt.MouseButton.LeftButton, pos=frozen.visualRect(idx).center())
    assert w.state.index == b.proxy.mapToSource(idx).row()
    assert table.hasFocus()  # the arrows and one-key shortcuts go to the list now
    qtbot.keyClick(table, Qt.Key.Key_Down)
    assert w.state.index == b.proxy.mapToSource(frozen.model().index(5, 1)).row()
    assert b.proxy.mapToSource(table.currentIndex()).row() == w.state.index
    # vertical scrolling moves both (61 rows do not all fit)
    assert table.verticalScrollBar().maximum() >= 3
    table.verticalScrollBar().setValue(3)
    assert frozen.verticalScrollBar().value() == 3
    # a click on its "sample" header sorts the list (again: the other way round)
    header = frozen.horizontalHeader()
    x = header.sectionViewportPosition(1) + header.sectionSize(1) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))
    assert b.proxy.sort_name() == "sample" and header.sortIndicatorSection() == 1
    first = shown_ids(w)
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))
    assert shown_ids(w) == first[::-1]
