"""Change category… in Correct mode (Shift+C): recorded, undone, applied and scored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from test_correct_mode import drag, enter_correct_and_select, key
from test_gui_defects import canvas, focus, open_demo
from test_review_corrections import bkey, brush_and_accept, masklens, store_of

demo = pytest.importorskip("masklens.core.kinds.demo")

CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


def pcs_with_two_categories(tmp_path):
    """The SA-Co/Gold demo, each annotator file naming a second category ("circle", id 2)."""
    files = demo.demo_files("pcs")
    gts = []
    for f in files["gt"]:
        data = json.loads(Path(f).read_text())
        data["categories"].append({"id": 2, "name": "circle", "supercategory": "shape"})
        gts.append(tmp_path / Path(f).name)
        gts[-1].write_text(json.dumps(data))
    shutil.copy(files["pred"], tmp_path / "pred.json")
    return {"gt": gts, "pred": tmp_path / "pred.json", "images": files["images"]}


def gt_args(gts):
    return [a for g in gts for a in ("--gt", str(g))]


def score(files, gts, out):
    masklens("score", "pcs", *gt_args(gts), "--pred", str(files["pred"]), "--out", str(out))
    return json.loads(out.read_text())


def test_change_category_recorded_undone_applied_and_rescored(window, qtbot, no_internal_errors, tmp_path):
    w = window
    files = pcs_with_two_categories(tmp_path)
    assert w.commands.open_benchmark("pcs", [*gt_args(files["gt"]), "--pred", str(files["pred"]),
                                    "--images", str(files["images"])])
    qtbot.waitUntil(lambda: bool(w.state.readouts) and not w.jobs.busy, timeout=20000)
    w.review_panel.reviewer.setText("ana")
    focus(w, qtbot, canvas(w))
    enter_correct_and_select(w, qtbot)
    gt_key = w.correction.session.gt_key
    gt = w.state.sample.gts[gt_key]
    assert gt.meta["category_ids"][0] == 1
    assert " · category 1 object · " in w.correction.edit_status.text()
    choices = w.correction.category_choices()
    assert choices == [(1, "1 object"), (2, "2 circle")]  # every category of the files, named
    asked = []
    w.correction.ask_category = lambda parent, current, ch: (asked.append((current, ch)), 2)[1]
    assert w.correction.toolbar.commands["category"].isEnabled()
    key(w, qtbot, Qt.Key.Key_C, SHIFT)
    assert asked == [(1, choices)]
    rows = store_of(w).corrections(bkey(w))
    assert [(r.instance, r.category, r.tool) for r in rows] == [(0, 2, "category")]
    assert rows[0].mask == gt.masks[0]  # the mask unchanged
    assert w.correction.session is None and "category change accepted" in w.message_bar.text
    # Ctrl+Z (no edit open) retracts it
    key(w, qtbot, Qt.Key.Key_Z, CTRL)
    assert store_of(w).corrections(bkey(w)) == []
    # cancelled: nothing recorded
    enter_correct_and_select(w, qtbot)
    w.correction.ask_category = lambda parent, current, ch: None
    key(w, qtbot, Qt.Key.Key_C, SHIFT)
    assert store_of(w).corrections(bkey(w)) == []
    # again; `masklens review apply` writes the new category id, the mask untouched
    w.correction.ask_category = lambda parent, current, ch: 2
    key(w, qtbot, Qt.Key.Key_C, SHIFT)
    assert [r.category for r in store_of(w).corrections(bkey(w))] == [2]
    # the corrected ground truth shows it: the instance's label names the new category
    w.corrected_view.action.trigger()
    enter_correct_and_select(w, qtbot)
    assert w.state.sample.gts[gt_key].meta["category_ids"][0] == 2
    assert " · category 2 circle · " in w.correction.edit_status.text()
    w.correction.end()
    out = tmp_path / "applied"
    masklens("review", "apply", "pcs", *gt_args(files["gt"]), "--images", str(files["images"]),
             "--store", str(store_of(w).path), "--out", str(out))
    a = int(gt_key[2:])
    before = json.loads(files["gt"][a].read_text())["annotations"]
    after = json.loads((out / files["gt"][a].name).read_text())["annotations"]
    changed = [(x, y) for x, y in zip(before, after, strict=True) if x != y]
    assert len(changed) == 1 and (changed[0][0]["category_id"], changed[0][1]["category_id"]) == (1, 2)
    assert {**changed[0][0], "category_id": 2} == changed[0][1]
    # cgF1 matches masks, not categories (the category only orders equally good matches), so
    # re-scoring the applied files gives the original numbers
    old = score(files, files["gt"], tmp_path / "old.json")
    new = score(files, [out / p.name for p in files["gt"]], tmp_path / "new.json")
    assert old["summary"] == new["summary"] and old["samples"] == new["samples"]


def test_a_brush_stroke_does_not_look_through_the_benchmark_again(window, qtbot, no_internal_errors, tmp_path,
                                                                  monkeypatch):
    """The categories are found once per benchmark, not on every mouse move of a stroke (a pass
    over every ground truth); another benchmark's are found afresh."""
    from masklens.gui.correct import category

    scans = []
    real = category.benchmark_categories
    monkeypatch.setattr(category, "benchmark_categories", lambda bench: (scans.append(bench), real(bench))[1])
    w = window
    files = pcs_with_two_categories(tmp_path)
    assert w.commands.open_benchmark("pcs", [*gt_args(files["gt"]), "--pred", str(files["pred"])])
    qtbot.waitUntil(lambda: bool(w.state.readouts) and not w.jobs.busy, timeout=20000)
    focus(w, qtbot, canvas(w))
    enter_correct_and_select(w, qtbot)
    assert w.correction.category_choices() == [(1, "1 object"), (2, "2 circle")]
    before = len(scans)
    key(w, qtbot, Qt.Key.Key_D)
    drag(qtbot, canvas(w), [(5, 5), (10, 6), (15, 8), (20, 9), (30, 10)])
    s = w.correction.session
    assert s is not None and len(s.undo_stack) == 1 and s.mask[5:8, 5:8].any()  # the stroke was drawn
    assert w.correction.toolbar.commands["category"].isEnabled()
    assert len(scans) == before
    w.correction.end()
    open_demo(w, qtbot, "pcs")  # the bundled demo's files name one category only
    assert w.correction.category_choices() == [(1, "1 object")]
    enter_correct_and_select(w, qtbot)
    assert not w.correction.toolbar.commands["category"].isEnabled()


