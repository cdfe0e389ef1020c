"""Generic cards: the fallback for a kind without its own card (its record's top-level numbers with
the kind's definitions), and the card of a typed prompt that replaces no benchmark prompt (the
generic readout: IoU of the accepted instances' union with the implied ground truth)."""

from __future__ import annotations

from typing import Any

from masklens.gui.cards import ReadoutCard
from masklens.gui.cards.widgets import Tone, fmt


class GenericCard(ReadoutCard):
    """Top-level scalar fields of the record (nested ones stay under details)."""

    MAX_ROWS = 12

    def build(self) -> None:
        title = self.ctx.kind.title or self.ctx.kind.name if self.ctx.kind else "benchmark"
        self.note(f"{title}: no card of its own yet; its numbers below, the full record under details")
        grid = self.grid()
        shown = 0
        for key, value in self.record.items():
            if shown >= self.MAX_ROWS:
                break
            if isinstance(value, bool) or not isinstance(value, (int, float, str)) and value is not None:
                continue
            in_unit = isinstance(value, float) and 0.0 <= value <= 1.0
            self.add_metric(grid, key, key, value, bar=(0.0, 1.0) if in_unit else None,
                        tooltip=self.tip(key, key))
            shown += 1


class GenericReadoutCard(ReadoutCard):
    """A typed prompt without a benchmark prompt of its role: core.readout.generic_readout's record."""

    HELP = {
        "iou": "IoU of the union of the instances with s ≥ t against the implied ground truth "
               "(the role's benchmark prompt's; 0 when both are empty)",
        "n_accepted": "instances with s ≥ t",
        "max_score": "highest instance score",
    }

    def build(self) -> None:
        rec: dict[str, Any] = dict(self.record)
        t = float(rec.get("score_threshold", 0.0))
        iou = rec.get("iou")
        if iou is None:
            self.verdict("verdict", "no ground truth", Tone.NONE, self.tip("iou"),
                         f"kept {rec.get('n_accepted')}/{rec.get('n_instances')} with s ≥ {t:.2f}")
        else:
            self.verdict("verdict", f"IoU {fmt(iou)}", Tone.NEUTRAL, self.tip("iou"),
                         f"against “{rec.get('gt')}” · kept {rec.get('n_accepted')}/{rec.get('n_instances')}"
                         f" with s ≥ {t:.2f}")
        g = self.grid()
        self.add_metric(g, "iou", "IoU(∪ s≥t)", iou)
        self.add_metric(g, "max_score", "max s", rec.get("max_score"), digits=2, tick=t)
