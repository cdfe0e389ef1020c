"""The vectorised threshold-free stage of cgF1 (``stack_entries``) equals stacking the
per-entry tables (``entry_table``, scipy's Hungarian per prefix) array for array, and a
fresh matching from scratch at any threshold — 1–3 annotators, ties in scores and IoUs,
sparse (star-shaped) and dense overlaps; the star shortcut never replaces the Hungarian
where the maximum assignments disagree on the matched values."""

from __future__ import annotations

from contextlib import contextmanager
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from masklens.core.kinds.common.cgf1.tables import IOU_THRESHOLDS, EntryStack, entry_table
from masklens.core.kinds.pcs import bulk as pcs_bulk
from masklens.core.kinds.pcs.bulk import stack_entries

FIELDS = ("n", "level_values", "level_owner", "offsets", "ndt", "tp", "ngt")
#: few values, zeros frequent (sparse overlaps make stars), threshold values and near-ties
iou_val = st.sampled_from([0.0, 0.0, 0.0, 0.2, 0.4, 0.5, 0.55, 0.7, 0.75, 0.9, 1.0]) | st.floats(0, 1)
score_val = st.sampled_from([0.0, 0.3, 0.5, 0.9]) | st.floats(0, 1)


@st.composite
def entry_sets(draw, max_pred: int = 6, max_gt: int = 4):
    n_ann = draw(st.integers(1, 3))
    scores, mats, ngt = [], [], []
    for _ in range(draw(st.integers(0, 8))):
        n = draw(st.integers(0, max_pred))
        g = [draw(st.integers(0, max_gt)) for _ in range(n_ann)]
        vals = draw(st.lists(iou_val, min_size=n * sum(g), max_size=n * sum(g)))
        scores.append(draw(st.lists(score_val, min_size=n, max_size=n)))
        mats.append(np.array(vals, dtype=float).reshape(n, sum(g)))
        ngt.append(g)
    return scores, mats, np.array(ngt, dtype=np.int64).reshape(len(scores), n_ann)


def per_entry(scores, mats, ngt) -> EntryStack:
    return EntryStack.build([entry_table(s, pcs_bulk._split(m, g))
                             for s, m, g in zip(scores, mats, ngt.tolist(), strict=True)])  # fmt: skip


def assert_same(a: EntryStack, b: EntryStack) -> None:
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert np.array_equal(x, y), (f, x, y)
        if isinstance(x, np.ndarray):
            assert x.shape == y.shape, f


@settings(max_examples=300, deadline=None)
@given(entry_sets())
def test_stack_entries_equals_per_entry_tables(data) -> None:
    assert_same(stack_entries(*data), per_entry(*data))


@settings(max_examples=150, deadline=None)
@given(entry_sets(), st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]) | st.floats(0, 1))
def test_stack_entries_equals_a_fresh_matching(data, t) -> None:
    """Against the official procedure at ``t``: keep s ≥ t, one Hungarian, TP per threshold."""
    scores, mats, ngt = data
    stack = stack_entries(scores, mats, ngt)
    ndt, tp = stack.at(t)
    for e, (s, m) in enumerate(zip(scores, mats, strict=True)):
        keep = np.asarray(s, dtype=float) >= t
        assert ndt[e] == keep.sum()
        for a, sub in enumerate(pcs_bulk._split(m[keep], ngt[e].tolist())):
            want = np.zeros(len(IOU_THRESHOLDS), dtype=int)
            if sub.shape[0] and sub.shape[1]:
                r, c = linear_sum_assignment(-sub)
                want = np.array([(sub[r, c] >= x).sum() for x in IOU_THRESHOLDS])
            assert np.array_equal(tp[e, a], want), (e, a, sub)


