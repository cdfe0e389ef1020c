"""The Squares readout card (entry point ``masklens.gui.cards``)."""

from __future__ import annotations

from masklens.gui.cards import ReadoutCard
from masklens.gui.cards.widgets import Tone


class SquaresCard(ReadoutCard):
    HELP = {"IoU": "IoU of the best instance with s ≥ t"}

    def build(self) -> None:
        hit = bool(self.record.get("hit"))
        self.verdict("hit", "hit" if hit else "missed", Tone.PASS if hit else Tone.FAIL,
                     "IoU ≥ 0.5", f"IoU {self.record.get('IoU', 0.0):.3f}")
        self.add_metric(self.grid(), "IoU", "IoU", self.record.get("IoU"), bar=(0.0, 1.0),
                        tooltip=self.tip("IoU"))
