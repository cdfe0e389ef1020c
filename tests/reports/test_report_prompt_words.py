"""A verdict on one prompt is named by the prompt's text in the report, never
by the benchmark's internal prompt id (the id stays in summary.json for programs)."""

import json

from masklens.core.reports import ReportOptions, build_report
from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import Role, open_store

from .toykind import install, load_toy_predictions, write_fixture


def test_prompt_verdicts_read_as_the_prompts_text(tmp_path):
    kind = install()
    files = write_fixture(tmp_path)
    bench = kind.load_benchmark(ann=str(files["ann"]))
    preds = [load_toy_predictions(files["pred_a"])]
    sample = bench.samples[1]
    prompt = sample.prompts[-1]
    assert prompt.text and prompt.text != prompt.id
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ann") as st:
        st.record(benchmark_key(bench), sample.id, "edit_invalid", prompt_id=prompt.id)
        verdicts = st.current()
    out = build_report(kind, bench, preds, tmp_path / "rep", names=["A"], verdicts=verdicts,
                       options=ReportOptions(sweep=False, gallery_per_kind=0))
    rev = json.loads((out / "summary.json").read_text())["reviews"]
    (v,) = rev["excluded"][0]["verdicts"]
    assert v["prompt"] == prompt.id  # programs keep the id
    assert v["prompt_text"] == f"“{prompt.text}” ({prompt.role.value})"
    html = (out / "report.html").read_text()
    row = next(line for line in html.splitlines() if "Edit invalid" in line and sample.id in line)
    assert f"“{prompt.text}”" in row.replace("&#34;", '"')
    assert f">{prompt.id}<" not in row
