"""Dock widths that come back: when the window shrinks, Qt narrows the side docks (the Samples
list ended at ~130 px, "all sampl"), and when it grows again Qt gives every pixel to the centre.
:class:`DockWidths` remembers each side dock's width as the user (or the saved layout) set it and,
when the window widens, gives the docks back up to those widths."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow

_SIDES = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea)


class DockWidths(QObject):
    """Installed on a main window and its docks; ``wanted`` holds each dock's chosen width."""

    def __init__(self, window: QMainWindow, docks: list[QDockWidget]) -> None:
        super().__init__(window)
        self.window, self.docks = window, docks
        self.wanted: dict[str, int] = {}
        self._asked: dict[str, int] = {}  # widths requested here: their resizes are not a choice
        self._last = QSize(window.size())
        window.installEventFilter(self)
        for d in docks:
            d.installEventFilter(self)

    def _side(self, dock: QDockWidget) -> bool:
        return (dock.isVisible() and not dock.isFloating()
                and self.window.dockWidgetArea(dock) in _SIDES)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() != QEvent.Type.Resize:
            return False
        if obj is self.window:  # delivered after the window's layout has resized the docks
            grew = self.window.width() > self._last.width()
            self._last = QSize(self.window.size())
            if grew:
                QTimer.singleShot(0, self.restore)
        elif isinstance(obj, QDockWidget) and self._side(obj):
            name = obj.objectName()
            asked = self._asked.pop(name, None)
            if asked is not None and obj.width() <= asked:
                return False  # the answer to restore(): as wide as there was room for
            if self.window.size() == self._last:  # not the window's resize: a separator drag, a layout
                self.wanted[name] = obj.width()
        return False

    def choose(self, widths: dict[str, int]) -> None:
        """Take ``widths`` (dock name → pixels: the first-run sizes, or those kept from the last
        session) as the chosen ones, whatever room the window has for them now: a window too
        narrow for them (e.g. at a scale factor of 2) squeezes the docks without that counting as
        a choice, and they come back as it widens."""
        self.wanted.update(widths)
        self._asked.update(widths)

    def remember(self) -> None:
        """Take the docks' current widths as the chosen ones (after a layout is restored or reset)."""
        self._asked.clear()
        self.wanted = {d.objectName(): d.width() for d in self.docks if self._side(d)}

    def restore(self) -> None:
        """Widen the side docks narrower than their chosen width, as far as the window allows."""
        short = [d for d in self.docks if self._side(d) and d.width() < self.wanted.get(d.objectName(), 0) - 1]
        if not short:
            return
        widths = [self.wanted[d.objectName()] for d in short]
        self._asked.update({d.objectName(): w for d, w in zip(short, widths, strict=True)})
        self.window.resizeDocks(short, widths, Qt.Orientation.Horizontal)
