"""HalluSegBench card: the two counterfactual queries' verdicts (a CMS of 0 is "no hallucination",
the paper's reading), then IoU_fact, IoU_textual, IoU_visual, ΔIoU_textual, ΔIoU_visual, CMS_fact
and CMS_counterfact with their symbols and a bar each."""

from __future__ import annotations

from masklens.core.schema import Role
from masklens.gui.cards import ReadoutCard
from masklens.gui.cards.widgets import Tone

#: (role, image) of a query -> the record fields it decides
_QUERY_KEYS = {
    (Role.POSITIVE, "factual"): ("IoU_fact",),
    (Role.NEGATIVE, "factual"): ("IoU_textual", "dIoU_textual", "CMS_fact"),
    (Role.NEGATIVE, "counterfactual"): ("IoU_visual", "dIoU_visual", "CMS_counterfact"),
    (Role.POSITIVE, "counterfactual"): ("IoU_counterfact",),
}
#: key -> (symbol, bar range, higher is better)
_ROWS = {
    "IoU_fact": ("IoU_fact", (0.0, 1.0), True),
    "IoU_textual": ("IoU_textual", (0.0, 1.0), False),
    "IoU_visual": ("IoU_visual", (0.0, 1.0), False),
    "IoU_counterfact": ("IoU_counterfact", (0.0, 1.0), True),
    "dIoU_textual": ("ΔIoU_textual", (-1.0, 1.0), True),
    "dIoU_visual": ("ΔIoU_visual", (-1.0, 1.0), True),
    "CMS_fact": ("CMS_fact", (0.0, 1.0), False),
    "CMS_counterfact": ("CMS_counterfact", (0.0, 1.0), False),
}
_ORDER = ("IoU_fact", "IoU_textual", "IoU_visual", "dIoU_textual", "dIoU_visual", "CMS_fact",
          "CMS_counterfact")


class HalluCard(ReadoutCard):
    HELP = {
        "IoU_fact": "IoU of the prediction for c on the factual image I against M_c (↑)",
        "IoU_textual": "IoU of the prediction for c′ on I against M_c: the label was changed (↓)",
        "IoU_visual": "IoU of the prediction for c on the counterfactual image I′ against M′_c′: "
                      "the object was replaced (↓)",
        "IoU_counterfact": "IoU of c′ on I′ against M′_c′ (not in the paper)",
        "dIoU_textual": "ΔIoU_textual of this item: its IoU_fact − IoU_textual (↑; null when a "
                        "prediction is missing; the benchmark's ΔIoU is their mean)",
        "dIoU_visual": "ΔIoU_visual of this item: its IoU_fact − IoU_visual (↑; the benchmark's "
                       "ΔIoU is their mean)",
        "ann_id": "the item's annotation id in the benchmark file (with the factual image's name it "
                  "names the prediction PNGs)",
        "factual_label": "c: the object's class on the factual image I",
        "counterfactual_label": "c′: the class that replaces c on the counterfactual image I′",
        "size": "COCO size of the object's mask M_c: S (< 32² px), M (< 96² px), L",
        "area_factual": "area of the ground truth M_c on I, in pixels",
        "area_counterfactual": "area of the ground truth M′_c′ on I′, in pixels",
        "CCMS_item": "this item's CMS_fact / CMS_counterfact, each rounded to 4 decimals as the "
                     "official script does (null when a CMS is missing or CMS_counterfact rounds to "
                     "0); the benchmark's CCMS (script) is their mean",
        "CMS_fact": "CMS_fact = (α|C| + |N|)/(α|M_c|) of c′ on I, C = P ∩ M_c, N = P \\ M_c; "
                    "0 = no hallucination (↓, unbounded; the bar stops at 1)",
        "CMS_counterfact": "CMS_counterfact = (α|C| + |N|)/(α|M′_c′|) of c on I′; 0 = no "
                           "hallucination (↓, unbounded; the bar stops at 1)",
        "textual": "query c′ on the factual image I: a CMS_fact of 0 means no mask was produced "
                   "(no hallucination)",
        "visual": "query c on the counterfactual image I′: a CMS_counterfact of 0 means no mask "
                  "was produced (no hallucination)",
    }

    def build(self) -> None:
        rec = self.record
        keys = list(_ORDER)
        focus = next((p for p in self.ctx.sample.prompts if p.id == self.focus), None)
        if focus is not None:
            keys = list(_QUERY_KEYS.get((focus.role, focus.image), keys))
        labels = (rec.get("factual_label", "c"), rec.get("counterfactual_label", "c′"))
        negatives = {p.image: p for p in self.ctx.sample.prompts if p.role == Role.NEGATIVE}
        for name, cms, symbol, image in (("textual", "CMS_fact", "c′ ", "factual"),
                                         ("visual", "CMS_counterfact", "c ", "counterfactual")):
            if cms not in keys:
                continue
            asked = negatives.get(image)  # its text: a typed prompt's card shows the typed words
            text_of = asked.text if asked is not None else labels[1 if image == "factual" else 0]
            query = f"{symbol}“{text_of}” on {'I' if image == 'factual' else 'I′'}"
            value = rec.get(cms)
            if value is None:
                tone, text, reason = Tone.NONE, "no prediction", f"{cms} is null: {self._why(cms)}"
            elif value == 0:
                tone, text, reason = Tone.PASS, "no hallucination", f"{cms} = 0"
            else:
                tone, reason = Tone.FAIL, f"{cms} = {value:.3f} > 0"
                text = "hallucination" if self.focus is not None else f"{name} hallucination"  # narrow
            hover = tone is Tone.FAIL and image in negatives  # the hallucinated mask (one per query)
            self.verdict(name, text, tone, self.tip(name), reason, lead=query,
                         prompt=asked.id if hover and asked else None, instance=0 if hover else None)
        grid = self.grid()
        alpha = self.ctx.param("alpha", 3.0)
        for key in keys:
            symbol, span, up = _ROWS[key]
            value = rec.get(key)
            neutral = value is None or key in ("IoU_fact", "IoU_counterfact")  # no pass/fail reading
            tone = Tone.NEUTRAL if neutral or value is None else _tone(value, up)
            tip = self.tip(key) + (f"\nα = {alpha:g}" if key.startswith("CMS") else "")
            self.add_metric(grid, key, symbol, value, tone=tone, bar=span, tooltip=tip)
        if focus is None and "edit_leakage" in rec:  # measured from the images (the benchmark's edit)
            leak = rec.get("edit_leakage")
            self.add_metric(grid, "edit_leakage", "edit leakage", leak, tone=Tone.NEUTRAL, bar=(0.0, 1.0),
                            tooltip=self.tip("edit_leakage") + f"\n{rec.get('edit_leak_px', 0)} px changed "
                            "outside the object", suffix=f" ({rec.get('edit_leak_px', 0)} px)")
        if focus is None:
            self.note(f"c “{labels[0]}” → c′ “{labels[1]}” · size {rec.get('size', '–')} · α {alpha:g}")

    def _why(self, key: str) -> str:
        reasons = self.record.get("null_reasons") or {}
        return str(reasons.get(key, "a prediction is missing"))


def _tone(value: float, higher_is_better: bool) -> Tone:
    """Pass/fail of a Δ or a hallucination measure: Δ > 0 passes, a hallucination value > 0 fails."""
    if higher_is_better:
        return Tone.PASS if value > 0 else Tone.FAIL
    return Tone.PASS if value == 0 else Tone.FAIL
