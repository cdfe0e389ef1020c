"""Several models side by side: per-sample differences (which samples one model fixes, the other breaks)."""

from __future__ import annotations

from typing import Any

from masklens.core.reports.layout import KindLayout
from masklens.core.reports.runs import ReportContext


def differences(ctx: ReportContext, layout: KindLayout, *, limit: int = 50) -> list[dict[str, Any]]:
    """For each model after the first: samples it fixes / breaks relative to the first model."""
    if len(ctx.runs) < 2:
        return []
    ref = ctx.runs[0]
    samples = ctx.benchmark.samples
    layout.prepare(ctx, ref)
    ref_ok = [layout.sample_ok(s, r) for s, r in zip(samples, ref.result.samples, strict=True)]
    out = []
    for run in ctx.runs[1:]:
        fixes, breaks, both_fail, both_ok = [], [], 0, 0
        layout.prepare(ctx, run)
        for s, r, a in zip(samples, run.result.samples, ref_ok, strict=True):
            b = layout.sample_ok(s, r)
            if a is None or b is None:
                continue
            if not a and b:
                fixes.append({"sample": s.id, "group": s.group})
            elif a and not b:
                breaks.append({"sample": s.id, "group": s.group})
            elif a and b:
                both_ok += 1
            else:
                both_fail += 1
        out.append({
            "reference": ref.name,
            "model": run.name,
            "fixes": len(fixes),
            "breaks": len(breaks),
            "both_ok": both_ok,
            "both_fail": both_fail,
            "fixed_samples": fixes[:limit],
            "broken_samples": breaks[:limit],
        })
    return out
