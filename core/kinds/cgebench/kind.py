"""CGEBench: SA-Co/Gold-style COCO JSON with a hypernym chain per image entry.

Ground truth: ``images[]`` entries carry ``text_input`` (p_base) and ``hypernyms:
[p1, p2, p3]``; G is the union of the entry's non-crowd annotations.
Predictions: COCO results ``{image_id, level, segmentation, score}`` with ``level``
0 (p_base) … 3. One sample per image entry; its prompts are p_base (positive,
level 0) and the three hypernyms (Role.HYPERNYM, level k), all scored against G.
Metrics: :mod:`masklens.core.kinds.cgebench.metrics`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, cast

from masklens.core.errors import DataFormatError
from masklens.core.kinds.cgebench import metrics as cge
from masklens.core.kinds.common.coco import (
    CocoDataset,
    collect_predictions,
    load_coco,
    load_results,
    resolve_image_path,
    write_results,
)
from masklens.core.masks import resize_nearest
from masklens.core.schema import (
    Benchmark,
    GroundTruth,
    ImageRef,
    PredictionSet,
    Prompt,
    Role,
    Sample,
)
from masklens.core.scoring.contract import BenchmarkKind, ParamSpec, PathLike, Value

LEVELS = 4  # p_base, p1, p2, p3
GT_KEY = "G"
IMAGE_KEY = "image"


def prompt_id(image_id: Any, level: int) -> str:
    return f"{image_id}/p{level}"


def _hypernyms(raw: dict[str, Any], path: Path, record: str) -> list[str]:
    hyp = raw.get("hypernyms")
    if hyp is None:
        raise DataFormatError("missing field", path=path, record=record, field="hypernyms",
                              hint="CGEBench entries need hypernyms: [p1, p2, p3]")
    if not isinstance(hyp, list) or len(hyp) != LEVELS - 1 or not all(isinstance(h, str) and h.strip() for h in hyp):
        raise DataFormatError(f"expected a list of {LEVELS - 1} non-empty strings [p1, p2, p3], got {hyp!r}",
                              path=path, record=record, field="hypernyms")
    return hyp


def load_cgebench(ann: str | os.PathLike[str], images_dir: str | os.PathLike[str] | None = None) -> Benchmark:
    """Load a CGEBench annotation file into one Sample per image entry."""
    ds: CocoDataset = load_coco(ann)
    samples: list[Sample] = []
    for img_id, img in ds.images.items():
        record = f"image id {img_id}"
        text = img.raw.get("text_input")
        if not isinstance(text, str) or not text.strip():
            raise DataFormatError("missing or empty text (p_base)", path=ds.path, record=record, field="text_input")
        chain = [text, *_hypernyms(img.raw, ds.path, record)]
        masks, crowd = [], []
        for a in ds.annotations.get(img_id, []):
            masks.append(ds.image_mask(a))
            flag = a.get("iscrowd", 0)
            if flag not in (0, 1, True, False):
                raise DataFormatError(f"iscrowd must be 0 or 1, got {flag!r}", path=ds.path,
                                      record=f"annotation id {a.get('id', '?')}", field="iscrowd")
            crowd.append(bool(flag))
        gt = GroundTruth(GT_KEY, masks, img.height, img.width, label=text, crowd=crowd,
                         meta={"image_id": img_id})
        prompts = [
            Prompt(
                id=prompt_id(img_id, k),
                text=chain[k],
                role=Role.POSITIVE if k == 0 else Role.HYPERNYM,
                image=IMAGE_KEY,
                gt=GT_KEY,
                level=k,
                source_id=img_id,
            )
            for k in range(LEVELS)
        ]
        path = resolve_image_path(ds.path, images_dir, img.file_name, record=f"image id {img_id}")
        samples.append(Sample(
            id=str(img_id),
            images={IMAGE_KEY: ImageRef(IMAGE_KEY, path, img.height, img.width, source_id=img_id)},
            gts={GT_KEY: gt},
            prompts=prompts,
            meta={"image_id": img_id, "file_name": img.file_name, "hypernyms": chain[1:]},
        ))
    return Benchmark("cgebench", ds.path.stem, samples, sources={"ann": ds.path}, meta={"title": ds.title})


def load_cgebench_predictions(pred: str | os.PathLike[str], benchmark: Benchmark) -> PredictionSet:
    """Read COCO results with ``level``; every prompt gets a (possibly empty) Prediction."""
    p = Path(pred)
    sizes: dict[Any, tuple[int, int]] = {}
    for s in benchmark.samples:
        ref = s.images[IMAGE_KEY]
        sizes[ref.source_id] = (ref.height, ref.width)

    def size_of(rec: dict[str, Any]) -> tuple[int, int] | None:
        img_id, level = rec.get("image_id"), rec.get("level")
        if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level < LEVELS:
            raise DataFormatError(f"level must be an integer 0..{LEVELS - 1}, got {level!r}",
                                  path=p, record=f"image_id={img_id!r}, level={level!r}", field="level")
        try:
            return sizes.get(img_id)
        except TypeError:  # unhashable id
            return None

    records = load_results(p, key_fields=("image_id", "level"), size_of=size_of)
    return collect_predictions(p, records, (pr.id for s in benchmark.samples for pr in s.prompts),
                               lambda keys: prompt_id(keys["image_id"], keys["level"]))


class CgeLevelRecord(TypedDict):
    level: int  # 0 = p_base, 1 … 3 = p1 … p3
    prompt_id: str | None
    text: str | None
    IoGT: float | None  # |M ∩ G| / |G| at t (None for |G| = 0)
    cumulative: float | None  # the same for the union of this and the earlier levels
    outcome: str | None  # "zero", "partial", "full"
    kept: int  # instances with s ≥ t
    instances: int
    pred_area: int
    inter_area: int
    cumulative_area: int


class _CgeRecordKeys(TypedDict):
    sample: str
    image_id: int | str | None
    gt_area: int
    IoGT_p0: float | None
    cumulative_p0: float | None
    IoGT_p1: float | None
    cumulative_p1: float | None
    IoGT_p2: float | None
    cumulative_p2: float | None
    IoGT_p3: float | None
    cumulative_p3: float | None
    levels: list[CgeLevelRecord]


class CgeRecord(_CgeRecordKeys, total=False):
    """One entry's record (docs/metrics.md, CGEBench): IoGT and cumulative IoGT per level."""

    reason: str  # why the entry is not scored (an empty ground truth)


