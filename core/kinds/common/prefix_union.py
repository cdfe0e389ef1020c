"""Score-threshold prefix unions: "the union of the instances with s ≥ t" for every t at once.

With instances sorted by score, the set kept at a threshold t (inclusive, s ≥ t)
is a prefix of that order, so the union can only change at the distinct scores
("cuts"). :func:`prefix_areas` computes, once, for every cut the union's area
and its intersection with a few target masks; :meth:`PrefixAreas.row` then
finds the row for any t by binary search (``bisect`` on the negated cuts; :func:`rows_for`
is the vectorised ``searchsorted`` form) — no mask is touched again.

Row 0 is always "nothing kept" (t above every score): area 0, intersections 0.
Row j ≥ 1 is "kept every instance with s ≥ cuts[j-1]".
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from masklens.core.masks import Mask, intersection_matrix, union_all


def score_cuts(scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """The distinct scores in descending order (float64)."""
    arr = np.asarray(scores, dtype=np.float64).reshape(-1)
    return np.unique(arr)[::-1].copy()


def rows_for(cuts: np.ndarray, thresholds: np.ndarray | Sequence[float] | float) -> np.ndarray:
    """Number of cuts ≥ t (= the prefix row) for each threshold t; ``cuts`` descending."""
    return np.searchsorted(-np.asarray(cuts, dtype=np.float64), -np.asarray(thresholds, dtype=np.float64), side="right")


def row_for(cuts: np.ndarray, threshold: float) -> int:
    """The prefix row for one threshold t (inclusive: a score equal to t is kept)."""
    return int(rows_for(cuts, threshold))


class RowLookup:
    """Scalar row lookups on Python lists (much faster than numpy for a handful of cuts)."""

    cuts: np.ndarray

    @cached_property
    def _neg_cuts(self) -> list[float]:
        return (-np.asarray(self.cuts, dtype=np.float64)).tolist()

    def row(self, threshold: float) -> int:
        """Number of cuts ≥ t: the row of the state at threshold t."""
        return bisect_right(self._neg_cuts, -float(threshold))


@dataclass(frozen=True, eq=False)
class PrefixUnions(RowLookup):
    """The prefix unions themselves (masks), one per row; used while building caches."""

    cuts: np.ndarray  # (K,) distinct scores, descending
    unions: list[Mask]  # (K + 1,) row 0 empty
    kept: np.ndarray  # (K + 1,) number of instances kept at each row


def prefix_unions(
    masks: Sequence[Mask], scores: Sequence[float], height: int, width: int
) -> PrefixUnions:
    """Union of the instances with s ≥ cut, for every distinct score cut (incrementally)."""
    if len(masks) != len(scores):
        raise ValueError("masks and scores differ in length")
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    cuts = score_cuts(s)
    empty = Mask.empty(height, width)
    unions = [empty]
    kept = [0]
    order = np.argsort(-s, kind="stable")
    i = 0
    current = empty
    for cut in cuts:
        batch = []
        while i < len(order) and s[order[i]] >= cut:
            batch.append(masks[int(order[i])])
            i += 1
        current = union_all([current, *batch] if kept[-1] else batch, height, width)
        unions.append(current)
        kept.append(i)
    return PrefixUnions(cuts, unions, np.asarray(kept, dtype=np.int64))


@dataclass(frozen=True, eq=False)
class PrefixAreas(RowLookup):
    """Threshold-free cache of a prefix-union family: areas only, no masks.

    ``area[j]`` = |U_j|, ``inter[j, m]`` = |U_j ∩ targets[m]|, ``kept[j]`` = instances kept.
    """

    cuts: np.ndarray  # (K,) descending
    kept: np.ndarray  # (K + 1,)
    area: np.ndarray  # (K + 1,) int64
    inter: np.ndarray  # (K + 1, T) int64

    @property
    def n_instances(self) -> int:
        return int(self.kept[-1])

    @cached_property
    def rows(self) -> list[tuple[int, int, tuple[int, ...]]]:
        """Per row (kept, area, intersections) as plain ints, for fast scalar readouts."""
        return [(k, a, tuple(i)) for k, a, i in zip(self.kept.tolist(), self.area.tolist(), self.inter.tolist(), strict=True)]


def areas_of(pu: PrefixUnions, targets: Sequence[Mask]) -> PrefixAreas:
    """Areas and target intersections of already-built prefix unions (one RLE IoU call)."""
    area = np.array([u.area for u in pu.unions], dtype=np.int64)
    if targets:
        inter = intersection_matrix(pu.unions, list(targets)).astype(np.int64)
    else:
        inter = np.zeros((len(pu.unions), 0), dtype=np.int64)
    return PrefixAreas(pu.cuts, pu.kept, area, inter)


def prefix_areas(
    masks: Sequence[Mask],
    scores: Sequence[float],
    targets: Sequence[Mask],
    height: int,
    width: int,
) -> PrefixAreas:
    """Build the prefix unions of (masks, scores) and measure them against ``targets``."""
    return areas_of(prefix_unions(masks, scores, height, width), targets)


def joint_cuts(*cut_arrays: np.ndarray) -> np.ndarray:
    """Distinct cuts of several families together (descending), for a threshold shared by all."""
    if not cut_arrays:
        return np.zeros(0, dtype=np.float64)
    return score_cuts(np.concatenate([np.asarray(c, dtype=np.float64) for c in cut_arrays]))


def map_rows(joint: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """For each joint row (0..K), the row of the family with ``cuts`` at the same threshold."""
    rows = np.zeros(len(joint) + 1, dtype=np.int64)
    if len(joint):
        rows[1:] = rows_for(cuts, joint)
    return rows
