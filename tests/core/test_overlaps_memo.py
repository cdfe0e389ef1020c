"""What a kind derives from a whole overlaps list is memoised per Scorer (its Overlaps), built
once for any number of re-scorings, rebuilt after a sample changes, and never shared between
scorers, so threads scoring the same kind at once get the right results."""

from __future__ import annotations

import copy
import pickle
import threading
from pathlib import Path
from typing import Any

import pytest

from masklens.core.api import load_benchmark, load_predictions
from masklens.core.kinds.cafe.kind import CafeKind
from masklens.core.kinds.ovs.kind import OvsKind
from masklens.core.kinds.pcs.kind import PcsKind
from masklens.core.kinds.r2sm.kind import R2SMKind
from masklens.core.scoring.contract import Scorer, get_kind, score
from masklens.core.scoring.overlaps import Overlaps, derived

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"

#: kind -> (its files, the builder of what it derives from a whole overlaps list, two parameter sets)
CASES: dict[str, tuple[dict[str, Any], tuple[type, str], list[dict[str, float]]]] = {
    "cafe": ({"ann": DEMO / "cafe/ann.json", "pred": DEMO / "cafe/pred_demo.json"}, (CafeKind, "_stacks"),
             [{"score_threshold": 0.2, "iou_threshold": 0.5}, {"score_threshold": 0.6, "iou_threshold": 0.3}]),
    "pcs": ({"gt": [DEMO / f"pcs/gold_annotator_{i}.json" for i in (1, 2, 3)], "pred": DEMO / "pcs/pred_demo.json"},
            (PcsKind, "_build_tables"), [{"score_threshold": 0.2}, {"score_threshold": 0.7}]),
    "r2sm": ({"ann": DEMO / "r2sm/ann.json", "pred": DEMO / "r2sm/pred_demo.json"}, (R2SMKind, "_ap_of"),
             [{"score_threshold": 0.1}, {"score_threshold": 0.6}]),
    "ovs": ({"ann": DEMO / "ovs/ann.json", "pred": DEMO / "ovs/pred.json"}, (OvsKind, "_confusion_of"),
            [{"av_threshold": 0.3}, {"av_threshold": 0.8}]),
}


def loaded(name: str) -> tuple[Any, Any, Any]:
    kind = get_kind(name)
    benchmark = load_benchmark(kind, **CASES[name][0])
    return kind, benchmark, load_predictions(kind, benchmark, **CASES[name][0])


