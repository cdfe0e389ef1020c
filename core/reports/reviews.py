"""Reviewers' verdicts in a report: counts per edit type, samples taken out, metrics without them."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any

from masklens.core.reports.layout import KindLayout, Table, paper_table
from masklens.core.reports.runs import ReportContext
from masklens.core.review.agreement import agreement
from masklens.core.review.verdict_types import VERDICT_TYPES, excluding_verdicts
from masklens.core.review.verdicts import Verdict


def review_section(ctx: ReportContext, layout: KindLayout) -> dict[str, Any] | None:
    """None without verdicts; otherwise counts, excluded samples, recomputed tables, agreement."""
    ids = {s.id: s for s in ctx.benchmark.samples}
    verdicts = [v for v in ctx.verdicts if v.verdict and v.sample_id in ids]
    if not verdicts:
        return None
    counts = _counts_table(ctx, verdicts)
    drop = excluding_verdicts()
    excluded: dict[str, list[Verdict]] = {}
    for v in verdicts:
        if v.verdict in drop:
            excluded.setdefault(v.sample_id, []).append(v)
    index = {s.id: i for i, s in enumerate(ctx.benchmark.samples)}
    listed = []
    for sid, vs in sorted(excluded.items(), key=lambda kv: index[kv[0]]):
        sample = ids[sid]
        failing = {}
        for run in ctx.runs:
            layout.prepare(ctx, run)
            failing[run.name] = bool(layout.failures(sample, run.result.samples[index[sid]]))
        listed.append({
            "sample": sid,
            "group": sample.group,
            "verdicts": [
                {"verdict": VERDICT_TYPES[v.verdict].label if v.verdict in VERDICT_TYPES else v.verdict,
                 "prompt": v.prompt_id,
                 "prompt_text": prompt_words(sample, v.prompt_id), "reviewer": v.reviewer, "note": v.note}
                for v in vs
            ],
            "failing": failing,
        })
    keep = [i for i, s in enumerate(ctx.benchmark.samples) if s.id not in excluded]
    recomputed, note = None, ""
    if excluded and not keep:
        note = "every sample was reviewed out: nothing left to recompute the metrics on"
    elif excluded:
        try:
            recomputed = _recomputed(ctx, layout, keep)
        except Exception as exc:  # noqa: BLE001 - a kind's summarize may not take a subset
            note = f"metrics could not be recomputed without them ({type(exc).__name__}: {exc})"
    ag = agreement(verdicts)
    return {
        "verdicts": len(verdicts),
        "reviewers": sorted({v.reviewer for v in verdicts}),
        "counts": counts,
        "excluded": listed,
        "kept_samples": len(keep),
        "recomputed": recomputed,
        "recomputed_note": note,
        "agreement": ag.to_json() if len(ag.reviewers) >= 2 else None,
    }


def prompt_words(sample: Any, prompt_id: str) -> str:
    """A verdict's prompt as a reader knows it: “text” (role); its id only when the sample no
    longer has it; "" for a verdict on the whole sample."""
    if not prompt_id:
        return ""
    try:
        p = sample.prompt(prompt_id)
    except KeyError:
        return f"prompt {prompt_id}"
    return f"“{p.text}” ({p.role.value})"


def _counts_table(ctx: ReportContext, verdicts: list[Verdict]) -> Table:
    groups = {s.id: s.group or "—" for s in ctx.benchmark.samples}
    order = list(dict.fromkeys(groups.values()))
    keys = [k for k in VERDICT_TYPES if any(v.verdict == k for v in verdicts)]
    c = Counter((groups[v.sample_id], v.verdict) for v in verdicts)
    rows = [[g, *[c[(g, k)] for k in keys], sum(c[(g, k)] for k in keys)] for g in order]
    rows.append(["All", *[sum(c[(g, k)] for g in order) for k in keys], len(verdicts)])
    group = ctx.kind.group_name
    return Table(
        f"Verdicts per {group.replace('_', ' ')}",
        [group, *[VERDICT_TYPES[k].label for k in keys], "total"],
        rows,
        caption="current verdict of each reviewer on each sample or prompt",
        id="verdict-counts",
    )


def _recomputed(ctx: ReportContext, layout: KindLayout, keep: list[int]) -> Table:
    """Headline metrics per group with all samples and without the excluded ones."""
    kind, samples = ctx.kind, ctx.benchmark.samples
    rows = []
    for run in ctx.runs:
        kept_summary = kind.summarize(
            [samples[i] for i in keep],
            [run.scorer.overlaps[i] for i in keep],
            [run.result.samples[i] for i in keep],
            ctx.params,
        )
        rows.append(SimpleNamespace(name=f"{run.name} — all samples", result=run.result))
        rows.append(SimpleNamespace(
            name=f"{run.name} — without {len(samples) - len(keep)} reviewed-out",
            result=SimpleNamespace(summary=kept_summary),
        ))
    metrics = layout.headline_metrics(ctx)
    return paper_table(
        "Metrics recomputed without samples reviewed as ground truth wrong / edit invalid",
        rows,  # type: ignore[arg-type]
        [(g, metrics) for g in kind.groups],
        id="recomputed",
    )
