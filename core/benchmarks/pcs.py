"""SA-Co/Gold promptable concept segmentation (PCS): loader, cgF1 scoring kind, COCO results I/O.

One ``Sample`` per image entry (an image–noun-phrase pair) of the first annotator file,
with one prompt (the entry's ``text_input``) and one ``GroundTruth`` per annotator file
(keys ``gt0``, ``gt1``, …). Predictions are COCO results ``{image_id, segmentation, score}``
with ``image_id`` = the entry id. Metrics: :mod:`masklens.core.metrics.pcs`.

Summary group: ``all`` (one subset per run; pass a subset's annotator files with
repeated ``--gt``). Entries with ``is_instance_exhaustive: false`` in any annotator file
are loaded (to browse) but not scored; a missing field counts as exhaustive.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.benchmarks.coco import CocoDataset, CocoImage, load_coco, load_results
from masklens.core.errors import DataFormatError
from masklens.core.io import atomic_write_json, read_json
from masklens.core.masks import Mask, iou_matrix, resize_nearest, rle_counts_problems
from masklens.core.metrics.pcs import (
    PCS_HELP,
    EntryStack,
    EntryTable,
    StackCache,
    entry_readout,
    entry_table,
    summarize_entries,
)
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
from masklens.core.scoring import BenchmarkKind, ParamSpec, Value

SCORE_THRESHOLD = ParamSpec(
    "score_threshold",
    "--score-threshold",
    0.5,
    help="accept a predicted instance when its score s ≥ t",
    symbol="t",
)


# ---------------------------------------------------------------- shared helpers
def add_images_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--images", metavar="DIR", help="folder of the image files (for the GUI and predict)"
    )


def image_path(images: str | Path | None, img: CocoImage) -> Path | None:
    if images is None or not img.file_name:
        return None
    return Path(images) / img.file_name


def exhaustive(img: CocoImage, path: Path) -> bool:
    """``is_instance_exhaustive`` of an image entry; a missing field counts as True."""
    value = img.raw.get("is_instance_exhaustive", True)
    if isinstance(value, bool) or value in (0, 1):
        return bool(value)
    raise DataFormatError(
        f"expected true/false, got {value!r}",
        path=path,
        record=f"image id {img.id}",
        field="is_instance_exhaustive",
    )


def entry_gt(
    ds: CocoDataset, img: CocoImage, key: str, label: str | None, cache: dict[Any, Mask]
) -> GroundTruth:
    """All annotations of an image entry (crowd flags kept) at the entry's size."""
    masks: list[Mask] = []
    crowd: list[bool] = []
    for ann in ds.annotations.get(img.id, []):
        rec = f"annotation id {ann.get('id', '?')}"
        flag = ann.get("iscrowd", 0)
        if not (isinstance(flag, bool) or flag in (0, 1)):
            raise DataFormatError(
                f"expected 0 or 1, got {flag!r}", path=ds.path, record=rec, field="iscrowd"
            )
        m = cache.get(id(ann))
        if m is None:
            m = ds.mask_of(ann)
            cache[id(ann)] = m
        if m.shape != (img.height, img.width):
            raise DataFormatError(
                f"mask size {m.height}x{m.width} differs from its image's {img.height}x{img.width}",
                path=ds.path,
                record=rec,
                field="segmentation",
            )
        masks.append(m)
        crowd.append(bool(flag))
    return GroundTruth(
        key, masks, img.height, img.width, label=label, crowd=crowd, meta={"file": str(ds.path)}
    )


def text_of(img: CocoImage, path: Path, *, required: bool) -> str:
    text = img.raw.get("text_input")
    if text is None and not required:
        return ""
    if not isinstance(text, str):
        raise DataFormatError(
            "missing field" if text is None else f"expected a string, got {type(text).__name__}",
            path=path,
            record=f"image id {img.id}",
            field="text_input",
        )
    return text


def _rle_fast(seg: Any) -> tuple[list[int], bytes] | None:
    """(size, counts) of a compressed RLE with str counts and a non-empty size, else None."""
    if type(seg) is dict and type(seg.get("counts")) is str:
        size = seg.get("size")
        if type(size) is list and len(size) == 2 and all(type(v) is int and v > 0 for v in size):
            return size, seg["counts"].encode("ascii", errors="replace")
    return None


