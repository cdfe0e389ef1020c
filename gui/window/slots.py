"""Named places in the window's menus and toolbars where features put their actions.

The window opens each slot where it lays out a menu or toolbar (``open``); a feature adds its
actions to a slot by name (``add``), and they appear at the slot's place, in the order added, no
matter which menus or actions come before or after it."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget


class WindowSlots:
    """Slot name (e.g. ``"file.corrections"``, ``"view.toggles"``, ``"help"``) → its place: a
    hidden separator in a menu or toolbar that what is added goes before."""

    def __init__(self) -> None:
        self._places: dict[str, tuple[QWidget, QAction]] = {}

    def open(self, name: str, container: QWidget) -> None:
        """A slot at the current end of ``container`` (a QMenu or QToolBar)."""
        if name in self._places:
            raise ValueError(f"slot {name!r} is opened twice")
        anchor = QAction(container)
        anchor.setSeparator(True)
        anchor.setVisible(False)
        container.addAction(anchor)
        self._places[name] = (container, anchor)

    def add(self, name: str, *actions: QAction) -> None:
        """Put ``actions`` at the end of slot ``name``."""
        container, anchor = self._places[name]
        for act in actions:
            container.insertAction(anchor, act)

    def add_separator(self, name: str) -> None:
        """A separator at the end of slot ``name``."""
        container, anchor = self._places[name]
        sep = QAction(container)
        sep.setSeparator(True)
        container.insertAction(anchor, sep)

    def names(self) -> list[str]:
        return list(self._places)
