"""R2SM metrics (Shih et al.): gIoU, cIoU and class-agnostic COCO AP/AR per query.

Per query q, U_q is the union of the predicted instances with s ≥ t and G_q the
union of the (non-crowd) annotations it names, amodal or modal as requested:

    IoU_q = |U_q ∩ G_q| / |U_q ∪ G_q|     (1.0 when U_q ∪ G_q is empty: "no-object" query)
    gIoU  = mean_q IoU_q
    cIoU  = Σ_q |U_q ∩ G_q| / Σ_q |U_q ∪ G_q|   (None when the summed union is 0)

AP/AR follow the COCO protocol (pycocotools ``COCOeval``, iouType 'segm') with
each query its own evaluation unit (a synthetic "image") and one category, on
all predicted instances ranked by score (the threshold t does not apply: AP
integrates over scores). IoUs are computed once per query while caching and
handed to ``COCOeval`` through :class:`_CachedIoUEval`, so summarising touches
no mask.
"""

from __future__ import annotations

import contextlib
import copy
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from masklens.core.kinds.common.prefix_union import PrefixAreas, prefix_areas
from masklens.core.kinds.common.stats import mean_or_none
from masklens.core.masks import Mask, intersection_matrix, union_all

#: COCOeval.stats index of each reported key (segm: AR is AR@100 over IoU .50:.95)
AP_KEYS: dict[str, int] = {"AP": 0, "AP50": 1, "AP75": 2, "APs": 3, "APm": 4, "APl": 5, "AR": 8}


def query_iou(inter: int, pred_area: int, gt_area: int) -> float:
    """|U ∩ G| / |U ∪ G|; an empty union (both masks empty) counts 1.0, as in gIoU."""
    union = pred_area + gt_area - inter
    return 1.0 if union <= 0 else float(inter) / float(union)


def giou(ious: Sequence[float]) -> float | None:
    """Mean per-query IoU (None for no query)."""
    return mean_or_none(ious)


def ciou(inters: Sequence[int], unions: Sequence[int]) -> float | None:
    """Cumulative IoU ΣI / ΣU (None when nothing was scored or every union is empty)."""
    total_u = int(np.sum(np.asarray(unions, dtype=np.int64))) if len(unions) else 0
    if total_u <= 0:
        return None
    return float(np.sum(np.asarray(inters, dtype=np.int64))) / float(total_u)


@dataclass(frozen=True, eq=False)
class EvalUnit:
    """One query as a COCO evaluation unit: its gt instances, its predicted instances, their IoUs.

    ``ious[d, g]`` follows pycocotools (crowd gt: |d ∩ g| / |d|); rows in the order of
    ``dt_scores``, columns in the order of ``gt_masks``.
    """

    gt_masks: tuple[Mask, ...]
    gt_crowd: tuple[bool, ...]
    dt_masks: tuple[Mask, ...]
    dt_scores: tuple[float, ...]
    ious: np.ndarray
    #: COCOeval per-image results, one per area range, keyed by "IoUs from this cache?" (filled lazily)
    evals: dict[bool, list[Any]] = field(default_factory=dict, compare=False, repr=False)


def eval_unit(
    gt_masks: Sequence[Mask], gt_crowd: Sequence[bool], dt_masks: Sequence[Mask], dt_scores: Sequence[float]
) -> EvalUnit:
    """Compute the IoU matrix of one query once (RLE, pycocotools) and keep it."""
    from pycocotools import mask as mask_utils

    if gt_masks and dt_masks:
        ious = np.asarray(
            mask_utils.iou([m.rle for m in dt_masks], [m.rle for m in gt_masks], [int(c) for c in gt_crowd]),
            dtype=np.float64,
        ).reshape(len(dt_masks), len(gt_masks))
    else:
        ious = np.zeros((len(dt_masks), len(gt_masks)), dtype=np.float64)
    return EvalUnit(tuple(gt_masks), tuple(bool(c) for c in gt_crowd), tuple(dt_masks), tuple(float(s) for s in dt_scores), ious)


