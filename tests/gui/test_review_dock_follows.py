"""The Review dock follows what happens, not the next sample switch: a reviewer name typed +
Enter changes the N button, the queue line and the verdict column at once; an assignment made
by another process while the window is open shows up; the name is kept for the next start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from test_gui_defects import canvas, focus, open_demo
from test_your_verdicts import cell, type_reviewer

from masklens.core.review.locations import benchmark_key
from masklens.gui.settings import Settings
from masklens.gui.window.main_window import MainWindow

demo = pytest.importorskip("masklens.core.kinds.demo")


def assign(w, *reviewers: str) -> None:
    """`masklens review assign` in a process of its own, beside the window."""
    ns = demo.demo_namespace("cafe", with_predictions=True)
    exe = Path(sys.executable).with_name("masklens")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "masklens"]
    got = subprocess.run([*cmd, "review", "assign", "cafe", "--ann", str(ns.ann), "--images", str(ns.images),
                          "--store", str(w.state.review_store.path), "--reviewers", ",".join(reviewers),
                          "--seed", "3"], capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert got.returncode == 0, got.stderr


def test_an_assignment_made_beside_the_window_is_seen_without_reopening(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    type_reviewer(w, qtbot, "ana")
    assert w.review_panel.next_button.text().startswith("Next unreviewed")
    assign(w, "ana", "ben")
    qtbot.waitUntil(lambda: w.review_panel.next_button.text().startswith("Next in my queue"), timeout=5000)
    queue = w.state.review_store.queue(benchmark_key(w.state.benchmark), "ana")
    assert w.team.progress.text() == f"Your queue (ana): 0/{len(queue)} done"
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(canvas(w), Qt.Key.Key_N)
    assert w.state.sample.id in queue  # N follows ana's queue


def test_a_reviewer_name_typed_applies_at_once_and_is_kept(window, qtbot, no_internal_errors, tmp_path):
    w = window
    open_demo(w, qtbot, "cafe")
    type_reviewer(w, qtbot, "ana")
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(canvas(w), Qt.Key.Key_K)  # Fine, by ana
    sid = w.state.sample.id
    assign(w, "ben", "eve")  # ana has no queue; ben has
    qtbot.waitUntil(lambda: w.review_panel.next_button.text().startswith("Next unreviewed"), timeout=5000)
    type_reviewer(w, qtbot, "ben")
    # no sample switch: the button, the queue line and the verdict columns are ben's now
    assert w.review_panel.next_button.text().startswith("Next in my queue")
    assert w.team.progress.text().startswith("Your queue (ben): 0/")
    assert cell(w, sid, "verdict") == "" and cell(w, sid, "others") == "ana: Fine"
    # the name is kept for the next start
    path = tmp_path / "settings.json"
    w.settings_path = path
    w.close()
    again = MainWindow(Settings.load(path)[0], settings_path=path)
    qtbot.addWidget(again)
    assert again.review_panel.reviewer.text() == "ben"
