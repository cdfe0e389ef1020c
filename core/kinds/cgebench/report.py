"""CGEBench report layout: mean IoGT and cumulative intersection over p0…p3 (paper Fig. 2) and
the zero / partial / full IoGT distribution per level (Fig. 3); generalisation failures."""

from __future__ import annotations

from typing import Any

from masklens.core.reports.layout import Failure, KindLayout, Table, paper_table
from masklens.core.reports.runs import ReportContext
from masklens.core.schema import Sample

LEVELS = ("p0", "p1", "p2", "p3")
#: a sample fails to generalise when IoGT at some level drops below this
IOGT_FAIL = 0.5


class CgeLayout(KindLayout):
    headline_group = "p3"
    headline = ("IoGT", "cumulative", "zero", "full")
    sweep_params = ("score_threshold",)

    def tables(self, ctx: ReportContext) -> list[Table]:
        runs = ctx.runs
        return [
            paper_table("Mean IoGT and cumulative intersection per level (paper Fig. 2)", runs,
                        [(g, ("IoGT", "cumulative")) for g in LEVELS], id="cge-iogt",
                        caption="IoGT = |M(p_k) ∩ G| / |G|; cumulative c(i) = |(∩_{k≤i} M(p_k)) ∩ G| / |G|"),
            paper_table("IoGT distribution per level (paper Fig. 3)", runs,
                        [(g, ("N", "zero", "partial", "full")) for g in LEVELS], id="cge-dist",
                        caption="shares of entries with IoGT exactly 0, in between, exactly 1"),
        ]

    def figures(self, ctx: ReportContext):
        from masklens.core.reports.plots import lines, stacked_bars

        series = {}
        for r in ctx.runs:
            for m in ("IoGT", "cumulative"):
                label = m if len(ctx.runs) == 1 else f"{r.name}: {m}"
                series[label] = [r.result.summary.get(g, {}).get(m) for g in LEVELS]
        figs = [lines("Mean IoGT and cumulative intersection over levels", list(LEVELS), series,
                      xlabel="prompt level", ylabel="mean")]
        for r in ctx.runs:
            figs.append(stacked_bars(
                f"IoGT distribution per level — {r.name}", list(LEVELS),
                {k: [r.result.summary.get(g, {}).get(k) for g in LEVELS]
                 for k in ("zero", "partial", "full")},
                ylabel="share of entries", colors=("#D55E00", "#E69F00", "#009E73")))
        return figs

    def failures(self, sample: Sample, readout: dict[str, Any]) -> list[Failure]:
        levels = readout.get("levels") or []
        vals = [lv.get("IoGT") for lv in levels]
        if not vals or vals[0] is None:
            return []
        out = []
        prompts = tuple(lv.get("prompt_id", "") for lv in levels)
        zero = [k for k, v in enumerate(vals) if k > 0 and v == 0]
        if zero:
            out.append(Failure("general prompt finds nothing (IoGT = 0)", 4 - zero[0] + vals[0],
                               prompts, f"IoGT 0 from p{zero[0]} on"))
        low = [k for k, v in enumerate(vals) if v is not None and 0 < v < IOGT_FAIL]
        if low:
            worst = min(vals[k] for k in low)
            out.append(Failure("partial generalisation (0 < IoGT < 0.5)", 1.0 - worst, prompts,
                               "IoGT " + " → ".join("—" if v is None else f"{v:.2f}" for v in vals)))
        return out

    def sample_ok(self, sample: Sample, readout: dict[str, Any]) -> bool | None:
        vals = [lv.get("IoGT") for lv in readout.get("levels") or []]
        if not vals or any(v is None for v in vals):
            return None
        return min(vals) >= IOGT_FAIL


LAYOUT = CgeLayout()
