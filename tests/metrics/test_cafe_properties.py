"""Hypothesis properties of the CAFE classification and rates."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from masklens.core.kinds.cafe.metrics import PairScores, aggregate, classify_pair
from masklens.core.masks import Mask, iou_matrix

unit = st.floats(0.0, 1.0, allow_nan=False)
grid = st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 1.0])  # values that hit thresholds exactly


@st.composite
def pair(draw) -> PairScores:
    n, m = draw(st.integers(0, 5)), draw(st.integers(0, 5))
    val = st.one_of(unit, grid)
    ps = tuple(draw(st.lists(val, min_size=n, max_size=n)))
    pi = tuple(draw(st.lists(val, min_size=n, max_size=n)))
    ns = tuple(draw(st.lists(val, min_size=m, max_size=m)))
    ni = tuple(draw(st.lists(val, min_size=m, max_size=m)))
    return PairScores(ps, pi, ns, ni)


pairs = st.lists(pair(), min_size=1, max_size=25)


def brute(p: PairScores, t: float, tau: float) -> tuple[int, int, int, int]:
    """The official rule, written with numpy arrays: TA-TP, TA-FP, UA-FP, SoftSwap."""
    ps, pi = np.array(p.pos_scores), np.array(p.pos_ious)
    ns, ni = np.array(p.neg_scores), np.array(p.neg_ious)
    ta_tp = int(((ps >= t) & (pi >= tau)).any())
    a = bool(((ns >= t) & (ni >= tau)).any())
    u = bool(((ns >= t) & (ni < tau)).any())
    soft = int((ns.max() if ns.size else 0.0) > (ps.max() if ps.size else 0.0))
    return ta_tp, int(a), int(not a and u), soft


@settings(max_examples=150, deadline=None)
@given(pairs, unit, unit)
def test_partitions_and_sums(ps, t, tau) -> None:
    s = aggregate(classify_pair(p, t, tau) for p in ps)
    n = s["N"]
    assert n == len(ps)
    assert s["TA_TP"] + s["TA_FN"] == n
    assert s["TA_TP"] + s["UA_P"] + s["TA_FN_paper"] + s["UA_FN"] == n
    assert s["TA_FP"] + s["UA_FP"] + s["TN"] == n
    assert s["IL_FPR"] == s["AFPR"] + s["UFPR"]
    assert abs(s["IL_FPR"] - (s["TA_FP"] + s["UA_FP"]) / n) < 1e-12
    assert s["CSR"] == s["ACSR"] + s["UCSR"]
    assert s["ACSR"] <= s["AFPR"] and s["UCSR"] <= s["UFPR"]
    assert 0 <= s["SoftSwap"] <= 1


@settings(max_examples=150, deadline=None)
@given(pairs, grid, grid)
def test_matches_the_official_rule(ps, t, tau) -> None:
    for p in ps:
        f = classify_pair(p, t, tau)
        assert (f["TA_TP"], f["TA_FP"], f["UA_FP"], f["SoftSwap"]) == brute(p, t, tau)
        assert f["ACS"] == (1 - f["TA_TP"]) * f["TA_FP"]
        assert f["UCS"] == (1 - f["TA_TP"]) * f["UA_FP"]


@settings(max_examples=100, deadline=None)
@given(pairs, unit, unit, unit)
def test_monotone_in_thresholds(ps, t1, t2, tau) -> None:
    lo, hi = sorted((t1, t2))
    a = aggregate(classify_pair(p, lo, tau) for p in ps)
    b = aggregate(classify_pair(p, hi, tau) for p in ps)
    fp = lambda x: x["TA_FP"] + x["UA_FP"]  # noqa: E731  (counts: the rates are sums of floats)
    assert b["TA_TP"] <= a["TA_TP"] and fp(b) <= fp(a)
    c = aggregate(classify_pair(p, t1, lo) for p in ps)
    d = aggregate(classify_pair(p, t1, hi) for p in ps)
    assert d["TA_TP"] <= c["TA_TP"] and d["TA_FP"] <= c["TA_FP"]
    assert fp(d) == fp(c)  # τ only moves false positives between TA-FP and UA-FP
    assert abs(d["IL_FPR"] - c["IL_FPR"]) < 1e-12
    assert a["SoftSwap"] == b["SoftSwap"] == c["SoftSwap"]  # threshold-free


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=36, max_size=36), min_size=1, max_size=4),
       st.lists(st.lists(st.booleans(), min_size=36, max_size=36), min_size=1, max_size=4))  # fmt: skip
def test_iou_symmetric_and_exact(a, b) -> None:
    ma = [Mask.from_array(np.array(x).reshape(6, 6)) for x in a]
    mb = [Mask.from_array(np.array(x).reshape(6, 6)) for x in b]
    m = iou_matrix(ma, mb)
    assert np.array_equal(m, iou_matrix(mb, ma).T)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            inter = int(np.sum(np.array(x) & np.array(y)))
            union = int(np.sum(np.array(x) | np.array(y)))
            assert m[i, j] == (inter / union if union else 0.0)
