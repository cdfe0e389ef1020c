"""The per-instance assignment shown by the SA-Co/Gold card is the one cgF1 counts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from masklens.core.kinds.common.cgf1.matching import assignment, match_values, matched_values
from masklens.core.kinds.demo import demo_namespace
from masklens.core.scoring.contract import Scorer, get_kind


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (1, 1), (1, 4), (4, 1), (3, 3), (5, 2), (2, 6)])
def test_assignment_has_the_values_cgf1_counts(shape):
    rng = np.random.default_rng(sum(shape))
    for _ in range(20):
        ious = rng.random(shape).round(2)  # rounding makes ties
        pairs = assignment(ious)
        assert sorted(ious[r, c] for r, c in pairs) == sorted(match_values(ious).tolist())
        assert len({r for r, _ in pairs}) == len(pairs) == len({c for _, c in pairs})  # one-to-one


@pytest.mark.parametrize("t", [0.0, 0.5, 0.9])
def test_instance_matches_count_the_records_tps(t):
    kind = get_kind("pcs")
    ns = demo_namespace("pcs")
    bench = kind.load_benchmark(**vars(ns))
    preds = kind.load_predictions(bench, **vars(ns))
    records = Scorer(kind, bench, preds).readouts({"score_threshold": t})
    seen_unmatched = False
    for sample, rec in zip(bench.samples, records, strict=True):
        matches = kind.instance_matches(sample, preds.get(sample.prompts[0].id), {"score_threshold": t},
                                        rec["annotator"])
        assert [m["score"] for m in matches] == [i["score"] for i in rec["instances"]]
        ious = [m["iou"] for m in matches if m["gt"] is not None]
        assert sum(v >= 0.5 for v in ious) == rec["TP@0.5"]
        assert sum(v >= 0.75 for v in ious) == rec["TP@0.75"]
        assert len(ious) == min(rec["n_accepted"], rec["n_gt"])  # every possible pair is made
        assert all(m["accepted"] == (m["score"] >= t) for m in matches)
        seen_unmatched |= any(m["accepted"] and m["gt"] is None for m in matches)
    if t == 0.0:
        assert seen_unmatched  # the demo has entries with more accepted predictions than instances


@pytest.mark.parametrize(("p1_cat", "p2_cat"), [(2, 1), (1, 2)])
def test_instance_matches_follow_the_category_order_in_a_tie(tmp_path, p1_cat, p2_cat):
    """The tie gadget of test_pcs_category_order: which of two equally good assignments is made
    depends on SAM 3's category order; the card's match table must show the one scored."""
    import json

    from test_pcs_category_order import write_tie_gadget

    write_tie_gadget(tmp_path, p1_cat, p2_cat)
    kind = get_kind("pcs")
    bench = kind.load_benchmark(**vars(_ns(tmp_path)))
    preds = kind.load_predictions(bench, **vars(_ns(tmp_path)))
    rec = Scorer(kind, bench, preds).readouts({"score_threshold": 0.5})[0]
    sample = bench.samples[0]
    matches = kind.instance_matches(sample, preds.get(sample.prompts[0].id),
                                    {"score_threshold": 0.5}, rec["annotator"])
    assert sum(m["iou"] >= 0.5 for m in matches if m["gt"] is not None) == rec["TP@0.5"]
    assert json.loads((tmp_path / "pred.json").read_text())[0]["category_id"] == p1_cat


def _ns(tmp_path):
    import argparse

    return argparse.Namespace(gt=[str(tmp_path / "gt.json")], pred=str(tmp_path / "pred.json"), images=None)


#: IoUs from a few values, so that many matrices have assignments of equal sums
_TIED = st.sampled_from([0.0, 0.0, 0.25, 0.5, 0.5, 0.75, 1.0, 0.1 + 0.2, 0.3])


@settings(max_examples=400, deadline=None)
@given(st.integers(2, 5).flatmap(lambda r: st.integers(2, 5).flatmap(lambda c: st.lists(
    st.lists(st.one_of(_TIED, st.floats(0, 1), st.just(float("nan"))), min_size=c, max_size=c),
    min_size=r, max_size=r))))  # fmt: skip
def test_the_matching_equals_scipys_assignment(rows) -> None:
    """Beyond one row or column: the values are scipy's (as a multiset) and the pairs are
    scipy's, whether or not the assignment was found without scipy; a NaN IoU is scipy's to
    refuse."""
    from scipy.optimize import linear_sum_assignment

    ious = np.array(rows, dtype=np.float64)
    try:
        r, c = linear_sum_assignment(-ious)
    except ValueError as exc:
        with pytest.raises(ValueError, match=str(exc)):
            matched_values(ious)
        return
    assert assignment(ious) == list(zip(r.tolist(), c.tolist(), strict=True))
    got = matched_values(ious)
    assert all(type(v) is float for v in got)
    assert sorted(got) == sorted(ious[r, c].tolist())
    assert match_values(ious).tolist() == got
