"""The Squares section of a batch report (found by convention: ``<kind package>.report``)."""

from __future__ import annotations

from masklens.core.reports.layout import KindLayout


class SquaresLayout(KindLayout):
    headline = ("mIoU", "hit_rate")
    sweep_params = ("score_threshold",)


LAYOUT = SquaresLayout()
