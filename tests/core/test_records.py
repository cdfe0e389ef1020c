"""``Records`` (a result's per-sample records, copied when first read) behaves as the list of
fresh dicts it replaces: each read index owns its dict, nothing leaks into the templates or
another result, and it compares, iterates, slices, pickles and serialises like a list."""

from __future__ import annotations

import copy
import json
import pickle
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from masklens.core.scoring.contract import ScoreResult
from masklens.core.scoring.records import MemoRows, Records


def templates(n: int) -> list[dict]:
    return [{"id": str(i), "v": i, "nested": [i]} for i in range(n)]


def test_a_read_copies_its_template_once_and_owns_it() -> None:
    tmpl = templates(5)
    recs = Records(tmpl)
    first = recs[2]
    assert first == tmpl[2] and first is not tmpl[2]
    assert recs[2] is first and recs[-3] is first  # the same dict on every read
    first["v"] = -1
    first["added"] = True
    assert tmpl[2] == {"id": "2", "v": 2, "nested": [2]}  # the template never changes
    assert recs[2]["v"] == -1 and list(recs)[2] is first  # the change stays in this result
    other = Records(tmpl)  # another result over the same memo
    assert other[2] == tmpl[2] and "added" not in other[2]


def test_iteration_owns_every_record_and_keeps_those_read_before() -> None:
    tmpl = templates(7)
    recs = Records(tmpl)
    early = recs[4]
    early["v"] = 40
    seen = list(recs)
    assert seen[4] is early and seen[4]["v"] == 40
    assert all(a == b and a is not b for a, b in zip(seen[:4], tmpl[:4], strict=True))
    assert [r is s for r, s in zip(recs, seen, strict=True)] == [True] * 7  # the same dicts again
    assert [recs[i] is seen[i] for i in range(7)] == [True] * 7


def test_list_like_reading() -> None:
    tmpl = templates(6)
    recs = Records(tmpl)
    assert len(recs) == 6 and bool(recs) and not Records() and len(Records()) == 0
    assert recs[1:5:2] == [tmpl[1], tmpl[3]] and recs[1:5:2][0] is recs[1]
    assert recs[::-1] == tmpl[::-1] and recs[10:] == []
    with pytest.raises(IndexError):
        recs[6]
    with pytest.raises(TypeError):
        recs["a"]  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        recs[0] = {}  # type: ignore[index]  # read-only
    assert recs[np.int64(3)] == tmpl[3]
    assert tmpl[2] in recs and {"id": "x"} not in recs
    assert recs.index(tmpl[3]) == 3 and recs.count(tmpl[1]) == 1
    assert list(reversed(recs)) == tmpl[::-1]
    assert recs + [{"a": 1}] == [*tmpl, {"a": 1}] and [{"a": 1}] + recs == [{"a": 1}, *tmpl]
    assert recs + Records(tmpl) == tmpl + tmpl
    assert repr(recs) == repr(tmpl) and repr(Records()) == "[]"


def test_equality_as_a_list() -> None:
    tmpl = templates(4)
    recs = Records(tmpl)
    assert recs == tmpl and tmpl == recs and recs == Records(templates(4))
    assert recs != tmpl[:3] and recs != tuple(tmpl) and recs != "x"
    recs[1]["v"] = 99  # a changed record changes the comparison, as in a list
    assert recs != tmpl and recs != Records(tmpl)
    with pytest.raises(TypeError):
        hash(recs)


def test_owned_records_are_handed_out_as_they_are() -> None:
    fresh = templates(3)
    recs = Records.of(fresh)
    assert [r is f for r, f in zip(recs, fresh, strict=True)] == [True] * 3 and recs[0] is fresh[0]
    assert Records.of(recs) is recs
    fresh.append({"id": "late"})  # the list given is not the sequence
    assert len(recs) == 3


def test_pickle_copy_and_json() -> None:
    tmpl = templates(5)
    recs = Records(tmpl)
    recs[0]["v"] = "changed"
    back = pickle.loads(pickle.dumps(recs))
    assert type(back) is Records and back == recs and back[0]["v"] == "changed"
    back[1]["v"] = -7
    assert recs[1]["v"] == 1 and tmpl[1]["v"] == 1
    shallow = copy.copy(recs)
    assert shallow == recs and shallow[2] is recs[2]  # as list.copy: the same records
    deep = copy.deepcopy(recs)
    assert deep == recs and deep[2] is not recs[2] and deep[2]["nested"] is not recs[2]["nested"]
    with pytest.raises(TypeError):
        json.dumps(recs)  # not JSON itself: ScoreResult.to_json gives a list
    result = ScoreResult("k", {}, {}, recs)
    assert result.samples is recs
    out = result.to_json()
    assert type(out["samples"]) is list and json.loads(json.dumps(out))["samples"] == recs
    again = pickle.loads(pickle.dumps(result))
    assert again == result and type(again.samples) is Records


def test_a_result_built_from_a_list_holds_records() -> None:
    rows = templates(3)
    result = ScoreResult("k", {}, {}, rows)  # type: ignore[arg-type]
    assert type(result.samples) is Records and result.samples == rows
    assert result.samples[0] is rows[0]  # a list given is taken as owned


def test_replaced_shares_the_read_records_and_swaps_one() -> None:
    tmpl = templates(5)
    recs = Records(tmpl)
    kept = recs[0]
    new = recs.replaced(3, {"id": "new"})
    assert new[0] is kept and new[3] == {"id": "new"} and recs[3] == tmpl[3]
    assert new[4] == tmpl[4] and new[4] is not recs[4]  # read later: each sequence its own copy
    assert list(new) == [kept, *tmpl[1:3], {"id": "new"}, tmpl[4]]


