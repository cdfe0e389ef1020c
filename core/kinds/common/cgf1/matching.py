"""One entry's Hungarian matching as SAM 3's cgF1 does it: the matched IoUs, the matched
pairs (for the cards and the export) and the instance order (category ids ascending, file
order within a category) that decides which of two equally good assignments scipy returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def match_values(ious: np.ndarray) -> np.ndarray:
    """IoUs of the one Hungarian assignment maximising the summed IoU (rows = predictions)."""
    if ious.shape[0] == 0 or ious.shape[1] == 0:
        return np.zeros(0)
    if ious.shape[1] == 1:  # one ground truth: the assignment takes the best prediction
        return np.array([ious[:, 0].max()])
    if ious.shape[0] == 1:
        return np.array([ious[0].max()])
    from scipy.optimize import linear_sum_assignment  # lazy: slow to import

    rows, cols = linear_sum_assignment(-ious)
    return ious[rows, cols]


def assignment(ious: np.ndarray) -> list[tuple[int, int]]:
    """The (prediction row, ground-truth column) pairs of the assignment whose IoUs
    :func:`match_values` returns (for showing which instance matched which; same values)."""
    if ious.shape[0] == 0 or ious.shape[1] == 0:
        return []
    if ious.shape[1] == 1:
        return [(int(np.argmax(ious[:, 0])), 0)]
    if ious.shape[0] == 1:
        return [(0, int(np.argmax(ious[0])))]
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
