"""The browser reads one flattened key straight from a record: the same value as flattening it,
for every key of every demo kind's readouts and for awkward shapes (dotted dict keys, lists,
records shaped differently from the first one)."""

from __future__ import annotations

import pytest

from masklens.gui.browser.filters import Expression, Row, flatten
from masklens.gui.browser.lookup import KeyReader, RowValues, find_path

pytest.importorskip("masklens.core.kinds.demo")


def demo_readouts(kind: str) -> list[dict]:
    from masklens.core.kinds.demo import demo_namespace
    from masklens.core.scoring.contract import Scorer, get_kind

    ns = demo_namespace(kind, with_predictions=True)
    k = get_kind(kind)
    bench = k.load_benchmark(**vars(ns))
    return list(Scorer(k, bench, k.load_predictions(bench, **vars(ns))).readouts({}))


@pytest.mark.parametrize("kind", ["cafe", "pcs", "hallusegbench", "cgebench", "r2sm", "ovs"])
def test_every_key_of_every_demo_record_reads_as_flattened(kind):
    records = demo_readouts(kind)
    reader = KeyReader()  # one reader for all records: paths found on one record, reused on others
    keys = {k for r in records for k in flatten(r)}
    for r in records:
        flat = flatten(r)
        for key in keys:
            assert reader.get(r, key) == flat.get(key), (kind, key)


def test_awkward_shapes():
    r = {"thresholds": {"0.5": {"err": 2}, "0.55": {"err": 3}}, "q": [{"iou": 0.1}, {"iou": 0.9}],
         "l": [1, 2], "nested": {"x": [{"y": {"z": 7}}]}, "long": list(range(12)), "none": None}
    reader = KeyReader()
    for key, value in flatten(r).items():
        assert reader.get(r, key) == value, key
    assert reader.get(r, "long[9]") is None  # flatten keeps 8 items
    assert reader.get(r, "thresholds.0.5") is None  # a dict, not a value
    assert reader.get({"q": [{"iou": 0.4}]}, "q[1].iou") is None  # shorter list than the first
    assert reader.get({"q": {"iou": 0.4}}, "q[0].iou") is None
    assert find_path(r, "thresholds.0.55.err") == ("thresholds", "0.55", "err")


def test_row_values_filter_like_a_flattened_row():
    rec = {"neg": {"class": "TA-FP"}, "group": "own"}
    lazy = RowValues({"sample": "s1", "group": "B", "verdict": ""}, rec, KeyReader())
    eager = {"sample": "s1", "group": "B", "verdict": "", **flatten(rec)}
    for text in ("neg.class == TA-FP", "class == TA-FP", "group == own", "sample ~ s", "verdict == x"):
        f = Expression(text)
        f.bind(eager)
        assert f(Row(None, lazy)) == f(Row(None, eager)), text
    assert dict(lazy) == eager
