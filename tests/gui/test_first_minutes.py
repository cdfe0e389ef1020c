"""The first minutes with the window: picking a role leaves the arrow keys to the sample list,
a Run gives the keys back to the list, and Quit is apart from the exports and asks before an
edit would be lost."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMenu
from test_correct_mode import answer, drag, enter_correct_and_select, key
from test_gui_defects import canvas, focus, open_demo, type_prompt


@pytest.fixture
def cafe(window, qtbot, no_internal_errors):
    open_demo(window, qtbot, "cafe")
    return window


def test_picking_a_role_with_the_mouse_leaves_the_arrows_to_the_list(cafe, qtbot):
    w = cafe
    table, role = w.browser.table, w.prompt_bar.role
    focus(w, qtbot, table)
    qtbot.mouseClick(role, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: role.view().isVisible(), timeout=3000)
    qtbot.keyClick(role.view(), Qt.Key.Key_Down)
    qtbot.keyClick(role.view(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not role.view().isVisible(), timeout=3000)
    picked = role.currentIndex()
    assert picked == 1
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Down)
    assert role.currentIndex() == picked and w.state.index == 1  # the list moved, not the role


def test_after_a_run_the_arrows_walk_the_list(cafe, qtbot):
    w = cafe
    type_prompt(w, qtbot, "triangle")  # Enter runs it
    qtbot.waitUntil(lambda: bool(w.state.live) and not w.jobs.busy, timeout=20000)
    assert w.browser.table.hasFocus()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Down)
    assert w.state.index == 1


def test_quit_is_apart_from_the_exports_and_asks_before_an_edit_is_lost(cafe, qtbot):
    w = cafe
    file_menu = w.menuBar().actions()[0].menu()
    entries = [a for a in file_menu.actions() if a.isVisible()]
    names = [a.text().replace("&", "") for a in entries]
    assert names[-1] == "Quit" and entries[-2].isSeparator()
    above = next(a for a in reversed(entries[:-1]) if not a.isSeparator())
    assert isinstance(above.menu(), QMenu) and "Export" not in above.text()  # a submenu, not an export
    enter_correct_and_select(w, qtbot)
    key(w, qtbot, Qt.Key.Key_D)
    drag(qtbot, canvas(w), [(5, 5), (30, 10)])
    asked = answer(qtbot, "Cancel")
    quit_ = entries[-1]
    quit_.trigger()  # as its menu entry does
    qtbot.waitUntil(lambda: bool(asked), timeout=5000)
    assert "quitting" in asked[0] and w.isVisible()
