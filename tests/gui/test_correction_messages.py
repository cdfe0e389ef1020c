"""What Correct mode says stays current: a confirmation (an accepted edit, a deletion) replaces
a warning about the edit it settles, while an unrelated information never hides a warning."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from test_correct_mode import click, drag, enter_correct_and_select, key
from test_gui_defects import canvas, open_demo

SHIFT = Qt.KeyboardModifier.ShiftModifier


@pytest.fixture
def cafe(window, qtbot, no_internal_errors):
    open_demo(window, qtbot, "cafe")
    return window


def warned_on_the_other_panel(w, qtbot) -> None:
    """An edit on panel 0 with a brush stroke, then a press on panel 1: the warning."""
    enter_correct_and_select(w, qtbot)
    key(w, qtbot, Qt.Key.Key_D)
    drag(qtbot, canvas(w), [(5, 5), (30, 10)])
    other = w.sample_view.panels[1].canvas
    click(qtbot, other, 20, 20)
    assert w.message_bar.level == "warning" and "another panel" in w.message_bar.text


@pytest.mark.parametrize(("keys", "said"), [
    ((Qt.Key.Key_Return, SHIFT), "correction accepted"),
    ((Qt.Key.Key_Delete, Qt.KeyboardModifier.NoModifier), "deletion accepted"),
])
def test_a_confirmation_replaces_the_warning_about_the_edit(cafe, qtbot, keys, said):
    w = cafe
    warned_on_the_other_panel(w, qtbot)
    key(w, qtbot, *keys)
    assert w.message_bar.text.startswith(said) and w.message_bar.level == "info"


def test_an_unrelated_information_still_leaves_the_warning(cafe, qtbot):
    w = cafe
    warned_on_the_other_panel(w, qtbot)
    w.message_bar.show_message("opened something", "info")
    assert "another panel" in w.message_bar.text
