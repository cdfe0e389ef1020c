"""The message bar: the core's clear messages, never a traceback, on one line of its own between
the prompt bar and the centre's tabs.

The line is kept while no message is shown (one button high), so showing, replacing or hiding
a message never moves anything and never covers anything — not the centre's tab bar (a click on
"Compare sets" under a warning did nothing), not a panel title, not the Compare sets row. A long or
multi-line message is elided; "more" unfolds its whole text in a box under the bar until "less",
✕ or the next message. A warning or an error stays until it is closed (✕), replaced by a newer
warning or error, or the window drops it (another benchmark opened); an information fades after a
few seconds and never hides a warning or an error that is shown (it goes to ``history`` and the
tooltip instead)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import (
    QBoxLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QWidget,
)

from masklens.gui.widgets.elided_label import ElidedLabel

INFO_SECONDS = 6
SEVERITY = {"info": 0, "warning": 1, "error": 2}

_STYLE = {
    "error": "background: #fbe3d6; color: #6b2a00; border: 1px solid #D55E00;",
    "warning": "background: #fdf3d0; color: #5a4a00; border: 1px solid #E69F00;",
    "info": "background: #dcecf7; color: #0b3a5c; border: 1px solid #56B4E9;",
}
#: the text on each level's background, also for the label and buttons inside the bar (they draw
#: with the palette's text colour otherwise: light on the light bar under a dark palette)
_TEXT = {"error": "#6b2a00", "warning": "#5a4a00", "info": "#0b3a5c"}


def one_line(text: str) -> str:
    """A message's lines joined on one line ("file: not found · hint: check --images")."""
    return " · ".join(part.strip() for part in text.splitlines() if part.strip())


class MessageBar(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._host: QWidget | None = None  # what the unfolded text floats over (install)
        self.setObjectName("message-bar")
        self.label = ElidedLabel(mode=Qt.TextElideMode.ElideRight)
        self.label.installEventFilter(self)
        self.more = QToolButton(autoRaise=True)
        self.more.setText("more")
        self.more.setToolTip("show the whole message")
        self.more.setCheckable(True)
        self.more.toggled.connect(self._unfold)
        self.close_button = QToolButton(autoRaise=True)
        self.close_button.setText("✕")
        self.close_button.setToolTip("dismiss")
        self.close_button.clicked.connect(self.dismiss)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 0, 2, 0)  # inside a 4 px margin of the centre (see install)
        lay.setSpacing(2)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.more)
        lay.addWidget(self.close_button)
        policy = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        policy.setRetainSizeWhenHidden(True)  # its slot in the row stays: the row never reflows
        self.setSizePolicy(policy)
        #: the whole text, unfolded by "more": a box floating under the bar (asked for, never in the way)
        self.full = QLabel()
        self.full.setObjectName("message-full")
        self.full.setWordWrap(True)
        self.full.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.full.setMargin(6)
        self.full.hide()
        self.level = ""
        self.topic = ""  # what the message shown is about (show_message)
        self.history: list[tuple[str, str]] = []
        self._text = ""
        self._fade = QTimer(self, singleShot=True, interval=INFO_SECONDS * 1000)  # dies with the bar
        self._fade.timeout.connect(self.dismiss)
        self.hide()

    # ------------------------------------------------------------ placement
    def install(self, layout: QBoxLayout, host: QWidget, height: int) -> None:
        """Add the bar to ``layout`` as a line ``height`` px high; the unfolded text floats over
        ``host`` under the bar."""
        self.setFixedHeight(height)
        layout.addWidget(self)
        self.full.setParent(host)
        self.full.setAutoFillBackground(True)
        self._host = host
        host.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize:
            if watched is self.label:
                self._update_more()
            elif watched is self._host:
                self._place_full()
        return False

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._place_full()

    def _place_full(self) -> None:
        host = self._host
        if host is None or not self.full.isVisible():
            return
        width = max(host.width() - 16, 120)
        self.full.setFixedWidth(width)
        top = self.mapTo(host, self.rect().bottomLeft()).y() + 2
        self.full.setGeometry(8, top, width, self.full.heightForWidth(width))
        self.full.raise_()

    def _unfold(self, on: bool) -> None:
        self.more.setText("less" if on else "more")
        self.full.setVisible(on and self.isVisible())
        if on:
            self._fade.stop()  # being read
            self._place_full()

    def _update_more(self) -> None:
        self.more.setVisible(bool(self._text) and ("\n" in self._text.strip() or self.label.is_elided()))

    # ------------------------------------------------------------ messages
    def show_message(self, text: str, level: str = "info", topic: str = "") -> None:
        """Show ``text``; information fades after a few seconds, warnings and errors stay.
        ``topic``: what the message is about (e.g. "correction"); an information on the topic
        of the warning shown replaces it (what the warning was about has been settled since)."""
        self.history.append((level, text))
        settles = bool(topic) and topic == self.topic
        if level == "info" and self.isVisible() and SEVERITY.get(self.level, 0) > 0 and not settles:
            self.setToolTip(f"also: {text}")  # an information never hides a warning or an error
            self.label.setToolTip(f"also: {text}")  # what a hover over the text shows (after the text, if cut)
            return
        self.level, self._text, self.topic = level, text, topic
        self.label.setText(one_line(text))
        self.label.setToolTip("")  # an elided text shows itself whole as the tooltip
        self.full.setText(text)
        self.setToolTip("")
        style = _STYLE.get(level, _STYLE["info"])
        text_colour = _TEXT.get(level, _TEXT["info"])
        self.setStyleSheet(f"#message-bar {{ {style} }} "
                           f"#message-bar QLabel, #message-bar QToolButton {{ color: {text_colour}; }}")
        self.full.setStyleSheet(f"#message-full {{ {style} }}")
        self.more.setChecked(False)
        self.show()
        self._update_more()
        if level == "info":
            self._fade.start()
        else:
            self._fade.stop()

    def dismiss(self) -> None:
        self.more.setChecked(False)
        self.full.hide()
        self.hide()
        self.level = self.topic = ""

    @property
    def text(self) -> str:
        return self._text if self.isVisible() else ""
