"""Issue 22 in the window: corrections recorded in the review store, the corrected-ground-truth
switch (canvas, cards, browser, summary), Apply corrections, and a scripted user session with
real keys and mouse whose numbers equal `masklens score` on the file `masklens review apply`
writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from test_correct_mode import click, drag, enter_correct_and_select, key
from test_gui_defects import canvas, focus, open_demo

from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import ReviewStore, Role, open_store

demo = pytest.importorskip("masklens.core.kinds.demo")

CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


@pytest.fixture
def cafe(window, qtbot, no_internal_errors):
    open_demo(window, qtbot, "cafe")
    window.review_panel.reviewer.setText("ana")
    return window


def masklens(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("masklens")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "masklens"]
    got = subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert got.returncode == 0, got.stderr
    return got


def store_of(w) -> ReviewStore:
    return w.state.review_store


def bkey(w) -> str:
    return benchmark_key(w.corrected_view.original_benchmark or w.state.benchmark)


def paint_big_stroke(w, qtbot) -> None:
    """Brush (D), grown with ] to ~50 px, one stroke across the image's top rows."""
    key(w, qtbot, Qt.Key.Key_D)
    for _ in range(8):
        key(w, qtbot, Qt.Key.Key_BracketRight)
    iw, ih = canvas(w)._size
    drag(qtbot, canvas(w), [(2, 2), (iw * 0.5, 2), (iw - 2, 2)])


def brush_and_accept(w, qtbot):
    """Select the first instance, one brush stroke in a corner, Shift+Enter; the new mask."""
    enter_correct_and_select(w, qtbot)
    key(w, qtbot, Qt.Key.Key_D)
    drag(qtbot, canvas(w), [(5, 5), (30, 10)])
    with qtbot.waitSignal(w.correction.accepted, timeout=3000) as got:
        key(w, qtbot, Qt.Key.Key_Return, SHIFT)
    return got.args[3]


# ------------------------------------------------------------------ persistence
def test_an_accepted_edit_is_stored_linked_to_the_verdict_undone_by_ctrl_z_and_kept(cafe, qtbot, window):
    w = cafe
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(canvas(w), Qt.Key.Key_W)  # Ground truth wrong
    flagged = store_of(w).verdict_of(bkey(w), w.state.sample.id, None, reviewer="ana")
    assert flagged is not None and flagged.verdict == "gt_wrong"
    w.review_panel.note.setText("object's left edge missing")
    x, y, m = enter_correct_and_select(w, qtbot)
    key(w, qtbot, Qt.Key.Key_D)
    drag(qtbot, canvas(w), [(5, 5), (30, 10)])
    key(w, qtbot, Qt.Key.Key_Return, SHIFT)  # accept
    rows = store_of(w).corrections(bkey(w))
    assert len(rows) == 1
    c = rows[0]
    assert (c.sample_id, c.instance, c.reviewer, c.tool) == (w.state.sample.id, 0, "ana", "brush")
    assert c.verdict_uid == flagged.uid and c.note == "object's left edge missing"
    assert c.mask.area > int(m.sum()) and w.review_panel.note.text() == ""
    # Ctrl+Z (no edit open): the correction is retracted, the verdict stays
    key(w, qtbot, Qt.Key.Key_Z, CTRL)
    assert store_of(w).corrections(bkey(w)) == []
    assert store_of(w).correction_history(bkey(w))[-1].retracts == c.uid
    assert store_of(w).verdict_of(bkey(w), c.sample_id, None, reviewer="ana") is not None
    assert "undone: correction" in w.message_bar.text
    # again, then a restart: the correction is there and the switch draws it
    corrected = brush_and_accept(w, qtbot)
    sid, gt_key = w.state.sample.id, w.sample_view.specs[0].gts[0]
    w.close()
    from masklens.gui.window.main_window import MainWindow

    w2 = MainWindow(persist=False)
    qtbot.addWidget(w2)
    w2.show()
    open_demo(w2, qtbot, "cafe")
    kept = store_of(w2).corrections(bkey(w2))
    assert [(k.sample_id, k.instance, k.mask) for k in kept] == [(sid, 0, corrected)]
    w2.corrected_view.action.trigger()
    w2.state.set_index([s.id for s in w2.state.benchmark.samples].index(sid))
    assert w2.state.sample.gts[gt_key].masks[0] == corrected  # the canvas draws the corrected gt
    w2.close()


