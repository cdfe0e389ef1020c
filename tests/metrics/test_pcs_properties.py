"""Hypothesis properties of the cgF1 tables: the threshold-free table equals matching from
scratch, the stacked read-out equals the per-entry one, the oracle and the invariants hold."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from masklens.core.kinds.common.cgf1.metrics import entry_readout, summarize_entries
from masklens.core.kinds.common.cgf1.tables import IOU_THRESHOLDS, EntryStack, entry_table

iou_val = st.sampled_from([0.0, 0.2, 0.5, 0.55, 0.7, 0.75, 0.9, 1.0]) | st.floats(0, 1)
score_val = st.sampled_from([0.0, 0.3, 0.5, 0.9]) | st.floats(0, 1)
thr = st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]) | st.floats(0, 1)


@st.composite
def entry(draw, n_ann: int = 1):
    n = draw(st.integers(0, 6))
    scores = draw(st.lists(score_val, min_size=n, max_size=n))
    mats = []
    for _ in range(n_ann):
        g = draw(st.integers(0, 4))
        vals = draw(st.lists(iou_val, min_size=n * g, max_size=n * g))
        mats.append(np.array(vals, dtype=float).reshape(n, g))
    return scores, mats


def scratch_tp(scores, mat, t):
    """Matching from scratch, the official way: filter, one Hungarian, threshold."""
    keep = np.asarray(scores, dtype=float) >= t
    sub = mat[keep]
    if sub.shape[0] == 0 or sub.shape[1] == 0:
        return int(keep.sum()), np.zeros(len(IOU_THRESHOLDS), dtype=int)
    r, c = linear_sum_assignment(-sub)
    m = sub[r, c]
    return int(keep.sum()), np.array([(m >= x).sum() for x in IOU_THRESHOLDS])


@settings(max_examples=200, deadline=None)
@given(entry(n_ann=2), thr)
def test_table_equals_matching_from_scratch(e, t) -> None:
    scores, mats = e
    table = entry_table(scores, mats)
    k = table.row(t)
    for a, m in enumerate(mats):
        ndt, tp = scratch_tp(scores, m, t)
        assert table.ndt[k] == ndt
        assert np.array_equal(table.tp[k, a], tp)
        assert table.ngt[a] == m.shape[1]


@settings(max_examples=80, deadline=None)
@given(st.lists(entry(n_ann=3), min_size=0, max_size=12), thr)
def test_stack_equals_per_entry_and_invariants(entries, t) -> None:
    tables = [entry_table(s, m) for s, m in entries]
    stack = EntryStack.build(tables)
    ndt, tp = stack.at(t)
    for i, tab in enumerate(tables):
        k = tab.row(t)
        assert ndt[i] == tab.ndt[k] and np.array_equal(tp[i], tab.tp[k])
    s = summarize_entries(stack, t)
    assert s["N"] == len(tables)
    if not tables:
        assert s["cgF1"] is None
        return
    assert s["IL_TP"] + s["IL_FP"] + s["IL_TN"] + s["IL_FN"] == len(tables)
    assert -1 <= s["IL_MCC"] <= 1 and 0 <= s["pmF1"] <= 1 and 0 <= s["IL_FPR"] <= 1
    assert abs(s["cgF1@0.5"] - s["pmF1@0.5"] * s["IL_MCC"]) < 1e-12
    # per-entry readouts agree with the oracle the summary used
    il = [entry_readout(tab, t)["IL"] for tab in tables]
    assert (il.count("TP"), il.count("FP"), il.count("TN"), il.count("FN")) == (
        s["IL_TP"], s["IL_FP"], s["IL_TN"], s["IL_FN"],
    )  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(st.lists(entry(n_ann=1), min_size=1, max_size=10), thr)
def test_identical_annotators_equal_one(entries, t) -> None:
    one = summarize_entries(EntryStack.build([entry_table(s, m) for s, m in entries]), t)
    three = summarize_entries(EntryStack.build([entry_table(s, m * 3) for s, m in entries]), t)
    assert one == three


@settings(max_examples=60, deadline=None)
@given(st.lists(entry(n_ann=2), min_size=1, max_size=10), thr, st.randoms())
def test_entry_order_does_not_matter(entries, t, rnd) -> None:
    tables = [entry_table(s, m) for s, m in entries]
    a = summarize_entries(EntryStack.build(tables), t)
    rnd.shuffle(tables)
    b = summarize_entries(EntryStack.build(tables), t)
    for k, v in a.items():
        assert v == b[k] if not isinstance(v, float) else abs(v - b[k]) < 1e-12


@settings(max_examples=60, deadline=None)
@given(st.lists(entry(n_ann=1), min_size=1, max_size=10), thr, thr)
def test_higher_threshold_never_adds_predictions(entries, t1, t2) -> None:
    lo, hi = sorted((t1, t2))
    stack = EntryStack.build([entry_table(s, m) for s, m in entries])
    a, b = summarize_entries(stack, lo), summarize_entries(stack, hi)
    assert b["IL_TP"] + b["IL_FP"] <= a["IL_TP"] + a["IL_FP"]
    assert b["IL_FPR"] <= a["IL_FPR"]


@settings(max_examples=100, deadline=None)
@given(st.lists(entry(n_ann=1).filter(lambda e: e[1][0].shape[1] <= 1), max_size=10), thr)
def test_vectorised_single_instance_stack(entries, t) -> None:
    """EntryStack.from_single (CAFE's fast path) equals stacking per-entry tables."""
    flat = [(s, m[0][:, 0].tolist() if m[0].shape[1] else None) for s, m in entries]
    a = EntryStack.from_single(flat)
    b = EntryStack.build([entry_table(s, m) for s, m in entries])
    (na, ta), (nb, tb) = a.at(t), b.at(t)
    assert np.array_equal(na, nb) and np.array_equal(ta, tb) and np.array_equal(a.ngt, b.ngt)
    both = EntryStack.concat([a, b])
    nc, tc = both.at(t)
    assert np.array_equal(nc, np.r_[na, nb]) and np.array_equal(tc, np.concatenate([ta, tb]))
