"""Filter expressions and readout flattening (no window)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from masklens.core.errors import MasklensError
from masklens.core.schema import Sample
from masklens.gui.browser.filters import AnyItem, Expression, Row, Unreviewed, flatten, resolve_key


def row(values, verdict=None):
    return Row(Sample("s", {}, {}, []), values, verdict)


def test_flatten_nests_and_indexes():
    rec = {"a": 1, "b": {"c": 0.5, "d": [1, {"e": "x"}]}, "skip": object()}
    assert flatten(rec) == {"a": 1, "b.c": 0.5, "b.d[0]": 1, "b.d[1].e": "x"}


@pytest.mark.parametrize(("text", "values", "expected"), [
    ("iou < 0.5", {"iou": 0.4999}, True),
    ("iou < 0.5", {"iou": 0.5}, False),
    ("iou <= 0.5", {"iou": 0.5}, True),  # inclusive when asked
    ("hit == true", {"hit": True}, True),
    ("hit == false", {"hit": True}, False),
    ("hit == 1", {"hit": True}, True),  # booleans compare as numbers
    ("cls == TA-FP", {"cls": "TA-FP"}, True),
    ("cls = 'TA-FP'", {"cls": "TA-FP"}, True),
    ("cls != TA-FP", {"cls": "UA-FP"}, True),
    ("text ~ zeb", {"text": "Zebra"}, True),
    ("iou > 0.5", {"iou": None}, False),  # a missing value never matches a comparison
    ("x == none", {"x": None}, True),
    ("a > 1 and b < 1", {"a": 2, "b": 0}, True),
    ("a > 1 AND b < 1", {"a": 2, "b": 5}, False),
])
def test_expression_semantics(text, values, expected):
    f = Expression(text)
    assert f.bind(list(values)) == []
    assert f(row(values)) is expected


def test_expression_errors_and_key_resolution():
    with pytest.raises(MasklensError, match="cannot read filter"):
        Expression("just words")
    assert resolve_key("IOU", ["iou"]) == "iou"
    assert resolve_key("best_iou", ["positive.best_iou"]) == "positive.best_iou"
    assert resolve_key("best_iou", ["positive.best_iou", "negative.best_iou"]) is None  # ambiguous
    assert Expression("nope < 1").bind(["iou"]) == ["nope"]


def test_any_item_and_unreviewed():
    values = {"queries[0].requested": "modal", "queries[0].wrong_type": True,
              "queries[1].requested": "amodal", "queries[1].wrong_type": False}
    assert not AnyItem("queries", "requested == amodal and wrong_type == true")(row(values))
    values["queries[1].wrong_type"] = True
    assert AnyItem("queries", "requested == amodal and wrong_type == true")(row(values))
    assert AnyItem("queries", "x == 1").applicable(values) and not AnyItem("levels", "x == 1").applicable(values)
    assert Unreviewed()(row({})) and not Unreviewed()(row({}, "model_wrong"))


_CELL = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
                  st.sampled_from(["0.5", "TP", "", "1"]))


@given(values=st.lists(_CELL, max_size=40), op=st.sampled_from(["<", "<=", ">", ">=", "==", "!=", "~"]),
       value=st.one_of(st.floats(-2, 2), st.sampled_from(["0.5", "TP", "true", "none", "1"])))
@settings(max_examples=300, deadline=None)
def test_a_whole_column_passes_exactly_as_value_by_value(values, op, value):
    """The numpy pass over a column of numbers (filters at 20,000 samples) keeps
    exactly the rows the one-by-one test keeps: None, NaN, booleans, strings that look like numbers."""
    from masklens.gui.browser.filters import Clause, _parse_value

    clause = Clause("k", op, _parse_value(str(value)) if isinstance(value, str) else value)
    assert clause.test_column(values) == [clause.test_value(v) for v in values]
    numbers = [v for v in values if not isinstance(v, str)]
    assert clause.test_column(numbers) == [clause.test_value(v) for v in numbers]


_SORTED = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True, width=16),
                    st.sampled_from(["a2", "a10", "b", "A2"]))


@given(values=st.lists(_SORTED, max_size=40), descending=st.booleans(), data=st.data())
@settings(max_examples=300, deadline=None)
def test_rows_sorted_in_one_pass_keep_pythons_order(values, descending, data):
    """The numpy sort of a column (sorts at 20,000 rows) orders rows exactly as
    Python's stable sort of the same keys: missing first, numbers, equal keys in list order."""
    from masklens.gui.browser.bulk import order_rows, sort_keys

    keys = sort_keys(values)
    rows = data.draw(st.permutations(range(len(values))))
    want = sorted(rows, key=keys.__getitem__, reverse=descending)
    listed = np.array(rows, dtype=np.intp)
    assert order_rows(listed, keys, descending).tolist() == want
    kept: dict = {}  # a table's column store: the ranks made once, then reused
    assert order_rows(listed, keys, descending, kept).tolist() == want
    some = listed[: len(rows) // 2]  # a filtered subset, same column
    assert order_rows(some, keys, not descending, kept).tolist() == sorted(some.tolist(), key=keys.__getitem__,
                                                                           reverse=not descending)


@pytest.mark.parametrize(("values", "numeric"), [
    ([0.5, None, 3], True),
    ([0.5, float("nan")], False),  # NaN orders with nothing
    ([1, 2**53], False),  # past a float's integer precision neighbours merge
    ([1, -(2**53)], False),
    ([1, 2**53 - 1], True),
])
def test_a_column_is_sorted_by_its_floats_only_where_they_order_as_its_values(values, numeric):
    from masklens.gui.browser.bulk import NumericKeys, order_rows, orders_as_float

    floats = np.array([0.0 if v is None else v for v in values], dtype=float)
    assert orders_as_float(floats) is numeric and orders_as_float(np.empty(0))
    assert (NumericKeys.of(values) is not None) is numeric
    if numeric:  # the float keys give the order of the values themselves
        rows = np.arange(len(values))
        keys = NumericKeys.of(values)
        assert order_rows(rows, keys, False).tolist() == sorted(rows.tolist(), key=keys.__getitem__)
