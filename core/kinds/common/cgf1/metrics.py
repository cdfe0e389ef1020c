"""SAM 3 promptable-concept-segmentation metrics: cgF1, IL_MCC, pmF1, IL_FPR and friends.

Semantics follow ``sam3/eval/cgf1_eval.py`` (facebookresearch/sam3) exactly; see
``docs/metrics.md``. Per image entry (an image–noun-phrase pair) predictions
with score s ≥ t and the non-crowd ground truth are kept; ONE Hungarian assignment
maximising the summed mask IoU is made (matches of any IoU, even 0, are kept), and
for each IoU threshold 0.50:0.05:0.95 TP = matches with IoU ≥ thr, FP = #pred − TP,
FN = #gt − TP.

Two stages, as everywhere in masklens:

* :func:`~masklens.core.kinds.common.cgf1.tables.entry_table` is
  threshold-free: for every distinct score level it stores the TP counts that acceptance
  at that level gives (the only place that matches);
* :func:`summarize_entries` (this module) reads those tables at a score threshold ``t``,
  picks the oracle annotator per entry and accumulates — no mask is touched.
"""

from __future__ import annotations

import numpy as np

from masklens.core.kinds.common.cgf1.sums import member_sums
from masklens.core.kinds.common.cgf1.tables import (
    IL_EPS,
    INDEX_50,
    INDEX_75,
    P_EPS,
    EntryStack,
    EntryTable,
    entry_columns,
    local_f1,
    select_oracle,
)


def _means(v: np.ndarray) -> list[float]:
    """Row means of (G, 10) as the official summary takes them: of the entries > −1 (−1 if none)."""
    keep = v > -1
    if keep.all():
        return v.mean(axis=1).tolist()
    return [float(np.mean(r[k])) if k.any() else -1.0 for r, k in zip(v, keep, strict=True)]


