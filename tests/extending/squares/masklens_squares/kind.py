"""The Squares kind: each sample is one 32×32 image with one square to find from a text prompt.

Files: ``--ann`` ``{"samples": [{"id", "text", "box": [x0, y0, x1, y1]}]}`` and ``--pred``
``{"<sample id>": [{"box": [x0, y0, x1, y1], "score": s}, …]}``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.errors import DataFormatError
from masklens.core.files.io import atomic_write_json, read_json
from masklens.core.masks import Mask, iou_matrix
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
from masklens_squares.metrics import best_accepted_iou, summary

SIZE = 32


def square(box: Sequence[int], *, where: str = "box") -> Mask:
    if len(box) != 4 or not all(isinstance(v, int) for v in box):
        raise DataFormatError(f"{where}: expected [x0, y0, x1, y1] integers, got {box!r}")
    a = np.zeros((SIZE, SIZE), bool)
    x0, y0, x1, y1 = box
    a[y0:y1, x0:x1] = True
    return Mask.from_array(a)


#: one sample's overlaps: the IoU of each predicted square with the ground truth, and its score
SquaresOverlaps = dict[str, list[float]]


class SquaresKind(BenchmarkKind[SquaresOverlaps]):
    name = "squares"
    title = "Squares"
    groups = ("all",)
    params = (ParamSpec("score_threshold", "--score-threshold", 0.5,
                        help="accept an instance when its score s ≥ t", symbol="t"),)
    metric_help = {"IoU": "IoU of the best instance with s ≥ t", "mIoU": "mean of the samples' IoU",
                   "hit_rate": "share of samples whose IoU ≥ 0.5"}

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--ann", required=True, help="ground truth (JSON)")
        parser.add_argument("--pred", help="predictions (JSON)")

    def load_benchmark(self, *, ann: str, **_: Any) -> Benchmark:
        data = read_json(ann)
        samples = []
        for i, s in enumerate(data["samples"]):
            sid = str(s["id"])
            image = ImageRef(sid, None, SIZE, SIZE)
            gt = GroundTruth("square", [square(s["box"], where=f"{ann}: samples[{i}].box")], SIZE, SIZE)
            prompt = Prompt(sid, s["text"], Role.POSITIVE, sid, "square")
            samples.append(Sample(sid, {sid: image}, {"square": gt}, [prompt]))
        return Benchmark("squares", Path(ann).parent.name, samples, sources={"ann": Path(ann)})

    def load_predictions(self, benchmark: Benchmark, /, *, pred: str | None = None, **_: Any) -> PredictionSet:
        ps = PredictionSet(name=Path(pred).stem if pred else "none")
        for sid, insts in (read_json(pred) if pred else {}).items():
            ps.add(Prediction(sid, [Instance(square(d["box"]), float(d["score"])) for d in insts]))
        return ps

    def write_predictions(self, benchmark: Benchmark, predictions: PredictionSet, out: Path) -> list[Path]:
        raise NotImplementedError("squares predictions are written by hand in this example")

    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> SquaresOverlaps:
        pred = predictions.get(sample.prompts[0].id)
        insts = pred.instances if pred else []
        gt = sample.gts["square"].masks
        ious = iou_matrix([i.mask for i in insts], gt)[:, 0].tolist() if insts else []
        return {"ious": ious, "scores": [i.score for i in insts]}

    def sample_readout(self, sample: Sample, overlaps: SquaresOverlaps, params: Mapping[str, float]) -> dict[str, Any]:
        iou = best_accepted_iou(overlaps["ious"], overlaps["scores"], params["score_threshold"])
        return {"sample_id": sample.id, "IoU": iou, "hit": iou >= 0.5}

    def summarize(self, samples: Sequence[Sample], overlaps: Sequence[SquaresOverlaps],
                  readouts: Sequence[Mapping[str, Any]],
                  params: Mapping[str, float]) -> dict[str, dict[str, Any]]:
        return {"all": summary([r["IoU"] for r in readouts])}


KIND = SquaresKind()


def write_example(folder: Path) -> dict[str, Path]:
    """Three samples and predictions with known scores: IoUs 1.0, 0.5 (at t = 0.5), 0.0."""
    folder.mkdir(parents=True, exist_ok=True)
    ann = {"samples": [{"id": "a", "text": "square", "box": [4, 4, 12, 12]},
                       {"id": "b", "text": "square", "box": [0, 0, 8, 8]},
                       {"id": "c", "text": "square", "box": [20, 20, 30, 30]}]}
    pred = {"a": [{"box": [4, 4, 12, 12], "score": 0.9}],
            "b": [{"box": [0, 0, 8, 4], "score": 0.5}, {"box": [0, 0, 8, 8], "score": 0.4}],
            "c": [{"box": [0, 20, 10, 30], "score": 0.8}]}
    atomic_write_json(folder / "ann.json", ann)
    atomic_write_json(folder / "pred.json", pred)
    return {"ann": folder / "ann.json", "pred": folder / "pred.json"}
