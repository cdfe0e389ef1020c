"""The GUI stall while a new model result is drawn: the overlay made in the prompt job (as the
window does) against the same window with it switched off (drawn on the GUI thread),
alternating in one process on models_bench's 1800×1200 scenes; worst gap of the 2 ms
GUI-thread timer (tests/benchmarks/bench_gui.py) from the prompt's start until it is drawn.

    python tests/benchmarks/bench_live_result.py [--backend grounded-sam2] [--prompts 10] [--real]
        [--masks 100] [--job-only] [--trace]

Tiny test checkpoints by default (the model's own time is small, so masklens' drawing is what
differs); ``--real`` uses models_bench's real-size random checkpoints. ``--masks N`` (tiny Grounded
SAM 2): a detector with N queries, threshold 0 and no NMS, so every prompt answers N masks.
``--job-only``: only the window as it is (no GUI-thread comparison). ``--trace``: every GUI-thread
gap over 30 ms with the worker's C calls over 20 ms beside it, and a cProfile of the GUI thread.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "gui"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="grounded-sam2")
    parser.add_argument("--prompts", type=int, default=10)
    parser.add_argument("--real", action="store_true")
    parser.add_argument("--masks", type=int, default=0, help="tiny Grounded SAM 2 answering this many masks")
    parser.add_argument("--job-only", action="store_true")
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args(argv)
    import cv2
    import live_trace
    import models_bench
    import pytest
    import toykind
    from bench_gui import StallMeter
    from PySide6.QtWidgets import QApplication

    from masklens.core.cache.predictions import default_cache_dir
    from masklens.core.schema import Role
    from masklens.gui.canvas import prepared
    from masklens.gui.prompts.prompt_bar import PromptRequest
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    cache = default_cache_dir() / "bench-models"
    folders, options = models_bench.build(args.backend, cache, tiny_size=not args.real)
    if args.masks:
        options = many_masks_options(folders[0], cache, args.masks, options)
    tracer = live_trace.Tracer() if args.trace else None
    os.environ["MASKLENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-live-")  # no old answers
    app = QApplication.instance() or QApplication([])
    toykind.install(pytest.MonkeyPatch())
    tmp = Path(tempfile.mkdtemp(prefix="bench-live-"))
    files = toykind.write_toy(tmp / "toy", n=2)
    for i in range(2):
        cv2.imwrite(str(tmp / "toy" / f"img{i}.png"), cv2.cvtColor(models_bench.scene(10 + i), cv2.COLOR_RGB2BGR))
    w = MainWindow(Settings(), persist=False)
    w.resize(1600, 1000)
    w.show()
    w.commands.open_benchmark("toy", ["--ann", str(files["ann"]), "--pred", str(files["pred"])], sync=True)
    w.commands.set_model_options(args.backend, {**options, "device": "cpu"})
    meter = tracer.meter if tracer else StallMeter()
    maker, store_prepared = prepared.overlay_maker, w.store.prepared

    def settle(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.002)

    def run(text: str) -> float:
        n = len(w.state.live)
        settle(0.5)
        meter.start()
        w.commands.run_prompt(PromptRequest(text, Role.POSITIVE, None, None, args.backend))
        while w.jobs.busy or len(w.state.live) == n:
            app.processEvents()
            time.sleep(0.001)
        settle(0.3)
        return meter.stop()

    run(models_bench.PROMPTS[0])  # loads the model and encodes the image
    stalls: dict[str, list[float]] = {"in the job": [], "on the GUI thread": []}
    for k in range(args.prompts):
        job = bool(k % 2) or args.job_only
        prepared.overlay_maker = maker if job else (lambda *_a, **_k: None)
        w.store.prepared = store_prepared if job else None
        del w.state.live[:-2]  # the Compare tab shows the same number of panels each time
        if tracer and job:
            tracer.begin()
        stalls["in the job" if job else "on the GUI thread"].append(run(f"{models_bench.PROMPTS[k % 7]} {k}"))
        if tracer and job:
            tracer.end()
    masks = len(w.state.live[-1].prediction.instances)
    import real_models

    tag = f"[{args.backend}, {real_models.size_label(*folders)}]"
    print(f"{args.backend} ({'real-size' if args.real else 'tiny'}), {masks} masks on 1800×1200, "
          f"load average {os.getloadavg()[0]:.1f}  {tag}")
    for label, values in stalls.items():
        if not values:
            continue
        print(f"  overlay made {label:18s} worst stall per further prompt: median {statistics.median(values):.0f} ms "
              f"{[round(v) for v in values]}  {tag}")
    if stalls["on the GUI thread"]:
        ratio = statistics.median(stalls["in the job"]) / statistics.median(stalls["on the GUI thread"])
        print(f"  ratio in the job / on the GUI thread: {ratio:.2f}  {tag}")
    if tracer:
        tracer.report()
    w.close()
    return 0


def many_masks_options(detector: Path, cache: Path, n: int, options: dict) -> dict:
    """Options of a tiny Grounded SAM 2 whose detector has ``n`` queries, all kept (threshold 0,
    no NMS): every prompt answers ``n`` masks. Built once next to the tiny detector."""
    import shutil

    folder = cache / f"{detector.name}-q{n}"
    if not (folder / ".complete").exists():
        import torch
        from transformers import GroundingDinoConfig, GroundingDinoForObjectDetection

        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(detector, folder, ignore=shutil.ignore_patterns("*.safetensors", "*.bin", ".complete"))
        config = GroundingDinoConfig.from_pretrained(detector)
        config.num_queries = n
        torch.manual_seed(0)
        GroundingDinoForObjectDetection(config).eval().save_pretrained(folder)
        (folder / ".complete").touch()
    return {**options, "weights": str(folder), "score_threshold": 0.0, "nms_iou": None}


if __name__ == "__main__":
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
