"""Window polish found by use: the model box reads whole, the verdict column fits its words,
and a report export leaves the window responsive (the job's thread starts after the click has
painted, and hands the GIL back to the GUI thread sooner while it runs)."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import Qt
from test_gui_defects import focus, open_demo

pytest.importorskip("masklens.core.kinds.demo")


@pytest.fixture
def demo(window, qtbot, no_internal_errors):
    open_demo(window, qtbot, "cafe")
    return window


def test_report_export_starts_after_the_click_painted_and_shares_the_gil(demo, qtbot, tmp_path, monkeypatch):
    from masklens.core import masks
    from masklens.core.runtime import gc_pause
    from masklens.gui.dialogs.report_dialog import ReportDialog
    from masklens.gui.jobs import workers

    w = demo
    focus(w, qtbot, w.sample_view.panels[0].canvas)
    qtbot.keyClick(w, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    rep = next(d for d in w.findChildren(ReportDialog))
    rep.out.setText(str(tmp_path / "rep"))
    rep.gallery.setValue(1)
    default = sys.getswitchinterval()
    intervals: list[float] = []
    bounds: list[int | None] = []  # pycocotools' IoU work per call, while the job runs
    rep.runner.progressed.connect(lambda *_: intervals.append(sys.getswitchinterval()))
    progress = workers.JobContext.progress

    def progress_in_the_job(ctx, *args):  # in the job's thread: the IoU bound in force there
        bounds.append(masks.current_iou_call_work())
        return progress(ctx, *args)

    monkeypatch.setattr(workers.JobContext, "progress", progress_in_the_job)
    qtbot.mouseClick(rep.export_button, Qt.MouseButton.LeftButton)
    # the click is answered first (status, buttons): the job's thread has not started yet
    assert rep.job is not None and not rep.job.started
    assert rep.status.text() == "writing…" and not rep.export_button.isEnabled()
    assert rep.close_button.text() == "Cancel"
    qtbot.waitUntil(lambda: rep.job is None and rep.written is not None, timeout=60000)
    assert (tmp_path / "rep" / "report.html").is_file()
    assert intervals and max(intervals) <= gc_pause.WORKER_SWITCH_INTERVAL < default
    qtbot.waitUntil(lambda: not rep.runner.busy, timeout=5000)
    assert sys.getswitchinterval() == default  # given back once no job runs
    assert set(bounds) == {workers.JOB_IOU_CALL_WORK} and masks.current_iou_call_work() is None
    rep.close()


def _fits(combo) -> bool:
    from masklens.gui.widgets.combo_fit import text_room

    return text_room(combo) >= combo.fontMetrics().horizontalAdvance(combo.currentText())


def test_the_model_box_shows_the_selected_model_s_whole_name(demo, qtbot):
    w = demo
    combo = w.prompt_bar.model
    focus(w, qtbot, combo)
    qtbot.keyClick(combo, Qt.Key.Key_Home)  # the first selectable model, then each with the arrow key
    seen: list[str] = []
    while combo.currentText() not in seen:
        text = combo.currentText()
        seen.append(text)
        qtbot.waitUntil(lambda: _fits(combo), timeout=3000)  # once the bar has laid out again
        assert combo.toolTip().splitlines()[0] == text
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert "Demo baseline (no weights)" in seen, seen
    combo.setCurrentIndex(combo.findData("demo"))


def test_the_verdict_column_fits_its_longest_verdict(demo, qtbot):
    from PySide6.QtWidgets import QStyle

    from masklens.core.review.verdict_types import VERDICT_TYPES
    from masklens.gui.browser.sample_table import FIXED

    w = demo
    if w.review_panel is None:
        pytest.skip("review panel not installed")
    table, col = w.browser.table, FIXED.index("verdict")
    fm = table.fontMetrics()
    margins = 2 * (table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table) + 1)
    labels = [vt.label for vt in VERDICT_TYPES.values()]
    longest = max(labels, key=fm.horizontalAdvance)
    assert table.columnWidth(col) - margins >= fm.horizontalAdvance(longest), (table.columnWidth(col), longest)
    # record that verdict with its key, as a reviewer does: the cell reads whole
    w.review_panel.reviewer.setText("ann")
    canvas = w.sample_view.panels[0].canvas
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(canvas.hasFocus, timeout=3000)
    key = next(vt.shortcut for vt in VERDICT_TYPES.values() if vt.label == longest)
    qtbot.keyClick(canvas, getattr(Qt.Key, f"Key_{key.upper()}"))
    row = w.browser.proxy.mapFromSource(w.browser.model.index(w.state.index, col))
    qtbot.waitUntil(lambda: table.model().data(row) == longest, timeout=3000)
    assert table.visualRect(row).width() - margins >= fm.horizontalAdvance(longest)
    qtbot.keyClick(canvas, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
