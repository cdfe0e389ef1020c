"""Compare prediction sets: two sets side by side on the same sample with the benchmark's
captions, synced pan/zoom, browser columns per set, "fixed by B" / "broken by B" filters, and the
attached sets and layout restored with the session. CAFE demo + a second prediction file in which
two negatives and one positive were changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt

demo = pytest.importorskip("masklens.core.kinds.demo")

NEG = 1_000_000_000


@pytest.fixture
def second_set(tmp_path):
    """The demo predictions with the negatives of samples 1 and 3 and the positive of sample 2
    scored 0.05 (< t): 1 and 3 stop being TA-FP, 2 becomes TA-FN."""
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


def open_with_b(w, qtbot, b):
    assert w.commands.open_demo("cafe", sync=True)
    assert w.commands.open_predictions(["--pred", str(b)])
    qtbot.waitUntil(lambda: "b.json" in w.state.prediction_sets and not w.jobs.busy, timeout=20000)
    w.state.set_active("demo predictions")


def click_tab(w, qtbot, text):
    bar = w.tabs.tabBar()
    i = next(i for i in range(w.tabs.count()) if w.tabs.tabText(i) == text)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(i).center())
    assert w.tabs.currentIndex() == i


def shown_ids(w):
    """The ids the filter lists; the current sample kept although it no longer matches (marked
    "outside the filter" until the user moves) is not one of them."""
    b = w.browser
    rows = [b.proxy.mapToSource(b.proxy.index(r, 0)).row() for r in range(b.proxy.rowCount())]
    if b.model.outside_row is not None:
        assert b.model.outside_row == w.state.index  # only the sample being looked at is kept
    return [b.model.samples[r].id for r in rows if r != b.model.outside_row]


def choose_preset(w, label):
    combo = w.browser.presets
    i = combo.findText(label)
    assert i >= 0, [combo.itemText(k) for k in range(combo.count())]
    combo.setCurrentIndex(i)


def test_two_sets_side_by_side_with_their_captions_and_synced_view(window, qtbot, second_set):
    w = window
    open_with_b(w, qtbot, second_set)
    click_tab(w, qtbot, "Compare sets")
    cmp = w.set_comparison
    assert cmp.compared() == ["demo predictions", "b.json"]
    panels = cmp.tab.view.panels
    assert len(panels) == 4  # two rows (A, B) of the CAFE view's two panels
    cmp.tab.failure.setCurrentText("negative prompt is TA-FP")
    panels = cmp.tab.view.panels
    assert [p.title.text().split(" · ")[:2] for p in panels] == [  # sample 1: TA-FP under A, TN under B
        ["A ✗", "demo predictions"], ["A ✗", "demo predictions"], ["B ✓", "b.json"], ["B ✓", "b.json"]]
    assert panels[1].caption.text().startswith("TA-FP") and panels[3].caption.text().startswith("TN")
    assert "pred" in panels[1].canvas.layer_names() and "pred" not in panels[3].canvas.layer_names()
    # each set's own readout card, in the benchmark's words: TA-FP under A, TN under B
    cards = cmp.tab.cards.cards
    assert set(cards) == {"A", "B"}
    assert "TA-FP" in " ".join(b.text() for b in cards["A"].badges)
    assert "TN" in " ".join(b.text() for b in cards["B"].badges)
    assert "TA-FP" not in " ".join(b.text() for b in cards["B"].badges)
    panels[0].canvas.zoom(2.0)  # pan/zoom synced over both sets
    assert {round(p.canvas.scale_factor(), 4) for p in panels} == {round(panels[0].canvas.scale_factor(), 4)}
    box = cmp.tab.boxes["b.json"]
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))  # untick B: one row left
    assert not box.isChecked() and len(cmp.tab.view.panels) == 2
    # a typed-prompt layer of this sample joins as a last row, with its own caption
    from masklens.core.schema import Role
    from masklens.gui.prompts.prompt_bar import PromptRequest

    assert w.commands.run_prompt(PromptRequest("square", Role.POSITIVE, None, None, "demo"), sync=True)
    click_tab(w, qtbot, "Compare sets")
    panels = cmp.tab.view.panels
    assert len(panels) == 3 and panels[2].title.text().startswith("#1 demo")
    assert "IoU" in panels[2].caption.text() and "pred" in panels[2].canvas.layer_names()
    cmp.tab.typed.setChecked(False)
    assert len(cmp.tab.view.panels) == 2


def test_browser_columns_and_fixed_broken_filters(window, qtbot, second_set):
    w = window
    open_with_b(w, qtbot, second_set)
    cmp = w.set_comparison
    cmp.tab.failure.setCurrentText("negative prompt is TA-FP")
    cols = w.browser.model.columns
    assert {"compare.A.fails", "compare.B.fails", "compare.B.change", "compare.B.neg_class"} <= set(cols)
    choose_preset(w, "fixed by B (compared sets)")
    assert shown_ids(w) == ["1/1000000001", "3/1000000003"]
    choose_preset(w, "broken by B (compared sets)")
    assert shown_ids(w) == []
    w.view_toolbar.sets.setCurrentText("b.json")  # b.json becomes A: what it fixed, the other breaks
    assert cmp.compared() == ["b.json", "demo predictions"]
    assert shown_ids(w) == ["1/1000000001", "3/1000000003"]
    w.view_toolbar.sets.setCurrentText("demo predictions")
    cmp.tab.failure.setCurrentText("positive prompt not TA-TP")
    choose_preset(w, "broken by B (compared sets)")
    assert shown_ids(w) == ["2/1000000002"]
    # F3 walks the filter: the next sample broken by B
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=3000)
    qtbot.keyClick(w, Qt.Key.Key_F3)
    assert w.state.sample.id == "2/1000000002"
    # the slider re-derives every compared set: at t = 0.04 B's 0.05 scores count again; the
    # chosen filter stays
    w.set_params({**w.state.params, "score_threshold": 0.04})
    assert w.browser.presets.currentText() == "broken by B (compared sets)"
    assert shown_ids(w) == []


def test_attached_sets_and_layout_come_back_with_the_session(qtbot, second_set):
    from masklens.gui.window.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    open_with_b(w, qtbot, second_set)
    click_tab(w, qtbot, "Compare sets")
    w.set_comparison.tab.failure.setCurrentText("positive prompt not TA-TP")
    w.close()  # saves the settings

    w2 = MainWindow()
    qtbot.addWidget(w2)
    w2.show()
    assert w2.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: "b.json" in w2.state.prediction_sets and not w2.jobs.busy, timeout=20000)
    qtbot.waitUntil(lambda: w2.state.active == "demo predictions", timeout=5000)
    cmp = w2.set_comparison
    assert w2.tabs.currentWidget() is cmp.tab
    assert cmp.compared() == ["demo predictions", "b.json"]
    assert cmp.tab.failure.currentText() == "positive prompt not TA-TP"
    assert len(cmp.tab.view.panels) == 4
    w2.close()

    second_set.unlink()  # the file went away: not reattached, said once, forgotten
    w3 = MainWindow()
    qtbot.addWidget(w3)
    w3.show()
    assert w3.commands.open_demo("cafe", sync=True)
    assert any(level == "warning" and "not reattached" in text and "b.json" in text
               for level, text in w3.message_bar.history)
    assert list(w3.state.prediction_sets) == ["demo predictions"]
    assert not any(e.get("sets") for e in w3.settings.sessions.values())
    w3.close()


def test_large_benchmarks_build_the_columns_on_the_worker_pool(window, qtbot, second_set, monkeypatch):
    from masklens.gui.compare import sets as compare_sets

    w = window
    open_with_b(w, qtbot, second_set)
    monkeypatch.setattr(compare_sets, "SYNC_ROWS", 0)  # the 18 demo samples count as "large"
    cmp = w.set_comparison
    cmp.tab.failure.setCurrentText("positive prompt not TA-TP")
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=10000)
    choose_preset(w, "broken by B (compared sets)")
    assert shown_ids(w) == ["2/1000000002"]
    with qtbot.waitSignal(w.jobs.finished, timeout=10000):
        w.set_params({**w.state.params, "score_threshold": 0.04})  # the job is started, not run here
        # meanwhile: the previous comparison's columns, so the filter stays
        assert w.browser.presets.currentText() == "broken by B (compared sets)"
        assert shown_ids(w) == ["2/1000000002"]
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=10000)
    assert w.browser.presets.currentText() == "broken by B (compared sets)"
    assert shown_ids(w) == []  # at t = 0.04 B's 0.05 positive counts again


def test_settings_remember_only_the_most_recent_benchmarks(window):
    from masklens.gui.compare.sets import MAX_SESSIONS

    cmp = window.set_comparison
    for i in range(MAX_SESSIONS + 5):
        cmp._entry(f"toy:b{i}:")["tab"] = "Sample"
    cmp._entry("toy:b3:")  # used again: most recent
    keys = list(window.settings.sessions)
    assert len(keys) == MAX_SESSIONS and keys[-1] == "toy:b3:" and "toy:b0:" not in keys


def test_opening_another_benchmark_while_comparing_starts_afresh(window, qtbot, second_set):
    if "cgebench" not in demo.demo_kinds():
        pytest.skip("no cgebench demo")
    w = window
    open_with_b(w, qtbot, second_set)
    click_tab(w, qtbot, "Compare sets")
    w.set_comparison.tab.failure.setCurrentText("negative prompt is TA-FP")
    assert any(c.startswith("compare.") for c in w.browser.model.columns)
    assert w.commands.open_demo("cgebench", sync=True)
    cmp = w.set_comparison
    assert w.tabs.currentWidget() is w.sample_view  # another benchmark opens on its Sample tab
    assert cmp.tab.view.panels == []  # and the hidden Compare tab keeps nothing of CAFE
    assert list(cmp.tab.boxes) == ["demo predictions"] and cmp.compared() == ["demo predictions"]
    assert not any(c.startswith("compare.") for c in w.browser.model.columns)
    click_tab(w, qtbot, "Compare sets")
    panels = cmp.tab.view.panels
    assert len(panels) == 4 and all(p.title.text().startswith("A") for p in panels)
    assert "IoGT" in panels[0].caption.text()
    assert w.status.sample.text().startswith("sample 1/10")


def test_the_compare_tab_does_not_widen_the_window(window, qtbot, second_set):
    w = window
    before = w.size()
    open_with_b(w, qtbot, second_set)
    click_tab(w, qtbot, "Compare sets")
    assert w.set_comparison.tab.minimumSizeHint().width() < 600  # its hint wraps; its cards scroll
    assert w.size() == before
