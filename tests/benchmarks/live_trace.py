"""What the GUI thread waits for while a prompt's result arrives (bench_live_result.py ``--trace``):
the GUI-thread gaps of a 2 ms timer over 30 ms, beside the prompt job's steps (``STEPS``, timed
in the job's thread) and, with ``calls=True``, its C calls and masklens functions over 20 ms
(``sys.setprofile`` in the job's thread: slows the job), and a cProfile of the GUI thread."""

from __future__ import annotations

import cProfile
import importlib
import io
import pstats
import sys
import time
from typing import Any

from bench_gui import StallMeter

GAP = 0.030
SLOW = 0.020
#: the job's steps timed (module, attribute path): the model, mask encoding, scoring, the overlay
STEPS = [
    ("masklens.core.models.torch_runtime", "TorchSegmenter.finish"),
    ("masklens.core.models.torch_runtime", "encode_masks"),
    ("masklens.core.masks", "_resize"),
    ("masklens.core.masks", "iou_matrix"),
    ("masklens.core.inference.runner", "to_prediction"),
    ("masklens.core.scoring.readout", "generic_readout"),
    ("masklens.core.scoring.readout", "benchmark_overlaps"),
    ("masklens.core.scoring.readout", "benchmark_readout"),
    ("masklens.core.cache.predictions", "PredictionCache.put"),
    ("masklens.gui.canvas.image_cache", "ImageStore.mask"),
    ("masklens.gui.canvas.image_cache", "ImageStore.box"),
    ("masklens.gui.canvas.overlays", "instance_labels"),
    ("masklens.gui.canvas.overlays", "indexed_image"),
]
#: the GUI thread's steps when a result arrives (timed there)
GUI_STEPS = [
    ("masklens.gui.window.main_window", "MainWindow._live_changed"),
    ("masklens.gui.window.renderer", "Renderer.render"),
    ("masklens.gui.window.renderer", "Renderer._show_readout"),
    ("masklens.gui.canvas.sample_view", "SampleViewWidget._draw_some"),
    ("masklens.gui.prompts.live_list", "LiveList.set_results"),
]


class GapMeter(StallMeter):
    """The 2 ms stall meter that also keeps every gap over ``GAP`` (start, end)."""

    def __init__(self) -> None:
        super().__init__()
        self.gaps: list[tuple[float, float]] = []

    def _tick(self) -> None:
        now = time.perf_counter()
        if now - self.last > GAP:
            self.gaps.append((self.last, now))
        super()._tick()


class Tracer:
    """Installs the job-thread profiler on ``tasks.run_prompt`` and profiles the GUI thread."""

    def __init__(self, calls: bool = False) -> None:
        self.meter = GapMeter()
        self.slow: list[tuple[float, float, str]] = []
        self.profile = cProfile.Profile()
        for module, path in STEPS:
            self._time_step(module, path)
        from PySide6.QtWidgets import QGraphicsView

        from masklens.gui.canvas.image_canvas import Canvas

        def paint(view: Any, event: Any) -> None:  # the canvases' painting, timed
            t0 = time.perf_counter()
            QGraphicsView.paintEvent(view, event)
            self.slow.append((t0, time.perf_counter(), "gui Canvas.paintEvent"))

        Canvas.paintEvent = paint
        for module, path in GUI_STEPS:
            try:
                self._time_step(module, path, gui=True)
            except (ImportError, AttributeError) as exc:
                print(f"not timed: {module}.{path} ({exc})")
        tasks = importlib.import_module("masklens.gui.jobs.tasks")
        original = tasks.run_prompt

        def traced(*args: Any, **kwargs: Any) -> Any:
            if calls:
                sys.setprofile(self._hook())
            try:
                return original(*args, **kwargs)
            finally:
                sys.setprofile(None)

        for name, module in list(sys.modules.items()):
            if name.startswith("masklens") and getattr(module, "run_prompt", None) is original:
                module.run_prompt = traced

    def _time_step(self, module: str, path: str, gui: bool = False) -> None:
        """Time ``module.path`` (a function or Class.method) when called off the GUI thread (or,
        ``gui``, on it)."""
        import threading

        owner: Any = importlib.import_module(module)
        *outer, name = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        original = getattr(owner, name)
        slow = self.slow

        def timed(*args: Any, **kwargs: Any) -> Any:
            if (threading.current_thread() is threading.main_thread()) != gui:
                return original(*args, **kwargs)
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                slow.append((t0, time.perf_counter(), f"{'gui' if gui else 'job'} {path}"))

        setattr(owner, name, timed)
        if not outer:
            for key, m in list(sys.modules.items()):
                if key.startswith(("masklens", "toykind")) and getattr(m, name, None) is original:
                    setattr(m, name, timed)

    def _hook(self) -> Any:
        stack: list[float] = []
        slow = self.slow

        def hook(frame: Any, event: str, arg: Any) -> None:
            if event in ("c_call", "call"):
                stack.append(time.perf_counter())
            elif event in ("c_return", "c_exception", "return") and stack:
                t0 = stack.pop()
                now = time.perf_counter()
                if now - t0 > SLOW:
                    if event == "return":
                        code = frame.f_code
                        if "masklens" not in code.co_filename:
                            return
                        what = f"{code.co_filename.rsplit('/', 2)[-2:]}:{code.co_name}"
                    else:
                        what = f"C {getattr(arg, '__module__', '') or ''}.{getattr(arg, '__qualname__', arg)}"
                    slow.append((t0, now, what))

        return hook

    def begin(self) -> None:
        self.profile.enable()

    def end(self) -> None:
        self.profile.disable()

    def report(self) -> None:
        print(f"GUI-thread gaps over {GAP * 1000:.0f} ms, with the job's calls over {SLOW * 1000:.0f} ms that overlap them:")
        for g0, g1 in self.meter.gaps:
            print(f"  gap {1000 * (g1 - g0):.0f} ms")
            near = [(s0, s1, what) for s0, s1, what in self.slow if s0 < g1 and s1 > g0]
            steps: dict[str, list[float]] = {}
            for s0, s1, what in near:
                if what.startswith(("job ", "gui ")):  # per step: calls and their time within the gap
                    steps.setdefault(what, []).append(min(s1, g1) - max(s0, g0))
                elif not any(a >= s0 and b <= s1 and (a, b) != (s0, s1) for a, b, _ in near):
                    print(f"      job {1000 * (s1 - s0):6.0f} ms  {what}")  # the innermost call only
            for what, spans in steps.items():
                print(f"      {what[:3]} {1000 * sum(spans):6.0f} ms in {len(spans)} call(s) of {what[4:]}")
        out = io.StringIO()
        pstats.Stats(self.profile, stream=out).sort_stats("cumulative").print_stats(45)
        print(out.getvalue())
