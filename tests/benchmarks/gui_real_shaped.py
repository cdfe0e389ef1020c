"""Real-shaped lines of bench_gui.py: every interaction from the input to the settled
window (browser, card, canvas) on SA-Co/Gold-shaped sets of 1,200 and 20,000 entries at 1280×720
(0–6 irregular polygon instances per entry, three annotators) and a CAFE-shaped set of 2,146
pairs at 1024², each with image files, in the real window.

For a t step, a τ step (CAFE), a sample switch (Down in the list), a filter change (a preset
chosen, a typed expression) and a sort (a header click) it prints the median and the worst
time until settled and the median and worst GUI stall (the longest gap of a 2 ms GUI-thread
timer), against the scorer's own time for the same step (``Scorer.readouts``) in the same run.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

BUDGET_MS = 50.0


def write_images(folder: Path, names: list[str], height: int, width: int) -> None:
    """Photo-like JPEGs (smooth colour fields with texture): decoding costs what a photo costs."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for i, name in enumerate(sorted(set(names))):
        small = rng.integers(0, 255, (height // 40 + 1, width // 40 + 1, 3), dtype=np.uint8)
        img = cv2.resize(small, (width, height), interpolation=cv2.INTER_CUBIC)
        img = cv2.add(img, rng.integers(0, 24, img.shape, dtype=np.uint8))
        cv2.imwrite(str(folder / name), img, [cv2.IMWRITE_JPEG_QUALITY, 85 + i % 5])


def settle(w: Any) -> None:
    """Until the window has nothing left to do for the last input: events, re-score, paints."""
    QApplication.processEvents()
    while w.rescoring.pending or w.jobs.busy:
        QApplication.processEvents()
        time.sleep(0.0005)
    QApplication.processEvents()


def measure(w: Any, meter: Any, act: Callable[[int], None], repeat: int,
            prepare: Callable[[], None] | None = None) -> tuple[list[float], list[float], list[float]]:
    """(times until settled, GUI stalls, GUI-thread CPU times) in ms of ``act(i)`` for i in
    range(repeat), after one warm-up call (``prepare()`` before each, untimed). The CPU time is
    what the GUI thread itself spent: on a loaded machine the wall times grow with the load, it
    much less."""
    act(-1)
    settle(w)
    times, stalls, cpu = [], [], []
    for i in range(repeat):
        if prepare is not None:
            prepare()
            settle(w)
        meter.start()
        t0, c0 = time.perf_counter(), time.thread_time()
        act(i)
        settle(w)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
        stalls.append(meter.stop())
    return times, stalls, cpu


def line(name: str, times: list[float], stalls: list[float], cpu: list[float], scorer_ms: float | None) -> str:
    worst = max(stalls)
    over = "" if statistics.median(times) <= BUDGET_MS and worst <= BUDGET_MS else "  OVER 50 ms"
    base = f" | scorer {scorer_ms:6.1f} ms" if scorer_ms is not None else ""
    return (f"    {name:<18} settled median {statistics.median(times):6.1f} worst {max(times):6.1f} ms"
            f" | GUI stall median {statistics.median(stalls):5.1f} worst {worst:5.1f} ms"
            f" | GUI CPU median {statistics.median(cpu):5.1f} ms{base}{over}")


def interactions(w: Any, meter: Any, params: dict[str, tuple[float, float]], expression: str,
                 sort_column: str, repeat: int = 7) -> list[str]:
    """The lines for one opened set: each slider, sample switch, filter, sort."""
    st, b = w.state, w.browser
    scorer = st.scorers[st.active]
    out = []
    for name, (lo, hi) in params.items():
        values = [lo, hi] * (repeat + 1)
        t_scorer = statistics.median(
            _timed(lambda v=v, name=name: scorer.rescore({**st.params, name: v})) for v in values[:5])
        symbol = "t" if name == "score_threshold" else "τ"
        out.append(line(f"{symbol} step", *measure(
            w, meter, lambda i, name=name, values=values: w.readout_panel.sliders.set_value(name, values[i + 1]),
            repeat), t_scorer))
    table = b.table
    table.setFocus(Qt.FocusReason.OtherFocusReason)

    def switch(i: int) -> None:
        key = Qt.Key.Key_Down if (i // 3) % 2 == 0 else Qt.Key.Key_Up
        from PySide6.QtTest import QTest

        QTest.keyClick(table, key)

    out.append(line("sample switch", *measure(w, meter, switch, repeat), None))
    out += cold_switches(w, meter, switch, repeat)
    presets = [b.presets.itemText(i) for i in range(b.presets.count())]
    pick = [presets.index(p) for p in presets[2:4]] or [0]

    def preset(i: int) -> None:
        b.presets.setCurrentIndex(pick[i % len(pick)] if i % 2 == 0 else 0)

    out.append(line("filter (preset)", *measure(w, meter, preset, repeat), None))

    def typed(i: int) -> None:
        b.set_expression(expression if i % 2 == 0 else expression.replace("<", ">="))

    out.append(line("filter (typed)", *measure(w, meter, typed, repeat), None))
    b.expression.clear()
    col = column_named(b, sort_column)

    def sort(i: int) -> None:
        order = Qt.SortOrder.AscendingOrder if i % 2 == 0 else Qt.SortOrder.DescendingOrder
        table.sortByColumn(col if i % 3 != 2 else 1, order)

    out.append(line(f"sort ({sort_column})", *measure(w, meter, sort, repeat), None))
    table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
    return out


def cold_switches(w: Any, meter: Any, switch: Callable[[int], None], repeat: int) -> list[str]:
    """A sample switch with every image cold (as on a set with one image per entry), the user
    pausing between presses: with the neighbours prefetched, and without (GUI decode)."""
    prefetcher = w.renderer.prefetcher

    def cold(prefetch: bool) -> Callable[[], None]:
        def prepare() -> None:  # untimed: the pause between two presses
            w.store.images.clear()
            if prefetch:
                w.renderer._prefetch_neighbours()
                prefetcher.wait_idle(5)
        return prepare

    lines = []
    for prefetch in ((False, True) if prefetcher is not None else (False,)):
        if prefetcher is not None:
            request = prefetcher.request
            if not prefetch:
                prefetcher.request = lambda refs: 0
        try:
            name = "switch, cold+pref." if prefetch else "switch, cold image"
            lines.append(line(name, *measure(w, meter, switch, repeat, cold(prefetch)), None))
        finally:
            if prefetcher is not None:
                prefetcher.request = request
    return lines


def column_named(browser: Any, name: str) -> int:
    """The list's column headed ``name`` (by its headers)."""
    proxy = browser.table.model()
    return next(c for c in range(proxy.columnCount()) if proxy.headerData(c, Qt.Orientation.Horizontal) == name)


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def open_window(kind: str, args: list[str]) -> Any:
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    w = MainWindow(Settings(), persist=False)
    w.resize(1600, 1000)
    w.show()
    QApplication.processEvents()
    assert w.commands.open_benchmark(kind, args, sync=True)
    QApplication.processEvents()
    w.state.set_index(1)
    settle(w)
    return w


def bench_saco(tmp: Path, n: int, meter: Any) -> None:
    from scale_synth import synth_saco

    t0 = time.perf_counter()
    files, preds = synth_saco(21, n, size=720, width=1280, n_images=40, max_pred=6)
    gts = []
    for a, f in enumerate(files):
        gts += ["--gt", str(tmp / f"gold_{a}.json")]
        (tmp / f"gold_{a}.json").write_text(json.dumps(f))
    (tmp / "pred.json").write_text(json.dumps(preds))
    write_images(tmp / "images", [im["file_name"] for im in files[0]["images"]], 720, 1280)
    made = time.perf_counter() - t0
    w = open_window("pcs", [*gts, "--pred", str(tmp / "pred.json"), "--images", str(tmp / "images")])
    print(f"  SA-Co/Gold-shaped, {n:,} entries at 1280×720, 0–6 polygon instances, 3 annotators"
          f" (made in {made:.1f} s)")
    for text in interactions(w, meter, {"score_threshold": (0.45, 0.55)}, "local_F1 < 0.5", "max_score"):
        print(text)
    w.close()
    QApplication.processEvents()


def bench_cafe(tmp: Path, meter: Any) -> None:
    from scale_synth import synth_cafe_fast

    data, preds = synth_cafe_fast(21, 2146, size=1024, n_images=40)
    (tmp / "ann.json").write_text(json.dumps(data))
    (tmp / "pred.json").write_text(json.dumps(preds))
    write_images(tmp / "images", [im["file_name"] for im in data["images"]], 1024, 1024)
    w = open_window("cafe", ["--ann", str(tmp / "ann.json"), "--pred", str(tmp / "pred.json"),
                             "--images", str(tmp / "images")])
    print("  CAFE-shaped, 2,146 pairs at 1024², 0–5 instances per prompt")
    for text in interactions(w, meter, {"score_threshold": (0.45, 0.55), "iou_threshold": (0.3, 0.5)},
                             "pos_max_score < 0.5", "pos_max_iou"):
        print(text)
    w.close()
    QApplication.processEvents()


def bench_real_shaped(tmp: Path, meter: Any, sizes: tuple[int, ...] = (1_200, 20_000)) -> None:
    import os

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"real-shaped interactions, input → settled window (target ≤ {BUDGET_MS:.0f} ms; median and"
          f" worst of 7, after a warm-up; {os.cpu_count()} CPUs, load average {load:.1f} at the start)")
    for n in sizes:
        (tmp / f"saco{n}").mkdir()
        bench_saco(tmp / f"saco{n}", n, meter)
    (tmp / "cafe").mkdir()
    bench_cafe(tmp / "cafe", meter)
