"""The typed contexts features are given: each feature states, as a :class:`~typing.Protocol`
next to it, exactly what it uses of the main window. They all extend :class:`WindowPart`."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QWidget


class WindowPart(Protocol):
    """A feature of the main window: ``window()`` (``QWidget.window()``: the main window itself)
    is the Qt parent of the actions and objects the feature makes."""

    def window(self) -> QWidget: ...