def read_results(
    path: str | Path, sizes: Mapping[Any, tuple[int, int]]
) -> list[tuple[Any, Mask, float]]:
    """COCO results as (image_id, mask at its image's size, score): the compressed RLE of all
    records is checked in one batch. On any problem the file is read again by
    :func:`~masklens.core.benchmarks.coco.load_results`, whose error names file, record and field."""
    p = Path(path)

    def size_of(rec: dict[str, Any]) -> tuple[int, int] | None:
        key = rec.get("image_id")
        return sizes.get(key) if type(key) in (int, str) else None

    def slow() -> list[tuple[Any, Mask, float]]:
        recs = load_results(p, key_fields=("image_id",), size_of=size_of)
        return [(r.keys["image_id"], r.mask, r.score) for r in recs]

    data = read_json(p)
    if isinstance(data, dict) and isinstance(data.get("annotations"), list):
        data = data["annotations"]
    if not isinstance(data, list):
        return slow()
    out: list[tuple[Any, Mask | None, float]] = []
    batch: list[tuple[int, list[int], bytes]] = []
    for i, rec in enumerate(data):
        size = size_of(rec) if type(rec) is dict else None
        score = rec.get("score") if size is not None else None
        if type(score) not in (int, float) or not math.isfinite(score):
            return slow()
        seg = rec.get("segmentation")
        fast = _rle_fast(seg)
        if fast is not None:
            batch.append((i, *fast))
            out.append((rec["image_id"], None, float(score)))
            continue
        where = f"[{i}] (image_id={rec['image_id']!r})"
        mask = (
            Mask.from_coco(seg, size[0], size[1], path=p, record=where) if seg is not None else None
        )
        if mask is None or (mask.shape != tuple(size) and 0 in mask.shape):
            return slow()
        out.append((rec["image_id"], mask, float(score)))
    if any(rle_counts_problems([c for _, _, c in batch], [s[0] * s[1] for _, s, _ in batch])):
        return slow()
    for i, size, counts in batch:
        out[i] = (out[i][0], Mask({"size": size, "counts": counts}), out[i][2])
    result = []
    for key, mask, score in out:
        h, w = sizes[key]
        result.append((key, mask if mask.shape == (h, w) else mask.resized(h, w), score))  # type: ignore[union-attr]
    return result


def load_coco_predictions(
    path: str | Path,
    benchmark: Benchmark,
    *,
    ignorable: Mapping[Any, tuple[int, int]] | None = None,
) -> PredictionSet:
    """COCO results keyed by ``image_id`` = a prompt's ``source_id``; every prompt gets a
    Prediction (no record = no instance). Records of ``ignorable`` image ids are read and
    validated, then dropped (counted in ``provenance['ignored_records']``)."""
    p = Path(path)
    sizes: dict[Any, tuple[int, int]] = dict(ignorable or {})
    prompt_of: dict[Any, str] = {}
    preds = PredictionSet(name=p.stem, provenance={"file": str(p)})
    for sample in benchmark.samples:
        for prompt in sample.prompts:
            img = sample.images[prompt.image]
            sizes[prompt.source_id] = (img.height, img.width)
            prompt_of[prompt.source_id] = prompt.id
            preds.by_prompt.setdefault(prompt.id, Prediction(prompt.id, []))
    ignored = 0
    for key, mask, score in read_results(p, sizes):
        pid = prompt_of.get(key)
        if pid is None:
            ignored += 1
            continue
        preds.by_prompt[pid].instances.append(Instance(mask, score))
    preds.provenance["ignored_records"] = ignored
    return preds


def checked_masks(ds: CocoDataset) -> dict[int, Mask]:
    """Masks of the dataset's compressed-RLE annotations whose counts pass one batch check,
    keyed by ``id(annotation)``; the others are left to :meth:`CocoDataset.mask_of` (which
    raises the error naming the record)."""
    picked = []
    for anns in ds.annotations.values():
        for ann in anns:
            fast = _rle_fast(ann.get("segmentation"))
            if fast is not None:
                picked.append((ann, *fast))
    problems = rle_counts_problems([c for _, _, c in picked], [s[0] * s[1] for _, s, _ in picked])
    return {
        id(ann): Mask({"size": size, "counts": counts})
        for (ann, size, counts), bad in zip(picked, problems, strict=True)
        if bad is None
    }


