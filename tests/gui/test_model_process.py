"""The window runs its torch models in a process of their own: a prompt typed and run
with real clicks is answered there, Cancel in the status bar stops that process' forward pass
part-way and keeps the model loaded, and the status bar shows both processes' memory.

A tiny random CLIPSeg made slow by its shape (48 vision layers of 3,136 tokens: seconds per pass
on a CPU) is loaded from disk by the process through the ordinary code path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

pytest.importorskip("transformers")
pytestmark = pytest.mark.slow  # a real model process behind the window
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))

import tiny  # noqa: E402

from masklens.core.models.remote import RemoteSegmenter  # noqa: E402


@pytest.fixture(scope="module")
def slow_clipseg(tmp_path_factory):
    return tiny.build_clipseg(tmp_path_factory.mktemp("slow-clipseg"), image_size=448, patch_size=8, layers=48)


def _run(w, qtbot, text: str) -> None:
    pb = w.prompt_bar
    pb.set_role("positive", None)
    pb.set_text(text)
    assert pb.select_model("clipseg")
    qtbot.mouseClick(pb.run, Qt.MouseButton.LeftButton)


def test_prompts_run_in_the_model_process_and_cancel_stops_its_pass(toy_window, qtbot, slow_clipseg, monkeypatch,
                                                                    no_internal_errors):
    monkeypatch.setenv("MASKLENS_MODEL_PROCESS", "separate")  # the product's default
    w = toy_window
    options = {"weights": str(slow_clipseg), "device": "cpu"}
    w.commands.set_model_options("clipseg", options)

    _run(w, qtbot, "red square")  # starts the process, loads, answers
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=120000)
    assert len(w.state.live) == 1, w.message_bar.text
    assert isinstance(w.commands.models.get("clipseg", **options), RemoteSegmenter)
    pid = w.model_host.pid
    assert pid not in (None, os.getpid())
    w.status.update_device()
    assert " models" in w.status.device.text() and w.status.device.text().startswith("device: cpu")

    w.state.set_index(1)  # a new image: a whole pass, nothing cached
    _run(w, qtbot, "blue circle")
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=120000)
    n = len(w.state.live)

    w.state.set_index(2)
    _run(w, qtbot, "green triangle")  # a 48-layer pass at 448 px: Cancel comes while it runs
    qtbot.waitUntil(lambda: any(job.started for job in w.jobs.jobs) and w.status.cancel.isVisible(),
                    timeout=30000)
    qtbot.mouseClick(w.status.cancel, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=60000)
    assert "cancelled" in w.message_bar.text and len(w.state.live) == n
    assert w.model_host.pid == pid  # its pass stopped; the process was not ended

    _run(w, qtbot, "green triangle")  # the next run works, on the loaded model
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=120000)
    assert len(w.state.live) == n + 1 and w.model_host.pid == pid

    w.close()  # closing the window ends its model process
    assert not w.model_host.running


def test_the_status_line_shows_what_the_model_process_reported():
    """The device line of a running model process comes from its last answer (no torch here):
    its CUDA memory, and both processes' resident sizes."""
    from types import SimpleNamespace

    from masklens.gui.window.status import device_text

    gpu = {"torch": True, "cuda": 0, "name": "NVIDIA H100", "allocated": 1024 * 2**20,
           "reserved": 2048 * 2**20, "total": 81559 * 2**20}
    text = device_text(rss=400_000_000, host=SimpleNamespace(pid=os.getpid(), state=gpu))
    assert text.startswith("device: cuda:0 NVIDIA H100 · GPU mem 1024/81559 MiB (reserved 2048) · RAM 400")
    assert text.endswith(" models") and " window + " in text
    cpu = device_text(rss=400_000_000, host=SimpleNamespace(pid=os.getpid(), state={"torch": True}))
    assert cpu.startswith("device: cpu · RAM 400")
    assert device_text(rss=400_000_000, host=SimpleNamespace(pid=None, state={})).endswith("RAM 400.0 MB")
