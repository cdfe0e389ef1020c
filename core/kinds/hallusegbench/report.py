"""HalluSegBench report layout: paper Table 1 (ΔIoU / CMS / CCMS), Table 2 (means with 95 %
confidence intervals) and Table 3 (small / medium / large); hallucination failure kinds."""

from __future__ import annotations

from typing import Any

from masklens.core.reports.layout import (
    Failure,
    KindLayout,
    Table,
    metric_groups_table,
    paper_table,
)
from masklens.core.reports.runs import ReportContext
from masklens.core.schema import Sample

MAIN = ("dIoU_textual", "dIoU_visual", "CMS_fact", "CMS_counterfact", "CCMS", "CCMS_item_mean")
CI = ("IoU_fact", "dIoU_textual", "dIoU_visual", "CMS_fact", "CMS_counterfact")
LABELS = {"dIoU_textual": "ΔIoU textual ↑", "dIoU_visual": "ΔIoU visual ↑",
          "CMS_fact": "CMS fact ↓", "CMS_counterfact": "CMS counterfact ↓",
          "CCMS": "CCMS (paper)", "CCMS_item_mean": "CCMS (script)"}
#: a query "hallucinates" when its CMS exceeds this; the factual query "misses" below this IoU
CMS_FAIL, IOU_FAIL = 0.5, 0.5


def _query(sample: Sample, folder: str) -> str:
    return next((p.id for p in sample.prompts if p.meta.get("folder") == folder
                 or p.id.endswith(":" + folder)), "")


class HalluLayout(KindLayout):
    headline_group = "all"
    headline = ("dIoU_textual", "dIoU_visual", "CMS_fact", "CMS_counterfact", "CCMS")
    sweep_params = ("alpha",)
    sweep_values = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)

    def tables(self, ctx: ReportContext) -> list[Table]:
        runs = ctx.runs
        tables = [
            paper_table("HalluSegBench metrics (paper Table 1)", runs, [("all", MAIN)],
                        labels=LABELS, id="hallu-main",
                        caption="CCMS (paper) = mean CMS_fact / mean CMS_counterfact; CCMS (script) "
                                "= mean of per-item ratios (official get_hallucination.py), named apart"),
            paper_table("IoU per query", runs,
                        [("all", ("N", "IoU_fact", "IoU_textual", "IoU_visual"))], id="hallu-iou"),
        ]
        rows = []
        for run in runs:
            s = run.result.summary.get("all", {})
            for m in CI:
                mean, hw = s.get(m), s.get(f"{m}_ci95")
                lo = mean - hw if isinstance(mean, float) and isinstance(hw, float) else None
                hi = mean + hw if isinstance(mean, float) and isinstance(hw, float) else None
                rows.append([f"{run.name} · {LABELS.get(m, m)}", mean, lo, hi, hw])
        tables.append(Table("Means and 95 % confidence intervals (paper Table 2)",
                            ["metric", "mean", "95% CI lower", "95% CI upper", "± half-width"],
                            rows, id="hallu-ci", caption="t-based half-width of the mean"))
        tables.append(metric_groups_table(
            "By ground-truth mask size (paper Table 3)", runs, ("N", *MAIN[:5]), ("S", "M", "L"),
            labels=LABELS, id="hallu-sml",
            caption="S: area < 32², M: 32² ≤ area < 96², L: area ≥ 96² (COCO thresholds, factual mask)"))
        return tables

    def figures(self, ctx: ReportContext):
        from masklens.core.reports.plots import grouped_bars

        groups = [g for g in ("S", "M", "L", "all") if any(g in r.result.summary for r in ctx.runs)]
        return [
            grouped_bars(f"{LABELS[m]} by mask size", groups, {
                r.name: [r.result.summary.get(g, {}).get(m) for g in groups] for r in ctx.runs
            }, ylabel=m)
            for m in ("dIoU_visual", "CMS_counterfact")
        ]

    def failures(self, sample: Sample, readout: dict[str, Any]) -> list[Failure]:
        out = []
        f, c, iou = readout.get("CMS_fact"), readout.get("CMS_counterfact"), readout.get("IoU_fact")
        fact = _query(sample, "orgl_orgi")
        if isinstance(f, (int, float)) and f > CMS_FAIL:
            out.append(Failure("c′ found on the factual image (CMS_fact)", float(f),
                               (fact, _query(sample, "edtl_orgi")), f"CMS_fact {f:.3f}"))
        if isinstance(c, (int, float)) and c > CMS_FAIL:
            out.append(Failure("c found on the counterfactual image (CMS_counterfact)", float(c),
                               (fact, _query(sample, "orgl_edti")), f"CMS_counterfact {c:.3f}"))
        if isinstance(iou, (int, float)) and iou < IOU_FAIL:
            out.append(Failure("factual object missed (IoU_fact < 0.5)", 1.0 - float(iou),
                               (fact,), f"IoU_fact {iou:.3f}"))
        return out

    def sample_ok(self, sample: Sample, readout: dict[str, Any]) -> bool | None:
        if all(readout.get(k) is None for k in ("CMS_fact", "CMS_counterfact", "IoU_fact")):
            return None
        return not self.failures(sample, readout)

    def gallery_prompts(self, sample: Sample, failure: Failure) -> list[str]:
        return [p for p in failure.prompt_ids if p] or [p.id for p in sample.prompts]


LAYOUT = HalluLayout()
