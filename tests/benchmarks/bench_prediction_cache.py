"""Prediction cache and runner benchmark (plain script, run by `make bench`).

Prints absolute times and ratios against baselines measured in this process:

* `run_benchmark` over the bundled CAFE and SA-Co/Gold demos with the `demo` segmenter: the first
  run (model calls, cache writes) against the re-run answered from the prediction cache
  (target: the re-run makes no model call and reads no image);
* one cached SegmentResult (20 instances at 1024×1024) read back from SQLite against computing
  its RLE masks from arrays (the cheapest thing a model could do);
* `image_key` of a 1024×1024 RGB image against reading it from a PNG file.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from masklens.core.cache.entries import PredictionKey
from masklens.core.cache.model_cache import image_key
from masklens.core.cache.predictions import PredictionCache
from masklens.core.inference.runner import RunStats, run_benchmark
from masklens.core.kinds.demo import demo_kinds, demo_namespace
from masklens.core.masks import Mask
from masklens.core.models.base import SegmentResult
from masklens.core.models.registry import create_segmenter
from masklens.core.scoring.contract import get_kind


def timed(fn, repeat: int = 5) -> float:
    """Median wall time of ``fn()`` in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_runs(root: Path) -> None:
    for name in [k for k in ("cafe", "pcs") if k in demo_kinds()]:
        kind = get_kind(name)
        ns = demo_namespace(name, with_predictions=False)
        bench = kind.load_benchmark(**vars(ns))
        cache = PredictionCache(root / name)
        first, again = RunStats(), RunStats()
        t0 = time.perf_counter()
        run_benchmark(create_segmenter("demo"), bench, cache=cache, images_dir=ns.images, stats=first)
        t1 = time.perf_counter()
        seg = create_segmenter("demo")
        run_benchmark(seg, bench, cache=cache, images_dir=ns.images, stats=again)
        t2 = time.perf_counter()
        print(f"{name}: {first.prompts} prompts on {first.images} images: first run {1000 * (t1 - t0):.0f} ms "
              f"({first.computed} computed), re-run {1000 * (t2 - t1):.0f} ms ({again.cached} cached, "
              f"{again.model_calls} model calls, {again.images_read} images read); "
              f"ratio {(t1 - t0) / max(t2 - t1, 1e-9):.1f}x")
        cache.close()


def bench_entry(root: Path) -> None:
    rng = np.random.default_rng(0)
    arrays = []
    for _ in range(20):
        a = np.zeros((1024, 1024), bool)
        x, y = rng.integers(0, 900, 2)
        a[y:y + int(rng.integers(20, 120)), x:x + int(rng.integers(20, 120))] = True
        arrays.append(a)
    result = SegmentResult([Mask.from_array(a) for a in arrays], [0.5] * 20, 0.9, {"model": "bench"})
    cache = PredictionCache(root / "entry")
    key = PredictionKey.make("bench", "ckpt", "img", "a prompt")
    t_put = timed(lambda: cache.put(key, result))
    t_get = timed(lambda: cache.get(key), repeat=20)
    t_encode = timed(lambda: [Mask.from_array(a) for a in arrays])
    print(f"one cached result (20 instances, 1024²): put {1000 * t_put:.2f} ms, get {1000 * t_get:.2f} ms; "
          f"baseline RLE-encoding its masks {1000 * t_encode:.2f} ms; get/encode {t_get / t_encode:.2f}")
    cache.close()


def bench_image_key(root: Path) -> None:
    img = np.random.default_rng(1).integers(0, 255, (1024, 1024, 3), dtype=np.uint8)
    path = root / "img.png"
    cv2.imwrite(str(path), img)
    t_key = timed(lambda: image_key(img), repeat=9)
    t_read = timed(lambda: cv2.imread(str(path)), repeat=9)
    print(f"image_key 1024² RGB: {1000 * t_key:.2f} ms; baseline PNG read {1000 * t_read:.2f} ms; "
          f"ratio {t_key / t_read:.2f}")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bench_runs(root)
        bench_entry(root)
        bench_image_key(root)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
