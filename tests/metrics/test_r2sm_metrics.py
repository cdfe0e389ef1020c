"""R2SM metric functions: IoU/gIoU/cIoU by hand and by property, COCO AP by hand and against plain COCOeval."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from masklens.core.kinds.r2sm import metrics as r2sm
from masklens.core.masks import Mask

S = 8
masks_st = st.lists(st.booleans(), min_size=S * S, max_size=S * S).map(lambda b: np.array(b).reshape(S, S))
score_st = st.sampled_from([0.0, 0.2, 0.5, 0.9])


def box(r0, r1, c0, c1, n=S):
    a = np.zeros((n, n), bool)
    a[r0:r1, c0:c1] = True
    return Mask.from_array(a)


# ------------------------------------------------------------------ IoU family
def test_query_iou_by_hand():
    assert r2sm.query_iou(12, 12, 24) == 0.5
    assert r2sm.query_iou(0, 0, 0) == 1.0  # empty prediction on a no-object query
    assert r2sm.query_iou(0, 5, 0) == 0.0  # something predicted where nothing is
    assert r2sm.query_iou(0, 0, 4) == 0.0  # nothing predicted where something is


def test_giou_ciou_by_hand():
    assert r2sm.giou([1.0, 0.5, 0.0]) == 0.5 and r2sm.giou([]) is None
    assert r2sm.ciou([12, 0, 30], [24, 4, 30]) == pytest.approx(42 / 58)
    assert r2sm.ciou([0], [0]) is None and r2sm.ciou([], []) is None


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 100), st.integers(0, 100), st.integers(0, 100))
def test_query_iou_symmetric_and_bounded(i, a, b):
    i = min(i, a, b)
    v = r2sm.query_iou(i, a, b)
    assert v == r2sm.query_iou(i, b, a)
    assert 0.0 <= v <= 1.0


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(masks_st, score_st), max_size=4), masks_st, masks_st, st.sampled_from([0.0, 0.2, 0.3, 0.9, 1.0]))
def test_query_areas_equal_brute_force(instances, amodal, modal, t):
    qa = r2sm.query_areas(7, "q7", "x", True, [Mask.from_array(amodal)], [Mask.from_array(modal)], [False],
                          [Mask.from_array(m) for m, _ in instances], [s for _, s in instances], S, S)
    rec = qa.readout(t)
    u = np.zeros((S, S), bool)
    for m, s in instances:
        if s >= t:
            u |= m

    def iou(p, g):
        union = (p | g).sum()
        return 1.0 if union == 0 else (p & g).sum() / union

    assert rec["IoU"] == pytest.approx(iou(u, amodal)) and rec["IoU_other"] == pytest.approx(iou(u, modal))
    assert rec["I"] == (u & amodal).sum() and rec["U"] == (u | amodal).sum()
    assert rec["types_differ"] == (not np.array_equal(amodal, modal))
    assert rec["wrong_type"] == (rec["types_differ"] and rec["IoU_other"] > rec["IoU"])
    assert 0.0 <= rec["IoU"] <= 1.0


def test_crowd_annotations_left_out_of_the_union():
    a, crowd = box(0, 2, 0, 2), box(6, 8, 6, 8)
    qa = r2sm.query_areas(1, "q1", "x", False, [a, crowd], [a, crowd], [False, True], [a], [1.0], S, S)
    assert qa.gt_area == 4 and qa.readout(0.0)["IoU"] == 1.0


# ------------------------------------------------------------------ COCO AP
def unit(gts, dts, crowd=None):
    return r2sm.eval_unit([g for g in gts], crowd or [False] * len(gts), [d for d, _ in dts], [s for _, s in dts])


def test_ap_perfect_and_half_iou_by_hand():
    g = box(0, 4, 0, 6)  # 24 px
    perfect = r2sm.coco_ap([unit([g], [(g, 0.9)])])
    assert perfect["AP"] == pytest.approx(1.0) and perfect["AP50"] == pytest.approx(1.0) and perfect["AR"] == pytest.approx(1.0)
    assert perfect["APs"] == pytest.approx(1.0) and perfect["APm"] is None and perfect["APl"] is None
    half = r2sm.coco_ap([unit([g], [(box(0, 4, 0, 3), 0.9)])])  # IoU exactly 0.5: matched at 0.50 only
    assert half["AP50"] == pytest.approx(1.0) and half["AP75"] == 0.0
    assert half["AP"] == pytest.approx(0.1) and half["AR"] == pytest.approx(0.1)


def test_ap_two_units_by_hand():
    # unit 1: perfect at 0.9 ; unit 2: a miss (IoU 0) at 0.8. Ranked: TP, FP with 2 gts -> R = [.5, .5], P = [1, .5]
    # interpolated precision is 1 for recall thresholds 0.00..0.50 (51 of 101) and 0 above
    g1, g2 = box(0, 2, 0, 2), box(6, 8, 6, 8)
    res = r2sm.coco_ap([unit([g1], [(g1, 0.9)]), unit([g2], [(box(0, 2, 4, 6), 0.8)])])
    assert res["AP"] == pytest.approx(51 / 101) and res["AP75"] == pytest.approx(51 / 101)
    assert res["AR"] == pytest.approx(0.5)


def test_ap_each_query_is_its_own_unit():
    """The same mask answering another query's gt is not a match: units never mix."""
    g = box(0, 2, 0, 2)
    res = r2sm.coco_ap([unit([g], []), unit([], [(g, 0.9)])])
    assert res["AP"] == 0.0 and res["AR"] == 0.0


def test_ap_crowd_gt_is_ignored():
    g, crowd = box(0, 2, 0, 2), box(4, 8, 4, 8)
    res = r2sm.coco_ap([unit([g, crowd], [(g, 0.9), (crowd, 0.8)], crowd=[False, True])])
    assert res["AP"] == pytest.approx(1.0)  # the detection on the crowd region is neither TP nor FP


def test_ap_no_units():
    assert r2sm.coco_ap([]) == dict.fromkeys(r2sm.AP_KEYS)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.lists(masks_st, max_size=2), st.lists(st.tuples(masks_st, score_st), max_size=3),
                          st.booleans()), min_size=1, max_size=4))
def test_cached_iou_eval_equals_plain_cocoeval(spec):
    units = [
        unit([Mask.from_array(g) for g in gts], [(Mask.from_array(d), s) for d, s in dts],
             crowd=[c and k == 0 for k in range(len(gts))])
        for gts, dts, c in spec
    ]
    assert r2sm.coco_ap(units) == r2sm.coco_ap(units, use_cache=False)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.tuples(st.lists(masks_st, min_size=1, max_size=2), st.lists(st.tuples(masks_st, score_st), max_size=3)),
                min_size=2, max_size=5), st.data())
def test_group_accumulation_equals_separate_evaluation(spec, data):
    units = [unit([Mask.from_array(g) for g in gts], [(Mask.from_array(d), s) for d, s in dts]) for gts, dts in spec]
    subset = data.draw(st.lists(st.sampled_from(range(len(units))), unique=True))
    got = r2sm.coco_ap_groups(units, {"sub": subset, "all": range(len(units))})
    assert got["sub"] == r2sm.coco_ap([units[i] for i in sorted(subset)], use_cache=False)
    assert got["all"] == r2sm.coco_ap(units, use_cache=False)
