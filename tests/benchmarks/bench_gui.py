"""GUI frame-time benchmark (plain script, run by `make bench`; offscreen Qt).

Prints absolute times, the targets, and ratios against baselines measured in this process:

* overlay redraw at 1024² and 2048²: a full canvas repaint at fit zoom and a zoom + pan step
  (what happens on every frame while panning or zooming), and re-composing the overlays
  (ground truth + three instances with outlines → indexed QPixmaps cropped to the masks; what
  happens when a toggle, opacity or t changes), against a naive float alpha blend of the same
  masks in numpy (target: < 16 ms at 2048²);
* sample switch with cached predictions (target: < 100 ms), cold (image and masks decoded)
  and warm (from the LRUs), against decoding the sample's PNG alone;
* opening a 10,000-sample benchmark until the first sample is drawn (target: < 2 s), against
  the kind's own load_benchmark; moving the t slider on 10,000 scored samples;
* a CAFE-sized run with the real CAFE kind: first sample, scoring, slider step, sample switch;
* real-shaped sets (gui_real_shaped.py; alone with ``--real-shaped``): t/τ step, sample switch,
  filter, sort on SA-Co/Gold-shaped 1,200 and 20,000 entries at 1280×720 and CAFE-shaped 2,146
  pairs at 1024², input → settled window and the worst GUI stall, against the scorer's own time.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MASKLENS_CONFIG_DIR", tempfile.mkdtemp(prefix="masklens-bench-"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gui"))

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from masklens.gui.canvas import overlays  # noqa: E402


def timeit(fn, repeat: int = 15) -> float:
    """Median wall time of ``fn`` in milliseconds (after one warm-up call)."""
    fn()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return statistics.median(out)


def discs(size: int) -> tuple[np.ndarray, list[np.ndarray]]:
    yy, xx = np.ogrid[:size, :size]
    gt = (yy - size * 0.45) ** 2 + (xx - size * 0.45) ** 2 < (size * 0.25) ** 2
    inst = [((yy - size * cy) ** 2 + (xx - size * cx) ** 2 < (size * r) ** 2)
            for cy, cx, r in ((0.5, 0.5, 0.22), (0.2, 0.75, 0.1), (0.8, 0.2, 0.08))]
    return gt, inst


def naive_blend(img: np.ndarray, gt: np.ndarray, inst: list[np.ndarray]) -> np.ndarray:
    out = img.astype(np.float32)
    for m, colour in zip([gt, *inst], [(240, 228, 66), (0, 114, 178), (230, 159, 0), (0, 158, 115)], strict=True):
        out[m] = out[m] * 0.5 + np.array(colour, np.float32) * 0.5
    rgb = out.astype(np.uint8)
    return overlays.rgb_image(rgb)


def ours(canvas, gt: np.ndarray, inst: list[np.ndarray], store) -> None:
    from masklens.gui.canvas.sample_view import LayerToggles, build_layers

    canvas.label_memo.clear()  # label maps built from scratch (a new sample or t)
    build_layers(canvas, [gt], inst, LayerToggles(), store.box)  # boxes memoised, as in the window


def opacity_change(canvas, gt: np.ndarray, inst: list[np.ndarray], store, toggles) -> None:
    from masklens.gui.canvas.sample_view import build_layers

    toggles.gt_opacity = 0.8 - toggles.gt_opacity  # label maps reused, only the colour table swaps
    build_layers(canvas, [gt], inst, toggles, store.box)


def bench_overlays() -> None:
    from masklens.gui.canvas.image_canvas import Canvas

    print("overlay redraw (median of 15)")
    for size in (1024, 2048):
        rng = np.random.default_rng(0)
        img = rng.integers(0, 255, (size, size, 3), dtype=np.uint8)
        gt, inst = discs(size)
        t_base = timeit(lambda img=img, gt=gt, inst=inst: naive_blend(img, gt, inst))
        canvas = Canvas()
        canvas.resize(1100, 1000)
        canvas.show()
        canvas.set_image(overlays.rgb_image(img))
        from masklens.gui.canvas.image_cache import ImageStore

        store = ImageStore()
        t_comp = timeit(lambda c=canvas, gt=gt, inst=inst, s=store: ours(c, gt, inst, s))
        from masklens.gui.canvas.sample_view import LayerToggles

        tg = LayerToggles()
        t_alpha = timeit(lambda c=canvas, gt=gt, inst=inst, s=store, tg=tg: opacity_change(c, gt, inst, s, tg))
        QApplication.processEvents()
        t_paint = timeit(lambda c=canvas: c.viewport().repaint())

        def pan_zoom(c=canvas):
            c.zoom(1.1)
            c.horizontalScrollBar().setValue(c.horizontalScrollBar().value() + 10)
            c.viewport().repaint()

        t_pan = timeit(pan_zoom)
        print(f"  {size}²: compose {t_comp:6.1f} ms | repaint {t_paint:5.1f} ms | zoom+pan+repaint "
              f"{t_pan:5.1f} ms | naive blend baseline {t_base:6.1f} ms | compose/baseline "
              f"{t_comp / t_base:.2f}x" + ("  (target < 16 ms)" if size == 2048 else ""))
        print(f"        opacity slider step (label maps reused) {t_alpha:5.1f} ms"
              f" = {t_alpha / t_comp:.2f}x compose")
        canvas.close()


def bench_switch_and_open(tmp: Path) -> None:
    import pytest
    import toykind

    toykind.install(pytest.MonkeyPatch())

    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    files = toykind.write_toy(tmp / "switch", n=12)
    # re-write the toy images at 1024² so decoding costs what a real image costs
    for i in range(12):
        img = cv2.resize(cv2.imread(str(tmp / "switch" / f"img{i}.png")), (1024, 1024),
                         interpolation=cv2.INTER_NEAREST)
        img = cv2.add(img, np.random.default_rng(i).integers(0, 40, img.shape, dtype=np.uint8))
        cv2.imwrite(str(tmp / "switch" / f"img{i}.png"), img)
    w = MainWindow(Settings(), persist=False)
    w.resize(1600, 1000)
    w.show()
    w.commands.open_benchmark("toy", ["--ann", str(files["ann"]), "--pred", str(files["pred"])], sync=True)
    QApplication.processEvents()
    cold, warm = [], []
    for i in range(1, 12):
        t0 = time.perf_counter()
        w.state.set_index(i)
        QApplication.processEvents()
        cold.append((time.perf_counter() - t0) * 1000)
    for i in range(1, 12):
        t0 = time.perf_counter()
        w.state.set_index(i)
        QApplication.processEvents()
        warm.append((time.perf_counter() - t0) * 1000)
    t_png = timeit(lambda: cv2.imread(str(tmp / "switch" / "img3.png")))
    print("sample switch, cached predictions, 5 panels of a 1024² image (median over 11 samples)")
    print(f"  cold (decode image + masks) {statistics.median(cold):6.1f} ms | warm (LRU) "
          f"{statistics.median(warm):6.1f} ms | PNG decode baseline {t_png:5.1f} ms | cold/baseline "
          f"{statistics.median(cold) / t_png:.1f}x  (target < 100 ms)")
    w.close()

    big = toykind.write_toy(tmp / "big", n=10_000, images=False, predictions=False)

    t0 = time.perf_counter()
    toykind.KIND.load_benchmark(ann=str(big["ann"]))
    t_load = time.perf_counter() - t0
    w = MainWindow(Settings(), persist=False)
    w.resize(1600, 1000)
    w.show()
    QApplication.processEvents()
    decoded = []  # the images the window's cache had to decode (its ByteLRU.get's make, wrapped)
    get = type(w.store.images).get
    images = w.store.images
    images.get = lambda key, make: get(images, key, lambda: decoded.append(key) or make())
    t0 = time.perf_counter()
    w.commands.open_benchmark("toy", ["--ann", str(big["ann"])], sync=True)
    QApplication.processEvents()
    t_open = time.perf_counter() - t0
    print("open a 10,000-sample benchmark until the first sample is drawn")
    print(f"  {t_open:5.2f} s (images decoded: {len(decoded)}) | kind.load_benchmark baseline "
          f"{t_load:5.2f} s | open/baseline {t_open / t_load:.2f}x  (target < 2 s)")
    w.close()

    scored = toykind.write_toy(tmp / "scored", n=10_000, images=False)
    w = MainWindow(Settings(), persist=False)
    w.resize(1600, 1000)
    w.show()
    w.commands.open_benchmark("toy", ["--ann", str(scored["ann"]), "--pred", str(scored["pred"])], sync=True)
    QApplication.processEvents()
    scorer = next(iter(w.state.scorers.values()))
    values = iter([0.3, 0.7] * 20)
    t_slider = timeit(lambda: (w.set_params({"score_threshold": next(values), "iou_threshold": 0.3}),
                               QApplication.processEvents()), repeat=5)
    t_readouts = timeit(lambda: scorer.readouts({"score_threshold": 0.6}), repeat=5)
    print("move the t slider on a 10,000-sample scored benchmark, no filter: the GUI thread's part "
          "(the sample shown; the rest is derived in the worker pool, see the slider lines below)")
    print(f"  {t_slider:6.1f} ms | Scorer.readouts baseline {t_readouts:6.1f} ms | "
          f"slider/baseline {t_slider / t_readouts:.2f}x")
    w.close()


class StallMeter:
    """The longest gap between ticks of a 2 ms GUI-thread timer: how long the window froze.
    ``cpu_worst``: the most GUI-thread CPU time between two ticks (ms; what the longest stall
    would be with a core to itself — on a shared machine the wall gap includes waiting for one)."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.timer = QTimer(interval=2)
        self.timer.timeout.connect(self._tick)
        self.last = self.last_cpu = 0.0
        self.worst = self.cpu_worst = 0.0

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.worst = max(self.worst, now - self.last)
        self.cpu_worst = max(self.cpu_worst, (cpu - self.last_cpu) * 1000)
        self.last, self.last_cpu = now, cpu

    def start(self) -> None:
        self.last, self.worst = time.perf_counter(), 0.0
        self.last_cpu, self.cpu_worst = time.thread_time(), 0.0
        self.timer.start()

    def stop(self) -> float:
        self.timer.stop()
        return self.worst * 1000


