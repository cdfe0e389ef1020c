"""A message bar floating over the top of the canvas: the core's clear messages, never a traceback.

It is an overlay, not a row of the layout, so showing or hiding it never moves anything. A
warning or an error stays until it is closed (✕), replaced by a newer warning or error, or the
window drops it (another benchmark opened); an information fades after a few seconds and never hides a warning or an error that is shown (it
goes to ``history`` and the tooltip instead)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

INFO_SECONDS = 6
SEVERITY = {"info": 0, "warning": 1, "error": 2}

_STYLE = {
    "error": "background: #fbe3d6; color: #6b2a00; border: 1px solid #D55E00;",
    "warning": "background: #fdf3d0; color: #5a4a00; border: 1px solid #E69F00;",
    "info": "background: #dcecf7; color: #0b3a5c; border: 1px solid #56B4E9;",
}


class MessageBar(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("message-bar")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(self.label.textInteractionFlags() | self.label.textInteractionFlags().TextSelectableByMouse)
        self.close_button = QToolButton(text="✕", autoRaise=True)
        self.close_button.setToolTip("dismiss")
        self.close_button.clicked.connect(self.dismiss)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 3, 4, 3)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.close_button)
        self.level = ""
        self.history: list[tuple[str, str]] = []
        self._host: QWidget | None = None
        self._top = 0
        self._fade = QTimer(self, singleShot=True, interval=INFO_SECONDS * 1000)  # dies with the bar
        self._fade.timeout.connect(self.dismiss)
        self.hide()

    # ------------------------------------------------------------ overlay placement
    def overlay(self, host: QWidget, below: QWidget | None = None) -> None:
        """Float over ``host`` (its child, outside its layout), under ``below`` when given."""
        self.setParent(host)
        self._host, self._below = host, below
        host.installEventFilter(self)
        self.setAutoFillBackground(True)
        self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self._host and event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest):
            self._place()
        return False

    def _place(self) -> None:
        if self._host is None:
            return
        below = getattr(self, "_below", None)
        top = below.geometry().bottom() + 1 if below is not None and below.isVisible() else 0
        width = max(self._host.width() - 16, 100)
        height = self.heightForWidth(width) if self.hasHeightForWidth() else self.sizeHint().height()
        # the height the text needs at this width (a wrapped label's sizeHint assumes a narrow
        # one: a one-line message got a box three lines high over the tabs)
        self.setGeometry(8, top + 4, width, max(height, self.close_button.sizeHint().height() + 6))
        self.raise_()

    # ------------------------------------------------------------ messages
    def show_message(self, text: str, level: str = "info") -> None:
        """Show ``text``; information fades after a few seconds, warnings and errors stay."""
        self.history.append((level, text))
        if level == "info" and self.isVisible() and SEVERITY.get(self.level, 0) > 0:
            self.setToolTip(f"also: {text}")  # an information never hides a warning or an error
            return
        self.level = level
        self.label.setText(text)
        self.setToolTip("")
        self.setStyleSheet(f"#message-bar {{ {_STYLE.get(level, _STYLE['info'])} }}")
        self.show()
        self._place()
        if level == "info":
            self._fade.start()
        else:
            self._fade.stop()

    def dismiss(self) -> None:
        self.hide()
        self.level = ""

    @property
    def text(self) -> str:
        return self.label.text() if self.isVisible() else ""
