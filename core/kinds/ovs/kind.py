"""Mask-wise OVS protocol: the masklens OVS format (docs/formats/ovs.md), loader, writer and kind.

Ground truth (``--ann``): COCO-style JSON with ``vocabulary`` [{id, name}], ``images``
and ``annotations`` {image_id, category_id, segmentation}; several annotations of
one (image, class) are united. Predictions (``--pred``): per (image, class) either a
``score_map`` file (PNG uint8 → v/255, uint16 → v/65535, or .npy floats; relative to
the prediction file) or ``masks`` {"0.1": RLE, …, "0.9": RLE} (nested). A class
without a prediction record predicted nothing. One Sample per image, one
VOCABULARY prompt per vocabulary entry; a prediction's instances are its level
sets B(τ) with score = τ.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from masklens.core.errors import DataFormatError, Where
from masklens.core.files.io import atomic_write_json, read_json
from masklens.core.files.limits import check_image_header, check_npy_header, is_finite_number
from masklens.core.files.paths import inside_root
from masklens.core.kinds.common.coco import load_coco, results_target
from masklens.core.kinds.common.prefix_union import prefix_unions
from masklens.core.kinds.ovs import metrics as ovs
from masklens.core.masks import Mask, intersect_all, iou_matrix, resize_nearest
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
from masklens.core.scoring.contract import BenchmarkKind, ParamSpec, PathLike, Value
from masklens.core.scoring.overlaps import derived

FORMAT = "masklens-ovs/1"
T_KEYS = tuple(f"{t:.1f}" for t in ovs.THRESHOLDS)


# ---------------------------------------------------------------- ground truth
def _vocabulary(raw: Any, path: Path) -> dict[Any, str]:
    if not isinstance(raw, list) or not raw:
        raise DataFormatError("missing or empty list", path=path, field="vocabulary")
    vocab: dict[Any, str] = {}
    for i, entry in enumerate(raw):
        rec = f"vocabulary[{i}]"
        if not isinstance(entry, dict):
            raise DataFormatError("expected an object {id, name}", path=path, record=rec)
        cid, name = entry.get("id"), entry.get("name")
        if not isinstance(cid, (int, str)) or isinstance(cid, bool):
            raise DataFormatError("expected an integer or string id", path=path, record=rec, field="id")
        if not isinstance(name, str) or not name.strip():
            raise DataFormatError("expected a non-empty string", path=path, record=rec, field="name")
        if cid in vocab:
            raise DataFormatError(f"duplicate id {cid!r}", path=path, record=rec, field="id")
        if name in vocab.values():
            raise DataFormatError(f"duplicate name {name!r}", path=path, record=rec, field="name")
        vocab[cid] = name
    return vocab


def load_ovs_annotations(path: str | os.PathLike[str]) -> Benchmark:
    """Read and validate an OVS ground-truth file."""
    coco = load_coco(path)
    p = coco.path
    vocab = _vocabulary(coco.raw.get("vocabulary", coco.raw.get("categories")), p)
    root = p.parent
    samples: list[Sample] = []
    for img_id, img in coco.images.items():
        per_class: dict[str, list[Mask]] = {}
        for ann in coco.annotations.get(img_id, []):
            rec = f"annotation id {ann.get('id', '?')} (image_id={img_id!r})"
            cid = ann.get("category_id")
            if cid not in vocab:
                raise DataFormatError(f"category_id {cid!r} is not in the vocabulary", path=p, record=rec,
                                      field="category_id")
            mask = coco.image_mask(ann)
            per_class.setdefault(vocab[cid], []).append(mask)
        sid = str(img_id)
        gts = {n: GroundTruth(n, m, img.height, img.width, label=n) for n, m in per_class.items()}
        prompts = [
            Prompt(id=f"{sid}:{name}", text=name, role=Role.VOCABULARY, image="image",
                   gt=name if name in gts else None, source_id=cid)
            for cid, name in vocab.items()
        ]
        file = inside_root(root, img.file_name, path=p, record=f"image id {img_id}", field="file_name",
                           what="image path") if img.file_name else None
        image = ImageRef("image", file, img.height, img.width, img_id)
        samples.append(Sample(sid, {"image": image}, gts, prompts, meta={"image_id": img_id}))
    return Benchmark("ovs", p.stem, samples, sources={"ann": p},
                     meta={"vocabulary": dict(vocab), "format": FORMAT, "title": coco.title})


# ---------------------------------------------------------------- predictions
def _read_score_map(f: Path, *, path: Path, rec: str) -> np.ndarray:
    where: Where = {"path": path, "record": rec, "field": "score_map"}
    if f.suffix.lower() == ".npy":
        check_npy_header(f, what="score map", **where)  # before anything is allocated
        try:
            arr = np.load(f, allow_pickle=False)
        except (ValueError, OSError, MemoryError) as exc:
            raise DataFormatError(f"cannot read score map {f} ({exc})", **where) from None
        if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.number) or not np.isfinite(arr).all():
            raise DataFormatError(f"score map {f} must be a 2-D array of finite numbers", **where)
        return arr.astype(np.float64)
    import cv2

    from masklens.core.masks import quiet_opencv

    check_image_header(f, what="score map", **where)
    quiet_opencv(cv2)
    try:
        arr = cv2.imread(str(f), cv2.IMREAD_UNCHANGED)
    except cv2.error:
        arr = None
    if arr is None:
        raise DataFormatError(f"cannot decode score map {f}", **where)
    if arr.ndim != 2 or arr.dtype not in (np.uint8, np.uint16):
        raise DataFormatError(f"score map {f} must be a single-channel 8- or 16-bit PNG", **where)
    return arr.astype(np.float64) / (255.0 if arr.dtype == np.uint8 else 65535.0)


def level_sets(scores: np.ndarray, height: int, width: int) -> list[Mask]:
    """B(τ) = {score ≥ τ} for τ = 0.1 … 0.9, after a nearest resize to (height, width)."""
    if scores.shape != (height, width):
        import cv2

        scores = cv2.resize(scores, (width, height), interpolation=cv2.INTER_NEAREST_EXACT)
    return [Mask.from_array(scores >= t) for t in ovs.THRESHOLDS]


def _threshold_masks(raw: Any, height: int, width: int, *, path: Path, rec: str) -> list[Mask]:
    if not isinstance(raw, dict):
        raise DataFormatError("expected an object {\"0.1\": RLE, …, \"0.9\": RLE}", path=path, record=rec,
                              field="masks")
    keys: dict[str, Any] = {}
    for key, seg in raw.items():
        try:
            norm = f"{float(key):.1f}"
        except ValueError:
            norm = key
        if norm not in T_KEYS or not math.isclose(float(norm), float(key)):
            raise DataFormatError(f"unknown threshold {key!r} (expected {', '.join(T_KEYS)})", path=path,
                                  record=rec, field="masks")
        keys[norm] = seg
    absent = [k for k in T_KEYS if k not in keys]
    if absent:
        raise DataFormatError(f"missing thresholds {', '.join(absent)}", path=path, record=rec, field="masks")
    raw_masks = [Mask.from_coco(keys[k], height, width, path=path, record=rec, field=f"masks.{k}")
                 for k in T_KEYS]
    for k, m in zip(T_KEYS, raw_masks, strict=True):
        if m.shape != raw_masks[0].shape:
            raise DataFormatError(f"mask is {m.height}x{m.width} but the one at {T_KEYS[0]} is "
                                  f"{raw_masks[0].height}x{raw_masks[0].width} (all nine must have one size)",
                                  path=path, record=rec, field=f"masks.{k}")
    masks = [resize_nearest(m, height, width) for m in raw_masks]
    for i in range(1, len(masks)):
        if intersect_all([masks[i], masks[i - 1]]).area != masks[i].area:
            raise DataFormatError(
                f"mask at {T_KEYS[i]} is not inside the mask at {T_KEYS[i - 1]} (B(τ) must shrink as τ grows)",
                path=path, record=rec, field="masks")
    return masks


def load_ovs_predictions(path: str | os.PathLike[str], benchmark: Benchmark) -> PredictionSet:
    """Read a prediction file; every record must name a known image and vocabulary entry."""
    p = Path(path)
    raw = read_json(p)
    records = raw.get("predictions") if isinstance(raw, dict) else raw
    if not isinstance(records, list):
        raise DataFormatError("expected a list of predictions (or {\"predictions\": [...]})", path=p)
    if isinstance(raw, dict) and "thresholds" in raw:
        given = raw["thresholds"]
        if not isinstance(given, list) or not all(is_finite_number(t) for t in given) \
                or [round(float(t), 6) for t in given] != list(ovs.THRESHOLDS):
            raise DataFormatError("thresholds must be [0.1, 0.2, …, 0.9]", path=p, field="thresholds")
    by_image = {s.meta["image_id"]: s for s in benchmark}
    vocab: dict[Any, str] = benchmark.meta["vocabulary"]
    prompts = {q.id: q for s in benchmark for q in s.prompts}
    out = PredictionSet(name=p.stem, provenance={"pred": str(p)})
    for i, r in enumerate(records):
        rec = f"[{i}]"
        if not isinstance(r, dict):
            raise DataFormatError("expected an object", path=p, record=rec)
        for key in ("image_id", "category_id"):
            if key not in r:
                raise DataFormatError("missing field", path=p, record=rec, field=key)
        rec = f"[{i}] (image_id={r['image_id']!r}, category_id={r['category_id']!r})"
        sample = by_image.get(r["image_id"]) if type(r["image_id"]) in (int, str) else None
        if sample is None:
            raise DataFormatError("image_id points to no image", path=p, record=rec, field="image_id")
        name = vocab.get(r["category_id"]) if type(r["category_id"]) in (int, str) else None
        if name is None:
            raise DataFormatError("category_id is not in the vocabulary", path=p, record=rec, field="category_id")
        prompt = prompts[f"{sample.id}:{name}"]
        if prompt.id in out.by_prompt:
            raise DataFormatError("duplicate prediction for this (image, class)", path=p, record=rec)
        img = sample.images["image"]
        if ("score_map" in r) == ("masks" in r):
            raise DataFormatError("give exactly one of 'score_map' and 'masks'", path=p, record=rec)
        if "score_map" in r:
            if not isinstance(r["score_map"], str):
                raise DataFormatError("expected a file name", path=p, record=rec, field="score_map")
            f = inside_root(p.parent, r["score_map"], path=p, record=rec, field="score_map",
                            what="score map path")
            scores = _read_score_map(f, path=p, rec=rec)
            masks = level_sets(scores, img.height, img.width)
            source = "score_map"
        else:
            masks = _threshold_masks(r["masks"], img.height, img.width, path=p, rec=rec)
            source = "masks"
        instances = [Instance(mask=m, score=t, label=prompt.text) for m, t in zip(masks, ovs.THRESHOLDS, strict=True)]
        out.add(Prediction(prompt.id, instances, provenance={"source": source}))
    return out


def threshold_masks(pred: Prediction | None, height: int, width: int) -> list[Mask]:
    """B(τ) for each τ: union of the instances with score ≥ τ (empty without a prediction)."""
    if pred is None:
        return [Mask.empty(height, width) for _ in ovs.THRESHOLDS]
    masks = [resize_nearest(i.mask, height, width) for i in pred.instances]
    pu = prefix_unions(masks, [i.score for i in pred.instances], height, width)
    return [pu.unions[pu.row(t)] for t in ovs.THRESHOLDS]


def write_ovs_predictions(benchmark: Benchmark, predictions: PredictionSet, out: Path) -> list[Path]:
    """Write the ``masks`` form (one record per (image, class) with a non-empty B(0.1)) to the file
    ``out``, or to ``out/pred.json`` when ``out`` is an existing folder."""
    target = results_target(out)
    records = []
    for sample in benchmark:
        img = sample.images["image"]
        for prompt in sample.prompts:
            masks = threshold_masks(predictions.get(prompt.id), img.height, img.width)
            if masks[0].area == 0:
                continue
            records.append({"image_id": sample.meta["image_id"], "category_id": prompt.source_id,
                            "masks": {k: m.to_coco() for k, m in zip(T_KEYS, masks, strict=True)}})
    atomic_write_json(target, {"format": FORMAT, "thresholds": list(ovs.THRESHOLDS), "predictions": records},
                      indent=None)
    return [target]


# ---------------------------------------------------------------- kind
class OvsThresholdRecord(TypedDict):
    front: float | None  # mean per-class foreground IoU of the image's own classes
    predicted: int  # classes predicted at this threshold
    outmatched: list[list[Any]]  # [gt class, predicted class, IoU]
    err: float


class _OvsRecordKeys(TypedDict):
    id: str
    image_id: int | str | None
    gt_classes: list[Any]  # the class names with ground truth in the image
    thresholds: dict[str, OvsThresholdRecord]


class OvsRecord(_OvsRecordKeys, total=False):
    """One image's record (docs/metrics.md, OVS): per score-map threshold ("0.1" … "0.9")."""

    null_reasons: dict[str, str]  # an image without ground truth


