"""R2SM: COCO-style amodal annotations with modal/amodal text queries.

Ground truth: ``images[]``, ``annotations[]`` holding ``segmentation`` (modal,
visible) and ``amodal_segmentation`` (complete shape), and ``queries[]``
``{id, image_id, text, amodal: bool, ann_ids: [...]}``. The ground truth of a
query is the union of its annotations' amodal (``amodal: true``) or modal masks;
crowd annotations (``iscrowd: 1``) are left out of the union and are ignore
regions for AP, as everywhere in COCO. Predictions: COCO results
``{query_id, segmentation, score}`` (an ``image_id``, when present, must match).

One sample per image with queries; one prompt per query (Role.AMODAL or
Role.MODAL, ``source_id`` = query id) and, per query, both ground truths
(``q<ID>/modal`` and ``q<ID>/amodal``) so a readout can show both IoUs.
Metrics: :mod:`masklens.core.kinds.r2sm.metrics`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from masklens.core.errors import DataFormatError
from masklens.core.kinds.common.coco import (
    CocoDataset,
    collect_predictions,
    load_coco,
    load_results,
    resolve_image_path,
    write_results,
)
from masklens.core.kinds.r2sm import metrics as m
from masklens.core.masks import Mask, resize_nearest
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
from masklens.core.scoring.overlaps import derived

IMAGE_KEY = "image"
GROUPS = ("all", "amodal", "modal")


def id_order(query_id: Any) -> tuple[int, Any]:
    """Sort key of a query id as ``sorted(imgIds)`` orders COCO image ids: numbers ascending,
    then strings ascending (a file may mix both; COCO itself would refuse to compare them)."""
    return (0, query_id) if isinstance(query_id, int) else (1, str(query_id))


def prompt_id(query_id: Any) -> str:
    return f"q{query_id}"


def gt_key(query_id: Any, amodal: bool) -> str:
    return f"q{query_id}/{'amodal' if amodal else 'modal'}"


def _annotation_index(ds: CocoDataset) -> dict[Any, dict[str, Any]]:
    by_id: dict[Any, dict[str, Any]] = {}
    for anns in ds.annotations.values():
        for a in anns:
            rec = f"annotation of image {a['image_id']!r}"
            aid = a.get("id")
            if not isinstance(aid, (int, str)) or isinstance(aid, bool):
                raise DataFormatError(f"annotation id must be an integer or string, got {aid!r}",
                                      path=ds.path, record=rec, field="id")
            if aid in by_id:
                raise DataFormatError("duplicate annotation id", path=ds.path, record=f"annotation id {aid}", field="id")
            for key in ("segmentation", "amodal_segmentation"):
                if key not in a:
                    raise DataFormatError("missing field", path=ds.path, record=f"annotation id {aid}", field=key)
            if a.get("iscrowd", 0) not in (0, 1, True, False):
                raise DataFormatError(f"iscrowd must be 0 or 1, got {a.get('iscrowd')!r}",
                                      path=ds.path, record=f"annotation id {aid}", field="iscrowd")
            by_id[aid] = a
    return by_id


def _queries(ds: CocoDataset, anns: dict[Any, dict[str, Any]]) -> list[dict[str, Any]]:
    raw = ds.raw.get("queries")
    if not isinstance(raw, list):
        raise DataFormatError("missing or non-list field", path=ds.path, field="queries",
                              hint="R2SM files list their text queries in queries[]")
    seen: set[Any] = set()
    out = []
    for i, q in enumerate(raw):
        rec = f"queries[{i}]"
        if not isinstance(q, dict):
            raise DataFormatError("expected an object", path=ds.path, record=rec)
        qid = q.get("id")
        if not isinstance(qid, (int, str)) or isinstance(qid, bool):
            raise DataFormatError(f"query id must be an integer or string, got {qid!r}", path=ds.path, record=rec, field="id")
        rec = f"query id {qid}"
        if qid in seen:
            raise DataFormatError("duplicate query id", path=ds.path, record=rec, field="id")
        seen.add(qid)
        img_id = q.get("image_id")
        if isinstance(img_id, bool) or not isinstance(img_id, (int, str)) or img_id not in ds.images:
            raise DataFormatError(f"image_id {img_id!r} points to no image", path=ds.path, record=rec, field="image_id")
        if not isinstance(q.get("text"), str):
            raise DataFormatError("missing or non-string text", path=ds.path, record=rec, field="text")
        if not isinstance(q.get("amodal"), bool):
            raise DataFormatError(f"amodal must be true or false, got {q.get('amodal')!r}", path=ds.path, record=rec, field="amodal")
        ids = q.get("ann_ids")
        if not isinstance(ids, list):
            raise DataFormatError("missing or non-list field", path=ds.path, record=rec, field="ann_ids")
        for j, aid in enumerate(ids):
            a = anns.get(aid) if isinstance(aid, (int, str)) and not isinstance(aid, bool) else None
            if a is None:
                raise DataFormatError(f"ann_ids[{j}] = {aid!r} points to no annotation", path=ds.path, record=rec, field="ann_ids")
            if a["image_id"] != img_id:
                raise DataFormatError(f"ann_ids[{j}] = {aid!r} belongs to image {a['image_id']!r}, not {img_id!r}",
                                      path=ds.path, record=rec, field="ann_ids")
        out.append(q)
    return out


def load_r2sm(ann: str | os.PathLike[str], images_dir: str | os.PathLike[str] | None = None) -> Benchmark:
    """Load an R2SM annotation file into one Sample per image that has queries."""
    ds = load_coco(ann)
    anns = _annotation_index(ds)
    queries = _queries(ds, anns)
    cache: dict[tuple[Any, str], Mask] = {}

    def mask(aid: Any, key: str) -> Mask:
        if (aid, key) not in cache:
            cache[aid, key] = ds.image_mask(anns[aid], key)
        return cache[aid, key]

    by_image: dict[Any, list[dict[str, Any]]] = {}
    for q in queries:
        by_image.setdefault(q["image_id"], []).append(q)
    samples = []
    for img_id, img in ds.images.items():
        if img_id not in by_image:
            continue
        gts: dict[str, GroundTruth] = {}
        prompts = []
        for q in by_image[img_id]:
            qid, ids = q["id"], q["ann_ids"]
            crowd = [bool(anns[a].get("iscrowd", 0)) for a in ids]
            for amodal, key in ((False, "segmentation"), (True, "amodal_segmentation")):
                gts[gt_key(qid, amodal)] = GroundTruth(
                    gt_key(qid, amodal), [mask(a, key) for a in ids], img.height, img.width,
                    label=q["text"], crowd=crowd,
                    meta={"query_id": qid, "type": "amodal" if amodal else "modal", "ann_ids": list(ids)},
                )
            prompts.append(Prompt(
                id=prompt_id(qid), text=q["text"], role=Role.AMODAL if q["amodal"] else Role.MODAL,
                image=IMAGE_KEY, gt=gt_key(qid, q["amodal"]), source_id=qid,
                meta={"other_gt": gt_key(qid, not q["amodal"]), "ann_ids": list(ids)},
            ))
        path = resolve_image_path(ds.path, images_dir, img.file_name, record=f"image id {img_id}")
        samples.append(Sample(
            id=str(img_id),
            images={IMAGE_KEY: ImageRef(IMAGE_KEY, path, img.height, img.width, source_id=img_id)},
            gts=gts, prompts=prompts, meta={"image_id": img_id, "file_name": img.file_name},
        ))
    return Benchmark("r2sm", ds.path.stem, samples, sources={"ann": ds.path}, meta={"title": ds.title})


def load_r2sm_predictions(pred: str | os.PathLike[str], benchmark: Benchmark) -> PredictionSet:
    """Read COCO results keyed by ``query_id``; every query gets a (possibly empty) Prediction."""
    p = Path(pred)
    where: dict[Any, tuple[Any, tuple[int, int]]] = {}
    for s in benchmark.samples:
        ref = s.images[IMAGE_KEY]
        for pr in s.prompts:
            where[pr.source_id] = (ref.source_id, (ref.height, ref.width))

    def size_of(rec: dict[str, Any]) -> tuple[int, int] | None:
        qid = rec.get("query_id")
        try:
            found = where.get(qid)
        except TypeError:  # unhashable id
            return None
        if found is not None and "image_id" in rec and (rec["image_id"] != found[0]
                                                        or type(rec["image_id"]) is not type(found[0])):
            raise DataFormatError(f"image_id {rec['image_id']!r} does not match the query's image {found[0]!r}",
                                  path=p, record=f"query_id={qid!r}", field="image_id")
        return None if found is None else found[1]

    records = load_results(p, key_fields=("query_id",), size_of=size_of)
    return collect_predictions(p, records, (prompt_id(qid) for qid in where),
                               lambda keys: prompt_id(keys["query_id"]))


def _query_of(sample: Sample, prompt: Prompt) -> Any:
    """The query a prompt is scored for: its ground truth's query, else its source id."""
    gt = sample.gts.get(prompt.gt or "")
    if gt is not None and "query_id" in gt.meta:
        return gt.meta["query_id"]
    if gt_key(prompt.source_id, False) in sample.gts:
        return prompt.source_id
    raise DataFormatError(f"prompt {prompt.id!r} names no query of sample {sample.id!r}", field="gt")


