"""The batch report's "Ground-truth corrections" section: instances and samples changed, every
headline metric before/after (the after = scoring with the corrections applied)."""

import json

import numpy as np

import masklens.core as ml
from masklens.core.cli import main
from masklens.core.kinds.demo import demo_argv, demo_files
from masklens.core.masks import Mask
from masklens.core.review.corrections import corrected_benchmark
from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import Role, open_store


def test_report_shows_metrics_before_and_after_corrections(tmp_path, capsys):
    files = demo_files("cafe")
    bench = ml.load_benchmark("cafe", **files)
    key = benchmark_key(bench)
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ana") as st:
        for s in bench.samples[:4]:
            g = s.gts["target"]
            a = np.zeros((g.height, g.width), bool)
            a[: g.height // 3, : g.width // 3] = True
            st.add_correction(key, s.id, "target", 0, Mask.from_array(a), tool="brush")
        st.add_correction(key, bench.samples[5].id, "neg_entry", None, Mask.from_array(a), tool="model")
        rows = st.corrections(key)
    out = tmp_path / "report"
    assert main(["report", "cafe", *demo_argv("cafe"), "--reviews", str(db), "--no-sweep",
                 "--gallery", "0", "--out", str(out)]) == 0
    doc = json.loads((out / "summary.json").read_text())["corrections"]
    assert (doc["corrections"], doc["samples"], doc["instances"]) == (5, 5, {"replaced": 4, "added": 1})
    (model,) = doc["summaries"]
    after = ml.score("cafe", corrected_benchmark(bench, rows), pred=files["pred"]).summary
    before = ml.score("cafe", **files).summary
    assert doc["summaries"][model]["after"] == json.loads(json.dumps(after))
    assert doc["summaries"][model]["before"] == json.loads(json.dumps(before))
    assert after != before
    header, rows_ = doc["table"]["header"], doc["table"]["rows"]
    assert [r[0] for r in rows_] == [f"{model} — original ground truth", f"{model} — corrected ground truth"]
    assert len(header) > 2 and rows_[0][1:] != rows_[1][1:]
    html = (out / "report.html").read_text()
    assert "Ground-truth corrections" in html and "4 instance(s) replaced" in html