def test_release_empties_it() -> None:
    recs = Records(templates(4))
    held = list(recs)
    out = recs.release()
    assert out == held and len(recs) == 0 and list(recs) == []
    assert Records(templates(2)).release() == []  # nothing read: nothing owned to free


def test_two_threads_reading_an_index_first_get_the_same_dict() -> None:
    for _ in range(20):
        recs = Records(templates(2000))
        got: list[list[dict]] = [[], []]
        start = threading.Barrier(2)

        def read(k: int, recs: Records = recs, got: list = got, start: threading.Barrier = start) -> None:
            start.wait()
            if k:
                got[k] = list(recs)
            else:
                got[k] = [recs[i] for i in range(len(recs))]

        threads = [threading.Thread(target=read, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(a is b for a, b in zip(*got, strict=True))


ops = st.lists(st.one_of(st.tuples(st.just("index"), st.integers(-12, 11)),
                         st.tuples(st.just("slice"), st.integers(-12, 12), st.integers(-12, 12)),
                         st.just(("iter",)), st.just(("mutate",))), max_size=12)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 12), ops, st.integers(0, 11))
def test_any_reading_order_gives_the_templates_own_copies(n: int, steps, pick: int) -> None:
    """Whatever the order of reads, every index yields one dict equal to its template (until
    changed), never the template; changes persist in that sequence only."""
    tmpl = templates(n)
    want = copy.deepcopy(tmpl)
    recs = Records(tmpl)
    mine: dict[int, dict] = {}
    for step in steps:
        if step[0] == "index" and -n <= step[1] < n:
            i = step[1] % n
            mine.setdefault(i, recs[step[1]])
            assert recs[step[1]] is mine[i]
        elif step[0] == "slice":
            idx = range(n)[step[1] : step[2]]
            part = recs[step[1] : step[2]]
            assert [mine.setdefault(i, r) is r for i, r in zip(idx, part, strict=True)] == [True] * len(idx)
        elif step[0] == "iter":
            assert [mine.setdefault(i, r) is r for i, r in enumerate(recs)] == [True] * n
        elif step[0] == "mutate" and n:
            i = pick % n
            mine.setdefault(i, recs[i])["v"] = "mutated"
            want[i]["v"] = "mutated"
    assert list(recs) == want
    assert all(r is not t for r, t in zip(recs, tmpl, strict=True))
    assert tmpl == templates(n) and Records(tmpl) == templates(n)


def memo_of(size: int) -> tuple[np.ndarray, np.ndarray, list[list[int]], object]:
    memo = np.empty(size, dtype=object)
    built = np.zeros(size, dtype=bool)
    calls: list[list[int]] = []

    def build(keys: np.ndarray) -> None:
        calls.append(keys.tolist())
        for k in keys.tolist():
            memo[k] = {"key": k}
        built[keys] = True

    return memo, built, calls, build


def test_memo_rows_build_what_is_read_once() -> None:
    memo, built, calls, build = memo_of(10)
    recs = Records(MemoRows(memo, built, np.array([3, 1, 3, 7]), build))
    assert calls == [] and len(recs) == 4  # nothing built until read
    assert recs[0] == {"key": 3} and calls == [[3]]  # the record read, alone
    assert list(recs) == [{"key": 3}, {"key": 1}, {"key": 3}, {"key": 7}] and calls[1:] == [[1, 7]]
    assert recs[0] is not recs[2]  # one template, two owned copies
    assert Records(MemoRows(memo, built, np.array([7, 7]), build)) == [{"key": 7}] * 2
    assert len(calls) == 2  # built once per key, whichever sequence reads it
    fresh = Records(MemoRows(memo, built, np.array([9, 0, 9]), build))
    assert list(fresh)[2] == {"key": 9} and calls[-1] == [0, 9]  # a batch, each key once
    with pytest.raises(IndexError):
        fresh[3]


def test_memo_rows_read_one_by_one_build_in_blocks() -> None:
    """Records read one by one in order (either way) are built a block at a time; one read
    away from the one before (a sorted list's rows on screen) is built alone."""
    from masklens.core.scoring.records import BLOCK

    n = 5 * BLOCK + 3
    memo, built, calls, build = memo_of(n)
    keys = np.arange(n)[::-1].copy()
    recs = Records(MemoRows(memo, built, keys, build))
    assert recs[-1] == {"key": 0} and calls == [[0]]  # a lone read: that record alone
    assert recs[BLOCK + 1] == {"key": n - BLOCK - 2} and calls[-1] == [n - BLOCK - 2]
    assert recs[BLOCK + 2] == {"key": n - BLOCK - 3} and len(calls[-1]) == BLOCK - 1  # next to it: its block
    assert [recs[i]["key"] for i in range(n)] == keys.tolist()
    assert len(calls) == 3 + 1 + 5 and sorted(k for c in calls for k in c) == list(range(n))
    sub = MemoRows(memo, built, keys, build)
    assert sub[2:5] == [{"key": k} for k in keys[2:5].tolist()] and len(calls) == 9
    memo, built, calls, build = memo_of(n)
    backwards = Records(MemoRows(memo, built, keys, build))
    assert [backwards[i]["key"] for i in range(n - 1, -1, -1)] == keys[::-1].tolist()
    assert len(calls) == 1 + 6 and sorted(k for c in calls for k in c) == list(range(n))
