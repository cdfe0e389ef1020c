"""CAFE card: TA-TP/UA-P/TA-FN/UA-FN for p⁺ and TA-FP/UA-FP/TN for p⁻ (the paper's Table 1), each
with the instance and the comparison that decided it, then the swap flags (SoftSwap, ACS, UCS).

The classes come from the scorer's record (``pos_class``/``neg_class``); the card only picks,
among the record's instances, the one that satisfies the class's condition to show it as the
reason (and to highlight it on the canvas).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from masklens.core.schema import Prompt, Role
from masklens.gui.cards import ReadoutCard
from masklens.gui.cards.widgets import Tone, fmt
from masklens.gui.figures import instance_note, owners

_CLASS_KEY = {"TA-TP": "TA_TP", "UA-P": "UA_P", "TA-FN": "TA_FN_paper", "UA-FN": "UA_FN",
              "TA-FP": "TA_FP", "UA-FP": "UA_FP", "TN": "TN"}
_PASS = {"TA-TP", "TN"}


def decisive_instance(cls: str, instances: Sequence[Mapping[str, float]], t: float,
                      tau: float) -> tuple[int | None, str]:
    """(index, reason) of the instance that makes a prompt's class ``cls`` at (t, τ): for a hit
    the aligned accepted instance with the highest IoU, for an unaligned acceptance the accepted
    one with the highest IoU, for a rejection the highest score; None without instances."""
    def s_iou(i: int) -> tuple[float, float]:
        return float(instances[i]["score"]), float(instances[i]["iou"])

    idx = range(len(instances))
    accepted = [i for i in idx if s_iou(i)[0] >= t]
    if cls in ("TA-TP", "TA-FP"):
        pick = [i for i in accepted if s_iou(i)[1] >= tau]
        if pick:
            i = max(pick, key=lambda k: s_iou(k)[1])
            s, v = s_iou(i)
            return i, f"{_cmp('s', s, 't', t)}, {_cmp('IoU', v, 'τ', tau, 3)}"
    if cls in ("UA-P", "UA-FP") and accepted:
        i = max(accepted, key=lambda k: s_iou(k)[1])
        s, v = s_iou(i)
        more = f" (best of {len(accepted)} accepted)" if len(accepted) > 1 else ""
        return i, f"{_cmp('s', s, 't', t)}, but {_cmp('IoU', v, 'τ', tau, 3)}{more}"
    if not instances:
        return None, "no instance predicted" + (" (rejected)" if cls == "TN" else "")
    if cls == "TA-FN":
        aligned = [i for i in idx if s_iou(i)[1] >= tau]
        if aligned:
            i = max(aligned, key=lambda k: s_iou(k)[0])
            s, v = s_iou(i)
            return i, f"{_cmp('IoU', v, 'τ', tau, 3)}, but {_cmp('s', s, 't', t)}"
    i = max(idx, key=lambda k: s_iou(k)[0])  # UA-FN, TN: nothing accepted
    s, _ = s_iou(i)
    best_iou = max(s_iou(k)[1] for k in idx)
    if cls == "TN":
        return i, f"rejected: {_cmp('max s', s, 't', t)}"
    return i, f"{_cmp('max s', s, 't', t)}; {_cmp('max IoU', best_iou, 'τ', tau, 3)}"


def _r(x: float) -> str:
    return f"{x:.2f}"


def _cmp(name: str, value: float, symbol: str, threshold: float, digits: int = 2) -> str:
    """"s 0.75 ≥ t 0.50" (thresholds are inclusive), with enough decimals that the comparison
    reads true: 0.499 against 0.5 prints "0.499 < t 0.50", never "0.50 < t 0.50"."""
    d = digits
    while d < 6 and (f"{value:.{d}f}" == f"{threshold:.{d}f}") != (value == threshold):
        d += 1
    short = f"{threshold:.2f}"
    b = short if float(short) == threshold else f"{threshold:.{max(d, 2)}f}"
    return f"{name} {value:.{d}f} {'≥' if value >= threshold else '<'} {symbol} {b}"


class CafeCard(ReadoutCard):
    HELP = {
        "pos_class": "class of the positive prompt p⁺ (paper Table 1): TA-TP when an instance has "
                     "s ≥ t and IoU ≥ τ; UA-P accepted but unaligned; TA-FN aligned but s < t; UA-FN neither",
        "neg_class": "class of the misleading negative prompt p⁻: TA-FP accepted and aligned; "
                     "UA-FP accepted, none aligned; TN nothing accepted (correctly rejected)",
        "SoftSwap": "max s of p⁻ > max s of p⁺ (strict): the misleading prompt is answered more confidently",
        "ACS": "target-aligned concept swap: p⁺ not TA-TP and p⁻ TA-FP (counts in ACSR)",
        "UCS": "unaligned concept swap: p⁺ not TA-TP and p⁻ UA-FP (counts in UCSR)",
        "pos_max_iou": "highest IoU of a p⁺ instance with the target (accepted or not)",
        "neg_max_iou": "highest IoU of a p⁻ instance with the target (accepted or not)",
        "pos_max_score": "highest score s of a p⁺ instance (0 without instances)",
        "neg_max_score": "highest score s of a p⁻ instance (0 without instances)",
        "edit_type": "the pair's edit type: SM (Superficial Mimicry), CC (Context Conflict), OC (Ontological Conflict)",
        "pos_image_id": "image id of the positive (original) image in the annotation file",
        "neg_image_id": "image id of the negative (edited) image entry, whose prompt is p⁻",
        "pos_missing": "true when the prediction file has no record for p⁺ (scored as no instance)",
        "neg_missing": "true when the prediction file has no record for p⁻ (scored as no instance)",
    }

    def build(self) -> None:
        rec, sample = self.record, self.ctx.sample
        prompts: dict[Role, Prompt] = {p.role: p for p in sample.prompts if p.role in (Role.POSITIVE, Role.NEGATIVE)}
        focus_role = next((p.role for p in sample.prompts if p.id == self.focus), None)
        for role, side in ((Role.POSITIVE, "pos"), (Role.NEGATIVE, "neg")):
            if focus_role is not None and role != focus_role:
                continue
            self._side(side, prompts.get(role))
        if focus_role is None:
            self._flags()
            self.note(f"edit type {rec.get('edit_type', '–')} · t {_r(self.ctx.param('score_threshold'))}"
                      f" · τ {_r(self.ctx.param('iou_threshold'))}")

    def _side(self, side: str, prompt: Any) -> None:
        rec = self.record
        cls = str(rec[f"{side}_class"])
        t, tau = self.ctx.param("score_threshold", 0.5), self.ctx.param("iou_threshold", 0.3)
        instances = rec.get(f"{side}_instances", [])
        index, reason = decisive_instance(cls, instances, t, tau)
        if rec.get(f"{side}_missing"):
            reason = "no prediction record for this prompt" + ("" if not instances else f"; {reason}")
        sign = "p⁺" if side == "pos" else "p⁻"
        text = f"“{prompt.text}”" if prompt is not None else ""
        tone = Tone.PASS if cls in _PASS else Tone.FAIL
        tip = f"{self.tip(f'{side}_class')}\n{cls}: {self.ctx.help(_CLASS_KEY.get(cls, cls))}"
        self.verdict(f"{side}_class", cls, tone, tip, reason,
                     prompt=prompt.id if prompt is not None and index is not None else None,
                     instance=index, lead=f"{sign} {text}")
        self.numbers[f"{side}_instance"] = index
        g = self.grid()
        of = "" if self.focus is not None else f"({sign})"  # a focused card is narrow: one prompt
        by_s, by_iou = owners(instances)
        self.add_metric(g, f"{side}_max_score", f"max s{of}", rec.get(f"{side}_max_score"), digits=2,
                        tick=t, tooltip=f"{self.tip(f'{side}_max_score')} (tick: t)",
                        suffix=instance_note(by_s, index, instances, t, of_score=True))
        self.add_metric(g, f"{side}_max_iou", f"max IoU{of}", rec.get(f"{side}_max_iou"), tick=tau,
                        tooltip=f"{self.tip(f'{side}_max_iou')} (tick: τ)",
                        suffix=instance_note(by_iou, index, instances, t, of_score=False))
        self.numbers[f"{side}_n"] = len(instances)
        self.texts[f"{side}_n"] = f"{len(instances)} instance(s)"

    def _flags(self) -> None:
        rec = self.record
        chips: list[tuple[str, Tone, str]] = []
        for key in ("SoftSwap", "ACS", "UCS"):
            on = bool(rec.get(key))
            extra = ""
            if key == "SoftSwap":
                extra = (f"\nmax s(p⁻) {fmt(rec.get('neg_max_score'), 2)} vs max s(p⁺) "
                         f"{fmt(rec.get('pos_max_score'), 2)}")
            text = f"{key}" if on else f"no {key}"
            chips.append((text, Tone.FAIL if on else Tone.PASS, self.tip(key) + extra))
            self.numbers[key] = rec.get(key)
            self.texts[key] = text
        self.chips(chips)