def _coco_eval_class() -> type:
    from pycocotools.cocoeval import COCOeval

    class _CachedIoUEval(COCOeval):
        """COCOeval whose computeIoU returns the IoUs cached in each EvalUnit (same order rules)."""

        def __init__(self, gt: Any, dt: Any, units: Sequence[EvalUnit]) -> None:
            super().__init__(gt, dt, "segm")
            self._units = units

        def computeIoU(self, imgId: int, catId: int) -> Any:  # noqa: N802 (pycocotools name)
            gt = self._gts[imgId, catId]
            dt = self._dts[imgId, catId]
            if len(gt) == 0 or len(dt) == 0:
                return []
            order = np.argsort([-d["score"] for d in dt], kind="mergesort")[: self.params.maxDets[-1]]
            rows = [dt[i]["_row"] for i in order]
            cols = [g["_col"] for g in gt]
            return self._units[imgId - 1].ious[np.ix_(rows, cols)]

    return _CachedIoUEval


def coco_ap(units: Sequence[EvalUnit], *, use_cache: bool = True) -> dict[str, float | None]:
    """Class-agnostic COCO AP/AR over the units (each unit its own image); -1 entries → None.

    ``use_cache=False`` lets COCOeval compute the IoUs itself (used to test the cache).
    """
    return coco_ap_groups(units, {"all": range(len(units))}, use_cache=use_cache)["all"]


def coco_ap_groups(
    units: Sequence[EvalUnit], groups: Mapping[str, Sequence[int]], *, use_cache: bool = True
) -> dict[str, dict[str, float | None]]:
    """COCO AP/AR of several subsets of the units (index lists, taken in ascending order).

    ``COCOeval.evaluate`` (the slow, per-image part) runs only for units whose per-image
    results are not stored yet (:func:`evaluate_units`); each group is then accumulated
    from its units' stored results — exactly what evaluating the subset alone gives, since
    COCO's per-image results do not depend on other images. Re-scoring after one sample
    changed (a live prompt in the GUI) therefore evaluates only that sample's queries.
    """
    from pycocotools.cocoeval import COCOeval

    out: dict[str, dict[str, float | None]] = {g: dict.fromkeys(AP_KEYS) for g in groups}
    evaluate_units(units, use_cache=use_cache)
    for name, idx in groups.items():
        sel = [units[int(i)] for i in sorted(idx)]  # COCO breaks score ties by image order
        if not sel:
            continue
        with contextlib.redirect_stdout(io.StringIO()):
            ev = COCOeval(iouType="segm")
            ev.params.imgIds = list(range(1, len(sel) + 1))
            ev.params.catIds = [1]
            ev._paramsEval = copy.deepcopy(ev.params)
            n_area = len(ev.params.areaRng)
            ev.evalImgs = [u.evals[use_cache][a] for a in range(n_area) for u in sel]  # [cat][area][image]
            ev.accumulate()
            ev.summarize()
        out[name] = {k: (None if ev.stats[i] < 0 else float(ev.stats[i])) for k, i in AP_KEYS.items()}
    return out


def evaluate_units(units: Sequence[EvalUnit], *, use_cache: bool = True) -> None:
    """Run ``COCOeval.evaluate`` once over the units that lack per-image results; store them.

    Each unit keeps its ``evalImgs`` entries (one per COCO area range) in ``unit.evals``.
    """
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    todo = [u for u in units if use_cache not in u.evals]
    if not todo:
        return
    images: list[dict[str, Any]] = []
    gts: list[dict[str, Any]] = []
    dts: list[dict[str, Any]] = []
    for n, u in enumerate(todo, start=1):
        h, w = (u.gt_masks or u.dt_masks or (Mask.empty(1, 1),))[0].shape
        images.append({"id": n, "height": h, "width": w})
        for col, (m, crowd) in enumerate(zip(u.gt_masks, u.gt_crowd, strict=True)):
            gts.append({"id": len(gts) + 1, "image_id": n, "category_id": 1, "segmentation": m.rle,
                        "area": float(m.area), "iscrowd": int(crowd), "_col": col})
        for row, (m, s) in enumerate(zip(u.dt_masks, u.dt_scores, strict=True)):
            dts.append({"id": len(dts) + 1, "image_id": n, "category_id": 1, "segmentation": m.rle,
                        "area": float(m.area), "score": float(s), "iscrowd": 0, "_row": row})
    cats = [{"id": 1, "name": "object"}]
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt, coco_dt = COCO(), COCO()
        coco_gt.dataset = {"images": images, "annotations": gts, "categories": cats}
        coco_dt.dataset = {"images": images, "annotations": dts, "categories": cats}
        coco_gt.createIndex()
        coco_dt.createIndex()
        ev = _coco_eval_class()(coco_gt, coco_dt, todo) if use_cache else COCOeval(coco_gt, coco_dt, "segm")
        ev.params.imgIds = list(range(1, len(todo) + 1))
        ev.evaluate()
    n_img, n_area = len(todo), len(ev.params.areaRng)
    for n, u in enumerate(todo):
        u.evals[use_cache] = [ev.evalImgs[a * n_img + n] for a in range(n_area)]


