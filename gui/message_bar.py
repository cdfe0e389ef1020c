"""A message bar above the canvas: the core's clear messages, never a traceback."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

INFO_SECONDS = 6

_STYLE = {
    "error": "background: #fbe3d6; color: #6b2a00; border-bottom: 1px solid #D55E00;",
    "warning": "background: #fdf3d0; color: #5a4a00; border-bottom: 1px solid #E69F00;",
    "info": "background: #dcecf7; color: #0b3a5c; border-bottom: 1px solid #56B4E9;",
}


class MessageBar(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(self.label.textInteractionFlags() | self.label.textInteractionFlags().TextSelectableByMouse)
        close = QToolButton(text="✕", autoRaise=True)
        close.clicked.connect(self.hide)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 3, 4, 3)
        lay.addWidget(self.label, 1)
        lay.addWidget(close)
        self.level = ""
        self.history: list[tuple[str, str]] = []
        self._fade = QTimer(self, singleShot=True, interval=INFO_SECONDS * 1000)  # dies with the bar
        self._fade.timeout.connect(self.hide)
        self.hide()

    def show_message(self, text: str, level: str = "info") -> None:
        """Show ``text``; information fades after a few seconds, warnings and errors stay."""
        self.level = level
        self.history.append((level, text))
        self.label.setText(text)
        self.setStyleSheet(_STYLE.get(level, _STYLE["info"]))
        self.show()
        if level == "info":
            self._fade.start()
        else:
            self._fade.stop()

    @property
    def text(self) -> str:
        return self.label.text() if self.isVisible() else ""
