"""The sample list's table view: when its current row is moved from elsewhere (the gallery's
End / Home / PgDn, the window's next-sample keys) it scrolls to that row one event-loop turn
later, coalesced over several moves.

A scroll repaints every visible cell of the list (~240 cells, ~15 ms of Python painting): done
in the same turn as the key, it adds to the gallery's own repaint and the window's sample switch
(one stall of ~70 ms at 100,000 samples); a turn later each part stays well under 50 ms, and a
key pressed meanwhile is handled in between. When the list itself has the keyboard focus (the
user moves in it) it scrolls at once, as Qt's own view does.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QTimer
from PySide6.QtWidgets import QTableView, QWidget

from masklens.gui.browser.table_paint import OneCallPaint


class SampleTableView(OneCallPaint, QTableView):
    """A :class:`QTableView` whose scroll to a current row set from outside waits a turn (and
    painted in one call: :mod:`masklens.gui.browser.table_paint`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scroll_timer = QTimer(self, singleShot=True, interval=0)
        self.scroll_timer.timeout.connect(self.scroll_to_current)

    def currentChanged(self, current: QModelIndex | QPersistentModelIndex,  # noqa: N802 - Qt override
                       previous: QModelIndex | QPersistentModelIndex) -> None:
        if self.hasFocus() or not self.isVisible() or not self.hasAutoScroll():
            super().currentChanged(current, previous)  # Qt's own (hidden: it scrolls when shown)
            return
        self.setAutoScroll(False)
        try:
            super().currentChanged(current, previous)  # the two rows' repaint, no scroll
        finally:
            self.setAutoScroll(True)
        self.scroll_timer.start()  # restarted by the next move: one scroll for several keys

    def scroll_to_current(self) -> None:
        """Bring the current row into view (the deferred scroll, or now)."""
        self.scroll_timer.stop()
        idx = self.currentIndex()
        if idx.isValid() and self.isVisible():
            self.scrollTo(idx)
