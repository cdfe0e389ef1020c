"""SA-Co/Gold (PCS, cgF1) card: the entry's image-level class (IL TP/FP/TN/FN) with its reason,
TP/FP/FN at IoU 0.5 and 0.75 against the oracle annotator, and a per-instance table (score,
accepted, IoU with the best-matching ground-truth instance of that annotator)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem, QVBoxLayout

from masklens.gui.cards import ReadoutCard, register_card
from masklens.gui.cards.widgets import HoverFrame, Tone, fmt

_IL = {"TP": Tone.PASS, "TN": Tone.PASS, "FP": Tone.FAIL, "FN": Tone.FAIL}
_IL_REASON = {
    "TP": "ground truth present and {n} prediction(s) accepted (s ≥ t {t})",
    "TN": "no ground truth and no prediction accepted (s ≥ t {t}): correctly empty",
    "FP": "no ground truth, yet {n} prediction(s) accepted (s ≥ t {t})",
    "FN": "ground truth present, but no prediction accepted (s ≥ t {t})",
}


@register_card("pcs")
class PcsCard(ReadoutCard):
    HELP = {
        "IL": "image-level class of the entry: TP/FN when it has non-crowd ground truth (with/without "
              "an accepted prediction), FP/TN without (SAM 3 protocol)",
        "TP@0.5": "Hungarian matches with IoU ≥ 0.5 between accepted predictions and the oracle "
                  "annotator's non-crowd instances",
        "FP@0.5": "accepted predictions − TP@0.5",
        "FN@0.5": "ground-truth instances − TP@0.5",
        "TP@0.75": "Hungarian matches with IoU ≥ 0.75",
        "local_F1": "this entry's F1, mean over IoU 0.50:0.05:0.95 (null for an IL TN)",
        "annotator": "the annotator file whose ground truth gives this entry its best local F1 (oracle)",
        "instance_iou": "IoU of the instance with the best-matching non-crowd ground-truth instance of "
                        "the oracle annotator (not the Hungarian assignment)",
    }

    def build(self) -> None:
        rec = self.record
        il = str(rec.get("IL"))
        t = self.ctx.param("score_threshold", 0.5)
        reason = _IL_REASON.get(il, "").format(n=rec.get("n_accepted"), t=f"{t:.2f}")
        if not rec.get("exhaustive", True):
            reason += " · not instance-exhaustive: excluded from cgF1"
        prompt = self.ctx.sample.prompts[0].id if self.ctx.sample.prompts else None
        insts = rec.get("instances", [])
        best = _best_accepted(insts)
        self.verdict("IL", f"IL {il}", _IL.get(il, Tone.NONE), self.tip("IL"), reason,
                     prompt=prompt if best is not None else None, instance=best,
                     lead=f"“{rec.get('text', '')}”")
        g = self.grid()
        n_gt = rec.get("n_gt") or 0
        for key in ("TP@0.5", "FP@0.5", "FN@0.5", "TP@0.75"):
            value = rec.get(key)
            good = key.startswith("TP")
            tone = Tone.NEUTRAL if not value else Tone.PASS if good else Tone.FAIL
            self.add_metric(g, key, key, value, tone=tone, bar=(0.0, float(max(n_gt, rec.get("n_accepted") or 0, 1))))
        self.add_metric(g, "local_F1", "local F1", rec.get("local_F1"))
        self.note(f"{rec.get('n_accepted')} accepted of {rec.get('n_pred')} · {n_gt} ground-truth instance(s)"
                  f" · oracle annotator {rec.get('annotator')}", self.tip("annotator"))
        if insts:
            self._table(insts, prompt, t)

    def _table(self, insts: list[dict[str, Any]], prompt: str | None, t: float) -> None:
        frame = HoverFrame()
        table = QTableWidget(len(insts), 4, frame)
        table.setHorizontalHeaderLabels(["#", "s", f"s ≥ {t:.2f}", "IoU"])
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        table.setMouseTracking(True)
        tips = ["instance index in the prediction", "score s", "accepted: s ≥ t", self.tip("instance_iou")]
        for c, tip in enumerate(tips):
            table.horizontalHeaderItem(c).setToolTip(tip)
        for r, inst in enumerate(insts):
            acc = bool(inst.get("accepted"))
            cells = [str(r), fmt(inst.get("score"), 2), "✔ yes" if acc else "✖ no", fmt(inst.get("iou"))]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(tips[c])
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if c == 2:
                    item.setForeground(Qt.GlobalColor.darkGreen if acc else Qt.GlobalColor.darkGray)
                table.setItem(r, c, item)
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
        table.resizeColumnsToContents()
        table.setFixedHeight(min(8, len(insts)) * table.verticalHeader().defaultSectionSize()
                             + table.horizontalHeader().height() + 4)
        if prompt is not None:
            table.cellEntered.connect(lambda r, _c: self.hovered.emit(prompt, r))
            frame.left.connect(lambda: self.hovered.emit(prompt, -1))
        lay = QVBoxLayout(frame)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(table)
        self.lay.addWidget(frame)
        self.instance_table = table
        self.numbers["instances"] = len(insts)


def _best_accepted(insts: list[dict[str, Any]]) -> int | None:
    """The accepted instance with the highest IoU (None when nothing was accepted)."""
    acc = [i for i, inst in enumerate(insts) if inst.get("accepted")]
    return max(acc, key=lambda i: insts[i].get("iou") or 0.0) if acc else None