def slider_move(w, value: float, meter: StallMeter) -> tuple[float, float, float]:
    """(time to first frame, time to settled browser, longest GUI stall) in ms for one t move."""
    meter.start()
    t0 = time.perf_counter()
    w.readout_panel.sliders.set_value("score_threshold", value)  # as the debounced slider does
    QApplication.processEvents()
    first = (time.perf_counter() - t0) * 1000
    while w.rescoring.pending:
        QApplication.processEvents()
        time.sleep(0.001)
    settled = (time.perf_counter() - t0) * 1000
    for _ in range(3):
        QApplication.processEvents()
    return first, settled, meter.stop()


def bench_slider_large(tmp: Path) -> None:
    """t slider on 10,000 and 100,000 scored samples with a filter shown: first frame, settled
    browser and the longest GUI-thread stall, against the synchronous re-derivation (the
    previous behaviour: Scorer.readouts and the browser's re-filter on the GUI thread)."""
    import pytest
    import toykind

    toykind.install(pytest.MonkeyPatch())
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    meter = StallMeter()
    print("t slider on a large scored benchmark, filter 'positive.n_kept == 0' shown (median of 3 moves)")
    for n in (10_000, 100_000):
        files = toykind.write_toy(tmp / f"s{n}", n=n, images=False)
        w = MainWindow(Settings(), persist=False)
        w.resize(1600, 1000)
        w.show()
        w.commands.open_benchmark("toy", ["--ann", str(files["ann"]), "--pred", str(files["pred"])], sync=True)
        QApplication.processEvents()
        assert w.browser.set_expression("positive.n_kept == 0")
        w.state.set_index(3)
        runs = [slider_move(w, v, meter) for v in (0.3, 0.7, 0.4)]
        first, settled, stall = (statistics.median(x) for x in zip(*runs, strict=True))
        # baseline: what a move cost before (everything on the GUI thread, the window frozen)
        t0 = time.perf_counter()
        w.state.set_params({"score_threshold": 0.6})
        QApplication.processEvents()
        sync = (time.perf_counter() - t0) * 1000
        print(f"  {n:>7,} samples: first frame {first:6.1f} ms | settled browser {settled:7.1f} ms | "
              f"longest GUI stall {stall:5.1f} ms (target ≤ 50) | synchronous baseline (frozen) "
              f"{sync:7.1f} ms | stall/baseline {stall / sync:.3f}x")
        w.close()
        QApplication.processEvents()


