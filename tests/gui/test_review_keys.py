"""Safe, fast review: one-key verdicts and layer toggles act only with the focus on the
canvas or the sample list; every verdict is confirmed and Ctrl+Z appends a retraction; Enter in
the Note field records the note. Driven with real key and mouse events; effects checked in the
real SQLite store and on the canvas."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import Role, open_store


@pytest.fixture
def rw(toy_window, qtbot):
    w = toy_window
    if w.review_panel is None:
        pytest.skip("review panel not installed")
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=3000)
    w.review_panel.reviewer.setText("ann")
    return w


def focus(qtbot, widget):
    widget.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget, timeout=3000)


def canvas_of(w):
    return w.sample_view.panels[0].canvas


def rows(w):
    """Every row of the review store, read as a reading command reads it (committed rows only)."""
    with open_store(w.state.review_store.path, Role.READ) as other:
        return other.history(benchmark_key(w.state.benchmark))


def current(w):
    with open_store(w.state.review_store.path, Role.READ) as other:
        return [(v.sample_id, v.verdict, v.note) for v in other.current(benchmark_key(w.state.benchmark))]


def test_typing_in_the_prompt_box_records_nothing_and_toggles_nothing(rw, qtbot):
    w = rw
    before = dict(vars(w.toggles))
    combo, edit = w.prompt_bar.text, w.prompt_bar.text.lineEdit()
    focus(qtbot, combo)  # the line edit's focus proxy
    edit.clear()
    qtbot.keyClicks(combo, "blue square am wiki")  # A, M, W, I, K and the layer keys R, E, S, O, G
    assert edit.text() == "blue square am wiki"
    assert rows(w) == []
    assert vars(w.toggles) == before


@pytest.mark.parametrize("where", ["role combo", "run button", "model combo", "preset combo"])
def test_a_missed_click_leaves_the_keys_inert(rw, qtbot, where):
    """One-key shortcuts (M records a verdict, S toggles scores …) typed while a control outside
    the canvas and the list has the focus record nothing and toggle nothing."""
    w = rw
    widget = {"role combo": w.prompt_bar.role, "run button": w.prompt_bar.run,
              "model combo": w.prompt_bar.model, "preset combo": w.browser.presets}[where]
    widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    focus(qtbot, widget)
    pred, scores = w.toggles.pred, w.toggles.scores
    for key in (Qt.Key.Key_M, Qt.Key.Key_A, Qt.Key.Key_R, Qt.Key.Key_S, Qt.Key.Key_N):
        qtbot.keyClick(widget, key)
    assert rows(w) == []
    assert (w.toggles.pred, w.toggles.scores) == (pred, scores)


def test_verdict_on_the_canvas_is_confirmed_and_undone_by_a_retraction(rw, qtbot):
    w = rw
    canvas = canvas_of(w)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(canvas.hasFocus, timeout=3000)
    sid = w.state.sample.id
    qtbot.keyClick(canvas, Qt.Key.Key_M)
    assert current(w) == [(sid, "model_wrong", "")]
    assert "Ctrl+Z to undo" in w.message_bar.text and "Model wrong" in w.message_bar.text
    assert w.browser.model.verdicts.get(sid) == "model_wrong"
    qtbot.keyClick(canvas, Qt.Key.Key_K)  # a second verdict replaces the first
    assert current(w) == [(sid, "fine", "")]
    qtbot.keyClick(canvas, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert current(w) == [(sid, "model_wrong", "")]  # the earlier verdict is current again
    assert "undone" in w.message_bar.text
    qtbot.keyClick(canvas, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert current(w) == []
    assert not w.browser.model.verdicts.get(sid)
    history = rows(w)  # nothing deleted: two verdicts and two retractions
    assert [v.verdict for v in history] == ["model_wrong", "fine", "", ""]
    assert [v.retracts for v in history] == ["", "", history[1].uid, history[0].uid]
    qtbot.keyClick(canvas, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # nothing left
    assert len(rows(w)) == 4 and "nothing to undo" in w.review_panel.status.text()


def test_layer_keys_act_on_the_canvas(rw, qtbot):
    w = rw
    canvas = canvas_of(w)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(canvas.hasFocus, timeout=3000)
    assert w.toggles.pred and "pred" in canvas.layer_names()
    qtbot.keyClick(canvas, Qt.Key.Key_R)
    assert not w.toggles.pred and "pred" not in canvas_of(w).layer_names()
    qtbot.keyClick(canvas_of(w), Qt.Key.Key_R)
    assert w.toggles.pred


def test_verdict_key_in_the_sample_list_and_next_unreviewed(rw, qtbot):
    w = rw
    table = w.browser.table
    focus(qtbot, table)
    first = w.state.sample.id
    qtbot.keyClick(table, Qt.Key.Key_A)
    assert current(w) == [(first, "prompt_ambiguous", "")]
    qtbot.keyClick(table, Qt.Key.Key_N)  # next unreviewed
    assert w.state.sample.id != first


def test_note_field_types_letters_and_enter_records_the_note(rw, qtbot):
    w = rw
    note = w.review_panel.note
    focus(qtbot, note)
    qtbot.keyClicks(note, "Wrong mask edge")
    assert note.text() == "Wrong mask edge" and rows(w) == []
    qtbot.keyClick(note, Qt.Key.Key_Return)  # no verdict yet: the note waits for one
    assert rows(w) == [] and "choose a verdict" in w.review_panel.status.text()
    assert note.text() == "Wrong mask edge"
    w.review_panel.buttons["model_wrong"].click()  # the button records the verdict with the note
    sid = w.state.sample.id
    assert current(w) == [(sid, "model_wrong", "Wrong mask edge")]
    focus(qtbot, note)
    qtbot.keyClicks(note, "also the shadow")
    qtbot.keyClick(note, Qt.Key.Key_Return)  # Enter: the note joins the current verdict
    assert current(w) == [(sid, "model_wrong", "also the shadow")]
    assert note.text() == ""


def test_focus_ring_on_canvas_and_list(rw, qtbot):
    assert ":focus" in canvas_of(rw).styleSheet()
    table, ring = rw.browser.table, rw.browser.focus_ring  # painted, not a style sheet (speed)
    focus(qtbot, table)
    assert ring.isVisible() and ring.geometry() == table.rect()
    img = table.grab().toImage()
    assert img.pixelColor(table.width() // 2, 0).name() == "#0072b2"  # the ring, drawn
    focus(qtbot, canvas_of(rw))
    assert not ring.isVisible()


def test_ctrl_z_in_a_text_field_is_the_field_s_undo(rw, qtbot):
    w = rw
    canvas = canvas_of(w)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClick(canvas, Qt.Key.Key_M)
    combo = w.prompt_bar.text
    focus(qtbot, combo)
    combo.lineEdit().clear()
    qtbot.keyClicks(combo, "red")
    qtbot.keyClick(combo, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert current(w) == [(w.state.sample.id, "model_wrong", "")]  # the verdict stays
    assert combo.lineEdit().text() != "red"  # the field undid its typing


def test_the_canvas_keeps_the_focus_when_the_panels_are_rebuilt(rw, qtbot):
    w = rw
    qtbot.mouseClick(canvas_of(w).viewport(), Qt.MouseButton.LeftButton)
    assert canvas_of(w).hasFocus()
    w.tabs.setCurrentIndex(0)
    w.sample_view._layout_key = None  # e.g. a benchmark with another panel layout
    w.renderer.render()
    new = canvas_of(w)
    qtbot.waitUntil(new.hasFocus, timeout=3000)
    qtbot.keyClick(new, Qt.Key.Key_K)
    assert current(w) == [(w.state.sample.id, "fine", "")]


def test_enter_in_the_note_gives_the_focus_back_to_the_canvas(rw, qtbot):
    w = rw
    canvas = canvas_of(w)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClick(canvas, Qt.Key.Key_M)
    note = w.review_panel.note
    qtbot.mouseClick(note, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(note.hasFocus, timeout=3000)
    qtbot.keyClicks(note, "bleeds into the sky")
    qtbot.keyClick(note, Qt.Key.Key_Return)
    assert current(w) == [(w.state.sample.id, "model_wrong", "bleeds into the sky")]
    qtbot.waitUntil(canvas.hasFocus, timeout=3000)
    qtbot.keyClick(canvas, Qt.Key.Key_K)  # keys act again at once
    assert current(w) == [(w.state.sample.id, "fine", "")]


def test_opening_a_benchmark_puts_the_focus_on_the_sample_list(window, toy, qtbot):
    w = window
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=3000)
    focus(qtbot, w.prompt_bar.text)
    assert w.commands.open_benchmark("toy", ["--ann", str(toy["ann"]), "--pred", str(toy["pred"])])
    qtbot.waitUntil(lambda: bool(w.state.readouts), timeout=10000)
    assert QApplication.focusWidget() is w.browser.table
    if w.review_panel is not None:
        qtbot.keyClick(w.browser.table, Qt.Key.Key_K)
        assert current(w) == [(w.state.sample.id, "fine", "")]


def test_undo_does_not_reach_into_the_previous_benchmark_s_store(rw, qtbot):
    w = rw
    canvas = canvas_of(w)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClick(canvas, Qt.Key.Key_M)
    old_path, old_key = w.state.review_store.path, benchmark_key(w.state.benchmark)
    assert w.commands.open_demo("cafe", sync=True)
    assert w.state.review_store.path != old_path
    qtbot.mouseClick(canvas_of(w).viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClick(canvas_of(w), Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert "nothing to undo" in w.review_panel.status.text()
    with open_store(old_path, Role.READ) as st:
        assert [v.verdict for v in st.current(old_key)] == ["model_wrong"]


def test_a_verdict_button_click_leaves_the_keys_on_the_canvas(rw, qtbot):
    w = rw
    canvas = canvas_of(w)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)
    first = w.state.sample.id
    button = w.review_panel.buttons["fine"]
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert current(w) == [(first, "fine", "")]
    assert canvas.hasFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_N)  # next unreviewed, from the keyboard at once
    assert w.state.sample.id != first
