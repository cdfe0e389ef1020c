"""The window's named slots: a feature's actions appear at its slot's place in a menu or toolbar,
whatever was added to the menu after the slot was opened; and AppState is the one writer of the
ground truth a feature swaps in (the corrected ground truth)."""

from __future__ import annotations

import copy

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu


def _texts(menu: QMenu) -> list[str]:
    """The menu as the user sees it: its visible entries, "—" for a separator."""
    return ["—" if a.isSeparator() else a.text().replace("&", "") for a in menu.actions() if a.isVisible()]


def test_an_action_added_to_a_slot_appears_at_the_slot_not_at_the_end(qtbot):
    from masklens.gui.window.slots import WindowSlots

    menu = QMenu()
    slots = WindowSlots()
    menu.addAction(QAction("Open", menu))
    slots.open("file.extra", menu)
    menu.addAction(QAction("Quit", menu))
    slots.add("file.extra", QAction("Apply", menu), QAction("Export", menu))
    slots.add_separator("file.extra")
    assert _texts(menu) == ["Open", "Apply", "Export", "—", "Quit"]
    with pytest.raises(ValueError, match="file.extra"):
        slots.open("file.extra", menu)
    with pytest.raises(KeyError):
        slots.add("nowhere", QAction("Lost", menu))


def _menu(window, title: str) -> QMenu:
    return next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == title)


def test_the_features_actions_sit_in_their_slots_of_the_window(window):
    assert _texts(_menu(window, "File")) == [
        "Open benchmark…", "Open predictions…", "Open demo", "Save workspace…", "—", "Export report…", "—",
        "Apply corrections…", "Export verdicts/corrections…", "—", "Open recent", "—", "Quit"]
    assert _texts(_menu(window, "Help")) == ["Keyboard shortcuts", "Filter language…", "Documentation", "—",
                                             "About masklens"]
    view = _texts(_menu(window, "View"))
    assert view[view.index("Colours…") + 1:] == ["—", "Corrected ground truth"]
    toolbar = [a for a in window.view_toolbar.actions() if a.isVisible()]
    assert toolbar[-1] is window.corrected_view.action and toolbar[-2].isSeparator()
    assert window.edit_check.action in toolbar[:-2]  # the Edit difference switch before it


def test_replacing_the_ground_truth_keeps_the_set_and_sample_and_redraws(toy_window, qtbot):
    st = toy_window.state
    st.set_index(1)
    corrected = copy.copy(st.benchmark)
    changed: list[str] = []
    st.benchmarkChanged.connect(lambda: changed.append("benchmark"))
    st.readoutsChanged.connect(lambda: changed.append("readouts"))
    st.sampleChanged.connect(lambda i: changed.append(f"sample {i}"))
    active, scorer = st.active, st.scorers[st.active]
    st.replace_ground_truth(corrected, {active: scorer})
    assert st.benchmark is corrected and st.active == active and st.index == 1
    assert changed == ["readouts", "sample 1"]  # the same benchmark opened: no benchmarkChanged
    assert list(st.readouts) == [active] and len(st.readouts[active]) == len(corrected.samples)