def write_coco_results(
    benchmark: Benchmark, predictions: PredictionSet, out: Path, default_name: str
) -> list[Path]:
    """Write predictions as COCO results (atomic); ``out`` is a ``.json`` file or a folder."""
    out = Path(out)
    target = out if out.suffix.lower() == ".json" else out / default_name
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for sample in benchmark.samples:
        for prompt in sample.prompts:
            if prompt.id in seen:
                continue
            seen.add(prompt.id)
            pred = predictions.get(prompt.id)
            for inst in pred.instances if pred else []:
                records.append(
                    {
                        "image_id": prompt.source_id,
                        "category_id": 1,
                        "segmentation": inst.mask.to_coco(),
                        "score": float(inst.score),
                    }
                )
    atomic_write_json(target, records, indent=None)
    return [target]


def instances_of(
    prediction: Prediction | None, height: int, width: int
) -> tuple[list[Mask], tuple[float, ...]]:
    """Masks (resized to the ground truth's size, nearest) and scores of a prediction."""
    if prediction is None or not prediction.instances:
        return [], ()
    size = [height, width]
    masks = [
        i.mask if list(i.mask.rle["size"]) == size else resize_nearest(i.mask, height, width)
        for i in prediction.instances
    ]
    return masks, tuple([float(i.score) for i in prediction.instances])


def non_crowd(gt: GroundTruth) -> list[Mask]:
    return [m for i, m in enumerate(gt.masks) if not (gt.crowd and gt.crowd[i])]


# ---------------------------------------------------------------- PCS loader
def load_pcs(paths: Sequence[str | Path], images: str | Path | None = None) -> Benchmark:
    """Load one SA-Co/Gold subset: one to three annotator files listing the same image entries."""
    if not paths:
        raise DataFormatError("give at least one ground-truth file (--gt)")
    datasets = [load_coco(p) for p in paths]
    base = datasets[0]
    for ds in datasets[1:]:
        extra = [i for i in ds.images if i not in base.images]
        gone = [i for i in base.images if i not in ds.images]
        if extra or gone:
            which = f"image id {(extra or gone)[0]!r}"
            raise DataFormatError(
                f"{'extra' if extra else 'missing'} image entry: annotator files must list the "
                f"same image entries as {base.path}",
                path=ds.path,
                record=which,
            )
    caches: list[dict[Any, Mask]] = [checked_masks(ds) for ds in datasets]
    samples: list[Sample] = []
    for img in base.images.values():
        text = text_of(img, base.path, required=False)
        flags = []
        gts: dict[str, GroundTruth] = {}
        for a, ds in enumerate(datasets):
            other = ds.images[img.id]
            if (other.height, other.width) != (img.height, img.width):
                raise DataFormatError(
                    f"size {other.height}x{other.width} differs from {img.height}x{img.width} in {base.path}",
                    path=ds.path,
                    record=f"image id {img.id}",
                )
            flags.append(exhaustive(other, ds.path))
            gts[f"gt{a}"] = entry_gt(ds, other, f"gt{a}", text, caches[a])
        is_exh = all(flags)
        role = Role.POSITIVE if non_crowd(gts["gt0"]) else Role.NEGATIVE
        prompt = Prompt(
            id=str(img.id),
            text=text,
            role=role,
            image="image",
            gt="gt0",
            source_id=img.id,
            meta={"exhaustive": is_exh},
        )
        samples.append(
            Sample(
                id=str(img.id),
                images={
                    "image": ImageRef(
                        "image", image_path(images, img), img.height, img.width, img.id
                    )
                },
                gts=gts,
                prompts=[prompt],
                group="all",
                meta={"exhaustive": is_exh, "file_name": img.file_name},
            )
        )
    sources = {f"gt{a}": ds.path for a, ds in enumerate(datasets)}
    if images is not None:
        sources["images"] = Path(images)
    return Benchmark("pcs", base.path.stem, samples, sources=sources)


