"""A and B mean the same in the window, in Export report and in a restored
session, whatever order the remembered prediction files finish loading in after a restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QThreadPool

demo = pytest.importorskip("masklens.core.kinds.demo")

NEG = 1_000_000_000


@pytest.fixture
def second_set(tmp_path):
    if "cafe" not in demo.demo_kinds():
        pytest.skip("no cafe demo")
    ns = demo.demo_namespace("cafe", with_predictions=True)
    preds = json.loads(Path(ns.pred).read_text())
    for p in preds:
        if p["image_id"] in (NEG + 1, NEG + 3, 2):
            p["score"] = 0.05
    out = tmp_path / "b.json"
    out.write_text(json.dumps(preds))
    return out


@pytest.fixture
def one_worker():
    """Jobs run one at a time, in the order they were started (a one-core machine): after a
    restart the remembered file, queued first, lands before the demo's own predictions."""
    pool = QThreadPool.globalInstance()
    before = pool.maxThreadCount()
    pool.setMaxThreadCount(1)
    yield
    pool.setMaxThreadCount(before)


def report_order(window) -> list[str]:
    from masklens.gui.dialogs.report_dialog import ReportDialog

    dlg = ReportDialog(window, window.state)
    try:
        return dlg.selected()
    finally:
        dlg.deleteLater()


def test_a_and_b_survive_a_restart_and_match_the_report(qtbot, second_set, one_worker):
    from masklens.gui.window.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    assert w.commands.open_demo("cafe", sync=True)
    assert w.commands.open_predictions(["--pred", str(second_set)])
    qtbot.waitUntil(lambda: "b.json" in w.state.prediction_sets and not w.jobs.busy, timeout=20000)
    w.state.set_active("demo predictions")
    before_sets = list(w.state.prediction_sets)
    before = w.set_comparison.compared()
    assert before == ["demo predictions", "b.json"]
    assert report_order(w) == before  # the report's reference is the window's A
    w.state.set_active("b.json")  # the toolbar's set: b.json becomes A, in the report too
    assert w.set_comparison.compared() == ["b.json", "demo predictions"]
    assert report_order(w) == ["b.json", "demo predictions"]
    w.state.set_active("demo predictions")
    w.close()  # saves the session

    w2 = MainWindow()
    qtbot.addWidget(w2)
    w2.show()
    assert w2.commands.open_demo("cafe")  # as from the menu: the benchmark, then its predictions, on the pool
    qtbot.waitUntil(lambda: len(w2.state.prediction_sets) == 2 and not w2.jobs.busy, timeout=20000)
    qtbot.waitUntil(lambda: w2.state.active == "demo predictions", timeout=5000)
    assert list(w2.state.prediction_sets) == before_sets  # the toolbar lists them as before
    items = [w2.view_toolbar.sets.itemText(i) for i in range(w2.view_toolbar.sets.count())]
    assert [t for t in items if t in before_sets] == before_sets
    assert w2.set_comparison.compared() == before
    assert report_order(w2) == before
    boxes = w2.set_comparison.tab.boxes
    xs = [boxes[n].geometry().x() for n in before_sets]
    assert xs == sorted(xs)  # the Compare sets tab's check boxes in the same order
    w2.close()
