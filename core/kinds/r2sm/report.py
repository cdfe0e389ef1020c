"""R2SM report layout: gIoU / cIoU for all and amodal queries (paper Table 2), AP / AR
(Table 3); failures per query (wrong mask type, low IoU)."""

from __future__ import annotations

from typing import Any

from masklens.core.reports.layout import Failure, KindLayout, Table, paper_table
from masklens.core.reports.runs import ReportContext
from masklens.core.schema import Sample

#: a query fails below this IoU against the requested mask
IOU_FAIL = 0.5


class R2smLayout(KindLayout):
    headline_group = "all"
    headline = ("gIoU", "cIoU", "AP", "AR")
    sweep_params = ("score_threshold",)

    def tables(self, ctx: ReportContext) -> list[Table]:
        runs = ctx.runs
        return [
            paper_table("gIoU and cIoU (paper Table 2)", runs,
                        [(g, ("gIoU", "cIoU")) for g in ("all", "amodal", "modal")], id="r2sm-iou",
                        caption="gIoU = mean per-query IoU (an empty union counts 1.0); cIoU = ΣI / ΣU"),
            paper_table("Class-agnostic AP / AR (paper Table 3)", runs,
                        [(g, ("AP", "AP50", "AP75", "APs", "APm", "APl", "AR"))
                         for g in ("all", "amodal")], id="r2sm-ap",
                        caption="pycocotools COCOeval, each query its own evaluation unit"),
            paper_table("Queries answered with the other mask type", runs,
                        [(g, ("N", "wrong_type")) for g in ("all", "amodal", "modal")],
                        id="r2sm-wrong",
                        caption="share of queries (whose modal and amodal masks differ) where the "
                                "prediction overlaps the other mask more than the requested one"),
        ]

    def failures(self, sample: Sample, readout: dict[str, Any]) -> list[Failure]:
        out = []
        for q in readout.get("queries") or []:
            iou, pid = q.get("IoU"), (q.get("prompt_id") or "",)
            if q.get("wrong_type"):
                other = "modal" if q.get("requested") == "amodal" else "amodal"
                out.append(Failure(f"{q.get('requested')} query answered with the {other} mask",
                                   float(q.get("IoU_other") or 0) - float(iou or 0), pid,
                                   f"IoU {float(iou or 0):.3f} vs {other} {float(q.get('IoU_other') or 0):.3f}"))
            elif isinstance(iou, (int, float)) and iou < IOU_FAIL:
                out.append(Failure("low IoU with the requested mask (< 0.5)", 1.0 - iou, pid,
                                   f"“{q.get('text', '')}”: IoU {iou:.3f}"))
        return out

    def sample_ok(self, sample: Sample, readout: dict[str, Any]) -> bool | None:
        if not readout.get("queries"):
            return None
        return not self.failures(sample, readout)


LAYOUT = R2smLayout()
