"""One entry's Hungarian matching as SAM 3's cgF1 does it: the matched IoUs, the matched
pairs (for the cards and the export) and the instance order (category ids ascending, file
order within a category) that decides which of two equally good assignments scipy returns."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations
from math import isfinite, perm
from typing import Any

import numpy as np

#: the most assignments of a matrix compared one by one (a 4 × 4 matrix has 24); a larger
#: matrix goes to scipy
_FEW_ASSIGNMENTS = 24
#: summed IoUs this close are a tie that only scipy's own arithmetic decides
_TIE = 1e-9


def _best_assignments(ious: np.ndarray) -> list[list[tuple[int, int]]] | None:
    """Every assignment (pairs in row order) whose summed IoU is within :data:`_TIE` of the
    largest — the candidates for scipy's answer — or None where they are not compared one by
    one (too many assignments, or an IoU that is not a finite number)."""
    r, c = ious.shape
    if perm(max(r, c), min(r, c)) > _FEW_ASSIGNMENTS:
        return None
    rows = ious.tolist()
    if not all(isfinite(v) for row in rows for v in row):
        return None
    if r <= c:
        every = [list(zip(range(r), p)) for p in permutations(range(c), r)]  # noqa: B905
    else:
        every = [sorted(zip(p, range(c))) for p in permutations(range(r), c)]  # noqa: B905
    sums = [sum([rows[i][j] for i, j in pairs]) for pairs in every]
    top = max(sums)
    return [pairs for pairs, total in zip(every, sums, strict=True) if total >= top - _TIE]


def matched_values(ious: np.ndarray) -> list[float]:
    """IoUs of the one Hungarian assignment maximising the summed IoU (rows = predictions), in
    row order: scipy's ``linear_sum_assignment``, or the same values found without it where
    every assignment that scipy could return gives them (a small matrix, no tie between
    assignments of other values). scipy is slow to import, and a call costs more than a small
    matrix's assignments."""
    r, c = ious.shape
    if r == 0 or c == 0:
        return []
    if c == 1:  # one ground truth: the assignment takes the best prediction
        return [float(ious[:, 0].max())]
    if r == 1:
        return [float(ious[0].max())]
    best = _best_assignments(ious)
    if best is not None:
        rows = ious.tolist()
        values = [[rows[i][j] for i, j in pairs] for pairs in best]
        if len(best) == 1 or all(sorted(v) == sorted(values[0]) for v in values[1:]):
            return values[0]
    from scipy.optimize import linear_sum_assignment  # lazy: slow to import

    picked_rows, picked_cols = linear_sum_assignment(-ious)
    return ious[picked_rows, picked_cols].tolist()


def match_values(ious: np.ndarray) -> np.ndarray:
    """:func:`matched_values` as an array."""
    return np.array(matched_values(ious), dtype=np.float64)


def assignment(ious: np.ndarray) -> list[tuple[int, int]]:
    """The (prediction row, ground-truth column) pairs of the assignment whose IoUs
    :func:`match_values` returns (for showing which instance matched which; same values):
    scipy's, or the one best assignment where a small matrix has no tie."""
    if ious.shape[0] == 0 or ious.shape[1] == 0:
        return []
    if ious.shape[1] == 1:
        return [(int(np.argmax(ious[:, 0])), 0)]
    if ious.shape[0] == 1:
        return [(0, int(np.argmax(ious[0])))]
    best = _best_assignments(ious)
    if best is not None and len(best) == 1:
        return best[0]
    from scipy.optimize import linear_sum_assignment  # lazy: slow to import

    rows, cols = linear_sum_assignment(-ious)
    return list(zip(rows.tolist(), cols.tolist(), strict=True))


def _category_key(category: Any) -> tuple[int, Any]:
    """Sort key of a ``category_id``: numbers ascending (as ``sorted(catIds)``), then strings,
    then a missing id (masklens keeps records the official code drops; see docs/metrics.md)."""
    if isinstance(category, (int, float)) and category == category:  # True == 1, as in a dict key
        return (0, category)
    if isinstance(category, str):
        return (1, category)
    return (2, 0)


def category_order(categories: Sequence[Any]) -> list[int]:
    """Indices of an entry's instances in the order SAM 3's ``CGF1Eval`` matches them.

    ``computeIoU``/``evaluateImg`` list an image's instances as
    ``[x for cId in p.catIds for x in self._gts[imgId, cId]]`` with ``p.catIds`` =
    ``sorted(cocoGt.getCatIds())``: grouped by category id ascending, file order within a
    category (ground truth and predictions alike). Which of two equally good Hungarian
    assignments scipy returns depends on this order, and so can the TP counts.
    """
    if categories:
        one = categories[0]
        first = _category_key(one)
        if all(c is one or _category_key(c) == first for c in categories):  # one category
            return list(range(len(categories)))
    return sorted(range(len(categories)), key=lambda i: _category_key(categories[i]))
