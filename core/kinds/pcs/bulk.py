"""The threshold-free cgF1 tables of many entries at once (stage 1 of ``pcs``, vectorised).

:func:`stack_entries` returns exactly ``EntryStack.build([entry_table(s, m) for …])`` (see
:mod:`masklens.core.kinds.common.cgf1.tables`) but with one numpy pass over the IoUs of *all*
entries instead of a table per entry; the Hungarian solver runs only where its answer is
not provably unique.

Why that is exact. In one entry, for one annotator and one prefix of accepted predictions,
call a pair (prediction, instance) with IoU > 0 an *edge*. When every edge has an end with
no other edge (the edges form disjoint *stars*: one prediction overlapping several
instances that nothing else overlaps, one instance overlapped by several predictions that
overlap nothing else, or a lone pair), every assignment of maximum summed IoU matches each
star through one of its largest edges and nothing else with IoU > 0: a star gives at most
one edge (its edges share the centre), taking its largest is possible for all stars at
once (they share no row or column), and an assignment missing that value in some star sums
less. So *every* maximum assignment — whichever scipy returns, ties included — has the
same matched values above 0, the star maxima, and TP at threshold x counts the stars whose
maximum is ≥ x (IoU thresholds are > 0, so the zero matches never count). This covers one
ground-truth instance (a column star: the best accepted IoU) and one accepted prediction
(a row star). Star-ness can only be lost as the prefix grows (an instance gains a second
overlapping prediction while one of its predictions overlaps another instance); from the
first prefix where it is lost, that entry and annotator is matched with scipy's Hungarian
on the accepted rows, exactly as :func:`~masklens.core.kinds.common.cgf1.tables.entry_table`.
Inputs with a non-finite or negative IoU or a NaN score take the per-entry path.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

from masklens.core.kinds.common.cgf1.matching import matched_values
from masklens.core.kinds.common.cgf1.tables import (
    IOU_THRESHOLD_LIST,
    EntryStack,
    entry_table,
)

_THR_ARR = np.array(IOU_THRESHOLD_LIST)
_W = len(IOU_THRESHOLD_LIST)
_NEVER = np.iinfo(np.int64).max


def _split(mat: np.ndarray, ngt: Sequence[int]) -> list[np.ndarray]:
    """An entry's (n, Σ ngt) IoUs as one matrix per annotator (column blocks)."""
    out, start = [], 0
    for g in ngt:
        out.append(mat[:, start : start + g])
        start += g
    return out


