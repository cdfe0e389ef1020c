"""What a restart brings back: the layout, but not a mode. Quitting in Correct mode and starting
again shows the window in Pan with no Correction toolbar."""

from __future__ import annotations

from PySide6.QtCore import Qt
from test_gui_defects import canvas, focus, open_demo, window_with_settings

from masklens.gui.window.main_window import MainWindow


def test_quitting_in_correct_mode_does_not_bring_its_toolbar_back(qtbot, no_internal_errors, tmp_path):
    path = tmp_path / "settings.json"
    w = window_with_settings(qtbot, path, 1500, 950)
    w.resizeDocks([w.browser_dock], [333], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: w.browser_dock.width() == 333, timeout=3000)
    open_demo(w, qtbot, "cafe")
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(canvas(w), Qt.Key.Key_C)  # Correct mode
    assert w.correction.toolbar.isVisible()
    qtbot.keyClick(canvas(w), Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)  # quit
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=5000)
    w2 = MainWindow(settings_path=path)
    qtbot.addWidget(w2)
    w2.show()
    qtbot.waitUntil(lambda: w2.browser_dock.width() == 333, timeout=5000)  # the saved layout is back
    assert w2.visual_tool.tool == "pan" and not w2.correction.correct_action.isChecked()
    assert not w2.correction.toolbar.isVisible()
    w2.close()
