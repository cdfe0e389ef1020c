"""An event filter recording which watched widgets receive a paint event (by object name)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject


class PaintLog(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.painted: list[str] = []

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Paint:
            self.painted.append(obj.objectName())
        return False
