"""Live models at real size (`make bench-models`, CPU; `make bench-gpu` runs it on CUDA too).

Per backend, on real-size checkpoints with random weights built once from the real configs
(tests/benchmarks/real_models.py, kept in ``--cache``), on an 1800×1200 photograph-sized scene,
each masklens figure beside the plain transformers pipeline (tests/benchmarks/plain_pipelines.py)
run in the same process:

- load: masklens (checkpoint hash not yet remembered, then remembered) vs ``from_pretrained``;
- first prompt on a new image, a further prompt on the same image;
- 5 prompts: ``segment_many`` vs 5 ``segment`` calls (vs 5 plain calls);
- a box prompt and a point prompt (masklens only: the plain pipelines take text);
- masklens' own time per prompt: the prompt's wall time minus the time inside the model's modules;
- peak RSS of the backend's process (each backend runs in its own process), and of the window's
  model process (where the window's copy of the model ran);
- through the window: the worst GUI-thread stall (2 ms timer, as tests/benchmarks/bench_gui.py)
  while the model loads and answers its first prompt, and during a further prompt, against the
  worst stall while the plain pipeline runs in a plain thread beside the idle window;
- Cancel: pressed part-way into a first prompt in the window, seconds until the job ended, against
  the rest of the forward pass that an uninterruptible job would have waited for.

    python tests/benchmarks/models_bench.py --backends clipseg [--device cpu|cuda]
        [--cache DIR] [--no-gui] [--out results.json]

A real-size SAM 3 first prompt takes minutes on a 2-core CPU: run the backends one at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "gui"))

BACKENDS = ("clipseg", "owlv2-sam2", "grounded-sam2", "sam3")
PROMPTS = ("a red circle", "a blue square", "a person", "a car", "a dog", "a green triangle", "a cup")
WIDTH, HEIGHT = 1800, 1200


def scene(seed: int) -> np.ndarray:
    """A deterministic 1800×1200 RGB scene: coloured shapes on a textured background."""
    import cv2

    rng = np.random.default_rng(seed)
    img = rng.normal(120, 25, (HEIGHT, WIDTH, 3)).clip(0, 255).astype(np.uint8)
    img = cv2.GaussianBlur(img, (0, 0), 3)
    for _ in range(12):
        colour = tuple(int(c) for c in rng.integers(0, 255, 3))
        x, y = int(rng.integers(100, WIDTH - 100)), int(rng.integers(100, HEIGHT - 100))
        r = int(rng.integers(40, 200))
        if rng.random() < 0.5:
            cv2.circle(img, (x, y), r, colour, -1)
        else:
            cv2.rectangle(img, (x - r, y - r), (x + r, y + r), colour, -1)
    return img


class Row(dict):
    """A result row that prints each value as it is measured (``PART key value``), so a run stopped
    part-way (a real-size SAM 3 takes hours on a loaded 2-core CPU) still shows what it measured."""

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, value)
        print(f"PART {key} {json.dumps(value, default=str)}", flush=True)


class ModelClock:
    """Seconds spent inside transformers (outermost calls only): the forward of the given torch
    modules, and the calls and ``post_process*`` methods of the processors found beside them
    (pre-processing and post-processing that the plain pipeline runs too)."""

    def __init__(self, modules: list[Any], sync: Any, owner: Any = None) -> None:
        self.seconds, self._depth, self._t0, self.sync = 0.0, 0, 0.0, sync
        for top in modules:
            for m in top.modules():
                m.register_forward_pre_hook(self._pre)
                m.register_forward_hook(self._post)
        for proc in processors(owner):
            self._wrap_class(type(proc))
            for part in ("image_processor", "tokenizer"):
                if getattr(proc, part, None) is not None:
                    self._wrap_class(type(getattr(proc, part)))

    def _wrap_class(self, cls: type) -> None:
        for attr in ["__call__", *[a for a in dir(cls) if a.startswith("post_process")]]:
            original = getattr(cls, attr, None)
            if original is None or getattr(original, "_clocked", False):
                continue

            def wrapper(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                self._pre()
                try:
                    return _original(*args, **kwargs)
                finally:
                    self._post()

            wrapper._clocked = True  # type: ignore[attr-defined]
            setattr(cls, attr, wrapper)

    def _pre(self, *_: Any) -> None:
        if self._depth == 0:
            self._t0 = time.perf_counter()
        self._depth += 1

    def _post(self, *_: Any) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.sync()
            self.seconds += time.perf_counter() - self._t0


def processors(owner: Any, depth: int = 3) -> list[Any]:
    """The transformers processors among ``owner``'s attributes (a few levels down)."""
    from transformers.processing_utils import ProcessorMixin

    found: list[Any] = []
    seen: set[int] = set()

    def walk(obj: Any, level: int) -> None:
        if id(obj) in seen or level > depth or obj is None:
            return
        seen.add(id(obj))
        if isinstance(obj, ProcessorMixin):
            found.append(obj)
            return
        for value in list(getattr(obj, "__dict__", {}).values()):
            if not isinstance(value, (str, bytes, int, float, bool, dict, list, tuple)):
                walk(value, level + 1)

    walk(owner, 0)
    return found


