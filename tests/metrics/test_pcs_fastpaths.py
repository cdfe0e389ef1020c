"""The speed paths of the cgF1 read-out equal their plain forms exactly (same numbers, same
types): the threshold-free row table of a one-annotator stack against accumulate_groups on
the rows read out at t, and the TP row count against counting directly."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from masklens.core.kinds.common.cgf1.metrics import accumulate_groups, summarize_groups
from masklens.core.kinds.common.cgf1.tables import (
    IOU_THRESHOLD_LIST,
    EntryStack,
    entry_table,
    tp_row,
)

iou_val = st.sampled_from([0.0, 0.5, 0.55, 0.75, 0.95, 1.0, *IOU_THRESHOLD_LIST]) | st.floats(0, 1)
score_val = st.sampled_from([0.0, 0.3, 0.5, 0.9]) | st.floats(0, 1)
thr = st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]) | st.floats(0, 1)


@st.composite
def single_entry(draw):
    n = draw(st.integers(0, 6))
    scores = draw(st.lists(score_val, min_size=n, max_size=n))
    g = draw(st.integers(0, 3))
    vals = draw(st.lists(iou_val, min_size=n * g, max_size=n * g))
    return scores, np.array(vals, dtype=float).reshape(n, g)


def plain(stack: EntryStack, t: float, members: np.ndarray):
    ndt, tp = stack.at(t)
    return accumulate_groups(tp[:, 0], ndt, stack.ngt[:, 0], members)


def assert_same(fast, slow) -> None:
    assert len(fast) == len(slow)
    for a, b in zip(fast, slow, strict=True):
        assert list(a) == list(b)
        for k in a:
            assert type(a[k]) is type(b[k]), k
            assert a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]), (k, a[k], b[k])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(single_entry(), min_size=0, max_size=14),
    st.lists(st.integers(0, 2**14 - 1), min_size=3, max_size=3),
    thr,
)
def test_row_table_readout_equals_accumulate_groups(entries, bits, t) -> None:
    tables = [entry_table(s, [m]) for s, m in entries]
    stack = EntryStack.build(tables)
    n = len(tables)
    members = np.array(
        [[True] * n] + [[bool(b >> i & 1) for i in range(n)] for b in bits], dtype=bool
    ).reshape(4, n)
    assert stack.row_sums_table() is not None
    assert_same(summarize_groups(stack, t, members), plain(stack, t, members))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(score_val, max_size=5), st.booleans()), max_size=12), thr)
def test_row_table_of_single_stack_equals_accumulate_groups(raw, t) -> None:
    entries = [(tuple(s), tuple(0.5 + 0.1 * i for i in range(len(s))) if g else None)
               for s, g in raw]  # fmt: skip
    stack = EntryStack.from_single(entries)
    members = np.ones((2, len(entries)), dtype=bool)
    members[1, ::2] = False
    assert_same(summarize_groups(stack, t, members), plain(stack, t, members))


def test_row_table_falls_back_when_a_row_breaks_the_invariant() -> None:
    """TP > 0 without ground truth cannot come from a table; if it did, the plain path runs."""
    stack = EntryStack.build([entry_table([0.9], [np.ones((1, 1))])])
    stack.ngt[:] = 0  # forged: the row keeps TP = 1
    assert stack.row_sums_table() is None
    members = np.ones((1, 1), dtype=bool)
    assert_same(summarize_groups(stack, 0.5, members), plain(stack, 0.5, members))


@settings(max_examples=300, deadline=None)
@given(st.lists(iou_val | st.just(float("nan")), max_size=7))
def test_tp_row_counts_like_the_definition(values) -> None:
    want = [sum(v >= x for v in values) for x in IOU_THRESHOLD_LIST]
    assert tp_row(np.array(values, dtype=float)) == want
