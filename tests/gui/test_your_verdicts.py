"""Whose verdict counts in the window: the sample list's ``verdict`` column, the "unreviewed"
preset and N are the reviewer's own (the name in the Review dock); the other reviewers'
verdicts are in a column of their own, and Help › Filter language says so."""

from __future__ import annotations

from PySide6.QtCore import Qt
from test_gui_defects import canvas, filter_meanings, focus, open_demo

from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import Role, open_store
from masklens.gui.browser.sample_table import FIXED


def type_reviewer(w, qtbot, name: str) -> None:
    """Click into the Review dock's Reviewer field, replace its text, press Enter."""
    field = w.review_panel.reviewer
    w.review_dock.raise_()
    qtbot.waitUntil(field.isVisible, timeout=3000)
    qtbot.mouseClick(field, Qt.MouseButton.LeftButton)
    qtbot.keyClick(field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(field, name)
    qtbot.keyClick(field, Qt.Key.Key_Return)


def choose_preset(w, qtbot, label: str) -> None:
    """The filter presets box, walked with the arrow keys until it reads ``label``."""
    combo = w.browser.presets
    focus(w, qtbot, combo)
    qtbot.keyClick(combo, Qt.Key.Key_Home)
    for _ in range(combo.count()):
        if combo.currentText() == label:
            return
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert combo.currentText() == label


def shown_ids(w) -> list[str]:
    proxy, model = w.browser.proxy, w.browser.model
    return [model.samples[proxy.mapToSource(proxy.index(r, 0)).row()].id for r in range(proxy.rowCount())]


def cell(w, sample_id: str, column: str) -> str:
    model = w.browser.model
    row = [s.id for s in model.samples].index(sample_id)
    return model.data(model.index(row, FIXED.index(column)))


def test_the_verdict_column_and_unreviewed_are_yours_others_in_their_own_column(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    ids = [s.id for s in w.state.benchmark.samples]
    key = benchmark_key(w.state.benchmark)
    with open_store(w.state.review_store.path, Role.WRITE, reviewer="ben") as ben:  # ben's merged verdicts
        ben.record(key, ids[0], "fine")
        ben.record(key, ids[1], "gt_wrong")
    open_demo(w, qtbot, "cafe")  # opened again after the merge
    type_reviewer(w, qtbot, "ana")
    assert cell(w, ids[0], "verdict") == ""  # ben's verdict is not ana's
    assert cell(w, ids[0], "others") == "ben: Fine"
    assert cell(w, ids[1], "others") == "ben: Ground truth wrong"
    choose_preset(w, qtbot, "unreviewed")
    assert shown_ids(w) == ids  # ana has judged nothing yet
    # ana's own verdict (W on the canvas of sample 2): in her column, gone from her "unreviewed"
    w.state.set_index(2)
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(canvas(w), Qt.Key.Key_W)
    qtbot.waitUntil(lambda: cell(w, ids[2], "verdict") == "Ground truth wrong", timeout=3000)
    assert ids[2] in shown_ids(w)  # the current sample stays listed until you move on
    qtbot.keyClick(canvas(w), Qt.Key.Key_PageDown)
    qtbot.waitUntil(lambda: ids[2] not in shown_ids(w), timeout=3000)
    assert ids[0] in shown_ids(w) and ids[1] in shown_ids(w)
    # N agrees with the column: ana's next sample without her verdict
    assert w.review_panel.next_unreviewed() in shown_ids(w)
    # a typed filter on the other reviewers' column
    edit = w.browser.expression
    focus(w, qtbot, edit)
    qtbot.keyClicks(edit, "others ~ ben")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: set(shown_ids(w)) <= {ids[0], ids[1], ids[3]}, timeout=3000)
    assert {ids[0], ids[1]} <= set(shown_ids(w))


def test_help_filter_language_says_verdict_is_yours_and_names_the_others_column(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    meaning = filter_meanings(w, qtbot)  # Help › Filter language…
    assert meaning["verdict"].startswith("your review verdicts") and "unreviewed" in meaning["verdict"]
    assert "other reviewers" in meaning["others"]
