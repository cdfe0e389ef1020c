"""SAM 3 promptable-concept-segmentation metrics: cgF1, IL_MCC, pmF1, IL_FPR and friends.

Semantics follow ``sam3/eval/cgf1_eval.py`` (facebookresearch/sam3) exactly; see
``docs/metrics/pcs.md``. Per image entry (an image–noun-phrase pair) predictions
with score s ≥ t and the non-crowd ground truth are kept; ONE Hungarian assignment
maximising the summed mask IoU is made (matches of any IoU, even 0, are kept), and
for each IoU threshold 0.50:0.05:0.95 TP = matches with IoU ≥ thr, FP = #pred − TP,
FN = #gt − TP.

Two stages, as everywhere in masklens:

* :func:`entry_table` is threshold-free: for every distinct score level it stores the
  TP counts that acceptance at that level gives (the only place that matches);
* :func:`summarize_entries` reads those tables at a score threshold ``t``, picks the
  oracle annotator per entry and accumulates — no mask is touched.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: IoU thresholds 0.50:0.05:0.95, built exactly as pycocotools' Params does
IOU_THRESHOLDS: np.ndarray = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1)
#: epsilons of the official script: precision/recall/F1 and image-level ratios/MCC
P_EPS = 1e-4
IL_EPS = 1e-6
_I50 = int(np.flatnonzero(IOU_THRESHOLDS == 0.5)[0])
_I75 = int(np.flatnonzero(IOU_THRESHOLDS == 0.75)[0])


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


def _match_values(ious: np.ndarray) -> np.ndarray:
    """IoUs of the one Hungarian assignment maximising the summed IoU (rows = predictions)."""
    if ious.shape[0] == 0 or ious.shape[1] == 0:
        return np.zeros(0)
    if ious.shape[1] == 1:  # one ground truth: the assignment takes the best prediction
        return np.array([ious[:, 0].max()])
    if ious.shape[0] == 1:
        return np.array([ious[0].max()])
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(-ious)
    return ious[rows, cols]


def entry_table(scores: Sequence[float], ious_per_annotator: Sequence[np.ndarray]) -> EntryTable:
    """Build an :class:`EntryTable` from prediction scores and, per annotator, the IoU matrix
    (predictions in file order × that annotator's non-crowd instances)."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    levels = np.unique(s)  # ascending
    n_levels, n_ann = len(levels), len(ious_per_annotator)
    ndt = np.zeros(n_levels + 1, dtype=np.int64)
    tp = np.zeros((n_levels + 1, n_ann, len(IOU_THRESHOLDS)), dtype=np.int64)
    ngt = np.zeros(n_ann, dtype=np.int64)
    mats = []
    for a, m in enumerate(ious_per_annotator):
        m = np.asarray(m, dtype=np.float64)
        if m.ndim != 2 or m.shape[0] != len(s):
            raise ValueError(f"IoU matrix of shape {m.shape} for {len(s)} predictions")
        ngt[a] = m.shape[1]
        mats.append(m)
    for k in range(1, n_levels + 1):
        keep = s >= levels[n_levels - k]
        ndt[k] = int(keep.sum())
        for a, m in enumerate(mats):
            if m.shape[1]:
                v = _match_values(m[keep])
                tp[k, a] = (v[:, None] >= IOU_THRESHOLDS[None, :]).sum(axis=0)
    return EntryTable(tuple(float(v) for v in levels), ndt, tp, ngt)


def _ratio(num: np.ndarray, den: np.ndarray, eps: float) -> np.ndarray:
    return num / (den + eps)


def local_f1(tp: np.ndarray, ndt: np.ndarray, ngt: np.ndarray) -> np.ndarray:
    """Per-threshold F1 of entries (broadcast): P = TP/(TP+FP+1e-4), R = TP/(TP+FN+1e-4),
    F1 = 2PR/(P+R+1e-4), exactly as the official per-image ``local_F1s``."""
    fp = ndt - tp
    fn = ngt - tp
    p = tp / (tp + fp + P_EPS)
    r = tp / (tp + fn + P_EPS)
    return 2 * p * r / (p + r + P_EPS)


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

    @classmethod
    def build(cls, tables: Sequence[EntryTable]) -> EntryStack:
        n = len(tables)
        n_ann = max((t.tp.shape[1] for t in tables), default=1)
        if any(t.tp.shape[1] != n_ann for t in tables):
            raise ValueError("all entries must be scored against the same number of annotators")
        sizes = np.array([len(t.levels) for t in tables], dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes + 1)[:-1])).astype(np.int64)
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

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(ndt (E,), tp (E, A, 10)) when predictions with s ≥ t are accepted."""
        k = np.bincount(self.level_owner[self.level_values >= t], minlength=self.n)
        rows = self.offsets + k
        return self.ndt[rows], self.tp[rows]


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
    mean_f1 = local_f1(tp, ndt[:, None, None], ngt[:, :, None]).mean(axis=-1)  # (E, A)
    idx = np.arange(n)
    for a in range(1, n_ann):
        best_tn = tn[idx, best]
        better = ~best_tn & ~tn[:, a] & (mean_f1[:, a] > mean_f1[idx, best])
        best = np.where(better | tn[:, a], a, best)
    return best


def _mean(v: np.ndarray) -> float:
    keep = v[v > -1]  # the official summary averages the entries > -1
    return float(np.mean(keep)) if keep.size else -1.0


def accumulate(tp: np.ndarray, ndt: np.ndarray, ngt: np.ndarray) -> dict[str, float | int | None]:
    """Metrics of entries already reduced to one annotator: tp (E, 10), ndt (E,), ngt (E,)."""
    n = len(ndt)
    has_gt, has_dt = ngt > 0, ndt > 0
    il_tp = int(np.sum(has_gt & has_dt))
    il_fp = int(np.sum(~has_gt & has_dt))
    il_tn = int(np.sum(~has_gt & ~has_dt))
    il_fn = int(np.sum(has_gt & ~has_dt))
    fp_e = ndt[:, None] - tp
    fn_e = ngt[:, None] - tp
    tps = tp.sum(axis=0)
    fps = fp_e.sum(axis=0)
    fns = fn_e.sum(axis=0)
    pos = has_gt & has_dt
    pm_fps = fp_e[pos].sum(axis=0)
    precision = tps / (tps + fps + P_EPS)
    pm_precision = tps / (tps + pm_fps + P_EPS)
    recall = tps / (tps + fns + P_EPS)
    f1 = 2 * precision * recall / (precision + recall + P_EPS)
    pm_f1 = 2 * pm_precision * recall / (pm_precision + recall + P_EPS)
    n_pos = int(pos.sum())
    macro = local_f1(tp[pos], ndt[pos, None], ngt[pos, None]).sum(axis=0) / n_pos if n_pos else None
    il_rec = il_tp / (il_tp + il_fn + IL_EPS)
    il_prec = il_tp / (il_tp + il_fp + IL_EPS)
    il_f1 = 2 * il_prec * il_rec / (il_prec + il_rec + IL_EPS)
    il_fpr = il_fp / (il_fp + il_tn + IL_EPS)
    il_mcc = float(il_tp * il_tn - il_fp * il_fn) / (
        (float(il_tp + il_fp) * float(il_tp + il_fn) * float(il_tn + il_fp) * float(il_tn + il_fn))
        ** 0.5
        + IL_EPS
    )
    cg = pm_f1 * il_mcc
    out: dict[str, float | int | None] = {
        "N": n,
        "cgF1": _mean(cg),
        "cgF1@0.5": float(cg[_I50]),
        "cgF1@0.75": float(cg[_I75]),
        "IL_MCC": float(il_mcc),
        "pmF1": _mean(pm_f1),
        "pmF1@0.5": float(pm_f1[_I50]),
        "pmF1@0.75": float(pm_f1[_I75]),
        "IL_FPR": float(il_fpr),
        "IL_precision": float(il_prec),
        "IL_recall": float(il_rec),
        "IL_F1": float(il_f1),
        "IL_TP": il_tp,
        "IL_FP": il_fp,
        "IL_TN": il_tn,
        "IL_FN": il_fn,
        "positive_micro_precision": _mean(pm_precision),
        "positive_macro_F1": _mean(macro) if macro is not None else None,
        "precision": _mean(precision),
        "recall": _mean(recall),
        "F1": _mean(f1),
    }
    return out


def summarize_entries(stack: EntryStack, t: float) -> dict[str, float | int | None]:
    """cgF1 & co. of the stacked entries at score threshold ``t`` (oracle over annotators)."""
    ndt, tp = stack.at(t)
    best = select_oracle(tp, ndt, stack.ngt)
    idx = np.arange(stack.n)
    tp_sel = tp[idx, best] if stack.n else np.zeros((0, len(IOU_THRESHOLDS)), dtype=np.int64)
    ngt_sel = stack.ngt[idx, best] if stack.n else np.zeros(0, dtype=np.int64)
    out = accumulate(tp_sel, ndt, ngt_sel)
    if stack.n == 0:
        for key in out:
            if key != "N":
                out[key] = None
    return out


def entry_readout(table: EntryTable, t: float) -> dict[str, object]:
    """One entry's record at threshold ``t``: accepted count, oracle annotator, IL class,
    TP/FP/FN at IoU 0.5 and 0.75 and the mean local F1."""
    k = table.row(t)
    ndt = int(table.ndt[k])
    tp = table.tp[k]  # (A, 10)
    best = int(select_oracle(tp[None], np.array([ndt]), table.ngt[None])[0])
    ngt = int(table.ngt[best])
    row = tp[best]
    il = ("TP" if ndt else "FN") if ngt else ("FP" if ndt else "TN")
    rec: dict[str, object] = {
        "n_accepted": ndt,
        "n_gt": ngt,
        "annotator": best,
        "IL": il,
        "TP@0.5": int(row[_I50]),
        "TP@0.75": int(row[_I75]),
        "FP@0.5": ndt - int(row[_I50]),
        "FN@0.5": ngt - int(row[_I50]),
        "local_F1": None
        if il == "TN"
        else float(local_f1(row, np.int64(ndt), np.int64(ngt)).mean()),
    }
    return rec
