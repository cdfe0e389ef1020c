"""The menu entries added for the desktop, chosen with the mouse as a user does: Evaluate › Model
environment… sets the Python the models run in; File › Save workspace… writes the workspace."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu
from test_gui_defects import open_demo


def _choose(w, qtbot, menu_title: str, entry: str) -> None:
    bar = w.menuBar()
    top = next(a for a in bar.actions() if a.text().replace("&", "") == menu_title)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.actionGeometry(top).center())
    menu = top.menu()
    qtbot.waitUntil(menu.isVisible, timeout=3000)
    item = next(a for a in menu.actions() if a.text().replace("&", "") == entry)
    qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(item).center())
    qtbot.waitUntil(lambda: not any(isinstance(p, QMenu) and p.isVisible() for p in QApplication.topLevelWidgets()),
                    timeout=3000)


def test_model_environment_and_save_workspace_by_mouse(window, qtbot, monkeypatch, tmp_path, no_internal_errors):
    from masklens.gui.window.model_environment import set_model_environment

    w = window
    open_demo(w, qtbot, "cafe")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (sys.executable, "")))
    _choose(w, qtbot, "Evaluate", "Model environment…")
    qtbot.waitUntil(lambda: w.model_host.python == Path(sys.executable), timeout=3000)
    assert w.settings.model_python == sys.executable
    out = tmp_path / "w.masklens"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "")))
    _choose(w, qtbot, "File", "Save workspace…")
    qtbot.waitUntil(out.exists, timeout=3000)
    assert json.loads(out.read_text())["kind"] == "cafe"
    assert set_model_environment(w, None)
