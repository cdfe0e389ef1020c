"""What the next switch will draw is made while the user looks at the current sample:
after a pause, the neighbours' masks, overlays and image conversion are ready, so a switch by a
real key press decodes no mask and converts no image on the GUI thread, and draws exactly what
drawing them there draws. While the user steps on quickly the follow-up work waits (it holds the
GIL), and a newer request drops what an older one still held back."""

from __future__ import annotations

import threading

import cv2
import numpy as np
import pytest
from PySide6.QtCore import Qt

from masklens.core.masks import Mask
from masklens.core.schema import ImageRef
from masklens.gui.canvas import sample_view
from masklens.gui.canvas.image_cache import ImageStore
from masklens.gui.jobs import prefetch
from masklens.gui.jobs.prefetch import ImagePrefetcher


@pytest.fixture
def gui_thread_work(monkeypatch):
    """Mask decodes and image conversions, by thread name."""
    seen: list[tuple[str, str]] = []
    real_decode, real_rgb_image = Mask.to_array_c, sample_view.rgb_image

    def to_array_c(self):
        seen.append((threading.current_thread().name, "mask"))
        return real_decode(self)

    def rgb_image(rgb):
        seen.append((threading.current_thread().name, "image"))
        return real_rgb_image(rgb)

    monkeypatch.setattr(Mask, "to_array_c", to_array_c)
    monkeypatch.setattr(sample_view, "rgb_image", rgb_image)
    return seen


def _pause(window, qtbot) -> None:
    """The user looks at the sample: longer than the prefetch's quiet time, until it is done."""
    qtbot.wait(prefetch.QUIET_MS + 60)
    assert window.renderer.prefetcher.wait_idle(20)


def found_prepared(monkeypatch) -> list[int]:
    """One entry per drawing that found its layer prepared (a real PreparedLayers.get, spied)."""
    from masklens.gui.canvas.prepared import PreparedLayers

    found: list[int] = []
    get = PreparedLayers.get

    def spied(self, *args, **kwargs):
        hit = get(self, *args, **kwargs)
        if hit is not None:
            found.append(1)
        return hit

    monkeypatch.setattr(PreparedLayers, "get", spied)
    return found


def _panel_pixels(window) -> list[np.ndarray]:
    out = []
    for panel in window.sample_view.panels:
        image = panel.canvas.viewport().grab().toImage()
        ptr = image.constBits()
        out.append(np.frombuffer(ptr, np.uint8, image.sizeInBytes()).copy())
    return out


def test_after_a_pause_a_switch_decodes_no_mask_and_draws_what_the_gui_thread_draws(
        window, qtbot, gui_thread_work, no_internal_errors, monkeypatch):
    found = found_prepared(monkeypatch)
    assert window.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    table = window.browser.table
    rect = table.visualRect(table.model().index(1, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    drawn_ready = 0
    for _ in range(3):
        _pause(window, qtbot)
        gui_thread_work.clear()
        hits = len(found)
        qtbot.keyClick(table, Qt.Key.Key_Down)
        qtbot.waitUntil(lambda: window.sample_view.drawing_left() == 0)
        on_gui = [what for name, what in gui_thread_work if name == threading.main_thread().name]
        assert on_gui == [], f"made on the GUI thread at the switch: {on_gui}"
        layers = [n for p in window.sample_view.panels for n in p.canvas.layer_names()]
        drawn_ready += len(found) - hits
        assert len(found) - hits == len(layers)  # every layer shown was made ahead
        # the same pixels as drawing it all on the GUI thread, from nothing prepared
        prefetched = _panel_pixels(window)
        window.store.prepared = type(window.store.prepared)()
        window.store.masks.clear()
        for panel in window.sample_view.panels:
            panel.canvas.label_memo.clear()
        sample_view._PIXMAPS.clear()
        window.renderer.render()
        assert any(what == "mask" for name, what in gui_thread_work if name == threading.main_thread().name)
        assert all(np.array_equal(a, b) for a, b in zip(prefetched, _panel_pixels(window), strict=True))
    assert drawn_ready > 0, "no layer was drawn from the prefetch: the test proves nothing"


def _image_ref(tmp_path, name: str) -> ImageRef:
    path = tmp_path / name
    cv2.imwrite(str(path), np.full((40, 60, 3), 90, np.uint8))
    return ImageRef(name, path, 40, 60)


def test_follow_up_work_waits_for_a_pause_and_a_newer_request_drops_it(tmp_path, monkeypatch):
    monkeypatch.setattr(prefetch, "QUIET_MS", 600_000)  # a pause that does not come in this test
    store = ImageStore()
    decoded: list[tuple[int, int]] = []
    arrived = threading.Event()
    fetcher = ImagePrefetcher(store, on_decoded=lambda px: decoded.append(px.shape[:2]) or arrived.set())
    done: list[str] = []
    a, b = _image_ref(tmp_path, "a.png"), _image_ref(tmp_path, "b.png")
    try:
        fetcher.input_arrived()
        fetcher.request([a, (a, lambda px: done.append("a"))])
        assert arrived.wait(30) and store.has_image(a)  # the image itself at once,
        assert done == [] and not fetcher.idle()  # its follow-up held back until the pause
        monkeypatch.setattr(prefetch, "QUIET_MS", 50)
        fetcher.input_arrived()  # the user steps on: a new request before the pause
        fetcher.request([b, (b, lambda px: done.append("b"))])
        assert fetcher.wait_idle(30)
        assert done == ["b"]  # a's follow-up dropped, b's run after the (now short) pause
        assert decoded == [(40, 60), (40, 60)]  # each new image handed over once
    finally:
        fetcher.close()


def test_the_gallery_prefetches_nothing_and_the_sample_tab_prefetches_when_shown(
        window, qtbot, no_internal_errors, monkeypatch):
    """The gallery draws no full image: while it is shown, a switch queues no decode (it would
    only compete with the gallery's own scrolling); back on the Sample tab the neighbours are."""
    assert window.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    requests: list[list] = []
    real = window.renderer.prefetcher.request
    monkeypatch.setattr(window.renderer.prefetcher, "request", lambda items: requests.append(list(items)) or real(items))
    window.tabs.setCurrentWidget(window.gallery)
    qtbot.wait(50)
    requests.clear()
    for index in (2, 3, 4):
        window.state.set_index(index)
        qtbot.wait(30)
    assert requests == []
    window.tabs.setCurrentWidget(window.sample_view)
    qtbot.waitUntil(lambda: bool(requests))
    nxt, prev = window.renderer.neighbours()
    wanted = {r.key for j in (nxt, prev) for r in window.state.benchmark.samples[j].images.values()}
    asked = {(item[0] if isinstance(item, tuple) else item).key for item in requests[-1]}
    assert wanted <= asked
