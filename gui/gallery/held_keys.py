"""A move key held down in the gallery: the grid's frame follows every auto-repeated press at
once; the list's current sample (and with it the readout, the Review dock, the list's scroll)
moves once, when the key is let go or the repeats pause for :data:`HOLD_MS`.

A sample switch redraws the window around the grid (~40 ms of GUI-thread time); a held PgDn
repeats every ~30 ms, so switching at each repeat would stall the window and lag behind the
key. Anything else — another key (a verdict key acts on the sample the frame is on), a click,
the focus leaving, the tab hidden — commits the held move first.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

#: the pause in auto-repeated presses after which the held move is committed
HOLD_MS = 120


class HeldMove(QObject):
    """The row a held key has reached (``row``, None when nothing is held) and how it selects;
    ``commit(row, how)`` makes it the list's current sample."""

    def __init__(self, commit: Callable[[int, str], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._commit = commit
        self.row: int | None = None
        self.how = "only"
        self.timer = QTimer(self, singleShot=True, interval=HOLD_MS)
        self.timer.timeout.connect(self.flush)

    def hold(self, row: int, how: str) -> None:
        self.row, self.how = row, how
        self.timer.start()

    def flush(self) -> bool:
        """Commit the held move now; False when nothing was held."""
        self.timer.stop()
        if self.row is None:
            return False
        row, self.row = self.row, None
        self._commit(row, self.how)
        return True
