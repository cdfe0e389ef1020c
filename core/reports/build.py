"""Assemble and write a report directory atomically: report.html, summary.csv, samples.csv,
summary.json, tables.tex (the tables in LaTeX) and figures/ (each plot as PNG, SVG and PDF)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from masklens.core.errors import MasklensError
from masklens.core.files.io import (
    atomic_directory,
    atomic_write_bytes,
    atomic_write_text,
    json_safe,
)
from masklens.core.files.output_dirs import Checked, check_replaceable
from masklens.core.reports.compare import differences
from masklens.core.reports.corrections import corrections_json, corrections_section
from masklens.core.reports.gallery import gallery
from masklens.core.reports.html import render_html
from masklens.core.reports.latex import tables_tex
from masklens.core.reports.layout import Figure, Table, get_layout, paper_table
from masklens.core.reports.plots import warm_up
from masklens.core.reports.provenance import provenance
from masklens.core.reports.reviews import review_section
from masklens.core.reports.runs import ModelRun, ReportContext, score_runs
from masklens.core.reports.sweep import sweep, sweep_figures
from masklens.core.reports.writers import (
    write_samples_csv,
    write_summary_csv,
    write_summary_json,
)
from masklens.core.review.verdicts import Verdict
from masklens.core.schema import Benchmark, PredictionSet
from masklens.core.scoring.contract import BenchmarkKind

FILES = ("report.html", "summary.csv", "samples.csv", "summary.json", "tables.tex", "figures")


@dataclass
class ReportOptions:
    title: str | None = None
    images_dir: str | Path | None = None
    gallery_per_kind: int = 4
    sweep: bool = True
    command: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: the run's input files and folders (the output folder never replaces one holding them)
    inputs: list[Any] = field(default_factory=list)
    #: the caller's check_replaceable of ``out`` before it loaded anything: later checks compare
    #: the folder's listing with it instead of reading every file again
    out_checked: Checked | None = None


def build_report(
    kind: BenchmarkKind,
    benchmark: Benchmark,
    predictions: Sequence[PredictionSet] | Sequence[ModelRun],
    out: str | Path,
    *,
    params: Mapping[str, Any] | None = None,
    names: Sequence[str] | None = None,
    verdicts: Sequence[Verdict] = (),
    corrections: Sequence[Any] = (),
    options: ReportOptions | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Path:
    """Score (unless runs are given), lay out and write the report directory ``out`` atomically.

    ``progress(stage, done, total)`` is called as work proceeds and may raise
    :class:`~masklens.core.errors.Cancelled`; a cancelled or failed build leaves
    ``out`` as it was.
    """
    opts = options or ReportOptions()
    if not predictions:
        raise MasklensError("a report needs at least one prediction set (--pred)")
    inputs = [*benchmark.sources.values(), opts.images_dir, *opts.inputs]
    checked = check_replaceable(out, inputs=inputs, since=opts.out_checked)  # before the work
    p = kind.resolve_params(params)
    step = progress or (lambda *_: None)
    runs: list[ModelRun]
    # all runs or all prediction sets (the signature's union): the first item says which
    if isinstance(predictions[0], ModelRun):
        runs = list(cast("Sequence[ModelRun]", predictions))
        for r in runs:
            if r.result.params != p:
                r.result = r.scorer.rescore(p)
    else:
        runs = score_runs(
            kind, benchmark, cast("Sequence[PredictionSet]", predictions), p, names=names,
            progress=lambda d, n: step("scoring", d, n),
        )
    ctx = ReportContext(
        kind, benchmark, runs, p, list(verdicts),
        title=opts.title or f"{kind.title or kind.name} report — {benchmark.title}",
        command=opts.command, corrections=list(corrections),
    )
    step("tables", 0, STEPS)
    data = assemble(ctx, opts, step)
    step("writing", 97, STEPS)
    html = render_html(data["html"])
    out = Path(out)
    with atomic_directory(out, what="report", inputs=inputs, checked=checked) as tmp:
        atomic_write_text(tmp / "report.html", html)
        write_summary_csv(tmp / "summary.csv", ctx)
        write_samples_csv(tmp / "samples.csv", ctx)
        write_summary_json(tmp / "summary.json", data["json"])
        atomic_write_text(tmp / "tables.tex", tables_tex(ctx.title, data["latex_tables"]))
        write_figures(tmp / FIGURES, data["figures"])
        step("writing", STEPS, STEPS)
    return out


#: the folder of the report's figures, each as PNG, SVG and PDF
FIGURES = "figures"


def figure_stem(index: int, figure: Figure) -> str:
    """``NN-title-in-words``: the figure's place in the report and its title as a file name."""
    words = re.sub(r"[^A-Za-z0-9]+", "-", figure.title).strip("-").lower()[:60].rstrip("-")
    return f"{index:02d}-{words or 'figure'}"


