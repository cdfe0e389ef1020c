"""SAM 3's cgF1 matches an entry's instances in category order.

``CGF1Eval.computeIoU``/``evaluateImg`` (sam3/eval/cgf1_eval.py) list ground truth and
predictions as ``[x for cId in p.catIds for x in self._gts[imgId, cId]]`` with ``p.catIds =
sorted(cocoGt.getCatIds())`` before ``linear_sum_assignment(-ious)``; when two assignments tie
the order decides the TP counts. The reference below transcribes that listing literally.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from masklens.core.kinds.common.cgf1.matching import category_order
from masklens.core.kinds.common.cgf1.tables import IOU_THRESHOLDS, ordered_entry_table
from masklens.core.kinds.pcs import kind as pcs
from masklens.core.scoring.contract import Scorer

cat_val = st.integers(-2, 4)


def official_listing(categories: list[int]) -> list[int]:
    """``[x for cId in sorted(catIds) for x in by_category[cId]]`` over indices."""
    return [i for c in sorted(set(categories)) for i in range(len(categories)) if categories[i] == c]


@given(st.lists(cat_val, max_size=12))
def test_category_order_is_the_official_listing(categories: list[int]) -> None:
    assert category_order(categories) == official_listing(categories)


def official_tp(scores, cats, mat, gt_cats, t) -> list[int]:
    """CGF1Eval.evaluateImg on one entry: list by category, keep s ≥ t, one Hungarian."""
    rows = [i for i in official_listing(cats) if scores[i] >= t]
    cols = official_listing(gt_cats)
    sub = mat[rows][:, cols] if rows and cols else np.zeros((len(rows), len(cols)))
    r, c = linear_sum_assignment(-sub)
    matched = sub[r, c]
    return [int((matched >= thr).sum()) for thr in IOU_THRESHOLDS]


@st.composite
def entry(draw):
    n, g = draw(st.integers(0, 5)), draw(st.integers(0, 4))
    scores = draw(st.lists(st.sampled_from([0.3, 0.6, 0.9]), min_size=n, max_size=n))
    cats = draw(st.lists(cat_val, min_size=n, max_size=n))
    gt_cats = draw(st.lists(cat_val, min_size=g, max_size=g))
    vals = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=n * g, max_size=n * g))
    return scores, cats, np.array(vals, dtype=float).reshape(n, g), gt_cats


@settings(max_examples=400, deadline=None)
@given(entry())
def test_table_equals_the_official_matching_at_every_level(e) -> None:
    """Tied IoUs (values from a set of five) make the assignment order-dependent."""
    scores, cats, mat, gt_cats = e
    table = ordered_entry_table(scores, [mat], cats, [gt_cats])
    for t in (*sorted(set(scores)), 1.0):
        k = table.row(t)
        assert table.tp[k, 0].tolist() == official_tp(scores, cats, mat, gt_cats, t)
        assert table.ndt[k] == sum(s >= t for s in scores)


def _row(cols: range, w: int = 12) -> dict:
    from masklens.core.masks import Mask

    a = np.zeros((1, w), bool)
    a[0, list(cols)] = True
    return Mask.from_array(a).to_coco()


def write_tie_gadget(tmp_path: Path, p1_cat: int, p2_cat: int) -> None:
    """gt.json / pred.json of the tie: G1 = 4 px, G2 = 5 px; P1 covers 3 px of G1 and 2 of G2
    (IoU 0.5, 0.25), P2 one px of G1 (IoU 0.25): both assignments sum to 0.5. Listed P1, P2 the
    Hungarian keeps P1–G1 (a TP at 0.5); listed P2, P1 (P2's category is lower) it keeps P1–G2
    (none). File order is P1, P2."""
    gt = {"images": [{"id": 1, "height": 1, "width": 12, "text_input": "x"}],
          "categories": [{"id": 1}, {"id": 2}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "segmentation": _row(range(0, 4))},
                          {"id": 2, "image_id": 1, "category_id": 1, "segmentation": _row(range(4, 9))}]}
    preds = [{"image_id": 1, "category_id": p1_cat, "segmentation": _row(range(1, 6)), "score": 0.9},
             {"image_id": 1, "category_id": p2_cat, "segmentation": _row(range(0, 1)), "score": 0.9}]  # fmt: skip
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "pred.json").write_text(json.dumps(preds))


@pytest.mark.parametrize(("p1_cat", "p2_cat", "tp"), [(2, 1, 0), (1, 2, 1)])
def test_tie_resolved_in_category_order(tmp_path: Path, p1_cat: int, p2_cat: int, tp: int) -> None:
    """The tie of :func:`write_tie_gadget` resolves as SAM 3's category order resolves it."""
    write_tie_gadget(tmp_path, p1_cat, p2_cat)
    args = argparse.Namespace(gt=[str(tmp_path / "gt.json")], pred=str(tmp_path / "pred.json"), images=None)
    bench = pcs.KIND.load_benchmark(**vars(args))
    res = Scorer(pcs.KIND, bench, pcs.KIND.load_predictions(bench, **vars(args))).rescore()
    assert res.samples[0]["TP@0.5"] == tp
    p = tp / (2 + 1e-4)
    assert res.summary["all"]["pmF1@0.5"] == pytest.approx(2 * p * p / (2 * p + 1e-4) if tp else 0.0, abs=1e-15)
