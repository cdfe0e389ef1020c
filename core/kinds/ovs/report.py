"""Mask-wise OVS report layout: the protocol's summary (τ*, front, back, err, AUC), the
front / back / err curves over thresholds 0.1…0.9, the out-matched (ambiguous) pairs and
the ambiguous-vocabulary communities; images with out-matched masks as failures."""

from __future__ import annotations

from typing import Any

from masklens.core.reports.layout import (
    Failure,
    KindLayout,
    Table,
    group_columns_table,
    paper_table,
)
from masklens.core.reports.runs import ModelRun, ReportContext
from masklens.core.schema import Sample

THRESHOLDS = tuple(f"{k / 10:.1f}" for k in range(1, 10))
#: an image fails when its front at τ* is below this
FRONT_FAIL = 0.5


class OvsLayout(KindLayout):
    headline_group = "all"
    headline = ("front", "back", "err", "outmatched")
    sweep_params = ("av_threshold",)

    def tables(self, ctx: ReportContext) -> list[Table]:
        runs = ctx.runs
        tables = [
            paper_table("Mask-wise evaluation (paper Table 1)", runs,
                        [("all", ("tau_star", "front", "back", "err", "AUC", "outmatched",
                                  "N", "classes", "vocabulary"))],
                        labels={"tau_star": "τ*"}, id="ovs-main",
                        caption="front, back and err at the best threshold τ* (paper's rule); "
                                "AUC of front over err across thresholds"),
            group_columns_table("front / back / err per threshold", runs, THRESHOLDS,
                                ("front", "back", "err", "err_mask_mean", "outmatched"),
                                id="ovs-curve"),
            paper_table("Ambiguous vocabulary", runs,
                        [("all", ("communities", "modularity", "community_rate"))],
                        id="ovs-graph",
                        caption="communities of the out-matched-pairs graph at τ* (networkx, modularity)"),
        ]
        rows = []
        for run in runs:
            graph = (run.result.extras or {}).get("ambiguity_graph") or {}
            for i, members in enumerate(graph.get("communities") or [], 1):
                rows.append([run.name, i, ", ".join(map(str, members))])
        if rows:
            tables.append(Table("Ambiguous-vocabulary communities at τ*",
                                ["model", "community", "vocabulary entries"], rows, id="ovs-comm"))
        pairs = []
        for run in runs:
            extras = run.result.extras or {}
            key = _key(extras.get("tau_star"))
            for g, p, n in (extras.get("outmatched_pairs") or {}).get(key, []):
                pairs.append([run.name, g, p, n])
        if pairs:
            tables.append(Table("Out-matched pairs at τ* (ground-truth class, predicted class)",
                                ["model", "ground truth", "predicted", "images"], pairs,
                                id="ovs-pairs"))
        return tables

    def figures(self, ctx: ReportContext):
        from masklens.core.reports.plots import lines

        xs = [float(t) for t in THRESHOLDS]
        figs = []
        for metrics, title in ((("front", "back"), "front and back over thresholds"),
                               (("err",), "err over thresholds")):
            series = {}
            for r in ctx.runs:
                for m in metrics:
                    label = m if len(ctx.runs) == 1 else f"{r.name}: {m}"
                    series[label] = [r.result.summary.get(t, {}).get(m) for t in THRESHOLDS]
            star = ctx.runs[0].result.summary.get("all", {}).get("tau_star") if ctx.runs else None
            figs.append(lines(title, xs, series, xlabel="threshold τ", ylabel="value",
                              marker_at=star, caption="dotted line: τ*"))
        return figs

    def __init__(self) -> None:
        self._tau_key = "0.5"

    def prepare(self, ctx: ReportContext, run: ModelRun) -> None:
        self._tau_key = _key((run.result.extras or {}).get("tau_star")) or "0.5"

    def failures(self, sample: Sample, readout: dict[str, Any]) -> list[Failure]:
        at = (readout.get("thresholds") or {}).get(self._tau_key)
        if not at:
            return []
        out = []
        pairs = at.get("outmatched") or []
        if pairs:
            predicted = {p for _, p, *_ in pairs}
            ids = tuple(q.id for q in sample.prompts if q.text in predicted)
            out.append(Failure("out-matched by another vocabulary entry", float(len(pairs)), ids,
                               "; ".join(f"{g} ← {p}" for g, p, *_ in pairs)))
        front = at.get("front")
        if isinstance(front, (int, float)) and front < FRONT_FAIL:
            ids = tuple(q.id for q in sample.prompts if q.gt)
            out.append(Failure("low front (< 0.5)", 1.0 - front, ids, f"front {front:.3f}"))
        return out

    def gallery_threshold(self, ctx: ReportContext, run: ModelRun) -> float | None:
        return (run.result.extras or {}).get("tau_star") or 0.5


def _key(t: Any) -> str:
    return f"{float(t):.1f}" if isinstance(t, (int, float)) else ""


LAYOUT = OvsLayout()
