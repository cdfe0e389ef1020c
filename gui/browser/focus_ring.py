"""The sample list's focus ring, painted by a thin overlay instead of a style sheet.

The one-key shortcuts act while the list has the keyboard focus, so the list shows a ring then
(as the canvas does). A style sheet on the table would do it in one line, but any style sheet
makes Qt draw every row and cell of the table and its kept id columns through the style-sheet
style: about twice the cost of each repaint, and the list repaints at every slider step. This
overlay covers the table's frame, lets every mouse event through, and is shown only while the
table has the focus.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

#: the ring's colour (as the canvas's, key_scope.FOCUS_STYLE) and width
COLOUR, WIDTH = QColor("#0072B2"), 2


class FocusRing(QWidget):
    """A ``WIDTH``-pixel ring around ``view`` while it has the keyboard focus."""

    def __init__(self, view: QAbstractScrollArea) -> None:
        super().__init__(view)
        self.view = view
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        view.installEventFilter(self)
        self.hide()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if kind in (QEvent.Type.FocusIn, QEvent.Type.FocusOut, QEvent.Type.Resize, QEvent.Type.Show):
            focused = self.view.hasFocus() if kind != QEvent.Type.FocusOut else False
            self.setGeometry(self.view.rect())
            self.setVisible(focused)
            if focused:
                self.raise_()  # above the viewport and the kept id columns
        return False

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        p.setPen(QPen(COLOUR, WIDTH))
        p.drawRect(self.rect().adjusted(WIDTH // 2, WIDTH // 2, -WIDTH // 2 - 1, -WIDTH // 2 - 1))
