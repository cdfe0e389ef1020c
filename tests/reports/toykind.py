"""A tiny, real BenchmarkKind for report/evaluate tests: boxes as masks, a positive and a
negative prompt per sample, groups A/B, params t (score) and τ (IoU)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.files.io import atomic_write_json, read_json
from masklens.core.masks import Mask, iou_matrix, union_all
from masklens.core.models.base import BackendInfo, Segmenter, SegmentResult
from masklens.core.reports.layout import Failure, KindLayout, register_layout
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
from masklens.core.scoring.contract import BenchmarkKind, ParamSpec, register_kind

H = W = 32


def box(x0: int, y0: int, x1: int, y1: int) -> Mask:
    a = np.zeros((H, W), bool)
    a[y0:y1, x0:x1] = True
    return Mask.from_array(a)


class ToyKind(BenchmarkKind):
    name = "toy"
    title = "Toy"
    groups = ("all", "A", "B")
    params = (
        ParamSpec("score_threshold", "--score-threshold", 0.5, symbol="t"),
        ParamSpec("iou_threshold", "--iou-threshold", 0.5, symbol="τ"),
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--ann", required=True)
        parser.add_argument("--pred")

    def load_benchmark(self, *, ann: str, **_: Any) -> Benchmark:
        data = read_json(ann)
        samples = []
        for s in data["samples"]:
            gt = GroundTruth("target", [box(*s["gt"])], H, W)
            img = ImageRef("img", Path(s["image"]) if s.get("image") else None, H, W)
            prompts = [
                Prompt(f"{s['id']}/pos", s["pos"], Role.POSITIVE, "img", "target"),
                Prompt(f"{s['id']}/neg", s["neg"], Role.NEGATIVE, "img", "target"),
            ]
            samples.append(Sample(s["id"], {"img": img}, {"target": gt}, prompts, s["group"]))
        return Benchmark("toy", "toybench", samples, sources={"ann": ann})

    def load_predictions(self, benchmark: Benchmark, /, *, pred: str, **_: Any) -> PredictionSet:
        return load_toy_predictions(pred)

    def write_predictions(self, benchmark, predictions, out):
        out = Path(out) / "pred.json" if Path(out).is_dir() else Path(out)

        def xyxy(m):
            x, y, w, h = m.bbox
            return [int(x), int(y), int(x + w), int(y + h)]

        atomic_write_json(out, {
            pid: [[xyxy(i.mask), i.score] for i in p.instances]
            for pid, p in predictions.by_prompt.items()
        })
        return [out]

    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> Any:
        gt = sample.gts["target"].masks
        out = {}
        for p in sample.prompts:
            pred = predictions.get(p.id)
            inst = pred.instances if pred else []
            scores = sorted((i.score for i in inst), reverse=True)
            # IoU of the union of instances with s >= t for each distinct t
            order = sorted(inst, key=lambda i: -i.score)
            ious = []
            for k in range(len(order) + 1):
                u = union_all([i.mask for i in order[:k]], H, W)
                ious.append(float(iou_matrix([u], gt)[0, 0]) if k else 0.0)
            out[p.role.value] = (scores, ious)
        return out

    def sample_readout(self, sample, overlaps, params: Mapping[str, float]) -> dict[str, Any]:
        t, tau = params["score_threshold"], params["iou_threshold"]
        rec: dict[str, Any] = {"sample": sample.id}
        for role, (scores, ious) in overlaps.items():
            k = sum(1 for s in scores if s >= t)
            rec[f"{role}_iou"] = ious[k]
            rec[f"{role}_score"] = scores[0] if scores else 0.0
        rec["pos_ok"] = int(rec["positive_iou"] >= tau)
        rec["neg_fp"] = int(rec["negative_iou"] >= tau)
        return rec

    def summarize(self, samples, overlaps, readouts, params):
        out = {}
        for g in self.groups:
            rs = [r for s, r in zip(samples, readouts, strict=True) if g == "all" or s.group == g]
            n = len(rs)
            out[g] = {
                "N": n,
                "IoU": float(np.mean([r["positive_iou"] for r in rs])) if n else None,
                "TP_rate": sum(r["pos_ok"] for r in rs) / n if n else None,
                "FPR": sum(r["neg_fp"] for r in rs) / n if n else None,
            }
        return out


def load_toy_predictions(path) -> PredictionSet:
    data = read_json(path)
    ps = PredictionSet(name=str(path))
    for pid, insts in data.items():
        ps.add(Prediction(pid, [Instance(box(*b), float(s)) for b, s in insts]))
    return ps


class ToyLayout(KindLayout):
    headline = ("IoU", "TP_rate", "FPR")

    def failures(self, sample, readout):
        out = []
        if not readout["pos_ok"]:
            out.append(Failure("positive missed", 1 - readout["positive_iou"], (f"{sample.id}/pos",)))
        if readout["neg_fp"]:
            out.append(Failure("negative accepted", readout["negative_score"]))
        return out


KIND = ToyKind()


def install() -> ToyKind:
    register_kind("toy", KIND)
    register_layout("toy", ToyLayout())
    return KIND


def write_fixture(tmp, *, pos_text="red square", note_prompt=None) -> dict[str, Any]:
    """ann.json + two prediction files (model B fixes s2 and breaks s3 relative to A)."""
    samples = [
        {"id": "s1", "group": "A", "gt": [2, 2, 12, 12], "pos": pos_text, "neg": "blue"},
        {"id": "s2", "group": "A", "gt": [10, 10, 30, 30], "pos": note_prompt or "circle", "neg": "sun"},
        {"id": "s3", "group": "B", "gt": [0, 0, 16, 32], "pos": "bar", "neg": "wall"},
        {"id": "s4", "group": "B", "gt": [20, 0, 32, 10], "pos": "tab", "neg": "lid"},
    ]
    import cv2

    (tmp / "images").mkdir(exist_ok=True)
    for s in samples:  # white box on black where the target is
        arr = np.zeros((H, W, 3), np.uint8)
        x0, y0, x1, y1 = s["gt"]
        arr[y0:y1, x0:x1] = 255
        s["image"] = str(tmp / "images" / f"{s['id']}.png")
        cv2.imwrite(s["image"], arr)
    ann = tmp / "ann.json"
    atomic_write_json(ann, {"samples": samples})
    a = {
        "s1/pos": [[[2, 2, 12, 12], 0.9]], "s1/neg": [],
        "s2/pos": [[[0, 0, 5, 5], 0.8]], "s2/neg": [[[10, 10, 30, 30], 0.7]],
        "s3/pos": [[[0, 0, 16, 32], 0.95], [[20, 20, 30, 30], 0.3]], "s3/neg": [],
        "s4/pos": [[[20, 0, 32, 10], 0.6]], "s4/neg": [[[0, 20, 8, 30], 0.9]],
    }
    b = dict(a)
    b["s2/pos"] = [[[10, 10, 30, 30], 0.9]]
    b["s2/neg"] = []
    b["s3/pos"] = [[[0, 0, 4, 4], 0.9]]
    pa, pb = tmp / "pred_a.json", tmp / "pred_b.json"
    atomic_write_json(pa, a)
    atomic_write_json(pb, b)
    return {"ann": ann, "pred_a": pa, "pred_b": pb}


class BrightSegmenter(Segmenter):
    """A real, weight-free Segmenter: the bright pixels, scored 0.9 — except for prompts in
    ``reject`` (scored 0.1). Counts its calls so tests can prove cache resumption."""

    info = BackendInfo("bright", "Bright pixels (test)", None, 0.5, needs_weights=False)
    calls = 0

    def __init__(self, reject=("blue", "sun", "wall", "lid"), weights=None, **_):
        self.reject, self.weights = set(reject), weights

    def segment(self, image, request):
        type(self).calls += 1
        m = Mask.from_array(image.max(axis=2) > 128)
        return SegmentResult([m], [0.1 if request.text in self.reject else 0.9])

    def cache_identity(self):
        return f"bright:{self.weights}"


def install_backend() -> None:
    from masklens.core.models.registry import register_backend

    register_backend(BrightSegmenter.info, BrightSegmenter)
