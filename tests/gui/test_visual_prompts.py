"""Visual prompts: boxes and positive/negative points drawn with the mouse on the canvas
and run on the demo model (no weights); their coordinates reach the typed-prompt list, the
SegmentRequest and the prediction-cache key. Real mouse and key events."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QApplication

demo = pytest.importorskip("masklens.core.kinds.demo")


@pytest.fixture
def cafe(window, qtbot):
    if "cafe" not in demo.demo_kinds():
        pytest.skip("no cafe demo")
    assert window.commands.open_demo("cafe", sync=True)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    window.prompt_bar.select_model("demo")
    qtbot.waitUntil(lambda: window.sample_view.panels[0].canvas.width() > 200, timeout=3000)  # laid out
    return window


def gt_of_first_panel(w):
    """The positive prompt's ground-truth mask (H×W bool) and its box (x0, y0, x1, y1)."""
    spec = w.sample_view.specs[0]
    gt = w.state.sample.gts[spec.gts[0]].union().to_array().astype(bool)
    ys, xs = np.nonzero(gt)
    return gt, (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)


def view_pos(canvas, x, y):
    return canvas.mapFromScene(QPointF(x, y))


def drag_box(qtbot, canvas, box):
    x0, y0, x1, y1 = box
    vp = canvas.viewport()
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, pos=view_pos(canvas, x0, y0))
    qtbot.mouseMove(vp, view_pos(canvas, (x0 + x1) / 2, (y0 + y1) / 2))
    qtbot.mouseMove(vp, view_pos(canvas, x1, y1))
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=view_pos(canvas, x1, y1))


def run_drawn(w, qtbot, canvas):
    n = len(w.state.live)
    qtbot.keyClick(canvas, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(w.state.live) > n and not w.jobs.busy, timeout=30000)
    return w.state.live[-1]


def union_of_accepted(result, t, shape):
    masks = [i.mask.to_array().astype(bool) for i in result.prediction.instances if i.score >= t]
    return np.logical_or.reduce(masks) if masks else np.zeros(shape, bool)


def iou(a, b):
    return (a & b).sum() / max(1, (a | b).sum())


def test_box_tool_draws_a_box_and_the_demo_model_answers_it(cafe, qtbot):
    w = cafe
    canvas = w.sample_view.panels[0].canvas
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)  # focus: one-key tools act
    qtbot.keyClick(canvas, Qt.Key.Key_B)
    assert w.visual_tool.tool == "box" and canvas.tool == "box"
    gt, (x0, y0, x1, y1) = gt_of_first_panel(w)
    box = (x0 - 3, y0 - 3, x1 + 3, y1 + 3)
    drag_box(qtbot, canvas, box)
    (kind, drawn), = canvas.marks()
    assert kind == "box" and np.allclose(drawn, box, atol=1.5)
    assert w.visual_tool.summary.text().strip() == "1 box · 0 points"
    assert w.visual_tool.summary.toolTip().startswith(f"drawn on {w.sample_view.specs[0].image}: box [")
    w.prompt_bar.set_text("")  # a box alone: whatever is there
    r = run_drawn(w, qtbot, canvas)
    assert np.allclose(r.prompt.meta["boxes"][0], box, atol=1.5)
    assert r.prompt.text == "" and "box [" in r.label
    assert iou(union_of_accepted(r, w.state.score_threshold, gt.shape), gt) > 0.9
    assert r.extra["from_cache"] is False
    items = [w.live_list.list.item(i).text() for i in range(w.live_list.list.count())]
    assert any("box [" in t for t in items)  # the typed-prompt list shows the coordinates
    # the same drawn prompt again: answered from the prediction cache (its key holds the box) ...
    w.tabs.setCurrentIndex(0)
    r2 = run_drawn(w, qtbot, canvas)
    assert r2.extra["from_cache"] is True
    # ... a different box is a different key
    w.tabs.setCurrentIndex(0)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)  # focus back; a click is no box
    assert len(w.visual_tool.prompt.boxes) == 1
    qtbot.keyClick(canvas, Qt.Key.Key_Escape)  # clear the drawn prompt (and back to Pan)
    assert canvas.marks() == [] and w.visual_tool.tool == "pan"
    qtbot.keyClick(canvas, Qt.Key.Key_B)
    drag_box(qtbot, canvas, (x0 - 6, y0 - 6, x1 + 6, y1 + 6))
    r3 = run_drawn(w, qtbot, canvas)
    assert r3.extra["from_cache"] is False


