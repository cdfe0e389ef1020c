"""SA-Co/Gold (PCS) report layout: cgF1 / IL_MCC / pmF1 / IL_FPR with the @0.5 / @0.75
variants; image-level and instance-level failures per (image, noun phrase) entry."""

from __future__ import annotations

from typing import Any

from masklens.core.reports.layout import Failure, KindLayout, Table, paper_table
from masklens.core.reports.runs import ReportContext
from masklens.core.schema import Sample

METRICS = ("cgF1", "IL_MCC", "pmF1", "IL_FPR", "cgF1@0.5", "cgF1@0.75", "pmF1@0.5", "pmF1@0.75")
IMAGE_LEVEL = ("N", "IL_TP", "IL_FP", "IL_TN", "IL_FN", "IL_precision", "IL_recall", "IL_F1")


class PcsLayout(KindLayout):
    headline = ("cgF1", "IL_MCC", "pmF1")
    sweep_params = ("score_threshold",)

    def tables(self, ctx: ReportContext) -> list[Table]:
        groups = list(ctx.kind.groups) or sorted({g for r in ctx.runs for g in r.result.summary})

        def present(ms: tuple[str, ...]) -> list[str]:
            return [m for m in ms if any(m in r.result.summary.get(g, {})
                                         for r in ctx.runs for g in groups)]

        return [
            paper_table("PCS metrics (SAM 3 protocol)", ctx.runs,
                        [(g, present(METRICS) or self.headline) for g in groups], id="pcs-main",
                        caption="cgF1 = mean over IoU thresholds 0.50:0.05:0.95 of pmF1 × IL_MCC; "
                                "only instance-exhaustive entries count"),
            paper_table("Image-level classification", ctx.runs,
                        [(g, present(IMAGE_LEVEL)) for g in groups], id="pcs-il"),
        ]

    def figures(self, ctx: ReportContext):
        return []  # one group: the tables and the sweep say it all

    def failures(self, sample: Sample, readout: dict[str, Any]) -> list[Failure]:
        il, score = readout.get("IL"), float(readout.get("max_score") or 0.0)
        prompts = tuple(p.id for p in sample.prompts)
        text = f"“{readout.get('text', '')}”"
        if il == "FP":
            return [Failure("concept absent but predicted (image-level FP)", score, prompts,
                            f"{text}: max score {score:.3f}")]
        if il == "FN":
            return [Failure("concept present but missed (image-level FN)", 1.0 - score, prompts,
                            f"{text}: max score {score:.3f}")]
        fp, fn = int(readout.get("FP@0.5") or 0), int(readout.get("FN@0.5") or 0)
        if il == "TP" and fp + fn:
            n = int(readout.get("n_gt") or 0) + int(readout.get("n_accepted") or 0)
            return [Failure("instance errors at IoU 0.5", (fp + fn) / max(n, 1), prompts,
                            f"{text}: {fp} FP, {fn} FN")]
        return []

    def sample_ok(self, sample: Sample, readout: dict[str, Any]) -> bool | None:
        if readout.get("IL") is None:
            return None
        return not self.failures(sample, readout)


LAYOUT = PcsLayout()
