"""The Qt-free edit session: brush, eraser, polygon, fill holes, proposals, undo/redo by patches."""

from __future__ import annotations

import numpy as np
import pytest

from masklens.gui.correct.session import EditSession, mask_box


def disk(h: int, w: int, cx: float, cy: float, r: float) -> np.ndarray:
    yy, xx = np.mgrid[:h, :w]
    return (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r


def test_brush_stroke_is_one_undo_step_and_paints_a_round_capped_line():
    s = EditSession(np.zeros((100, 120), bool), sample_id="s", gt_key="target", instance=0)
    s.begin_stroke(10, 50, 4)
    s.stroke_to(40, 50)
    s.stroke_to(80, 50)
    box = s.end_stroke()
    assert box is not None and box[0] <= 6 and box[2] >= 85
    assert s.mask[50, 10:81].all() and s.mask[46:55, 45].all()  # the line at its width
    assert not s.mask[40, 45] and not s.mask[50, 90]
    assert len(s.undo_stack) == 1  # three segments, one step
    assert s.undo() == box and not s.mask.any()
    assert s.redo() == box and s.mask[50, 60]


def test_eraser_only_clears_and_its_patch_is_the_changed_box_only():
    base = disk(2048, 2048, 1000, 1000, 300)
    s = EditSession(base)
    s.begin_stroke(1000, 1000, 10, erase=True)
    s.stroke_to(1010, 1000)
    s.end_stroke()
    assert not s.mask[1000, 1005] and s.mask[1000, 1100]
    patch = s.undo_stack[-1]
    assert patch.nbytes < 2 * 40 * 40  # a few hundred pixels, not 4 Mpx
    assert s.area < int(base.sum())
    s.undo()
    assert np.array_equal(s.mask, base) and not s.changed


def test_a_stroke_that_changes_nothing_leaves_no_undo_step():
    s = EditSession(np.ones((20, 20), bool))
    s.begin_stroke(5, 5, 3)
    s.stroke_to(10, 10)
    assert s.end_stroke() is None and s.undo_stack == []


def test_polygon_fills_and_erases_inside_its_outline():
    s = EditSession(np.zeros((50, 50), bool))
    s.polygon([(10, 10), (40, 10), (40, 40), (10, 40)])
    assert s.mask[25, 25] and s.mask[11, 11] and not s.mask[5, 25] and not s.mask[45, 45]
    s.polygon([(20, 20), (30, 20), (30, 30)], erase=True)
    assert not s.mask[22, 28] and s.mask[35, 15]
    assert s.polygon([(1, 1), (2, 2)]) is None  # two points close nothing


def test_fill_holes_fills_enclosed_background_but_not_open_bays():
    ring = disk(60, 60, 30, 30, 20) & ~disk(60, 60, 30, 30, 8)
    m = ring.copy()
    m[0:5, 0:20] = True
    m[0:3, 5:8] = False  # notch open to the border: not a hole
    s = EditSession(m)
    s.fill_holes()
    assert s.mask[30, 30] and not s.mask[1, 6]
    assert np.array_equal(s.mask, m | disk(60, 60, 30, 30, 8))  # exactly the enclosed hole
    assert s.fill_holes() is None  # no hole left: no step


@pytest.mark.parametrize("mode, expect", [("add", 3), ("subtract", 1), ("replace", 2)])
def test_proposals_add_subtract_replace(mode, expect):
    cur = np.zeros((10, 30), bool)
    cur[:, 0:20] = True  # columns 0..19
    prop = np.zeros((10, 30), bool)
    prop[:, 10:30] = True  # columns 10..29
    s = EditSession(cur)
    s.combine(prop, mode)
    cols = {1: range(0, 10), 2: range(10, 30), 3: range(0, 30)}[expect]
    assert np.array_equal(np.flatnonzero(s.mask.any(axis=0)), np.array(list(cols)))
    s.undo()
    assert np.array_equal(s.mask, cur)
    with pytest.raises(ValueError):
        s.combine(prop[:5], mode)


def test_new_stroke_after_undo_drops_the_redo_branch_and_accept_gives_a_mask():
    s = EditSession(np.zeros((40, 40), bool), instance=None)
    s.polygon([(5, 5), (20, 5), (20, 20)])
    s.undo()
    assert s.redo_stack
    s.begin_stroke(30, 30, 2)
    s.end_stroke()
    assert not s.redo_stack and s.redo() is None
    m = s.to_mask()
    assert m.shape == (40, 40) and m.area == s.area > 0
    assert mask_box(m.to_array().astype(bool)) == mask_box(s.mask)


def test_clear_deletes_everything_as_one_step():
    s = EditSession(disk(30, 30, 15, 15, 6))
    s.clear()
    assert not s.mask.any() and len(s.undo_stack) == 1


def test_the_session_is_qt_free():
    """The edit session imports no Qt of its own (only what the ``masklens.gui`` package itself
    loads, its PySide6 workaround; a fresh interpreter)."""
    import subprocess
    import sys

    code = ("import sys, masklens.gui; before = set(sys.modules); import masklens.gui.correct.session; "
            "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] in ('PySide6', 'shiboken6')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_operation_log_names_each_steps_tool_and_follows_undo_and_redo():
    s = EditSession(disk(60, 60, 30, 30, 15))
    s.begin_stroke(5, 5, 3)
    s.end_stroke()
    s.begin_stroke(30, 30, 2, erase=True)  # a hole in the disk
    s.end_stroke()
    s.fill_holes()
    s.polygon([(40, 40), (55, 40), (55, 55)])
    prop = np.zeros((60, 60), bool)
    prop[0:4, 50:58] = True
    s.combine(prop, "add")
    assert s.operations == ["brush", "eraser", "fill", "polygon", "model"]
    s.begin_stroke(8, 50, 3)
    s.end_stroke()
    assert s.tools == ["brush", "eraser", "fill", "polygon", "model"]  # each once, by first use
    s.undo()
    s.undo()
    assert s.operations == ["brush", "eraser", "fill", "polygon"]  # an undone step made nothing
    s.redo()
    assert s.operations[-1] == "model"
    s.clear()
    assert s.tools[-1] == "clear"
    assert EditSession(np.zeros((4, 4), bool)).tools == []
