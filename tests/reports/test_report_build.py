"""Reports from a real (tiny) kind: files, numbers, escaping, atomicity, comparison, reviews, sweep."""

import csv
import json
import re

import pytest

from masklens.core.errors import Cancelled
from masklens.core.files.output_dirs import MARKER
from masklens.core.masks import Mask
from masklens.core.reports import FILES, ReportOptions, build_report
from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import Role, open_store
from masklens.core.scoring.contract import Scorer

from .toykind import install, load_toy_predictions, write_fixture

XSS = "<script>alert(1)</script>"


@pytest.fixture
def toy(tmp_path):
    kind = install()
    files = write_fixture(tmp_path, note_prompt=XSS)
    args = {"ann": str(files["ann"])}
    bench = kind.load_benchmark(**args)
    preds = [load_toy_predictions(files["pred_a"]), load_toy_predictions(files["pred_b"])]
    return kind, bench, preds, files


def _summary_csv(path):
    out = {}
    for r in csv.DictReader(path.open()):
        out[(r["model"], r["group"], r["metric"])] = float(r["value"]) if r["value"] else None
    return out


def test_report_files_and_numbers_match_the_scorer(toy, tmp_path):
    kind, bench, preds, _ = toy
    out = build_report(kind, bench, preds[:1], tmp_path / "rep", names=["A"])
    assert sorted(p.name for p in out.iterdir()) == sorted([*FILES, MARKER])
    expected = Scorer(kind, bench, preds[0]).rescore().summary
    got = _summary_csv(out / "summary.csv")
    for g, metrics in expected.items():
        for m, v in metrics.items():
            assert got[("A", g, m)] == pytest.approx(v)
    doc = json.loads((out / "summary.json").read_text())
    assert doc["models"]["A"]["summary"] == expected
    html = (out / "report.html").read_text()
    # the generic table shows every summary value with 4 decimals
    for metrics in expected.values():
        for v in metrics.values():
            assert (f"{v:.4f}" if isinstance(v, float) else str(v)) in html
    rows = list(csv.DictReader((out / "samples.csv").open()))
    assert [r["sample_id"] for r in rows] == ["s1", "s2", "s3", "s4"]
    assert rows[1]["pos_ok"] == "0"


def test_html_is_self_contained_and_escaped(toy, tmp_path):
    kind, bench, preds, _ = toy
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="<img src=x onerror=alert(2)>") as st:
        st.record(benchmark_key(bench), "s1", "gt_wrong", note=XSS)
        verdicts = st.current()
    preds[0].name = "<b>model</b>"
    out = build_report(kind, bench, preds, tmp_path / "rep", verdicts=verdicts,
                       names=["<b>A</b>", "B"])
    html = (out / "report.html").read_text()
    assert XSS not in html and "<b>A</b>" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the prompt and the note, escaped
    assert html.count("&lt;script&gt;") >= 2
    assert "<script" not in html.lower()
    srcs = re.findall(r'(?:src|href)="([^"#][^"]*)"', html)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)


