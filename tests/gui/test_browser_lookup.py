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


class RowByRow:
    """A table without whole columns: plan_rows falls back to one row at a time."""

    def __init__(self, table):
        self.t = table

    def value(self, row, col):
        return self.t.value(row, col)

    def row_of(self, i):
        return self.t.row_of(i)

    def rowCount(self):  # noqa: N802
        return self.t.rowCount()


@pytest.mark.parametrize("kind,texts", [
    ("cafe", ["pos_class != TA-TP", "pos_max_score < 0.5 and neg_class == UA-FP", "edit_type ~ s",
              "sample ~ 1", "verdict == ", "nonexistent_is_none == none"]),
    ("ovs", ["thresholds.0.5.err > 0", "gt_classes[1] ~ a", "front < 0.9"]),
    ("r2sm", ["gIoU < 0.5", "queries[1].IoU >= 0.2"]),
])
def test_whole_column_filters_and_sorts_match_row_by_row(qapp, kind, texts):
    from masklens.core.kinds.demo import demo_namespace
    from masklens.core.scoring.contract import get_kind
    from masklens.gui.browser.filters import AllOf, Unreviewed
    from masklens.gui.browser.row_proxy import plan_rows
    from masklens.gui.browser.sample_table import SampleTableModel

    ns = demo_namespace(kind, with_predictions=True)
    bench = get_kind(kind).load_benchmark(**vars(ns))
    model = SampleTableModel()
    model.set_samples(bench.samples)
    model.set_readouts(demo_readouts(kind))
    model.set_verdicts({bench.samples[1].id: "gt_wrong"})
    slow = RowByRow(model)
    for text in texts:
        f = Expression(text)
        f.bind(model.filter_columns())
        for filt in (f, AllOf(Unreviewed(), f)):
            for col in (-1, 1, 3, 4, 5, model.columnCount() - 1):
                for search in ("", "1"):
                    for desc in (False, True):
                        fast = plan_rows(model, filt, search, 2, col, desc)
                        assert fast.rows.tolist() == plan_rows(slow, filt, search, 2, col, desc).rows.tolist(), (text, col)