def test_change_category_disabled_with_the_reason_on_ovs(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "ovs")
    focus(w, qtbot, canvas(w))
    enter_correct_and_select(w, qtbot)
    act = w.correction.toolbar.commands["category"]
    assert not act.isEnabled() and "in OVS the class is the ground truth" in act.toolTip()
    key(w, qtbot, Qt.Key.Key_C, SHIFT)  # a disabled action: nothing happens, nothing recorded
    assert w.correction.session is not None and store_of(w).corrections(bkey(w)) == []


def test_a_brushed_mask_and_a_category_change_of_one_instance_both_stay(window, qtbot, no_internal_errors,
                                                                        tmp_path):
    """A correction replaces the reviewer's earlier one of the instance: the category change
    after a brush edit keeps the brushed mask, a brush edit after it keeps the category."""
    w = window
    files = pcs_with_two_categories(tmp_path)
    assert w.commands.open_benchmark("pcs", [*gt_args(files["gt"]), "--pred", str(files["pred"])])
    qtbot.waitUntil(lambda: bool(w.state.readouts) and not w.jobs.busy, timeout=20000)
    focus(w, qtbot, canvas(w))
    w.correction.ask_category = lambda parent, current, ch: 2
    brushed = brush_and_accept(w, qtbot)
    enter_correct_and_select(w, qtbot)  # the switch is off: the loaded mask is edited
    key(w, qtbot, Qt.Key.Key_C, SHIFT)
    (c,) = store_of(w).corrections(bkey(w))
    assert (c.mask, c.category, c.tool) == (brushed, 2, "category")
    again = brush_and_accept(w, qtbot)
    (c,) = store_of(w).corrections(bkey(w))
    assert (c.mask, c.category, c.tool) == (again, 2, "brush")


def test_the_category_combo_picks_by_keys_and_cancel_picks_nothing(qtbot):
    """The real dialog: the current category preselected, Down + Enter picks the next one."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QComboBox, QInputDialog

    from masklens.gui.correct.category import ask_category

    choices = [(1, "1 object"), (2, "2 circle"), (7, "7")]

    def answer(keys):
        def go():
            dlg = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QInputDialog) and w.isVisible())
            combo = dlg.findChild(QComboBox)
            assert combo.currentText() == "2 circle"  # the current category preselected
            for k in keys:
                qtbot.keyClick(combo, k)
        QTimer.singleShot(50, go)

    answer([Qt.Key.Key_Down, Qt.Key.Key_Return])
    assert ask_category(None, 2, choices) == 7
    answer([Qt.Key.Key_Escape])
    assert ask_category(None, 2, choices) is None


def test_on_the_bundled_demo_change_category_says_why_it_is_empty(window, qtbot, no_internal_errors):
    """The SA-Co/Gold demo's files name one category: Shift+C offers nothing to pick, says why."""
    w = window
    open_demo(w, qtbot, "pcs")
    enter_correct_and_select(w, qtbot)
    act = w.correction.toolbar.commands["category"]
    assert not act.isEnabled() and "one category (1 object)" in act.toolTip()
    key(w, qtbot, Qt.Key.Key_C, SHIFT)  # disabled: no empty choice is offered, the edit stays open
    assert w.correction.session is not None and w.state.review_store.corrections() == []