# ---------------------------------------------------------------- PCS kind
@dataclass
class PcsOverlaps:
    """Threshold-free cache of one entry: its matching table and per-instance IoUs."""

    table: EntryTable
    scores: tuple[float, ...]
    best_ious: list[tuple[float, ...]]  # per annotator: each instance's best IoU
    missing: bool
    exhaustive: bool


def entry_overlaps(
    masks: list[Mask], scores: tuple[float, ...], gts: Sequence[GroundTruth]
) -> tuple[EntryTable, list[tuple[float, ...]]]:
    mats = [iou_matrix(masks, non_crowd(g)) for g in gts]
    best = [
        tuple(float(v) for v in (m.max(axis=1) if m.shape[1] else np.zeros(len(masks))))
        for m in mats
    ]
    return entry_table(scores, mats), best


class PcsKind(BenchmarkKind):
    name = "pcs"
    title = "SA-Co/Gold (PCS, cgF1)"
    groups = ("all",)
    params = (SCORE_THRESHOLD,)
    metric_help = PCS_HELP

    def __init__(self) -> None:
        self._cache = StackCache()

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--gt",
            action="append",
            required=True,
            metavar="FILE",
            help="annotator file of the subset (repeat for the 3-annotator oracle)",
        )
        parser.add_argument("--pred", required=True, metavar="FILE", help="COCO results JSON")
        add_images_flag(parser)

    def load_benchmark(self, args: argparse.Namespace) -> Benchmark:
        return load_pcs(args.gt, getattr(args, "images", None))

    def load_predictions(self, args: argparse.Namespace, benchmark: Benchmark) -> PredictionSet:
        return load_coco_predictions(args.pred, benchmark)

    def write_predictions(
        self, benchmark: Benchmark, predictions: PredictionSet, out: Path
    ) -> list[Path]:
        return write_coco_results(benchmark, predictions, out, "pcs_results.json")

    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> PcsOverlaps:
        prompt = sample.prompts[0]
        gts = list(sample.gts.values())
        h, w = gts[0].height, gts[0].width
        pred = predictions.get(prompt.id)
        masks, scores = instances_of(pred, h, w)
        table, best = entry_overlaps(masks, scores, gts)
        return PcsOverlaps(
            table, scores, best, pred is None, bool(sample.meta.get("exhaustive", True))
        )

    def sample_readout(
        self, sample: Sample, overlaps: PcsOverlaps, params: Mapping[str, float]
    ) -> dict[str, Any]:
        t = params["score_threshold"]
        prompt = sample.prompts[0]
        entry = entry_readout(overlaps.table, t)
        ious = overlaps.best_ious[entry["annotator"]]  # type: ignore[index]
        return {
            "id": sample.id,
            "image_id": prompt.source_id,
            "text": prompt.text,
            "exhaustive": overlaps.exhaustive,
            "missing": overlaps.missing,
            "n_pred": len(overlaps.scores),
            "max_score": max(overlaps.scores, default=0.0),
            **entry,
            "instances": [
                {"score": s, "iou": v, "accepted": s >= t}
                for s, v in zip(overlaps.scores, ious, strict=True)
            ],
        }

    def summarize(
        self,
        samples: list[Sample],
        overlaps: list[PcsOverlaps],
        readouts: list[dict[str, Any]],
        params: Mapping[str, float],
    ) -> dict[str, dict[str, Value]]:
        stacks = self._cache.get(
            overlaps,
            lambda: {"all": EntryStack.build([o.table for o in overlaps if o.exhaustive])},
        )
        return {"all": summarize_entries(stacks["all"], params["score_threshold"])}

    def notes(self, samples: list[Sample], overlaps: list[PcsOverlaps]) -> list[str]:
        out = []
        skipped = sum(not o.exhaustive for o in overlaps)
        if skipped:
            out.append(f"{skipped} entries not instance-exhaustive: excluded from the metrics")
        missing = sum(o.missing for o in overlaps)
        if missing:
            out.append(f"{missing} entries have no prediction entry at all (scored as empty)")
        return out


KIND = PcsKind()
