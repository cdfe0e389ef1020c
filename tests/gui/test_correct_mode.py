"""Correct mode on the real window: keys and mouse as a user (pytest-qt), on the CAFE demo."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt, QTimer
from PySide6.QtWidgets import QApplication
from test_gui_defects import canvas, focus, open_demo

pytest.importorskip("masklens.core.kinds.demo")


@pytest.fixture
def demo(window, qtbot, no_internal_errors):
    open_demo(window, qtbot, "cafe")
    return window


def at(c, x: float, y: float) -> QPoint:
    """Viewport position of image pixel (x, y)."""
    return c.mapFromScene(QPointF(x, y))


def key(w, qtbot, k, mods=Qt.KeyboardModifier.NoModifier):
    c = canvas(w)
    focus(w, qtbot, c)
    qtbot.keyClick(c, k, mods)


def click(qtbot, c, x, y, button=Qt.MouseButton.LeftButton):
    qtbot.mouseClick(c.viewport(), button, pos=at(c, x, y))


def drag(qtbot, c, pts, button=Qt.MouseButton.LeftButton):
    vp = c.viewport()
    qtbot.mousePress(vp, button, pos=at(c, *pts[0]))
    for p in pts[1:]:
        qtbot.mouseMove(vp, at(c, *p))
    qtbot.mouseRelease(vp, button, pos=at(c, *pts[-1]))


def answer(qtbot, button: str) -> list[str]:
    """Click ``button`` on the unaccepted-edit question as soon as it shows (it is modal, so
    this waits from inside its event loop); the question's words are returned as it came."""
    asked: list[str] = []

    def click() -> None:
        box = QApplication.activeModalWidget()
        if box is None or box.objectName() != "unaccepted-edit":
            QTimer.singleShot(10, click)  # not shown yet: look again on a later turn
            return
        asked.append(f"{box.text()} {box.informativeText()}")
        qtbot.mouseClick(next(b for b in box.buttons() if b.text() == button), Qt.MouseButton.LeftButton)

    QTimer.singleShot(0, click)
    return asked


def instance_centre(w):
    """A pixel inside the first panel's ground-truth instance (image coordinates)."""
    spec = w.sample_view.specs[0]
    gt = w.state.sample.gts[spec.gts[0]]
    m = gt.masks[0].to_array().astype(bool)
    ys, xs = np.nonzero(m)
    i = int(np.argmin((xs - xs.mean()) ** 2 + (ys - ys.mean()) ** 2))
    iw, ih = canvas(w)._size
    return xs[i] * iw / gt.width + 0.5, ys[i] * ih / gt.height + 0.5, gt, m


def enter_correct_and_select(w, qtbot):
    key(w, qtbot, Qt.Key.Key_C)
    assert w.visual_tool.tool == "correct" and canvas(w).tool == "correct"
    key(w, qtbot, Qt.Key.Key_V)
    x, y, gt, m = instance_centre(w)
    click(qtbot, canvas(w), x, y)
    s = w.correction.session
    assert s is not None and s.instance == 0 and s.gt_key == w.sample_view.specs[0].gts[0]
    assert s.shape == (gt.height, gt.width) and np.array_equal(s.mask, m)  # full resolution
    return x, y, m


