"""R2SM card: per query the requested mask type, IoU against the requested and the other mask, and
a clear flag when the answer is closer to the other type ("answered with the modal mask")."""

from __future__ import annotations

from typing import Any

from masklens.gui.cards import ReadoutCard
from masklens.gui.cards.widgets import Tone, fmt


class R2smCard(ReadoutCard):
    HELP = {
        "IoU": "IoU of the union of the instances with s ≥ t against the requested mask "
               "(an empty union against an empty mask counts 1.0 in gIoU)",
        "IoU_other": "IoU of the same union against the other mask type (modal ↔ amodal)",
        "wrong_type": "the modal and amodal masks differ and the answer's IoU with the other "
                      "type is higher than with the requested one",
        "gIoU": "mean of this image's query IoUs",
    }

    def build(self) -> None:
        queries: list[dict[str, Any]] = list(self.record.get("queries", []))
        if self.focus is not None:
            queries = [q for q in queries if q.get("prompt_id") == self.focus] or queries
        for q in queries:
            self._query(q)
        if self.focus is None:
            g = self.grid()
            self.add_metric(g, "gIoU", "gIoU (image)", self.record.get("gIoU"))

    def _query(self, q: dict[str, Any]) -> None:
        pid = str(q.get("prompt_id"))
        requested = str(q.get("requested"))
        other = "modal" if requested == "amodal" else "amodal"
        if q.get("wrong_type"):
            tone, text = Tone.FAIL, f"answered with the {other} mask"
            reason = f"IoU vs {other} {fmt(q.get('IoU_other'))} > vs {requested} {fmt(q.get('IoU'))}"
        elif not q.get("types_differ"):
            tone, text = Tone.NEUTRAL, f"{requested} = {other} here"
            reason = "modal and amodal masks are the same: the type cannot be told apart"
        else:
            tone, text = Tone.PASS, f"{requested} as requested"
            reason = f"IoU vs {requested} {fmt(q.get('IoU'))} ≥ vs {other} {fmt(q.get('IoU_other'))}"
        if q.get("empty_union"):
            reason += " · empty prediction and mask (IoU counts 1.0)"
        self.verdict(f"type_{pid}", text, tone, self.tip("wrong_type"), reason,
                     lead=f"“{q.get('text', '')}” asks {requested}")
        g = self.grid()
        self.add_metric(g, f"IoU_{pid}", f"IoU vs {requested}", q.get("IoU"), tone=Tone.NEUTRAL,
                    tooltip=self.tip("IoU"))
        self.add_metric(g, f"IoU_other_{pid}", f"IoU vs {other}", q.get("IoU_other"),
                    tone=Tone.FAIL if q.get("wrong_type") else Tone.NEUTRAL, tooltip=self.tip("IoU_other"))
        self.numbers[f"wrong_type_{pid}"] = q.get("wrong_type")
        self.texts[f"kept_{pid}"] = f"kept {q.get('kept')}/{q.get('instances')}"