def timed(fn: Any, sync: Any) -> tuple[float, Any]:
    sync()
    t0 = time.perf_counter()
    out = fn()
    sync()
    return time.perf_counter() - t0, out


def build(name: str, cache: Path, tiny_size: bool = False) -> tuple[list[Path], dict[str, Any]]:
    """The backend's checkpoints (built once) and the segmenter options that point at them."""
    import real_models

    main, sam2 = real_models.BACKEND_CHECKPOINTS[name]
    folders = [real_models.checkpoint(main, cache, tiny_size=tiny_size)]
    options: dict[str, Any] = {"weights": str(folders[0])}
    if sam2:
        folders.append(real_models.checkpoint(sam2, cache, tiny_size=tiny_size))
        options["sam2_weights"] = str(folders[1])
    for folder in folders:  # the page cache warm for masklens and the baseline alike
        for file in folder.iterdir():
            with file.open("rb") as fh:
                while fh.read(1 << 24):
                    pass
    return folders, options


def warm_up(name: str, options: dict[str, Any], device: str) -> None:
    """Import what both sides use and run one small op, so neither pays the first import."""
    import plain_pipelines
    import torch
    import transformers  # noqa: F401

    from masklens.core.models.registry import create_segmenter

    create_segmenter(name, **{**options, "device": device})  # imports the backend module
    for cls in plain_pipelines.CLASSES[name]:
        getattr(transformers, cls)
    (torch.ones(64, 64, device=device) @ torch.ones(64, 64, device=device)).sum().item()


def bench_direct(name: str, folders: list[Path], options: dict[str, Any], device: str,
                 masklens_first: bool = False) -> dict[str, Any]:
    import plain_pipelines
    import torch

    from masklens.core.cache import file_hashes
    from masklens.core.models.base import SegmentRequest
    from masklens.core.models.interrupt import torch_modules
    from masklens.core.models.registry import create_segmenter

    cuda = device.startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    images = [scene(s) for s in range(4)]
    row: dict[str, Any] = Row()
    warm_up(name, options, device)  # imports and one-time set-up paid before anything is timed

    def plain() -> None:  # plain transformers: load, first prompt, further prompt, 5 calls
        row["plain_load"], run = timed(lambda: plain_pipelines.PIPELINES[name](folders, device), sync)
        row["plain_first"], _ = timed(lambda: run(images[0], PROMPTS[0]), sync)
        row["plain_further"], _ = timed(lambda: run(images[0], PROMPTS[1]), sync)
        row["plain_5_calls"], _ = timed(lambda: [run(images[1], p) for p in PROMPTS[:5]], sync)
        # returning frees the plain model before the other side loads its own

    if not masklens_first:
        plain()
    # masklens: load with the checkpoint hash unknown (first time), then remembered
    opts = {**options, "device": device}
    file_hashes.forget_in_memory()
    seg = create_segmenter(name, **opts)
    row["load_first_time"], _ = timed(seg.ensure_loaded, sync)
    t0 = time.perf_counter()
    for ckpt in seg._checkpoints():
        _ = ckpt.sha256
    row["hash_wait_after_load"] = time.perf_counter() - t0
    seg.unload()
    file_hashes.forget_in_memory()  # what a new process knows: the memo file only
    seg = create_segmenter(name, **opts)
    row["load"], _ = timed(seg.ensure_loaded, sync)
    clock = ModelClock(torch_modules(seg, max_depth=3), sync, seg)

    def prompt(image: np.ndarray, request: SegmentRequest) -> tuple[float, float]:
        before = clock.seconds
        seconds, _ = timed(lambda: seg.segment(image, request), sync)
        return seconds, clock.seconds - before

    row["first"], model_first = prompt(images[0], SegmentRequest(PROMPTS[0]))
    row["further"], model_further = prompt(images[0], SegmentRequest(PROMPTS[1]))
    row["overhead_first"] = row["first"] - model_first
    row["overhead_further"] = row["further"] - model_further
    row["model_further"] = model_further
    row["batched_5"], _ = timed(lambda: seg.segment_many(images[2], [SegmentRequest(p) for p in PROMPTS[:5]]), sync)
    row["calls_5"], _ = timed(lambda: [seg.segment(images[3], SegmentRequest(p)) for p in PROMPTS[:5]], sync)
    box = (400.0, 300.0, 900.0, 800.0)
    for label, request in (("box", SegmentRequest(PROMPTS[0], boxes=[box])),
                           ("point", SegmentRequest(PROMPTS[0], points=[(650.0, 550.0, 1)]))):
        try:
            row[label], _ = timed(lambda r=request: seg.segment(images[0], r), sync)
        except Exception as exc:  # noqa: BLE001 - a backend without that prompt type says so
            row[label] = f"not supported ({type(exc).__name__}: {str(exc).splitlines()[0][:80]})"
    seg.unload()
    if masklens_first:
        plain()
    return row


