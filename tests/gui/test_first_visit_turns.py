"""A switch onto a sample whose masks are not decoded yet (a first visit the prefetch did not
reach) is drawn in two event-loop turns: the image at once, with no stale overlay of
the sample before, then its layers — each half under the GUI-stall budget where the whole was over
it. A return visit (everything cached) is drawn in one turn, as before."""

from __future__ import annotations

import threading

import numpy as np
from PySide6.QtCore import Qt


def _pixels(window) -> list[np.ndarray]:
    out = []
    for panel in window.sample_view.panels:
        image = panel.canvas.viewport().grab().toImage()
        out.append(np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes()).copy())
    return out


def _layers(window) -> list[str]:
    return [n for p in window.sample_view.panels for n in p.canvas.layer_names()]


def test_a_cold_switch_draws_the_image_first_and_its_layers_next_turn(window, qtbot, no_internal_errors):
    assert window.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    table = window.browser.table
    table.setFocus()
    qtbot.waitUntil(lambda: bool(_layers(window)))
    window.renderer.prefetcher.wait_idle(10)
    window.renderer.prefetcher.close()  # no neighbour decoded ahead: every switch below is a cold one
    for _ in range(3):
        window.store.masks.clear()
        before = window.state.index
        qtbot.keyClick(table, Qt.Key.Key_Down)  # handled at once; nothing else has run yet
        assert window.state.index != before
        assert window.sample_view.drawing_left() > 0
        assert _layers(window) == []  # no overlay of the sample before on the new image
        assert all(p.canvas.image_size() != (0, 0) for p in window.sample_view.panels)
        qtbot.waitUntil(lambda: window.sample_view.drawing_left() == 0)
        assert _layers(window)  # the demo's CAFE samples all have ground truth
        in_turns = _pixels(window)
        window.renderer.render()  # the same sample drawn in one go
        assert window.sample_view.drawing_left() == 0
        assert all(np.array_equal(a, b) for a, b in zip(in_turns, _pixels(window), strict=True))


def test_a_return_visit_is_drawn_in_one_turn(window, qtbot, no_internal_errors):
    assert window.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    table = window.browser.table
    table.setFocus()
    qtbot.keyClick(table, Qt.Key.Key_Down)
    qtbot.waitUntil(lambda: window.sample_view.drawing_left() == 0)
    qtbot.keyClick(table, Qt.Key.Key_Up)
    qtbot.waitUntil(lambda: window.sample_view.drawing_left() == 0)
    qtbot.keyClick(table, Qt.Key.Key_Down)  # both samples decoded by now
    assert window.sample_view.drawing_left() == 0 and _layers(window)


def test_a_switch_merges_each_ground_truth_once(window, qtbot, no_internal_errors, monkeypatch):
    """The cold check and the drawing share the panels' masks: a union (an RLE merge) per ground
    truth per switch, not one per use."""
    from masklens.core.schema import GroundTruth

    assert window.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    table = window.browser.table
    table.setFocus()
    window.renderer.prefetcher.wait_idle(10)
    merges: list[str] = []
    real = GroundTruth.union
    monkeypatch.setattr(GroundTruth, "union", lambda self, **k: merges.append(threading.current_thread().name) or real(self, **k))
    for _ in range(2):
        nxt = window.renderer.neighbours()[0]
        for ref in window.state.benchmark.samples[nxt].images.values():
            window.store.image(ref)  # its image decoded, its masks not: the cold check looks at them
        window.store.masks.clear()
        merges.clear()
        qtbot.keyClick(table, Qt.Key.Key_Down)
        assert window.state.index == nxt
        qtbot.waitUntil(lambda: window.sample_view.drawing_left() == 0)
        drawn_gts = sum(len([k for k in spec.gts if k in window.state.sample.gts])
                        for spec in window.sample_view.specs)
        on_gui_thread = [name for name in merges if name == threading.main_thread().name]
        assert drawn_gts > 0 and len(on_gui_thread) == drawn_gts  # the prefetch thread works ahead apart
