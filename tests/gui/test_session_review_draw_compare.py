"""A user session on every demo kind, reviewing, drawing and comparing:
record a verdict from the canvas and undo it, draw a box on the first panel and run it with the
demo model, attach a second prediction set and compare the two — real key and mouse events,
and no exception or Qt warning of ours logged on the way."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt, qInstallMessageHandler

from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import Role, open_store

demo = pytest.importorskip("masklens.core.kinds.demo")


@pytest.fixture
def no_errors(monkeypatch):
    """Fail on an exception reaching sys.excepthook or a Qt critical/fatal message."""
    seen: list[str] = []
    monkeypatch.setattr(sys, "excepthook", lambda t, v, tb: seen.append(f"{t.__name__}: {v}"))

    def handler(mode, context, message):
        if mode.name in ("QtCriticalMsg", "QtFatalMsg"):
            seen.append(message)

    old = qInstallMessageHandler(handler)
    yield seen
    qInstallMessageHandler(old)
    assert not seen, seen


def target_box(w) -> tuple[float, float, float, float]:
    """A box around the first panel's ground truth (or the image's centre when it has none)."""
    spec, sample = w.sample_view.specs[0], w.state.sample
    gt = sample.gts.get(spec.gts[0]) if spec.gts else None
    if gt is not None and gt.union().area:
        ys, xs = np.nonzero(gt.union().to_array())
        return float(xs.min()) - 2, float(ys.min()) - 2, float(xs.max()) + 3, float(ys.max()) + 3
    h, wd = w.store.image(sample.images[spec.image]).shape[:2]
    return wd * 0.25, h * 0.25, wd * 0.75, h * 0.75


@pytest.mark.parametrize("kind", ["cafe", "pcs", "hallusegbench", "cgebench", "r2sm", "ovs"])
def test_review_draw_and_compare_on_each_demo(window, qtbot, kind, no_errors):
    if kind not in demo.demo_kinds():
        pytest.skip(f"no {kind} demo")
    w = window
    assert w.commands.open_demo(kind, sync=True)
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=3000)
    w.tabs.setCurrentIndex(0)
    canvas = w.sample_view.panels[0].canvas
    qtbot.waitUntil(lambda: canvas.width() > 150, timeout=3000)  # laid out
    vp = canvas.viewport()
    qtbot.mouseClick(vp, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(canvas.hasFocus, timeout=3000)

    # review: a verdict from the canvas, confirmed, then undone (a retraction, nothing deleted)
    if w.review_panel is not None:
        key = benchmark_key(w.state.benchmark)
        qtbot.keyClick(canvas, Qt.Key.Key_M)
        assert "Ctrl+Z to undo" in w.message_bar.text
        qtbot.keyClick(canvas, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        with open_store(w.state.review_store.path, Role.READ) as st:
            assert st.current(key) == [] and len(st.history(key)) == 2

    # draw a box on the first panel and run it on the demo model
    qtbot.keyClick(canvas, Qt.Key.Key_B)
    x0, y0, x1, y1 = target_box(w)
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, pos=canvas.mapFromScene(QPointF(x0, y0)))
    qtbot.mouseMove(vp, canvas.mapFromScene(QPointF(x1, y1)))
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=canvas.mapFromScene(QPointF(x1, y1)))
    assert [m[0] for m in canvas.marks()] == ["box"]
    w.prompt_bar.select_model("demo")
    n = len(w.state.live)
    qtbot.keyClick(canvas, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(w.state.live) > n and not w.jobs.busy, timeout=30000)
    r = w.state.live[-1]
    assert np.allclose(r.prompt.meta["boxes"][0], (x0, y0, x1, y1), atol=3.5)  # drawn in view pixels; clamped to the image
    assert r.prompt.image == w.sample_view.specs[0].image
    assert w.message_bar.level != "error", w.message_bar.text

    # a second prediction set (the demo's again, under another name), compared side by side
    ns = w.state.namespace
    assert w.commands.attach_predictions(ns, "second run", sync=True)
    w.state.set_active("demo predictions")
    w.tabs.setCurrentWidget(w.set_comparison.tab)
    cmp = w.set_comparison
    assert cmp.compared() == ["demo predictions", "second run"]
    base = len(w.sample_view.specs)
    assert len(cmp.tab.view.panels) >= 2 * base  # a row per set (+ the typed-prompt row)
    titles = [p.title.text() for p in cmp.tab.view.panels]
    assert titles[0].startswith("A") and titles[base].startswith("B")
    if cmp.failure() is not None:  # same predictions: nothing fixed, nothing broken
        assert "compare.B.change" in w.browser.model.columns
        assert {w.browser.model.flat(i)["compare.B.change"] for i in range(w.browser.model.rowCount())} == {"same"}
    w.commands.step_sample(1)  # the comparison follows the sample (it has no typed-prompt result)
    from masklens.gui.views import view_for

    assert len(cmp.tab.view.panels) == 2 * len(view_for(kind).panels(w.state.sample))
    assert w.status.sample.text().startswith("sample 2/")
    assert not w.visual_tool.prompt and w.visual_tool.summary.text() == ""
