"""Gallery benchmark (plain script, run by `make bench`; offscreen Qt): scrolling 100,000
samples and selecting all of them.

A 100,000-sample scored toy benchmark (masks from boxes, no image files: grey tiles with the
overlays) in the real window at 1600 × 1000 with the Gallery tab shown, the thumbnail thread
drawing the tiles that come into view meanwhile. Each way to scroll, ``STEPS`` times, each step
timed from the input until the window has painted (then a user's 4 ms pause):

* wheel (the scroll bar's single step × 3), a drag of the scroll bar's handle to a random place
  ("jump"), End / Home (alternating), PgDn pressed once per step (it moves the current sample:
  a sample switch of the whole window), and PgDn held down (auto-repeated presses, then the
  release: the window switches sample once, at the end — that last step counted too), and PgDn
  pressed at a reader's pace (each press once the page's thumbnails are drawn, at most 1 s);
* the thumbnails drawn meanwhile, per way: after an input the thumbnail thread waits
  (``thumbnails.YIELD_MS``, at most ``HELD_MAX_MS`` while inputs keep coming), so at the
  bench's pace (a step every ~30 ms) few are drawn until the keys stop;
* per way: the median and the worst GUI stall of a step (the longest gap between ticks of a
  2 ms timer, :class:`bench_gui.StallMeter`, i.e. how long the window froze; and the most
  GUI-thread CPU between two ticks: that stall on a core of its own) and the median and
  worst GUI-thread CPU time of a step, the work it left for the next event-loop turn included
  (``time.thread_time``: on a shared machine wall times include waiting for a core); target: no
  stall over 50 ms;
* baseline, same process, same steps: a plain ``QListView`` in icon mode (uniform item sizes,
  the same grid size) over the same 100,000 ids in a ``QStringListModel`` (Qt's C++ view and
  model: no thumbnails, no window around it);
* Ctrl+A at 100,000 and at 3,000 samples (a second benchmark opened in the same window), and at
  3,000 one verdict key for all selected samples and its Ctrl+Z; baseline: ``selectAll()`` of
  the plain list. Target for Ctrl+A at 3,000: ≤ 50 ms.

``BENCH_GALLERY_N`` changes the number of samples (e.g. 20000 for a quicker run).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MASKLENS_CONFIG_DIR", tempfile.mkdtemp(prefix="masklens-bench-"))
os.environ.setdefault("XDG_DATA_HOME", tempfile.mkdtemp(prefix="masklens-bench-data-"))  # review store
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gui"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from PySide6.QtCore import QSize, QStringListModel, Qt  # noqa: E402
from PySide6.QtGui import QKeyEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QListView  # noqa: E402

N = int(os.environ.get("BENCH_GALLERY_N", "100000"))
SMALL = 3000
STEPS = 40
TARGET_MS = 50.0


def settle(app: QApplication) -> None:
    for _ in range(3):
        app.processEvents()


def key(view, k, mods=Qt.KeyboardModifier.NoModifier, text: str = "", repeat: bool = False,
        release: bool = False) -> None:
    """A key as the keyboard sends it (QTest: shortcuts included); an auto-repeated press or a
    release as a QKeyEvent of its own (QTest has no auto-repeat): ShortcutOverride, then the press."""
    target = view.viewport() if hasattr(view, "tiles") else view
    if not repeat and not release:
        from PySide6.QtTest import QTest

        QTest.keyPress(target, k, mods)  # no release: a release ends a held key's move early
        return
    if not release:
        QApplication.sendEvent(target, QKeyEvent(QKeyEvent.Type.ShortcutOverride, k, mods, text, repeat))
    QApplication.sendEvent(target, QKeyEvent(QKeyEvent.Type.KeyRelease if release else QKeyEvent.Type.KeyPress,
                                             k, mods, text, repeat))


def steps_of(way: str, n: int):
    """``STEPS`` callables ``step(view)`` for one way to scroll."""
    rng = random.Random(1)

    def wheel(view) -> None:
        bar = view.verticalScrollBar()
        bar.setValue(bar.value() + 3 * bar.singleStep())

    def jump(view) -> None:
        bar = view.verticalScrollBar()
        bar.setValue(rng.randint(bar.minimum(), bar.maximum()))

    def end_home(i: int):
        return lambda view: key(view, Qt.Key.Key_End if i % 2 == 0 else Qt.Key.Key_Home)

    def pgdn(view) -> None:
        key(view, Qt.Key.Key_PageDown)

    def held(view) -> None:
        key(view, Qt.Key.Key_PageDown, repeat=True)

    def release(view) -> None:
        key(view, Qt.Key.Key_PageDown, release=True)

    return {"wheel (3 lines)": [wheel] * STEPS, "jump (drag handle)": [jump] * STEPS,
            "End / Home": [end_home(i) for i in range(STEPS)], "PgDn pressed": [pgdn] * STEPS,
            "PgDn held": [pgdn] + [held] * (STEPS - 2) + [release], "PgDn, page read": [pgdn] * STEPS}[way]


def read_page(app: QApplication, view) -> None:
    """A reader's pace: wait until the thumbnails asked for are drawn (at most 1 s)."""
    loader = getattr(getattr(view, "tiles", None), "loader", None)
    end = time.perf_counter() + 1.0
    while loader is not None and time.perf_counter() < end:
        app.processEvents()
        view.viewport().repaint()
        if not loader.pending() and None not in (view.tiles.thumbnail(src) for src in view.painted):
            return
        time.sleep(0.005)