@st.composite
def stars(draw):
    """Entries whose overlaps are disjoint stars (one prediction over several instances no
    other prediction touches, one instance under several predictions that touch nothing
    else): the shortcut must settle every prefix without the Hungarian."""
    scores, mats = [], []
    for _ in range(draw(st.integers(1, 6))):
        blocks = []
        for _ in range(draw(st.integers(0, 3))):
            leaves = draw(st.integers(1, 3))
            vals = draw(st.lists(iou_val.filter(lambda v: v > 0), min_size=leaves, max_size=leaves))
            col = np.array(vals)[:, None] if draw(st.booleans()) else np.array(vals)[None, :]
            blocks.append(col)
        rows = sum(b.shape[0] for b in blocks) + draw(st.integers(0, 2))
        cols = sum(b.shape[1] for b in blocks) + draw(st.integers(0, 2))
        m = np.zeros((rows, cols))
        r = c = 0
        for b in blocks:
            m[r : r + b.shape[0], c : c + b.shape[1]] = b
            r, c = r + b.shape[0], c + b.shape[1]
        perm_r, perm_c = draw(st.permutations(range(rows))), draw(st.permutations(range(cols)))
        mats.append(m[list(perm_r)][:, list(perm_c)])
        scores.append(draw(st.lists(score_val, min_size=rows, max_size=rows)))
    ngt = np.array([[m.shape[1]] for m in mats], dtype=np.int64)
    return scores, mats, ngt


@settings(max_examples=150, deadline=None)
@given(stars())
def test_star_overlaps_need_no_hungarian(data) -> None:
    with counted_hungarian() as calls:
        got = stack_entries(*data)
    assert calls == []
    assert_same(got, per_entry(*data))


#: two equally good assignments with different matched values (0.7 + 0.2 = 0.4 + 0.5):
#: TP@0.55 is 1 or 0 depending on which one the solver returns
TIE = np.array([[0.7, 0.4], [0.5, 0.2]])


@pytest.mark.parametrize(
    "mat",
    [
        TIE,
        TIE[::-1],
        TIE.T,
        np.array([[0.6, 0.5], [0.5, 0.0]]),  # the mutual best (0.6) is not in the maximum
        np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 0.9]]),  # a 2x2 tie block + a star
    ],
)
@pytest.mark.parametrize("scores", [[0.9, 0.9, 0.9], [0.9, 0.5, 0.3], [0.3, 0.5, 0.9]])
def test_ties_go_to_the_hungarian(mat, scores) -> None:
    """Adversarial ties: the rows where the shortcut cannot prove the answer are matched
    by scipy, and the result is the per-entry table's (scipy's tie-breaking included)."""
    s = scores[: mat.shape[0]]
    data = ([s, s], [mat, np.zeros((len(s), 1))], np.array([[mat.shape[1]], [1]]))
    with counted_hungarian() as calls:
        got = stack_entries(*data)
    assert calls, "a non-star prefix must be matched by the solver"
    assert_same(got, per_entry(*data))


@pytest.mark.parametrize("bad", [np.nan, -0.25, np.inf])
def test_odd_values_take_the_per_entry_path(bad) -> None:
    """A non-finite or negative IoU (not from pycocotools) is handled as entry_table does."""
    m = np.array([[0.7, bad], [0.5, 0.2]])
    data = ([[0.9, 0.5]], [m], np.array([[2]]))
    try:
        want = per_entry(*data)
    except ValueError as exc:  # scipy refuses such a cost matrix: so must the bulk path
        with pytest.raises(type(exc)):
            stack_entries(*data)
        return
    assert_same(stack_entries(*data), want)


@contextmanager
def counted_hungarian():
    """The shapes of the matrices ``stack_entries`` hands to the Hungarian matching."""
    calls: list[tuple[int, int]] = []
    real = pcs_bulk.matched_values

    def counted(m):
        calls.append(m.shape)
        return real(m)

    with patch.object(pcs_bulk, "matched_values", counted):
        yield calls


# ------------------------------------------------------------------ through the kind
def _scorer(tmp_path, files, preds):
    import json

    from masklens.core.kinds.pcs.kind import KIND
    from masklens.core.scoring.contract import Scorer

    gts = []
    for a, f in enumerate(files):
        gts.append(str(tmp_path / f"gt{a}.json"))
        (tmp_path / f"gt{a}.json").write_text(json.dumps(f))
    (tmp_path / "pred.json").write_text(json.dumps(preds))
    bench = KIND.load_benchmark(gt=gts)
    return Scorer(KIND, bench, KIND.load_predictions(bench, pred=str(tmp_path / "pred.json")))