def test_report_is_written_atomically(toy, tmp_path):
    kind, bench, preds, _ = toy
    out = tmp_path / "rep"
    build_report(kind, bench, preds[:1], out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def cancel_late(stage, done, total):
        if stage == "writing":
            raise Cancelled("user cancelled")

    with pytest.raises(Cancelled):
        build_report(kind, bench, preds, out, progress=cancel_late)
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_models_side_by_side_fixes_and_breaks(toy, tmp_path):
    kind, bench, preds, _ = toy
    out = build_report(kind, bench, preds, tmp_path / "rep", names=["A", "B"])
    doc = json.loads((out / "summary.json").read_text())
    (d,) = doc["differences"]
    assert (d["reference"], d["model"]) == ("A", "B")
    assert [s["sample"] for s in d["fixed_samples"]] == ["s2"]
    assert [s["sample"] for s in d["broken_samples"]] == ["s3"]
    assert (d["both_ok"], d["both_fail"]) == (2, 0)
    comp = next(t for t in doc["tables"] if t["title"].startswith("Headline"))
    assert [r[0] for r in comp["rows"]] == ["A", "B"]
    fails = {(f["model"], f["kind"]): f["worst"] for f in doc["failures"]}
    assert fails[("A", "positive missed")] == ["s2"]
    assert fails[("B", "positive missed")] == ["s3"]
    assert fails[("A", "negative accepted")] == ["s2"]


def test_reviews_section_recomputes_without_excluded(toy, tmp_path):
    kind, bench, preds, _ = toy
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ann") as st:
        key = benchmark_key(bench)
        st.record(key, "s2", "edit_invalid", note="the sun is not there")
        st.record(key, "s1", "fine")
        st.record(key, "s4", "model_wrong", prompt_id="s4/neg")
        st.record(key, "s2", "gt_wrong", reviewer="bob")
        st.record(key, "s1", "fine", reviewer="bob")
        verdicts = st.current()
    out = build_report(kind, bench, preds[:1], tmp_path / "rep", names=["A"], verdicts=verdicts)
    rev = json.loads((out / "summary.json").read_text())["reviews"]
    assert rev["verdicts"] == 5 and rev["reviewers"] == ["ann", "bob"]
    assert [e["sample"] for e in rev["excluded"]] == ["s2"]
    assert rev["excluded"][0]["failing"] == {"A": True}
    counts = {r[0]: r[1:] for r in rev["counts"]["rows"]}
    assert rev["counts"]["header"] == ["group", "Model wrong", "Ground truth wrong", "Edit invalid",
                                       "Fine", "total"]
    assert counts["A"] == [0, 1, 1, 2, 4] and counts["B"] == [1, 0, 0, 0, 1]
    kept = [s for s in bench.samples if s.id != "s2"]
    sc = Scorer(kind, bench, preds[0])
    idx = [i for i, s in enumerate(bench.samples) if s.id != "s2"]
    recs = sc.readouts()
    expected = kind.summarize(kept, [sc.overlaps[i] for i in idx], [recs[i] for i in idx],
                              kind.default_params())
    row = rev["recomputed"]["rows"][1]
    assert row[0].startswith("A — without 1")
    header = rev["recomputed"]["header"]
    assert row[header.index("IoU")] == pytest.approx(expected["all"]["IoU"])  # first group: all
    assert rev["agreement"]["items_complete"] == 2
    html = (out / "report.html").read_text()
    assert "the sun is not there" in html and "Fleiss" in html


def test_sweep_rescores_without_decoding(toy, tmp_path, monkeypatch):
    kind, bench, preds, _ = toy
    decodes = []
    real = Mask.to_array
    monkeypatch.setattr(Mask, "to_array", lambda self: decodes.append(1) or real(self))
    out = build_report(kind, bench, preds[:1], tmp_path / "rep", names=["A"],
                       options=ReportOptions(gallery_per_kind=1))
    sweep = json.loads((out / "summary.json").read_text())["sweep"]
    assert set(sweep) == {"score_threshold", "iou_threshold"}
    sc = Scorer(kind, bench, preds[0])
    for i, t in enumerate(sweep["score_threshold"]["values"]):
        exp = sc.rescore({"score_threshold": t}).summary["all"]["IoU"]
        assert sweep["score_threshold"]["series"]["A"]["IoU"][i] == pytest.approx(exp)
    # decodes only for the gallery: 2 failure kinds × 1 sample; each panel decodes its GT and
    # its (at most one accepted) instance once
    doc = json.loads((out / "summary.json").read_text())
    panels = sum(len(f["worst"]) for f in doc["failures"])
    assert 0 < len(decodes) <= panels * 2 * 2


def test_every_sample_reviewed_out_still_writes_a_report(toy, tmp_path):
    kind, bench, preds, _ = toy
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ann") as st:
        for s in bench.samples:
            st.record(benchmark_key(bench), s.id, "edit_invalid")
        verdicts = st.current()
    out = build_report(kind, bench, preds[:1], tmp_path / "rep", verdicts=verdicts,
                       options=ReportOptions(sweep=False))
    rev = json.loads((out / "summary.json").read_text())["reviews"]
    assert rev["recomputed"] is None and "every sample was reviewed out" in rev["recomputed_note"]
    assert len(rev["excluded"]) == 4