class OvsKind(BenchmarkKind[ovs.ImageOverlaps]):
    name = "ovs"
    title = "Mask-wise OVS"
    groups = ("all", *T_KEYS)
    params = (
        ParamSpec("av_threshold", "--av-threshold", 0.7, 0.0, 1.0,
                  help="IoU above which a mismatched (GT, prediction) pair is out-matched (τ_AV)", symbol="τ_AV"),
    )
    metric_help = {
        "front": "mean over classes of TP/(TP+FP+FN) of the dataset-level binary confusion per class",
        "back": "mean over classes of TN/(TN+FP+FN)",
        "err": "Eq. 10: (1/|C|) Σ_c EM_c, |C| classes with ground truth, EM_c = mean over all images of the "
               "share of the image of class c's remaining (non-GT, not out-matched) mask; null when none remain",
        "err_class_mean": "mean over the classes with remaining masks of their mean remaining-mask share "
                          "(masklens' earlier err; variant)",
        "err_mask_mean": "mean share of the image over all remaining masks (masklens extra)",
        "err_rate": "Σ err_{i,c} / (images × vocabulary): wrongly claimed share per entry (masklens extra)",
        "outmatched": "out-matched pairs (IoU > τ_AV with a GT mask of another class)",
        "tau_star": "argmax_τ √(front² + (1 − err)²), lowest τ on ties",
        "AUC": "area under the upper envelope of front vs err (dominated points dropped), from (0,0), flat to err = 1",
        "communities": "greedy-modularity communities of the ambiguity graph at τ*",
        "modularity": "modularity Q of those communities",
        "community_rate": "communities / vocabulary size",
    }

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--ann", required=True, help="OVS ground truth (docs/formats/ovs.md)")
        parser.add_argument("--pred", required=True, help="OVS predictions: score maps or per-threshold masks")

    def load_benchmark(self, *, ann: PathLike, **_: Any) -> Benchmark:
        return load_ovs_annotations(ann)

    def load_predictions(self, benchmark: Benchmark, /, *, pred: PathLike, **_: Any) -> PredictionSet:
        return load_ovs_predictions(pred, benchmark)

    def write_predictions(self, benchmark: Benchmark, predictions: PredictionSet, out: Path) -> list[Path]:
        return write_ovs_predictions(benchmark, predictions, out)

    def corrected_sample(self, sample: Sample) -> Sample:
        from masklens.core.kinds.ovs.corrected import corrected_sample

        return corrected_sample(sample)

    def write_corrected(self, original: Benchmark, corrected: Benchmark, out: Path,
                        files: Mapping[str, Any]) -> list[Path]:
        from masklens.core.kinds.ovs.corrected import write_corrected

        return write_corrected(original, corrected, out, files)

    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> ovs.ImageOverlaps:
        img = sample.images["image"]
        gts = {n: g.union() for n, g in sample.gts.items()}
        gts = {n: m for n, m in gts.items() if m.area > 0}
        gt_names, gt_masks = list(gts), list(gts.values())
        per_class = {
            q.text: threshold_masks(pred, img.height, img.width)
            for q in sample.prompts
            if (pred := predictions.get(q.id)) is not None
        }
        per_t = []
        for k in range(len(ovs.THRESHOLDS)):
            masks = {n: ms[k] for n, ms in per_class.items() if ms[k].area > 0}
            inter: dict[ovs.ClassId, int] = {n: intersect_all([masks[n], gts[n]]).area for n in gt_names if n in masks}
            rem = tuple(n for n in masks if n not in gts)
            iou = iou_matrix([masks[n] for n in rem], gt_masks) if rem and gt_masks else np.zeros((len(rem), len(gt_masks)))
            pred_area: dict[ovs.ClassId, int] = {n: m.area for n, m in masks.items()}
            per_t.append(ovs.ThresholdOverlaps(pred_area, inter, rem, iou))
        return ovs.ImageOverlaps(img.height * img.width, {n: m.area for n, m in gts.items()}, tuple(per_t))

    def _readouts(self, overlaps: Sequence[ovs.ImageOverlaps], tau_av: float) -> list[list[ovs.ImageReadout]]:
        return [[ovs.image_readout(o, k, tau_av) for k in range(len(ovs.THRESHOLDS))] for o in overlaps]

    def sample_readout(self, sample: Sample, overlaps: ovs.ImageOverlaps, params: Mapping[str, float]) -> OvsRecord:
        per: dict[str, OvsThresholdRecord] = {}
        for k, key in enumerate(T_KEYS):
            r = ovs.image_readout(overlaps, k, float(params["av_threshold"]))
            per[key] = {
                "front": ovs.image_front(overlaps, k),
                "predicted": len(overlaps.per_threshold[k].pred_area),
                "outmatched": [[g, p, iou] for g, p, iou in r.pairs],
                "err": math.fsum(r.err.values()),
            }
        rec: OvsRecord = {"id": sample.id, "image_id": sample.meta["image_id"],
                               "gt_classes": list(overlaps.gt_classes), "thresholds": per}
        if not overlaps.gt_area:
            rec["null_reasons"] = {"front": "image has no ground truth"}
        return rec

    def _confusion(self, overlaps: Sequence[ovs.ImageOverlaps]) -> list[tuple[float | None, float | None, int]]:
        """front/back per threshold, independent of τ_AV: built once per overlaps list."""
        return derived(overlaps, "ovs.confusion", lambda: self._confusion_of(overlaps))

    @staticmethod
    def _confusion_of(overlaps: Sequence[ovs.ImageOverlaps]) -> list[tuple[float | None, float | None, int]]:
        return [ovs.confusion_scores(overlaps, k) for k in range(len(ovs.THRESHOLDS))]

    def _aggregate(self, samples: Sequence[Sample], overlaps: Sequence[ovs.ImageOverlaps], params: Mapping[str, float]) -> ovs.OvsSummary:
        vocab = len(samples[0].prompts) if samples else 0
        readouts = self._readouts(overlaps, float(params["av_threshold"]))
        return ovs.summarize(overlaps, readouts, vocab, self._confusion(overlaps))

    def summarize(self, samples: Sequence[Sample], overlaps: Sequence[ovs.ImageOverlaps],
                  readouts: Sequence[Mapping[str, Any]],
                  params: Mapping[str, float]) -> dict[str, dict[str, Value]]:
        agg = self._aggregate(samples, overlaps, params)
        out: dict[str, dict[str, Value]] = {}
        k = agg.tau_star_index
        best = agg.per_threshold[k] if k is not None else None
        graph = ovs.ambiguity_graph(best.av if best else {})
        out["all"] = {
            "tau_star": agg.tau_star,
            "front": best.front if best else None,
            "back": best.back if best else None,
            "err": best.err if best else None,
            "AUC": agg.auc,
            "outmatched": best.outmatched if best else None,
            "communities": len(graph.communities),
            "modularity": graph.modularity,
            "community_rate": len(graph.communities) / agg.vocabulary_size if agg.vocabulary_size else None,
            "N": agg.n_images,
            "classes": agg.n_classes,
            "vocabulary": agg.vocabulary_size,
        }
        for key, s in zip(T_KEYS, agg.per_threshold, strict=True):
            out[key] = {"front": s.front, "back": s.back, "err": s.err, "err_class_mean": s.err_class_mean,
                        "err_mask_mean": s.err_mask_mean, "err_rate": s.err_rate, "outmatched": s.outmatched}
        return out

    def extras(self, samples: Sequence[Sample], overlaps: Sequence[ovs.ImageOverlaps],
               readouts: Sequence[Mapping[str, Any]],
               params: Mapping[str, float]) -> dict[str, Any]:
        agg = self._aggregate(samples, overlaps, params)
        k = agg.tau_star_index
        graph = ovs.ambiguity_graph(agg.per_threshold[k].av if k is not None else {})
        return {
            "tau_star": agg.tau_star,
            "curve": [[t, s.err, s.front] for t, s in zip(ovs.THRESHOLDS, agg.per_threshold, strict=True)],
            "outmatched_pairs": {
                key: [[g, p, n] for (g, p), n in sorted(s.av.items())]
                for key, s in zip(T_KEYS, agg.per_threshold, strict=True)
            },
            "ambiguity_graph": {"threshold": agg.tau_star, "edges": [list(e) for e in graph.edges],
                                "communities": graph.communities, "modularity": graph.modularity},
        }


KIND = OvsKind()