def test_cache_key_holds_the_drawn_geometry(cafe, qtbot):
    from masklens.core.cache.entries import PredictionKey
    from masklens.core.inference.runner import request_for

    w = cafe
    canvas = w.sample_view.panels[0].canvas
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClick(canvas, Qt.Key.Key_B)
    _, (x0, y0, x1, y1) = gt_of_first_panel(w)
    drag_box(qtbot, canvas, (x0, y0, x1, y1))
    w.prompt_bar.set_text("circle")
    r = run_drawn(w, qtbot, canvas)
    req = request_for(r.prompt)
    assert req.text == "circle" and req.boxes and np.allclose(req.boxes[0], (x0, y0, x1, y1), atol=1.5)
    key = PredictionKey.for_request("demo", "", "img", req)
    assert "_boxes" in key.params
    plain = PredictionKey.for_request("demo", "", "img", request_for(
        type(r.prompt)(**{**r.prompt.__dict__, "meta": {}})))
    assert plain.digest != key.digest


def test_positive_and_negative_points(cafe, qtbot):
    w = cafe
    canvas = w.sample_view.panels[0].canvas
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClick(canvas, Qt.Key.Key_P)
    gt, _ = gt_of_first_panel(w)
    ys, xs = np.nonzero(gt)
    k = len(xs) // 2
    x, y = float(xs[k]) + 0.5, float(ys[k]) + 0.5
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=view_pos(canvas, x, y))
    assert w.visual_tool.prompt.points and w.visual_tool.prompt.points[0][2] == 1
    w.prompt_bar.set_text("")
    r = run_drawn(w, qtbot, canvas)
    assert r.prompt.meta["points"][0][2] == 1 and "+(" in r.label
    assert iou(union_of_accepted(r, w.state.score_threshold, gt.shape), gt) > 0.9
    # a negative (right) click on the same object takes it out
    w.tabs.setCurrentIndex(0)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.RightButton, pos=view_pos(canvas, x, y))
    assert [p[2] for p in w.visual_tool.prompt.points] == [1, 0]
    assert [m[0] for m in canvas.marks()] == ["point", "point"]
    r2 = run_drawn(w, qtbot, canvas)
    assert "−(" in r2.label
    assert not union_of_accepted(r2, w.state.score_threshold, gt.shape).any()


def test_esc_cancels_a_box_being_drawn_and_tool_keys_need_canvas_focus(cafe, qtbot):
    w = cafe
    canvas = w.sample_view.panels[0].canvas
    combo = w.prompt_bar.text
    combo.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is combo, timeout=3000)
    qtbot.keyClick(combo, Qt.Key.Key_B)  # typed into the prompt box, not a tool change
    assert w.visual_tool.tool == "pan"
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClick(canvas, Qt.Key.Key_B)
    assert w.visual_tool.tool == "box"
    vp = canvas.viewport()
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, pos=view_pos(canvas, 5, 5))
    qtbot.mouseMove(vp, view_pos(canvas, 40, 40))
    assert canvas._rubber is not None
    qtbot.keyClick(canvas, Qt.Key.Key_Escape)  # drops the box being dragged, keeps the tool
    assert canvas._rubber is None and w.visual_tool.tool == "box"
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=view_pos(canvas, 40, 40))
    assert not w.visual_tool.prompt and canvas.marks() == []
    # a drawn prompt belongs to its sample: stepping on clears it
    drag_box(qtbot, canvas, (5, 5, 40, 40))
    assert w.visual_tool.prompt
    qtbot.keyClick(canvas, Qt.Key.Key_H)  # Pan: a drag pans again, the drawing stays
    assert w.visual_tool.tool == "pan" and canvas.tool == "pan" and w.visual_tool.prompt
    assert w.visual_tool.tool_actions["pan"].isChecked()
    w.commands.step_sample(1)
    assert not w.visual_tool.prompt and w.sample_view.panels[0].canvas.marks() == []


