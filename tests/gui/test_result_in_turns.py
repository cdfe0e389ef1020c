"""A new model result with many masks is drawn over several event-loop turns (no GUI
stall over 50 ms while a 100-mask Grounded SAM 2 result arrives), and what is shown once it is
drawn is all of it: every panel's overlay equals the one drawn in one go, every accepted instance
has its score label.

A tiny random Grounded SAM 2 (real transformers classes, threshold 0, no NMS: its 8 queries give
up to 8 masks) answers typed prompts in the real window; ``TURN_INSTANCES`` is lowered so that
these few masks already need several turns.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

pytest.importorskip("transformers")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))

import tiny  # noqa: E402


@pytest.fixture(scope="module")
def grounded(tmp_path_factory):
    root = tmp_path_factory.mktemp("grounded")
    return {"weights": str(tiny.build_grounding_dino(root / "dino")),
            "sam2_weights": str(tiny.build_sam2_hf(root / "sam2")),
            "device": "cpu", "score_threshold": 0.0}


def _pixels(pixmap) -> np.ndarray:
    img = pixmap.toImage().convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    return np.array(img.constBits(), dtype=np.uint8).reshape(img.height(), img.bytesPerLine())


def _ask(w, qtbot, text: str, n: int) -> None:
    pb = w.prompt_bar
    pb.set_role("positive", None)
    pb.set_text(text)
    assert pb.select_model("grounded-sam2")
    qtbot.mouseClick(pb.run, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(w.state.live) == n and not w.jobs.busy, timeout=60000)


def _shown(view) -> list[tuple[list[str], np.ndarray | None]]:
    """Per panel: its score labels and its "pred" layer's pixels."""
    out = []
    for panel in view.panels:
        layer = panel.canvas._layers.get("pred")
        shown = layer is not None and layer.isVisible()
        out.append((panel.canvas.label_texts(), _pixels(layer.pixmap()) if shown else None))
    return out


def test_a_result_with_many_masks_is_drawn_over_several_turns_and_fully(toy_window, qtbot, grounded,
                                                                         monkeypatch, no_internal_errors):
    import threading

    from pycocotools import mask as mask_utils

    from masklens.gui.canvas import overlays, sample_view

    w = toy_window
    monkeypatch.setattr(sample_view, "TURN_INSTANCES", 2)
    areas_on_gui: list[bool] = []
    area = mask_utils.area
    monkeypatch.setattr(mask_utils, "area", lambda rle: areas_on_gui.append(
        threading.current_thread() is threading.main_thread()) or area(rle))
    w.commands.set_model_options("grounded-sam2", grounded)
    w.readout_panel.sliders.set_value("score_threshold", 0.0)
    left_at_arrival: list[int] = []
    w.state.liveChanged.connect(lambda: left_at_arrival.append(w.compare_view.drawing_left()))
    qtbot.wait(100)  # the toy's own predictions drawn
    del areas_on_gui[:]
    _ask(w, qtbot, "red square", 1)
    _ask(w, qtbot, "blue circle", 2)
    view = w.compare_view
    # when the second result arrived, its handler drew nothing of the two panels yet
    assert left_at_arrival[-1] == 2, left_at_arrival
    qtbot.waitUntil(lambda: view.drawing_left() == 0, timeout=10000)
    in_turns = _shown(view)
    # the score labels' areas were found by the job (pycocotools, ~1 ms a mask), not the GUI thread
    assert areas_on_gui and not any(areas_on_gui)

    img = w.store.image(w.state.sample.images["img"])
    h, wd = img.shape[:2]
    assert [s.prompt_id for s in view.specs] == [r.prompt.id for r in w.state.live]
    for (texts, pixels), run in zip(in_turns, w.state.live, strict=True):
        accepted = [i for i in run.prediction.instances if i.score >= 0.0]
        assert len(accepted) >= 3  # enough masks to need more than one turn
        drawn = [i for i in accepted if i.mask.area > 0]
        assert texts == [f"{i.score:.2f}" for i in drawn]  # every mask has its label
        arrays = [w.store.mask(i.mask, h, wd) for i in accepted]
        box = sample_view.union_box([w.store.box(a) for a in arrays])
        expected = overlays.to_pixmap(overlays.instance_labels(overlays.crop(arrays, box), w.toggles.outlines),
                                      overlays.instance_table(w.toggles.pred_opacity))
        assert pixels is not None and np.array_equal(pixels, _pixels(expected))  # every mask drawn

    # the same window drawn in one go shows the very same
    monkeypatch.setattr(sample_view, "TURN_INSTANCES", 10_000)
    w.renderer.render(in_turns=True)
    assert view.drawing_left() == 0
    once = _shown(view)
    assert [t for t, _ in once] == [t for t, _ in in_turns]
    assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(once, in_turns, strict=True))


def test_a_newer_drawing_drops_what_an_older_one_left(toy_window, qtbot, grounded, monkeypatch,
                                                      no_internal_errors):
    """Stepping to another sample while a result is still being drawn in turns: the panels left
    are not drawn with the old sample's results over the new sample's."""
    from masklens.gui.canvas import sample_view

    w = toy_window
    monkeypatch.setattr(sample_view, "TURN_INSTANCES", 2)
    w.commands.set_model_options("grounded-sam2", grounded)
    w.readout_panel.sliders.set_value("score_threshold", 0.0)
    _ask(w, qtbot, "red square", 1)
    qtbot.waitUntil(lambda: w.compare_view.drawing_left() == 0, timeout=10000)
    drawn = []
    real = sample_view.render_panel
    monkeypatch.setattr(sample_view, "render_panel", lambda p, s, c: drawn.append(c.sample.id) or real(p, s, c))
    w.renderer.render(in_turns=True)  # the first sample's panel, left for the next turn
    assert w.compare_view.drawing_left() == 1
    w.state.set_index(1)  # another sample before that turn
    qtbot.waitUntil(lambda: w.compare_view.drawing_left() == 0, timeout=10000)
    qtbot.wait(50)
    first = w.state.benchmark.samples[0].id
    assert first not in drawn, drawn
