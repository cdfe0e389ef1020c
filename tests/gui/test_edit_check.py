"""HalluSegBench edit leakage in the window: measured on opening, a browser column to sort by,
a card line, and the Edit difference view (Shift+E) — on the real window, with generated pairs
of known leakage, and the demo."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from test_gui_defects import canvas, focus

pytest.importorskip("masklens.core.kinds.demo")


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "metrics"))
from hallu_pairs import write_pairs  # noqa: E402 - generated pairs of known leakage

LEAKS = [0, 120, 40, 300]  # pixels changed outside the object, 200 changed inside it


@pytest.fixture
def hallu(window, qtbot, no_internal_errors, tmp_path):
    data, pred = write_pairs(tmp_path, LEAKS)
    assert window.commands.open_benchmark("hallusegbench", ["--data", str(data), "--pred-dir", str(pred)])
    qtbot.waitUntil(lambda: "edit_leakage" in (window.state.readout() or {}) and not window.jobs.busy,
                    timeout=20000)
    return window


def test_leakage_is_measured_from_the_images_and_sortable_in_the_browser(hallu, qtbot):
    from masklens.core.files.images import read_image
    from masklens.core.kinds.hallusegbench.leakage import sample_leakage

    w = hallu
    rows = w.state.readouts[w.state.active]
    for s, rec in zip(w.state.benchmark.samples, rows, strict=True):  # each from its own two images
        want = sample_leakage(s, lambda k, s=s: read_image(s.images[k].path))
        assert rec["edit_leakage"] == pytest.approx(want["edit_leakage"]) and rec["edit_leak_px"] == want["edit_leak_px"]
    model = w.browser.model
    from masklens.gui.browser.sample_table import FIXED

    col = len(FIXED) + model.columns.index("edit_leakage")
    header = w.browser.table.horizontalHeader()
    x = header.sectionViewportPosition(w.browser.proxy.mapFromSource(model.index(0, col)).column()) + 5
    for _ in range(2):  # ascending, then descending
        qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    shown = [w.browser.proxy.index(r, w.browser.proxy.mapFromSource(model.index(0, col)).column())
             .data(Qt.ItemDataRole.DisplayRole) for r in range(w.browser.proxy.rowCount())]
    want = sorted((leak / (leak + 200) for leak in LEAKS), reverse=True)
    assert [float(v) for v in shown] == pytest.approx(want, abs=5e-4)  # the worst edit first


def test_card_line_and_no_change_to_the_scores(hallu, qtbot):
    w = hallu
    rec = w.state.readout()
    card_texts = _texts(w)
    assert "edit leakage" in card_texts
    assert f"{rec['edit_leak_px']} px" in card_texts
    # the benchmark's own metrics are those of the scorer alone (no image involved)
    from masklens.core.scoring.contract import Scorer

    scorer = w.state.scorers[w.state.active]
    plain = Scorer(w.state.kind, w.state.benchmark, scorer.predictions)
    for s in w.state.benchmark.samples:
        s.meta.pop("edit_leakage", None)
    base = plain.readouts(w.state.params)
    for a, b in zip(base, w.state.readouts[w.state.active], strict=True):
        assert {k: v for k, v in b.items() if not k.startswith("edit_")} == dict(a)


def _texts(w):
    from PySide6.QtWidgets import QLabel

    return " ".join(lbl.text() for lbl in w.readout_panel.findChildren(QLabel))


def test_edit_difference_view_by_key_colours_the_leaking_pixels(hallu, qtbot):
    w = hallu
    rec = w.state.readout()
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(canvas(w), Qt.Key.Key_E, Qt.KeyboardModifier.ShiftModifier)
    ec = w.edit_check
    assert ec.action.isChecked()
    pair_panels = [s for s in w.sample_view.specs if s.image in ("factual", "counterfactual")]
    assert len(ec.items) == len(pair_panels) > 0 and all(i.scene() is not None for i in ec.items)
    assert int((ec.labels >= 2).sum()) == rec["edit_leak_px"]  # vermillion = the leakage counted
    if rec["edit_leakage"]:
        assert (ec.labels >= 2).sum() / (ec.labels > 0).sum() == pytest.approx(rec["edit_leakage"])
    w.commands.step_sample(1)  # follows the sample
    assert len(ec.items) == len(pair_panels) and all(i.scene() is not None for i in ec.items)
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(canvas(w), Qt.Key.Key_E, Qt.KeyboardModifier.ShiftModifier)
    assert not ec.action.isChecked() and ec.items == []
    assert np.asarray(ec.labels).ndim == 2


def test_demo_opens_with_its_leakage_measured(window, qtbot, no_internal_errors):
    from test_gui_defects import open_demo

    open_demo(window, qtbot, "hallusegbench")
    qtbot.waitUntil(lambda: "edit_leakage" in (window.state.readout() or {}), timeout=20000)
    assert "edit_leakage" in window.browser.model.columns
    assert all(r["edit_leakage"] == 0.0 for r in window.state.readouts[window.state.active])  # clean edits
