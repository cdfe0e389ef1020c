"""CGEBench metrics (von Recum & Schnabl): IoGT per hierarchy level and cumulative intersection.

For a chain p_0 = p_base → p_1 → p_2 → p_3 of more general prompts, M(p_k) is
the union of the instances predicted for p_k with score s ≥ t, G the union of
the image entry's non-crowd ground-truth annotations:

    s(p_k) = |M(p_k) ∩ G| / |G|                         (IoGT, eq. 1)
    c(i)   = |(∩_{k ≤ i} M(p_k)) ∩ G| / |G|              (cumulative, eq. 2)

An entry with |G| = 0 has no defined IoGT: its values are None with a reason and
it is left out of every mean, fraction and N.

The scoring cache (:class:`CgeAreas`) holds, for every distinct score cut shared by
the four levels, the integer areas |M(p_k) ∩ G| and |S_i ∩ G|; a readout at any t
looks the row up with ``searchsorted`` (see :mod:`masklens.core.kinds.common.prefix_union`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from masklens.core.kinds.common.prefix_union import (
    RowLookup,
    joint_cuts,
    map_rows,
    prefix_unions,
)
from masklens.core.kinds.common.stats import mean_or_none
from masklens.core.masks import Mask, intersect_all

#: outcome names of one IoGT value (exact comparisons on integer areas)
ZERO, FULL, PARTIAL = "zero", "full", "partial"
EMPTY_GT_REASON = "empty ground truth (|G| = 0): IoGT and cumulative are undefined"


def iogt(inter: int, gt_area: int) -> float | None:
    """|M ∩ G| / |G|, or None when |G| = 0."""
    return None if gt_area <= 0 else float(inter) / float(gt_area)


def outcome(inter: int, gt_area: int) -> str | None:
    """'zero' when |M ∩ G| = 0, 'full' when it equals |G|, else 'partial' (None for |G| = 0)."""
    if gt_area <= 0:
        return None
    if inter <= 0:
        return ZERO
    if inter >= gt_area:
        return FULL
    return PARTIAL


def level_summary(
    inter: Sequence[int], cumulative: Sequence[int], gt_area: Sequence[int]
) -> dict[str, float | int | None]:
    """Mean IoGT, mean c(i) and the zero/full/partial fractions over entries with |G| > 0."""
    rows = [(int(i), int(c), int(g)) for i, c, g in zip(inter, cumulative, gt_area, strict=True) if g > 0]
    n = len(rows)
    outcomes = [outcome(i, g) for i, _, g in rows]
    return {
        "IoGT": mean_or_none(i / g for i, _, g in rows),
        "cumulative": mean_or_none(c / g for _, c, g in rows),
        "zero": outcomes.count(ZERO) / n if n else None,
        "full": outcomes.count(FULL) / n if n else None,
        "partial": outcomes.count(PARTIAL) / n if n else None,
        "N": n,
    }


@dataclass(frozen=True, eq=False)
class CgeAreas(RowLookup):
    """Threshold-free cache of one CGEBench entry (integer areas only).

    Row j of every array is the state at the j-th shared score cut (row 0: nothing kept).
    """

    gt_area: int
    cuts: np.ndarray  # (K,) distinct scores of all levels, descending
    inter: np.ndarray  # (K + 1, L) |M(p_k) ∩ G|
    cumulative: np.ndarray  # (K + 1, L) |(∩_{k ≤ i} M(p_k)) ∩ G|
    pred_area: np.ndarray  # (K + 1, L) |M(p_k)|
    kept: np.ndarray  # (K + 1, L) instances kept
    n_instances: tuple[int, ...]  # per level, before thresholding

    @property
    def levels(self) -> int:
        return self.inter.shape[1]

    @cached_property
    def rows(self) -> list[list[tuple[int, int, int, int]]]:
        """Per row, per level (inter, cumulative, pred_area, kept) as plain ints (fast readouts)."""
        arr = np.stack([self.inter, self.cumulative, self.pred_area, self.kept], axis=2)
        return [[tuple(v) for v in row] for row in arr.tolist()]


def cge_areas(
    gt: Mask,
    levels: Sequence[tuple[Sequence[Mask], Sequence[float]]],
) -> CgeAreas:
    """Build the cache for one entry from G and, per level, its instance masks and scores."""
    h, w = gt.shape
    gt_area = gt.area
    families = [prefix_unions(m, s, h, w) for m, s in levels]
    cuts = joint_cuts(*(f.cuts for f in families))
    n_rows, n_lev = len(cuts) + 1, len(families)
    rows = np.stack([map_rows(cuts, f.cuts) for f in families], axis=1) if families else np.zeros((n_rows, 0), np.int64)
    # |M ∩ G| per level row, then gathered at the joint rows
    inter = np.zeros((n_rows, n_lev), dtype=np.int64)
    pred_area = np.zeros((n_rows, n_lev), dtype=np.int64)
    kept = np.zeros((n_rows, n_lev), dtype=np.int64)
    inter_with_gt: list[list[Mask]] = []
    for k, fam in enumerate(families):
        level_inter = [_and(u, gt) for u in fam.unions]
        inter_with_gt.append(level_inter)
        inter[:, k] = np.array([m.area for m in level_inter], dtype=np.int64)[rows[:, k]]
        pred_area[:, k] = np.array([u.area for u in fam.unions], dtype=np.int64)[rows[:, k]]
        kept[:, k] = fam.kept[rows[:, k]]
    cumulative = np.zeros((n_rows, n_lev), dtype=np.int64)
    prev: list[Mask | None] = [None] * n_lev
    for j in range(n_rows):
        changed = 0 if j == 0 else next(
            (k for k in range(n_lev) if rows[j, k] != rows[j - 1, k]), n_lev
        )
        running: Mask | None = prev[changed - 1] if changed > 0 else None
        for k in range(n_lev):
            if k < changed:
                cumulative[j, k] = cumulative[j - 1, k]
                continue
            level_mask = inter_with_gt[k][rows[j, k]]  # M(p_k) ∩ G at this row
            if running is None:
                running = level_mask
            elif running.area == 0:
                pass  # an empty running intersection stays empty
            else:
                running = _and(running, level_mask)
            prev[k] = running
            cumulative[j, k] = running.area
    return CgeAreas(
        gt_area=gt_area,
        cuts=cuts,
        inter=inter,
        cumulative=cumulative,
        pred_area=pred_area,
        kept=kept,
        n_instances=tuple(int(f.kept[-1]) for f in families),
    )


def _and(a: Mask, b: Mask) -> Mask:
    """a ∩ b, short-circuiting empty masks (no RLE merge needed)."""
    if a.area == 0:
        return a
    if b.area == 0:
        return b
    return intersect_all([a, b])