def bench_prompt_and_report(tmp: Path) -> None:
    """A typed prompt's round trip with the demo model, and a report export from the window."""
    from masklens.core.schema import Role
    from masklens.gui.dialogs.report_dialog import ReportDialog
    from masklens.gui.prompts.prompt_bar import PromptRequest
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    w = MainWindow(Settings(), persist=False)
    w.resize(1600, 1000)
    w.show()
    w.commands.open_demo("cafe", sync=True)
    QApplication.processEvents()

    def wait(cond) -> None:
        while not cond():
            QApplication.processEvents()
            time.sleep(0.001)

    times = []
    for text in ("triangle", "red triangle", "striped square", "circle", "blue thing"):
        n = len(w.state.live)
        t0 = time.perf_counter()
        w.commands.run_prompt(PromptRequest(text, Role.POSITIVE, None, None, "demo"))
        wait(lambda n=n: len(w.state.live) > n and not w.jobs.busy)
        times.append((time.perf_counter() - t0) * 1000)
    t_sync = timeit(lambda: w.commands.run_prompt(PromptRequest("triangle", Role.POSITIVE, None, None, "demo"),
                                         sync=True), repeat=5)
    print("typed prompt round trip, demo model, CAFE demo (Enter → layer shown; median of 5)")
    print(f"  {statistics.median(times):6.1f} ms through the worker pool | the same job run inline "
          f"{t_sync:6.1f} ms (cache hit) | pool/inline {statistics.median(times) / t_sync:.2f}x")
    meter = StallMeter()

    def settle(seconds: float = 0.3) -> None:  # what the previous step left to paint, painted
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            QApplication.processEvents()
            time.sleep(0.005)

    # as a user exports: the window has painted, the dialog is open, Export is clicked (the
    # stall of the window's pending repaint alone, with no export running, is printed apart)
    meter.start()
    settle()
    pending = meter.stop()
    dlg = ReportDialog(w, w.state)
    dlg.out.setText(str(tmp / "report"))
    dlg.show()
    settle()
    steps = []
    dlg.runner.progressed.connect(lambda _n, d, t, s: steps.append(d))
    meter.start()
    t0 = time.perf_counter()
    dlg.export_button.click()
    QApplication.processEvents()
    wait(lambda: dlg.job is None)
    t_report = time.perf_counter() - t0
    stall = meter.stop()
    from masklens.core.reports import ReportOptions, build_report
    from masklens.core.reports.runs import ModelRun, run_provenance

    st = w.state
    name = next(iter(st.scorers))
    t0 = time.perf_counter()
    build_report(st.kind, st.benchmark, [ModelRun(name, st.prediction_sets[name], st.scorers[name],
                 st.scorers[name].rescore(st.params), run_provenance(st.prediction_sets[name]))],
                 tmp / "report2", params=st.params,
                 options=ReportOptions(images_dir=getattr(st.namespace, "images", None)))
    t_build = time.perf_counter() - t0
    print("report export from the window (CAFE demo; HTML + CSV + JSON, sweep and gallery)")
    print(f"  {t_report:5.2f} s, {len(set(steps))} distinct progress values, longest GUI stall {stall:5.1f} ms |"
          f" build_report inline baseline {t_build:5.2f} s | export/baseline {t_report / t_build:.2f}x")
    print(f"  (before it, with no export running: the typed prompts' pending window repaint {pending:5.1f} ms)")
    dlg.close()
    w.close()


