"""A tab widget that lays itself out again only when something its layout reads has changed.

Qt's ``QTabWidget`` answers every ``LayoutRequest`` — posted up to it whenever any widget inside
the current page asks for a new size, e.g. a panel title taking the next sample's text — with
``setUpLayout()``, which ends in ``update()`` of the whole tab widget: every see-through widget in
the page (panels, frames, the page itself) is repainted, though nothing moved (~3 ms of each
sample switch). :class:`QuietTabWidget` lets the request through only when what ``setUpLayout``
places things by (its own rectangle, the tab bar's and corner widgets' size hints, the tab
position) or what its parent's layout reads of it (its size hints) differs from the last time."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QTabWidget


class QuietTabWidget(QTabWidget):
    _laid_out_for: Any = None  # the inputs of the last layout let through

    def layout_inputs(self) -> tuple:
        """What a re-layout would place the tab bar, the pages and the corners by."""
        corners = tuple(
            (w.isVisible(), w.sizeHint().toTuple()) if (w := self.cornerWidget(c)) is not None else None
            for c in (Qt.Corner.TopLeftCorner, Qt.Corner.TopRightCorner))
        return (self.isVisible(), self.rect().getRect(), self.tabPosition(), self.documentMode(),
                self.tabBar().sizeHint().toTuple(), self.tabBar().isVisible(), corners,
                self.sizeHint().toTuple(), self.minimumSizeHint().toTuple())

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            inputs = self.layout_inputs()
            if inputs == self._laid_out_for:
                return True  # the same layout again: no repaint of the whole page
            self._laid_out_for = inputs
        return super().event(event)