def run_steps(app: QApplication, view, steps: list, meter, read: bool = False) -> dict[str, float]:
    """Median / worst stall and GUI-thread CPU (ms) of ``steps`` on ``view`` (``read``: each
    step once the thumbnails are drawn)."""
    stalls, cpu, turns = [], [], []
    for step in steps:
        if read:
            read_page(app, view)
        c0 = time.thread_time()
        meter.start()
        step(view)
        view.viewport().repaint()  # the paint the step asked for, now
        app.processEvents()  # and whatever it posted (the thumbnails that arrived meanwhile)
        time.sleep(0.004)  # a user's pace: the thumbnail thread runs between steps
        app.processEvents()  # (and what the step left for the next turn: the list's scroll)
        cpu.append((time.thread_time() - c0) * 1000)  # the sleep is no CPU time
        stalls.append(meter.stop())
        turns.append(meter.cpu_worst)
    return {"stall": statistics.median(stalls), "stall_max": max(stalls),
            "cpu": statistics.median(cpu), "cpu_max": max(cpu),
            "turn": statistics.median(turns), "turn_max": max(turns)}


def plain_list(ids: list[str], size: QSize) -> QListView:
    """The baseline: Qt's own icon view over the same ids, tiles of the gallery's size."""
    from masklens.gui.gallery.grid import TILE_H, TILE_W

    view = QListView()
    view.setViewMode(QListView.ViewMode.IconMode)
    view.setUniformItemSizes(True)
    view.setGridSize(QSize(TILE_W, TILE_H))
    view.setResizeMode(QListView.ResizeMode.Adjust)
    view.setMovement(QListView.Movement.Static)
    view.setSelectionMode(QListView.SelectionMode.ExtendedSelection)
    model = QStringListModel(ids, view)
    view.setModel(model)
    view.resize(size)
    view.show()
    view.setCurrentIndex(model.index(0, 0))
    return view


def timed(app: QApplication, w, action) -> tuple[float, float]:
    """(wall, GUI-thread CPU) in ms of ``action()`` until the window has painted."""
    t0, c0 = time.perf_counter(), time.thread_time()
    action()
    settle(app)  # the layout and paint requests it posted (what changed is painted, not all)
    return (time.perf_counter() - t0) * 1000, (time.thread_time() - c0) * 1000


def select_all_times(app: QApplication, w, grid, repeat: int = 5) -> tuple[float, float]:
    """Median (wall, CPU) of Ctrl+A in the gallery (Esc between: only the current one)."""
    wall, cpu = [], []
    for _ in range(repeat):
        key(grid, Qt.Key.Key_Escape)
        settle(app)
        a, b = timed(app, w, lambda: key(grid, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier))
        assert grid.selected_count() == grid.count()
        wall.append(a)
        cpu.append(b)
    return statistics.median(wall), statistics.median(cpu)


def open_toy(app: QApplication, w, files: dict) -> float:
    t0 = time.perf_counter()
    w.commands.open_benchmark("toy", ["--ann", str(files["ann"]), "--pred", str(files["pred"])], sync=True)
    settle(app)
    return time.perf_counter() - t0


def show_gallery(app: QApplication, w):
    w.tabs.setCurrentWidget(w.gallery)
    w.message_bar.hide()
    settle(app)
    grid = w.gallery.grid
    grid.setFocus()
    grid.move_to(0)
    settle(app)
    return grid