def bench_window(name: str, folders: list[Path], options: dict[str, Any], device: str,
                 first: float, preload: bool = False, shots: str | None = None) -> dict[str, Any]:
    """Stalls and Cancel latency through the real window (its own model manager and load), the
    status bar's device line after a further prompt; ``shots``: a folder for the window's picture."""
    import cv2
    import plain_pipelines
    import pytest
    import toykind
    from bench_gui import StallMeter
    from PySide6.QtWidgets import QApplication

    from masklens.core.schema import Role
    from masklens.gui.prompts.prompt_bar import PromptRequest
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    toykind.install(pytest.MonkeyPatch())
    tmp = Path(tempfile.mkdtemp(prefix="bench-models-"))
    files = toykind.write_toy(tmp / "toy", n=4)
    for i in range(4):  # photograph-sized images
        cv2.imwrite(str(tmp / "toy" / f"img{i}.png"), cv2.cvtColor(scene(10 + i), cv2.COLOR_RGB2BGR))
    meter = StallMeter()
    started = time.perf_counter()
    # --preload: the session's chosen model is this backend, so the window imports torch while it
    # is built (masklens.core.models.preload); otherwise the first prompt imports it
    w = MainWindow(Settings(model=name) if preload else Settings(), persist=False)
    w.resize(1600, 1000)
    w.show()
    w.commands.open_benchmark("toy", ["--ann", str(files["ann"]), "--pred", str(files["pred"])], sync=True)
    app.processEvents()
    startup = {"startup": time.perf_counter() - started}
    meter.start()  # after the window is up: what a user meets while torch is imported
    while w.torch_import is not None and w.torch_import.is_alive():
        app.processEvents()
        time.sleep(0.001)
    startup["stall_after_startup"] = meter.stop()
    startup["torch_import_done"] = time.perf_counter() - started
    w.commands.set_model_options(name, {**options, "device": device})

    def settle(seconds: float = 0.5) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.002)

    def run(text: str) -> tuple[float, float]:
        n = len(w.state.live)
        settle()
        meter.start()
        t0 = time.perf_counter()
        w.commands.run_prompt(PromptRequest(text, Role.POSITIVE, None, None, name))
        while w.jobs.busy or len(w.state.live) == n:
            app.processEvents()
            time.sleep(0.001)
            if not w.jobs.busy and len(w.state.live) == n:
                raise RuntimeError(f"the prompt failed: {w.message_bar.text}")
        return time.perf_counter() - t0, meter.stop()

    row: dict[str, Any] = Row(startup)
    row["torch_imported_before"] = "torch" in sys.modules  # False: the first prompt imports it
    row["window_first"], row["stall_load_first"] = run(PROMPTS[0])  # loads the model too
    row["window_further"], row["stall_further"] = run(PROMPTS[1])
    settle(2.5)  # the status bar reads the model process' device and memory every 2 s
    row["device_status"] = w.status.device.text()
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        w.grab().save(str(Path(shots) / f"window-{name}-{device.replace(':', '')}.png"))
    # baseline: the plain pipeline in a plain thread while the window sits idle
    pipeline = plain_pipelines.PIPELINES[name](folders, device)
    image = scene(20)
    thread = threading.Thread(target=lambda: pipeline(image, PROMPTS[2]))
    settle()
    meter.start()
    thread.start()
    while thread.is_alive():
        app.processEvents()
        time.sleep(0.001)
    row["stall_plain_thread"] = meter.stop()
    pipeline = None
    # Cancel part-way into a first prompt on a new image
    w.state.set_index(2)
    settle()
    delay = max(0.1, 0.3 * first)  # part-way into the pass (the model is loaded: prompt time only)
    w.commands.run_prompt(PromptRequest(PROMPTS[3], Role.POSITIVE, None, None, name))
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < delay:
        app.processEvents()
        time.sleep(0.002)
    clicked = time.perf_counter()
    row["cancel_while_busy"] = w.jobs.busy  # False: the prompt ended before Cancel (not measured)
    w.status.cancel.click()
    while w.jobs.busy:
        app.processEvents()
        time.sleep(0.001)
    row["cancel_latency"] = time.perf_counter() - clicked
    row["cancel_at"] = delay
    row["cancel_message"] = w.message_bar.text
    w.close()
    return row


