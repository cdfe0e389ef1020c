"""The Squares section of a batch report (entry point ``masklens.report_layouts``)."""

from __future__ import annotations

from masklens.core.reports.layout import KindLayout


class SquaresLayout(KindLayout):
    headline = ("mIoU", "hit_rate")
    sweep_params = ("score_threshold",)


LAYOUT = SquaresLayout()
