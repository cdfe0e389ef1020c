"""CAFE report layout: the paper's Table 2 (cgF1 / IL_MCC / pmF1) and Table 3 (FPR / AFPR /
ACSR / UFPR / UCSR) per SM, CC, OC and Overall, models as rows; per-pair failure kinds."""

from __future__ import annotations

from typing import Any

from masklens.core.reports.layout import (
    Failure,
    KindLayout,
    Table,
    group_columns_table,
    paper_table,
)
from masklens.core.reports.runs import ReportContext
from masklens.core.schema import Role, Sample

ORDER = ("SM", "CC", "OC", "Overall")
LABELS = {"IL_FPR": "FPR", "TA_FN_paper": "TA-FN", "UA_P": "UA-P", "UA_FN": "UA-FN",
          "TA_TP": "TA-TP", "TA_FP": "TA-FP", "UA_FP": "UA-FP"}


def _f(rec: dict[str, Any], *keys: str, default: float = 0.0) -> float:
    for k in keys:
        v = rec.get(k)
        if isinstance(v, (int, float)):
            return float(v)
    return default


class CafeLayout(KindLayout):
    headline_group = "Overall"
    headline = ("cgF1", "IL_MCC", "IL_FPR", "ACSR")

    def tables(self, ctx: ReportContext) -> list[Table]:
        runs = ctx.runs
        return [
            paper_table("PCS metrics on CAFE (paper Table 2)", runs,
                        [(g, ("cgF1", "IL_MCC", "pmF1")) for g in ORDER], id="cafe-pcs",
                        caption="cgF1 = mean over IoU thresholds 0.50:0.05:0.95 of pmF1 × IL_MCC "
                                "(SAM 3 protocol) over the subset's positive and negative entries"),
            paper_table("False positives and concept swaps (paper Table 3)", runs,
                        [(g, ("IL_FPR", "AFPR", "ACSR", "UFPR", "UCSR")) for g in ORDER],
                        labels=LABELS, id="cafe-fpr",
                        caption="rates divide by the number of pairs N; FPR = AFPR + UFPR"),
            group_columns_table("Target-aware classification counts", runs, ORDER,
                        ("N", "TA_TP", "UA_P", "TA_FN_paper", "UA_FN", "TA_FP", "UA_FP", "TN"),
                        labels=LABELS, id="cafe-counts",
                        caption="UA-P: accepted but unaligned positive (the paper counts it as a "
                                "false negative); TA-FN: aligned but below t"),
            paper_table("Swap rates", runs, [(g, ("CSR", "SoftSwap")) for g in ORDER], id="cafe-swap",
                        caption="SoftSwap: max negative score > max positive score (strict)"),
        ]

    def figures(self, ctx: ReportContext):
        from masklens.core.reports.plots import grouped_bars

        groups = [g for g in ORDER if any(g in r.result.summary for r in ctx.runs)]
        figs = []
        for m, title in (("IL_MCC", "IL_MCC per subset"), ("AFPR", "AFPR per subset")):
            figs.append(grouped_bars(title, groups, {
                r.name: [r.result.summary.get(g, {}).get(m) for g in groups] for r in ctx.runs
            }, ylabel=m))
        return figs

    def failures(self, sample: Sample, readout: dict[str, Any]) -> list[Failure]:
        out = []
        neg_score = _f(readout, "neg_max_score", "neg_score", "negative_max_score")
        pos_score = _f(readout, "pos_max_score", "pos_score", "positive_max_score")
        neg = tuple(p.id for p in sample.prompts if p.role == Role.NEGATIVE)
        both = tuple(p.id for p in sample.prompts)
        if readout.get("ACS"):
            out.append(Failure("concept swap (ACS)", neg_score - pos_score + 1.0, both,
                               "positive lost and negative accepted on the target"))
        if readout.get("TA_FP"):
            out.append(Failure("negative accepted on the target (TA-FP)", neg_score, both,
                               f"max negative score {neg_score:.3f}"))
        elif readout.get("UA_FP"):
            out.append(Failure("negative hallucinated elsewhere (UA-FP)", neg_score, neg or both,
                               f"max negative score {neg_score:.3f}"))
        if readout.get("TA_FN") and not readout.get("ACS"):
            out.append(Failure("positive prompt lost (not TA-TP)", 1.0 - pos_score, both,
                               f"max positive score {pos_score:.3f}"))
        return out

    def sample_ok(self, sample: Sample, readout: dict[str, Any]) -> bool | None:
        if "TA_TP" not in readout or "TN" not in readout:
            return None
        return bool(readout["TA_TP"]) and bool(readout["TN"])


LAYOUT = CafeLayout()
