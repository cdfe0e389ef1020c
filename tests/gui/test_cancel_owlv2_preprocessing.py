"""Cancel in the status bar stops OWLv2 + SAM 2 while OWLv2's image pre-processing runs.

That stage is no torch module: transformers' processor blurs the padded photograph in one long
convolution before downscaling it (2.31 s of Cancel latency measured with the real-size OWLv2).
masklens runs that blur in strips with the job's cancel check between them. A tiny random OWLv2
(64 px input, so a wide blur: seconds on a 900×1350 image) runs in the real window; the strips
are watched (the real function still runs) and Cancel is clicked while they run.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest
from PySide6.QtCore import Qt

pytest.importorskip("transformers")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))

import tiny  # noqa: E402


@pytest.fixture(scope="module")
def owl_folders(tmp_path_factory):
    return (tiny.build_owlv2(tmp_path_factory.mktemp("owlv2")),
            tiny.build_sam2_hf(tmp_path_factory.mktemp("sam2")))


@pytest.fixture
def big_toy(toy):
    """The toy benchmark with its first image replaced by a 900×1350 photograph-like one."""
    rng = np.random.default_rng(0)
    img = cv2.GaussianBlur(rng.integers(0, 256, (900, 1350, 3), dtype=np.uint8), (0, 0), 2)
    cv2.imwrite(str(Path(toy["ann"]).parent / "img0.png"), img)
    return toy


def test_status_bar_cancel_stops_owlv2_in_its_image_preprocessing(window, big_toy, qtbot, owl_folders,
                                                                  monkeypatch, no_internal_errors):
    from masklens.core.models import owlv2_pixels

    w = window
    assert w.commands.open_benchmark("toy", ["--ann", str(big_toy["ann"]), "--pred", str(big_toy["pred"])])
    qtbot.waitUntil(lambda: bool(w.state.readouts), timeout=10000)
    assert w.store.image(w.state.sample.images["img"]).shape == (900, 1350, 3)
    options = {"weights": str(owl_folders[0]), "sam2_weights": str(owl_folders[1]), "device": "cpu"}
    w.commands.set_model_options("owlv2-sam2", options)
    seg = w.commands.models.get("owlv2-sam2", **options)
    seg.ensure_loaded()
    started: list[int] = []
    seg.detector.owlv2.vision_model.register_forward_pre_hook(lambda *_: started.append(1))
    strips: list[int] = []
    original = owlv2_pixels.blur_in_strips

    def watched(image, kernel_size, sigma, check, *args, **kwargs):
        def counted():
            strips.append(1)
            if check is not None:
                check()

        assert threading.current_thread() is not threading.main_thread()
        return original(image, kernel_size, sigma, counted, *args, **kwargs)

    monkeypatch.setattr(owlv2_pixels, "blur_in_strips", watched)

    pb = w.prompt_bar
    pb.set_role("positive", None)
    pb.set_text("red square")
    assert pb.select_model("owlv2-sam2")
    qtbot.mouseClick(pb.run, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(strips) >= 2, timeout=30000)  # inside the blur
    qtbot.mouseClick(w.status.cancel, Qt.MouseButton.LeftButton)
    at_click = len(strips)
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=60000)
    assert len(strips) - at_click <= 1, "strips went on after Cancel"
    assert len(strips) < 1350 // owlv2_pixels.STRIP_ROWS, "the whole blur ran"
    assert started == [], "OWLv2's vision model started: Cancel was not seen in the pre-processing"
    assert "cancelled" in w.message_bar.text and w.state.live == []
    assert seg.encodings.stats.entries == 0
