"""A missing image is drawn as a checkerboard *and* named in the message bar —
an absent images folder (no file path at all), a ``../`` path, and a partly missing folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from test_gui_defects import canvas, focus

pytest.importorskip("masklens.core.kinds.demo")

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


def _open(w, qtbot, kind: str, argv: list[str]) -> None:
    assert w.commands.open_benchmark(kind, argv)
    qtbot.waitUntil(lambda: w.state.kind is not None and w.state.kind.name == kind and bool(w.state.readouts)
                    and not w.jobs.busy, timeout=20000)


def test_absent_images_folder_is_said(window, qtbot, tmp_path, no_internal_errors):
    bench = tmp_path / "cge"
    shutil.copytree(DEMO / "cgebench", bench)
    shutil.rmtree(bench / "images")  # the folder the loader looks in is gone: no file path at all
    _open(window, qtbot, "cgebench", ["--ann", str(bench / "ann.json"), "--pred", str(bench / "pred_demo.json")])
    text = window.message_bar.text
    assert window.message_bar.level == "warning"
    assert "image id 1" in text and "has no file" in text and "--images" in text, text


def test_dotdot_images_path_names_the_file_it_looked_for(window, qtbot, tmp_path, monkeypatch, no_internal_errors):
    work = tmp_path / "work" / "here"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    _open(window, qtbot, "cafe", ["--ann", str(DEMO / "cafe" / "ann.json"), "--images", "../nowhere",
                                  "--pred", str(DEMO / "cafe" / "pred_demo.json")])
    text = window.message_bar.text
    assert text.startswith(str(tmp_path / "work" / "nowhere" / "0001.png") + ": image file not found"), text
    assert "given as ../nowhere/0001.png" in text
    assert "checkerboard" in text


def test_partly_missing_folder_names_each_missing_file(window, qtbot, tmp_path, no_internal_errors):
    bench = tmp_path / "cafe"
    shutil.copytree(DEMO / "cafe", bench)
    (bench / "images" / "0003.png").unlink()
    _open(window, qtbot, "cafe", ["--ann", str(bench / "ann.json"), "--images", str(bench / "images"),
                                  "--pred", str(bench / "pred_demo.json")])
    window.state.set_index(0)
    assert "0003.png" not in window.message_bar.text
    focus(window, qtbot, canvas(window))
    for _ in range(2):  # to the third sample, as a user pages
        qtbot.keyClick(canvas(window), Qt.Key.Key_PageDown)
    assert window.state.index == 2
    assert "0003.png" in window.message_bar.text and window.message_bar.level == "warning"
