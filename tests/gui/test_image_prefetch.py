"""The neighbouring samples' images are decoded off the GUI thread: after a sample is
shown, the next and previous samples in the list's order are decoded by the prefetch thread, and a
switch to one of them (a real key press) decodes nothing on the GUI thread; the shared image cache
stays within its byte budget and makes each value once under concurrent use."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from PySide6.QtCore import Qt

from masklens.gui.canvas import image_cache
from masklens.gui.canvas.image_cache import ByteLRU


@pytest.fixture
def decodes(monkeypatch):
    """Every real decode of an image file: (thread name, path), in order."""
    seen: list[tuple[str, str]] = []
    real = image_cache.read_rgb

    def read_rgb(path, expected_size=None):
        seen.append((threading.current_thread().name, str(path)))
        return real(path, expected_size)

    monkeypatch.setattr(image_cache, "read_rgb", read_rgb)
    return seen


def paths_of(window, index: int) -> set[str]:
    return {str(r.path) for r in window.state.benchmark.samples[index].images.values()}


def settle_prefetch(window, qtbot) -> None:
    qtbot.wait(3 * 20)  # the window queues the neighbours one short timer after drawing
    assert window.renderer.prefetcher.wait_idle(20)


@pytest.mark.parametrize("kind", ["cafe", "hallusegbench"])  # one image file per sample, two
def test_a_switch_finds_the_next_image_prefetched_and_decodes_nothing_on_the_gui_thread(
        window, qtbot, decodes, kind, no_internal_errors, computed):
    assert window.commands.open_demo(kind, sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    table = window.browser.table
    rect = table.visualRect(table.model().index(2, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    settle_prefetch(window, qtbot)
    by_prefetch = [p for name, p in decodes if name == "masklens-prefetch"]
    for _ in range(3):
        nxt, prev = window.renderer.neighbours()
        rows = list(window.browser.proxy.visible_rows())
        pos = rows.index(window.state.index)
        assert (nxt, prev) == (rows[pos + 1], rows[pos - 1])  # the list's order
        for j in (nxt, prev):
            assert all(window.store.has_image(r) for r in window.state.benchmark.samples[j].images.values())
        decodes.clear()
        loads = computed(window.store.images)
        qtbot.keyClick(table, Qt.Key.Key_Down)
        assert window.state.index == nxt
        qtbot.waitUntil(lambda: window.sample_view.panels and window.sample_view.panels[0].canvas.sceneRect().width() > 0)
        gui = [p for name, p in decodes if name == threading.main_thread().name]
        assert not (set(gui) & paths_of(window, nxt)), "the prefetched image was decoded again on the GUI thread"
        settle_prefetch(window, qtbot)
        # only the new neighbour's images were decoded, on the prefetch thread
        assert all(name == "masklens-prefetch" for name, _p in decodes)
        assert computed(window.store.images) - loads == len({p for _n, p in decodes})
        by_prefetch += [p for _n, p in decodes]
    assert by_prefetch, "nothing was prefetched: the test proves nothing"


def test_the_prefetch_follows_the_sorted_order(window, qtbot, decodes):
    assert window.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    table = window.browser.table
    header = table.horizontalHeader()
    col = next(c for c in range(table.model().columnCount())
               if table.model().headerData(c, Qt.Orientation.Horizontal) == "pos_max_iou")
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=header.viewport().rect().topLeft() + _header_centre(header, col))
    rows = list(window.browser.proxy.visible_rows())
    assert rows != sorted(rows)  # the sort changed the order
    rect = table.visualRect(table.model().index(3, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.state.index == rows[3]
    settle_prefetch(window, qtbot)
    assert window.renderer.neighbours() == [rows[4], rows[2]]
    prefetched = {p for name, p in decodes if name == "masklens-prefetch"}
    assert prefetched and prefetched == (paths_of(window, rows[4]) | paths_of(window, rows[2]))


def _header_centre(header, col: int):
    from PySide6.QtCore import QPoint

    return QPoint(header.sectionViewportPosition(col) + header.sectionSize(col) // 2, header.height() // 2)


def test_the_cache_is_bounded_and_makes_each_value_once_under_concurrent_use():
    item = 100 * 1000  # bytes per value
    lru = ByteLRU(budget_bytes=10 * item)
    made: dict[int, int] = {}
    making: set[int] = set()
    overlap = []  # a key made by two threads at once
    lock = threading.Lock()
    peak = [0]

    def make(k: int):
        with lock:
            if k in making:
                overlap.append(k)
            making.add(k)
            made[k] = made.get(k, 0) + 1
        time.sleep(0.002)  # a decode: other threads run meanwhile
        with lock:
            making.discard(k)
        return np.full(item, k % 251, dtype=np.uint8)

    wrong = []

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for k in rng.integers(0, 30, 150):
            value = lru.get(int(k), lambda k=int(k): make(k))
            if value.nbytes != item or value[0] != k % 251:
                wrong.append(int(k))
            peak[0] = max(peak[0], lru.nbytes)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong and not overlap
    assert lru.nbytes <= 10 * item and peak[0] <= 10 * item and len(lru) <= 10


def test_a_waiter_takes_the_value_another_thread_makes_and_makes_it_if_that_failed():
    lru = ByteLRU(1 << 20)
    started, release = threading.Event(), threading.Event()
    calls = []

    def slow():
        calls.append("slow")
        started.set()
        release.wait(5)
        return np.ones(10, dtype=np.uint8)

    t = threading.Thread(target=lambda: lru.get("k", slow))
    t.start()
    assert started.wait(5)
    got = []
    waiter = threading.Thread(target=lambda: got.append(lru.get("k", lambda: calls.append("again") or np.zeros(1))))
    waiter.start()
    time.sleep(0.05)
    assert got == []  # waiting for the value being made, not making its own
    release.set()
    t.join()
    waiter.join()
    assert calls == ["slow"] and got[0].sum() == 10

    def broken():
        started2.set()
        release2.wait(5)
        raise OSError("unreadable")

    started2, release2 = threading.Event(), threading.Event()
    errors = []
    t = threading.Thread(target=lambda: _catch(errors, lambda: lru.get("b", broken)))
    t.start()
    assert started2.wait(5)
    waiter = threading.Thread(target=lambda: got.append(lru.get("b", lambda: np.full(3, 7, dtype=np.uint8))))
    waiter.start()
    time.sleep(0.05)
    release2.set()
    t.join()
    waiter.join()
    assert isinstance(errors[0], OSError) and got[-1].tolist() == [7, 7, 7]


def _catch(errors: list, fn) -> None:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the test inspects it
        errors.append(exc)