def write_figures(folder: Path, figures: Sequence[Figure]) -> None:
    """Every figure as ``folder/NN-title.{png,svg,pdf}`` (the folder even without a figure)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, fig in enumerate(figures, start=1):
        stem = figure_stem(i, fig)
        for suffix, content in (("png", fig.png), ("svg", fig.svg), ("pdf", fig.pdf)):
            if content:
                atomic_write_bytes(folder / f"{stem}.{suffix}", content)


#: progress is reported on this scale: each stage owns a share that matches its usual cost
STEPS = 100


def _within(step: Callable[[str, int, int], None], stage: str, start: int, end: int
            ) -> Callable[[int, int], None]:
    """A ``(done, total)`` callback mapping a stage's own count onto [start, end] of STEPS."""
    return lambda d, n: step(stage, start + (end - start) * d // max(n, 1), STEPS)


def assemble(
    ctx: ReportContext, opts: ReportOptions, step: Callable[[str, int, int], None]
) -> dict[str, Any]:
    """The HTML context and the summary.json document of a report."""
    layout = get_layout(ctx.kind.name)
    tables: list[Table] = layout.tables(ctx)
    comparison = None
    if len(ctx.runs) > 1:
        comparison = paper_table(
            "Headline metrics, models side by side",
            ctx.runs,
            [(g, layout.headline_metrics(ctx)) for g in ctx.kind.groups],
            id="comparison",
        )
    step("charts: loading the plotting library", 3, STEPS)
    warm_up()  # seconds on a cold start: a step of its own, so the bar does not sit still
    step("charts", 25, STEPS)
    figures: list[Figure] = layout.figures(ctx)
    step("sweep", 40, STEPS)
    sweep_data = sweep(ctx, layout, _within(step, "sweep", 40, 48)) if opts.sweep else {}
    step("sweep charts", 50, STEPS)
    sweep_figs = sweep_figures(sweep_data)
    step("gallery", 78, STEPS)
    gal = gallery(ctx, layout, per_kind=opts.gallery_per_kind, images_dir=opts.images_dir)
    diffs = differences(ctx, layout)
    step("reviews", 90, STEPS)
    reviews = review_section(ctx, layout)
    fixes = corrections_section(ctx, layout)
    prov = provenance(ctx)
    notes = [(r.name, n) for r in ctx.runs for n in r.result.notes]
    html_ctx = {
        "title": ctx.title,
        "kind_title": ctx.kind.title or ctx.kind.name,
        "group_name": ctx.kind.group_name,
        "source": str(next(iter(ctx.benchmark.sources.values()), "")),
        "n_samples": len(ctx.benchmark.samples),
        "models": [r.name for r in ctx.runs],
        "params": ctx.params,
        "tables": tables,
        "comparison": comparison,
        "differences": diffs,
        "figures": figures,
        "sweep_figures": sweep_figs,
        "gallery": gal,
        "reviews": reviews,
        "corrections": fixes,
        "notes": notes,
        "provenance": prov,
    }
    doc = {
        "benchmark": ctx.kind.name,
        "params": ctx.params,
        "models": {
            r.name: {"summary": r.result.summary, "notes": r.result.notes} for r in ctx.runs
        },
        "tables": [t.to_json() for t in tables] + ([comparison.to_json()] if comparison else []),
        "sweep": sweep_data,
        "differences": diffs,
        "failures": [
            {"model": s["model"], "kind": s["kind"], "count": s["count"],
             "worst": [it["sample"] for it in s["items"]]}
            for s in gal
        ],
        "reviews": _reviews_json(reviews),
        "corrections": corrections_json(fixes),
        "provenance": prov,
    }
    step("render", 94, STEPS)
    return {"html": html_ctx, "json": json_safe(doc), "figures": [*figures, *sweep_figs],
            "latex_tables": tables + ([comparison] if comparison else [])}


def _reviews_json(reviews: dict[str, Any] | None) -> dict[str, Any] | None:
    if reviews is None:
        return None
    out = dict(reviews)
    out["counts"] = reviews["counts"].to_json()
    if reviews["recomputed"] is not None:
        out["recomputed"] = reviews["recomputed"].to_json()
    return out