def run_one(name: str, args: argparse.Namespace) -> dict[str, Any]:
    from masklens.core.runtime.memory import peak_rss_bytes

    folders, options = build(name, Path(args.cache), args.tiny)
    os.environ["MASKLENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-models-cache-")  # no old answers
    import real_models

    row: dict[str, Any] = {"backend": name, "device": args.device, "tiny": args.tiny,
                           "checkpoint_bytes": sum(f.stat().st_size for d in folders for f in d.iterdir()),
                           "parameters": real_models.parameter_count(*folders)}
    if not args.gui_only:
        row.update(bench_direct(name, folders, options, args.device, args.masklens_first))
    if not args.no_gui:
        # Cancel part-way into a first prompt: 30 % of its measured time, or 5 s when not measured
        row.update(bench_window(name, folders, options, args.device, row.get("first", 5 / 0.3),
                                preload=args.preload, shots=args.shots))
    row["peak_rss"] = peak_rss_bytes()
    row["peak_rss_model_process"] = peak_rss_bytes(children=True)  # the window's model process, once ended
    return row


def say(row: dict[str, Any], text: str) -> None:
    """One line of a backend's figures, naming the backend and its size (each line stands alone
    on the benchmarks page, and a checkpoint's size cannot drift unseen)."""
    print(f"{text}  [{row['backend']}, {row['parameters'] / 1e6:.1f} M parameters]")


def show(row: dict[str, Any]) -> None:
    def s(key: str) -> str:
        value = row.get(key)
        return f"{value:7.2f} s" if isinstance(value, (int, float)) else str(value)

    gb = row.get("checkpoint_bytes", 0) / 1e9
    size = "TINY test checkpoint" if row.get("tiny") else "real-size config"
    print(f"== {row['backend']} on {row['device']} ({size}, random weights, {gb:.2f} GB,"
          f" {row['parameters'] / 1e6:.1f} M parameters; image {WIDTH}×{HEIGHT})")
    if "load" not in row:
        say(row, "  load, prompts, overhead, batching, box/point: not measured (--gui-only)")
    else:
        show_direct(row, s)
    apart = row.get("peak_rss_model_process")
    say(row, f"  peak RSS        {row['peak_rss'] / 1e9:.2f} GB (this backend's process: masklens and the plain "
          "pipeline)" + (f"; the window's model process {apart / 1e9:.2f} GB" if apart else ""))
    show_window(row, s)


def show_direct(row: dict[str, Any], s: Any) -> None:
    say(row, f"  load            masklens {s('load')} (hash remembered) | {s('load_first_time')} first time, "
          f"hash then ready {s('hash_wait_after_load')} later | from_pretrained {s('plain_load')} | "
          f"diff {row['load'] - row['plain_load']:+.2f} s (target ≤ +0.5)")
    say(row, f"  first prompt    masklens {s('first')} | plain {s('plain_first')} | "
          f"ratio {row['first'] / row['plain_first']:.2f}x")
    say(row, f"  further prompt  masklens {s('further')} | plain {s('plain_further')} | "
          f"ratio {row['further'] / row['plain_further']:.2f}x (encoding reused)")
    say(row, f"  masklens' own   {row['overhead_further'] * 1000:.0f} ms per further prompt = "
          f"{row['overhead_further'] / max(row['model_further'], 1e-9):.1%} of the {s('model_further')} in "
          "transformers (model + processor) "
          f"(target ≤ 5 %); first prompt {row['overhead_first'] * 1000:.0f} ms")
    say(row, f"  5 prompts       segment_many {s('batched_5')} | 5 segment calls {s('calls_5')} | "
          f"plain 5 calls {s('plain_5_calls')} | batched/calls {row['batched_5'] / row['calls_5']:.2f}x")
    say(row, f"  box prompt      {s('box')} | point prompt {s('point')} (no plain baseline)")


