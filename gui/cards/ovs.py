"""Mask-wise OVS card: this image's front and err at the benchmark's best threshold τ* (with the
benchmark's front/back/err there), its out-matched (ambiguous) pairs, and front/err/out-matched
at every threshold τ = 0.1 … 0.9 with τ* marked."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from masklens.gui.cards import ReadoutCard
from masklens.gui.cards.widgets import Tone, fmt


class OvsCard(ReadoutCard):
    HELP = {
        "front": "this image's mean foreground IoU over its ground-truth classes at τ: "
                 "mean_c |B(τ)_c ∩ M_c| / |B(τ)_c ∪ M_c| (null without ground truth)",
        "err": "Σ_c err_c at τ: share of the image covered by the masks of classes not in the image "
               "that were not out-matched (spurious masks; 0 = none)",
        "back": "benchmark back_τ* = mean over classes of TN/(TN+FP+FN) of the dataset-level "
                "confusion (not defined per image)",
        "outmatched": "pairs (ground-truth class, predicted class, IoU) of a predicted class absent "
                      "from the image whose mask matches another class's ground truth with IoU > τ_AV",
        "tau_star": "τ* = argmax_τ √(front_τ² + (1 − err_τ)²) over the whole benchmark",
    }

    def build(self) -> None:
        per: dict[str, dict[str, Any]] = dict(self.record.get("thresholds", {}))
        summary = self.ctx.summary() or {}
        whole = summary.get("all", {}) if isinstance(summary, dict) else {}
        tau_star = whole.get("tau_star")
        key = f"{tau_star:.1f}" if isinstance(tau_star, float) else None
        at = per.get(key) if key else None
        tau_av = self.ctx.param("av_threshold", 0.7)
        if at is not None:
            err: float = at["err"]
            tone = Tone.PASS if err == 0 else Tone.FAIL
            text = "no spurious mask" if err == 0 else f"spurious masks: {fmt(100 * err, 1)}% of image"
            reason = (f"at τ* {key}: {at.get('predicted')} class(es) predicted, "
                      f"{len(at.get('outmatched', []))} out-matched (IoU > τ_AV {tau_av:.2f})")
            self.verdict("verdict", text, tone, self.tip("err"), reason)
            g = self.grid()
            self.add_metric(g, "front_tau_star", f"front @τ* {key}", at.get("front"), tooltip=self.tip("front"))
            self.add_metric(g, "err_tau_star", f"err @τ* {key}", err, tone=tone, tooltip=self.tip("err"))
            self.add_metric(g, "back_all", "back @τ* (benchmark)", whole.get("back"), tooltip=self.tip("back"))
            pairs = at.get("outmatched", [])
            if pairs:  # ambiguous, not wrong: the partial tone, and a text that wraps in a narrow dock
                text = " · ".join(f"{gt}→{pred} {float(iou):.2f}" for gt, pred, iou in pairs)
                self.line(f"{Tone.PARTIAL.glyph} out-matched: {text}", self.tip("outmatched"),
                          bold=True, colour=Tone.PARTIAL.colour)
            self.numbers["outmatched_tau_star"] = len(pairs)
        else:
            self.note("τ* not known yet (the benchmark summary is being computed): every τ below",
                      self.tip("tau_star"))
        self.numbers["tau_star"] = tau_star
        self._table(per, key)

    def _table(self, per: dict[str, dict[str, Any]], star: str | None) -> None:
        def make() -> QTableWidget:
            table = QTableWidget(len(per), 4)
            table.setHorizontalHeaderLabels(["τ", "front", "err", "out-m."])
            table.verticalHeader().setVisible(False)
            table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
            table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
            return table

        table = self.table(("ovs", len(per)), make)  # a slider step refills the same table
        tips = ["threshold τ: B(τ) = {score ≥ τ}", self.tip("front"), self.tip("err"), self.tip("outmatched")]
        for c, tip in enumerate(tips):
            table.horizontalHeaderItem(c).setToolTip(tip)
        bold = QFont()
        bold.setBold(True)
        for r, (tau, vals) in enumerate(per.items()):
            cells = [f"{tau} τ*" if tau == star else tau, fmt(vals.get("front")), fmt(vals.get("err")),
                     str(len(vals.get("outmatched", [])))]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(tips[c])
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if tau == star:
                    item.setFont(bold)
                table.setItem(r, c, item)
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
        table.resizeColumnsToContents()
        table.setFixedHeight(len(per) * table.verticalHeader().defaultSectionSize()
                             + table.horizontalHeader().height() + 4)
        self.threshold_table = table
