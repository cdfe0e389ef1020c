"""At 1440 px every toolbar button is in view (nothing behind the » extension), the drawing and
correction tools are icons whose tooltips name them and their keys, and the edit's status is in
the status bar, always in view while Correct mode is on."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolBar, QToolButton
from test_correct_mode import enter_correct_and_select
from test_gui_defects import open_demo


def test_at_1440_px_every_toolbar_button_is_in_view_and_the_edit_status_is_seen(window, qtbot, no_internal_errors):
    w = window
    w.resize(1440, 900)
    open_demo(w, qtbot, "cafe")
    enter_correct_and_select(w, qtbot)  # C, V, a click on the instance: both tool rows shown
    qtbot.waitUntil(lambda: w.width() == 1440 and w.correction.toolbar.isVisible(), timeout=3000)
    bars = [b for b in w.findChildren(QToolBar) if b.isVisible()]
    assert w.visual_tool.toolbar in bars and w.correction.toolbar in bars
    for bar in bars:
        extension = bar.findChild(QToolButton, "qt_toolbar_ext_button")
        assert extension is None or not extension.isVisible(), bar.windowTitle()
        for action in bar.actions():
            if action.isVisible() and not action.isSeparator():
                shown = bar.widgetForAction(action)
                assert shown is not None and shown.isVisible(), (bar.windowTitle(), action.text())
    for action in [*w.visual_tool.actions, *w.correction.toolbar.actions()]:
        if action.isSeparator():
            continue
        assert not action.icon().isNull(), action.text()
        name = action.text().split(" (")[0]
        assert action.toolTip().startswith(name), (action.text(), action.toolTip())
        key = action.shortcut().toString()  # "Shift+F"; "Del" is written "Delete"
        assert not key or f"({key[:3]}" in action.toolTip(), action.toolTip()
    status = w.correction.edit_status
    assert status.isVisible() and w.statusBar().isAncestorOf(status)
    assert "target instance 1 ·" in status.text() and "brush 8 px" in status.text()
    qtbot.keyClick(w.sample_view.panels[0].canvas, Qt.Key.Key_H)  # Pan: Correct mode off
    assert not status.isVisible() and not w.correction.toolbar.isVisible()