def stack_entries(
    scores: Sequence[Sequence[float]], mats: Sequence[np.ndarray], ngt: np.ndarray
) -> EntryStack:
    """``EntryStack.build`` of every entry's :func:`entry_table`, vectorised.

    ``scores[e]``: entry ``e``'s prediction scores in matching order; ``mats[e]``: its
    (n_e, Σ_a ngt[e, a]) float64 IoUs, rows in that order, columns one block per annotator
    (``ngt[e, a]`` columns each, in matching order); ``ngt``: (E, A) instance counts.
    """
    ngt = np.asarray(ngt, dtype=np.int64)
    n, n_ann = ngt.shape
    if n == 0:
        return EntryStack.build([])
    n_pred = np.fromiter((len(s) for s in scores), dtype=np.int64, count=n)
    total = int(n_pred.sum())
    score = np.fromiter(chain.from_iterable(scores), dtype=np.float64, count=total)
    vals = np.concatenate([m.ravel() for m in mats])
    if np.isnan(score).any() or not (np.isfinite(vals).all() and (vals >= 0).all()):
        return EntryStack.build(
            [entry_table(s, _split(m, g)) for s, m, g in zip(scores, mats, ngt.tolist(), strict=True)]
        )
    owner = np.repeat(np.arange(n), n_pred)
    pred_start = np.cumsum(n_pred) - n_pred

    # ---- score levels: lvl[p] = the prefix (1 = highest level) from which p is accepted
    order = np.lexsort((-score, owner))
    s_sorted, o_sorted = score[order], owner[order]
    new = np.ones(total, dtype=bool)
    new[1:] = (o_sorted[1:] != o_sorted[:-1]) | (s_sorted[1:] != s_sorted[:-1])
    level_id = np.cumsum(new) - 1
    n_levels = np.bincount(o_sorted[new], minlength=n)
    lv_start = np.cumsum(n_levels) - n_levels
    lvl = np.empty(total, dtype=np.int64)
    lvl[order] = level_id - lv_start[o_sorted] + 1
    offsets = np.cumsum(n_levels + 1) - (n_levels + 1)
    n_rows = int((n_levels + 1).sum())
    # levels ascending per entry, as EntryTable.levels
    desc = s_sorted[new]
    lv_owner = o_sorted[new]
    rank = np.arange(desc.size) - lv_start[lv_owner]
    level_values = np.empty_like(desc)
    level_values[lv_start[lv_owner] + n_levels[lv_owner] - 1 - rank] = desc

    sizes = n_levels + 1  # rows per entry

    def seg_cumsum(x: np.ndarray) -> np.ndarray:
        """Cumulative sum over each entry's rows (C order; ``x`` is used up). One running
        sum over all rows, less the sum before the entry's first row. Rows are summed along
        a transposed copy: numpy sums a contiguous axis several times faster."""
        cols = x.reshape(x.shape[0], -1).T.copy()  # (columns, rows), each column contiguous
        np.cumsum(cols, axis=1, out=cols)
        before = np.zeros((cols.shape[0], n), dtype=cols.dtype)
        before[:, 1:] = cols[:, offsets[1:] - 1]
        cols -= np.repeat(before, sizes, axis=1)
        return np.ascontiguousarray(cols.T).reshape(x.shape)

    pred_row = offsets[owner] + lvl
    ndt = seg_cumsum(np.bincount(pred_row, minlength=n_rows))

    # ---- edges: IoU > 0, by entry, prediction, global column, annotator
    n_col = ngt.sum(axis=1)
    block = n_pred * n_col
    nz = np.flatnonzero(vals > 0)
    e = np.searchsorted(np.cumsum(block), nz, side="right")
    loc = nz - (np.cumsum(block) - block)[e]
    width = n_col[e]
    p = pred_start[e] + loc // width
    col = (np.cumsum(n_col) - n_col)[e] + loc % width
    col_ann = np.repeat(np.tile(np.arange(n_ann), n), ngt.ravel())
    a = col_ann[col]
    cl = np.searchsorted(_THR_ARR, vals[nz], side="right")  # thresholds met, 0..10
    plvl = lvl[p]
    pa = p * n_ann + a
    row_deg = np.bincount(pa, minlength=total * n_ann)[pa]

    # a column's second edge arrives at col_break (prefix); star-ness fails from
    # max(lvl, col_break) for an edge whose prediction has another edge (same annotator)
    by_col = np.lexsort((plvl, col))
    c_sorted, l_sorted = col[by_col], plvl[by_col]
    first = np.ones(c_sorted.size, dtype=bool)
    first[1:] = c_sorted[1:] != c_sorted[:-1]
    col_break = np.full(int(n_col.sum()), _NEVER, dtype=np.int64)
    has2 = np.flatnonzero(first[:-1] & ~first[1:])
    col_break[c_sorted[has2]] = l_sorted[has2 + 1]
    k0 = np.full(n * n_ann, _NEVER, dtype=np.int64)
    multi = row_deg >= 2
    np.minimum.at(k0, (e * n_ann + a)[multi], np.maximum(plvl, col_break[col])[multi])

    # ---- star regime: +1 / −1 on the threshold range of each star's value change
    diff = np.zeros((n_rows, n_ann, _W + 1), dtype=np.int32)
    # row stars: the prediction's best edge, from its own prefix on
    srt = np.argsort(pa[multi], kind="stable")
    if srt.size:
        keys = pa[multi][srt]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        best = np.maximum.reduceat(cl[multi][srt], starts)
        rp, ra = keys[starts] // n_ann, keys[starts] % n_ann
        np.add.at(diff, (pred_row[rp], ra, best), -1)
        np.add.at(diff, (pred_row[rp], ra, 0), 1)
    # column stars and lone pairs: the running best of the column's single-edge predictions
    single = by_col[row_deg[by_col] == 1]
    if single.size:
        sc = col[single]
        grp = np.cumsum(np.r_[True, sc[1:] != sc[:-1]]) - 1
        run = np.maximum.accumulate(grp * (_W + 1) + cl[single]) - grp * (_W + 1)
        prev = np.zeros_like(run)
        same = np.r_[False, sc[1:] == sc[:-1]]
        prev[same] = run[np.flatnonzero(same) - 1]
        up = run > prev
        r, aa = pred_row[p[single][up]], a[single][up]
        np.add.at(diff, (r, aa, run[up]), -1)
        np.add.at(diff, (r, aa, prev[up]), 1)
    # counts: int16 where no entry has 2^15 predictions (a quarter of int64's memory)
    dtype = np.int16 if total == 0 or int(n_pred.max()) < 1 << 15 else np.int32
    tp = seg_cumsum(np.cumsum(diff[:, :, :_W], axis=2, dtype=np.int32)).astype(dtype)
    del diff

    # ---- beyond the star regime: scipy's Hungarian on the accepted rows, per prefix
    todo = np.flatnonzero(k0 != _NEVER)
    if todo.size:
        where: list[int] = []
        found: list[float] = []  # every prefix's matched IoUs, one after another
        counts: list[int] = []  # how many each prefix has
        ngt_rows, lvl_list = ngt.tolist(), lvl.tolist()
        starts, sizes, first = pred_start.tolist(), n_levels.tolist(), offsets.tolist()
        for idx, k_start in zip(todo.tolist(), k0[todo].tolist(), strict=True):
            ent, ann = divmod(idx, n_ann)
            lo = sum(ngt_rows[ent][:ann])
            m = mats[ent][:, lo : lo + ngt_rows[ent][ann]]
            lv = lvl_list[starts[ent] : starts[ent] + m.shape[0]]
            row0 = first[ent] * n_ann + ann
            for k in range(k_start, sizes[ent] + 1):
                accepted = [i for i, v in enumerate(lv) if v <= k]  # matching order
                where.append(row0 + k * n_ann)
                values = matched_values(m[accepted])
                found.extend(values)
                counts.append(len(values))
        # TP at each threshold: how many matched IoUs reach it (as tp_row; no NaN here)
        slot = np.repeat(np.arange(len(counts)), counts)
        met = np.searchsorted(_THR_ARR, np.array(found, dtype=np.float64), side="right")
        hist = np.bincount(slot * (_W + 1) + met, minlength=len(counts) * (_W + 1))
        reach = np.cumsum(hist.reshape(-1, _W + 1)[:, ::-1], axis=1)[:, ::-1]
        tp.reshape(-1, _W)[where] = reach[:, 1:]
    return EntryStack(n, level_values, lv_owner, offsets, ndt, tp, ngt)
