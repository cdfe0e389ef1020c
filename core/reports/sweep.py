"""Threshold sweep: headline metrics over t, τ, … re-derived from cached overlaps (readouts + summary)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from masklens.core.reports.layout import Figure, KindLayout
from masklens.core.reports.plots import lines
from masklens.core.reports.runs import ReportContext


def sweep(ctx: ReportContext, layout: KindLayout,
          progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """{param: {"values": [...], "group": g, "series": {model: {metric: [...]}}}}.

    ``progress(done, total)`` is called after each point (a point = one model at one value).

    Each point is the kind's readouts and summary (what ``scorer.rescore`` derives, less its
    notes and extras) with one parameter moved and the others at the report's values; no mask is
    touched again.
    """
    group = layout.group_of(ctx)
    metrics = layout.headline_metrics(ctx)
    specs = {p.name: p for p in ctx.kind.params}
    out: dict[str, Any] = {}
    grids = {}
    for name in layout.sweep_params:
        spec = specs.get(name)
        if spec is not None:
            grid = set(layout.sweep_values) | {float(ctx.params.get(name, spec.default))}
            grids[name] = sorted(v for v in grid if spec.minimum <= v <= spec.maximum)
    total, done = sum(len(v) for v in grids.values()) * len(ctx.runs), 0
    for name in layout.sweep_params:
        spec = specs.get(name)
        if spec is None:
            continue
        values = grids[name]
        series: dict[str, dict[str, list[Any]]] = {}
        for run in ctx.runs:
            per_metric: dict[str, list[Any]] = {m: [] for m in metrics}
            for v in values:  # readouts + summary only (rescore would also derive notes and extras)
                p = ctx.kind.resolve_params({**ctx.params, name: v})
                summary = ctx.kind.summarize(ctx.benchmark.samples, run.scorer.overlaps,
                                             run.scorer.readouts(p), p).get(group, {})
                for m in metrics:
                    per_metric[m].append(summary.get(m))
                done += 1
                if progress is not None:
                    progress(done, total)
            series[run.name] = per_metric
        out[name] = {
            "symbol": spec.symbol or name,
            "values": values,
            "current": ctx.params.get(name),
            "group": group,
            "series": series,
        }
    return out


def _is_fraction(vals: list[Any]) -> bool:
    return all(v is None or (isinstance(v, (int, float)) and -1.0 <= v <= 1.0) for v in vals)


def sweep_figures(data: dict[str, Any]) -> list[Figure]:
    """One plot per parameter; metrics that are not fractions (counts, ratios > 1) get
    their own plot so they do not flatten the others."""
    figs = []
    for name, d in data.items():
        parts: dict[bool, dict[str, list[Any]]] = {True: {}, False: {}}
        looks: dict[bool, list[tuple[int, int]]] = {True: [], False: []}
        metrics = list(next(iter(d["series"].values()), {}))
        for j, (model, per_metric) in enumerate(d["series"].items()):
            for m, vals in per_metric.items():
                label = f"{m}" if len(d["series"]) == 1 else f"{model}: {m}"
                frac = _is_fraction(vals)
                parts[frac][label] = vals
                looks[frac].append((metrics.index(m), j))  # colour = metric, dashes = model
        for fractions, flat in parts.items():
            if not flat:
                continue
            figs.append(
                lines(
                    f"Sweep of {d['symbol']} ({name}), group {d['group']}"
                    + ("" if fractions else " — counts / ratios"),
                    d["values"],
                    flat,
                    xlabel=f"{d['symbol']} ({name})",
                    ylabel="value",
                    marker_at=d.get("current"),
                    caption="other parameters at the report's values; dotted line: the report's value"
                    + ("; colour = metric, line style = model" if len(d["series"]) > 1 else ""),
                    styles=looks[fractions] if len(d["series"]) > 1 else None,
                )
            )
    return figs