def test_brush_undo_redo_and_brush_size_by_keys(demo, qtbot):
    w = demo
    x, y, m = enter_correct_and_select(w, qtbot)
    s = w.correction.session
    r0 = w.correction.radius
    key(w, qtbot, Qt.Key.Key_BracketRight)
    assert w.correction.radius == pytest.approx(r0 * 1.25)
    key(w, qtbot, Qt.Key.Key_BracketLeft)
    key(w, qtbot, Qt.Key.Key_BracketLeft)
    assert w.correction.radius < r0
    key(w, qtbot, Qt.Key.Key_D)
    assert w.correction.subtool == "brush"
    h, wd = m.shape
    drag(qtbot, canvas(w), [(5, 5), (15, 8), (30, 10)])  # a stroke in a corner, off the object
    outline = w.correction._items["brush"]  # the brush's size follows the mouse
    assert outline.isVisible() and outline.rect().center().x() == pytest.approx(30, abs=1.5)
    painted = s.area
    assert painted > int(m.sum()) and s.mask[5:8, 5:8].any() and len(s.undo_stack) == 1
    overlay = w.correction._items["edit"]
    assert overlay.labels[6, 6] in (1, 2) and overlay.labels[h // 2, 0] == 0  # only the stroke's box composed
    verdicts = len(w.state.review_store.history(_key(w)))
    key(w, qtbot, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert np.array_equal(s.mask, m) and overlay.labels[6, 6] == 0
    assert len(w.state.review_store.history(_key(w))) == verdicts  # Ctrl+Z undid the stroke, not a verdict
    key(w, qtbot, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert s.area == painted
    key(w, qtbot, Qt.Key.Key_X)  # eraser through the object's middle
    drag(qtbot, canvas(w), [(x - 3, y), (x + 3, y)])
    assert s.area < painted and len(s.undo_stack) == 2
    removed = m & ~s.mask
    assert removed.any() and (overlay.labels[removed] == 3).all()  # erased pixels drawn as removed


def _key(w):
    from masklens.core.review.locations import benchmark_key

    return benchmark_key(w.state.benchmark)


def test_polygon_fill_holes_and_accept_emit_the_corrected_mask(demo, qtbot):
    w = demo
    x, y, m = enter_correct_and_select(w, qtbot)
    s = w.correction.session
    key(w, qtbot, Qt.Key.Key_X)
    w.correction.radius = 2.0
    drag(qtbot, canvas(w), [(x, y), (x + 1, y)])  # a hole inside the object
    holed = s.area
    assert holed < int(m.sum())
    key(w, qtbot, Qt.Key.Key_F, Qt.KeyboardModifier.ShiftModifier)  # Fill holes
    assert np.array_equal(s.mask, m)
    key(w, qtbot, Qt.Key.Key_L)
    for p in [(2, 2), (20, 2), (20, 20), (2, 20)]:
        click(qtbot, canvas(w), *p)
    assert w.correction.polygon and "polygon" in w.correction._items
    key(w, qtbot, Qt.Key.Key_Return)
    iw, ih = canvas(w)._size
    sx, sy = m.shape[1] / iw, m.shape[0] / ih
    assert s.mask[int(10 * sy), int(10 * sx)] and not w.correction.polygon
    with qtbot.waitSignal(w.correction.accepted, timeout=3000) as got:
        key(w, qtbot, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    sid, gt_key, inst, mask, tools = got.args
    assert (sid, gt_key, inst) == (w.state.sample.id, w.sample_view.specs[0].gts[0], 0)
    assert tools == ["eraser", "fill", "polygon"]  # each operation's tool, in the order of first use
    arr = mask.to_array().astype(bool)
    assert arr.shape == m.shape and arr[int(10 * sy), int(10 * sx)] and (arr | m).sum() == arr.sum()
    assert w.correction.session is None and "edit" not in w.correction._items


def test_model_assist_click_proposes_and_add_subtract_replace(demo, qtbot):
    w = demo
    w.prompt_bar.select_model("demo")
    x, y, m = enter_correct_and_select(w, qtbot)
    s = w.correction.session
    key(w, qtbot, Qt.Key.Key_J)
    click(qtbot, canvas(w), x, y)  # a positive click on the object: the demo model answers
    qtbot.waitUntil(lambda: w.correction.proposal is not None and not w.jobs.busy, timeout=20000)
    prop = w.correction.proposal
    assert prop.shape == m.shape and prop[m].mean() > 0.5  # it found the clicked object
    key(w, qtbot, Qt.Key.Key_S, Qt.KeyboardModifier.ShiftModifier)  # subtract it
    assert not (s.mask & prop).any() and w.correction.proposal is None
    click(qtbot, canvas(w), x, y)
    qtbot.waitUntil(lambda: w.correction.proposal is not None and not w.jobs.busy, timeout=20000)
    verdicts = len(w.state.review_store.history(_key(w)))
    key(w, qtbot, Qt.Key.Key_A, Qt.KeyboardModifier.ShiftModifier)  # add it back
    assert (s.mask | prop).sum() == s.mask.sum()
    assert len(w.state.review_store.history(_key(w))) == verdicts  # Shift+A is not A (Prompt ambiguous)
    drag(qtbot, canvas(w), [(x - 30, y - 30), (x + 30, y + 30)])  # a box
    qtbot.waitUntil(lambda: w.correction.proposal is not None and not w.jobs.busy, timeout=20000)
    box_prop = w.correction.proposal
    key(w, qtbot, Qt.Key.Key_R, Qt.KeyboardModifier.ShiftModifier)
    assert np.array_equal(s.mask, box_prop)
    assert w.state.live == []  # proposals are not typed-prompt layers
    key(w, qtbot, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert (s.mask | prop).sum() == s.mask.sum()  # back before the replacement


def test_delete_and_new_instance(demo, qtbot):
    w = demo
    enter_correct_and_select(w, qtbot)
    with qtbot.waitSignal(w.correction.accepted, timeout=3000) as got:
        key(w, qtbot, Qt.Key.Key_Delete)
    assert got.args[2] == 0 and got.args[3] is None
    key(w, qtbot, Qt.Key.Key_N, Qt.KeyboardModifier.ShiftModifier)
    s = w.correction.session
    assert s is not None and s.instance is None and s.area == 0
    key(w, qtbot, Qt.Key.Key_D)
    drag(qtbot, canvas(w), [(10, 10), (40, 40)])
    with qtbot.waitSignal(w.correction.accepted, timeout=3000) as got:
        key(w, qtbot, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert got.args[2] is None and got.args[3].area == s.area > 0


def test_moving_to_another_sample_asks_and_discard_drops_the_edit_and_no_click_without_instance(demo, qtbot):
    w = demo
    key(w, qtbot, Qt.Key.Key_C)
    key(w, qtbot, Qt.Key.Key_D)
    drag(qtbot, canvas(w), [(10, 10), (40, 40)])
    assert w.correction.session is None and "select an instance first" in w.message_bar.text
    x, y, _ = enter_correct_and_select(w, qtbot)
    key(w, qtbot, Qt.Key.Key_X)
    drag(qtbot, canvas(w), [(x - 2, y), (x + 2, y)])
    assert w.correction.session.changed
    asked = answer(qtbot, "Discard edit")  # the switch asks first (tests/gui/test_edit_never_lost.py)
    w.commands.step_sample(1)
    assert asked and w.correction.session is None and "edit discarded" in w.message_bar.text
    assert all(i.scene() is None for i in w.correction._items.values())


def test_edits_happen_at_the_masks_resolution_when_it_differs_from_the_image(demo, qtbot):
    """A ground truth stored at twice the image's size: the edit is at 2× (not the display's)."""
    import cv2

    from masklens.core.masks import Mask

    w = demo
    spec = w.sample_view.specs[0]
    gt = w.state.sample.gts[spec.gts[0]]
    small = gt.masks[0].to_array().astype(np.uint8)
    big = cv2.resize(small, (gt.width * 2, gt.height * 2), interpolation=cv2.INTER_NEAREST)
    gt.masks[0], gt.height, gt.width = Mask.from_array(big), gt.height * 2, gt.width * 2
    w.renderer.render()
    key(w, qtbot, Qt.Key.Key_C)
    key(w, qtbot, Qt.Key.Key_V)
    ys, xs = np.nonzero(small)
    click(qtbot, canvas(w), xs.mean() + 0.5, ys.mean() + 0.5)
    s = w.correction.session
    assert s is not None and s.shape == big.shape
    key(w, qtbot, Qt.Key.Key_D)
    w.correction.radius = 4.0  # mask pixels
    drag(qtbot, canvas(w), [(10, 40), (30, 40)])
    painted = np.nonzero(s.mask & ~big.astype(bool))
    assert painted[0].size and abs(painted[0].mean() - 80) <= 2  # row 40 of the image = row 80 of the mask
    assert painted[1].min() >= 20 - 5 and painted[1].max() <= 60 + 5
    assert painted[0].max() - painted[0].min() <= 2 * 4 + 2  # the brush's radius in mask pixels


def test_a_model_that_proposes_nothing_says_so(demo, qtbot):
    w = demo
    assert w.prompt_bar.select_model("toy-colour")  # answers only "red"/"blue"/"shape" texts: nothing here
    x, y, _ = enter_correct_and_select(w, qtbot)
    key(w, qtbot, Qt.Key.Key_J)
    click(qtbot, canvas(w), x, y)
    qtbot.waitUntil(lambda: "proposed nothing" in w.message_bar.text, timeout=20000)
    assert w.correction.proposal is None and not w.correction.toolbar.commands["add"].isEnabled()
    assert w.correction.session is not None  # the edit stays open