def count_builds(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """The kind's builder wrapped to count its calls (one entry per build)."""
    owner, attr = CASES[name][1]
    original = getattr(owner, attr)
    calls: list[int] = []
    if isinstance(owner.__dict__[attr], staticmethod):
        def counted_static(*args: Any, **kw: Any) -> Any:
            calls.append(1)
            return original(*args, **kw)

        monkeypatch.setattr(owner, attr, staticmethod(counted_static))
    else:
        def counted(self: Any, *args: Any, **kw: Any) -> Any:
            calls.append(1)
            return original(self, *args, **kw)

        monkeypatch.setattr(owner, attr, counted)
    return calls


def summaries(result: Any) -> Any:
    return result.summary, list(result.samples), result.notes, result.extras


@pytest.mark.parametrize("name", list(CASES))
def test_a_slider_rescore_reuses_the_derived_tables(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    kind, benchmark, predictions = loaded(name)
    calls = count_builds(monkeypatch, name)
    scorer = Scorer(kind, benchmark, predictions)
    first, second = CASES[name][2]
    results = [scorer.rescore(p) for p in (first, second, first, second)]
    assert len(calls) == 1  # four re-scorings (records, summary, notes, extras): one build
    assert summaries(results[0]) == summaries(results[2])
    assert summaries(results[0]) == summaries(score(kind, benchmark, predictions, first))
    assert summaries(results[1]) == summaries(score(kind, benchmark, predictions, second))
    assert len(calls) == 3  # each one-shot score: a scorer of its own, its own build

    scorer.update_sample(0, predictions)  # a replaced sample: the tables are built again, once
    scorer.rescore(first)
    scorer.rescore(second)
    assert len(calls) == 4


def test_a_plain_list_is_derived_afresh_and_a_scorers_list_is_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    kind, benchmark, predictions = loaded("cafe")
    calls = count_builds(monkeypatch, "cafe")
    scorer = Scorer(kind, benchmark, predictions)
    params = kind.resolve_params(CASES["cafe"][2][0])
    plain = list(scorer.overlaps)
    expected = kind.summarize(benchmark.samples, scorer.overlaps, [], params)
    assert kind.summarize(benchmark.samples, plain, [], params) == expected
    assert kind.summarize(benchmark.samples, plain, [], params) == expected
    assert len(calls) == 3  # the scorer's list once, the plain list each time

    other = Scorer(kind, benchmark, predictions)
    other.rescore(params)
    scorer.rescore(params)
    assert len(calls) == 4  # the other scorer built its own; this one's memo holds

    scorer.overlaps = plain  # a list assigned becomes a new Overlaps: its memo starts empty
    assert isinstance(scorer.overlaps, Overlaps)
    assert scorer.rescore(params).summary == expected
    assert len(calls) == 5


def test_overlaps_memo_is_emptied_by_each_change() -> None:
    built: list[str] = []

    def build(tag: str) -> Any:
        return lambda: built.append(tag) or tag

    a, b, c = object(), object(), object()
    overlaps = Overlaps([a, b])
    assert derived(overlaps, "x", build("x1")) == "x1"
    assert derived(overlaps, "x", build("x2")) == "x1"
    assert derived(overlaps, "y", build("y1")) == "y1"
    overlaps[1] = c
    assert list(overlaps) == [a, c]
    assert derived(overlaps, "x", build("x3")) == "x3"
    overlaps[0:1] = [b]
    assert derived(overlaps, "x", build("x4")) == "x4"
    overlaps.extend([a])
    assert derived(overlaps, "x", build("x5")) == "x5"
    assert overlaps[1:] == [c, a] and len(overlaps) == 3
    twin = copy.copy(overlaps)  # a copy (or a pickle) has its own entries and an empty memo
    twin[0] = a
    assert list(overlaps) == [b, c, a] and list(twin) == [a, c, a]
    assert derived(overlaps, "x", build("x6")) == "x5"
    assert list(pickle.loads(pickle.dumps(Overlaps([1, 2])))) == [1, 2]
    assert derived([a, b], "x", build("p1")) == "p1"
    assert derived([a, b], "x", build("p2")) == "p2"  # a plain list has no memo
    assert built == ["x1", "y1", "x3", "x4", "x5", "p1", "p2"]


@pytest.mark.parametrize("name", ["cafe", "pcs"])
def test_two_threads_scoring_the_same_kind_at_once_get_their_own_results(name: str) -> None:
    kind, benchmark, predictions = loaded(name)
    first, second = CASES[name][2]
    expected = [summaries(score(kind, benchmark, predictions, p)) for p in (first, second)]
    assert expected[0] != expected[1]
    scorers = [Scorer(kind, benchmark, predictions), Scorer(kind, benchmark, predictions)]
    start = threading.Barrier(2)
    results: list[list[Any]] = [[], []]
    errors: list[BaseException] = []

    def work(which: int) -> None:
        try:
            start.wait()
            for _ in range(20):  # each thread its own scorer and parameters, interleaved
                scorers[which].update_sample(0, predictions)  # a fresh build now and then
                results[which].append(summaries(scorers[which].rescore((first, second)[which])))
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(r == expected[0] for r in results[0])
    assert all(r == expected[1] for r in results[1])


def test_one_scorer_shared_by_threads_builds_once(monkeypatch: pytest.MonkeyPatch) -> None:
    kind, benchmark, predictions = loaded("pcs")
    calls = count_builds(monkeypatch, "pcs")
    scorer = Scorer(kind, benchmark, predictions)
    params = CASES["pcs"][2]
    expected = [summaries(score(kind, benchmark, predictions, p)) for p in params]
    calls.clear()
    start = threading.Barrier(4)
    results: list[Any] = [None] * 4

    def work(which: int) -> None:
        start.wait()
        results[which] = summaries(scorer.rescore(params[which % 2]))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert results == [expected[i % 2] for i in range(4)]


@pytest.mark.parametrize("name", list(CASES))
def test_one_sample_outside_a_scorer_reads_the_scorers_record(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The window's shown sample is re-read alone at each slider move: the same record as the
    scorer's, without building the whole-list tables for it."""
    kind, benchmark, predictions = loaded(name)
    scorer = Scorer(kind, benchmark, predictions)
    calls = count_builds(monkeypatch, name)
    for params in CASES[name][2]:
        p = kind.resolve_params(params)
        rows = scorer.readouts(p)
        for i, (sample, overlaps) in enumerate(zip(benchmark.samples, scorer.overlaps, strict=True)):
            assert kind.sample_readouts([sample], [overlaps], p)[0] == rows[i]
    assert len(calls) <= 1  # the scorer's own build, if its readouts need one
