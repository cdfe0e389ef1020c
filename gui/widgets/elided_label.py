"""A one-line label that never widens its window: text longer than the room it has is elided in
the middle ("Sample s0_very…_sample"), with the whole text in the tooltip. Its minimum width is a
few characters, so a 160-character sample id cannot push docks or the window past the screen.

Labels whose text changes on every sample switch fill their own background (:class:`OwnBackground`):
Qt then repaints the label alone, not every see-through widget under it up to the window."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

#: the widest a label asks for (its size hint), in average characters
MAX_HINT_CHARS = 48
MIN_CHARS = 8


class OwnBackground(QLabel):
    """A label that can fill its own background: Qt marks it opaque, so a new text repaints
    the label alone — a see-through label repaints every widget under it up to the window in its
    rectangle (on a sample switch, the panel, the tab widget and the window under each panel
    title: ~5 ms). Call :meth:`fill_own_background` once; ``paintEvent`` starts with
    :meth:`paint_background`."""

    _opaque = False

    def fill_own_background(self) -> None:
        self._opaque = True
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if self._opaque and event.type() in (QEvent.Type.Polish, QEvent.Type.StyleChange):
            self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)  # a style sheet's polish clears it
        return handled

    def paint_background(self, event: QPaintEvent) -> None:
        """What the parent would have painted under the label: its palette's window colour."""
        if self._opaque:
            painter = QPainter(self)
            painter.fillRect(event.rect(), self.palette().window())
            painter.end()


class ElidedLabel(OwnBackground):
    """``text()`` is the whole text; what is painted is elided to the label's width (``opaque``:
    it fills its own background, see :class:`OwnBackground`)."""

    def __init__(self, text: str = "", parent: QWidget | None = None,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle, *, opaque: bool = False) -> None:
        super().__init__(parent)
        self.mode = mode
        if opaque:
            self.fill_own_background()
        self._own_tip = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        super().setText(text)
        self._update_tip()
        self.updateGeometry()

    def setToolTip(self, tip: str) -> None:  # noqa: N802 - Qt override
        self._own_tip = tip
        self._update_tip()

    def elided(self) -> str:
        """The text as painted at the current width."""
        return self.fontMetrics().elidedText(self.text(), self.mode, max(self.contentsRect().width(), 0))

    def is_elided(self) -> bool:
        return self.elided() != self.text()

    def _update_tip(self) -> None:
        tip = self.text() if self.is_elided() else ""
        if self._own_tip:
            tip = f"{tip}\n{self._own_tip}" if tip else self._own_tip
        super().setToolTip(tip)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        fm = self.fontMetrics()
        return QSize(fm.averageCharWidth() * MIN_CHARS, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        fm = self.fontMetrics()
        wide = min(fm.horizontalAdvance(self.text()), fm.averageCharWidth() * MAX_HINT_CHARS)
        m = self.contentsMargins()
        return QSize(wide + m.left() + m.right() + 2, super().sizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._update_tip()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.paint_background(event)
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.setFont(self.font())
        painter.drawText(self.contentsRect(), int(self.alignment() | Qt.AlignmentFlag.AlignVCenter), self.elided())
