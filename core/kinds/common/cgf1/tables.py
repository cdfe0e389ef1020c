"""Threshold-free matching tables of the SAM 3 PCS metrics (stage 1 of ``pcs``).

Per image entry (an image–noun-phrase pair) predictions with score s ≥ t and the non-crowd
ground truth are kept; ONE Hungarian assignment maximising the summed mask IoU is made
(matches of any IoU, even 0, are kept), and for each IoU threshold 0.50:0.05:0.95 TP =
matches with IoU ≥ thr (``sam3/eval/cgf1_eval.py``; see ``docs/metrics.md``).

:func:`entry_table` stores, for every distinct score level, the TP counts that acceptance at
that level gives (the only place that matches); :class:`EntryStack` stacks many tables so a
threshold is read out vectorised; :func:`select_oracle` picks the oracle annotator per entry.
The accumulation and summary over entries live in :mod:`masklens.core.kinds.common.cgf1.metrics`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any

import numpy as np

from masklens.core.kinds.common.cgf1.matching import (
    category_order,
    match_values,
)

#: IoU thresholds 0.50:0.05:0.95, built exactly as pycocotools' Params does
IOU_THRESHOLDS: np.ndarray = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1)
#: epsilons of the official script: precision/recall/F1 and image-level ratios/MCC
P_EPS = 1e-4
IL_EPS = 1e-6
#: the positions of IoU 0.5 and 0.75 in IOU_THRESHOLDS (the @0.5 / @0.75 metrics)
INDEX_50 = int(np.flatnonzero(IOU_THRESHOLDS == 0.5)[0])
INDEX_75 = int(np.flatnonzero(IOU_THRESHOLDS == 0.75)[0])


@dataclass(frozen=True)
class EntryTable:
    """Threshold-free matching table of one image entry against each annotator's ground truth.

    ``levels`` holds the distinct prediction scores, ascending. Row ``k`` of ``ndt`` and ``tp``
    describes accepting the ``k`` highest levels (row 0: nothing accepted): ``ndt[k]`` predictions
    are kept and ``tp[k, a, j]`` of them match annotator ``a``'s non-crowd ground truth at
    ``IOU_THRESHOLDS[j]``. ``ngt[a]`` counts annotator ``a``'s non-crowd instances.
    """

    levels: tuple[float, ...]
    ndt: np.ndarray  # (L + 1,) int64
    tp: np.ndarray  # (L + 1, A, 10) int64
    ngt: np.ndarray  # (A,) int64

    def row(self, t: float) -> int:
        """The row for score threshold ``t`` (predictions with s ≥ t are accepted)."""
        return len(self.levels) - bisect_left(self.levels, t)


#: IOU_THRESHOLDS as Python floats
IOU_THRESHOLD_LIST = [float(x) for x in IOU_THRESHOLDS]
_ZERO = [0] * len(IOU_THRESHOLD_LIST)


def entry_table(scores: Sequence[float], ious_per_annotator: Sequence[np.ndarray]) -> EntryTable:
    """Build an :class:`EntryTable` from prediction scores and, per annotator, the IoU matrix
    (predictions in file order × that annotator's non-crowd instances)."""
    s = [float(v) for v in scores]
    mats = [np.asarray(m, dtype=np.float64) for m in ious_per_annotator]
    for m in mats:
        if m.ndim != 2 or m.shape[0] != len(s):
            raise ValueError(f"IoU matrix of shape {m.shape} for {len(s)} predictions")
    ngt = np.array([m.shape[1] for m in mats], dtype=np.int64)
    if all(m.shape[1] <= 1 for m in mats):
        return _table_single(s, mats, ngt)
    order = sorted(range(len(s)), key=s.__getitem__, reverse=True)
    levels: list[float] = []  # descending
    ndt = [0]
    tp = [[_ZERO] * len(mats)]
    i = 0
    while i < len(order):
        level = s[order[i]]
        while i < len(order) and s[order[i]] == level:
            i += 1
        rows = sorted(order[:i])  # the accepted predictions, in file order (as the official)
        levels.append(level)
        ndt.append(i)
        tp.append([tp_row(match_values(m[rows])) if m.shape[1] else _ZERO for m in mats])
    return EntryTable(
        tuple(reversed(levels)),
        np.array(ndt, dtype=np.int64),
        np.array(tp, dtype=np.int64).reshape(len(ndt), len(mats), len(IOU_THRESHOLD_LIST)),
        ngt,
    )


def ordered_entry_table(
    scores: Sequence[float],
    ious_per_annotator: Sequence[np.ndarray],
    categories: Sequence[Any],
    gt_categories: Sequence[Sequence[Any]],
) -> EntryTable:
    """:func:`entry_table` with predictions (rows, ``categories``) and each annotator's
    instances (columns, ``gt_categories[a]``) first put in the official order
    (:func:`category_order`)."""
    rows = category_order(categories)
    mats = []
    for m, c in zip(ious_per_annotator, gt_categories, strict=True):
        m = np.asarray(m, dtype=np.float64).reshape(len(scores), len(c))
        cols = category_order(c)
        if rows != list(range(len(rows))):
            m = m[rows]
        mats.append(m if cols == list(range(len(cols))) else m[:, cols])
    return entry_table([scores[i] for i in rows], mats)


def tp_row(matched: np.ndarray) -> list[int]:
    """Per IoU threshold x, how many matched IoUs are ≥ x."""
    below = [0] * (len(IOU_THRESHOLD_LIST) + 1)  # below[k]: values ≥ exactly the k lowest thresholds
    for v in matched.tolist():
        below[bisect_right(IOU_THRESHOLD_LIST, v) if v == v else 0] += 1  # NaN is ≥ no threshold
    out, run = [0] * len(IOU_THRESHOLD_LIST), 0
    for j in range(len(IOU_THRESHOLD_LIST) - 1, -1, -1):
        run += below[j + 1]
        out[j] = run
    return out


def _table_single(s: list[float], mats: list[np.ndarray], ngt: np.ndarray) -> EntryTable:
    """Fast path when every annotator has at most one instance: the one Hungarian match is the
    best IoU among the accepted predictions."""
    cols = [m[:, 0].tolist() if m.shape[1] else None for m in mats]
    order = sorted(range(len(s)), key=s.__getitem__, reverse=True)
    best = [-1.0] * len(mats)
    levels: list[float] = []
    ndt = [0]
    rows = [[_ZERO] * len(mats)]
    i = 0
    while i < len(order):
        level = s[order[i]]
        while i < len(order) and s[order[i]] == level:
            for a, col in enumerate(cols):
                if col is not None and col[order[i]] > best[a]:
                    best[a] = col[order[i]]
            i += 1
        levels.append(level)
        ndt.append(i)
        rows.append([[1 if b >= x else 0 for x in IOU_THRESHOLD_LIST] if c is not None else _ZERO
                     for b, c in zip(best, cols, strict=True)])  # fmt: skip
    tp = np.array(rows, dtype=np.int64).reshape(len(ndt), len(mats), len(IOU_THRESHOLD_LIST))
    return EntryTable(tuple(reversed(levels)), np.array(ndt, dtype=np.int64), tp, ngt)


def local_f1(tp: np.ndarray, ndt: np.ndarray | np.integer[Any], ngt: np.ndarray | np.integer[Any]) -> np.ndarray:
    """Per-threshold F1 of entries (broadcast): P = TP/(TP+FP+1e-4), R = TP/(TP+FN+1e-4),
    F1 = 2PR/(P+R+1e-4), exactly as the official per-image ``local_F1s``."""
    fp = ndt - tp
    fn = ngt - tp
    p = tp / (tp + fp + P_EPS)
    r = tp / (tp + fn + P_EPS)
    return 2 * p * r / (p + r + P_EPS)


def local_f1_bulk(tp: np.ndarray, ndt: np.ndarray, ngt: np.ndarray) -> np.ndarray:
    """:func:`local_f1` of many entries: the same values (the formula applied elementwise to
    the same integers), read from a table of every (TP, ndt, ngt) combination when the counts
    are small non-negative integers (a gather instead of a dozen float passes)."""
    tp, ndt, ngt = np.asarray(tp), np.asarray(ndt), np.asarray(ngt)
    ints = all(a.dtype.kind in "iu" and a.size for a in (tp, ndt, ngt))
    if not ints or min(int(a.min()) for a in (tp, ndt, ngt)) < 0:
        return local_f1(tp, ndt, ngt)
    t, n, g = (int(a.max()) + 1 for a in (tp, ndt, ngt))
    if t * n * g > 1 << 20:
        return local_f1(tp, ndt, ngt)
    table = local_f1(
        np.arange(t, dtype=np.int64)[:, None, None],
        np.arange(n, dtype=np.int64)[None, :, None],
        np.arange(g, dtype=np.int64)[None, None, :],
    ).ravel()
    return table[(tp.astype(np.int64) * n + ndt) * g + ngt]


@dataclass
class EntryStack:
    """Many :class:`EntryTable` rows stacked so that a threshold is read out vectorised."""

    n: int
    level_values: np.ndarray  # flat levels of all entries
    level_owner: np.ndarray  # entry index of each flat level
    offsets: np.ndarray  # (E,) first row of each entry in the flat tables
    ndt: np.ndarray  # (rows,)
    tp: np.ndarray  # (rows, A, 10)
    ngt: np.ndarray  # (E, A)
    _row_table: tuple[np.ndarray | None, np.ndarray | None] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _oracle: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @classmethod
    def build(cls, tables: Sequence[EntryTable]) -> EntryStack:
        n = len(tables)
        n_ann = max((t.tp.shape[1] for t in tables), default=1)
        if any(t.tp.shape[1] != n_ann for t in tables):
            raise ValueError("all entries must be scored against the same number of annotators")
        sizes = np.array([len(t.levels) for t in tables], dtype=np.int64)
        offsets = np.cumsum(sizes + 1) - (sizes + 1)
        if n:
            values = np.concatenate([np.asarray(t.levels, dtype=np.float64) for t in tables])
            ndt = np.concatenate([t.ndt for t in tables])
            tp = np.concatenate([t.tp for t in tables])
            ngt = np.stack([t.ngt for t in tables])
        else:
            values = np.zeros(0)
            ndt = np.zeros(0, dtype=np.int64)
            tp = np.zeros((0, n_ann, len(IOU_THRESHOLDS)), dtype=np.int64)
            ngt = np.zeros((0, n_ann), dtype=np.int64)
        owner = np.repeat(np.arange(n), sizes)
        return cls(n, values, owner, offsets, ndt, tp, ngt)

    @classmethod
    def from_single(
        cls, entries: Sequence[tuple[Sequence[float], Sequence[float] | None]]
    ) -> EntryStack:
        """Stack entries of one annotator with at most one non-crowd instance, vectorised.

        Each entry is (scores, IoUs with its instance) or (scores, None) without ground
        truth. The one Hungarian match is then the best IoU among the accepted predictions.
        """
        n = len(entries)
        sizes = np.fromiter((len(sc) for sc, _ in entries), dtype=np.int64, count=n)
        total = int(sizes.sum())
        s = np.fromiter(chain.from_iterable(sc for sc, _ in entries), dtype=np.float64, count=total)
        iou = np.fromiter(
            chain.from_iterable(
                io if io is not None else repeat(-1.0, len(sc)) for sc, io in entries
            ),
            dtype=np.float64,
            count=total,
        )
        has_gt = np.fromiter((io is not None for _, io in entries), dtype=bool, count=n)
        return cls.from_flat(s, iou, sizes, has_gt)

    @classmethod
    def from_flat(
        cls, s: np.ndarray, iou: np.ndarray, sizes: np.ndarray, has_gt: np.ndarray
    ) -> EntryStack:
        """:meth:`from_single` from flat arrays: entry e's scores are the next ``sizes[e]``
        values of ``s``, their IoUs with its one instance those of ``iou`` (-1 where
        ``has_gt[e]`` is False)."""
        n = sizes.size
        total = int(sizes.sum())
        owner = np.repeat(np.arange(n), sizes)
        ngt = has_gt.astype(np.int64)
        order = np.lexsort((-s, owner))  # by entry, scores descending
        s, iou, owner = s[order], iou[order], owner[order]
        rank = np.arange(total) - (np.cumsum(sizes) - sizes)[owner]
        best = iou.copy()  # running max of the IoU within each entry
        by_rank = np.argsort(rank, kind="stable")
        bounds = np.cumsum(np.bincount(rank, minlength=1))
        for k in range(1, len(bounds)):
            idx = by_rank[bounds[k - 1] : bounds[k]]
            best[idx] = np.maximum(best[idx - 1], iou[idx])
        last = (
            np.flatnonzero(np.r_[(owner[1:] != owner[:-1]) | (s[1:] != s[:-1]), True])
            if total
            else np.zeros(0, np.int64)
        )
        lv_owner = owner[last]
        n_levels = np.bincount(lv_owner, minlength=n)
        offsets = np.cumsum(n_levels + 1) - (n_levels + 1)
        lv_rank = np.arange(last.size) - (np.cumsum(n_levels) - n_levels)[lv_owner]
        rows = offsets[lv_owner] + 1 + lv_rank
        ndt = np.zeros(int((n_levels + 1).sum()), dtype=np.int64)
        tp = np.zeros((ndt.size, 1, len(IOU_THRESHOLDS)), dtype=np.int64)
        ndt[rows] = rank[last] + 1
        tp[rows, 0] = best[last, None] >= IOU_THRESHOLDS[None, :]
        return cls(n, s[last], lv_owner, offsets, ndt, tp, ngt[:, None])

    @classmethod
    def concat(cls, stacks: Sequence[EntryStack]) -> EntryStack:
        """Entries of several stacks (same number of annotators), in order."""
        ns = np.cumsum([0] + [st.n for st in stacks])
        rows = np.cumsum([0] + [st.ndt.size for st in stacks])
        return cls(
            int(ns[-1]),
            np.concatenate([st.level_values for st in stacks]),
            np.concatenate([st.level_owner + ns[i] for i, st in enumerate(stacks)]),
            np.concatenate([st.offsets + rows[i] for i, st in enumerate(stacks)]),
            np.concatenate([st.ndt for st in stacks]),
            np.concatenate([st.tp for st in stacks]),
            np.concatenate([st.ngt for st in stacks]),
        )

    def rows_at(self, t: float) -> np.ndarray:
        """(E,) row of each entry in the flat tables when predictions with s ≥ t are accepted
        (read-only; the last threshold's is kept: the records and the summary both read it)."""
        last = self.__dict__.get("_rows_at")
        if last is not None and last[0] == t:
            return last[1]
        rows = self.offsets + np.bincount(self.level_owner[self.level_values >= t], minlength=self.n)
        rows.flags.writeable = False
        self.__dict__["_rows_at"] = (t, rows)
        return rows

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(ndt (E,), tp (E, A, 10)) when predictions with s ≥ t are accepted."""
        rows = self.rows_at(t)
        return self.ndt[rows], self.tp[rows]

    def row_entries(self) -> np.ndarray:
        """(rows,) entry index of each flat row."""
        return np.repeat(np.arange(self.n), np.diff(np.r_[self.offsets, self.ndt.size]))

    def oracle_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Threshold-free, per flat row: the annotator the oracle picks (:func:`select_oracle`
        reads only that row), its TP (rows, 10) and its ground-truth count (rows,). Reading
        them at :meth:`rows_at` gives exactly the oracle of :meth:`at`; built once."""
        if self._oracle is None:
            ngt = self.ngt[self.row_entries()]
            best = select_oracle(self.tp, self.ndt, ngt)
            r = np.arange(self.ndt.size)
            self._oracle = (best, self.tp[r, best], ngt[r, best])
        return self._oracle

    def row_sums_table(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Threshold-free, after the oracle (:meth:`oracle_rows`): per flat row the integer
        columns that :func:`~masklens.core.kinds.common.cgf1.metrics.accumulate_groups` sums and the local
        F1 of a positive entry (0 otherwise), built once (the stack's arrays are not changed
        after building); None when a row has TP > 0 without a prediction or ground truth
        (then the general path runs)."""
        if self._row_table is None:
            _, tp, ngt = self.oracle_rows()
            ndt = self.ndt
            ints, pos = entry_columns(tp, ndt, ngt)
            if (tp[~pos] != 0).any():
                self._row_table = (None, None)
            else:
                f1 = np.zeros(tp.shape, dtype=np.float64)
                f1[pos] = local_f1_bulk(tp[pos], ndt[pos, None], ngt[pos, None])
                if not ints.size or int(np.abs(ints).max()) < 1 << 31:
                    ints = ints.astype(np.int32)  # counts: half the memory
                self._row_table = (ints, f1)
        row_ints, row_f1 = self._row_table  # both None, or both arrays
        return None if row_ints is None or row_f1 is None else (row_ints, row_f1)


def select_oracle(tp: np.ndarray, ndt: np.ndarray, ngt: np.ndarray) -> np.ndarray:
    """Per entry, the annotator index the official oracle picks.

    Annotators are visited in file order; an entry with no ground truth and no accepted
    prediction (a true negative, which has no local F1) always wins; otherwise a later
    annotator replaces the best so far only when both have a local F1 and its mean local
    F1 over the IoU thresholds is strictly greater (ties keep the earlier file).
    """
    n, n_ann = ngt.shape
    best = np.zeros(n, dtype=np.int64)
    if n_ann == 1 or n == 0:
        return best
    tn = (ngt == 0) & (ndt[:, None] == 0)  # (E, A)
    mean_f1 = local_f1_bulk(tp, ndt[:, None, None], ngt[:, :, None]).mean(axis=-1)  # (E, A)
    idx = np.arange(n)
    for a in range(1, n_ann):
        best_tn = tn[idx, best]
        better = ~best_tn & ~tn[:, a] & (mean_f1[:, a] > mean_f1[idx, best])
        best = np.where(better | tn[:, a], a, best)
    return best


def entry_columns(
    tp: np.ndarray, ndt: np.ndarray, ngt: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Integer columns summed per subset (IL TP/FP/TN/FN, ndt, ngt, ndt of positives, TP@10)
    and the positive-entry mask."""
    has_gt, has_dt = ngt > 0, ndt > 0
    pos = has_gt & has_dt
    cols = np.stack(
        [pos, ~has_gt & has_dt, ~has_gt & ~has_dt, has_gt & ~has_dt, ndt, ngt, ndt * pos], axis=1
    )
    return np.concatenate([cols, tp], axis=1, dtype=np.int64), pos