# ------------------------------------------------------------------ the scripted session
def test_scripted_session_correct_see_numbers_move_apply_and_score_equal(cafe, qtbot, tmp_path):
    """Flag, correct with the brush and a model-assisted click, undo one stroke, accept; the
    card and summary change; `masklens review apply` + `masklens score` equal the window."""
    w = cafe
    w.prompt_bar.select_model("demo")
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(canvas(w), Qt.Key.Key_W)
    x, y, m = enter_correct_and_select(w, qtbot)
    s = w.correction.session
    key(w, qtbot, Qt.Key.Key_X)  # the eraser through the object's middle: a hole
    drag(qtbot, canvas(w), [(x - 4, y), (x + 4, y)])
    holed = s.area
    assert holed < int(m.sum())
    key(w, qtbot, Qt.Key.Key_J)  # model-assisted: a click on the object, Shift+A adds the proposal
    click(qtbot, canvas(w), x, y)
    qtbot.waitUntil(lambda: w.correction.proposal is not None and not w.jobs.busy, timeout=20000)
    key(w, qtbot, Qt.Key.Key_A, SHIFT)
    assert s.area > holed and len(s.undo_stack) == 2
    paint_big_stroke(w, qtbot)
    after_brush = s.area
    assert after_brush > int(m.sum()) + 1000
    drag(qtbot, canvas(w), [(x + 40, y + 40), (x + 60, y + 60)])  # one more stroke, then Ctrl+Z undoes it
    assert s.area > after_brush and len(s.undo_stack) == 4
    key(w, qtbot, Qt.Key.Key_Z, CTRL)
    assert s.area == after_brush and len(s.undo_stack) == 3
    key(w, qtbot, Qt.Key.Key_Return, SHIFT)
    sid = w.state.sample.id
    assert [c.sample_id for c in store_of(w).corrections(bkey(w))] == [sid]
    before_card = dict(w.readout_panel.deck.main_card.numbers)
    before_summary = w.corrected_view.summary.values
    # the switch, from the view toolbar as a user clicks it
    button = w.view_toolbar.widgetForAction(w.corrected_view.action)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert w.corrected_view.on
    deck = w.readout_panel.deck
    assert deck.original_card is not None and deck.original_card.numbers == before_card
    assert deck.main_card.numbers != before_card  # the corrected card, beside the original
    summary = w.corrected_view.summary.values
    assert {k: a for k, (a, _b) in summary.items()} == {k: a for k, (a, _b) in before_summary.items()}
    assert any(a != b for a, b in summary.values())  # the summary shows both, and they differ
    gt_key = w.sample_view.specs[0].gts[0]
    shown = w.state.sample.gts[gt_key].masks[0].to_array().astype(bool)
    assert shown.sum() > m.sum() + 1000  # the canvas draws the corrected mask
    # the browser: corrected.* columns and the "changed by corrections" preset
    assert "corrected.changed" in w.browser.model.columns
    labels = [f.label for f in w.browser._filters]
    w.browser.presets.setCurrentIndex(labels.index("changed by corrections"))
    assert w.browser.proxy.rowCount() == 1
    # the CLI: review apply, then score the written file
    ns = demo.demo_namespace("cafe", with_predictions=True)
    out = tmp_path / "corrected.json"
    masklens("review", "apply", "cafe", "--ann", str(ns.ann), "--images", str(ns.images),
             "--store", str(store_of(w).path), "--out", str(out))
    res = tmp_path / "score.json"
    masklens("score", "cafe", "--ann", str(out), "--images", str(ns.images), "--pred", str(ns.pred),
             "--out", str(res))
    scored = json.loads(res.read_text())
    head = next(iter(scored["summary"].values()))
    for k, (_a, b) in summary.items():
        assert head[k] == pytest.approx(b, abs=1e-12), k
    i = w.state.index
    cli_rec = scored["samples"][i]
    for k, v in deck.main_card.record.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            assert cli_rec[k] == pytest.approx(v, abs=1e-12), k
    # off again: the original scorers, untouched
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert not w.corrected_view.on and deck.original_card is None
    assert np.array_equal(w.state.sample.gts[gt_key].masks[0].to_array().astype(bool), m)


