"""Re-scoring SA-Co/Gold at a new score threshold without matching again equals a
fresh matching: the summary (oracle over 1–3 annotators, ties in scores and IoUs) against a
straightforward per-entry Hungarian written here, and the per-entry records against
``entry_readout`` / ``PcsKind.sample_readout`` at every threshold, also after moving t."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from masklens.core.kinds.common.cgf1.metrics import (
    accumulate_groups,
    entry_readout,
    summarize_groups,
)
from masklens.core.kinds.common.cgf1.tables import IOU_THRESHOLDS, EntryStack, entry_table
from masklens.core.kinds.pcs.records import EntryRecords

iou_val = st.sampled_from([0.0, 0.25, 0.5, 0.75, 0.95, 1.0]) | st.floats(0, 1)
score_val = st.sampled_from([0.0, 0.3, 0.5, 0.9])  # few values: ties within an entry
thr = st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]) | st.floats(0, 1)


@st.composite
def entries(draw):
    n_ann = draw(st.integers(1, 3))
    out = []
    for _ in range(draw(st.integers(0, 10))):
        n = draw(st.integers(0, 5))
        scores = draw(st.lists(score_val | st.floats(0, 1), min_size=n, max_size=n))
        mats = []
        for _ in range(n_ann):
            g = draw(st.integers(0, 3))
            vals = draw(st.lists(iou_val, min_size=n * g, max_size=n * g))
            mats.append(np.array(vals, dtype=float).reshape(n, g))
        out.append((scores, mats))
    return n_ann, out


def fresh(scores, mats, t):
    """From scratch, as the official evaluator: keep s ≥ t, one Hungarian per annotator,
    TP per IoU threshold, then the oracle (a true negative wins; else strictly better mean
    local F1 replaces, file order)."""
    keep = np.asarray(scores, dtype=float) >= t
    ndt = int(keep.sum())
    best = None
    for m in mats:
        sub = m[keep]
        if sub.shape[0] and sub.shape[1]:
            r, c = linear_sum_assignment(-sub)
            tp = np.array([(sub[r, c] >= x).sum() for x in IOU_THRESHOLDS])
        else:
            tp = np.zeros(len(IOU_THRESHOLDS), dtype=int)
        ngt = m.shape[1]
        if ngt == 0 and ndt == 0:
            f1 = None
        else:
            p = tp / (ndt + 1e-4)
            rc = tp / (ngt + 1e-4)
            f1 = float((2 * p * rc / (p + rc + 1e-4)).mean())
        if best is None or (best[2] is not None and (f1 is None or f1 > best[2])):
            best = (tp, ngt, f1)
    return ndt, best


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(entries(), thr, st.lists(st.booleans(), min_size=10, max_size=10))
def test_summary_at_t_equals_fresh_matching(data, t, member_bits) -> None:
    n_ann, ents = data
    stack = EntryStack.build([entry_table(s, m) for s, m in ents])
    picked = [fresh(s, m, t) for s, m in ents]
    ndt = np.array([p[0] for p in picked], dtype=np.int64)
    tp = np.array([p[1][0] for p in picked], dtype=np.int64).reshape(len(ents), 10)
    ngt = np.array([p[1][1] for p in picked], dtype=np.int64)
    members = np.array([[True] * len(ents), member_bits[: len(ents)]], dtype=bool)
    got = summarize_groups(stack, t, members)
    want = accumulate_groups(tp, ndt, ngt, members)
    for a, b in zip(got, want, strict=True):
        assert list(a) == list(b)
        for k in a:
            assert type(a[k]) is type(b[k]), k
            assert a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]), (k, a[k], b[k])


@settings(max_examples=150, deadline=None)
@given(entries(), st.lists(thr, min_size=1, max_size=4))
def test_records_at_t_equal_entry_readout(data, ts) -> None:
    n_ann, ents = data
    tables = [entry_table(s, m) for s, m in ents]
    ious = [[tuple(m.max(axis=1).tolist()) if m.shape[1] else (0.0,) * len(s) for m in mats]
            for s, mats in ents]  # fmt: skip
    static = [{"id": str(i)} for i in range(len(ents))]
    records = EntryRecords(EntryStack.build(tables), static, [tuple(s) for s, _ in ents], ious)
    for t in ts:  # the same object moved along thresholds (memoised rows)
        got = records.at(t)
        for i, (tab, (s, _)) in enumerate(zip(tables, ents, strict=True)):
            want = {"id": str(i), **entry_readout(tab, t)}
            want["instances"] = [
                {"score": v, "iou": io, "accepted": v >= t}
                for v, io in zip(s, ious[i][want["annotator"]], strict=True)
            ]
            assert got[i] == want
            assert [type(v) for v in got[i].values()] == [type(v) for v in want.values()]
        if got:
            got[0]["n_accepted"] = -1  # callers own the top level of their records
            assert records.at(t)[0]["n_accepted"] != -1


@settings(max_examples=150, deadline=None)
@given(entries(), st.lists(thr, min_size=1, max_size=4), st.integers(0, 9))
def test_columns_at_t_equal_the_records_fields_without_building_them(data, ts, changed) -> None:
    """What a filter or sort reads (``Records.column``) is each record's field, built or not,
    and a record a caller changed gives its own value."""
    n_ann, ents = data
    tables = [entry_table(s, m) for s, m in ents]
    ious = [[tuple(m.max(axis=1).tolist()) if m.shape[1] else (0.0,) * len(s) for m in mats]
            for s, mats in ents]  # fmt: skip
    static = [{"id": str(i), "n_pred": len(s)} for i, (s, _) in enumerate(ents)]
    records = EntryRecords(EntryStack.build(tables), static, [tuple(s) for s, _ in ents], ious)
    keys = ["id", "n_pred", "n_accepted", "n_gt", "annotator", "IL", "TP@0.5", "TP@0.75",
            "FP@0.5", "FN@0.5", "local_F1"]
    for t in ts:
        got = records.at(t)
        columns = {k: got.column(k) for k in keys}
        assert not records._built.any() or len(ts) > 1  # nothing built to answer the first t
        if got:
            assert got.column("instances") is None  # not a column: only records hold it
        want = [{"id": str(i), "n_pred": len(s), **entry_readout(tab, t)}
                for i, (tab, (s, _)) in enumerate(zip(tables, ents, strict=True))]
        for k in keys:
            assert columns[k] == [w[k] for w in want], k
            assert [type(v) for v in columns[k]] == [type(w[k]) for w in want], k
        for k in [k for k in keys[2:] if k != "IL"]:  # the numbers: how each sorts (None first), as arrays
            arrays = got.sort_column(k)
            assert arrays is not None, k
            rank, value = arrays
            assert list(zip(rank.tolist(), value.tolist(), strict=True)) == [
                (0, 0.0) if w[k] is None else (1, float(w[k])) for w in want], k
        assert got.sort_column("IL") is None and got.sort_column("instances") is None
        if got:
            row = changed % len(got)
            got[row]["n_accepted"] = -1
            assert got.column("n_accepted")[row] == -1
            assert got.sort_column("n_accepted") is None  # a record read may differ from the columns


def test_kind_records_and_summary_equal_per_sample_path(tmp_path) -> None:
    """Through the kind, 3 annotator files with non-exhaustive entries: the vectorised
    records equal ``sample_readout`` and the summary equals a stack of the exhaustive
    entries alone, at several thresholds in a row."""
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cafe"))
    from cafe_synth import synth_pcs

    from masklens.core.scoring.contract import Scorer, get_kind

    files, preds = synth_pcs(7, 60, 3, p_not_exhaustive=0.2)
    gts = []
    for a, f in enumerate(files):
        gts.append(str(tmp_path / f"gt{a}.json"))
        Path(gts[-1]).write_text(json.dumps(f))
    (tmp_path / "pred.json").write_text(json.dumps(preds))
    kind = get_kind("pcs")
    bench = kind.load_benchmark(gt=gts)
    scorer = Scorer(kind, bench, kind.load_predictions(bench, pred=str(tmp_path / "pred.json")))
    exhaustive = EntryStack.build([o.table for o in scorer.overlaps if o.exhaustive])
    assert 0 < exhaustive.n < len(scorer.overlaps)
    for t in (0.5, 0.0, 0.37, 0.9, 1.0, 0.5):
        res = scorer.rescore({"score_threshold": t})
        assert res.samples == [kind.sample_readout(s, o, {"score_threshold": t})
                               for s, o in zip(bench.samples, scorer.overlaps, strict=True)]  # fmt: skip
        assert res.summary["all"] == summarize_groups(exhaustive, t, np.ones((1, exhaustive.n), bool))[0]
        records = scorer.readouts({"score_threshold": t})
        for key in res.samples[0]:  # every field read as a column equals the records'
            column = records.column(key)
            assert column is None if key == "instances" else column == [r[key] for r in res.samples], key