class QueryRecord(TypedDict):
    """One query's record at score threshold t (within an image's record)."""

    query_id: Any
    prompt_id: str
    text: str
    requested: str  # "amodal" or "modal"
    IoU: float
    IoU_other: float  # with the other mask type's ground truth
    wrong_type: bool
    types_differ: bool
    I: int  # noqa: E741 - the metric's name
    U: int
    pred_area: int
    gt_area: int
    kept: int
    instances: int
    empty_union: bool


@dataclass(frozen=True, eq=False)
class QueryAreas:
    """Threshold-free cache of one query: prefix-union areas vs both mask types, and its AP unit.

    ``prefix.inter[:, 0]`` is against the requested mask, ``prefix.inter[:, 1]`` against the other.
    """

    query_id: Any
    prompt_id: str
    text: str
    amodal: bool
    gt_area: int  # |requested union|
    other_area: int  # |other union|
    types_differ: bool  # the modal and amodal unions are not the same mask
    prefix: PrefixAreas
    unit: EvalUnit

    def readout(self, threshold: float) -> QueryRecord:
        """Per-query record at score threshold t (JSON-ready)."""
        kept, a, (i_req, i_oth) = self.prefix.rows[self.prefix.row(threshold)]
        iou = query_iou(i_req, a, self.gt_area)
        iou_other = query_iou(i_oth, a, self.other_area)
        return {
            "query_id": self.query_id, "prompt_id": self.prompt_id, "text": self.text,
            "requested": "amodal" if self.amodal else "modal",
            "IoU": iou, "IoU_other": iou_other,
            "wrong_type": bool(self.types_differ and iou_other > iou),
            "types_differ": self.types_differ,
            "I": i_req, "U": a + self.gt_area - i_req, "pred_area": a, "gt_area": self.gt_area,
            "kept": kept, "instances": self.prefix.n_instances,
            "empty_union": a + self.gt_area - i_req == 0,
        }


def query_areas(
    query_id: Any,
    prompt_id: str,
    text: str,
    amodal: bool,
    requested: Sequence[Mask],
    other: Sequence[Mask],
    crowd: Sequence[bool],
    dt_masks: Sequence[Mask],
    dt_scores: Sequence[float],
    height: int,
    width: int,
) -> QueryAreas:
    """Build a query's cache: gts are the instance masks of the requested and the other type."""
    keep = [k for k, c in enumerate(crowd) if not c]
    req = union_all([requested[k] for k in keep], height, width)
    oth = union_all([other[k] for k in keep], height, width)
    both = int(intersection_matrix([req], [oth])[0, 0])
    prefix = prefix_areas(dt_masks, dt_scores, [req, oth], height, width)
    return QueryAreas(
        query_id=query_id, prompt_id=prompt_id, text=text, amodal=amodal,
        gt_area=req.area, other_area=oth.area,
        types_differ=not (both == req.area == oth.area),
        prefix=prefix,
        unit=eval_unit(requested, crowd, dt_masks, dt_scores),
    )


@dataclass(frozen=True, eq=False)
class R2smOverlaps:
    """Threshold-free cache of one image: its queries in prompt order."""

    queries: tuple[QueryAreas, ...]