def test_grounded_sam2_gets_geometry_in_place_of_text(cafe):
    from masklens.core.schema import Role
    from masklens.gui.prompts.prompt_bar import PromptRequest

    w = cafe
    w.visual_tool.add(w.sample_view.specs[0].image, box=(1, 2, 30, 40))
    req = PromptRequest("red circle", Role.POSITIVE, None, None, "grounded-sam2")
    new, meta, note = w.visual_tool.for_run(req, "grounded-sam2")
    assert new.text == "" and meta == {"boxes": [(1.0, 2.0, 30.0, 40.0)]} and "SAM 2" in note
    new, meta, note = w.visual_tool.for_run(req, "sam3")  # SAM 3: text + box exemplars
    assert new.text == "red circle" and meta["boxes"] and note == ""


def test_compare_panel_shows_the_geometry_its_result_was_run_with(cafe, qtbot):
    w = cafe
    canvas = w.sample_view.panels[0].canvas
    image = w.sample_view.specs[0].image
    w.visual_tool.add(image, box=(10, 12, 60, 70))
    w.prompt_bar.set_text("")
    r = run_drawn(w, qtbot, canvas)
    assert w.tabs.currentWidget() is w.compare_view
    (panel,) = w.compare_view.panels
    assert panel.canvas.marks() == [("box", (10.0, 12.0, 60.0, 70.0))]
    w.tabs.setCurrentIndex(0)
    w.visual_tool.clear()  # the drawn prompt goes; the result keeps its own
    w.tabs.setCurrentIndex(1)
    assert w.compare_view.panels[0].canvas.marks() == [("box", (10.0, 12.0, 60.0, 70.0))]
    assert r.prompt.meta["boxes"] == [(10.0, 12.0, 60.0, 70.0)]


def test_a_box_drawn_on_the_counterfactual_runs_on_that_image(window, qtbot):
    if "hallusegbench" not in demo.demo_kinds():
        pytest.skip("no hallusegbench demo")
    w = window
    assert w.commands.open_demo("hallusegbench", sync=True)
    specs = w.sample_view.specs
    other = next(i for i, s in enumerate(specs) if s.image != specs[0].image)
    canvas = w.sample_view.panels[other].canvas
    qtbot.waitUntil(lambda: canvas.width() > 200, timeout=3000)  # laid out: one view pixel ≈ one image pixel
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClick(canvas, Qt.Key.Key_B)
    drag_box(qtbot, canvas, (10, 10, 60, 60))
    assert w.visual_tool.prompt.image == specs[other].image
    # shown on every panel of that image, on no panel of the other
    for spec, panel in zip(specs, w.sample_view.panels, strict=True):
        assert bool(panel.canvas.marks()) == (spec.image == specs[other].image)
    w.prompt_bar.set_text("")
    r = run_drawn(w, qtbot, canvas)
    assert r.prompt.image == specs[other].image
    assert np.allclose(r.prompt.meta["boxes"][0], (10, 10, 60, 60), atol=1.5)


def test_a_points_click_in_the_margin_outside_the_image_adds_no_point(cafe, qtbot):
    w = cafe
    canvas = w.sample_view.panels[0].canvas
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClick(canvas, Qt.Key.Key_P)
    iw, ih = canvas._size
    left = view_pos(canvas, 0, ih / 2)
    assert left.x() > 6  # the panel is wider than the image: a dark margin on its left
    margin = left - QPoint(5, 0)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=margin)
    assert w.visual_tool.prompt.points == []  # not a point clamped to the image's edge
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=view_pos(canvas, iw / 2, ih / 2))
    assert len(w.visual_tool.prompt.points) == 1


def test_the_docs_known_limits_do_not_deny_the_box_and_point_tools():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "gui.md").read_text()
    limits = text.split("## Known limits", 1)[1]
    assert "canvas tool" not in limits and "**Box** (`B`" in text and "**Points** (`P`" in text
