"""SA-Co/Gold (PCS, cgF1) card: the entry's image-level class (IL TP/FP/TN/FN) with its reason,
TP/FP/FN at IoU 0.5 and 0.75 against the oracle annotator, and a per-instance table (score,
accepted, IoU with the best-matching ground-truth instance of that annotator)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem, QVBoxLayout

from masklens.core.scoring.contract import InstanceMatches
from masklens.gui.cards import ReadoutCard
from masklens.gui.cards.widgets import HoverFrame, Tone, fmt
from masklens.gui.figures import fmt_pair

_IL = {"TP": Tone.PASS, "TN": Tone.PASS, "FP": Tone.FAIL, "FN": Tone.FAIL}
_IL_REASON = {
    "TP": "ground truth present and {n} prediction(s) accepted (s ≥ t {t})",
    "TN": "no ground truth and no prediction accepted (s ≥ t {t}): correctly empty",
    "FP": "no ground truth, yet {n} prediction(s) accepted (s ≥ t {t})",
    "FN": "ground truth present, but no prediction accepted (s ≥ t {t})",
}


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
        "instance_iou": "best: the instance's highest IoU with a non-crowd ground-truth instance of the "
                        "oracle annotator (whether or not the assignment pairs them)",
        "match_gt": "GT: the oracle annotator's non-crowd instance the one Hungarian assignment of cgF1 "
                    "(over the accepted predictions, maximising the summed IoU) pairs with it; – unmatched",
        "match_iou": "IoU of that pair; ✔ when ≥ 0.5 (a TP@0.5). Their count is TP@0.5",
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
        self._table(insts, prompt, t)  # hidden without instances: any entry updates this card

    def _matches(self, prompt: str | None) -> list[dict[str, Any]] | None:
        """The kind's per-instance assignment for this entry (None when it cannot be had)."""
        kind, rec = self.ctx.kind, self.record
        pred = self.ctx.prediction(prompt) if prompt is not None else None
        if pred is None or not isinstance(kind, InstanceMatches):
            return None
        return kind.instance_matches(self.ctx.sample, pred, self.ctx.params, int(rec.get("annotator") or 0))

    def _table(self, insts: list[dict[str, Any]], prompt: str | None, t: float) -> None:
        matches = self._matches(prompt)
        heads = ["#", "s", f"s ≥ {t:.2f}"] + (["GT", "IoU"] if matches else []) + ["best"]
        tips = ["instance index in the prediction", "score s", "accepted: s ≥ t"]
        if matches:
            tips += [self.tip("match_gt"), self.tip("match_iou")]
        tips.append(self.tip("instance_iou"))

        def make() -> tuple[HoverFrame, QTableWidget]:
            frame = HoverFrame()
            table = QTableWidget(len(insts), len(heads), frame)
            table.verticalHeader().setVisible(False)
            table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
            table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
            table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
            table.setMouseTracking(True)
            # the prompt is read when hovered: another entry's card may reuse this table
            def entered(row: int, _column: int) -> None:
                if frame.prompt is not None:
                    self.hovered.emit(frame.prompt, row)

            def left() -> None:
                if frame.prompt is not None:
                    self.hovered.emit(frame.prompt, -1)

            table.cellEntered.connect(entered)
            frame.left.connect(left)
            lay = QVBoxLayout(frame)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.addWidget(table)
            return frame, table

        # a slider step or another entry refills the same table (its header names t; rows and
        # columns follow the entry): no widget is made on a sample switch
        frame, table = self.table(("pcs",), make)
        frame.prompt = prompt
        frame.setVisible(bool(insts))
        if table.columnCount() != len(heads):
            table.setColumnCount(len(heads))
        if table.rowCount() != len(insts):
            table.setRowCount(len(insts))
        table.setHorizontalHeaderLabels(heads)
        for c, tip in enumerate(tips):
            table.horizontalHeaderItem(c).setToolTip(tip)
        for r, inst in enumerate(insts):
            for c, (text, colour) in enumerate(_cells(r, inst, matches[r] if matches else None, t)):
                _put(table, r, c, text, colour, tips[c])
        table.resizeColumnsToContents()
        table.setFixedHeight(min(8, len(insts)) * table.verticalHeader().defaultSectionSize()
                             + table.horizontalHeader().height() + 4)
        self.instance_table = table
        self.matches = matches
        if insts:
            self.numbers["instances"] = len(insts)


def _cells(r: int, inst: dict[str, Any], match: dict[str, Any] | None, t: float) -> list[tuple[str, str | None]]:
    """Instance ``r``'s row: (text, colour or None) per column."""
    acc = bool(inst.get("accepted"))
    cells: list[tuple[str, str | None]] = [(str(r), None), (_score_text(inst.get("score"), t), None),
                                           ("✔ yes" if acc else "✖ no", None if acc else "grey")]
    if match is not None:
        iou = match["iou"]
        cells.append(("–" if match["gt"] is None else str(match["gt"]), None))
        if iou is None:
            cells.append(("–", None))
        else:  # TP at IoU 0.5 or not: glyph and colour
            tp = iou >= 0.5
            cells.append((f"{'✔' if tp else '✖'} {iou:.3f}", Tone.PASS.colour if tp else Tone.FAIL.colour))
    cells.append((fmt(inst.get("iou")), None))
    return cells


_ALIGN = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def _put(table: QTableWidget, r: int, c: int, text: str, colour: str | None, tip: str) -> None:
    """Cell (r, c) shows ``text`` in ``colour`` (None: the default), on its existing item if any."""
    item = table.item(r, c)
    if item is None:
        item = QTableWidgetItem()
        item.setTextAlignment(_ALIGN)
        table.setItem(r, c, item)
    if item.text() != text:
        item.setText(text)
    if item.toolTip() != tip:
        item.setToolTip(tip)
    if colour:
        item.setForeground(QColor("gray" if colour == "grey" else colour))
    elif item.data(Qt.ItemDataRole.ForegroundRole) is not None:
        item.setData(Qt.ItemDataRole.ForegroundRole, None)


def _best_accepted(insts: list[dict[str, Any]]) -> int | None:
    """The accepted instance with the highest IoU (None when nothing was accepted)."""
    acc = [i for i, inst in enumerate(insts) if inst.get("accepted")]
    return max(acc, key=lambda i: insts[i].get("iou") or 0.0) if acc else None


def _score_text(score: Any, t: float) -> str:
    """A score beside "s ≥ t": enough decimals that the comparison reads as it was decided
    (0.4989 at t 0.50 is "0.499", not "0.50" next to "✖ no")."""
    if not isinstance(score, (int, float)) or isinstance(score, bool):
        return fmt(score, 2)
    return fmt_pair(float(score), float(t))[0]