def bench_cafe_sized(tmp: Path) -> None:
    """The real CAFE kind on 2,146 synthetic pairs at 1024² (no image files: placeholders)."""
    import argparse
    import json

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cafe"))
    try:
        from cafe_synth import synth_cafe
    except ImportError:
        print("CAFE-sized run skipped (tests/fixtures/cafe/cafe_synth.py not found)")
        return
    from masklens.core.scoring.contract import Scorer, get_kind
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    data, preds = synth_cafe(7, 2146, height=1024, width=1024, max_instances=5)
    (tmp / "ann.json").write_text(json.dumps(data))
    (tmp / "pred.json").write_text(json.dumps(preds))
    kind = get_kind("cafe")
    ns = argparse.Namespace(ann=str(tmp / "ann.json"), pred=str(tmp / "pred.json"), images=None)
    t0 = time.perf_counter()  # baseline first, so that it pays the one-off imports (scipy …)
    bench = kind.load_benchmark(**vars(ns))
    Scorer(kind, bench, kind.load_predictions(bench, **vars(ns))).rescore()
    t_score = time.perf_counter() - t0
    w = MainWindow(Settings(), persist=False)
    w.resize(1600, 1000)
    w.show()
    QApplication.processEvents()
    t0 = time.perf_counter()
    w.commands.open_benchmark("cafe", ["--ann", str(tmp / "ann.json")], sync=True)
    QApplication.processEvents()
    t_open = time.perf_counter() - t0
    t0 = time.perf_counter()
    w.commands.open_predictions(["--pred", str(tmp / "pred.json")], sync=True)
    QApplication.processEvents()
    t_attach = time.perf_counter() - t0
    values = iter([0.3, 0.7] * 20)
    t_slider = timeit(lambda: (w.set_params({"score_threshold": next(values), "iou_threshold": 0.3}),
                               QApplication.processEvents()), repeat=5)
    idx = iter(range(1, 100))
    t_switch = timeit(lambda: (w.state.set_index(next(idx)), QApplication.processEvents()), repeat=9)
    print("CAFE-sized benchmark (2,146 pairs, 1024², up to 5 instances per prompt; real CAFE kind)")
    print(f"  first sample shown {t_open:5.2f} s | predictions read + scored (background job) {t_attach:5.2f} s"
          f" | `masklens score` baseline (load + score) {t_score:5.2f} s | attach/baseline {t_attach / t_score:.2f}x")
    print(f"  t slider step {t_slider:6.1f} ms | sample switch {t_switch:6.1f} ms")
    w.close()


def main() -> int:
    app = QApplication.instance() or QApplication([])
    from gui_real_shaped import bench_real_shaped

    if "--real-shaped" in sys.argv:  # only the real-shaped lines; --sizes 1200,20000
        sizes = (1_200, 20_000)
        if "--sizes" in sys.argv:
            sizes = tuple(int(x) for x in sys.argv[sys.argv.index("--sizes") + 1].split(",") if x)
        with tempfile.TemporaryDirectory() as d:
            bench_real_shaped(Path(d), StallMeter(), sizes)
        return 0
    bench_overlays()
    with tempfile.TemporaryDirectory() as d:
        bench_switch_and_open(Path(d))
    with tempfile.TemporaryDirectory() as d:
        bench_slider_large(Path(d))
    with tempfile.TemporaryDirectory() as d:
        bench_prompt_and_report(Path(d))
    with tempfile.TemporaryDirectory() as d:
        bench_cafe_sized(Path(d))
    with tempfile.TemporaryDirectory() as d:
        bench_real_shaped(Path(d), StallMeter())
    app.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main())
