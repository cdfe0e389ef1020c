"""A report a paper can take as it is: every figure also as SVG and PDF beside its PNG
(figures/), every table also as LaTeX with booktabs rules (tables.tex), sweep lines told apart by
dash pattern and marker, not colour alone, and a title naming the benchmark as its file
describes itself (not the file's stem)."""

from __future__ import annotations

import json
import re

from masklens.core.cli import main
from masklens.core.kinds.demo import demo_argv
from masklens.core.reports.plots import line_figure


def _report(tmp_path, kind="cafe", extra=()):
    out = tmp_path / "rep"
    assert main(["report", kind, *demo_argv(kind), *extra, "--out", str(out)]) == 0
    return out


def test_every_figure_is_written_as_png_svg_and_pdf(tmp_path):
    out = _report(tmp_path)
    html = (out / "report.html").read_text()
    shown = html.count('<figure><img alt=')
    stems = sorted({p.stem for p in (out / "figures").iterdir()})
    assert shown and len(stems) == shown
    for stem in stems:
        png, svg, pdf = ((out / "figures" / f"{stem}.{s}").read_bytes() for s in ("png", "svg", "pdf"))
        assert png.startswith(b"\x89PNG") and b"<svg" in svg[:400] and pdf.startswith(b"%PDF")
    assert any(s.startswith("0") and "sweep" in s for s in stems)


def test_the_same_report_gives_the_same_figure_bytes(tmp_path):
    first = _report(tmp_path / "a")
    second = _report(tmp_path / "b")
    for p in (first / "figures").iterdir():
        assert p.read_bytes() == (second / "figures" / p.name).read_bytes(), p.name


def test_tables_as_latex_booktabs(tmp_path):
    out = _report(tmp_path)
    tex = (out / "tables.tex").read_text()
    doc = json.loads((out / "summary.json").read_text())
    assert tex.count(r"\begin{tabular}") == len(doc["tables"])
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert tex.count(rule) == len(doc["tables"])
    assert r"IL\_MCC" in tex and "IL_MCC" not in tex.replace(r"IL\_MCC", "")  # escaped
    afpr = doc["models"]["pred_demo"]["summary"]["Overall"]["AFPR"]
    assert f"{afpr:.4f}" in tex
    assert "≥" not in tex and "τ" not in tex  # symbols pdflatex's input encoding lacks


def test_sweep_lines_of_two_models_differ_in_dashes_and_markers():
    fig = line_figure("sweep", [0.1, 0.5, 0.9], {"a: cgF1": [0.1, 0.2, 0.3], "a: AFPR": [0.3, 0.2, 0.1],
                                                  "b: cgF1": [0.1, 0.2, 0.3], "b: AFPR": [0.3, 0.2, 0.1]},
                      styles=[(0, 0), (1, 0), (0, 1), (1, 1)])
    a_line, _, b_line, _ = fig.axes[0].get_lines()
    assert a_line.get_color() == b_line.get_color()  # the same metric
    assert a_line.get_marker() != b_line.get_marker()
    assert a_line.get_linestyle() != b_line.get_linestyle()
    offset, dashes = b_line._dash_pattern  # on/off lengths in points: gaps visible at screen size
    assert dashes and min(dashes) >= 3


def test_the_default_title_comes_from_the_benchmark(tmp_path):
    out = _report(tmp_path)
    html = (out / "report.html").read_text()
    title = re.search(r"<title>(.*?)</title>", html).group(1)
    assert title == "CAFE report — masklens demo CAFE set (procedurally generated shapes)"
    ovs = _report(tmp_path / "ovs", "ovs")  # a file without a description: its folder and name
    assert "<title>Mask-wise OVS report — ovs/ann.json</title>" in (ovs / "report.html").read_text()
