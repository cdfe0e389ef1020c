"""Issue 8's defects, each driven as a user would (real key and mouse events) on the demo window."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from masklens.core.schema import Role

pytest.importorskip("masklens.core.benchmarks.demo")


def open_demo(w, qtbot, kind):
    """File › Open demo › KIND, then wait for its predictions to be scored."""
    act = next(a for a in w.demo_menu.actions() if a.objectName() == f"open-demo-{kind}")
    act.trigger()
    qtbot.waitUntil(lambda: w.state.kind is not None and w.state.kind.name == kind
                    and bool(w.state.readouts) and not w.jobs.busy, timeout=20000)


def focus(w, qtbot, widget):
    w.activateWindow()
    widget.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.waitUntil(widget.hasFocus, timeout=3000)


def type_prompt(w, qtbot, text):
    """Click into the prompt box, replace its text, press Enter (keys go to the focused combo)."""
    combo = w.prompt_bar.text
    focus(w, qtbot, combo)
    combo.lineEdit().clear()
    qtbot.keyClicks(combo, text)
    assert combo.currentText() == text
    qtbot.keyClick(combo, Qt.Key.Key_Return)


def canvas(w):
    return w.sample_view.panels[0].canvas


@pytest.fixture
def demo(window, qtbot, no_internal_errors):
    open_demo(window, qtbot, "cafe")
    return window


def test_fit_and_one_to_one_from_keys_and_toolbar(demo, qtbot):
    w = demo
    c = canvas(w)
    fitted = c.scale_factor()
    focus(w, qtbot, c)
    qtbot.keyClick(c, Qt.Key.Key_1)
    assert c.scale_factor() == pytest.approx(1.0)
    qtbot.keyClick(c, Qt.Key.Key_F)
    assert c.scale_factor() == pytest.approx(fitted, rel=0.01)
    c.zoom(2.0)  # as the wheel does
    assert c.scale_factor() == pytest.approx(2 * fitted, rel=0.02)
    qtbot.mouseClick(w.view_toolbar.widgetForAction(w.view_toolbar.fit_action), Qt.MouseButton.LeftButton)
    assert c.scale_factor() == pytest.approx(fitted, rel=0.01)
    qtbot.mouseClick(w.view_toolbar.widgetForAction(w.view_toolbar.one_action), Qt.MouseButton.LeftButton)
    assert c.scale_factor() == pytest.approx(1.0)
    # the other panels follow
    assert w.sample_view.panels[1].canvas.scale_factor() == pytest.approx(1.0)
    assert not any("internal error" in t for _, t in w.message_bar.history)


def test_one_key_shortcuts_do_not_fire_while_typing_a_prompt(demo, qtbot):
    w = demo
    pred, scores = (w.view_toolbar.actions_by_name[k] for k in ("pred", "scores"))
    combo = w.prompt_bar.role  # a click that missed the prompt box: focus on the role combo
    focus(w, qtbot, combo)
    qtbot.keyClicks(combo, "rs")
    assert pred.isChecked() and scores.isChecked()
    edit = w.prompt_bar.text.lineEdit()
    focus(w, qtbot, edit)
    edit.clear()
    qtbot.keyClicks(edit, "blue square")
    assert edit.text() == "blue square" and pred.isChecked() and scores.isChecked()
    # on the canvas the same keys toggle the layers
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(canvas(w), Qt.Key.Key_R)
    assert not pred.isChecked() and "pred" not in canvas(w).layer_names()
    focus(w, qtbot, w.browser.table)
    qtbot.keyClick(w.browser.table, Qt.Key.Key_R)
    assert pred.isChecked()


def test_opening_another_benchmark_drops_the_previous_state(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "r2sm")
    w.prompt_bar.set_role(Role.AMODAL)
    type_prompt(w, qtbot, "red circle")
    qtbot.waitUntil(lambda: len(w.state.live) == 1 and not w.jobs.busy, timeout=20000)
    assert w.tabs.currentWidget() is w.compare_view and w.live_list.list.count() == 1
    open_demo(w, qtbot, "cgebench")
    n = len(w.state.benchmark.samples)
    assert w.status.sample.text().startswith(f"sample 1/{n}:")
    assert w.live_list.list.count() == 0 and w.state.live == []
    assert w.tabs.currentWidget() is w.sample_view
    title = w.readout_panel.tree.topLevelItem(0).text(0)
    assert title.startswith("CGEBench"), title
    # the compare tab of the new benchmark is empty, not the old layers
    w.tabs.setCurrentWidget(w.compare_view)
    assert w.compare_view.panels == []


def test_typed_prompt_layers_follow_the_sample(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    type_prompt(w, qtbot, "triangle")
    qtbot.waitUntil(lambda: len(w.state.live) == 1 and not w.jobs.busy, timeout=20000)
    assert w.live_list.list.count() == 1
    focus(w, qtbot, canvas(w) if w.tabs.currentIndex() == 0 else w.browser.table)
    qtbot.keyClick(w.browser.table, Qt.Key.Key_PageDown)
    assert w.state.index == 1
    assert w.live_list.list.count() == 0 and w.compare_view.panels == []
    qtbot.keyClick(w.browser.table, Qt.Key.Key_PageUp)
    assert w.live_list.list.count() == 1 and len(w.compare_view.panels) == 1
