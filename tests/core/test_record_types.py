"""Each built-in kind's per-sample record has a TypedDict (the return type of its
``sample_readout``), and the records it makes have exactly that TypedDict's keys."""

from __future__ import annotations

from pathlib import Path
from typing import get_type_hints, is_typeddict

import pytest

from masklens.core.api import load_benchmark, load_predictions
from masklens.core.scoring.contract import Scorer, get_kind

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"
FILES = {
    "cafe": {"ann": DEMO / "cafe/ann.json", "pred": DEMO / "cafe/pred_demo.json"},
    "pcs": {"gt": [DEMO / f"pcs/gold_annotator_{i}.json" for i in (1, 2, 3)], "pred": DEMO / "pcs/pred_demo.json"},
    "hallusegbench": {"data": DEMO / "hallusegbench/data.json", "root": DEMO / "hallusegbench",
                      "pred_dir": DEMO / "hallusegbench/pred_demo"},
    "cgebench": {"ann": DEMO / "cgebench/ann.json", "pred": DEMO / "cgebench/pred_demo.json"},
    "r2sm": {"ann": DEMO / "r2sm/ann.json", "pred": DEMO / "r2sm/pred_demo.json"},
    "ovs": {"ann": DEMO / "ovs/ann.json", "pred": DEMO / "ovs/pred.json"},
}


@pytest.mark.parametrize("name", list(FILES))
def test_the_records_have_the_keys_of_the_kinds_record_type(name: str) -> None:
    kind = get_kind(name)
    record_type = get_type_hints(type(kind).sample_readout)["return"]
    assert is_typeddict(record_type)
    required, optional = record_type.__required_keys__, record_type.__optional_keys__
    benchmark = load_benchmark(kind, **FILES[name])
    scorer = Scorer(kind, benchmark, load_predictions(kind, benchmark, **FILES[name]))
    records = list(scorer.readouts())  # the vectorised path where the kind has one
    params = kind.resolve_params()
    records += [kind.sample_readout(s, o, params) for s, o in zip(benchmark.samples, scorer.overlaps, strict=True)]
    assert records
    for record in records:
        assert required <= record.keys() <= required | optional, sorted(record.keys() ^ required)
