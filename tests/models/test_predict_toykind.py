"""A tiny COCO-style benchmark kind and a colour segmenter, real enough to drive the runner,
the replay backend and `masklens predict` without depending on the real kinds.

Format: ``ann.json`` = COCO images with ``text_input`` (several entries may share a
``file_name``, as in SA-Co/Gold) and one annotation each; predictions = COCO results
``{image_id, segmentation, score}``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from masklens.core.cache.model_cache import EncodingCache, image_key
from masklens.core.files.io import atomic_write_json
from masklens.core.kinds.common.coco import load_coco, load_results
from masklens.core.masks import Mask, iou
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

COLOURS = {"red": (255, 0, 0), "green": (0, 255, 0), "blue": (0, 0, 255)}


class ToyKind(BenchmarkKind):
    name = "toy"
    title = "Toy"
    groups = ("Overall",)
    params = (ParamSpec("score_threshold", "--score-threshold", 0.5, symbol="t"),)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--ann", required=True)
        parser.add_argument("--pred", required=True, help="COCO results JSON")
        parser.add_argument("--images", default=None)

    def load_benchmark(self, *, ann: str, images: str | None = None, **_: Any) -> Benchmark:
        ds = load_coco(ann)
        root = Path(images) if images else Path(ann).parent / "images"
        samples = []
        for img in ds.images.values():
            ref = ImageRef("img", root / img.file_name if img.file_name else None, img.height, img.width, img.id)
            gt = GroundTruth("gt", [ds.mask_of(a) for a in ds.annotations.get(img.id, [])], img.height, img.width)
            prompt = Prompt(f"{img.id}", img.raw["text_input"], Role.POSITIVE, "img", "gt", source_id=img.id)
            samples.append(Sample(str(img.id), {"img": ref}, {"gt": gt}, [prompt]))
        return Benchmark("toy", Path(ann).stem, samples, sources={"ann": Path(ann)})

    def load_predictions(self, benchmark: Benchmark, /, *, pred: str, **_: Any) -> PredictionSet:
        sizes = {s.prompts[0].source_id: (s.images["img"].height, s.images["img"].width) for s in benchmark}
        records = load_results(pred, size_of=lambda r: sizes.get(r.get("image_id")))
        out = PredictionSet(name=Path(pred).stem)
        for s in benchmark:
            out.add(Prediction(s.prompts[0].id, []))
        for r in records:
            out.by_prompt[str(r.keys["image_id"])].instances.append(Instance(r.mask, r.score))
        return out

    def write_predictions(self, benchmark: Benchmark, predictions: PredictionSet, out: Path) -> list[Path]:
        recs = []
        for s in benchmark:
            pred = predictions.get(s.prompts[0].id)
            for inst in pred.instances if pred else []:
                recs.append({"image_id": s.prompts[0].source_id, "category_id": 1,
                             "segmentation": inst.mask.to_coco(), "score": inst.score})
        atomic_write_json(out, recs)
        return [Path(out)]

    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> Any:
        pred = predictions.get(sample.prompts[0].id)
        target = sample.gts["gt"].union()
        return [(i.score, iou(i.mask, target)) for i in (pred.instances if pred else [])]

    def sample_readout(self, sample: Sample, overlaps: Any, params: Mapping[str, float]) -> dict[str, Any]:
        kept = [v for s, v in overlaps if s >= params["score_threshold"]]
        return {"sample": sample.id, "best_iou": max(kept, default=0.0)}

    def summarize(self, samples, overlaps, readouts, params):  # type: ignore[no-untyped-def]
        n = len(readouts)
        return {"Overall": {"mIoU": sum(r["best_iou"] for r in readouts) / n if n else None}}


class ColourSegmenter(Segmenter):
    """Finds pure-colour regions; counts model calls and image encodings (cached by content)."""

    info = BackendInfo("toy-colour", "Toy colour segmenter", None, 0.5, needs_weights=False)

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.calls = 0  # prompts answered by the model
        self.encodes = 0  # images "encoded"
        self.cache = EncodingCache(64 << 20)
        self.hook = None  # called before each prompt (tests raise from it)

    def _encode(self, image: np.ndarray) -> np.ndarray:
        def compute() -> np.ndarray:
            self.encodes += 1
            return image.astype(np.int16)

        return self.cache.get_or_compute(image_key(image), compute, lambda a: a.nbytes)

    def segment(self, image: np.ndarray, request: SegmentRequest) -> SegmentResult:
        if self.hook is not None:
            self.hook(request)
        self.calls += 1
        enc = self._encode(image)
        colour = COLOURS.get(request.text.split()[-1])
        if colour is None:
            return SegmentResult([], [], presence=0.0, provenance={"model": self.info.name})
        m = (np.abs(enc - np.array(colour)).sum(axis=2) < 30)
        masks = [Mask.from_array(m)] if m.any() else []
        return SegmentResult(masks, [0.9] * len(masks), presence=0.9 if masks else 0.1,
                             provenance={"model": self.info.name})


def make_scene(path: Path, shapes: dict[str, tuple[int, int, int, int]], size=(48, 64)) -> dict[str, np.ndarray]:
    """Draw filled rectangles (x0, y0, x1, y1) of the named colours; returns their masks."""
    h, w = size
    img = np.full((h, w, 3), 128, np.uint8)
    masks = {}
    for name, (x0, y0, x1, y1) in shapes.items():
        img[y0:y1, x0:x1] = COLOURS[name]
        m = np.zeros((h, w), bool)
        m[y0:y1, x0:x1] = True
        masks[name] = m
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), cv2.cvtColor(img, cv2.COLOR_RGB2BGR))
    return masks


def make_toy_benchmark(root: Path) -> Path:
    """Two image files, five prompts (three on the first file): returns ann.json."""
    a = make_scene(root / "images" / "a.png", {"red": (2, 2, 20, 20), "blue": (30, 10, 60, 40)})
    b = make_scene(root / "images" / "b.png", {"green": (5, 5, 25, 40)})
    entries = [(1, "a.png", "red", a["red"]), (2, "a.png", "blue", a["blue"]),
               (3, "a.png", "green", np.zeros((48, 64), bool)), (4, "b.png", "green", b["green"]),
               (5, "b.png", "dark red", np.zeros((48, 64), bool))]
    images, anns = [], []
    for i, fname, text, m in entries:
        images.append({"id": i, "file_name": fname, "height": 48, "width": 64, "text_input": text})
        if m.any():
            anns.append({"id": 100 + i, "image_id": i, "segmentation": Mask.from_array(m).to_coco()})
    ann = root / "ann.json"
    ann.write_text(json.dumps({"images": images, "annotations": anns}))
    return ann


def build_toy(tmp_path: Path) -> tuple[ToyKind, argparse.Namespace, Benchmark]:
    """The toy kind, its parsed arguments (no predictions) and the loaded benchmark."""
    ann = make_toy_benchmark(tmp_path / "bench")
    args = argparse.Namespace(ann=str(ann), pred=None, images=None)
    kind = ToyKind()
    return kind, args, kind.load_benchmark(**vars(args))


@pytest.fixture
def toy(tmp_path: Path) -> tuple[ToyKind, argparse.Namespace, Benchmark]:
    return build_toy(tmp_path)


def test_toy_kind_round_trip(toy, tmp_path):
    """The helper kind itself is sound: predictions written are read back equal."""
    from masklens.core.inference.runner import load_image, to_prediction

    kind, args, bench = toy
    seg = ColourSegmenter()
    ps = PredictionSet()
    for s in bench:
        img = load_image(s.images["img"].path)
        ps.add(to_prediction(s.prompts[0].id, seg.segment(img, SegmentRequest(s.prompts[0].text))))
    out = tmp_path / "pred.json"
    kind.write_predictions(bench, ps, out)
    args.pred = str(out)
    back = kind.load_predictions(bench, **vars(args))
    for pid, pred in ps.by_prompt.items():
        assert [i.mask for i in back.get(pid).instances] == [i.mask for i in pred.instances]
    assert len(ps.get("1").instances) == 1 and ps.get("3").instances == []
