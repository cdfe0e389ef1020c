"""Cancel in the status bar stops a real model in the middle of its forward pass.

A tiny random CLIPSeg (built from the real config classes, loaded through the ordinary code path)
gets an artificially slow vision block: one forward of that block runs its MLP 400 times with
50 ms sleeps (20 s). Before the fix, Cancel was looked at only between steps, so the job ran the
whole pass; now every submodule's forward first checks the job's flag.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

pytest.importorskip("transformers")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))

import tiny  # noqa: E402

SLOW_STEPS = 400


@pytest.fixture(scope="module")
def clipseg_folder(tmp_path_factory):
    return tiny.build_clipseg(tmp_path_factory.mktemp("clipseg"))


def _slow_block(layer, steps: list[int], release: threading.Event) -> None:
    """Make one vision block slow: its forward calls its MLP ``SLOW_STEPS`` times, 50 ms each
    (a forward hook that sleeps), recording when each call ran; ``release`` makes it fast again."""
    original = layer.forward

    def sleepy(*_):
        if not release.is_set():
            time.sleep(0.05)

    layer.mlp.register_forward_hook(sleepy)

    def slow_forward(hidden_states, *args, **kwargs):
        if not release.is_set():
            for _ in range(SLOW_STEPS):
                layer.mlp(hidden_states)
                steps.append(1)
        return original(hidden_states, *args, **kwargs)

    layer.forward = slow_forward


def test_status_bar_cancel_interrupts_a_forward_pass(toy_window, qtbot, clipseg_folder, no_internal_errors):
    w = toy_window
    options = {"weights": str(clipseg_folder), "device": "cpu"}
    w.commands.set_model_options("clipseg", options)
    seg = w.commands.models.get("clipseg", **options)
    seg.ensure_loaded()
    steps: list[int] = []
    release = threading.Event()
    _slow_block(seg.model.clip.vision_model.encoder.layers[0], steps, release)

    pb = w.prompt_bar
    pb.set_role("positive", None)
    pb.set_text("red square")
    assert pb.select_model("clipseg")
    qtbot.mouseClick(pb.run, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(steps) >= 5, timeout=20000)  # inside the slow block's forward
    assert w.status.cancel.isVisible()
    qtbot.mouseClick(w.status.cancel, Qt.MouseButton.LeftButton)
    at_click = len(steps)
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=30000)
    assert len(steps) < SLOW_STEPS, "the forward pass ran to its end"
    assert len(steps) - at_click <= 2, f"{len(steps) - at_click} slow steps ran after Cancel"
    assert "cancelled" in w.message_bar.text and w.state.live == []
    # nothing half-computed was kept: no image encoding, no prediction-cache entry
    assert seg.encodings.stats.entries == 0
    assert w.prediction_caches.cache is None or len(w.prediction_caches.cache) == 0

    release.set()  # the next run works, on the same loaded model
    qtbot.mouseClick(pb.run, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not w.jobs.busy and len(w.state.live) == 1, timeout=30000)
    assert seg.encodings.stats.entries == 1


def test_status_bar_shows_the_process_memory_on_cpu(window, qtbot):
    from masklens.core.runtime.memory import rss_bytes
    from masklens.gui.window.status import device_text

    assert device_text(rss=4_600_000_000).endswith("RAM 4.6 GB")
    window.status.update_device()
    text = window.status.device.text()
    shown = float(text.rsplit("RAM ", 1)[1].split()[0])  # the reading, in GB or MB
    unit = 1e9 if text.endswith("GB") else 1e6
    assert abs(shown * unit - rss_bytes()) < 0.2 * rss_bytes()
