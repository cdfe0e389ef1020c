"""CGEBench metric functions and the prefix-union cache: hand-computed values and hypothesis properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from masklens.core.kinds.cgebench import metrics as cge
from masklens.core.kinds.common.prefix_union import (
    joint_cuts,
    map_rows,
    prefix_areas,
    row_for,
    score_cuts,
)
from masklens.core.masks import Mask

S = 6  # side of the random masks

masks_st = st.lists(st.booleans(), min_size=S * S, max_size=S * S).map(lambda b: np.array(b).reshape(S, S))
scores_st = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])  # few values: ties and exact hits on t
instances_st = st.lists(st.tuples(masks_st, scores_st), max_size=4)
thresh_st = st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.6, 0.75, 1.0, 1.5])


def kept_union(instances, t) -> np.ndarray:
    out = np.zeros((S, S), dtype=bool)
    for m, s in instances:
        if s >= t:
            out |= m
    return out


# ------------------------------------------------------------------ hand-computed
def test_iogt_and_outcome_by_hand():
    assert cge.iogt(5, 20) == 0.25 and cge.iogt(0, 20) == 0.0 and cge.iogt(20, 20) == 1.0
    assert cge.iogt(0, 0) is None and cge.outcome(0, 0) is None
    assert [cge.outcome(i, 20) for i in (0, 1, 19, 20)] == ["zero", "partial", "partial", "full"]


def test_level_summary_by_hand():
    # three entries with |G| = 10, 4, 0 (the last is left out): IoGT 1.0, 0.25 ; c 0.5, 0.0
    s = cge.level_summary([10, 1, 3], [5, 0, 0], [10, 4, 0])
    assert s == {"IoGT": 0.625, "cumulative": 0.25, "zero": 0.0, "full": 0.5, "partial": 0.5, "N": 2}
    empty = cge.level_summary([], [], [])
    assert empty == {"IoGT": None, "cumulative": None, "zero": None, "full": None, "partial": None, "N": 0}


def test_cuts_and_rows_inclusive():
    cuts = score_cuts([0.3, 0.9, 0.3, 0.5])
    assert cuts.tolist() == [0.9, 0.5, 0.3]
    assert [row_for(cuts, t) for t in (1.0, 0.9, 0.6, 0.5, 0.31, 0.3, 0.0)] == [0, 1, 1, 2, 2, 3, 3]
    joint = joint_cuts(np.array([0.9, 0.3]), np.array([0.5]))
    assert joint.tolist() == [0.9, 0.5, 0.3]
    assert map_rows(joint, np.array([0.5])).tolist() == [0, 0, 1, 1]


def test_prefix_areas_by_hand():
    a = np.zeros((4, 4), bool)
    a[0, :] = True  # 4 px
    b = np.zeros((4, 4), bool)
    b[:, 0] = True  # 4 px, overlaps a in one pixel
    target = np.zeros((4, 4), bool)
    target[:2, :2] = True  # 4 px
    pa = prefix_areas([Mask.from_array(a), Mask.from_array(b)], [0.8, 0.4], [Mask.from_array(target)], 4, 4)
    assert pa.cuts.tolist() == [0.8, 0.4]
    assert pa.area.tolist() == [0, 4, 7] and pa.inter[:, 0].tolist() == [0, 2, 3] and pa.kept.tolist() == [0, 1, 2]


# ------------------------------------------------------------------ properties
@settings(max_examples=60, deadline=None)
@given(instances_st, masks_st, thresh_st)
def test_prefix_areas_equal_brute_force(instances, target, t):
    pa = prefix_areas([Mask.from_array(m) for m, _ in instances], [s for _, s in instances],
                      [Mask.from_array(target)], S, S)
    j = pa.row(t)
    u = kept_union(instances, t)
    assert pa.area[j] == u.sum()
    assert pa.inter[j, 0] == (u & target).sum()
    assert pa.kept[j] == sum(1 for _, s in instances if s >= t)


@settings(max_examples=60, deadline=None)
@given(st.lists(instances_st, min_size=4, max_size=4), masks_st, thresh_st)
def test_cge_areas_equal_brute_force_and_invariants(levels, g, t):
    cache = cge.cge_areas(Mask.from_array(g), [([Mask.from_array(m) for m, _ in lv], [s for _, s in lv]) for lv in levels])
    j = cache.row(t)
    running = g.copy()
    prev_cum = None
    for k, lv in enumerate(levels):
        u = kept_union(lv, t)
        running &= u
        assert cache.inter[j, k] == (u & g).sum()
        assert cache.cumulative[j, k] == running.sum()
        assert cache.pred_area[j, k] == u.sum()
        # cumulative ≤ IoGT, cumulative non-increasing in i
        assert cache.cumulative[j, k] <= cache.inter[j, k]
        if prev_cum is not None:
            assert cache.cumulative[j, k] <= prev_cum
        prev_cum = cache.cumulative[j, k]
        if g.sum():
            v = cge.iogt(int(cache.inter[j, k]), int(g.sum()))
            assert 0.0 <= v <= 1.0


@settings(max_examples=60, deadline=None)
@given(instances_st, masks_st, masks_st, thresh_st)
def test_iogt_monotone_under_mask_growth(instances, extra, g, t):
    """Adding an accepted instance (M(p_k) grows) never lowers IoGT."""
    if not g.any():
        return
    gm = Mask.from_array(g)
    base = cge.cge_areas(gm, [([Mask.from_array(m) for m, _ in instances], [s for _, s in instances])])
    grown_inst = [*instances, (extra, max(t, 0.0))]
    grown = cge.cge_areas(gm, [([Mask.from_array(m) for m, _ in grown_inst], [s for _, s in grown_inst])])
    assert grown.inter[grown.row(t), 0] >= base.inter[base.row(t), 0]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 50)), max_size=8))
def test_level_summary_fractions_partition(pairs):
    inter = [min(i, g) for i, g in pairs]
    gt = [g for _, g in pairs]
    s = cge.level_summary(inter, [0] * len(inter), gt)
    assert s["N"] == len(pairs)
    if pairs:
        assert s["zero"] + s["full"] + s["partial"] == pytest.approx(1.0)
        assert 0.0 <= s["IoGT"] <= 1.0