def show_window(row: dict[str, Any], s: Any) -> None:
    if "stall_after_startup" in row:
        say(row, f"  start-up        window + benchmark {row['startup']:.2f} s; worst GUI stall while torch was "
              f"imported after that {row['stall_after_startup']:.0f} ms (done at {row['torch_import_done']:.1f} s)")
    if "stall_load_first" in row:
        say(row, f"  GUI stall       load + first prompt {row['stall_load_first']:.0f} ms "
              f"({s('window_first')}), further prompt {row['stall_further']:.0f} ms | plain pipeline in a "
              f"thread {row['stall_plain_thread']:.0f} ms (target ≤ 50 ms)")
        say(row, f"  status bar      {row['device_status']} (after a further prompt)")
        rest = (f"~{row['first'] - row['cancel_at']:.2f} s" if "first" in row
                else f"the rest of a {row['window_first']:.0f} s load + pass")
        if row.get("cancel_while_busy"):
            say(row, f"  Cancel          {row['cancel_latency']:.2f} s after the click, {row['cancel_at']:.2f} s into a "
                  f"first prompt | uninterruptible: {rest} (target ≤ 1 s)")
        else:
            say(row, f"  Cancel          not measured: the prompt ended before the click at {row['cancel_at']:.2f} s")
    else:
        say(row, "  GUI stall, Cancel: not measured (--no-gui)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="clipseg", help=f"comma-separated, of {', '.join(BACKENDS)}")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--cache", default=None, help="where the real-size checkpoints are built once "
                        "(default: the masklens cache folder's bench-models/)")
    parser.add_argument("--no-gui", action="store_true", help="skip the window's stall and Cancel lines")
    parser.add_argument("--gui-only", action="store_true", help="only the window's stall and Cancel lines")
    parser.add_argument("--out", help="also write the rows as JSON")
    parser.add_argument("--tiny", action="store_true", help="the tiny test checkpoints instead (checks "
                        "this script; the numbers say nothing about real sizes)")
    parser.add_argument("--masklens-first", action="store_true", help="measure masklens' lines before the "
                        "plain pipeline's (a run stopped part-way, e.g. by `timeout`, has masklens' lines)")
    parser.add_argument("--preload", action="store_true", help="the window's session model is the "
                        "backend, so torch is imported while the window is built (the default: at "
                        "the first prompt)")
    parser.add_argument("--shots", metavar="DIR", help="save a picture of the window after a further "
                        "prompt (the status bar names the device and its memory) in DIR")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cache is None:
        from masklens.core.cache.predictions import default_cache_dir

        args.cache = str(default_cache_dir() / "bench-models")
    if args.device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            print(f"models bench on {args.device} skipped: no CUDA device here. Nothing was measured.")
            return 0
    if args.one:  # one backend, in this process; the row as JSON on the last line
        print("ROW " + json.dumps(run_one(args.one, args)), flush=True)
        return 0
    rows = []
    for name in [b.strip() for b in args.backends.split(",") if b.strip()]:
        if name not in BACKENDS:
            parser.error(f"unknown backend {name}; choose from {', '.join(BACKENDS)}")
        cmd = [sys.executable, __file__, "--one", name, "--device", args.device, "--cache", args.cache]
        cmd += ["--no-gui"] if args.no_gui else []
        cmd += ["--gui-only"] if args.gui_only else []
        cmd += ["--tiny"] if args.tiny else []
        cmd += ["--masklens-first"] if args.masklens_first else []
        cmd += ["--preload"] if args.preload else []
        cmd += ["--shots", args.shots] if args.shots else []
        proc = subprocess.run(cmd, capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("ROW ")]
        if proc.returncode or not lines:
            print(f"== {name}: failed (exit {proc.returncode})\n{proc.stderr[-3000:]}")
            continue
        rows.append(json.loads(lines[-1][4:]))
        show(rows[-1])
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0 if rows else 1


if __name__ == "__main__":
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
