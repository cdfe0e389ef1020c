"""The report's "Ground-truth corrections" section: what reviewers changed in the ground truth and
every headline metric before and after, per model (scored with :func:`corrected_scorer`, which
re-reads only the corrected samples)."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any

from masklens.core.reports.layout import KindLayout, Table, paper_table
from masklens.core.reports.runs import ReportContext
from masklens.core.review.corrections import (
    changed_samples,
    corrected_scorer,
    correction_conflicts,
    effective_corrections,
)


def corrections_section(ctx: ReportContext, layout: KindLayout) -> dict[str, Any] | None:
    """None without corrections of this benchmark's samples; otherwise the counts, the
    conflicts (applied in time order all the same), and the before/after table."""
    ids = {s.id for s in ctx.benchmark.samples}
    rows = [c for c in effective_corrections(ctx.corrections) if c.sample_id in ids]
    if not rows:
        return None
    actions = Counter("added" if c.instance is None else "deleted" if c.mask is None else "replaced"
                      for c in rows)
    table_rows, summaries = [], {}
    for run in ctx.runs:
        after = corrected_scorer(run.scorer, rows).rescore(ctx.params)
        summaries[run.name] = {"before": run.result.summary, "after": after.summary}
        table_rows.append(SimpleNamespace(name=f"{run.name} — original ground truth", result=run.result))
        table_rows.append(SimpleNamespace(name=f"{run.name} — corrected ground truth", result=after))
    metrics = layout.headline_metrics(ctx)
    table: Table = paper_table(
        "Headline metrics with the original and the corrected ground truth",
        table_rows,  # type: ignore[arg-type]
        [(g, metrics) for g in ctx.kind.groups],
        id="corrections-before-after",
    )
    return {
        "corrections": len(rows),
        "instances": dict(actions),
        "samples": len(changed_samples(rows)),
        "reviewers": sorted({c.reviewer for c in rows}),
        "conflicts": [c.describe() for c in correction_conflicts(rows)],
        "table": table,
        "summaries": summaries,
    }


def corrections_json(section: dict[str, Any] | None) -> dict[str, Any] | None:
    if section is None:
        return None
    return {**section, "table": section["table"].to_json()}
