"""Gallery scroll benchmark (plain script, run by `make bench`; offscreen Qt).

A 100,000-sample scored toy benchmark (masks from boxes, no image files: grey tiles with the
overlays) in the real window, the Gallery tab shown at 1600 × 1000. Three ways to scroll, each
step timed from the input until the viewport has painted, while the thumbnail thread draws
the tiles that come into view:

* wheel steps (the scroll bar's single step), PgDn key presses, and jumps to random places
  (a drag of the scroll bar's handle across 100,000 samples);
* per way: the median step, the worst step and the longest GUI-thread stall (the longest
  gap between ticks of a 2 ms timer, :class:`bench_gui.StallMeter`), target ≤ 50 ms;
* baseline, same process, same rows: the same steps on the sample list (a QTableView over
  the same proxy), printed as the ratio gallery / list.
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
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gui"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QKeyEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

N = int(os.environ.get("BENCH_GALLERY_N", "100000"))
STEPS = 60


def settle(app: QApplication) -> None:
    for _ in range(3):
        app.processEvents()


def step_times(app: QApplication, view, steps: list, meter) -> tuple[float, ...]:
    """(median step, worst step, longest stall, median and worst GUI-thread CPU per step) in ms
    over ``steps`` (callables on ``view``). The CPU time is the GUI thread's own
    (``time.thread_time``): on a shared machine the wall times include waiting for a core."""
    times, cpu = [], []
    meter.start()
    for step in steps:
        t0, c0 = time.perf_counter(), time.thread_time()
        step(view)
        view.viewport().repaint()  # the paint the step asked for, now
        app.processEvents()  # and the thumbnails that arrived meanwhile
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
        time.sleep(0.004)  # a user's pace: the thumbnail thread runs between steps
        app.processEvents()
    stall = meter.stop()
    return statistics.median(times), max(times), stall, statistics.median(cpu), max(cpu)


def wheel(view) -> None:
    bar = view.verticalScrollBar()
    bar.setValue(bar.value() + 3 * bar.singleStep())


def page_down(view) -> None:
    key = QKeyEvent(QKeyEvent.Type.KeyPress, Qt.Key.Key_PageDown, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(view.viewport() if hasattr(view, "tiles") else view, key)


def jumper(seed: int):
    rng = random.Random(seed)

    def jump(view) -> None:
        bar = view.verticalScrollBar()
        bar.setValue(rng.randint(bar.minimum(), bar.maximum()))

    return jump


def main() -> int:
    import pytest
    import toykind
    from bench_gui import StallMeter

    app = QApplication.instance() or QApplication([])
    toykind.install(pytest.MonkeyPatch())
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    tmp = Path(tempfile.mkdtemp(prefix="masklens-bench-gallery-"))
    files = toykind.write_toy(tmp / "toy", n=N, images=False)
    w = MainWindow(Settings(), persist=False)
    w.resize(1600, 1000)
    w.show()
    t0 = time.perf_counter()
    w.open_benchmark("toy", ["--ann", str(files["ann"]), "--pred", str(files["pred"])], sync=True)
    settle(app)
    print(f"gallery scroll on {N:,} scored samples at 1600 × 1000 (opened and scored in "
          f"{time.perf_counter() - t0:.1f} s); {STEPS} steps per way")
    w.tabs.setCurrentWidget(w.gallery)
    settle(app)
    grid, table = w.gallery.grid, w.browser.table
    grid.setFocus()
    meter = StallMeter()
    ways = [("wheel (3 lines)", [wheel] * STEPS), ("PgDn key", [page_down] * STEPS),
            ("jump anywhere", [jumper(1)] * STEPS)]
    worst = 0.0
    for name, steps in ways:
        grid.verticalScrollBar().setValue(0)
        table.verticalScrollBar().setValue(0)
        g_med, g_max, g_stall, g_cpu, g_cpu_max = step_times(app, grid, steps, meter)
        table.setFocus()
        t_med, t_max, t_stall, t_cpu, _ = step_times(
            app, table, [jumper(1)] * STEPS if name.startswith("jump") else steps, meter)
        grid.setFocus()
        worst = max(worst, g_stall)
        print(f"  {name:16s} gallery: median {g_med:5.1f} ms, worst step {g_max:5.1f} ms, longest stall "
              f"{g_stall:5.1f} ms (target ≤ 50); GUI-thread CPU median {g_cpu:5.1f} ms, worst {g_cpu_max:5.1f} ms"
              f" | sample list: median {t_med:5.1f} ms (CPU {t_cpu:5.1f}), worst {t_max:5.1f} ms, "
              f"stall {t_stall:5.1f} ms | gallery/list median {g_med / max(t_med, 1e-3):.2f}x")
    loader, cache = w.gallery.loader, w.gallery.cache
    print(f"  tiles painted per frame {len(grid.painted)}, thumbnails drawn {loader.made} "
          f"(of {N:,} samples), cached {len(cache)} = {cache.bytes / 2**20:.1f} MiB "
          f"(bound {cache.budget / 2**20:.0f} MiB); worst stall {worst:.1f} ms")
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