def _segments(members: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Entries of every subset in a row (``order``), the non-empty subsets and their starts."""
    sizes = members.sum(axis=1)
    order = np.flatnonzero(members.ravel()) % members.shape[1] if members.size else np.zeros(0, int)
    full = np.flatnonzero(sizes)
    return order, full, (np.cumsum(sizes) - sizes)[full]


def sequential_sums(rows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Float sums of the segments ``rows[starts[i]:starts[i + 1]]`` (axis 0), each added one row
    after another as SAM 3's ``accumulate`` does (``local_F1s += ...``): ``np.add.reduceat``
    may add in another order and differ in the last bit."""
    bounds = [*starts.tolist(), len(rows)]
    out = np.zeros((len(starts), *rows.shape[1:]), dtype=np.float64)
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        if b > a:
            out[i] = np.cumsum(rows[a:b], axis=0)[-1]
    return out


def accumulate_groups(
    tp: np.ndarray, ndt: np.ndarray, ngt: np.ndarray, members: np.ndarray
) -> list[dict[str, float | int | None]]:
    """Metrics of entries reduced to one annotator (tp (E, 10), ndt (E,), ngt (E,)) for each
    subset given by a row of ``members`` (G, E) boolean: the official accumulate/summarize
    formulas term for term (same epsilons and order), vectorised over the subsets."""
    ints, pos = entry_columns(tp, ndt, ngt)
    ints = np.concatenate([ints, tp * pos[:, None]], axis=1, dtype=np.int64)
    w = tp.shape[1]
    f1_pos = np.zeros(tp.shape, dtype=np.float64)
    f1_pos[pos] = local_f1(tp[pos], ndt[pos, None], ngt[pos, None])
    # per-subset sums by segments (no BLAS: its threads stall on a busy machine)
    order, full, starts = _segments(members)
    sums = np.zeros((len(members), ints.shape[1]), dtype=np.int64)
    f1_sum = np.zeros((len(members), w), dtype=np.float64)
    if full.size:
        sums[full] = np.add.reduceat(ints[order], starts, axis=0)
        f1_sum[full] = sequential_sums(f1_pos[order], starts)
    return _finish(sums, f1_sum, members)


def _accumulate_rows(
    stack: EntryStack, rows: np.ndarray, members: np.ndarray, t: float
) -> list[dict[str, float | int | None]] | None:
    """:func:`accumulate_groups` of the oracle's picks at the given rows (those at ``t``),
    from the stack's threshold-free row table: the integer columns from the per-subset
    cumulative sums (:mod:`~masklens.core.kinds.common.cgf1.sums`; integers, so exact), the local F1
    gathered and summed exactly as there (one row after another, in entry order); None when the stack has no such table."""
    table = stack.row_sums_table()
    if table is None:
        return None
    ints, f1 = table
    w = f1.shape[1]
    sums = np.zeros((len(members), ints.shape[1] + w), dtype=np.int64)
    sums[:, : ints.shape[1]] = member_sums(stack, ints, members).at(t)
    sums[:, ints.shape[1] :] = sums[:, 7 : 7 + w]  # TP of positives = TP (checked per row)
    f1_sum = np.zeros((len(members), w), dtype=np.float64)
    order, full, starts = _segments(members)
    if full.size:  # the same float sums as accumulate_groups: every member, in entry order
        f1_sum[full] = sequential_sums(f1[rows[order]], starts)
    return _finish(sums, f1_sum, members)


def _finish(
    sums: np.ndarray, f1_sum: np.ndarray, members: np.ndarray
) -> list[dict[str, float | int | None]]:
    """The per-subset metrics from the summed columns (see :func:`accumulate_groups`)."""
    w = f1_sum.shape[1]
    il = sums[:, :4].tolist()
    n_dt, n_gt, n_dt_pos = sums[:, 4:5], sums[:, 5:6], sums[:, 6:7]
    tps, tps_pos = sums[:, 7 : 7 + w], sums[:, 7 + w :]
    fps, fns, pm_fps = n_dt - tps, n_gt - tps, n_dt_pos - tps_pos  # Σ(ndt − TP) etc., exact
    n_pos = np.array([row[0] for row in il], dtype=np.float64)
    macro = f1_sum / np.maximum(n_pos, 1)[:, None]
    precision = tps / (tps + fps + P_EPS)
    pm_precision = tps / (tps + pm_fps + P_EPS)
    recall = tps / (tps + fns + P_EPS)
    f1 = 2 * precision * recall / (precision + recall + P_EPS)
    pm_f1 = 2 * pm_precision * recall / (pm_precision + recall + P_EPS)
    mcc = [_image_level(*row)[3] for row in il]
    cg = pm_f1 * np.array(mcc)[:, None]
    cols_mean = [_means(x) for x in (cg, pm_f1, pm_precision, macro, precision, recall, f1)]
    out = []
    for g, (il_tp, il_fp, il_tn, il_fn) in enumerate(il):
        n = int(members[g].sum())
        if n == 0:
            out.append({"N": 0, **dict.fromkeys(_KEYS)})
            continue
        prec, rec, fone, mcc_g, fpr = _image_level(il_tp, il_fp, il_tn, il_fn)
        cgm, pmm, pmp, mac, pr, rc, ff = (c[g] for c in cols_mean)
        out.append({
            "N": n, "cgF1": cgm, "cgF1@0.5": float(cg[g, INDEX_50]), "cgF1@0.75": float(cg[g, INDEX_75]),
            "IL_MCC": mcc_g, "pmF1": pmm, "pmF1@0.5": float(pm_f1[g, INDEX_50]),
            "pmF1@0.75": float(pm_f1[g, INDEX_75]), "IL_FPR": fpr, "IL_precision": prec,
            "IL_recall": rec, "IL_F1": fone, "IL_TP": il_tp, "IL_FP": il_fp, "IL_TN": il_tn,
            "IL_FN": il_fn, "positive_micro_precision": pmp,
            "positive_macro_F1": mac if il_tp else None, "precision": pr, "recall": rc, "F1": ff,
        })  # fmt: skip
    return out


def _image_level(tp: int, fp: int, tn: int, fn: int) -> tuple[float, float, float, float, float]:
    """IL precision, recall, F1, MCC and FPR, with the official epsilons and operation order."""
    rec = tp / (tp + fn + IL_EPS)
    prec = tp / (tp + fp + IL_EPS)
    f1 = 2 * prec * rec / (prec + rec + IL_EPS)
    fpr = fp / (fp + tn + IL_EPS)
    mcc = float(tp * tn - fp * fn) / (
        (float(tp + fp) * float(tp + fn) * float(tn + fp) * float(tn + fn)) ** 0.5 + IL_EPS
    )
    return prec, rec, f1, mcc, fpr


_KEYS = ["cgF1", "cgF1@0.5", "cgF1@0.75", "IL_MCC", "pmF1", "pmF1@0.5", "pmF1@0.75", "IL_FPR",
         "IL_precision", "IL_recall", "IL_F1", "IL_TP", "IL_FP", "IL_TN", "IL_FN",
         "positive_micro_precision", "positive_macro_F1", "precision", "recall", "F1"]  # fmt: skip


def summarize_groups(
    stack: EntryStack, t: float, members: np.ndarray
) -> list[dict[str, float | int | None]]:
    """cgF1 & co. at score threshold ``t`` (oracle over annotators) for each row of
    ``members`` (G, E), a boolean selection of the stacked entries; empty subsets give None."""
    fast = _accumulate_rows(stack, stack.rows_at(t), members, t)
    if fast is not None:
        return fast
    ndt, tp = stack.at(t)
    if tp.shape[1] == 1:
        tp_sel, ngt_sel = tp[:, 0], stack.ngt[:, 0]
    else:
        best = select_oracle(tp, ndt, stack.ngt)
        idx = np.arange(stack.n)
        tp_sel, ngt_sel = tp[idx, best], stack.ngt[idx, best]
    return accumulate_groups(tp_sel, ndt, ngt_sel, members)


def summarize_entries(stack: EntryStack, t: float) -> dict[str, float | int | None]:
    """cgF1 & co. of all the stacked entries at score threshold ``t``."""
    return summarize_groups(stack, t, np.ones((1, stack.n), dtype=bool))[0]


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
        "TP@0.5": int(row[INDEX_50]),
        "TP@0.75": int(row[INDEX_75]),
        "FP@0.5": ndt - int(row[INDEX_50]),
        "FN@0.5": ngt - int(row[INDEX_50]),
        "local_F1": None
        if il == "TN"
        else float(local_f1(row, np.int64(ndt), np.int64(ngt)).mean()),
    }
    return rec
