"""Golden outputs of real model weights: record each backend's masks (COCO RLE) and scores on a
fixed set of images and prompts, and compare a later run with them.

``make bench-gpu`` (tests/benchmarks/gpu_models.py) records every backend whose weights are present.
The first run writes the golden file (``GOLDEN``); every later run writes ``LATEST`` and prints its
differences from the golden one; ``tests/models/test_golden_outputs.py`` compares the two files (and
is skipped, saying why, while either is missing). So a change that moves real-model outputs cannot
go unnoticed once one person with the weights has run the benchmark twice.

Tolerances (a later run may use another GPU or another bf16 kernel): scores within ``score_atol``;
masks matched in order with IoU ≥ ``min_iou``; an instance that only one run has is tolerated when
its score is within ``score_atol`` of the backend's threshold (a borderline instance). The weights
must be the same (checkpoint sha256); otherwise the comparison says so instead of comparing.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_DIR = ROOT / "tests" / "benchmarks" / "golden"
GOLDEN = GOLDEN_DIR / "real_models.json"
LATEST = GOLDEN_DIR / "real_models.latest.json"
#: demo images (320×320 PNG) the golden outputs are recorded on
DEMO_IMAGES = ("cafe/images/0001.png", "r2sm/images/0002.png", "pcs/images/0001.png")
#: generated photographs (tests/models/photos.py): (height, width, seed); not square, odd sizes
PHOTOS = ((480, 641, 11), (517, 333, 12))
PROMPTS = ("a person", "a red object", "the animal on the left")


def golden_images() -> dict[str, np.ndarray]:
    """name -> H×W×3 uint8 RGB, decoded by masklens' one decoder (demo) or generated (photos)."""
    from masklens.core.files.images import read_image

    sys.path.insert(0, str(ROOT / "tests" / "models"))
    from photos import photo

    images = {f"demo/{p}": read_image(ROOT / "resources" / "demo" / p) for p in DEMO_IMAGES}
    images.update({f"photo/{h}x{w}-{seed}": photo(h, w, seed) for h, w, seed in PHOTOS})
    return images


def record(segmenter: Any, images: dict[str, np.ndarray], prompts: tuple[str, ...] = PROMPTS) -> dict[str, Any]:
    """One backend's outputs: provenance (checkpoint hashes, device, dtype, thresholds) and, per
    (image, prompt), the scores, RLE masks and presence."""
    items = []
    prov: dict[str, Any] = {}
    for name, image in images.items():
        for prompt in prompts:
            from masklens.core.models.base import SegmentRequest

            res = segmenter.segment(image, SegmentRequest(prompt))
            prov = res.provenance
            items.append({
                "image": name,
                "prompt": prompt,
                "scores": [float(s) for s in res.scores],
                "masks": [m.to_coco() for m in res.masks],
                "presence": res.presence,
            })
    keep = ("model", "device", "dtype", "score_threshold", "mask_threshold")
    provenance = {k: prov.get(k) for k in keep}
    provenance["checkpoints"] = {k: v for k, v in prov.items() if k.endswith("sha256")}
    return {"provenance": provenance, "items": items}


@dataclass(frozen=True)
class Tolerance:
    score_atol: float = 0.01
    min_iou: float = 0.97


def compare(golden: dict[str, Any], latest: dict[str, Any], tol: Tolerance = Tolerance()) -> list[str]:
    """Differences between two :func:`record` outputs of one backend (empty: they agree)."""
    from masklens.core.masks import Mask, iou

    g_ckpt, l_ckpt = golden["provenance"]["checkpoints"], latest["provenance"]["checkpoints"]
    if g_ckpt != l_ckpt:
        return [f"other weights (checkpoint sha256 {g_ckpt} vs {l_ckpt}): not comparable"]
    threshold = float(golden["provenance"].get("score_threshold") or 0.0)
    out: list[str] = []
    latest_items = {(i["image"], i["prompt"]): i for i in latest["items"]}
    for g in golden["items"]:
        where = f"{g['image']} '{g['prompt']}'"
        cur = latest_items.pop((g["image"], g["prompt"]), None)
        if cur is None:
            out.append(f"{where}: missing from the later run")
            continue
        if (g["presence"] is None) != (cur["presence"] is None) or (
            g["presence"] is not None and abs(g["presence"] - cur["presence"]) > tol.score_atol
        ):
            out.append(f"{where}: presence {g['presence']} -> {cur['presence']}")
        out += _compare_instances(where, g, cur, threshold, tol, Mask, iou)
    out += [f"{img} '{p}': only in the later run" for img, p in latest_items]
    return out


def _compare_instances(where, g, cur, threshold, tol, mask_cls, iou) -> list[str]:
    out = []
    n = min(len(g["scores"]), len(cur["scores"]))
    for i in range(n):
        ds = abs(g["scores"][i] - cur["scores"][i])
        if ds > tol.score_atol:
            out.append(f"{where}: instance {i} score {g['scores'][i]:.4f} -> {cur['scores'][i]:.4f}")
        a, b = mask_cls.from_coco(g["masks"][i]), mask_cls.from_coco(cur["masks"][i])
        if a.shape != b.shape:
            out.append(f"{where}: instance {i} mask size {a.shape} -> {b.shape}")
        elif a.area + b.area and iou(a, b) < tol.min_iou:
            out.append(f"{where}: instance {i} mask IoU {iou(a, b):.4f} < {tol.min_iou}")
    for which, extra in (("golden", g["scores"][n:]), ("later", cur["scores"][n:])):
        firm = [s for s in extra if abs(s - threshold) > tol.score_atol]
        if firm:
            out.append(f"{where}: {len(firm)} instance(s) only in the {which} run (scores {firm})")
    return out


def compare_files(golden: dict[str, Any], latest: dict[str, Any], tol: Tolerance = Tolerance()) -> dict[str, list[str]]:
    """backend -> differences, for the backends recorded in both files."""
    return {
        name: compare(golden["backends"][name], latest["backends"][name], tol)
        for name in sorted(set(golden.get("backends", {})) & set(latest.get("backends", {})))
    }
