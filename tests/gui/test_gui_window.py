"""The real window, driven offscreen: select samples, typed prompts of every role, sliders,
cancel, malformed input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import toykind
from PySide6.QtCore import Qt

from masklens.core.schema import Role
from masklens.core.scoring.contract import Scorer
from masklens.core.scoring.readout import generic_readout


def column(window, name):
    m = window.browser.model
    col = m.columns.index(name) + m.FIXED_COLUMNS
    return [m.value(r, col) for r in range(m.rowCount())]


def run_typed(window, qtbot, text, role, level=None, model="toy-colour"):
    n = len(window.state.live)
    pb = window.prompt_bar
    pb.set_role(role, level)
    pb.set_text(text)
    assert pb.select_model(model)
    qtbot.mouseClick(pb.run, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(window.state.live) == n + 1 and not window.jobs.busy, timeout=10000)
    return window.state.live[-1]


def test_select_sample_updates_view_readout_and_status(toy_window, qtbot):
    w = toy_window
    w.browser.table.selectRow(3)
    assert w.state.index == 3 and w.state.sample.id == "s3"
    assert w.readout_panel.value_of("Toy · toy_pred.json", "id") == "s3"
    assert "s3" in w.status.sample.text()
    # five prompts → five panels, each with the image, its ground truth and its prediction
    assert [p.title.text().split(":")[0] for p in w.sample_view.panels] == [
        "positive", "negative", "hypernym p1", "modal", "amodal"]
    pos = w.sample_view.panels[0].canvas
    qtbot.waitUntil(lambda: w.sample_view.drawing_left() == 0)  # a first visit: layers a turn later
    assert {"gt", "pred"} <= set(pos.layer_names())
    assert pos.label_texts() == ["0.65"]  # s3's positive prediction has score 0.95 - 0.3


def test_typed_prompt_of_each_role_scored_against_the_implied_gt(toy_window, qtbot):
    w = toy_window
    w.state.set_index(5)  # positive prediction score 0.45 < t: the benchmark prompt misses
    sample = w.state.sample
    assert w.state.readout()["positive"]["hit"] is False
    expect = {"positive": ("target", 1.0), "negative": ("target", 0.0), "hypernym": ("G", 1.0),
              "modal": ("target", 1.0), "amodal": ("amodal", 400 / 784)}
    texts = {"positive": "red square", "negative": "blue square", "hypernym": "shape",
             "modal": "red square", "amodal": "red square"}
    for role, (gt, iou) in expect.items():
        r = run_typed(w, qtbot, texts[role], role, 1 if role == "hypernym" else None)
        assert r.prompt.role == Role(role) and r.prompt.gt == gt
        assert r.generic["iou"] == pytest.approx(iou)
        # the generic readout is what core.readout computes for this prediction
        assert r.generic == generic_readout(sample, r.prompt, r.prediction, 0.5)
        # the benchmark readout: the typed prompt replaced the benchmark prompt of its role
        key = "hypernym1" if role == "hypernym" else role
        assert r.benchmark[key]["best_iou"] == pytest.approx(iou)
    # the typed positive prompt (score 0.9) turns the sample's miss into a hit
    first = w.state.live[0]
    assert first.benchmark["positive"]["hit"] is True
    assert w.state.readout()["positive"]["hit"] is False  # the benchmark's own readout is unchanged
    # every result is a layer; the readout panel shows both readouts
    assert w.live_list.list.count() == 5
    assert w.readout_panel.value_of(f"typed #{first.id} {first.label}", "generic", "iou") == "1.000"
    w.tabs.setCurrentIndex(1)  # compare side by side
    assert len(w.compare_view.panels) == 5


def test_same_prompt_on_two_models_compared_side_by_side(toy_window, qtbot):
    w = toy_window
    a = run_typed(w, qtbot, "red square", "positive", model="toy-colour")
    b = run_typed(w, qtbot, "red square", "positive", model="demo")
    assert (a.model, b.model) == ("toy-colour", "demo")
    w.tabs.setCurrentIndex(1)
    titles = [p.title.text() for p in w.compare_view.panels]
    assert len(titles) == 2 and "toy-colour" in titles[0] and "demo" in titles[1]
    # unticking a layer removes it from the comparison
    w.live_list.list.item(0).setCheckState(Qt.CheckState.Unchecked)
    assert len(w.compare_view.panels) == 1
    assert [r.shown for r in w.state.live] == [False, True]  # recorded by the state


def test_sliders_rederive_browser_columns_from_cached_overlaps(toy_window, qtbot, monkeypatch):
    w = toy_window
    scorer = w.state.scorers["toy_pred.json"]
    assert column(w, "positive.hit") == [True] * 5 + [False]  # scores 0.95 … 0.45 vs t = 0.5

    def touched(*_a, **_k):
        raise AssertionError("a slider must not recompute overlaps")

    monkeypatch.setattr(toykind.KIND, "sample_overlaps", touched)
    w.readout_panel.sliders.set_value("score_threshold", 0.8)
    assert w.state.params["score_threshold"] == pytest.approx(0.8)
    assert column(w, "positive.hit") == [True, True, False, False, False, False]
    assert column(w, "positive.n_kept") == [1, 1, 0, 0, 0, 0]
    assert column(w, "negative.n_kept") == [0] * 6  # negative score 0.6 < 0.8
    # τ: the positive boxes match exactly (IoU 1.0); τ = 1.0 still aligned (inclusive)
    w.readout_panel.sliders.set_value("iou_threshold", 1.0)
    assert column(w, "positive.hit") == [True, True, False, False, False, False]
    # what the browser shows is what the scorer says for these params
    expect = Scorer.readouts(scorer, {"score_threshold": 0.8, "iou_threshold": 1.0})
    assert [r["positive"]["hit"] for r in expect] == column(w, "positive.hit")
    # the canvas follows t: sample 0 keeps its positive instance, sample 3 loses it
    w.state.set_index(3)
    assert "pred" not in w.sample_view.panels[0].canvas.layer_names()


def test_filters_and_next_failure(toy_window, qtbot):
    w = toy_window
    assert w.browser.set_expression("positive.best_iou >= 1 and positive.n_kept < 1")
    assert w.browser.proxy.rowCount() == 0  # best_iou is 0 when nothing is kept
    assert w.browser.set_expression("negative.n_kept == 1 and group == B")
    assert w.browser.proxy.rowCount() == 3  # s1, s3, s5
    assert w.browser.set_expression("positive.best_iou < 0.5")  # the positive prompt's failures
    w.readout_panel.sliders.set_value("score_threshold", 0.6)  # now s4 (0.55) and s5 (0.45) fail
    # two match; the sample shown (s0) stays listed, marked as outside the filter, until one moves
    assert w.browser.count.text() == "2 / 6" and w.browser.current_outside()
    assert w.browser.proxy.rowCount() == 3
    w.state.set_index(0)
    qtbot.keyClick(w, Qt.Key.Key_F3)
    assert w.state.index == 4
    assert w.commands.next_match() and w.state.index == 5
    assert not w.commands.next_match()  # no further failure: a message, not a jump
    assert "no further" in w.message_bar.text
    # a bad expression is reported and not applied
    assert not w.browser.set_expression("nonsense_column > 1")
    assert "no column" in w.message_bar.text and w.browser.proxy.rowCount() == 2
    # search box
    w.browser.expression.clear()
    w.browser.presets.setCurrentIndex(0)
    w.browser.search.setText("s2")
    assert w.browser.proxy.rowCount() == 1
    w.browser.search.clear()
    # "unreviewed" preset exists
    assert "unreviewed" in [w.browser.presets.itemText(i) for i in range(w.browser.presets.count())]


def test_keyboard_next_previous(toy_window, qtbot):
    w = toy_window
    w.state.set_index(0)
    w.activateWindow()
    w.nav_actions["next"].trigger()
    w.nav_actions["next"].trigger()
    assert w.state.index == 2
    w.nav_actions["previous"].trigger()
    assert w.state.index == 1
    assert w.browser.table.currentIndex().row() == 1


def test_error_view_and_layer_toggles(toy_window):
    w = toy_window
    canvas = w.sample_view.panels[1].canvas  # negative: blue box vs the red target
    w.view_toolbar.actions_by_name["error"].setChecked(True)
    assert canvas.layer_names() == ["error"]
    w.view_toolbar.actions_by_name["error"].setChecked(False)
    w.view_toolbar.actions_by_name["gt"].setChecked(False)
    assert "gt" not in canvas.layer_names() and "pred" in canvas.layer_names()
    w.view_toolbar.actions_by_name["scores"].setChecked(False)
    assert canvas.label_texts() == []


def test_cancel_whole_benchmark_scoring(window, toy, qtbot, tmp_path, monkeypatch):
    files = toykind.write_toy(tmp_path / "big", n=150)
    monkeypatch.setattr(toykind.KIND, "delay", 0.02)
    assert window.commands.open_benchmark("toy", ["--ann", str(files["ann"]), "--pred", str(files["pred"])])
    qtbot.waitUntil(lambda: window.status.progress.value() > 5, timeout=10000)
    assert window.status.cancel.isVisible()
    qtbot.mouseClick(window.status.cancel, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.jobs.busy, timeout=10000)
    assert window.state.benchmark is not None and len(window.state.benchmark.samples) == 150
    assert window.state.prediction_sets == {}  # nothing half-scored was attached
    assert "cancelled" in window.message_bar.text
    assert window.sample_view.panels  # the window still shows the first sample


def test_cancel_running_prompt(toy_window, qtbot, monkeypatch):
    w = toy_window
    monkeypatch.setattr(toykind.SLOW, "delay", 0.5)
    w.prompt_bar.set_text("red square")
    w.prompt_bar.select_model("toy-slow")
    w.prompt_bar.request_run()
    assert w.jobs.busy and w.prompt_bar.cancel.isEnabled()
    qtbot.mouseClick(w.prompt_bar.cancel, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=10000)
    assert w.state.live == [] and "cancelled" in w.message_bar.text


@pytest.mark.parametrize("content", ["{not json", json.dumps({"samples": [{"id": "a", "image": "x.png"}]})])
def test_malformed_benchmark_shows_the_error(window, qtbot, tmp_path, content):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    window.commands.open_benchmark("toy", ["--ann", str(bad)])
    qtbot.waitUntil(lambda: window.message_bar.level == "error", timeout=10000)
    text = window.message_bar.text
    assert str(bad) in text
    assert ("not valid JSON" in text) or ("samples[0]" in text and "target" in text)
    assert "Traceback" not in text and window.state.benchmark is None and window.isVisible()


def test_missing_argument_and_missing_image_are_clear(window, toy, qtbot, tmp_path):
    assert not window.commands.open_benchmark("toy", [])
    assert "--ann" in window.message_bar.text
    assert window.commands.open_benchmark("toy", ["--ann", str(toy["ann"]), "--images", str(tmp_path / "nowhere")])
    qtbot.waitUntil(lambda: window.state.benchmark is not None, timeout=10000)
    assert window.sample_view.panels  # shown on a placeholder, and said so
    assert "image file not found" in window.message_bar.text and "checkerboard" in window.message_bar.text
    window.prompt_bar.set_text("red square")
    window.prompt_bar.select_model("toy-colour")
    window.prompt_bar.request_run()
    assert "image file not found" in window.message_bar.text


def test_lazy_loading_of_a_large_benchmark(window, qtbot, tmp_path, computed):
    files = toykind.write_toy(tmp_path / "many", n=2000, images=False, predictions=False)
    window.commands.open_benchmark("toy", ["--ann", str(files["ann"])])
    qtbot.waitUntil(lambda: window.state.benchmark is not None, timeout=20000)
    assert window.browser.model.rowCount() == 2000
    qtbot.wait(60)  # the neighbours' images are queued one short timer after the sample is drawn
    assert window.renderer.prefetcher.wait_idle(20)
    # only the first sample's image was decoded, and its one neighbour's (off the GUI thread)
    assert computed(window.store.images) == 2
    window.state.set_index(1500)
    assert computed(window.store.images) == 3
    qtbot.wait(60)
    assert window.renderer.prefetcher.wait_idle(20)
    assert computed(window.store.images) == 5  # samples 1501 and 1499 prefetched


def test_masks_are_decoded_once_per_sample_switch(toy_window, qtbot, computed):
    w = toy_window
    w.renderer.prefetcher.wait_idle(10)
    w.renderer.prefetcher.close()  # the neighbours' masks are not decoded ahead: every load counted is this test's
    w.store.masks.clear()
    w.renderer.render()  # the current sample's masks decoded again
    loads = computed(w.store.masks)

    def switch(index: int) -> None:  # a first visit draws its masks one event-loop turn later
        w.state.set_index(index)
        qtbot.waitUntil(lambda: w.sample_view.drawing_left() == 0)

    switch(1)
    after_first = computed(w.store.masks)
    switch(0)
    switch(1)
    assert computed(w.store.masks) == after_first > loads  # second visit: all from the LRU


def test_demo_model_on_the_toy_image(toy_window, qtbot):
    r = run_typed(toy_window, qtbot, "red square", "positive", model="demo")
    assert r.generic["gt"] == "target"
    img = toy_window.store.image(toy_window.state.sample.images["img"])
    assert img.shape == (64, 64, 3) and np.any(img)
    assert r.prediction.provenance.get("model", "demo") == "demo" or r.model == "demo"


def test_typed_prompt_readouts_follow_the_sliders_from_cached_overlaps(toy_window, qtbot, monkeypatch):
    w = toy_window
    r = run_typed(w, qtbot, "red square", "positive")  # one instance, score 0.9, IoU 1
    assert r.benchmark["positive"]["hit"] is True and r.generic["n_accepted"] == 1

    def touched(*_a, **_k):
        raise AssertionError("a slider must not recompute overlaps")

    monkeypatch.setattr(toykind.KIND, "sample_overlaps", touched)
    w.readout_panel.sliders.set_value("score_threshold", 0.95)
    assert r.benchmark["positive"] == {"best_iou": 0.0, "hit": False, "n_kept": 0}
    assert r.generic["n_accepted"] == 0 and r.generic["iou"] == 0.0
    assert w.readout_panel.value_of(f"typed #{r.id} {r.label}", "generic", "iou") == "0.000"


def test_a_repeated_typed_prompt_comes_from_the_prediction_cache(toy_window, qtbot, monkeypatch):
    """Re-asking a prompt (e.g. after re-opening the sample) costs no model call."""
    calls = []
    seg_cls = type(toy_window.commands.models.get("demo"))
    original = seg_cls.segment

    def counting(self, image, request):
        calls.append(request.text)
        return original(self, image, request)

    monkeypatch.setattr(seg_cls, "segment", counting)
    first = run_typed(toy_window, qtbot, "red square", "positive", model="demo")
    second = run_typed(toy_window, qtbot, "red square", "positive", model="demo")
    assert calls == ["red square"]
    assert first.extra["from_cache"] is False and second.extra["from_cache"] is True
    assert second.generic == first.generic


def test_a_typed_prompt_result_is_shown_in_the_compare_tab(toy_window, qtbot):
    w = toy_window
    w.tabs.setCurrentIndex(0)
    run_typed(w, qtbot, "red square", "positive")
    assert w.tabs.currentWidget() is w.compare_view
