"""CGEBench card: per hierarchy level p_base → p1 → p2 → p3 an IoGT bar with its outcome
(zero / partial / full), then the cumulative intersection c(i) as a line of values."""

from __future__ import annotations

from typing import Any

from masklens.gui.cards import ReadoutCard
from masklens.gui.cards.widgets import Tone, fmt

_OUTCOME = {"full": Tone.PASS, "partial": Tone.PARTIAL, "zero": Tone.FAIL}


def level_name(level: int) -> str:
    return "p_base" if level == 0 else f"p{level}"


class CgeCard(ReadoutCard):
    HELP = {
        "IoGT": "IoGT(p_k) = s(p_k) = |M(p_k) ∩ G| / |G|, M(p_k) = union of the instances with s ≥ t",
        "cumulative": "c(i) = |(∩_{k≤i} M(p_k)) ∩ G| / |G|: the ground truth every level up to i still covers",
        "outcome": "zero: IoGT exactly 0 · partial: 0 < IoGT < 1 · full: IoGT exactly 1 (exact areas)",
    }

    def build(self) -> None:
        levels: list[dict[str, Any]] = list(self.record.get("levels", []))
        if self.focus is not None:
            levels = [lv for lv in levels if lv.get("prompt_id") == self.focus] or levels
        last = levels[-1] if levels else None
        if last is not None and self.focus is None:
            deepest = level_name(int(last["level"]))
            tone = _OUTCOME.get(_cum_outcome(last), Tone.NONE)
            self.verdict("verdict", f"{_cum_outcome(last)}: c({last['level']}) {fmt(last['cumulative'])}", tone,
                         self.tip("cumulative"),
                         f"hierarchy up to {deepest} keeps {fmt(last['cumulative'])} of G")
        t = self.ctx.param("score_threshold", 0.5)
        for lv in levels:  # the verdict first: one badge per level when focused, else a text
            k, name, outcome = int(lv["level"]), level_name(int(lv["level"])), str(lv.get("outcome"))
            if self.focus is not None:
                self.verdict(f"outcome_p{k}", outcome, _OUTCOME.get(outcome, Tone.NONE), self.tip("outcome"),
                             f"{name} “{lv.get('text', '')}”: kept {lv.get('kept')}/{lv.get('instances')}"
                             f" instances with s ≥ {t:.2f}")
            else:
                self.texts[f"outcome_p{k}"] = outcome
        grid = self.grid()
        for lv in levels:
            k, name = int(lv["level"]), level_name(int(lv["level"]))
            outcome = str(lv.get("outcome"))
            tone = _OUTCOME.get(outcome, Tone.NONE)
            self.add_metric(grid, f"IoGT_p{k}", f"IoGT({name})", lv.get("IoGT"), tone=tone,
                        tooltip=f"{self.tip('IoGT')}\n{name} “{lv.get('text', '')}” · {outcome}"
                                f" · kept {lv.get('kept')}/{lv.get('instances')}")
            self.add_metric(grid, f"cumulative_p{k}", f"c({k})", lv.get("cumulative"),
                        tone=_OUTCOME.get(_cum_outcome(lv), Tone.NONE),
                        tooltip=self.tip("cumulative"))
        if self.focus is None and levels:
            line = " → ".join(f"{fmt(lv.get('cumulative'), 2)}" for lv in levels)
            self.line(f"c(i): {line}", self.tip("cumulative"), monospace=True)
            self.texts["c_line"] = line


def _cum_outcome(level: dict[str, Any]) -> str:
    """zero/partial/full of c(i) (exact: c is a ratio of integer areas, 1.0 only when equal)."""
    c = level.get("cumulative")
    if c is None:
        return ""
    return "zero" if c == 0 else "full" if c == 1 else "partial"
