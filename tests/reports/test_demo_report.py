"""A report of each bundled demo benchmark: its tables' numbers equal `masklens score`'s."""

import csv
import json
import math
import re

import pytest

from masklens.core.cli import main
from masklens.core.kinds.demo import demo_argv, demo_kinds
from masklens.core.reports.html import fmt

KINDS = demo_kinds()


@pytest.mark.parametrize("kind", KINDS)
def test_demo_report_matches_score(kind, tmp_path, capsys):
    argv = demo_argv(kind)
    assert main(["score", kind, *argv, "--out", str(tmp_path / "score.json")]) == 0
    score = json.loads((tmp_path / "score.json").read_text())
    extra = [] if kind == "cafe" else ["--no-sweep"]  # the sweep is checked once, on CAFE
    assert main(["report", kind, *argv, "--label", "demo", "--out", str(tmp_path / "rep"),
                 *extra]) == 0
    rep = tmp_path / "rep"
    doc = json.loads((rep / "summary.json").read_text())
    assert doc["models"]["demo"]["summary"] == score["summary"]
    # summary.csv holds every value of the scorer's summary
    rows = {(r["group"], r["metric"]): r["value"] for r in csv.DictReader((rep / "summary.csv").open())}
    for g, metrics in score["summary"].items():
        for m, v in metrics.items():
            got = rows[(g, m)]
            if v is None:
                assert got == ""
            else:
                assert float(got) == pytest.approx(v, rel=1e-12)
    # every cell of the paper-style tables is the scorer's value, and the HTML shows it
    html = (rep / "report.html").read_text()
    cells = 0
    for t in doc["tables"]:
        for r, c, g, m in t["sources"]:
            expected = score["summary"].get(g, {}).get(m)
            assert t["rows"][r][c] == expected, (t["title"], g, m)
            if isinstance(expected, float) and math.isfinite(expected):
                assert fmt(expected) in html
            cells += 1
    assert cells >= 8
    # per-sample records are the scorer's, one row per sample
    samples = list(csv.DictReader((rep / "samples.csv").open()))
    assert len(samples) == len(score["samples"])
    # self-contained: nothing fetched from elsewhere
    assert not re.search(r'(src|href)="(https?:|//|file:)', html)


def test_demo_cafe_tables_laid_out_like_the_paper(tmp_path, capsys):
    assert main(["report", "cafe", *demo_argv("cafe"), "--label", "demo", "--no-sweep",
                 "--out", str(tmp_path / "rep")]) == 0
    doc = json.loads((tmp_path / "rep" / "summary.json").read_text())
    t2 = next(t for t in doc["tables"] if "Table 2" in t["title"])
    assert [g for g, _ in t2["header_groups"]] == ["", "SM", "CC", "OC", "Overall"]
    assert t2["header"][1:4] == ["cgF1", "IL_MCC", "pmF1"]
    t3 = next(t for t in doc["tables"] if "Table 3" in t["title"])
    assert t3["header"][1:6] == ["FPR", "AFPR", "ACSR", "UFPR", "UCSR"]


def test_evaluate_demo_predictions_are_read_back_by_score(tmp_path, monkeypatch, capsys):
    """evaluate writes predictions in the benchmark's own format: `masklens score` on them
    gives evaluate's own scores."""
    monkeypatch.setenv("MASKLENS_CACHE_DIR", str(tmp_path / "cache"))
    argv = demo_argv("cafe", with_predictions=False)
    out = tmp_path / "ev"
    assert main(["evaluate", "cafe", *argv, "--model", "demo", "--out", str(out), "--quiet"]) == 0
    (pred,) = (out / "predictions" / "demo").iterdir()
    assert main(["score", "cafe", *argv, "--pred", str(pred), "--out", str(tmp_path / "s.json")]) == 0
    scored = json.loads((tmp_path / "s.json").read_text())
    evaluated = json.loads((out / "scores" / "demo.json").read_text())
    assert scored["summary"] == evaluated["summary"]
    assert scored["summary"]["Overall"]["N"] == 18


def test_a_cafe_report_names_the_group_edit_type(tmp_path):
    """samples.csv has one edit_type column (the sample's, which the record repeats) and no
    group column; the reviews' tables are headed edit_type."""
    import masklens.core as ml
    from masklens.core.reports import build_report
    from masklens.core.review.locations import benchmark_key
    from masklens.core.review.store import Role, open_store

    files = dict(zip(demo_argv("cafe")[::2], demo_argv("cafe")[1::2], strict=True))
    bench = ml.load_benchmark("cafe", ann=files["--ann"])
    preds = ml.load_predictions("cafe", bench, pred=files["--pred"])
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ana") as store:
        store.record(benchmark_key(bench), bench.samples[0].id, "gt_wrong")
        verdicts = store.current()
    out = build_report(ml.get_kind("cafe"), bench, [preds], tmp_path / "rep", names=["demo"],
                       verdicts=verdicts)
    with (out / "samples.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    assert reader.fieldnames[:3] == ["model", "sample_id", "edit_type"]
    assert "group" not in reader.fieldnames and reader.fieldnames.count("edit_type") == 1
    assert [r["edit_type"] for r in rows] == [s.group for s in bench.samples]
    counts = json.loads((out / "summary.json").read_text())["reviews"]["counts"]
    assert counts["title"] == "Verdicts per edit type" and counts["header"][0] == "edit_type"
    html = (out / "report.html").read_text()
    assert '<th class="t">edit_type</th><th class="t">verdict</th>' in html
