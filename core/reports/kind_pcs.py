"""SA-Co/Gold (PCS) report layout: cgF1 / IL_MCC / pmF1 / IL_FPR with the @0.5 / @0.75 variants."""

from __future__ import annotations

from masklens.core.reports.layout import KindLayout, Table, paper_table
from masklens.core.reports.runs import ReportContext

METRICS = ("cgF1", "IL_MCC", "pmF1", "IL_FPR", "cgF1@0.5", "cgF1@0.75", "pmF1@0.5", "pmF1@0.75")


class PcsLayout(KindLayout):
    headline = ("cgF1", "IL_MCC", "pmF1")
    sweep_params = ("score_threshold",)

    def tables(self, ctx: ReportContext) -> list[Table]:
        groups = list(ctx.kind.groups) or sorted({g for r in ctx.runs for g in r.result.summary})
        present = [m for m in METRICS if any(m in r.result.summary.get(g, {})
                                               for r in ctx.runs for g in groups)]
        tables = [paper_table("PCS metrics (SAM 3 protocol)", ctx.runs,
                              [(g, present or self.headline) for g in groups], id="pcs-main")]
        return tables + super().tables(ctx)


LAYOUT = PcsLayout()