def test_file_apply_corrections_writes_what_review_apply_writes(cafe, qtbot, tmp_path):
    w = cafe
    mask = brush_and_accept(w, qtbot)
    out = tmp_path / "from-window.json"
    w.corrections_link.ask_path = lambda *_a: str(out)
    file_menu = next(a.menu() for a in w.menuBar().actions() if a.text() == "&File")
    next(a for a in file_menu.actions() if a.text() == "Apply corrections…").trigger()
    assert out.exists() and out.with_name("from-window.changelog.json").exists()
    ns = demo.demo_namespace("cafe", with_predictions=True)
    cli = tmp_path / "from-cli.json"
    masklens("review", "apply", "cafe", "--ann", str(ns.ann), "--images", str(ns.images),
             "--store", str(store_of(w).path), "--out", str(cli))
    assert json.loads(out.read_text()) == json.loads(cli.read_text())
    # a second apply over a file masklens did not write is refused, in the message bar
    foreign = tmp_path / "mine.json"
    foreign.write_text("{}")
    w.corrections_link.ask_path = lambda *_a: str(foreign)
    assert not w.corrections_link.apply_dialog()
    assert "already exists" in w.message_bar.text and foreign.read_text() == "{}"
    exported = tmp_path / "export.json"
    w.corrections_link.ask_path = lambda *_a: str(exported)
    assert w.corrections_link.export_dialog()
    got = json.loads(exported.read_text())
    assert got["benchmark"] == bkey(w) and got["corrections"][0]["mask"] == mask.to_coco()
    assert got["corrections"][0]["instance"] == 0


# ------------------------------------------------------------------ team review
def test_team_queue_merge_and_disagreements(cafe, qtbot, tmp_path):
    """Assign to three reviewers (CLI); N follows ana's queue with progress; ben's store merged
    in (CLI), the planted disagreements — a verdict and a correction — are listed side by side,
    the browser's Disagreements preset shows them, and κ per pair is in the Review dock."""
    from masklens.core.masks import Mask

    w = cafe
    ns = demo.demo_namespace("cafe", with_predictions=True)
    db = str(store_of(w).path)
    masklens("review", "assign", "cafe", "--ann", str(ns.ann), "--images", str(ns.images), "--store", db,
             "--reviewers", "ana,ben,eve", "--overlap", "0.2", "--seed", "3")
    queue = store_of(w).queue(bkey(w), "ana")
    assert 0 < len(queue) < len(w.state.benchmark.samples)
    ids = [s.id for s in w.state.benchmark.samples]
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(canvas(w), Qt.Key.Key_N)  # next in my queue
    assert w.state.sample.id == queue[0]
    assert w.review_panel.next_button.text().startswith("Next in my queue")
    assert w.team.progress.text() == f"Your queue (ana): 0/{len(queue)} done"
    qtbot.keyClick(canvas(w), Qt.Key.Key_K)  # Fine
    qtbot.keyClick(canvas(w), Qt.Key.Key_N)
    assert w.state.sample.id == queue[1]
    assert w.team.progress.text() == f"Your queue (ana): 1/{len(queue)} done"
    agreed, disputed, corrected = queue[0], queue[1], queue[2]
    qtbot.keyClick(canvas(w), Qt.Key.Key_W)  # ana: Ground truth wrong on `disputed`
    w.state.set_index(ids.index(corrected))
    ana_mask = brush_and_accept(w, qtbot)
    # ben, in his own store: agrees on one sample, disagrees on another, corrects differently
    ben_db = tmp_path / "ben.sqlite"
    with open_store(ben_db, Role.WRITE, reviewer="ben") as ben:
        ben.record(bkey(w), agreed, "fine")
        ben.record(bkey(w), disputed, "fine")
        other = np.zeros(ana_mask.shape, np.uint8)
        other[100:140, 100:140] = 1
        ben.add_correction(bkey(w), corrected, w.sample_view.specs[0].gts[0], 0, Mask.from_array(other),
                           tool="polygon")
    got = subprocess.run([str(Path(sys.executable).with_name("masklens")), "review", "merge", db, str(ben_db)],
                         capture_output=True, text=True, timeout=300)
    assert got.returncode == 1 and "corrected differently" in got.stderr + got.stdout  # a conflict, shown
    open_demo(w, qtbot, "cafe")  # open again: the merged store is read
    team = w.team
    assert set(team.rows) == {disputed, corrected}
    assert team.rows[disputed] == {"ana": "gt_wrong", "ben": "fine"}
    assert team.rows[corrected]["ben"] == "corrected target instance 0 (area 1600, polygon)"
    assert team.rows[corrected]["ana"].startswith("corrected target instance 0") and "brush" in team.rows[corrected]["ana"]
    assert team.tree.topLevelItemCount() == 2 and team.tree.headerItem().text(1) == "ana"
    row = next(team.tree.topLevelItem(i) for i in range(2) if team.tree.topLevelItem(i).text(0) == disputed)
    assert (row.text(1), row.text(2)) == ("Ground truth wrong", "Fine")  # side by side, in the buttons' words
    assert "ana – ben: κ =" in team.kappas.text()
    labels = [f.label for f in w.browser._filters]
    w.browser.presets.setCurrentIndex(labels.index("Disagreements"))
    shown = {w.browser.model.samples[w.browser.proxy.mapToSource(w.browser.proxy.index(r, 0)).row()].id
             for r in range(w.browser.proxy.rowCount())}
    assert shown == {disputed, corrected}
    item = team.tree.topLevelItem(0)
    team.tree.itemActivated.emit(item, 0)  # double-click opens the sample
    assert w.state.sample.id == item.text(0)


