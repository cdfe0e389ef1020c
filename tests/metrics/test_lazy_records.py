"""SA-Co/PCS and CAFE records handed out lazily (``Records`` over the kinds' memos) are, at
any thresholds and in any reading order, the records of the per-sample path
(``sample_readout``): same keys in the same order, same value types, same values; a change
to one result's record reaches neither the memo nor another result."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from masklens.core.scoring.contract import Scorer, get_kind
from masklens.core.scoring.records import Records

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cafe"))
from cafe_synth import synth_cafe, synth_pcs  # noqa: E402


def typed(x):
    """``x`` with every value's type beside it (dict key order kept): exact comparisons."""
    if isinstance(x, dict):
        return ("dict", tuple((k, typed(v)) for k, v in x.items()))
    if isinstance(x, list | tuple):
        return (type(x).__name__, tuple(typed(v) for v in x))
    return (type(x).__name__, x)


@pytest.fixture(scope="module")
def pcs_scorer(tmp_path_factory) -> Scorer:
    tmp = tmp_path_factory.mktemp("pcs")
    files, preds = synth_pcs(11, 80, 3, p_not_exhaustive=0.2)
    gts = []
    for a, f in enumerate(files):
        gts.append(str(tmp / f"gt{a}.json"))
        Path(gts[-1]).write_text(json.dumps(f))
    (tmp / "pred.json").write_text(json.dumps(preds))
    kind = get_kind("pcs")
    bench = kind.load_benchmark(gt=gts)
    return Scorer(kind, bench, kind.load_predictions(bench, pred=str(tmp / "pred.json")))


@pytest.fixture(scope="module")
def cafe_scorer(tmp_path_factory) -> Scorer:
    tmp = tmp_path_factory.mktemp("cafe")
    ann, preds = synth_cafe(5, 40, height=24, width=20, p_multi=0.4, p_unpaired=0.1, n_categories=2)
    (tmp / "ann.json").write_text(json.dumps(ann))
    (tmp / "pred.json").write_text(json.dumps(preds))
    kind = get_kind("cafe")
    bench = kind.load_benchmark(ann=str(tmp / "ann.json"))
    return Scorer(kind, bench, kind.load_predictions(bench, pred=str(tmp / "pred.json")))


def per_sample(scorer: Scorer, params: dict) -> list[dict]:
    p = scorer.kind.resolve_params(params)
    return [scorer.kind.sample_readout(s, o, p)
            for s, o in zip(scorer.benchmark.samples, scorer.overlaps, strict=True)]  # fmt: skip


threshold = st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]) | st.floats(0, 1)
reads = st.lists(st.one_of(st.tuples(st.just("index"), st.integers(0, 10**6)),
                           st.tuples(st.just("slice"), st.integers(0, 10**6), st.integers(0, 40)),
                           st.just(("iter",))), max_size=6)  # fmt: skip


def read_in_order(records: Records, steps) -> None:
    """Read ``records`` as the steps say (builds memo rows in that order)."""
    n = len(records)
    for step in steps:
        if not n:
            return
        if step[0] == "index":
            records[step[1] % n]
        elif step[0] == "slice":
            a = step[1] % n
            records[a : a + step[2]]
        else:
            list(records)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(threshold, reads), min_size=1, max_size=5))
def test_pcs_records_equal_the_per_sample_path(pcs_scorer, moves) -> None:
    for t, steps in moves:
        res = pcs_scorer.rescore({"score_threshold": t})
        assert type(res.samples) is Records
        read_in_order(res.samples, steps)
        want = per_sample(pcs_scorer, {"score_threshold": t})
        assert [typed(r) for r in res.samples] == [typed(r) for r in want]
        assert res.samples == want


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(threshold, threshold, reads), min_size=1, max_size=5))
def test_cafe_records_equal_the_per_sample_path(cafe_scorer, moves) -> None:
    for t, tau, steps in moves:
        params = {"score_threshold": t, "iou_threshold": tau}
        res = cafe_scorer.rescore(params)
        assert type(res.samples) is Records
        read_in_order(res.samples, steps)
        want = per_sample(cafe_scorer, params)
        assert [typed(r) for r in res.samples] == [typed(r) for r in want]
        assert cafe_scorer.readouts(params) == want


@pytest.mark.parametrize("which", ["pcs_scorer", "cafe_scorer"])
def test_a_change_to_a_record_stays_in_its_result(which, request) -> None:
    scorer: Scorer = request.getfixturevalue(which)
    params = {"score_threshold": 0.4}
    want = per_sample(scorer, params)
    first = scorer.rescore(params)
    rec = first.samples[3]
    rec["id"] = "changed"
    rec["mine"] = True
    for r in first.samples:  # every record, read by iterating
        r["seen"] = 1
    assert first.samples[3] is rec and rec["id"] == "changed" and rec["seen"] == 1
    assert list(first.samples)[3] is rec and first.to_json()["samples"][3] is rec
    again = scorer.rescore(params)  # the same rows of the memo
    assert again.samples == want and "seen" not in again.samples[0]
    assert scorer.readouts(params)[3] == want[3]
    later = scorer.rescore({"score_threshold": 0.7})
    back = scorer.rescore(params)
    assert back.samples == want and later.samples == per_sample(scorer, {"score_threshold": 0.7})


@pytest.mark.parametrize("which", ["pcs_scorer", "cafe_scorer"])
def test_results_pickle_and_serialise(which, request, tmp_path) -> None:
    scorer: Scorer = request.getfixturevalue(which)
    res = scorer.rescore({"score_threshold": 0.6})
    want = per_sample(scorer, {"score_threshold": 0.6})
    back = pickle.loads(pickle.dumps(res))
    assert type(back.samples) is Records and back == res and back.samples == want
    assert [typed(r) for r in back.samples] == [typed(r) for r in want]
    assert json.loads(orjson.dumps(res.to_json()))["samples"] == json.loads(json.dumps(want))
    assert json.loads(json.dumps(res.to_json()))["samples"] == json.loads(json.dumps(want))
    pytest.importorskip("pandas")
    frame = res.to_dataframe()
    assert list(frame["id"]) == [r["id"] for r in want] and len(frame.columns) >= len(want[0])
