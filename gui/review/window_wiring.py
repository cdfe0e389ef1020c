"""Corrections and team review wired into the main window (one call from its constructor):
the corrected-ground-truth switch (View menu, view toolbar), File › Apply corrections… and
Export verdicts/corrections…, the summary in the Readout dock, the team view in the Review
dock, the original card beside the corrected one, and the browser presets."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QMenu

from masklens.gui.browser.filters import register_presets
from masklens.gui.review.corrected_view import CorrectedView
from masklens.gui.review.corrections_link import CorrectionsLink
from masklens.gui.review.team import TeamView

register_presets("*", [
    ("changed by corrections", "corrected.changed == 1"),
    ("Disagreements", "review.disagree == 1"),
])


def _menu(window: Any, title: str) -> QMenu | None:
    return next((a.menu() for a in window.menuBar().actions()
                 if a.menu() is not None and a.text().replace("&", "") == title), None)


def install(window: Any) -> None:
    window.corrected_view = view = CorrectedView(window)
    window.corrections_link = link = CorrectionsLink(window)
    window.team = TeamView(window)
    file_menu = _menu(window, "File")
    if file_menu is not None:
        quit_ = file_menu.actions()[-1]
        for act in (link.apply_action, link.export_action):
            file_menu.insertAction(quit_, act)
        file_menu.insertSeparator(quit_)
    view_menu = _menu(window, "View")
    if view_menu is not None:
        view_menu.addSeparator()
        view_menu.addAction(view.action)
    window.view_toolbar.addSeparator()
    window.view_toolbar.addAction(view.action)
    # the summary (all samples): original and corrected, in the Readout dock while the switch is on
    panel = window.readout_panel
    title = QLabel("Benchmark summary: original / corrected ground truth")
    title.setStyleSheet("font-weight: 600")
    lay = panel.layout()
    at = lay.indexOf(panel.details)
    lay.insertWidget(at, title)
    lay.insertWidget(at + 1, view.summary, 1)
    for w in (title, view.summary):
        w.setVisible(False)
        view.action.toggled.connect(w.setVisible)
    panel.deck.original_for = view.original_readout


def browser_rows(window: Any, rows: Any) -> Any:
    """The browser's records with the corrected.* and review.* columns (when they apply)."""
    if getattr(window, "corrected_view", None) is None:
        return rows
    return window.team.browser_rows(window.corrected_view.browser_rows(rows))