@pytest.mark.parametrize("which", ["annotators", "categories"])
def test_kind_stack_equals_per_entry_tables(tmp_path, which) -> None:
    """Through the kind (3 annotator files with crowd instances; or instances of several
    category ids, which reorder rows and columns): the stack the scorer builds equals the
    per-entry tables, each the matching of the entry's IoUs from scratch in category order."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cafe"))
    from cafe_synth import synth_pcs, synth_pcs_categories

    from masklens.core.kinds.common.cgf1.io import (
        categories_of,
        instances_of,
        non_crowd,
        non_crowd_categories,
    )
    from masklens.core.kinds.common.cgf1.tables import ordered_entry_table
    from masklens.core.masks import iou_matrix

    if which == "annotators":
        files, preds = synth_pcs(11, 80, 3, p_crowd=0.2)
    else:
        file, preds = synth_pcs_categories(5, 80)
        files = [file]
    scorer = _scorer(tmp_path, files, preds)
    kind, bench = scorer.kind, scorer.benchmark
    tables = []
    for sample in bench.samples:
        gts = list(sample.gts.values())
        pred = scorer.predictions.get(sample.prompts[0].id)
        masks, scores = instances_of(pred, gts[0].height, gts[0].width)
        mats = [iou_matrix(masks, non_crowd(g)) for g in gts]
        tables.append(ordered_entry_table(scores, mats, categories_of(pred),
                                          [non_crowd_categories(g) for g in gts]))  # fmt: skip
    assert_same(kind._tables(bench.samples, scorer.overlaps)["stack"], EntryStack.build(tables))
    for o, tab in zip(scorer.overlaps, tables, strict=True):
        assert o.table.levels == tab.levels
        assert np.array_equal(o.table.tp, tab.tp) and np.array_equal(o.table.ndt, tab.ndt)


def test_empty_benchmark_scores(tmp_path) -> None:
    res = _scorer(tmp_path, [{"images": [], "annotations": [], "categories": []}], []).rescore()
    assert res.samples == [] and res.summary["all"]["N"] == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40)), min_size=1, max_size=30),
    st.sampled_from([np.int64, np.int32, np.int16]),
)
def test_local_f1_bulk_is_bitwise_local_f1(triples, dtype) -> None:
    """The table read-out gives the formula's very floats (broadcast shapes as the callers')."""
    from masklens.core.kinds.common.cgf1.tables import local_f1, local_f1_bulk

    tp = np.array([[t] * 10 for t, _, _ in triples], dtype=dtype)[:, None, :]  # (E, 1, 10)
    ndt = np.array([n for _, n, _ in triples], dtype=np.int64)[:, None, None]
    ngt = np.array([g for _, _, g in triples], dtype=np.int64)[:, None, None]
    got, want = local_f1_bulk(tp, ndt, ngt), local_f1(tp, ndt, ngt)
    assert got.shape == want.shape
    assert (got.view(np.int64) == want.view(np.int64)).all()
    assert (local_f1_bulk(tp[:, 0], ndt[:, 0], ngt[:, 0]).view(np.int64)
            == local_f1(tp[:, 0], ndt[:, 0], ngt[:, 0]).view(np.int64)).all()  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(entry_sets(), st.lists(st.floats(0, 1) | st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]), min_size=2, max_size=6),
       st.lists(st.booleans(), min_size=8, max_size=8))  # fmt: skip
def test_summary_moving_t_with_kept_subsets_equals_accumulate(data, ts, bits) -> None:
    """The cumulative subset sums kept on a stack (same ``members`` at every t, then the same
    array changed in place) give accumulate_groups' numbers at every threshold."""
    from masklens.core.kinds.common.cgf1.metrics import accumulate_groups, summarize_groups
    from masklens.core.kinds.common.cgf1.tables import select_oracle

    stack = stack_entries(*data)
    members = np.array([[True] * stack.n, bits[: stack.n]], dtype=bool)
    for i, t in enumerate(ts):
        if i == len(ts) - 1:
            members[1] = ~members[1]  # in place: must not read the old selection's sums
        ndt, tp = stack.at(t)
        best = select_oracle(tp, ndt, stack.ngt)
        idx = np.arange(stack.n)
        want = accumulate_groups(tp[idx, best], ndt, stack.ngt[idx, best], members)
        got = summarize_groups(stack, t, members)
        for a, b in zip(got, want, strict=True):
            assert list(a) == list(b)
            for k in a:
                assert type(a[k]) is type(b[k]), k
                assert a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]), (k, a[k], b[k])