def test_an_edit_with_brush_eraser_and_fill_holes_stores_every_tool(cafe, qtbot):
    """Brush (D) a stroke, Eraser (X) a hole into the object, Fill holes (Shift+F), then the
    Brush tool selected again at accept time: the stored tool names all three, in order."""
    import sqlite3

    w = cafe
    x, y, m = enter_correct_and_select(w, qtbot)
    s = w.correction.session
    key(w, qtbot, Qt.Key.Key_D)
    drag(qtbot, canvas(w), [(5, 5), (30, 10)])
    key(w, qtbot, Qt.Key.Key_X)
    w.correction.radius = 2.0
    drag(qtbot, canvas(w), [(x, y), (x + 1, y)])  # a hole inside the object
    holed = s.area
    key(w, qtbot, Qt.Key.Key_F, SHIFT)  # Fill holes
    assert s.area > holed and s.operations == ["brush", "eraser", "fill"]
    key(w, qtbot, Qt.Key.Key_D)  # the tool selected at accept time is not what is recorded
    key(w, qtbot, Qt.Key.Key_Return, SHIFT)
    qtbot.waitUntil(lambda: bool(store_of(w).corrections(bkey(w))), timeout=5000)
    with sqlite3.connect(f"{store_of(w).path.resolve().as_uri()}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT sample_id, instance, tool FROM corrections").fetchall()
    assert rows == [(w.state.sample.id, 0, "brush+eraser+fill")]


def test_correcting_while_the_switch_is_on_names_the_loaded_instance(window, qtbot, no_internal_errors):
    """With the corrected ground truth shown, an edit of an added instance retracts and re-adds
    it, and an edit of a loaded instance keeps its index in the loaded ground truth."""
    w = window
    open_demo(w, qtbot, "pcs")
    c = w.correction
    gt_key = w.sample_view.specs[0].gts[0]
    n = len(w.state.sample.gts[gt_key].masks)
    assert n >= 1
    w.corrected_view.action.trigger()
    w.visual_tool.set_tool("correct")
    assert c.start(0, gt_key, None)  # a new instance
    c.session.begin_stroke(20, 20, 6)
    c.session.end_stroke()
    c.accept()
    added = store_of(w).corrections(bkey(w))
    assert [(r.instance, r.tool) for r in added] == [(None, "new+brush")]
    assert len(w.state.sample.gts[gt_key].masks) == n + 1  # drawn at once
    assert c.start(0, gt_key, n)  # the added instance, as the corrected ground truth shows it
    c.session.begin_stroke(40, 40, 6)
    c.session.end_stroke()
    c.accept()
    rows = store_of(w).corrections(bkey(w))
    assert len(rows) == 1 and rows[0].instance is None and rows[0].uid != added[0].uid
    assert rows[0].mask.area > added[0].mask.area
    assert store_of(w).correction_history(bkey(w))[1].retracts == added[0].uid
    assert c.start(0, gt_key, 0)
    c.session.begin_stroke(2, 2, 3)
    c.session.end_stroke()
    c.accept()
    assert {r.instance for r in store_of(w).corrections(bkey(w))} == {None, 0}
    assert len(w.state.sample.gts[gt_key].masks) == n + 1