class CGEBenchKind(BenchmarkKind[cge.CgeAreas]):
    name = "cgebench"
    title = "CGEBench"
    result_keys = ("level",)
    groups = tuple(f"p{k}" for k in range(LEVELS))
    params = (
        ParamSpec("score_threshold", "--score-threshold", 0.5, help="keep instances with score ≥ t", symbol="t"),
    )
    metric_help = {
        "IoGT": "mean |M(p_k) ∩ G| / |G| (M = union of instances with s ≥ t)",
        "cumulative": "mean c(i) = |(∩_{k≤i} M(p_k)) ∩ G| / |G|",
        "zero": "fraction of entries with IoGT exactly 0",
        "full": "fraction of entries with IoGT exactly 1",
        "partial": "fraction of entries with 0 < IoGT < 1",
        "N": "entries scored (|G| > 0)",
    }

    # ------------------------------------------------------------ loading
    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--ann", required=True, help="CGEBench annotation JSON (SA-Co/Gold style + hypernyms)")
        parser.add_argument("--pred", required=True, help="COCO results JSON with image_id, level, segmentation, score")
        parser.add_argument("--images", default=None, help="folder of the image files (optional; scoring needs none)")

    def load_benchmark(self, *, ann: PathLike, images: PathLike | None = None, **_: Any) -> Benchmark:
        return load_cgebench(ann, images)

    def load_predictions(self, benchmark: Benchmark, /, *, pred: PathLike, **_: Any) -> PredictionSet:
        return load_cgebench_predictions(pred, benchmark)

    def write_predictions(self, benchmark: Benchmark, predictions: PredictionSet, out: Path) -> list[Path]:
        """COCO results JSON with ``level``; ``out`` is a file, or a folder that gets ``pred.json``."""
        return write_results(benchmark, predictions, out,
                             lambda s, pr: {"image_id": pr.source_id, "level": pr.level})

    # ------------------------------------------------------------ scoring
    def write_corrected(
        self, original: Benchmark, corrected: Benchmark, out: Path, files: Mapping[str, Any]
    ) -> list[Path]:
        from masklens.core.kinds.cgebench.corrected import write_corrected

        return write_corrected(original, corrected, out, files)

    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> cge.CgeAreas:
        g = sample.gts[GT_KEY]
        union = g.union()
        levels = []
        for pr in level_prompts(sample):
            pred = predictions.get(pr.id) if pr is not None else None
            insts = pred.instances if pred else []
            # predictions made live may come at another size: nearest resize to G's (no-op otherwise)
            levels.append(([resize_nearest(i.mask, g.height, g.width) for i in insts], [i.score for i in insts]))
        return cge.cge_areas(union, levels)

    def sample_readout(self, sample: Sample, overlaps: cge.CgeAreas, params: Mapping[str, float]) -> CgeRecord:
        row = overlaps.rows[overlaps.row(params["score_threshold"])]
        g = overlaps.gt_area
        rec: dict[str, Any] = {"sample": sample.id, "image_id": sample.meta.get("image_id"), "gt_area": g}
        levels = []
        for k, pr in enumerate(level_prompts(sample)):
            inter, cum, pred_area, kept = row[k]
            v, c = cge.iogt(inter, g), cge.iogt(cum, g)
            rec[f"IoGT_p{k}"], rec[f"cumulative_p{k}"] = v, c
            levels.append({
                "level": k, "prompt_id": pr.id if pr else None, "text": pr.text if pr else None,
                "IoGT": v, "cumulative": c, "outcome": cge.outcome(inter, g),
                "kept": kept, "instances": overlaps.n_instances[k],
                "pred_area": pred_area, "inter_area": inter, "cumulative_area": cum,
            })
        rec["levels"] = levels
        if g <= 0:
            rec["reason"] = cge.EMPTY_GT_REASON
        return cast(CgeRecord, rec)  # the IoGT_p{k} keys are made in the loop

    def summarize(self, samples: Sequence[Sample], overlaps: Sequence[cge.CgeAreas],
                  readouts: Sequence[Mapping[str, Any]],
                  params: Mapping[str, float]) -> dict[str, dict[str, Value]]:
        out: dict[str, dict[str, Value]] = {}
        for k in range(LEVELS):
            inter = [r["levels"][k]["inter_area"] for r in readouts]
            cum = [r["levels"][k]["cumulative_area"] for r in readouts]
            gt = [r["gt_area"] for r in readouts]
            out[f"p{k}"] = cge.level_summary(inter, cum, gt)
        return out

    def notes(self, samples: Sequence[Sample], overlaps: Sequence[cge.CgeAreas]) -> list[str]:
        empty = sum(1 for o in overlaps if o.gt_area <= 0)
        if not empty:
            return []
        return [f"{empty} of {len(overlaps)} entries have an empty ground truth (|G| = 0) and are not scored"]


def level_prompts(sample: Sample) -> list[Prompt | None]:
    """The prompt of each level 0..3 (the last one of a level wins; a missing level is None)."""
    out: list[Prompt | None] = [None] * LEVELS
    for p in sample.prompts:
        k = 0 if p.level is None and p.role == Role.POSITIVE else p.level
        if isinstance(k, int) and 0 <= k < LEVELS:
            out[k] = p
    return out


KIND = CGEBenchKind()

__all__ = ["KIND", "CGEBenchKind", "CgeLevelRecord", "CgeRecord", "load_cgebench", "load_cgebench_predictions"]
