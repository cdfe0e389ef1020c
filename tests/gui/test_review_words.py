"""Issue 21, defects 10 and 15: a verdict on one prompt is named by the prompt's text (never the
benchmark's internal id "1000000013"), and no "undone: …" line outlives its benchmark."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

pytest.importorskip("masklens.core.kinds.demo")

from test_gui_defects import open_demo  # noqa: E402 - File › Open demo, then scored


def focus_list(w, qtbot):
    w.activateWindow()
    w.browser.table.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.waitUntil(w.browser.table.hasFocus, timeout=3000)


@pytest.fixture
def cafe(window, qtbot, no_internal_errors):
    if window.review_panel is None:
        pytest.skip("no review panel")
    open_demo(window, qtbot, "cafe")
    return window


def test_prompt_verdicts_name_the_prompts_text(cafe, qtbot):
    w, panel = cafe, cafe.review_panel
    neg = w.state.sample.prompts[-1]
    assert neg.id.isdigit() and neg.text not in neg.id  # CAFE: an internal image id
    items = [panel.target.itemText(i) for i in range(panel.target.count())]
    assert items[-1] == f"prompt “{neg.text}” ({neg.role.value})"
    assert not any(t.endswith(neg.id) for t in items)
    panel.target.setCurrentIndex(panel.target.count() - 1)
    focus_list(w, qtbot)
    qtbot.keyClick(w.browser.table, Qt.Key.Key_I)  # Edit invalid, on the negative prompt
    said = w.message_bar.history[-1][1]
    assert f"Edit invalid on “{neg.text}”" in said and f"on {neg.id}" not in said  # (the sample id has it)
    shown = [panel.current.item(i).text() for i in range(panel.current.count())]
    assert any(f"on “{neg.text}”" in t for t in shown) and not any(f"on {neg.id}" in t for t in shown)
    qtbot.keyClick(w.browser.table, Qt.Key.Key_Down)  # on to the next sample, then undo there
    assert w.state.index == 1
    qtbot.keyClick(w.browser.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert panel.status.text().startswith("undone: Edit invalid on “")
    assert f"on {neg.id}" not in panel.status.text() and f"prompt {neg.id}" not in panel.status.text()
    assert f"on {neg.id}" not in w.message_bar.history[-1][1]


def test_the_undone_line_goes_with_its_benchmark(cafe, qtbot):
    w, panel = cafe, cafe.review_panel
    focus_list(w, qtbot)
    qtbot.keyClick(w.browser.table, Qt.Key.Key_M)
    qtbot.keyClick(w.browser.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert panel.status.text().startswith("undone: Model wrong")
    open_demo(w, qtbot, "r2sm")
    assert panel.status.text() == ""
    assert panel.title.text() == f"Sample {w.state.sample.id}"


def test_a_verdict_reads_back_only_its_samples_rows(cafe, qtbot, monkeypatch):
    """Recording or undoing a verdict refreshes the list from that sample's rows (not every
    verdict of the store); a filter that reads verdicts ("unreviewed") still follows at once."""
    from masklens.core.review.store import ReviewStore

    w = cafe
    reads = []
    real = ReviewStore.sample_verdicts
    monkeypatch.setattr(ReviewStore, "sample_verdicts",
                        lambda self, *a, **k: reads.append(1) or real(self, *a, **k))
    combo = w.browser.presets
    combo.setCurrentIndex(combo.findText("unreviewed"))
    assert w.browser.count.text() == "18 / 18"
    focus_list(w, qtbot)
    row = w.state.index
    qtbot.keyClick(w.browser.table, Qt.Key.Key_K)
    assert w.browser.model.value(row, 4) == "Fine"
    assert w.browser.count.text() == "17 / 18"  # reviewed: out of "unreviewed" (kept while looked at)
    qtbot.keyClick(w.browser.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert w.browser.model.value(row, 4) == "" and w.browser.count.text() == "18 / 18"
    assert reads == []


def test_on_a_large_store_the_agreement_line_is_read_off_the_gui_thread(cafe, qtbot, monkeypatch):
    import threading

    from masklens.core.review.store import ReviewStore
    from masklens.gui.review import panel as panel_mod

    monkeypatch.setattr(panel_mod, "INLINE_AGREEMENT_ROWS", 0)  # as past 2,000 rows
    threads = []
    real = ReviewStore.current
    monkeypatch.setattr(ReviewStore, "current",
                        lambda self, *a, **k: threads.append(threading.current_thread()) or real(self, *a, **k))
    w, p = cafe, cafe.review_panel
    focus_list(w, qtbot)
    qtbot.keyClick(w.browser.table, Qt.Key.Key_K)
    qtbot.waitUntil(lambda: p.agreement.text().startswith("1 item(s) reviewed"), timeout=5000)
    assert threads and threading.main_thread() not in threads
