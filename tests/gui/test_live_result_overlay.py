"""A new model result is drawn without stalling the window: the prompt job that produced
it decodes its masks, finds their boxes and makes the instance label map and its ARGB image; the
GUI thread only shows them. The prediction cache is opened by the job too.

A tiny random CLIPSeg (real config classes, the ordinary loading path) answers a typed prompt in
the real window; the real overlay functions are spied on (they still run) to see which thread
ran them.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

pytest.importorskip("transformers")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))

import tiny  # noqa: E402


@pytest.fixture(scope="module")
def clipseg_folder(tmp_path_factory):
    return tiny.build_clipseg(tmp_path_factory.mktemp("clipseg"))


def _spy(monkeypatch, owner, name, calls):
    original = getattr(owner, name)

    def spy(*args, **kwargs):
        calls.append(threading.current_thread() is threading.main_thread())
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)


def _pixels(pixmap) -> np.ndarray:
    img = pixmap.toImage().convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    return np.array(img.constBits(), dtype=np.uint8).reshape(img.height(), img.bytesPerLine())


def test_a_new_model_result_is_drawn_from_what_its_job_made(toy_window, qtbot, clipseg_folder, monkeypatch,
                                                             no_internal_errors):
    from test_prefetch_panels import found_prepared

    from masklens.core.cache import predictions
    from masklens.core.masks import Mask
    from masklens.gui.canvas import overlays, sample_view

    w = toy_window
    found = found_prepared(monkeypatch)
    # score 0: CLIPSeg's one instance is accepted whatever the random weights give
    w.commands.set_model_options("clipseg", {"weights": str(clipseg_folder), "device": "cpu", "score_threshold": 0.0})
    w.readout_panel.sliders.set_value("score_threshold", 0.0)
    labels_on_gui, decodes_on_gui, cache_opened_on_gui = [], [], []
    _spy(monkeypatch, overlays, "instance_labels", labels_on_gui)  # what the job calls
    _spy(monkeypatch, sample_view, "instance_labels", labels_on_gui)  # what drawing would call
    _spy(monkeypatch, Mask, "to_array_c", decodes_on_gui)  # how the image store decodes
    _spy(monkeypatch, predictions.PredictionCache, "__init__", cache_opened_on_gui)

    pb = w.prompt_bar
    pb.set_role("positive", None)
    pb.set_text("red square")
    assert pb.select_model("clipseg")
    qtbot.mouseClick(pb.run, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(w.state.live) == 1 and not w.jobs.busy, timeout=60000)

    run = w.state.live[-1]
    assert len(run.prediction.instances) == 1
    assert w.tabs.currentWidget() is w.compare_view
    # the label map and the decoding ran once, in the job; drawing found them ready
    assert labels_on_gui == [False], labels_on_gui
    assert decodes_on_gui and not any(decodes_on_gui), decodes_on_gui
    assert cache_opened_on_gui == [False]
    assert found  # drawing found the job's label map
    # what is shown is what the GUI thread would have drawn itself
    img = w.store.image(w.state.sample.images["img"])
    h, wd = img.shape[:2]
    mask = w.store.mask(run.prediction.instances[0].mask, h, wd)
    box = w.store.box(mask)
    expected = overlays.to_pixmap(overlays.instance_labels(overlays.crop([mask], box), w.toggles.outlines),
                                  overlays.instance_table(w.toggles.pred_opacity))
    panel = next(p for p, s in zip(w.compare_view.panels, w.compare_view.specs, strict=True)
                 if s.prompt_id == run.prompt.id)
    shown = panel.canvas._layers["pred"].pixmap()
    assert np.array_equal(_pixels(shown), _pixels(expected))


def test_a_result_is_drawn_on_the_gui_thread_when_the_toggles_changed_meanwhile(toy_window, qtbot,
                                                                                clipseg_folder):
    """What the job made for other outlines is not used: the layer is made again, as drawn now."""
    from masklens.gui.canvas import overlays

    w = toy_window
    w.commands.set_model_options("clipseg", {"weights": str(clipseg_folder), "device": "cpu", "score_threshold": 0.0})
    w.readout_panel.sliders.set_value("score_threshold", 0.0)
    pb = w.prompt_bar
    pb.set_role("positive", None)
    pb.set_text("red square")
    assert pb.select_model("clipseg")
    qtbot.mouseClick(pb.run, Qt.MouseButton.LeftButton)
    w.toggles.outlines = not w.toggles.outlines  # before the result arrives
    qtbot.waitUntil(lambda: len(w.state.live) == 1 and not w.jobs.busy, timeout=60000)
    run = w.state.live[-1]
    img = w.store.image(w.state.sample.images["img"])
    mask = w.store.mask(run.prediction.instances[0].mask, *img.shape[:2])
    box = w.store.box(mask)
    panel = next(p for p, s in zip(w.compare_view.panels, w.compare_view.specs, strict=True)
                 if s.prompt_id == run.prompt.id)
    expected = overlays.to_pixmap(overlays.instance_labels(overlays.crop([mask], box), w.toggles.outlines),
                                  overlays.instance_table(w.toggles.pred_opacity))
    assert np.array_equal(_pixels(panel.canvas._layers["pred"].pixmap()), _pixels(expected))


def test_a_second_panel_of_the_same_masks_reuses_their_label_maps(qtbot, monkeypatch):
    """The Compare tab's new panel draws the same ground truth as the Sample tab's: its label map
    is found, not built again; another layer of the very same array is not confused with it."""
    from test_prefetch_panels import found_prepared

    from masklens.gui.canvas import panel_plan, sample_view
    from masklens.gui.canvas.image_canvas import Canvas
    from masklens.gui.canvas.prepared import PreparedLayers
    from masklens.gui.canvas.sample_view import LayerToggles, build_layers

    built = []
    for module, name in ((panel_plan, "layer_labels"), (sample_view, "instance_labels")):  # where drawing calls them
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _o=original, _n=name, **k: built.append(_n) or _o(*a, **k))
    gt = np.zeros((40, 60), bool)
    gt[5:20, 5:30] = True
    found = found_prepared(monkeypatch)
    shared, tg = PreparedLayers(), LayerToggles()
    first, second, alone = Canvas(), Canvas(), Canvas()
    for c in (first, second, alone):
        qtbot.addWidget(c)
    build_layers(first, [gt], [gt], tg, prepared=shared)  # the prediction is the ground truth's array
    assert sorted(built) == ["instance_labels", "layer_labels"]
    build_layers(second, [gt], [gt], tg, prepared=shared)
    assert sorted(built) == ["instance_labels", "layer_labels"] and len(found) == 2
    assert second.label_memo["gt"][2] is first.label_memo["gt"][2]
    assert second.label_memo["pred"][2] is first.label_memo["pred"][2]
    assert not np.array_equal(second.label_memo["gt"][2], second.label_memo["pred"][2])
    build_layers(alone, [gt], [gt], tg)  # no shared store: built again
    assert len(built) == 4


def test_prepared_layers_hold_no_masks_and_stay_within_their_budget():
    import gc

    from masklens.gui.canvas.prepared import Prepared, PreparedLayers

    layers = PreparedLayers(budget=3 * 100 * 100)
    masks = [np.zeros((100, 100), bool) for _ in range(4)]
    for i, m in enumerate(masks):
        layers.put("pred", [m], (0, 0, 100, 100), True, Prepared(np.full((100, 100), i, np.uint8)))
    assert layers.get("pred", [masks[0]], (0, 0, 100, 100), True) is None  # the oldest went
    assert layers.get("pred", [masks[3]], (0, 0, 100, 100), True).labels[0, 0] == 3
    assert layers.get("gt", [masks[3]], (0, 0, 100, 100), True) is None  # another layer
    kept = masks[2]
    del masks
    gc.collect()
    assert layers.get("pred", [kept], (0, 0, 100, 100), True) is not None
    new = np.zeros((100, 100), bool)  # a new array, maybe at a freed one's address: never a hit
    assert layers.get("pred", [new], (0, 0, 100, 100), True) is None


def test_three_results_of_a_hundred_photo_sized_masks_are_decoded_once(window, toy, qtbot, monkeypatch):
    """The Compare tab draws every live result; the decoded-mask cache holds three results of 100
    masks on an 1800×1200 photograph, so redrawing them decodes nothing again (with the former
    256 MiB budget every redraw decoded ~100 masks on the GUI thread)."""
    from masklens.core.masks import Mask
    from masklens.core.models import registry
    from masklens.core.models.base import BackendInfo, Segmenter, SegmentResult

    class Hundred(Segmenter):
        info = BackendInfo("hundred", "100 discs", None, 0.0, needs_weights=False)

        def segment(self, image, request):
            rng = np.random.default_rng(len(request.text))
            masks = []
            for _ in range(100):
                disc = np.zeros(image.shape[:2], np.uint8)
                cv2.circle(disc, (int(rng.integers(0, 1800)), int(rng.integers(0, 1200))), 600, 1, -1)
                masks.append(Mask.from_array(disc))
            return SegmentResult(masks=masks, scores=[0.9] * 100, presence=None, provenance={})

    import cv2

    monkeypatch.setattr(registry, "BACKENDS", registry.BACKENDS.copy())
    registry.register_backend(Hundred.info, lambda **_: Hundred())
    cv2.imwrite(str(Path(toy["ann"]).parent / "img0.png"), np.full((1200, 1800, 3), 90, np.uint8))
    w = window
    assert w.commands.open_benchmark("toy", ["--ann", str(toy["ann"]), "--pred", str(toy["pred"])])
    qtbot.waitUntil(lambda: bool(w.state.readouts), timeout=10000)
    from masklens.core.schema import Role
    from masklens.gui.prompts.prompt_bar import PromptRequest

    for k, text in enumerate(("a", "bb", "ccc")):  # registered after the prompt bar was built: run as it would
        assert w.commands.run_prompt(PromptRequest(text, Role.POSITIVE, None, None, "hundred"))
        qtbot.waitUntil(lambda k=k: len(w.state.live) == k + 1 and not w.jobs.busy, timeout=60000)
    assert w.tabs.currentWidget() is w.compare_view
    from masklens.gui.canvas.image_cache import ByteLRU

    computed: list[object] = []  # the values the caches had to compute (ByteLRU.get's make, spied)
    get = ByteLRU.get
    monkeypatch.setattr(ByteLRU, "get", lambda self, key, make: get(self, key, lambda: computed.append(key) or make()))
    w.renderer.render()
    w.renderer.render()
    assert computed == []  # drawn again from what was decoded once