class R2smRecord(TypedDict):
    """One image's record (docs/metrics.md, R2SM): its queries at t."""

    sample: str
    image_id: int | str | None
    N: int
    gIoU: float | None
    wrong_type: int
    queries: list[m.QueryRecord]


class R2SMKind(BenchmarkKind[m.R2smOverlaps]):
    name = "r2sm"
    title = "R2SM"
    result_keys = ("query_id",)
    groups = GROUPS
    params = (
        ParamSpec("score_threshold", "--score-threshold", 0.0,
                  help="unite the instances with score ≥ t for gIoU/cIoU (AP/AR use all)", symbol="t"),
    )
    metric_help = {
        "gIoU": "mean per-query IoU of the union of instances with s ≥ t (empty vs empty = 1)",
        "cIoU": "Σ intersections / Σ unions over the queries",
        "AP": "COCO mask AP @[.50:.95], class-agnostic, each query its own image (all instances)",
        "AP50": "COCO mask AP at IoU 0.50", "AP75": "COCO mask AP at IoU 0.75",
        "APs": "AP on gt area < 32²", "APm": "AP on 32² ≤ gt area < 96²", "APl": "AP on gt area ≥ 96²",
        "AR": "COCO mask AR@100 @[.50:.95]",
        "wrong_type": "fraction of queries (whose modal and amodal masks differ) answered closer to the other mask type",
        "N": "number of queries",
    }

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--ann", required=True, help="R2SM annotation JSON (images, annotations, queries)")
        parser.add_argument("--pred", required=True, help="COCO results JSON with query_id, segmentation, score")
        parser.add_argument("--images", default=None, help="folder of the image files (optional; scoring needs none)")

    def load_benchmark(self, *, ann: PathLike, images: PathLike | None = None, **_: Any) -> Benchmark:
        return load_r2sm(ann, images)

    def load_predictions(self, benchmark: Benchmark, /, *, pred: PathLike, **_: Any) -> PredictionSet:
        return load_r2sm_predictions(pred, benchmark)

    def write_predictions(self, benchmark: Benchmark, predictions: PredictionSet, out: Path) -> list[Path]:
        """COCO results JSON with ``query_id``; ``out`` is a file, or a folder that gets ``pred.json``."""
        return write_results(benchmark, predictions, out,
                             lambda s, pr: {"query_id": pr.source_id, "image_id": s.images[IMAGE_KEY].source_id})

    # ------------------------------------------------------------ scoring
    def corrected_sample(self, sample: Sample) -> Sample:
        from masklens.core.kinds.r2sm.corrected import corrected_sample

        return corrected_sample(sample)

    def write_corrected(self, original: Benchmark, corrected: Benchmark, out: Path,
                        files: Mapping[str, Any]) -> list[Path]:
        from masklens.core.kinds.r2sm.corrected import write_corrected

        return write_corrected(original, corrected, out, files)

    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> m.R2smOverlaps:
        ref = sample.images[IMAGE_KEY]
        h, w = ref.height, ref.width
        queries = []
        for pr in sample.prompts:
            qid = _query_of(sample, pr)
            amodal = pr.role == Role.AMODAL  # the role decides the mask type (typed prompts included)
            req, oth = sample.gts[gt_key(qid, amodal)], sample.gts[gt_key(qid, not amodal)]
            pred = predictions.get(pr.id)
            insts = pred.instances if pred else []
            queries.append(m.query_areas(
                qid, pr.id, pr.text, amodal, req.masks, oth.masks,
                req.crowd or [False] * len(req.masks),
                [resize_nearest(i.mask, h, w) for i in insts],
                [i.score for i in insts], h, w,
            ))
        return m.R2smOverlaps(tuple(queries))

    def sample_readout(self, sample: Sample, overlaps: m.R2smOverlaps, params: Mapping[str, float]) -> R2smRecord:
        t = params["score_threshold"]
        qs = [q.readout(t) for q in overlaps.queries]
        return {
            "sample": sample.id, "image_id": sample.meta.get("image_id"), "N": len(qs),
            "gIoU": m.giou([q["IoU"] for q in qs]),
            "wrong_type": sum(1 for q in qs if q["wrong_type"]),
            "queries": qs,
        }

    def summarize(self, samples: Sequence[Sample], overlaps: Sequence[m.R2smOverlaps],
                  readouts: Sequence[Mapping[str, Any]],
                  params: Mapping[str, float]) -> dict[str, dict[str, Value]]:
        ap = self._ap(overlaps)
        out: dict[str, dict[str, Value]] = {}
        for g in GROUPS:
            qs = [q for r in readouts for q in r["queries"] if g == "all" or q["requested"] == g]
            typed = [q for q in qs if q["types_differ"]]
            out[g] = {
                "gIoU": m.giou([q["IoU"] for q in qs]),
                "cIoU": m.ciou([q["I"] for q in qs], [q["U"] for q in qs]),
                **ap[g],
                "wrong_type": sum(q["wrong_type"] for q in typed) / len(typed) if typed else None,
                "N": len(qs),
            }
        return out

    def _ap(self, overlaps: Sequence[m.R2smOverlaps]) -> dict[str, dict[str, Value]]:
        """AP/AR per group; independent of t, so built once per overlaps list."""
        return derived(overlaps, "r2sm.ap", lambda: self._ap_of(overlaps))

    @staticmethod
    def _ap_of(overlaps: Sequence[m.R2smOverlaps]) -> dict[str, dict[str, Value]]:
        # COCOeval with the query id as the image id: images by sorted id, which breaks score
        # ties across queries; the listing order of the files must not (docs/metrics.md)
        queries = sorted((q for o in overlaps for q in o.queries), key=lambda q: id_order(q.query_id))
        groups = {
            "all": range(len(queries)),
            "amodal": [i for i, q in enumerate(queries) if q.amodal],
            "modal": [i for i, q in enumerate(queries) if not q.amodal],
        }
        return m.coco_ap_groups([q.unit for q in queries], groups)

    def coco_units(self, prompts: Sequence[tuple[Sample, Prompt]]) -> list[tuple[Sample, Prompt]]:
        """Each query a COCO image of its own, in the order AP ranks them (:meth:`_ap_of`)."""
        return sorted(prompts, key=lambda sp: id_order(_query_of(*sp)))

    def notes(self, samples: Sequence[Sample], overlaps: Sequence[m.R2smOverlaps]) -> list[str]:
        empty = sum(1 for o in overlaps for q in o.queries if q.gt_area == 0)
        out = ["AP/AR use every predicted instance ranked by score; the score threshold t applies to gIoU/cIoU only"]
        if empty:
            out.append(f"{empty} queries have an empty ground truth; an empty prediction scores IoU 1.0 on them")
        return out


KIND = R2SMKind()

__all__ = ["KIND", "R2SMKind", "R2smRecord", "load_r2sm", "load_r2sm_predictions"]
