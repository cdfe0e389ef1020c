"""A benchmark that fails to load (a truncated ground-truth JSON) keeps the
problem in the Open dialog, with every field as the user filled it — driven through the real,
modal dialog (typed paths, a click on Open, then on Cancel)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QLineEdit

pytest.importorskip("masklens.core.kinds.demo")

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


def test_truncated_ground_truth_stays_in_the_open_dialog(window, qtbot, tmp_path, no_internal_errors):
    from masklens.gui.dialogs.open_dialog import OpenDialog

    bench = tmp_path / "cafe"
    shutil.copytree(DEMO / "cafe", bench)
    text = (bench / "ann.json").read_text()
    (bench / "ann.json").write_text(text[: len(text) // 2])  # truncated mid-record
    seen: list[tuple[OpenDialog, str, dict[str, str]]] = []

    def drive() -> None:
        dlg = QApplication.activeModalWidget()
        if not isinstance(dlg, OpenDialog) or (seen and dlg is seen[-1][0]):
            QTimer.singleShot(20, drive)  # not shown yet
            return
        typed = {f.action.dest: f.widget.findChild(QLineEdit).text() for f in dlg.fields
                 if f.widget.findChild(QLineEdit) is not None}
        seen.append((dlg, dlg.error.text(), typed))
        buttons = dlg.findChild(QDialogButtonBox)
        if len(seen) == 1:  # the user types the paths and clicks Open
            edits = {f.action.dest: f.widget.findChild(QLineEdit) for f in dlg.fields}
            qtbot.keyClicks(edits["ann"], str(bench / "ann.json"))
            qtbot.keyClicks(edits["images"], str(bench / "images"))
            qtbot.mouseClick(buttons.button(QDialogButtonBox.StandardButton.Open), Qt.MouseButton.LeftButton)
            QTimer.singleShot(20, drive)  # the dialog comes back with the problem
        else:
            qtbot.mouseClick(buttons.button(QDialogButtonBox.StandardButton.Cancel), Qt.MouseButton.LeftButton)

    QTimer.singleShot(0, drive)
    window.commands.open_benchmark_dialog("cafe")
    qtbot.waitUntil(lambda: "open benchmark:" in window.message_bar.text, timeout=15000)  # the load failed
    qtbot.waitUntil(lambda: len(seen) == 2 and QApplication.activeModalWidget() is None, timeout=5000)
    _, problem, values = seen[1]
    assert "ann.json" in problem and "not opened" in problem, problem  # the core's message, in the dialog
    assert values["ann"] == str(bench / "ann.json") and values["images"] == str(bench / "images")
    assert seen[1][0].kinds.currentData() == "cafe"
    assert window.state.benchmark is None  # nothing was opened
