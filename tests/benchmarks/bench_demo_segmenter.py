"""Latency of the weight-free `demo` segmenter on 384 px demo scenes (target: < 50 ms per prompt).

Plain script (run by `make bench`). Prints, for generated scenes at 384×384:
the first prompt on an image (palette snap + region analysis + scoring), each
further prompt on the same image (analysis cached), and, as the in-process
baseline, the un-cached analysis with the per-pixel palette distance the model
avoids (it snaps unique colours only).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "demo"))
from demo_scenes import Scene, Shape, render  # noqa: E402

from masklens.core.models import demo, demo_vision  # noqa: E402
from masklens.core.models.base import SegmentRequest  # noqa: E402

PROMPTS = ["red circle", "the whole blue square, including the hidden part", "shape", "zebra",
           "polygon", "giraffe", "glass circle", "sun"]


def scenes(n: int = 12) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    out = []
    kinds, colours = ["circle", "square", "triangle", "star", "rectangle"], list(demo_vision.OBJECT_COLOURS)
    for _ in range(n):
        shapes = [Shape(str(rng.choice(kinds)), str(rng.choice(colours)),
                        float(rng.uniform(50, 334)), float(rng.uniform(50, 334)),
                        float(rng.uniform(18, 45)), texture=str(rng.choice(["none", "stripes", "spots"])))
                  for _ in range(int(rng.integers(4, 9)))]
        out.append(render(Scene(384, 384, str(rng.choice(["plain", "horizon"])), shapes), seed=1).image)
    return out


def naive_labels(image: np.ndarray) -> np.ndarray:
    px = image.reshape(-1, 3).astype(np.int32)
    d = ((px[:, None, :] - demo_vision._PALETTE[None, :, :]) ** 2).sum(axis=2)
    return d.argmin(axis=1).reshape(image.shape[:2])


def main() -> None:
    images = scenes()
    model = demo.create(score_threshold=0.0)
    t = time.perf_counter()
    demo_vision._palette_lut()  # one-time palette lookup table (built on first use)
    lut_ms = 1000 * (time.perf_counter() - t)
    first, further = [], []
    for img in images:
        for i, text in enumerate(PROMPTS):
            t = time.perf_counter()
            model.segment(img, SegmentRequest(text))
            (first if i == 0 else further).append(1000 * (time.perf_counter() - t))
    base = []
    for img in images:
        t = time.perf_counter()
        naive_labels(img)
        base.append(1000 * (time.perf_counter() - t))
    f, g, b = statistics.median(first), statistics.median(further), statistics.median(base)
    print(f"demo segmenter, {len(images)} scenes at 384x384, {len(PROMPTS)} prompts each")
    print(f"  first prompt on an image (analysis + scoring): median {f:.1f} ms, max {max(first):.1f} ms")
    print(f"  further prompts (cached analysis):            median {g:.2f} ms, max {max(further):.2f} ms")
    print(f"  one-time palette table build:                 {lut_ms:.1f} ms")
    print(f"  baseline: per-pixel palette distance alone:    median {b:.1f} ms")
    print(f"  first prompt / 50 ms budget = {f / 50:.2f}  (target < 1)")
    print(f"  first prompt / naive palette snap = {f / b:.2f}")
    if max(first) >= 50:
        print("  WARNING: a first prompt exceeded 50 ms")


if __name__ == "__main__":
    main()
