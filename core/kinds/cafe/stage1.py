"""CAFE stage 1: the threshold-free cache of every pair, built for all samples at once.

One pass over the samples collects the IoU jobs (both prompts' instances against the target
and the positive entry's other non-crowd instances; a negative entry's own instances; the
exhaustive entries in no scored pair), :class:`~masklens.core.scoring.iou_batch.IouJobs` computes them
in few pycocotools calls, and a second pass slices each sample's values out of flat lists.
Besides the per-pair :class:`CafeOverlaps`, the run keeps its flat arrays in a
:class:`CafeBatch` (every pair's scores and target IoUs, the cgF1 entries in the order the
kind visits them) so that the kind's stacks are gathered, not rebuilt pair by pair. A single
sample is the same computation with one sample (``CafeKind.sample_overlaps``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from masklens.core.errors import DataFormatError
from masklens.core.kinds.cafe.batch import CafeBatch, RunBuilder
from masklens.core.kinds.cafe.io import OrphanEntry
from masklens.core.kinds.cafe.metrics import PairScores
from masklens.core.kinds.common.cgf1.io import categories_of, non_crowd, non_crowd_categories
from masklens.core.kinds.common.cgf1.io import instances_of as _instances
from masklens.core.kinds.common.cgf1.tables import EntryTable, ordered_entry_table
from masklens.core.masks import Mask
from masklens.core.schema import GroundTruth, Prediction, PredictionSet, Role, Sample
from masklens.core.scoring.iou_batch import IouJobs

#: an entry with at most one non-crowd instance: (scores, IoUs with it, or None without one);
#: otherwise its full matching table
EntrySource = tuple[tuple[float, ...], tuple[float, ...] | None] | EntryTable

_POSITIVE, _NEGATIVE = Role.POSITIVE, Role.NEGATIVE


@dataclass(slots=True)
class CafeOverlaps:
    """Threshold-free cache of one pair: scores/IoUs, entry tables, the static part of its record."""

    pair: PairScores
    pos_table: EntrySource  # the positive entry's matching data (cgF1)
    neg_table: EntrySource
    pos_entry: tuple[Any, bool]  # (image id, counts in cgF1)
    neg_entry: tuple[Any, bool]
    static: dict[str, Any]  # threshold-free fields of the per-pair record
    #: image entries in no scored pair that ride on this sample: (image id, table, group or None)
    orphans: tuple[tuple[Any, EntrySource, str | None], ...] = ()
    #: the positive and negative prompts' own ``entry_group`` (their entries' cgF1 group)
    entry_groups: tuple[str | None, str | None] = (None, None)
    #: the run this pair came from and its index there (the kind's stacks gather from it)
    batch: CafeBatch | None = field(default=None, repr=False, compare=False)
    index: int = field(default=-1, repr=False, compare=False)


def _prompts(sample: Sample):
    pos = neg = None
    for pr in sample.prompts:
        role = pr.role
        if role == _POSITIVE:
            if pos is None:
                pos = pr
        elif role == _NEGATIVE and neg is None:
            neg = pr
    if pos is None or neg is None:
        missing = Role.NEGATIVE if pos else Role.POSITIVE
        raise DataFormatError(f"CAFE sample has no {missing.value} prompt", record=sample.id)
    return pos, neg


def _counts_scores(pred: Prediction | None, h: int, w: int) -> tuple[list[bytes], tuple[float, ...]]:
    """RLE counts (at h × w, resized as :func:`~masklens.core.kinds.common.cgf1.io.instances_of` does) and scores of a prediction."""
    if pred is None or not pred.instances:
        return [], ()
    counts = []
    for inst in pred.instances:
        rle = inst.mask.rle
        size = rle["size"]
        if size[0] != h or size[1] != w:
            masks, scores = _instances(pred, h, w)
            return [m.rle["counts"] for m in masks], scores
        counts.append(rle["counts"])
    return counts, tuple([float(i.score) for i in pred.instances])


def _non_crowd(gt: GroundTruth) -> list[Mask]:
    """``pcs_io.non_crowd`` (the list itself when no instance is crowd)."""
    return gt.masks if not gt.crowd or not any(gt.crowd) else non_crowd(gt)


def _job(jobs: IouJobs, pred: Prediction | None, counts: list[bytes], gts: list[Mask],
         h: int, w: int, other: Prediction | None = None) -> int:  # fmt: skip
    """A job: the instances of ``pred`` (then ``other``'s), counts at h × w, against ``gts``;
    ground truths of another size go to one ``iou_matrix`` call, as before."""
    gt_counts = []
    for m in gts:
        rle = m.rle
        size = rle["size"]
        if size[0] != h or size[1] != w:
            break
        gt_counts.append(rle["counts"])
    else:
        if h > 0 and w > 0:
            return jobs.add(counts, gt_counts, h, w)
    masks = _instances(pred, h, w)[0] + (_instances(other, h, w)[0] if other is not None else [])
    return jobs.add_masks(masks, gts)


def _matrix(jobs: IouJobs, j: int, rows: int, cols: int) -> np.ndarray:
    a = jobs.at[j]
    return np.array(jobs.values[a : a + rows * cols], dtype=np.float64).reshape(rows, cols)


def _entry_source(jobs: IouJobs, j: int | None, scores: tuple[float, ...], gts: list[Mask],
                  categories: list[Any], gt_categories: list[Any]) -> EntrySource:  # fmt: skip
    """An entry's cgF1 matching data from its job (preds × its non-crowd instances); with
    several instances, in SAM 3's category order."""
    if not gts:
        return (scores, None)
    assert j is not None, "an entry with instances has a job"
    if len(gts) == 1:
        a = jobs.at[j]
        return (scores, tuple(jobs.values[a : a + len(scores)]))
    return ordered_entry_table(scores, [_matrix(jobs, j, len(scores), len(gts))], categories,
                               [gt_categories])  # fmt: skip


@dataclass(slots=True)
class _Plan:
    """What the first pass learnt of one sample."""

    sample: Sample
    pos: Any
    neg: Any
    pos_pred: Prediction | None
    neg_pred: Prediction | None
    pos_scores: tuple[float, ...]
    neg_scores: tuple[float, ...]
    pos_gt: GroundTruth
    neg_gt: GroundTruth | None
    pos_nc: list[Mask]
    neg_nc: list[Mask]
    first: Mask | None
    gts: list[Mask]
    job: int
    neg_job: int | None
    orphans: Sequence[tuple[OrphanEntry, Prediction | None, tuple[float, ...], list[Mask], int | None]]


def all_overlaps(samples: Sequence[Sample], predictions: PredictionSet) -> list[CafeOverlaps]:
    """Every sample's :class:`CafeOverlaps` (what ``sample_overlaps`` gives one by one)."""
    jobs = IouJobs()
    get = predictions.by_prompt.get
    plans: list[_Plan] = []
    scores: list[float] = []  # every row (a pair's positive instances, then its negative's)
    for sample in samples:
        pos, neg = _prompts(sample)
        gts_of = sample.gts
        target = gts_of[pos.gt or "target"]
        h, w = target.height, target.width
        pos_pred, neg_pred = get(pos.id), get(neg.id)
        pos_counts, pos_scores = _counts_scores(pos_pred, h, w)
        neg_counts, neg_scores = _counts_scores(neg_pred, h, w)
        scores += pos_scores
        scores += neg_scores
        pos_gt = gts_of.get(pos.meta.get("entry_gt", ""), target)
        neg_gt = gts_of.get(neg.meta.get("entry_gt", ""))
        pos_nc = _non_crowd(pos_gt)
        # one job: both prompts against the target (column 0) and the positive entry's other
        # non-crowd instances (for its cgF1 matching)
        first = target.masks[0] if target.masks else None
        if first is None:
            gts = list(pos_nc)
        elif len(pos_nc) == 1 and pos_nc[0] is first:
            gts = [first]
        else:
            gts = [first, *[m for m in pos_nc if m is not first]]
        j = _job(jobs, pos_pred, pos_counts + neg_counts, gts, h, w, neg_pred)
        neg_nc = _non_crowd(neg_gt) if neg_gt else []
        nj = _job(jobs, neg_pred, neg_counts, neg_nc, h, w) if neg_nc else None
        carried = sample.meta.get("orphan_entries")
        orphans = [_orphan_job(jobs, o, predictions) for o in carried if o.exhaustive] if carried else ()
        plans.append(_Plan(sample, pos, neg, pos_pred, neg_pred, pos_scores, neg_scores, pos_gt,
                           neg_gt, pos_nc, neg_nc, first, gts, j, nj, orphans))  # fmt: skip
    jobs.run()
    if len(plans) == 1:  # one sample (a replaced or live one): no run arrays to gather from
        p = plans[0]
        return [_finish(jobs, p, _target_row(jobs, p), 0)]
    return _finish_all(jobs, plans, np.array(scores, dtype=np.float64))


def _orphan_job(jobs: IouJobs, o: OrphanEntry, predictions: PredictionSet):
    pred = predictions.get(o.prompt_id)
    h, w = o.gt.height, o.gt.width
    counts, scores = _counts_scores(pred, h, w)
    nc = _non_crowd(o.gt)
    return o, pred, scores, nc, (_job(jobs, pred, counts, nc, h, w) if nc else None)


def _target_row(jobs: IouJobs, p: _Plan) -> list[float]:
    """One pair's rows' IoUs with its target (:func:`_target_ious` of one plan)."""
    n = len(p.pos_scores) + len(p.neg_scores)
    if p.first is None:
        return [0.0] * n
    a, stride = jobs.at[p.job], len(p.gts)
    return jobs.values[a : a + n * stride : stride]


def _target_ious(jobs: IouJobs, plans: list[_Plan]) -> np.ndarray:
    """Every row's IoU with its pair's target (column 0 of its job; 0 without a target)."""
    n = np.fromiter((len(p.pos_scores) + len(p.neg_scores) for p in plans), np.int64, len(plans))
    at = np.fromiter((jobs.at[p.job] for p in plans), np.int64, len(plans))
    stride = np.fromiter((len(p.gts) for p in plans), np.int64, len(plans))
    has = np.fromiter((p.first is not None for p in plans), bool, len(plans))
    total = int(n.sum())
    if total == 0:
        return np.zeros(0)
    row = np.arange(total) - np.repeat(np.cumsum(n) - n, n)
    idx = np.repeat(at, n) + row * np.repeat(stride, n)
    has_row = np.repeat(has, n)
    idx[~has_row] = 0
    values = jobs.array if jobs.array is not None else np.zeros(0)
    return np.where(has_row, values[idx] if values.size else 0.0, 0.0)


def _finish_all(jobs: IouJobs, plans: list[_Plan], scores: np.ndarray) -> list[CafeOverlaps]:
    tv = _target_ious(jobs, plans)
    tv_list = tv.tolist()
    run = RunBuilder(scores, tv)
    out: list[CafeOverlaps] = []
    r0 = 0
    for i, p in enumerate(plans):
        o = _finish(jobs, p, tv_list, r0)
        o.index = i
        out.append(o)
        run.pair(p.sample.group, r0, o.pair.pos_ious, o.pair.neg_ious, o.pos_entry, o.pos_table,
                 o.neg_entry, o.neg_table, o.entry_groups, o.orphans,
                 (p.pos_pred is None) + (p.neg_pred is None))  # fmt: skip
        r0 += len(p.pos_scores) + len(p.neg_scores)
    batch = run.build(
        [len(p.pos_scores) for p in plans], [len(p.neg_scores) for p in plans],
        [o.static["SoftSwap"] for o in out],
    )
    for o in out:
        o.batch = batch
    return out


def _finish(jobs: IouJobs, p: _Plan, tv: list[float], r0: int) -> CafeOverlaps:
    vals = jobs.values
    a = jobs.at[p.job]
    pos_scores, neg_scores, pos_nc, first, gts = p.pos_scores, p.neg_scores, p.pos_nc, p.first, p.gts
    n_pos, n = len(pos_scores), len(pos_scores) + len(neg_scores)
    nc = len(gts)
    pos_ious, neg_ious = tuple(tv[r0 : r0 + n_pos]), tuple(tv[r0 + n_pos : r0 + n])
    if len(pos_nc) == 1 and pos_nc[0] is first:
        pos_table: EntrySource = (pos_scores, pos_ious)  # the target IoUs serve
    elif len(pos_nc) <= 1:
        if pos_nc:
            col = gts.index(pos_nc[0])  # gts holds pos_nc's masks
            pos_table = (pos_scores, tuple(vals[a + col : a + n_pos * nc : nc]))
        else:
            pos_table = (pos_scores, None)
    else:
        column = {id(m): c for c, m in enumerate(gts)}
        cols = [column[id(m)] for m in p.pos_nc]
        pos_table = ordered_entry_table(
            pos_scores, [_matrix(jobs, p.job, n, nc)[:n_pos][:, cols]], categories_of(p.pos_pred),
            [non_crowd_categories(p.pos_gt)],
        )  # fmt: skip
    if not p.neg_nc:
        neg_table: EntrySource = (neg_scores, None)
    else:
        assert p.neg_gt is not None, "neg_nc holds the non-crowd instances of neg_gt"
        neg_table = _entry_source(jobs, p.neg_job, neg_scores, p.neg_nc,
                                  categories_of(p.neg_pred), non_crowd_categories(p.neg_gt))  # fmt: skip
    pos_max = max(pos_scores) if pos_scores else 0.0
    neg_max = max(neg_scores) if neg_scores else 0.0
    pos, neg = p.pos, p.neg
    static = {
        "id": p.sample.id,
        "edit_type": p.sample.group,
        "pos_image_id": pos.source_id,
        "neg_image_id": neg.source_id,
        "SoftSwap": int(neg_max > pos_max),
        "pos_max_score": pos_max,
        "neg_max_score": neg_max,
        "pos_max_iou": max(pos_ious) if pos_ious else 0.0,
        "neg_max_iou": max(neg_ious) if neg_ious else 0.0,
        "pos_missing": p.pos_pred is None,
        "neg_missing": p.neg_pred is None,
        "pos_instances": [{"score": s, "iou": v} for s, v in zip(pos_scores, pos_ious)],  # noqa: B905
        "neg_instances": [{"score": s, "iou": v} for s, v in zip(neg_scores, neg_ious)],  # noqa: B905
    }
    orphans = tuple(
        (o.image_id,
         _entry_source(jobs, oj, sc, nc_, categories_of(pred), non_crowd_categories(o.gt)),
         o.group)
        for o, pred, sc, nc_, oj in p.orphans
    ) if p.orphans else ()  # fmt: skip
    pos_meta, neg_meta = pos.meta, neg.meta
    return CafeOverlaps(
        PairScores(pos_scores, pos_ious, neg_scores, neg_ious),
        pos_table,
        neg_table,
        (pos.source_id, bool(pos_meta.get("exhaustive", True))),
        (neg.source_id, bool(neg_meta.get("exhaustive", True))),
        static,
        orphans,
        _shared(pos_meta.get("entry_group"), neg_meta.get("entry_group")),
    )


_GROUP_PAIRS: dict[tuple[str | None, str | None], tuple[str | None, str | None]] = {}


def _shared(pos_group: str | None, neg_group: str | None) -> tuple[str | None, str | None]:
    """One tuple object per distinct (positive, negative) entry group pair (a few kinds)."""
    key = (pos_group, neg_group)
    return _GROUP_PAIRS.setdefault(key, key) if len(_GROUP_PAIRS) < 64 else key
