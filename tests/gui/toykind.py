"""A tiny real benchmark kind, segmenter and data for the GUI tests (independent of the demo).

Each sample: a 64×64 image with a red square (the target), a blue square, and prompts of every
role. Ground truths: "target" (red square), "G" (red ∪ blue, for hypernyms), "amodal" (the red
square grown by 4 px). Readout per prompt role: the best IoU of instances with s ≥ t and whether
one is aligned (IoU ≥ τ).
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from masklens.core.errors import DataFormatError
from masklens.core.files.io import read_json
from masklens.core.masks import Mask, iou_matrix, union_all
from masklens.core.models.base import BackendInfo, Segmenter, SegmentRequest, SegmentResult
from masklens.core.schema import (
    Benchmark,
    GroundTruth,
    ImageRef,
    Instance,
    Prediction,
    PredictionSet,
    Prompt,
    Role,
    Sample,
)
from masklens.core.scoring.contract import BenchmarkKind, ParamSpec

SIZE = 64
PROMPTS = [("red square", "positive", None, "target"), ("blue square", "negative", None, "target"),
           ("shape", "hypernym", 1, "G"), ("visible red square", "modal", None, "target"),
           ("whole red square", "amodal", None, "amodal")]


_PROMPTS = [(text, Role(role), level, gt) for text, role, level, gt in PROMPTS]


def _key(p: Prompt) -> str:
    return f"{p.role.value}{p.level or ''}"


def box_mask(box: list[int] | tuple[int, ...]) -> Mask:
    return _box_mask(tuple(box))


@functools.lru_cache(maxsize=4096)
def _box_mask(box: tuple[int, ...]) -> Mask:  # masks are immutable: share them
    arr = np.zeros((SIZE, SIZE), np.uint8)
    x0, y0, x1, y1 = box
    arr[y0:y1, x0:x1] = 1
    return Mask.from_array(arr)


@functools.lru_cache(maxsize=4096)
def _gt_masks(t: tuple[int, ...], o: tuple[int, ...]) -> tuple[Mask, Mask, Mask]:
    red, blue = box_mask(t), box_mask(o)
    g = union_all([red, blue], SIZE, SIZE)
    amodal = box_mask([max(0, t[0] - 4), max(0, t[1] - 4), t[2] + 4, t[3] + 4])
    return red, g, amodal


class ToyKind(BenchmarkKind):
    name = "toy"
    title = "Toy"
    groups = ("all", "A", "B")
    params = (ParamSpec("score_threshold", "--score-threshold", 0.5, symbol="t", help="score threshold"),
              ParamSpec("iou_threshold", "--iou-threshold", 0.3, symbol="τ", help="IoU threshold"))
    metric_help = {"best_iou": "best IoU of an instance with s ≥ t", "hit": "an instance with s ≥ t and IoU ≥ τ"}
    delay = 0.0  # seconds per sample in sample_overlaps (the cancel test slows scoring down)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--ann", required=True, help="toy benchmark JSON")
        parser.add_argument("--pred", required=True, help="toy predictions JSON")
        parser.add_argument("--images", default=None, help="images folder")

    def load_benchmark(self, *, ann: str, images: str | None = None, **_: Any) -> Benchmark:
        path = Path(ann)
        data = read_json(path)
        if not isinstance(data, dict) or not isinstance(data.get("samples"), list):
            raise DataFormatError("missing or non-list field", path=path, field="samples")
        images = Path(images) if images else path.parent
        samples = []
        for i, rec in enumerate(data["samples"]):
            if not isinstance(rec.get("target"), list):
                raise DataFormatError("expected [x0, y0, x1, y1]", path=path, record=f"samples[{i}]", field="target")
            red, g, amodal = _gt_masks(tuple(rec["target"]), tuple(rec["other"]))
            gts = {k: GroundTruth(k, [m], SIZE, SIZE) for k, m in (("target", red), ("G", g), ("amodal", amodal))}
            prompts = [Prompt(f"{rec['id']}:{j}", text, role, "img", gt, level=level)
                       for j, (text, role, level, gt) in enumerate(_PROMPTS)]
            samples.append(Sample(rec["id"], {"img": ImageRef("img", images / rec["image"], SIZE, SIZE)},
                                  gts, prompts, group=rec.get("group")))
        return Benchmark("toy", path.stem, samples, sources={"ann": path})

    def load_predictions(self, benchmark: Benchmark, /, *, pred: str, **_: Any) -> PredictionSet:
        out = PredictionSet(name=Path(pred).name)
        for rec in read_json(pred):
            pid = f"{rec['sample']}:{rec['prompt']}"
            pred = out.by_prompt.setdefault(pid, Prediction(pid, []))
            pred.instances.append(Instance(box_mask(rec["box"]), float(rec["score"])))
        for s in benchmark.samples:
            for p in s.prompts:
                if p.id not in out.by_prompt:
                    out.by_prompt[p.id] = Prediction(p.id, [])
        return out

    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> Any:
        if self.delay:
            time.sleep(self.delay)
        out = {}
        for p in sample.prompts:
            pred = predictions.get(p.id)
            if pred is None:
                continue
            ious = iou_matrix([i.mask for i in pred.instances], [sample.gts[p.gt].union()])[:, 0]
            out[_key(p)] = [(i.score, float(v)) for i, v in zip(pred.instances, ious, strict=True)]
        return out

    def sample_readout(self, sample: Sample, overlaps: Any, params: Mapping[str, float]) -> dict[str, Any]:
        t, tau = params["score_threshold"], params["iou_threshold"]
        rec: dict[str, Any] = {"id": sample.id}
        for key, pairs in overlaps.items():
            kept = [v for s, v in pairs if s >= t]
            rec[key] = {"best_iou": max(kept, default=0.0), "hit": any(v >= tau for v in kept), "n_kept": len(kept)}
        return rec

    def summarize(self, samples, overlaps, readouts, params):
        keys = [k for k in (readouts[0] if readouts else {}) if k != "id"]
        return {"all": {f"{k}.hit_rate": sum(r[k]["hit"] for r in readouts if k in r) / max(1, len(readouts))
                        for k in keys}}


KIND = ToyKind()


def write_toy(folder: Path, n: int = 6, *, predictions: bool = True, images: bool = True) -> dict[str, Path]:
    """Write a toy benchmark of ``n`` samples (images, annotation JSON, predictions JSON)."""
    folder.mkdir(parents=True, exist_ok=True)
    samples, preds = [], []
    for i in range(n):
        t = [8 + i % 5, 8, 28 + i % 5, 28]
        o = [36, 36, 56, 56]
        if images:
            img = np.zeros((SIZE, SIZE, 3), np.uint8)
            img[t[1]:t[3], t[0]:t[2]] = (0, 0, 255)  # red in BGR
            img[o[1]:o[3], o[0]:o[2]] = (255, 0, 0)  # blue in BGR
            cv2.imwrite(str(folder / f"img{i}.png"), img)
        samples.append({"id": f"s{i}", "image": f"img{i}.png", "group": "AB"[i % 2], "target": t, "other": o})
        # positive: a good box with a score that falls from 0.95 (sample 0) by 0.1 per sample
        preds.append({"sample": f"s{i}", "prompt": 0, "box": t, "score": round(0.95 - 0.1 * i, 2)})
        # negative: the blue square (not aligned) with score 0.6
        preds.append({"sample": f"s{i}", "prompt": 1, "box": o, "score": 0.6})
    ann = folder / "toy.json"
    ann.write_text(json.dumps({"samples": samples}))
    pred = folder / "toy_pred.json"
    pred.write_text(json.dumps(preds if predictions else []))
    return {"ann": ann, "pred": pred}


class ColourSegmenter(Segmenter):
    """Segments the red and/or blue pixels named by the prompt ("red", "blue", "shape")."""

    info = BackendInfo("toy-colour", "Toy colour segmenter", None, 0.5, needs_weights=False)
    delay = 0.0

    def segment(self, image: np.ndarray, request: SegmentRequest) -> SegmentResult:
        if self.delay:
            time.sleep(self.delay)
        red = (image[..., 0] > 200) & (image[..., 2] < 50)
        blue = (image[..., 2] > 200) & (image[..., 0] < 50)
        text = request.text.lower()
        masks, scores = [], []
        if "red" in text:
            masks.append(Mask.from_array(red))
            scores.append(0.9)
        if "blue" in text:
            masks.append(Mask.from_array(blue))
            scores.append(0.6)
        if "shape" in text:
            masks.append(Mask.from_array(red | blue))
            scores.append(0.7)
        return SegmentResult(masks, scores, presence=max(scores, default=0.0))


SLOW = ColourSegmenter()
SLOW_INFO = BackendInfo("toy-slow", "Toy slow segmenter", None, 0.5, needs_weights=False)


def install(monkeypatch) -> None:
    """Register the toy kind and segmenters for one test (undone afterwards, so that other
    tests' registries stay as they are)."""
    from masklens.core.models import registry
    from masklens.core.scoring import contract as scoring

    monkeypatch.setattr(scoring, "KINDS", scoring.KINDS.copy())
    monkeypatch.setattr(registry, "BACKENDS", registry.BACKENDS.copy())
    scoring.register_kind("toy", KIND)
    registry.register_backend(ColourSegmenter.info, lambda **_: ColourSegmenter())
    registry.register_backend(SLOW_INFO, lambda **_: SLOW)
