"""An unaccepted correction is never dropped silently: a sample switch (PgDn, a click in the
list), opening another benchmark, leaving Correct mode, Esc and quitting (Ctrl+Q, closing the
window) ask Accept / Discard / Cancel first; the keys and clicks are the user's."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from test_correct_mode import answer, drag, enter_correct_and_select, key
from test_gui_defects import canvas, open_demo

from masklens.core.review.locations import benchmark_key

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def cafe(window, qtbot, no_internal_errors):
    open_demo(window, qtbot, "cafe")
    window.review_panel.reviewer.setText("ana")
    return window


def no_question_open() -> bool:
    box = QApplication.activeModalWidget()
    return box is None or box.objectName() != "unaccepted-edit"


def editing(w) -> bool:
    """An edit with changes is open."""
    return w.correction.session is not None and w.correction.session.changed


def start_edit(w, qtbot) -> None:
    """Correct mode, the first instance selected, one brush stroke: an unaccepted edit."""
    enter_correct_and_select(w, qtbot)
    key(w, qtbot, Qt.Key.Key_D)
    drag(qtbot, canvas(w), [(5, 5), (30, 10)])
    assert editing(w)


def corrections(w) -> list:
    return w.state.review_store.corrections(benchmark_key(w.state.benchmark))


def current_row(w) -> int:
    return w.browser.proxy.mapToSource(w.browser.table.currentIndex()).row()


def test_pgdn_asks_cancel_keeps_the_edit_discard_moves_on(cafe, qtbot):
    w = cafe
    start_edit(w, qtbot)
    area = w.correction.session.area
    asked = answer(qtbot, "Cancel")
    key(w, qtbot, Qt.Key.Key_PageDown)
    qtbot.waitUntil(lambda: bool(asked) and no_question_open(), timeout=5000)
    assert "moving to another sample" in asked[0] and "instance 1" in asked[0]
    assert w.state.index == 0 and w.correction.session is not None and w.correction.session.area == area
    assert current_row(w) == 0  # the list's selection stays on the sample being edited
    asked = answer(qtbot, "Discard edit")
    key(w, qtbot, Qt.Key.Key_PageDown)
    qtbot.waitUntil(lambda: w.state.index == 1, timeout=5000)
    assert asked and w.correction.session is None and corrections(w) == []


def test_a_click_in_the_list_asks_and_accept_records_the_edit_first(cafe, qtbot):
    w = cafe
    start_edit(w, qtbot)
    sid = w.state.sample.id
    table = w.browser.table
    answer(qtbot, "Accept edit")
    rect = table.visualRect(w.browser.proxy.index(2, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: w.state.index == 2, timeout=5000)
    assert [c.sample_id for c in corrections(w)] == [sid]


def test_opening_another_benchmark_asks_and_cancel_keeps_the_edit(cafe, qtbot):
    w = cafe
    start_edit(w, qtbot)
    asked = answer(qtbot, "Cancel")
    next(a for a in w.demo_menu.actions() if a.objectName() == "open-demo-pcs").trigger()
    qtbot.waitUntil(lambda: bool(asked) and no_question_open(), timeout=5000)
    assert "opening another benchmark" in asked[0]
    assert w.state.kind.name == "cafe" and editing(w) and not w.jobs.busy


def test_leaving_correct_mode_asks_and_esc_closes_the_edit_keeping_correct_mode(cafe, qtbot):
    w = cafe
    start_edit(w, qtbot)
    asked = answer(qtbot, "Cancel")
    key(w, qtbot, Qt.Key.Key_H)  # Pan
    qtbot.waitUntil(lambda: bool(asked) and no_question_open(), timeout=5000)
    assert "leaving Correct mode" in asked[0]
    assert w.visual_tool.tool == "correct" and w.correction.correct_action.isChecked()
    assert editing(w) and w.correction.toolbar.isVisible()
    # Esc inside the edit: the same question; Accept records it and Correct mode stays on
    asked = answer(qtbot, "Accept edit")
    key(w, qtbot, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: w.correction.session is None, timeout=5000)
    assert "closing it" in asked[0] and len(corrections(w)) == 1
    assert w.visual_tool.tool == "correct" and "brush" not in w.correction._items  # no ring left
    # an edit with nothing changed closes on Esc without a question; then Esc is Clear again
    key(w, qtbot, Qt.Key.Key_V)
    enter_correct_and_select(w, qtbot)
    key(w, qtbot, Qt.Key.Key_Escape)
    assert w.correction.session is None and w.visual_tool.tool == "correct"
    key(w, qtbot, Qt.Key.Key_Escape)
    assert w.visual_tool.tool == "pan"


def test_ctrl_q_asks_cancel_keeps_the_window_accept_records_and_quits(cafe, qtbot):
    w = cafe
    start_edit(w, qtbot)
    sid = w.state.sample.id
    asked = answer(qtbot, "Cancel")
    key(w, qtbot, Qt.Key.Key_Q, CTRL)
    qtbot.waitUntil(lambda: bool(asked) and no_question_open(), timeout=5000)
    assert "quitting" in asked[0] and w.isVisible() and editing(w)
    store = w.state.review_store
    key_ = benchmark_key(w.state.benchmark)
    answer(qtbot, "Accept edit")
    key(w, qtbot, Qt.Key.Key_Q, CTRL)
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=5000)
    from masklens.core.review.store import Role, open_store

    with open_store(store.path, Role.READ) as again:
        assert [c.sample_id for c in again.corrections(key_)] == [sid]


def test_the_f1_sheet_says_what_esc_does_in_an_edit(cafe, qtbot):
    w = cafe
    w.help.keys_action.trigger()
    rows = w.help.sheet.rows
    esc = [r for r in rows if r[0] == "Esc"]
    assert [action for _, action, _ in esc] == ["Clear (in an edit: close the edit)"]
    tip = w.visual_tool.clear_action.toolTip()
    assert "closes the edit" in tip and "Accept / Discard / Cancel" in tip