def main() -> int:
    import pytest
    import toykind
    from bench_gui import StallMeter

    app = QApplication.instance() or QApplication([])
    toykind.install(pytest.MonkeyPatch())
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    tmp = Path(tempfile.mkdtemp(prefix="masklens-bench-gallery-"))
    w = MainWindow(Settings(), persist=False)
    w.resize(1600, 1000)
    w.show()
    opened = open_toy(app, w, toykind.write_toy(tmp / "toy", n=N, images=False))
    grid = show_gallery(app, w)
    ids = [s.id for s in w.browser.model.samples]
    base = plain_list(ids, grid.viewport().size())
    w.activateWindow()
    grid.setFocus()
    settle(app)
    meter = StallMeter()
    print(f"gallery on {N:,} scored samples, window 1600 × 1000 ({len(grid.visible_range())} tiles on "
          f"screen; opened and scored in {opened:.1f} s); {STEPS} steps per way; target: no GUI stall "
          f"over {TARGET_MS:.0f} ms")
    print("  baseline: a plain QListView (icon mode, uniform sizes, same grid) over the same ids")
    worst = worst_turn = 0.0
    loader = w.gallery.loader
    drawn: list[str] = []  # every thumbnail the loader handed over
    loader.ready.connect(lambda sid, *_: drawn.append(sid))
    for way in ("wheel (3 lines)", "jump (drag handle)", "End / Home", "PgDn pressed", "PgDn held",
                "PgDn, page read"):
        grid.verticalScrollBar().setValue(0)
        grid.move_to(0)
        base.verticalScrollBar().setValue(0)
        base.setCurrentIndex(base.model().index(0, 0))
        settle(app)
        made = len(drawn)
        g = run_steps(app, grid, steps_of(way, N), meter, read=way == "PgDn, page read")
        made = len(drawn) - made
        b = run_steps(app, base, steps_of(way, N), meter)
        worst = max(worst, g["stall_max"])
        print(f"  {way:19s} gallery: stall median {g['stall']:5.1f} ms, worst {g['stall_max']:5.1f} ms; "
              f"GUI CPU median {g['cpu']:5.1f}, worst {g['cpu_max']:5.1f} ms | QListView: stall median "
              f"{b['stall']:5.1f}, worst {b['stall_max']:5.1f} ms; CPU median {b['cpu']:5.1f} ms | "
              f"CPU gallery / QListView {g['cpu'] / max(b['cpu'], 1e-3):.1f}x")
        print(f"  {'':19s} gallery's longest GUI-thread CPU between two timer ticks (the stall on a core "
              f"of its own): median {g['turn']:5.1f}, worst {g['turn_max']:5.1f} ms | QListView "
              f"{b['turn']:5.1f}, worst {b['turn_max']:5.1f} ms; thumbnails drawn meanwhile {made}")
        worst_turn = max(worst_turn, g["turn_max"])
    loader, cache = w.gallery.loader, w.gallery.cache
    print(f"  thumbnails drawn {len(drawn):,} (of {N:,} samples), cached {len(cache)} = "
          f"{cache.bytes / 2**20:.1f} MiB (bound {cache.budget / 2**20:.0f} MiB); worst gallery stall "
          f"{worst:.1f} ms ({'within' if worst <= TARGET_MS else 'OVER'} the {TARGET_MS:.0f} ms target); "
          f"most GUI-thread CPU between two ticks {worst_turn:.1f} ms")

    big_wall, big_cpu = select_all_times(app, w, grid)
    b_wall, b_cpu = timed(app, base, base.selectAll)
    print(f"  Ctrl+A at {N:,}: {big_wall:.1f} ms wall, {big_cpu:.1f} ms GUI CPU (median of 5) | "
          f"QListView.selectAll {b_wall:.1f} ms wall, {b_cpu:.1f} ms CPU")
    base.close()

    open_toy(app, w, toykind.write_toy(tmp / "small", n=SMALL, images=False))
    grid = show_gallery(app, w)
    small_base = plain_list([s.id for s in w.browser.model.samples], grid.viewport().size())
    w.activateWindow()  # the keys (and the window's shortcuts: Ctrl+Z) go to the window again
    grid.setFocus()
    settle(app)
    s_wall, s_cpu = select_all_times(app, w, grid)
    sb_wall, sb_cpu = timed(app, small_base, small_base.selectAll)
    print(f"  Ctrl+A at {SMALL:,}: {s_wall:.1f} ms wall, {s_cpu:.1f} ms GUI CPU (median of 5; target ≤ "
          f"{TARGET_MS:.0f} ms) | QListView.selectAll {sb_wall:.1f} ms wall, {sb_cpu:.1f} ms CPU")
    if w.review_panel is not None:
        from masklens.core.review.locations import benchmark_key

        store, bench = w.state.review_store, benchmark_key(w.state.benchmark)
        v_wall, v_cpu = timed(app, w, lambda: key(grid, Qt.Key.Key_K, text="k"))
        recorded = len(store.current(bench))
        u_wall, u_cpu = timed(app, w, lambda: key(grid, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier))
        print(f"  at {SMALL:,} selected: one verdict key for all {v_wall:.0f} ms wall ({v_cpu:.0f} ms CPU; "
              f"{recorded:,} current verdicts after it), its Ctrl+Z {u_wall:.0f} ms wall ({u_cpu:.0f} ms CPU; "
              f"{len(store.current(bench)):,} after it)")
    small_base.close()
    from masklens.gui.app import _finish_jobs

    _finish_jobs(app, w)
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
