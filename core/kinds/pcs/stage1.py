"""SA-Co/Gold (``pcs``) stage 1: each entry's threshold-free overlaps (:class:`PcsOverlaps`),
for all entries at once (:func:`all_overlaps`: the IoUs of every entry in few pycocotools
calls, every prediction's best IoU per annotator in one reduction) or one entry at a time
(:func:`entry_overlaps`, the plain form the bulk one is tested against)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, cast

import numpy as np

from masklens.core.kinds.common.cgf1.io import (
    categories_of,
    instances_of,
    non_crowd,
    non_crowd_categories,
)
from masklens.core.kinds.common.cgf1.matching import category_order
from masklens.core.kinds.common.cgf1.tables import EntryTable, entry_table
from masklens.core.masks import Mask, iou_matrix, resize_nearest
from masklens.core.schema import GroundTruth, Prediction, PredictionSet, Sample
from masklens.core.scoring.contract import OVERLAP_CHUNK, Progress
from masklens.core.scoring.iou_batch import IouJobs


@dataclass(eq=False, slots=True)
class PcsOverlaps:
    """Threshold-free cache of one entry: its IoUs in matching order and each instance's
    best IoU per annotator. The matching table is derived from them (:attr:`table`, per
    entry; the scorer builds every entry's at once with :func:`stack_entries`)."""

    scores: tuple[float, ...]  # file order
    best_ious: list[tuple[float, ...]]  # per annotator: each instance's best IoU (file order)
    missing: bool
    exhaustive: bool
    ordered_scores: tuple[float, ...]  # SAM 3's category order (the matching order)
    ious: np.ndarray  # (predictions, Σ ngt): rows and each annotator's column block in that order
    ngt: tuple[int, ...]  # non-crowd instances per annotator
    _table: EntryTable | None = field(default=None, init=False, repr=False)

    @property
    def table(self) -> EntryTable:
        """The entry's matching table (as ``ordered_entry_table``), built on first use."""
        if self._table is None:
            mats, start = [], 0
            for g in self.ngt:
                mats.append(self.ious[:, start : start + g])
                start += g
            self._table = entry_table(self.ordered_scores, mats)
        return self._table


def _permutation(categories: Sequence[Any]) -> list[int] | None:
    """:func:`category_order` of the instances, None when it is the file order."""
    if len(categories) < 2:
        return None
    first = categories[0]
    if all(c is first for c in categories):  # one category object (the common case)
        return None
    order = category_order(categories)
    return None if order == list(range(len(order))) else order


def entry_overlaps(
    masks: list[Mask],
    scores: tuple[float, ...],
    gts: Sequence[GroundTruth],
    categories: Sequence[Any] | None = None,
) -> tuple[tuple[float, ...], np.ndarray, tuple[int, ...], list[tuple[float, ...]]]:
    """The entry's scores and IoUs in SAM 3's matching order (rows: predictions; columns:
    each annotator's non-crowd instances, one block per annotator), the instance counts and,
    per annotator, each prediction's best IoU (file order)."""
    truths = _truths(gts)
    # one pycocotools call for all annotators: each prediction's RLE is parsed once
    every = iou_matrix(masks, [m for t in truths for m in t])
    return arrange_overlaps(every, scores, tuple(map(len, truths)), gts, categories)


def _truths(gts: Sequence[GroundTruth]) -> list[list[Mask]]:
    """Each annotator's non-crowd masks (the IoU columns of an entry, one block each)."""
    return [non_crowd(g) if g.crowd and any(g.crowd) else g.masks for g in gts]


def _non_crowd_count(gt: GroundTruth) -> int:
    """How many of the annotator's instances are not crowd (``len(non_crowd(gt))``)."""
    crowd = gt.crowd
    return len(gt.masks) - len(crowd) + crowd.count(False) if crowd else len(gt.masks)


def arrange_overlaps(
    every: np.ndarray,
    scores: tuple[float, ...],
    ngt: tuple[int, ...],
    gts: Sequence[GroundTruth],
    categories: Sequence[Any] | None,
) -> tuple[tuple[float, ...], np.ndarray, tuple[int, ...], list[tuple[float, ...]]]:
    """:func:`entry_overlaps` from the entry's ``iou_matrix`` (predictions in file order ×
    every annotator's non-crowd instances, ``ngt`` columns each)."""
    zeros = (0.0,) * len(scores)
    if not scores or not every.shape[1]:
        best = [zeros] * len(ngt)
    else:  # one reduction for all annotators: each one's column block
        starts = list(accumulate(ngt[:-1], initial=0))
        full = [a for a, g in enumerate(ngt) if g]
        rows = np.maximum.reduceat(every, [starts[a] for a in full], axis=1).T.tolist()
        best = [zeros] * len(ngt)
        for a, row in zip(full, rows, strict=True):
            best[a] = tuple(row)
    ordered, every = _in_matching_order(every, scores, ngt, gts, categories)
    return ordered, every, ngt, best


def _in_matching_order(
    every: np.ndarray,
    scores: tuple[float, ...],
    ngt: tuple[int, ...],
    gts: Sequence[GroundTruth],
    categories: Sequence[Any] | None,
) -> tuple[tuple[float, ...], np.ndarray]:
    """The scores and the IoU matrix with rows (predictions, ``categories``) and each
    annotator's column block in SAM 3's category order (the same objects when it is the
    file order)."""
    rows_order = _permutation(categories) if categories is not None else None
    cols: list[int] | None = None
    start = 0
    for g, gt in zip(ngt, gts, strict=True):
        cats = gt.meta.get("category_ids") if g > 1 else None
        one = not cats or all(c is cats[0] for c in cats)  # one category object: file order
        order = None if one else _permutation(non_crowd_categories(gt))
        if order is not None:
            if cols is None:
                cols = list(range(start))
            cols.extend(start + c for c in order)
        elif cols is not None:
            cols.extend(range(start, start + g))
        start += g
    if rows_order is not None:
        every, scores = every[rows_order], tuple(scores[i] for i in rows_order)
    if cols is not None:
        every = every[:, cols]
    return scores, every


def _best_per_block(values: np.ndarray | None, entries: Sequence[tuple[Any, ...]]) -> list[float]:
    """For every entry with predictions and instances (``entries[e][0]``: scores, ``[1]``: ngt),
    prediction by prediction, each annotator's (with instances) largest IoU: one
    ``maximum.reduceat`` over the jobs' values, whose (prediction, annotator) blocks tile them."""
    lengths: list[int] = []
    for entry in entries:
        n, ngt = len(entry[0]), entry[1]
        if n and sum(ngt):
            lengths.extend([c for c in ngt if c] * n)
    if not lengths or values is None:
        return []
    sizes = np.array(lengths, dtype=np.int64)
    return np.maximum.reduceat(values, np.cumsum(sizes) - sizes).tolist()


def all_overlaps(samples: list[Sample], predictions: PredictionSet, progress: Progress | None = None) -> list[PcsOverlaps]:
    """Every entry's :class:`PcsOverlaps`, equal to :func:`entry_overlaps` entry by entry:
    the IoUs of all entries in few pycocotools calls (:class:`~masklens.core.scoring.iou_batch.IouJobs`:
    each entry's values equal its own ``iou_matrix``, bit for bit) and every prediction's
    best IoU per annotator in one reduction over all entries. Entries without a predicted
    instance share one :class:`PcsOverlaps` per (missing, exhaustive, instance counts).
    ``progress(done)`` every :data:`~masklens.core.scoring.contract.OVERLAP_CHUNK` samples: an
    entry without a predicted instance is done when met, the others once the IoUs are in."""
    jobs = IouJobs(expected=len(samples))  # a worker process for a large batch, started now
    out: list[PcsOverlaps | None] = [None] * len(samples)
    entries: list[tuple[int, Sample, list[GroundTruth], Prediction, tuple[float, ...], tuple[int, ...]]] = []
    empty: dict[tuple[bool, bool, tuple[int, ...]], PcsOverlaps] = {}
    get = predictions.by_prompt.get  # (PredictionSet.get, without its call)
    done = 0
    try:
        for index, sample in enumerate(samples):
            if progress is not None and index % OVERLAP_CHUNK == 0:
                progress(done)
            gts = list(sample.gts.values())
            pred = get(sample.prompts[0].id)
            if pred is None or not pred.instances:  # nothing to overlap: the instance counts only
                ngt = tuple(map(_non_crowd_count, gts))
                key = (pred is None, bool(sample.meta.get("exhaustive", True)), ngt)
                shared = empty.get(key)
                if shared is None:
                    shared = empty[key] = PcsOverlaps((), [()] * len(ngt), key[0], key[1], (), np.zeros((0, sum(ngt))), ngt)
                out[index] = shared
                done += 1
                continue
            h, w = gts[0].height, gts[0].width
            fits = h > 0 and w > 0  # else the job is left to its own iou_matrix (add_masks)
            scores = tuple([float(i.score) for i in pred.instances])
            dts: list[bytes] = []
            for inst in pred.instances:
                mask = inst.mask
                if mask.height != h or mask.width != w:  # as instances_of: resized to the entry's size
                    mask = resize_nearest(mask, h, w)
                dts.append(mask.counts)
            truths = _truths(gts)
            flat = [m for t in truths for m in t]
            if flat and fits:
                cols = [m.counts for m in flat]
                fits = all([m.height == h and m.width == w for m in flat])
            if flat and fits:
                jobs.add(dts, cols, h, w)
            else:
                jobs.add_masks(instances_of(pred, h, w)[0] if flat else [], flat)
            entries.append((index, sample, gts, pred, scores, tuple(map(len, truths))))
    except BaseException:  # a cancel (raised by progress) or an error: the worker ends now
        jobs.close()
        raise
    jobs.run(as_list=False)  # the values are read from the array
    values, at = jobs.array, jobs.at
    del jobs  # its lists of counts
    best_flat = _best_per_block(values, [e[4:] for e in entries])
    k = 0
    for count, ((index, sample, gts, pred, scores, ngt), start) in enumerate(zip(entries, at, strict=True)):
        if progress is not None and count % OVERLAP_CHUNK == 0:
            progress(done + count)
        n, g = len(scores), sum(ngt)
        exhaustive = bool(sample.meta.get("exhaustive", True))
        if g:
            every = values[start : start + n * g].reshape(n, g)  # type: ignore[index]
            best = [(0.0,) * n] * len(ngt)
            full = [a for a, c in enumerate(ngt) if c]
            step = len(full)  # the entry's best values: prediction by prediction, annotator by annotator
            for j, a in enumerate(full):
                best[a] = tuple(best_flat[k + j : k + n * step : step])
            k += n * step
        else:
            every = np.zeros((n, g), dtype=np.float64)
            best = [(0.0,) * n] * len(ngt)
        ordered, ious = _in_matching_order(every, scores, ngt, gts, categories_of(pred))
        out[index] = PcsOverlaps(scores, best, False, exhaustive, ordered, ious, ngt)
    if progress is not None and samples:
        progress(len(samples))
    return cast("list[PcsOverlaps]", out)  # (every entry is set)
